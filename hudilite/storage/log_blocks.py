"""Contents of Hudi log blocks: Avro and Parquet data, delete key lists (hudi-format.md §5).

:mod:`hudilite.storage.log_format` frames blocks; this module encodes and decodes what sits
inside a block's content field, checked byte by byte against blocks written by Hudi:

* AVRO_DATA: ``int32 3`` (block content version), ``int32`` record count, then per record
  ``int32`` length + the Avro binary datum of the full row (meta columns included), written
  with the block's SCHEMA header as writer schema.
* PARQUET_DATA: a complete Parquet file (starts and ends with ``PAR1``, no extra framing).
* DELETE: ``int32 3``, ``int32`` length, then one Avro datum of ``HoodieDeleteRecordList``.

Rows travel as Arrow tables whose schema is ``avro_to_arrow_schema(SCHEMA)``.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudilite.errors import CorruptFileError
from hudilite.schema import avro_to_arrow_schema, cast_to_schema
from hudilite.storage.parquet_io import WRITE_OPTIONS

#: Version of the content layout of data and delete blocks (Hudi's HoodieLogBlock v3).
CONTENT_VERSION = 3

_INT32 = struct.Struct(">i")
_EPOCH_DATE = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# --- schema helpers -------------------------------------------------------------------------


def canonical_schema_json(avro_schema: str | dict[str, Any]) -> str:
    """The SCHEMA header text: a JSON string as given, a dict as compact JSON (as Hudi writes)."""
    if isinstance(avro_schema, str):
        return avro_schema
    return json.dumps(avro_schema, separators=(",", ":"))


@lru_cache(maxsize=64)
def _parsed_schema(avro_schema_json: str) -> Any:
    # Parsing a Hudi table schema takes ~1 ms; every block of a file group repeats the
    # same text, so the parsed form is cached by it.
    return fastavro.parse_schema(json.loads(avro_schema_json))


@lru_cache(maxsize=64)
def arrow_schema_of(avro_schema_json: str) -> pa.Schema:
    """The Arrow schema of a SCHEMA header (cached: every block of a table repeats it)."""
    return avro_to_arrow_schema(avro_schema_json)


# --- Avro data blocks -----------------------------------------------------------------------


def encode_avro_records(records: pa.Table, avro_schema_json: str) -> bytes:
    """AVRO_DATA content for ``records`` (cast to the schema's Arrow types first).

    Raises :class:`hudilite.errors.SchemaError` when a column of the schema is missing or
    cannot be cast.
    """
    schema = arrow_schema_of(avro_schema_json)
    table = cast_to_schema(records, schema)
    parsed = _parsed_schema(avro_schema_json)
    out = io.BytesIO()
    out.write(_INT32.pack(CONTENT_VERSION))
    out.write(_INT32.pack(table.num_rows))
    datum = io.BytesIO()
    write = fastavro.schemaless_writer
    pack = _INT32.pack
    for row in _avro_rows(table):
        datum.seek(0)
        datum.truncate()
        write(datum, parsed, row)
        value = datum.getvalue()
        out.write(pack(len(value)))
        out.write(value)
    return out.getvalue()


def _avro_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of ``table`` as the Python values fastavro writes.

    Whole columns are converted by Arrow (``to_pylist``); only what fastavro cannot take as
    Arrow gives it is touched: top-level timestamps and dates become their integer storage
    values (cheaper than datetime objects, and exactly the Avro long/int), and maps become
    dicts (Arrow yields lists of pairs).
    """
    columns: list[list[Any]] = []
    for fld, column in zip(table.schema, table.columns, strict=True):
        t = fld.type
        if pa.types.is_timestamp(t):
            column = column.cast(pa.int64())
        elif pa.types.is_date32(t):
            column = column.cast(pa.int32())
        values = column.to_pylist()
        if _has_map(t):
            fix = _map_fixer(t)
            values = [fix(v) for v in values]
        columns.append(values)
    names = table.column_names
    return [dict(zip(names, vals, strict=True)) for vals in zip(*columns, strict=True)]


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    return False


def _map_fixer(t: pa.DataType) -> Callable[[Any], Any]:
    """A function turning Arrow's map values (lists of pairs) inside ``t`` into dicts."""
    if pa.types.is_map(t):
        inner = _map_fixer(t.item_type) if _has_map(t.item_type) else None

        def fix_map(v: Any) -> Any:
            if v is None:
                return None
            if inner is None:
                return dict(v)
            return {k: inner(x) for k, x in v}

        return fix_map
    if pa.types.is_struct(t):
        subs = [(f.name, _map_fixer(f.type)) for f in t if _has_map(f.type)]

        def fix_struct(v: Any) -> Any:
            if v is not None:
                for name, fn in subs:
                    v[name] = fn(v[name])
            return v

        return fix_struct
    element = _map_fixer(t.value_type)
    return lambda v: None if v is None else [element(x) for x in v]


def decode_avro_records(content: bytes, avro_schema_json: str) -> pa.Table:
    """The rows of AVRO_DATA content as an Arrow table of the schema's Arrow types."""
    schema = arrow_schema_of(avro_schema_json)
    parsed = _parsed_schema(avro_schema_json)
    view = memoryview(content)
    version, count = _ints(view, 0, 2, "avro data block")
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"avro data block: content version {version}, expected 3")
    pos = 8
    rows = []
    read = fastavro.schemaless_reader
    try:
        for _ in range(count):
            (length,) = _INT32.unpack_from(view, pos)
            pos += 4
            if length < 0 or pos + length > len(view):
                raise CorruptFileError("avro data block: a record runs past the content")
            rows.append(read(io.BytesIO(view[pos : pos + length]), parsed, None))
            pos += length
    except (struct.error, EOFError, ValueError, IndexError) as exc:
        raise CorruptFileError(f"avro data block: undecodable record ({exc})") from exc
    if pos != len(view):
        raise CorruptFileError(f"avro data block: {len(view) - pos} bytes after the last record")
    return pa.Table.from_pylist(rows, schema=schema)


def _ints(view: memoryview, pos: int, n: int, what: str) -> tuple[int, ...]:
    try:
        return struct.unpack_from(f">{n}i", view, pos)
    except struct.error as exc:
        raise CorruptFileError(f"{what}: content too short") from exc


# --- Parquet data blocks --------------------------------------------------------------------


def encode_parquet_records(records: pa.Table, avro_schema_json: str) -> bytes:
    """PARQUET_DATA content: ``records`` (cast to the schema's Arrow types) as a Parquet file."""
    table = cast_to_schema(records, arrow_schema_of(avro_schema_json))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **WRITE_OPTIONS)
    return bytes(sink.getvalue())


def decode_parquet_records(content: bytes, avro_schema_json: str | None) -> pa.Table:
    """The rows of PARQUET_DATA content, in the schema's Arrow types when one is given.

    Columns of the schema the file lacks come back as nulls; columns the schema lacks are
    dropped (the SCHEMA header is authoritative, as for Hudi's reader).
    """
    try:
        table = pq.read_table(pa.BufferReader(content))
    except (pa.ArrowInvalid, OSError) as exc:
        raise CorruptFileError(f"parquet data block: unreadable Parquet content ({exc})") from exc
    if avro_schema_json is None:
        return table
    schema = arrow_schema_of(avro_schema_json)
    columns = [
        table[f.name] if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return cast_to_schema(pa.Table.from_arrays(columns, names=schema.names), schema)


# --- delete blocks --------------------------------------------------------------------------

_NS = "org.apache.hudi.avro.model."
# Union order of HoodieDeleteRecordList.orderingVal: the branch index on disk is the position
# here + 1 (null is branch 0), so this order is part of the format. ArrayWrapper (composite
# ordering values, Hudi 1.1) is last so older readers still decode the others.
_SCALAR_WRAPPERS: tuple[tuple[str, Any], ...] = (
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", "int"),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "long"),
)


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": _NS[:-1],
            "fields": [{"name": "value", "type": value_type}]}  # fmt: skip


#: ``HoodieDeleteRecordList`` (apache/hudi ``hudi-common/src/main/avro``), as fastavro input.
DELETE_RECORD_LIST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": _NS[:-1],
    "fields": [
        {
            "name": "deleteRecordList",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieDeleteRecord",
                    "fields": [
                        {"name": "recordKey", "type": ["null", "string"], "default": None},
                        {"name": "partitionPath", "type": ["null", "string"], "default": None},
                        {
                            "name": "orderingVal",
                            "type": ["null"]
                            + [_wrapper(n, t) for n, t in _SCALAR_WRAPPERS]
                            + [
                                {
                                    "type": "record",
                                    "name": "ArrayWrapper",
                                    "namespace": _NS[:-1],
                                    "fields": [
                                        {
                                            "name": "wrappedValues",
                                            "type": [
                                                "null",
                                                {
                                                    "type": "array",
                                                    "items": ["null"]
                                                    + [_NS + n for n, _ in _SCALAR_WRAPPERS]
                                                    + [_wrapper("LocalDateWrapper", "int")],
                                                },
                                            ],
                                            "default": None,
                                        }
                                    ],
                                }
                            ],
                            "default": None,
                        },
                    ],
                },
            },
        }
    ],
}
_DELETE_SCHEMA_PARSED = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)

#: Wrapper names ``DeleteKey.wrapper`` may hold (``ArrayWrapper`` is spelled as a tuple).
WRAPPER_NAMES: frozenset[str] = frozenset([n for n, _ in _SCALAR_WRAPPERS] + ["LocalDateWrapper"])

OrderingWrapper = str | tuple[str | None, ...] | None


@dataclass(frozen=True)
class DeleteKey:
    """One entry of a delete block.

    ``ordering_value`` is the unwrapped ordering value as Hudi's Java reader unwraps it:
    bool/int/float/str/bytes, :class:`~decimal.Decimal` (DecimalWrapper, scale 15),
    :class:`~datetime.date` (DateWrapper, LocalDateWrapper), :class:`~datetime.time`
    (TimeMicrosWrapper), an aware UTC :class:`~datetime.datetime` (TimestampMicrosWrapper),
    a tuple of those (ArrayWrapper: several ordering fields), or None (Avro null).

    ``wrapper`` records the Avro wrapper the value was (or is to be) stored in, e.g.
    ``"IntWrapper"`` vs ``"LongWrapper"`` for the same Python int; a tuple of item wrapper
    names means ``ArrayWrapper``. It does not take part in equality. None when writing means
    "choose from the value" (see :func:`encode_deletes`).
    """

    record_key: str
    partition_path: str
    ordering_value: Any | None = None
    wrapper: OrderingWrapper = field(default=None, compare=False)


def is_natural_order(value: Any) -> bool:
    """True when a delete's ordering value means "natural order" (the delete always wins).

    Accepts a :class:`DeleteKey` or a bare ordering value. Natural order is Avro null or the
    Java ``Integer`` 0 Hudi writes for deletes without an ordering value (SQL ``DELETE``,
    commit-time ordering): Java tests ``orderingVal.equals(0)``, which is false for a Long,
    Double or Decimal zero, so a ``LongWrapper(0)`` is *not* natural order.
    """
    if isinstance(value, DeleteKey):
        if value.ordering_value is None:
            return True
        if value.wrapper not in (None, "IntWrapper"):
            return False
        value = value.ordering_value
    return value is None or (type(value) is int and value == 0)


def encode_deletes(keys: Sequence[DeleteKey], ordering_type: pa.DataType | None = None) -> bytes:
    """DELETE content for ``keys``.

    The wrapper of each ordering value is ``key.wrapper`` when set, else derived from
    ``ordering_type`` (the Arrow type of the table's ordering field: int8/16/32 -> Int,
    int64 -> Long, float32 -> Float, float64 -> Double, string -> String, binary -> Bytes,
    bool -> Boolean, date -> Date, decimal -> Decimal, timestamp -> TimestampMicros,
    time -> TimeMicros), else from the Python value (int -> Int when it fits 32 bits, else
    Long; float -> Double; ...). Pass ``ordering_type``: Java only compares ordering values
    of the same class, so an IntWrapper against a BIGINT column never wins.

    A None ordering value is written as ``IntWrapper(0)``, exactly as Hudi writes deletes
    without an ordering value: Hudi 0.x readers call ``orderingVal.equals(0)`` and would
    fail on a null.
    """
    default = _wrapper_for_type(ordering_type) if ordering_type is not None else None
    records = []
    for key in keys:
        wrapped: Any
        if key.ordering_value is None:
            wrapped = (_NS + "IntWrapper", {"value": 0})
        else:
            wrapped = _wrap(key.ordering_value, key.wrapper or default)
        records.append(
            {
                "recordKey": key.record_key,
                "partitionPath": key.partition_path,
                "orderingVal": wrapped,
            }
        )
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, _DELETE_SCHEMA_PARSED, {"deleteRecordList": records})
    body = datum.getvalue()
    return _INT32.pack(CONTENT_VERSION) + _INT32.pack(len(body)) + body


def decode_deletes(content: bytes) -> list[DeleteKey]:
    """The keys of DELETE content (null keys or partition paths become ``""``)."""
    view = memoryview(content)
    version, length = _ints(view, 0, 2, "delete block")
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"delete block: content version {version}, expected 3")
    if length < 0 or 8 + length > len(view):
        raise CorruptFileError("delete block: the delete list runs past the content")
    try:
        datum = fastavro.schemaless_reader(
            io.BytesIO(view[8 : 8 + length]), _DELETE_SCHEMA_PARSED, None, return_record_name=True
        )
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"delete block: undecodable delete list ({exc})") from exc
    keys = []
    for rec in datum["deleteRecordList"]:
        value, wrapper = _unwrap(rec["orderingVal"])
        keys.append(DeleteKey(rec["recordKey"] or "", rec["partitionPath"] or "", value, wrapper))
    return keys


def _wrapper_for_type(t: pa.DataType) -> str:
    """The wrapper Hudi's Java writer picks for values of a column of Arrow type ``t``."""
    if pa.types.is_boolean(t):
        return "BooleanWrapper"
    if pa.types.is_integer(t):
        return "LongWrapper" if t.bit_width == 64 or t == pa.uint32() else "IntWrapper"
    if pa.types.is_floating(t):
        return "DoubleWrapper" if t == pa.float64() else "FloatWrapper"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "StringWrapper"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "BytesWrapper"
    if pa.types.is_date(t):
        return "DateWrapper"
    if pa.types.is_decimal(t):
        return "DecimalWrapper"
    if pa.types.is_timestamp(t):
        return "TimestampMicrosWrapper"
    if pa.types.is_time(t):
        return "TimeMicrosWrapper"
    raise ValueError(f"no Hudi ordering value wrapper for Arrow type {t}")


def _wrapper_for_value(value: Any) -> str:
    # Order matters: bool is an int, datetime is a date.
    if isinstance(value, bool):
        return "BooleanWrapper"
    if isinstance(value, int):
        return "IntWrapper" if -(2**31) <= value < 2**31 else "LongWrapper"
    checks: tuple[tuple[type, str], ...] = (
        (float, "DoubleWrapper"),
        (str, "StringWrapper"),
        (bytes, "BytesWrapper"),
        (Decimal, "DecimalWrapper"),
        (datetime, "TimestampMicrosWrapper"),
        (date, "DateWrapper"),
        (time, "TimeMicrosWrapper"),
    )
    for cls, name in checks:
        if isinstance(value, cls):
            return name
    raise ValueError(f"no Hudi ordering value wrapper for {type(value).__name__} {value!r}")


def _wrap(value: Any, wrapper: OrderingWrapper) -> Any:
    """``value`` in fastavro's ``(record name, record)`` union notation."""
    if isinstance(value, tuple | list) or isinstance(wrapper, tuple):
        items = list(value)
        names = list(wrapper) if isinstance(wrapper, tuple) else [None] * len(items)
        if len(names) != len(items):
            raise ValueError(f"ordering value {value!r} and wrappers {wrapper!r} differ in length")
        wrapped = [None if v is None else _wrap(v, n) for v, n in zip(items, names, strict=True)]
        return (_NS + "ArrayWrapper", {"wrappedValues": wrapped})
    name = wrapper or _wrapper_for_value(value)
    if name not in WRAPPER_NAMES:
        raise ValueError(f"unknown ordering value wrapper {name!r}")
    if name in ("DateWrapper", "LocalDateWrapper") and isinstance(value, date):
        value = (value - _EPOCH_DATE).days
    elif name == "TimestampMicrosWrapper" and isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        delta = aware - _EPOCH
        value = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    elif name == "DecimalWrapper" and not isinstance(value, Decimal):
        value = Decimal(str(value))
    elif name in ("FloatWrapper", "DoubleWrapper"):
        value = float(value)
    return (_NS + name, {"value": value})


def _unwrap(wrapped: Any) -> tuple[Any, OrderingWrapper]:
    """``(value, wrapper)`` of a decoded orderingVal (fastavro ``return_record_name`` form)."""
    if wrapped is None:
        return None, None
    full_name, record = wrapped
    name = full_name.rsplit(".", 1)[-1]
    if name == "ArrayWrapper":
        pairs = [_unwrap(item) for item in record["wrappedValues"] or []]
        return tuple(v for v, _ in pairs), tuple(str(w) if w else None for _, w in pairs)
    value = record["value"]
    if name in ("DateWrapper", "LocalDateWrapper"):
        value = _EPOCH_DATE + timedelta(days=value)
    elif name == "TimestampMicrosWrapper":
        value = _EPOCH + timedelta(microseconds=value)
    return value, name
