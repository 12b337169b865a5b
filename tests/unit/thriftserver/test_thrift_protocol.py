"""The Thrift server's protocol (hudilite.thriftserver.protocol): Thrift's C encoder and
decoder on PyHive's generated TCLIService code give the pure-Python protocol's bytes and
objects; and Arrow-built row sets (rowsets.column_batch) equal row-built ones. No JVM."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("TCLIService")  # the server package comes with the `server` extra

import pyarrow as pa
from TCLIService import TCLIService
from TCLIService import ttypes as tt
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from hudilite.thriftserver import protocol
from hudilite.thriftserver.protocol import BinaryProtocol, binary_protocol
from hudilite.thriftserver.rowsets import (
    COLUMNAR_FROM,
    ColumnBatch,
    ColumnSpec,
    column_batch,
    row_set,
    table_schema,
)

TTypeId = tt.TTypeId
V1 = tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V1

#: Every message the server reads or writes: the arguments and results of each method.
MESSAGES = sorted(
    (
        cls
        for name, cls in inspect.getmembers(TCLIService, inspect.isclass)
        if name.endswith(("_args", "_result")) and hasattr(cls, "thrift_spec")
    ),
    key=lambda c: c.__name__,
)


def _value(ttype: int, args: Any, depth: int) -> Any:
    """A value of ``ttype`` with every field set (two elements per list)."""
    if ttype == TType.BOOL:
        return True
    if ttype == TType.BYTE:
        return -7
    if ttype == TType.I16:
        return -300
    if ttype == TType.I32:
        return 70_000
    if ttype == TType.I64:
        return -(2**40)
    if ttype == TType.DOUBLE:
        return 2.5
    if ttype == TType.STRING:
        return b"\x00\xffbin" if args == "BINARY" else "h\u00e9llo \u2713"
    if ttype == TType.LIST:
        return [_value(args[0], args[1], depth), _value(args[0], args[1], depth)]
    if ttype == TType.SET:
        return {_value(args[0], args[1], depth)}
    if ttype == TType.MAP:
        return {_value(args[0], args[1], depth): _value(args[2], args[3], depth)}
    if ttype == TType.STRUCT:
        return _full(args[0], depth + 1)
    raise AssertionError(ttype)


def _full(cls: type, depth: int = 0) -> Any:
    """An instance of ``cls`` with every field set, nested structs too."""
    obj = cls()
    if depth < 6:
        for field in cls.thrift_spec:  # type: ignore[attr-defined]
            if field is not None:
                setattr(obj, field[2], _value(field[1], field[3], depth))
    return obj


def _encode_python(obj: Any) -> bytes:
    buf = TMemoryBuffer()
    obj.write(TBinaryProtocol(buf))
    return buf.getvalue()


def _encode_c(obj: Any) -> bytes:
    buf = TMemoryBuffer()
    proto = binary_protocol(buf, 1 << 30)
    assert proto._fast_encode is not None  # the C module is in use
    obj.write(proto)
    return buf.getvalue()


def _decode(cls: type, data: bytes, proto: type) -> Any:
    obj = cls()
    obj.read(proto(TMemoryBuffer(data)))  # TMemoryBuffer: the C decoder can read it
    return obj


def _assert_same(obj: Any) -> None:
    """Both protocols encode ``obj`` to the same bytes and decode them to ``obj``."""
    data = _encode_python(obj)
    assert _encode_c(obj) == data
    assert _decode(type(obj), data, BinaryProtocol) == obj
    assert _decode(type(obj), data, TBinaryProtocol) == obj


def test_the_c_module_is_there() -> None:
    assert protocol.ACCELERATED
    assert len(MESSAGES) == 44  # 22 methods


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda c: c.__name__)
def test_every_message_round_trips_as_in_pure_python(cls: type) -> None:
    _assert_same(cls())  # no field set
    _assert_same(_full(cls))  # every field set, nested structs and unions included


def _specs() -> list[ColumnSpec]:
    kinds = [
        ("b", TTypeId.BOOLEAN_TYPE),
        ("t", TTypeId.TINYINT_TYPE),
        ("sm", TTypeId.SMALLINT_TYPE),
        ("i", TTypeId.INT_TYPE),
        ("l", TTypeId.BIGINT_TYPE),
        ("f", TTypeId.FLOAT_TYPE),
        ("d", TTypeId.DOUBLE_TYPE),
        ("s", TTypeId.STRING_TYPE),
        ("bin", TTypeId.BINARY_TYPE),
        ("ts", TTypeId.TIMESTAMP_TYPE),
        ("dec", TTypeId.DECIMAL_TYPE),
    ]
    return [ColumnSpec(n, "x", t) for n, t in kinds]


# Rows of _specs(): a null in some column of most rows, every column null in one.
_ROWS = [
    (
        i % 3 == 0 if i % 5 else None,
        (i % 256) - 128 if i % 7 else None,
        -i * 3 if i % 4 else None,
        i * 1000 if i % 6 else None,
        i * 2**33 if i % 9 else None,
        i / 4 if i % 8 else None,
        i / 3 if i % 10 else None,
        f"r\u00e9{i}" if i % 11 else None,
        bytes([i % 256, 0]) if i % 2 else None,
        f"2024-01-01 00:00:{i % 60:02d}" if i % 3 else None,
        f"{i}.50" if i % 13 else None,
    )
    for i in range(37)
] + [(None,) * 11]

_ARROW_SCHEMA = pa.schema(
    [
        ("b", pa.bool_()),
        ("t", pa.int8()),
        ("sm", pa.int16()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float64()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("ts", pa.string()),
        ("dec", pa.string()),
    ]
)


def _table(rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(_ARROW_SCHEMA.names, r, strict=True)) for r in rows], schema=_ARROW_SCHEMA
    )


@pytest.mark.parametrize("protocol_version", [V1, COLUMNAR_FROM, COLUMNAR_FROM + 3])
def test_fetch_results_round_trip_with_every_column_kind_and_nulls(protocol_version: int) -> None:
    specs = _specs()
    for rows in (_ROWS, _ROWS[:1], [], _ROWS[1:9]):
        resp = tt.TFetchResultsResp(
            status=tt.TStatus(statusCode=tt.TStatusCode.SUCCESS_STATUS),
            hasMoreRows=True,
            results=row_set(specs, rows, 12345, protocol_version),
        )
        _assert_same(resp)
        _assert_same(TCLIService.FetchResults_result(success=resp))


@pytest.mark.parametrize("protocol_version", [V1, COLUMNAR_FROM])
def test_arrow_row_sets_equal_row_built_ones(protocol_version: int) -> None:
    specs = _specs()
    table = _table(_ROWS)
    cuts = [(0, len(_ROWS)), (0, 0), (3, 8), (5, 17), (30, 8), (37, 1), (0, 1)]
    for start, length in cuts:
        rows = _ROWS[start : start + length]
        batch = column_batch(table.slice(start, length))
        assert list(batch) == rows and len(batch) == len(rows)
        assert row_set(specs, batch, 7, protocol_version) == row_set(
            specs, rows, 7, protocol_version
        )
    # Several chunks (a fetch spanning record batches).
    chunked = pa.Table.from_batches(
        [b for t in (table.slice(0, 5), table.slice(5, 20), table) for b in t.to_batches()]
    )
    rows = _ROWS[:25] + _ROWS
    assert row_set(specs, column_batch(chunked), 0, protocol_version) == row_set(
        specs, rows, 0, protocol_version
    )


def test_column_batch_null_bitmaps_are_hives() -> None:
    table = pa.table({"x": pa.array([None, 1, 2, None, 4, 5, 6, 7, None, 9], pa.int64())})
    batch = column_batch(table)
    # Bit i % 8 of byte i // 8 set for a null row; the last byte's unused bits clear.
    assert batch.nulls == [bytes([0b00001001, 0b00000001])]
    assert column_batch(pa.table({"x": pa.array([1, 2], pa.int64())})).nulls == [None]
    col = row_set([ColumnSpec("x", "bigint", TTypeId.BIGINT_TYPE)], batch, 0, COLUMNAR_FROM)
    assert col.columns[0].i64Val == tt.TI64Column(
        values=[0, 1, 2, 0, 4, 5, 6, 7, 0, 9], nulls=bytes([0b00001001, 0b00000001])
    )


def test_column_batch_is_a_sequence_of_rows() -> None:
    batch = ColumnBatch([[1, 2, 3], ["a", None, "c"]], [None, b"\x02"], 3)
    assert batch[1] == (2, None) and batch[-1] == (3, "c")
    assert batch[0:2] == [(1, "a"), (2, None)]
    with pytest.raises(IndexError):
        batch[3]


def test_other_responses_round_trip() -> None:
    ok = tt.TStatus(statusCode=tt.TStatusCode.SUCCESS_STATUS)
    handle = tt.THandleIdentifier(guid=b"\x01" * 16, secret=b"\xfe" * 16)
    specs = [
        ColumnSpec("amount", "decimal(10,2)", TTypeId.DECIMAL_TYPE, "money", 10, 2),
        ColumnSpec("name", "string", TTypeId.STRING_TYPE),
    ]
    for obj in (
        tt.TGetInfoResp(status=ok, infoValue=tt.TGetInfoValue(stringValue="Spark SQL")),
        tt.TGetInfoResp(status=ok, infoValue=tt.TGetInfoValue(lenValue=128)),
        tt.TOpenSessionResp(
            status=ok,
            serverProtocolVersion=tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10,
            sessionHandle=tt.TSessionHandle(sessionId=handle),
            configuration={"use:database": "default", "a": "\u00e9"},
        ),
        tt.TGetResultSetMetadataResp(status=ok, schema=table_schema(specs)),
        tt.TExecuteStatementResp(
            status=tt.TStatus(
                statusCode=tt.TStatusCode.ERROR_STATUS,
                sqlState="42P01",
                errorCode=0,
                errorMessage="table not found: t\u00e9",
                infoMessages=["*a:1:2", "b"],
            )
        ),
        tt.TGetOperationStatusResp(
            status=ok, operationState=tt.TOperationState.FINISHED_STATE, hasResultSet=True
        ),
        tt.TOpenSessionReq(
            client_protocol=tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V8,
            username="alice",
            password="s\u00e9cret",
            configuration={"set:hivevar:x": "1"},
        ),
        tt.TFetchResultsReq(
            operationHandle=tt.TOperationHandle(
                operationId=handle, operationType=0, hasResultSet=True
            ),
            orientation=tt.TFetchOrientation.FETCH_NEXT,
            maxRows=10_000,
        ),
    ):
        _assert_same(obj)


def test_generated_specs_stay_as_generated() -> None:
    _encode_c(_full(TCLIService.FetchResults_result))
    spec = tt.TFetchResultsResp.thrift_spec
    assert isinstance(spec[3][3], tuple) and spec[3][3][0] is tt.TRowSet
