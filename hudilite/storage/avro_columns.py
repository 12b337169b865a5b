"""Column-wise decoding of the Avro datums of a log data block, for flat record schemas.

A merge-on-read read decodes every record of every log block; fastavro decodes one datum
at a time into a dict (about 10 microseconds for a 15-field row), which made Avro decoding
most of a merge-on-read scan. Hudi rows are mostly flat: top-level fields of primitive
types, each optionally in a ``["null", T]`` union. For such a schema the datums can be
decoded one *field* at a time across all records with numpy: every record's cursor moves
through the field at once (a varint's length is found from its continuation bits, a string's
bytes are gathered by one index array), so the cost is a few array operations per field.

:func:`decode_flat` does that and returns None for any schema it does not cover (nested
records, arrays, maps, enums, fixed, decimals, named-type references); the caller then
decodes with fastavro. Damage is reported like fastavro's: a varint longer than ten bytes,
a union branch outside the union, a record running past its length or not ending exactly
at it, or a string that is not UTF-8 raise :class:`~hudilite.errors.CorruptFileError`.

The Avro binary encoding (Avro 1.11 specification, "Binary Encoding"): ``int``/``long`` are
zig-zag varints; ``float``/``double`` 4/8 bytes little-endian; ``boolean`` one byte;
``string``/``bytes`` a ``long`` length then the bytes; a union a ``long`` branch index then
the branch's value; ``null`` nothing.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from hudilite.errors import CorruptFileError

_INT32 = struct.Struct(">i")
_PAD = 16  # zero bytes after the content, so fixed-width gathers never index past it
_MAX_VARINT = 10

#: Avro primitive -> the Arrow type its values decode to before the column's own type.
_PHYSICAL: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}
#: Logical types stored as the Avro int/long itself (the Arrow column has the same width).
INTEGER_LOGICAL = frozenset(
    {"date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros",
     "local-timestamp-millis", "local-timestamp-micros"}
)  # fmt: skip


@dataclass(frozen=True)
class _Field:
    """One top-level field: its primitive, and which union branch is null (None: no union)."""

    primitive: str
    null_branch: int | None


@lru_cache(maxsize=64)
def flat_plan(avro_schema_json: str) -> tuple[_Field, ...] | None:
    """The fields of a flat record schema, or None when the schema is not flat."""
    try:
        spec = json.loads(avro_schema_json)
    except ValueError:
        return None
    if not isinstance(spec, dict) or spec.get("type") != "record":
        return None
    out = []
    for fld in spec.get("fields", []):
        parsed = _field(fld.get("type"))
        if parsed is None:
            return None
        out.append(parsed)
    return tuple(out)


def _field(avro: object) -> _Field | None:
    if isinstance(avro, list):
        if len(avro) != 2 or "null" not in avro:
            return None
        null_branch = avro.index("null")
        other = _primitive(avro[1 - null_branch])
        return None if other is None or other == "null" else _Field(other, null_branch)
    primitive = _primitive(avro)
    return None if primitive is None else _Field(primitive, None)


def _primitive(avro: object) -> str | None:
    if isinstance(avro, dict):
        logical, kind = avro.get("logicalType"), avro.get("type")
        if logical is None or (logical in INTEGER_LOGICAL and kind in ("int", "long")):
            avro = kind
        else:
            return None  # decimals, uuids and the like keep fastavro's conversion
    if isinstance(avro, str) and (avro in _PHYSICAL or avro == "null"):
        return avro
    return None


def record_bounds(content: bytes, count: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of ``count`` length-prefixed datums from offset ``first``."""
    starts = np.empty(count, dtype=np.int64)
    pos, size, unpack = first, len(content), _INT32.unpack_from
    try:
        for i in range(count):
            (length,) = unpack(content, pos)
            pos += 4
            if length < 0 or pos + length > size:
                raise CorruptFileError("avro data block: a record runs past the content")
            starts[i] = pos
            pos += length
    except struct.error as exc:
        raise CorruptFileError("avro data block: a record runs past the content") from exc
    if pos != size:
        raise CorruptFileError(f"avro data block: {size - pos} bytes after the records")
    ends = np.empty(count, dtype=np.int64)
    if count:
        ends[:-1] = starts[1:] - 4
        ends[-1] = pos
    return starts, ends


def decode_flat(
    content: bytes, starts: np.ndarray, ends: np.ndarray, avro_schema_json: str, schema: pa.Schema
) -> pa.Table | None:
    """The datums at ``starts``..``ends`` of ``content`` as a table of ``schema`` (the Arrow
    schema of the Avro one), or None when the Avro schema is not flat."""
    plan = flat_plan(avro_schema_json)
    if plan is None or len(plan) != len(schema):
        return None
    buf = np.frombuffer(content + bytes(_PAD), dtype=np.uint8)
    cursor = _Cursor(buf, starts.copy(), ends)
    arrays = []
    for fld, target in zip(plan, schema, strict=True):
        arr = cursor.field(fld)
        arrays.append(_as_type(arr, target.type))
    cursor.check_ends()
    return pa.Table.from_arrays(arrays, schema=schema)


def _as_type(arr: pa.Array, t: pa.DataType) -> pa.Array:
    if arr.type == t:
        return arr
    if (
        pa.types.is_integer(arr.type)
        and (pa.types.is_temporal(t))
        and t.bit_width == arr.type.bit_width
    ):
        return arr.view(t)
    return arr.cast(t)


class _Cursor:
    """The read position of every record, advanced one field at a time."""

    def __init__(self, buf: np.ndarray, pos: np.ndarray, ends: np.ndarray) -> None:
        self.buf, self.pos, self.ends = buf, pos, ends

    def field(self, fld: _Field) -> pa.Array:
        n = len(self.pos)
        if fld.null_branch is None:
            return self._values(fld.primitive, np.arange(n))
        branch = self._long(np.arange(n))
        if ((branch != 0) & (branch != 1)).any():
            raise CorruptFileError("avro data block: a union branch index is out of range")
        present = np.nonzero(branch != fld.null_branch)[0]
        values = self._values(fld.primitive, present)
        if len(present) == n:
            return values
        mask = np.ones(n, dtype=bool)
        mask[present] = False
        indices = np.full(n, -1, dtype=np.int64)
        indices[present] = np.arange(len(present))
        # take() with null indices gives nulls where the union held null
        return values.take(pa.array(indices, mask=mask))

    def check_ends(self) -> None:
        if (self.pos != self.ends).any():
            raise CorruptFileError("avro data block: a record's length is wrong")

    def _advance(self, rows: np.ndarray, by: np.ndarray | int) -> None:
        self.pos[rows] += by
        if (self.pos[rows] > self.ends[rows]).any():
            raise CorruptFileError("avro data block: a record's length is wrong")

    def _values(self, primitive: str, rows: np.ndarray) -> pa.Array:
        if primitive == "null":
            return pa.nulls(len(rows))
        if primitive in ("int", "long"):
            values = self._long(rows)
            if primitive == "long":
                return pa.array(values)
            if ((values < -(2**31)) | (values >= 2**31)).any():
                raise CorruptFileError("avro data block: an int out of the 32-bit range")
            return pa.array(values.astype(np.int32))
        if primitive in ("float", "double"):
            width = 4 if primitive == "float" else 8
            raw = self._fixed(rows, width)
            return pa.array(raw.view("<f4" if width == 4 else "<f8").reshape(-1))
        if primitive == "boolean":
            raw = self._fixed(rows, 1).reshape(-1)
            return pa.array(raw == 1)  # Java's BinaryDecoder: true only for 1
        lengths = self._long(rows)
        if (lengths < 0).any():
            raise CorruptFileError("avro data block: a negative string length")
        return self._ragged(rows, lengths, pa.string() if primitive == "string" else pa.binary())

    def _fixed(self, rows: np.ndarray, width: int) -> np.ndarray:
        start = self.pos[rows]
        raw = self.buf[start[:, None] + np.arange(width)]
        self._advance(rows, width)
        return np.ascontiguousarray(raw)

    def _long(self, rows: np.ndarray) -> np.ndarray:
        """Zig-zag varints at the cursors of ``rows``."""
        start = self.pos[rows]
        raw = np.zeros(len(start), dtype=np.uint64)
        length = np.ones(len(start), dtype=np.int64)
        # Byte k of every varint still going, until none is: most are one or two bytes.
        going = np.arange(len(start))
        for k in range(_MAX_VARINT):
            byte = self.buf[start[going] + k].astype(np.uint64)
            raw[going] |= (byte & np.uint64(0x7F)) << np.uint64(7 * k)
            going = going[(byte & np.uint64(0x80)) != 0]
            if not len(going):
                break
            length[going] += 1
        else:
            raise CorruptFileError("avro data block: a varint longer than ten bytes")
        value = (raw >> np.uint64(1)).astype(np.int64) ^ -(raw & np.uint64(1)).astype(np.int64)
        self._advance(rows, length)
        return value

    def _ragged(self, rows: np.ndarray, lengths: np.ndarray, t: pa.DataType) -> pa.Array:
        start = self.pos[rows]
        self._advance(rows, lengths)
        total = int(lengths.sum())
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if total:
            index = np.repeat(start - offsets[:-1], lengths) + np.arange(total)
            data = self.buf[index]
        else:
            data = np.zeros(0, dtype=np.uint8)
        large = pa.large_string() if t == pa.string() else pa.large_binary()
        arr = pa.Array.from_buffers(
            large, len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())]
        )
        if t == pa.string():
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise CorruptFileError(f"avro data block: a string is not UTF-8 ({exc})") from exc
        return arr.cast(t)
