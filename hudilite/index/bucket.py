"""Bucket index: a fixed number of file groups per partition, chosen by hashing the key.

Compatible with Hudi's ``SIMPLE`` bucket engine: the bucket of a record is
``(javaListHash(hashKeyValues) & 0x7fffffff) % numBuckets`` and a bucket's file
id starts with the bucket number as eight digits, so Hudi writers and
hudilite agree on where a key goes.

These functions are the reference: the Spark write computes the same buckets and file ids
in the JVM, as SQL expressions (:mod:`hudilite.spark.bucket_expr`), and its tests compare
the two.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import ConfigError

_BUCKET_PREFIX = re.compile(r"^(\d{8})-")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit overflow)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_list_hash(values: Iterable[str | None]) -> int:
    """Java's ``List<String>.hashCode`` (nulls hash to 0), as a signed-agnostic 32-bit value."""
    h = 1
    for v in values:
        h = (31 * h + (java_string_hash(v) if v is not None else 0)) & 0xFFFFFFFF
    return h


def hash_key_values(record_key: str, index_fields: Sequence[str]) -> list[str | None]:
    """The values a bucket is hashed from: the key itself, or the named parts of a complex key."""
    if ":" not in record_key or len(index_fields) == 0:
        return [record_key]
    parts: dict[str, str | None] = {}
    for piece in record_key.split(","):
        name, _, value = piece.partition(":")
        parts[name] = None if value == "__null__" else value
    if len(index_fields) == 1 and index_fields[0] not in parts:
        return [record_key]
    return [parts.get(f) for f in index_fields]


def hash_fields(record_key_fields: Sequence[str], configured: Sequence[str] | None) -> list[str]:
    """The fields a bucket is hashed from: ``hoodie.bucket.index.hash.field`` (``configured``)
    or, unset, the record key fields. Hudi hashes only the configured fields' parts of a
    complex key, so a table whose writers disagree on them would store a key in two
    buckets; they must be record key fields (``ConfigError`` naming the others)."""
    if not configured:
        return list(record_key_fields)
    unknown = [f for f in configured if f not in record_key_fields]
    if unknown:
        raise ConfigError(
            f"hoodie.bucket.index.hash.field {','.join(configured)!r} names "
            f"{', '.join(repr(f) for f in unknown)}, not a record key field "
            f"({', '.join(record_key_fields)})"
        )
    return list(configured)


def bucket_id(record_key: str, num_buckets: int, index_fields: Sequence[str] = ()) -> int:
    """The bucket of one record key."""
    h = java_list_hash(hash_key_values(record_key, index_fields))
    return (h & 0x7FFFFFFF) % num_buckets


def bucket_ids(
    keys: pa.Array | pa.ChunkedArray, num_buckets: int, index_fields: Sequence[str] = ()
) -> pa.Array:
    """Buckets of a column of record keys (int32)."""
    cache: dict[str, int] = {}
    out = []
    for k in keys.to_pylist():
        b = cache.get(k)
        if b is None:
            b = bucket_id(k, num_buckets, index_fields)
            if len(cache) < 1 << 16:
                cache[k] = b
        out.append(b)
    return pa.array(out, pa.int32())


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket number encoded at the start of a bucket-index file id, if any."""
    m = _BUCKET_PREFIX.match(file_id)
    return int(m.group(1)) if m else None


def new_bucket_file_id(bucket: int) -> str:
    """A fresh file id for ``bucket``: a UUID whose first eight characters are the bucket."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def bucket_file_ids(
    partitions: Sequence[str], existing: Iterable[tuple[str, str]], num_buckets: int
) -> list[str]:
    """The file id of (partition ``i``, bucket ``b``) at ``i * num_buckets + b``.

    An existing bucket's file group (from ``existing``, ``(partition, file id)`` pairs of
    the latest slices), else a fresh one.
    """
    known: dict[tuple[str, int], str] = {}
    for partition, file_id in existing:
        b = bucket_of_file_id(file_id)
        if b is not None:
            known[(partition, b)] = file_id
    return [
        known.get((p, b)) or new_bucket_file_id(b) for p in partitions for b in range(num_buckets)
    ]


def bucket_file_id_column(
    keys: pa.Array | pa.ChunkedArray,
    paths: pa.Array | pa.ChunkedArray,
    partitions: pa.Array,
    file_ids: pa.Array,
    num_buckets: int,
    index_fields: Sequence[str] = (),
) -> pa.Array:
    """Each record's file id under the bucket index: its key's bucket in its partition.

    ``partitions`` and ``file_ids`` are laid out as :func:`bucket_file_ids` returns them;
    a record whose partition is not among ``partitions`` gets null.
    """
    ids = bucket_ids(keys, num_buckets, index_fields)
    slot = pc.add(
        pc.multiply(pc.index_in(paths, value_set=partitions).cast(pa.int64()), num_buckets),
        ids.cast(pa.int64()),
    )
    return pc.take(file_ids, slot)
