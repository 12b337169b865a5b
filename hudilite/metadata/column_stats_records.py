"""The ``column_stats`` partition's records: ``HoodieMetadataRecord`` of type 3.

Hudi 1.x keeps one record per (data file, indexed column) in the metadata table's
``column_stats`` partition (``HoodieMetadataColumnStats`` in ``HoodieMetadata.avsc``):

* key = ``ColumnIndexID + PartitionIndexID + FileIndexID``, each base64 (with padding) of a
  hash: the column name and the partition path (``.`` for a non-partitioned table) by
  XXHash64 with seed ``0xdabadaba`` (a Java int, so sign-extended to a long), the file name by
  MD5 (``HoodieMetadataPayload.getColumnStatsIndexKey``, ``HashID``);
* the file group: ``col-stats-000N-0`` with N the Java ``String.hashCode`` of the key modulo
  the partition's file group count (2 by default; ``mapRecordKeyToFileGroupIndex``);
* ``minValue``/``maxValue`` wrapped in the schema's ``*Wrapper`` records, chosen by the value
  type (``ValueType``: its ordinal and, for decimals, ``"precision,scale"`` in
  ``valueType``): decimals are the unscaled value's minimal two's-complement bytes
  (``BytesWrapper``), dates days (``IntWrapper``), timestamps longs in their unit;
* ``valueCount``, ``nullCount``, ``totalSize`` and ``totalUncompressedSize`` (0 for log
  files), ``isDeleted`` (a tombstone: the file was deleted), ``isTightBound`` false.

The ``partition_stats`` partition holds the same record (type 6) per (data partition, column):
the aggregate of the partition's files, ``fileName`` the partition path, key the column's and
the partition's hashes, ``isTightBound`` true (a newer record replaces an older one).

Two records of one key merge as ``HoodieMetadataPayload.mergeColumnStatsRecords`` does
(:func:`merge`): a tombstone on either side makes the newer record win, else min of the
minimums, max of the maximums and sums of the counts. Records are stored in HFiles keyed by
their key, the value the Avro datum with ``key`` blanked (as the files partition's).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache
from typing import Any, cast

import fastavro
import xxhash

from hudilite.errors import CorruptFileError
from hudilite.metadata import records as rec

#: ``HoodieMetadataPayload`` record types of the column_stats and partition_stats partitions.
COLUMN_STATS_TYPE = 3
PARTITION_STATS_TYPE = 6
#: ``HashID``'s seed: the Java int 0xdabadaba passed as a long (sign-extended).
_SEED = 0xFFFFFFFFDABADABA
_NS = "org.apache.hudi.avro.model."

# ``org.apache.hudi.stats.ValueType`` ordinals.
V1, NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, FIXED, DECIMAL = range(11)
UUID, DATE, TIME_MILLIS, TIME_MICROS = 11, 12, 13, 14
TIMESTAMP_MILLIS, TIMESTAMP_MICROS, TIMESTAMP_NANOS = 15, 16, 17
LOCAL_TIMESTAMP_MILLIS, LOCAL_TIMESTAMP_MICROS, LOCAL_TIMESTAMP_NANOS = 18, 19, 20

#: The wrapper record each value type is stored in (``primitiveWrapperType``).
WRAPPERS: dict[int, str] = {
    BOOLEAN: "BooleanWrapper",
    INT: "IntWrapper",
    LONG: "LongWrapper",
    FLOAT: "FloatWrapper",
    DOUBLE: "DoubleWrapper",
    STRING: "StringWrapper",
    BYTES: "BytesWrapper",
    FIXED: "BytesWrapper",
    DECIMAL: "BytesWrapper",
    UUID: "StringWrapper",
    DATE: "IntWrapper",
    TIME_MILLIS: "IntWrapper",
    TIME_MICROS: "LongWrapper",
    TIMESTAMP_MILLIS: "LongWrapper",
    TIMESTAMP_MICROS: "LongWrapper",
    TIMESTAMP_NANOS: "LongWrapper",
    LOCAL_TIMESTAMP_MILLIS: "LongWrapper",
    LOCAL_TIMESTAMP_MICROS: "LongWrapper",
    LOCAL_TIMESTAMP_NANOS: "LongWrapper",
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash64_id(text: str) -> str:
    """``HashID.hash(text, BITS_64)`` as base64: XXHash64 of the UTF-8 bytes, big-endian."""
    return _b64(struct.pack(">Q", xxhash.xxh64_intdigest(text.encode("utf-8"), seed=_SEED)))


def file_id_hash(file_name: str) -> str:
    """``FileIndexID``: MD5 of the file name, as base64."""
    return _b64(hashlib.md5(file_name.encode("utf-8"), usedforsecurity=False).digest())


def stats_key(partition: str, file_name: str, column: str) -> str:
    """The record key of ``column``'s statistics of ``file_name`` in data ``partition``
    (``getColumnStatsIndexKey``)."""
    return hash64_id(column) + hash64_id(rec.partition_id(partition)) + file_id_hash(file_name)


def file_group_index(key: str, count: int) -> int:
    """The file group of ``key`` among ``count`` (``mapRecordKeyToFileGroupIndex``)."""
    h = rec.java_string_hash(key)
    return abs(h) % count if h != -(1 << 31) else 0


@dataclass(frozen=True)
class ColumnStats:
    """One ``HoodieMetadataColumnStats`` record (see the module docstring). ``min``/``max``
    are the wrapped values (bool, int, float, str or bytes), None when unknown."""

    partition: str
    file_name: str
    column: str
    min: Any = None
    max: Any = None
    value_count: int = 0
    null_count: int = 0
    total_size: int = 0
    total_uncompressed_size: int = 0
    deleted: bool = False
    value_type: int | None = None
    additional_info: str | None = None
    #: the wrapper record of min/max when value_type does not say (Hudi's V1 records)
    wrapper: str | None = None
    #: the key as read from an HFile (a record holds only the partition's hash)
    stored_key: str | None = None
    #: COLUMN_STATS_TYPE, or PARTITION_STATS_TYPE for a partition's aggregate (file_name is
    #: then the partition path)
    record_type: int = COLUMN_STATS_TYPE
    #: ``isTightBound``: the record replaces the older one instead of widening it
    tight: bool = False

    @property
    def key(self) -> str:
        """The record key (a partition's aggregate: column and partition hashes only)."""
        if self.stored_key:
            return self.stored_key
        if self.record_type == PARTITION_STATS_TYPE:
            return hash64_id(self.column) + hash64_id(rec.partition_id(self.partition))
        return stats_key(self.partition, self.file_name, self.column)

    def tombstone(self) -> ColumnStats:
        """The record deleting this file's statistics of this column."""
        return ColumnStats(
            self.partition,
            self.file_name,
            self.column,
            deleted=True,
            stored_key=self.stored_key,
            record_type=self.record_type,
        )

    def value(self, raw: Any) -> Any:
        """A min/max value as a comparable Python value: decimals as :class:`Decimal`, the
        rest as stored (dates as days, timestamps as integers of their unit)."""
        if raw is None:
            return None
        if self.value_type == DECIMAL and isinstance(raw, bytes):
            scale = int((self.additional_info or "0,0").split(",")[1])
            return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale)
        return raw


def decimal_bytes(unscaled: int) -> bytes:
    """Java ``BigInteger.toByteArray``: minimal big-endian two's complement."""
    length = (unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()) // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def merge(older: ColumnStats, newer: ColumnStats) -> ColumnStats:
    """``newer`` on top of ``older`` (``mergeColumnStatsRecords``)."""
    if older.deleted or newer.deleted or newer.tight:
        return newer

    def pick(a: Any, b: Any, lower: bool) -> Any:
        if a is None or b is None:
            return b if a is None else a
        va, vb = older.value(a), newer.value(b)
        return (a if va <= vb else b) if lower else (a if va >= vb else b)

    return replace(
        newer,
        min=pick(older.min, newer.min, True),
        max=pick(older.max, newer.max, False),
        value_count=older.value_count + newer.value_count,
        null_count=older.null_count + newer.null_count,
        total_size=older.total_size + newer.total_size,
        total_uncompressed_size=older.total_uncompressed_size + newer.total_uncompressed_size,
    )


def merge_all(batches: Iterable[Iterable[ColumnStats]]) -> dict[str, ColumnStats]:
    """The merged record of every key over ``batches`` (base file first, then log blocks)."""
    out: dict[str, ColumnStats] = {}
    for batch in batches:
        for record in batch:
            key = record.key
            seen = out.get(key)
            out[key] = record if seen is None else merge(seen, record)
    return out


@cache
def _parsed() -> Any:
    return fastavro.parse_schema(json.loads(rec.schema_json()))


def _wrap(stats: ColumnStats, value: Any) -> Any:
    if value is None:
        return None
    name = WRAPPERS.get(stats.value_type or -1) or stats.wrapper
    if name is None:
        raise ValueError(f"column stats of {stats.column!r}: no wrapper for {value!r}")
    return (_NS + name, {"value": value})


def to_avro(stats: ColumnStats, *, file_name: str | None = None) -> dict[str, Any]:
    """The Avro record (for fastavro) of ``stats``."""
    out: dict[str, Any] = dict.fromkeys(rec.META_FIELDS)
    out["_hoodie_file_name"] = file_name
    out["key"] = stats.key
    out["type"] = stats.record_type
    out["filesystemMetadata"] = None
    out.update(dict.fromkeys(rec.OTHER_PAYLOADS))
    value_type = None
    if stats.value_type is not None:
        value_type = {"typeOrdinal": stats.value_type, "additionalInfo": stats.additional_info}
    out["ColumnStatsMetadata"] = {
        "fileName": stats.file_name,
        "columnName": stats.column,
        "minValue": _wrap(stats, stats.min),
        "maxValue": _wrap(stats, stats.max),
        "valueCount": stats.value_count,
        "nullCount": stats.null_count,
        "totalSize": stats.total_size,
        "totalUncompressedSize": stats.total_uncompressed_size,
        "isDeleted": stats.deleted,
        "isTightBound": stats.tight,
        "valueType": value_type,
    }
    return out


def encode_datum(stats: ColumnStats, *, file_name: str | None = None) -> bytes:
    """The Avro datum of ``stats`` with ``key`` blanked (as stored in HFiles)."""
    value = to_avro(stats, file_name=file_name)
    value["key"] = ""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(), value)
    return out.getvalue()


def _unwrap(value: Any) -> tuple[Any, str | None]:
    if value is None:
        return None, None
    if isinstance(value, tuple):
        name, body = value
        return body["value"], str(name).rsplit(".", 1)[-1]
    return value["value"], None


def decode_datum(key: str, data: bytes) -> ColumnStats:
    """The record of an HFile entry (``key`` and its datum). The data partition is known by
    its hash in the key only: ``partition`` is left empty and the key kept."""
    stream = io.BytesIO(data)
    try:
        value = cast(
            dict[str, Any],
            fastavro.schemaless_reader(
                stream, _parsed(), None, return_record_name=True, return_record_name_override=True
            ),
        )
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"column_stats entry {key!r}: undecodable ({exc})") from exc
    meta = value.get("ColumnStatsMetadata")
    kind_of = value.get("type")
    if kind_of not in (COLUMN_STATS_TYPE, PARTITION_STATS_TYPE) or not isinstance(meta, dict):
        raise CorruptFileError(
            f"column_stats entry {key!r} is of type {value.get('type')!r}, not column stats"
        )
    low, wrapper = _unwrap(meta.get("minValue"))
    high, wrapper_hi = _unwrap(meta.get("maxValue"))
    kind = meta.get("valueType") or {}
    return ColumnStats(
        partition="",
        file_name=str(meta.get("fileName") or ""),
        column=str(meta.get("columnName") or ""),
        min=low,
        max=high,
        value_count=int(meta.get("valueCount") or 0),
        null_count=int(meta.get("nullCount") or 0),
        total_size=int(meta.get("totalSize") or 0),
        total_uncompressed_size=int(meta.get("totalUncompressedSize") or 0),
        deleted=bool(meta.get("isDeleted")),
        value_type=kind.get("typeOrdinal"),
        additional_info=kind.get("additionalInfo"),
        wrapper=wrapper or wrapper_hi,
        stored_key=key,
        record_type=int(kind_of),
        tight=bool(meta.get("isTightBound")),
    )
