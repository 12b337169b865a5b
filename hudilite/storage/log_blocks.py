"""Avro-encoded contents of Hudi log blocks: data records and delete lists
(docs/dev/hudi-format.md §5).

:mod:`hudilite.storage.log_format` frames blocks (and handles Parquet content, which is just
a Parquet file); this module encodes and decodes the Avro-based content of data and delete
blocks, checked byte by byte against blocks written by Hudi:

* AVRO_DATA: ``int32 3`` (content version), ``int32`` record count, then per record
  ``int32`` length + the Avro binary datum of the full row (meta fields included), with the
  block's SCHEMA header as writer schema. Re-encoding the rows of a Hudi-written block
  reproduces its content exactly.
* DELETE: ``int32 3``, ``int32`` length, one Avro datum of ``HoodieDeleteRecordList``.

Rows travel as Arrow tables of ``avro_to_arrow_schema(SCHEMA)``.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, cast

import fastavro
import fastavro.schema
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from fastavro.schema import SchemaParseException

from hudilite.errors import CorruptFileError, SchemaError
from hudilite.schema import avro_to_arrow_schema, cast_to_schema
from hudilite.storage.avro_columns import INTEGER_LOGICAL, decode_flat, record_bounds

#: Version of the content layout of data and delete blocks (Hudi's log block version 3).
CONTENT_VERSION = 3

_HEAD = struct.Struct(">ii")
_BIN = pa.large_binary()


@lru_cache(maxsize=1)
def _empty() -> pa.Scalar:
    """``b""`` as a large-binary scalar. Made on first use, not at import: pyarrow imports
    pandas the first time it converts Python values, which adds to every command's start."""
    return pa.scalar(b"", _BIN)


@lru_cache(maxsize=64)
def arrow_schema_of(avro_schema_json: str) -> pa.Schema:
    """The Arrow schema of a SCHEMA header (cached: every block of a table repeats it)."""
    return avro_to_arrow_schema(avro_schema_json)


# --- Avro data blocks: encoding ---------------------------------------------------------------


def encode_avro_records(records: pa.Table, avro_schema_json: str) -> bytes:
    """AVRO_DATA content for ``records`` (matched by name, cast to the schema's Arrow types).

    Datums are encoded column-wise with Arrow compute, byte-identical to fastavro/Java and
    ~15x faster than fastavro row by row. Raises :class:`SchemaError` when a column is
    missing or cannot be cast, or a value does not fit its Avro type (a null where the type
    has no null branch, a decimal beyond its precision).
    """
    table = cast_to_schema(records, arrow_schema_of(avro_schema_json))
    head = _HEAD.pack(CONTENT_VERSION, table.num_rows)
    if table.num_rows == 0:
        return head
    spec = _expanded_schema(avro_schema_json)
    datums = _ColumnEncoder().record(spec, table, spec.get("name", "record"))
    lengths = pc.binary_length(datums).to_numpy().astype(">i4")
    framed = _join([_fixed_width(lengths.tobytes(), 4, len(lengths)), datums])
    offsets = np.frombuffer(framed.buffers()[1], dtype=np.int64)[framed.offset :]
    start, end = int(offsets[0]), int(offsets[len(framed)])
    return head + framed.buffers()[2][start:end].to_pybytes()


@lru_cache(maxsize=64)
def _expanded_schema(avro_schema_json: str) -> Any:
    # Named types referenced by name are inlined, so the encoder never resolves names.
    return _fastavro_schema(fastavro.schema.expand_schema, avro_schema_json)


def _fastavro_schema(parse: Any, avro_schema_json: str) -> Any:
    try:
        return parse(json.loads(avro_schema_json))
    except (SchemaParseException, ValueError, KeyError, TypeError) as exc:
        raise SchemaError(f"invalid Avro schema: {exc}") from exc


def _join(parts: Sequence[pa.Array | pa.Scalar]) -> pa.Array:
    """Element-wise concatenation of binary arrays (scalars are broadcast)."""
    return pc.binary_join_element_wise(*parts, _empty())


def _fixed_width(data: bytes, width: int, n: int) -> pa.Array:
    """``n`` binary values of ``width`` bytes each, taken from ``data`` in order."""
    arr = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n, [None, pa.py_buffer(data)])
    return arr.cast(_BIN)


def _ragged(matrix: np.ndarray, keep: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """Binary values made of the bytes of each ``matrix`` row where ``keep`` is True."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = matrix[keep].tobytes()
    return pa.Array.from_buffers(
        _BIN, len(lengths), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)]
    )


def _varints(values: np.ndarray) -> pa.Array:
    """Avro's zigzag varint encoding of every int64 in ``values``."""
    n = len(values)
    v = ((values << 1) ^ (values >> 63)).astype(np.uint64)
    out = np.zeros((n, 10), dtype=np.uint8)
    lengths = np.ones(n, dtype=np.int64)
    for j in range(10):
        rest = v >> np.uint64(7)
        more = rest != 0
        out[:, j] = (v & np.uint64(0x7F)).astype(np.uint8) | (more.astype(np.uint8) << 7)
        lengths += more
        v = rest
        if not more.any():
            break
    return _ragged(out, np.arange(10) < lengths[:, None], lengths)


def _decimal_bytes(arr: pa.Array) -> np.ndarray:
    """Big-endian 16-byte two's complement of each decimal128 value (an n x 16 matrix)."""
    n = len(arr)
    le = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * 16 : (arr.offset + n) * 16]
    return le.reshape(n, 16)[:, ::-1]


class _ColumnEncoder:
    """Avro binary encoding of whole Arrow arrays: one datum (large_binary) per value.

    Every method returns an array of the input's length without nulls. A ``[null, T]``
    union encodes only its non-null values as T; a null anywhere else is an error.
    """

    def record(self, spec: dict[str, Any], columns: pa.Table | pa.Array, path: str) -> pa.Array:
        parts = []
        for i, fld in enumerate(spec["fields"]):
            if isinstance(columns, pa.Table):
                child = columns.column(fld["name"]).combine_chunks()
            else:
                child = columns.field(i)  # as stored: the struct's own nulls are not merged
            parts.append(self.encode(fld["type"], child, f"{path}.{fld['name']}"))
        return _join(parts)

    def encode(self, avro: Any, arr: pa.Array, path: str) -> pa.Array:
        """Datums of ``arr`` for Avro type ``avro`` (expanded schema form)."""
        if isinstance(avro, list):
            return self._union(avro, arr, path)
        kind = avro["type"] if isinstance(avro, dict) else avro
        logical = avro.get("logicalType") if isinstance(avro, dict) else None
        n = len(arr)
        if kind == "null":
            return pa.repeat(_empty(), n)
        if arr.null_count:
            raise SchemaError(f"column {path!r}: null value for non-null Avro type {kind}")
        if kind == "boolean":
            return _fixed_width(arr.to_numpy(zero_copy_only=False).astype(np.uint8).tobytes(), 1, n)
        if kind in ("int", "long"):
            return _varints(_integers(arr))
        if kind in ("float", "double"):
            floats = arr.to_numpy(zero_copy_only=False).astype("<f4" if kind == "float" else "<f8")
            return _fixed_width(floats.tobytes(), floats.itemsize, n)
        if logical == "decimal" and kind in ("bytes", "fixed"):
            return self._decimal(arr, avro.get("size"), path)
        if kind in ("string", "bytes"):
            raw = arr.cast(_BIN)
            return _join([_varints(pc.binary_length(raw).to_numpy().astype(np.int64)), raw])
        if kind == "fixed":
            raw = arr.cast(_BIN)
            if pc.any(pc.not_equal(pc.binary_length(raw), avro["size"])).as_py():
                raise SchemaError(f"column {path!r}: a value is not {avro['size']} bytes long")
            return raw
        if kind == "enum":
            index = pc.index_in(arr, value_set=pa.array(avro["symbols"], arr.type))
            if index.null_count:
                raise SchemaError(f"column {path!r}: a value is not one of {avro['symbols']}")
            return _varints(index.to_numpy().astype(np.int64))
        if kind == "record":
            return self.record(avro, arr, path)
        if kind == "array":
            return self._blocks(arr.offsets, self.encode(avro["items"], arr.values, path))
        if kind == "map":
            entries = [self.encode("string", arr.keys, path)]
            entries.append(self.encode(avro["values"], arr.items, path))
            return self._blocks(arr.offsets, _join(entries))
        raise SchemaError(f"column {path!r}: Avro type {kind!r} is not supported")

    def _union(self, branches: list[Any], arr: pa.Array, path: str) -> pa.Array:
        if len(branches) == 1:
            return self.encode(branches[0], arr, path)
        if len(branches) != 2 or "null" not in branches:
            raise SchemaError(f"column {path!r}: Avro union {branches} is not supported")
        null_index = branches.index("null")
        tag = pa.scalar(bytes([2 * (1 - null_index)]), _BIN)  # zigzag varint of the branch
        if arr.null_count == 0:
            return _join([tag, self.encode(branches[1 - null_index], arr, path)])
        # Only the values are encoded, then spread over the null branch's datums.
        valid = arr.is_valid()
        tagged = _join([tag, self.encode(branches[1 - null_index], arr.filter(valid), path)])
        nulls = pa.repeat(pa.scalar(bytes([2 * null_index]), _BIN), len(arr))
        return pc.replace_with_mask(nulls, valid, tagged)

    @staticmethod
    def _decimal(arr: pa.Array, size: int | None, path: str) -> pa.Array:
        """Two's complement big-endian: ``size`` bytes (fixed) or minimal with a length (bytes)."""
        if not pa.types.is_decimal128(arr.type):
            raise SchemaError(f"column {path!r}: decimals beyond precision 38 are not supported")
        be = _decimal_bytes(arr)
        n = len(arr)
        sign = np.where(be[:, 0] >= 0x80, 0xFF, 0x00).astype(np.uint8)
        # A leading byte is redundant when it only repeats the sign (Java's
        # BigInteger.toByteArray drops exactly those; fixed keeps ``size`` bytes).
        redundant = (be[:, :15] == sign[:, None]) & ((be[:, 1:] & 0x80) == (sign[:, None] & 0x80))
        needed = 16 - np.cumprod(redundant, axis=1).sum(axis=1)
        if size is None:
            keep = np.arange(16) >= (16 - needed)[:, None]
            return _join([_varints(needed.astype(np.int64)), _ragged(be, keep, needed)])
        if np.any(needed > size):
            raise SchemaError(f"column {path!r}: a decimal exceeds its Avro fixed({size})")
        return _fixed_width(np.ascontiguousarray(be[:, 16 - size :]).tobytes(), size, n)

    @staticmethod
    def _blocks(offsets: pa.Array, items: pa.Array) -> pa.Array:
        """Avro array/map framing: ``count, items..., 0`` (just ``0`` when empty)."""
        bounds = offsets.to_numpy().astype(np.int64)
        counts = np.diff(bounds)
        lists = pa.LargeListArray.from_arrays(pa.array(bounds), items)
        zero = pa.scalar(b"\x00", _BIN)
        full = _join([_varints(counts), pc.binary_join(lists, _empty()), zero])
        return pc.if_else(pa.array(counts > 0), full, zero)


def _integers(arr: pa.Array) -> np.ndarray:
    # Dates, times and timestamps are already in their Avro unit (the Arrow schema comes
    # from the same Avro schema), so their storage integers are the Avro values.
    t = arr.type
    if pa.types.is_temporal(t):
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


# --- Avro data blocks: decoding ---------------------------------------------------------------


def decode_avro_records(content: bytes, avro_schema_json: str) -> pa.Table:
    """The rows of AVRO_DATA content as an Arrow table of the schema's Arrow types.

    Raises :class:`CorruptFileError` when the content does not decode exactly.
    """
    schema = arrow_schema_of(avro_schema_json)
    reader_schema, raw_kinds = _decode_plan(avro_schema_json)
    if len(content) < 8:
        raise CorruptFileError("avro data block: content too short")
    version, count = _HEAD.unpack_from(content)
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"avro data block: content version {version}, expected 3")
    starts, ends = record_bounds(content, count, 8)
    flat = decode_flat(content, starts, ends, avro_schema_json, schema)
    if flat is not None:  # flat rows (the common case): column-wise, no dict per record
        return flat
    stream = io.BytesIO(content)
    rows: list[dict[str, Any]] = []
    read = fastavro.schemaless_reader
    try:
        # Each datum must end exactly where its length says.
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            stream.seek(start)
            rows.append(cast(dict[str, Any], read(stream, reader_schema, None)))
            if stream.tell() != end:
                raise CorruptFileError("avro data block: a record's length is wrong")
    except (struct.error, EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"avro data block: undecodable record ({exc})") from exc
    arrays = []
    for fld, raw in zip(schema, raw_kinds, strict=True):
        values = [row[fld.name] for row in rows]
        arrays.append(_raw_column(values, fld.type, raw) if raw else pa.array(values, fld.type))
    return pa.Table.from_arrays(arrays, schema=schema)


@lru_cache(maxsize=64)
def _decode_plan(avro_schema_json: str) -> tuple[Any, tuple[str | None, ...]]:
    """The reader schema and, per top-level field, how its raw values become Arrow.

    fastavro builds a datetime/date/Decimal object per logical value, which costs more than
    the decoding itself; top-level columns of those types are read as their physical values
    (``"int"``: the integer; ``"fixed"``: two's complement bytes) and converted to Arrow
    column-wise. Nested logical values keep fastavro's conversion.
    """
    kinds: list[str | None] = []

    def strip(spec: dict[str, Any]) -> Any:
        refs = _type_references(spec, set())
        for fld in spec.get("fields", []):
            kind = None
            # A named type used again elsewhere must keep its logical type there too.
            if not _defined_names(fld["type"], spec.get("namespace")) & refs:
                fld["type"], kind = _strip_logical(fld["type"])
            kinds.append(kind)
        return fastavro.parse_schema(spec)

    return _fastavro_schema(strip, avro_schema_json), tuple(kinds)


def _strip_logical(avro: Any) -> tuple[Any, str | None]:
    if isinstance(avro, list):
        if len(avro) != 2 or "null" not in avro:
            return avro, None
        branches = [_strip_logical(b) for b in avro]
        return [b for b, _ in branches], next((k for _, k in branches if k), None)
    if not isinstance(avro, dict):
        return avro, None
    logical, kind = avro.get("logicalType"), avro.get("type")
    if logical in INTEGER_LOGICAL and kind in ("int", "long"):
        return kind, "int"
    if logical == "decimal" and kind == "fixed" and int(avro["precision"]) <= 38:
        drop = ("logicalType", "precision", "scale")
        return {k: v for k, v in avro.items() if k not in drop}, "fixed"
    return avro, None


_COMPLEX = frozenset({"record", "enum", "fixed", "array", "map"})


def _type_references(node: Any, out: set[str]) -> set[str]:
    """Every type name used in a type position of ``node`` (named-type references)."""
    if isinstance(node, str):
        out.add(node)
    elif isinstance(node, list):
        for branch in node:
            _type_references(branch, out)
    elif isinstance(node, dict):
        kind = node.get("type")
        if not (isinstance(kind, str) and kind in _COMPLEX):
            _type_references(kind, out)
        for key in ("items", "values"):
            if key in node:
                _type_references(node[key], out)
        for fld in node.get("fields", []):
            _type_references(fld["type"], out)
    return out


def _defined_names(avro: Any, namespace: str | None) -> set[str]:
    """Short and full names of the named types a field type (or its union) defines."""
    names: set[str] = set()
    for branch in avro if isinstance(avro, list) else [avro]:
        if isinstance(branch, dict) and isinstance(branch.get("name"), str):
            name = branch["name"]
            names |= {name, f"{branch.get('namespace', namespace)}.{name}"}
    return names


def _raw_column(values: list[Any], t: pa.DataType, raw: str) -> pa.Array:
    """An Arrow column of type ``t`` from physical Avro values (see :func:`_decode_plan`)."""
    if raw == "int":
        return pa.array(values, pa.int32() if t.bit_width == 32 else pa.int64()).view(t)
    n = len(values)
    size = next((len(v) for v in values if v is not None), 1)
    fixed = pa.array(values, pa.binary(size))
    be = np.frombuffer(fixed.buffers()[1], dtype=np.uint8)[: n * size].reshape(n, size)
    le = np.empty((n, 16), dtype=np.uint8)  # sign-extended little endian, as decimal128
    le[:, :size] = be[:, ::-1]
    le[:, size:] = np.where(be[:, :1] >= 0x80, 0xFF, 0x00)
    return pa.Array.from_buffers(t, n, [fixed.buffers()[0], pa.py_buffer(le.tobytes())])


# --- delete blocks ----------------------------------------------------------------------------

_NS = "org.apache.hudi.avro.model"
_EPOCH_DATE = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# orderingVal is a union of these wrappers: the on-disk branch index is the position here + 1
# (null is branch 0), so the order is part of the format. ArrayWrapper (several ordering
# fields, Hudi 1.1) comes last, so older readers still decode every other branch.
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


def _wrapper_schema(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": _NS,
            "fields": [{"name": "value", "type": value_type}]}  # fmt: skip


_ARRAY_ITEMS: list[Any] = ["null", *(f"{_NS}.{n}" for n, _ in _SCALAR_WRAPPERS)]
_ARRAY_ITEMS.append(_wrapper_schema("LocalDateWrapper", "int"))
_ARRAY_WRAPPER = {"type": "record", "name": "ArrayWrapper", "namespace": _NS, "fields": [
    {"name": "wrappedValues", "type": ["null", {"type": "array", "items": _ARRAY_ITEMS}],
     "default": None}]}  # fmt: skip
_DELETE_RECORD = {"type": "record", "name": "HoodieDeleteRecord", "namespace": _NS, "fields": [
    {"name": "recordKey", "type": ["null", "string"], "default": None},
    {"name": "partitionPath", "type": ["null", "string"], "default": None},
    {"name": "orderingVal", "default": None, "type": [
        "null", *(_wrapper_schema(*w) for w in _SCALAR_WRAPPERS), _ARRAY_WRAPPER]}]}  # fmt: skip
#: ``HoodieDeleteRecordList`` (apache/hudi ``hudi-common/src/main/avro``) in fastavro form.
DELETE_RECORD_LIST_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": _NS,
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": _DELETE_RECORD}}],
}  # fmt: skip
_DELETE_SCHEMA = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)

#: Wrapper names ``DeleteKey.wrapper`` may hold (``ArrayWrapper`` is spelled as a tuple).
WRAPPER_NAMES = frozenset([n for n, _ in _SCALAR_WRAPPERS] + ["LocalDateWrapper"])

#: A wrapper name, a tuple of item wrapper names (ArrayWrapper), or None (unknown / null).
OrderingWrapper = str | tuple[str | None, ...] | None


@dataclass(frozen=True)
class DeleteKey:
    """One entry of a delete block.

    ``ordering_value`` is unwrapped as Hudi's Java reader unwraps it: bool, int, float, str,
    bytes, :class:`~decimal.Decimal` (DecimalWrapper, scale 15), :class:`~datetime.date`
    (Date/LocalDateWrapper), :class:`~datetime.time` (TimeMicrosWrapper), an aware UTC
    :class:`~datetime.datetime` (TimestampMicrosWrapper), a tuple of those (ArrayWrapper),
    or None (Avro null). ``wrapper`` is the Avro wrapper it was (or is to be) stored in,
    e.g. ``"IntWrapper"`` vs ``"LongWrapper"`` for the same Python int; it does not take
    part in equality. None when writing means "choose" (see :func:`encode_deletes`).
    """

    record_key: str
    partition_path: str
    ordering_value: Any | None = None
    wrapper: OrderingWrapper = field(default=None, compare=False)


def is_natural_order(value: Any) -> bool:
    """True when a delete's ordering value means "natural order" (the delete always wins).

    Accepts a :class:`DeleteKey` or a bare value. Natural order is null or the Java
    ``Integer`` 0 Hudi writes for deletes without an ordering value (SQL ``DELETE``): Java
    tests ``orderingVal.equals(0)``, false for a Long, Double or Decimal zero, so a
    ``LongWrapper(0)`` is an ordinary ordering value.
    """
    if isinstance(value, DeleteKey):
        if value.ordering_value is not None and value.wrapper not in (None, "IntWrapper"):
            return False
        value = value.ordering_value
    return value is None or (type(value) is int and value == 0)


def encode_deletes(keys: Sequence[DeleteKey]) -> bytes:
    """DELETE content for ``keys``.

    A value is stored in ``key.wrapper`` when set, else in one picked from the Python value
    (an int -> IntWrapper when it fits 32 bits, else LongWrapper; float -> DoubleWrapper;
    Decimal, date, datetime, time, str, bytes, bool -> their wrappers; a tuple ->
    ArrayWrapper). :func:`hudilite.storage.log_format.delete_block` sets wrappers from the
    ordering field's type, as Java does.

    A None ordering value is written as ``IntWrapper(0)``, as Hudi writes deletes without
    an ordering value: Hudi 0.x readers call ``orderingVal.equals(0)`` and fail on null.
    """
    records = [
        {
            "recordKey": key.record_key,
            "partitionPath": key.partition_path,
            "orderingVal": (f"{_NS}.IntWrapper", {"value": 0})
            if key.ordering_value is None
            else _wrap(key.ordering_value, key.wrapper),
        }
        for key in keys
    ]
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, _DELETE_SCHEMA, {"deleteRecordList": records})
    return _HEAD.pack(CONTENT_VERSION, datum.tell()) + datum.getvalue()


def decode_deletes(content: bytes) -> list[DeleteKey]:
    """The keys of DELETE content (a null key or partition path becomes ``""``)."""
    if len(content) < 8:
        raise CorruptFileError("delete block: content too short")
    version, length = _HEAD.unpack_from(content)
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"delete block: content version {version}, expected 3")
    if length < 0 or 8 + length != len(content):
        raise CorruptFileError("delete block: the delete list length disagrees with the content")
    stream = io.BytesIO(content)
    stream.seek(8)
    try:
        datum = cast(
            dict[str, Any],
            fastavro.schemaless_reader(stream, _DELETE_SCHEMA, None, return_record_name=True),
        )
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"delete block: undecodable delete list ({exc})") from exc
    if stream.tell() != len(content):
        raise CorruptFileError("delete block: bytes after the delete list")
    keys = []
    for rec in datum["deleteRecordList"]:
        value, wrapper = _unwrap(rec["orderingVal"])
        keys.append(DeleteKey(rec["recordKey"] or "", rec["partitionPath"] or "", value, wrapper))
    return keys


# Checked in order: bool is an int and datetime is a date, so they come first.
_VALUE_WRAPPERS: tuple[tuple[type, str], ...] = (
    (bool, "BooleanWrapper"),
    (float, "DoubleWrapper"),
    (str, "StringWrapper"),
    (bytes, "BytesWrapper"),
    (Decimal, "DecimalWrapper"),
    (datetime, "TimestampMicrosWrapper"),
    (date, "DateWrapper"),
    (time, "TimeMicrosWrapper"),
)


def _wrapper_for_value(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return "IntWrapper" if -(2**31) <= value < 2**31 else "LongWrapper"
    for cls, name in _VALUE_WRAPPERS:
        if isinstance(value, cls):
            return name
    raise ValueError(f"no Hudi ordering value wrapper for {type(value).__name__} {value!r}")


def _wrap(value: Any, wrapper: OrderingWrapper) -> Any:
    """``value`` in fastavro's ``(record name, record)`` union notation."""
    if isinstance(value, tuple | list) or isinstance(wrapper, tuple):
        names = list(wrapper) if isinstance(wrapper, tuple) else [None] * len(value)
        if len(names) != len(value):
            raise ValueError(f"ordering value {value!r} and wrappers {wrapper!r} differ in length")
        items = [None if v is None else _wrap(v, w) for v, w in zip(value, names, strict=True)]
        return (f"{_NS}.ArrayWrapper", {"wrappedValues": items})
    name = wrapper or _wrapper_for_value(value)
    if name not in WRAPPER_NAMES:
        raise ValueError(f"unknown ordering value wrapper {name!r}")
    if name in ("DateWrapper", "LocalDateWrapper") and isinstance(value, date):
        value = (value - _EPOCH_DATE).days
    elif name in ("TimestampMicrosWrapper", "LongWrapper") and isinstance(value, datetime):
        delta = (value if value.tzinfo else value.replace(tzinfo=UTC)) - _EPOCH  # naive = UTC
        value = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    elif name == "DecimalWrapper" and not isinstance(value, Decimal):
        value = Decimal(str(value))
    elif name in ("FloatWrapper", "DoubleWrapper"):
        value = float(value)
    return (f"{_NS}.{name}", {"value": value})


def _unwrap(wrapped: Any) -> tuple[Any, OrderingWrapper]:
    """``(value, wrapper)`` of a decoded orderingVal (fastavro ``return_record_name`` form)."""
    if wrapped is None:
        return None, None
    full_name, record = wrapped
    name = full_name.rsplit(".", 1)[-1]
    if name == "ArrayWrapper":
        pairs = [_unwrap(item) for item in record["wrappedValues"] or []]
        names = tuple(w if isinstance(w, str) else None for _, w in pairs)
        return tuple(v for v, _ in pairs), names
    value = record["value"]
    if name in ("DateWrapper", "LocalDateWrapper"):
        value = _EPOCH_DATE + timedelta(days=value)
    elif name == "TimestampMicrosWrapper":
        value = _EPOCH + timedelta(microseconds=value)
    return value, name
