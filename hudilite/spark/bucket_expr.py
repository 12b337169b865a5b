"""The bucket index as Spark SQL expressions: every record's bucket and file group in the JVM.

The same computation as :mod:`hudilite.index.bucket` (its Python functions are the
reference; the tests compare the two on random keys), as column expressions, so tagging
records with their file group costs no pass through Python workers:

* Java's ``String.hashCode`` is Spark's ``java_method('java.util.Objects', 'hashCode', s)``
  (a reflection call on the JVM string: UTF-16 code units, like Java; ``0`` for null), a
  decimal string cast to ``BIGINT``.
* ``List.hashCode`` folds ``h = 31 * h + hash`` from ``h = 1``, each step wrapped to 32 bits.
  All arithmetic is ``BIGINT`` on values kept in ``[0, 2^32)`` (``& 4294967295``), so
  ``31 * h`` cannot overflow and ANSI mode has nothing to raise on; the low 31 bits, which is
  all the bucket uses, are Java's.
* :func:`hudilite.index.bucket.hash_key_values` on a complex key (``field:value,...``) is
  ``split`` on ``,``, each piece's name before its first ``:`` and value after it (``''``
  without one), the last piece of each name winning (a Python ``dict`` built in order),
  ``__null__`` meaning null; a key without ``:``, and a key whose one index field is not
  among its pieces, hash as the whole key.

The (partition, bucket) -> file id table (:func:`hudilite.index.bucket.bucket_file_ids`) is
a literal array when small (no job, no join), else a broadcast join with a DataFrame of its
rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from hudilite.schema import FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL

_MASK32 = 0xFFFFFFFF
_MASK31 = 0x7FFFFFFF
_NULL_VALUE = "__null__"  # a complex key's null part (hash_key_values' None)
#: Up to this many (partition, bucket) slots, and partitions, the file ids are a literal
#: array in the plan (the partition's offset found by a linear ``array_position``); beyond,
#: a broadcast join. A literal costs no job; a join's broadcast is built by one.
LITERAL_SLOTS = 4096
LITERAL_PARTITIONS = 64
_BUCKET = "_hl_bucket"
_JOIN_PARTITION = "_hl_b_pp"
_JOIN_BUCKET = "_hl_b_b"
_JOIN_FILE_ID = "_hl_b_fid"


def java_string_hash(value: Column) -> Column:
    """Java's ``String.hashCode`` of a string column as a ``BIGINT`` in ``[0, 2^32)``
    (:func:`hudilite.index.bucket.java_string_hash`); ``0`` for null."""
    signed = F.java_method(F.lit("java.util.Objects"), F.lit("hashCode"), value).cast("bigint")
    return signed.bitwiseAND(F.lit(_MASK32))


def java_list_hash(values: Sequence[Column]) -> Column:
    """Java's ``List<String>.hashCode`` of string columns (nulls hash to 0), a ``BIGINT`` in
    ``[0, 2^32)`` (:func:`hudilite.index.bucket.java_list_hash`)."""
    h: Column = F.lit(1).cast("bigint")
    for v in values:
        h = (h * F.lit(31) + java_string_hash(v)).bitwiseAND(F.lit(_MASK32))
    return h


def _key_part(pieces: Column, field: str) -> Column:
    """The raw value of the last piece named ``field`` of a split complex key (the text after
    its first ``:``, ``''`` without one, as ``str.partition`` gives), null when no piece
    has that name. One pass over the pieces."""

    def step(found: Column, piece: Column) -> Column:
        value = F.coalesce(F.get(F.split(piece, ":", 2), 1), F.lit(""))
        return F.when(F.substring_index(piece, ":", 1) == F.lit(field), value).otherwise(found)

    return F.aggregate(pieces, F.lit(None).cast("string"), step)


def key_hash(key: Column, index_fields: Sequence[str] = ()) -> Column:
    """``java_list_hash(hash_key_values(key, index_fields))`` as a ``BIGINT`` column."""
    if not index_fields:
        return java_list_hash([key])
    complex_key = F.instr(key, ":") > 0
    pieces = F.split(key, ",", -1)
    if len(index_fields) == 1:
        raw = _key_part(pieces, index_fields[0])
        # One value either way: the part when the key names it, else the whole key.
        part = F.when(complex_key & raw.isNotNull(), F.nullif(raw, F.lit(_NULL_VALUE)))
        return java_list_hash([part.otherwise(key)])
    # (A part the key does not name is null, as is a __null__ one.)
    parts = [F.nullif(_key_part(pieces, f), F.lit(_NULL_VALUE)) for f in index_fields]
    return F.when(complex_key, java_list_hash(parts)).otherwise(java_list_hash([key]))


def bucket_id(key: Column, num_buckets: int, index_fields: Sequence[str] = ()) -> Column:
    """The bucket of each record key, ``INT`` (:func:`hudilite.index.bucket.bucket_id`)."""
    h = key_hash(key, index_fields).bitwiseAND(F.lit(_MASK31))
    return (h % F.lit(num_buckets)).cast("int")


def _string_array(values: Sequence[str]) -> Column:
    """A literal ``ARRAY<STRING>`` built from one JSON string literal (constant-folded at
    planning), not from one literal per element (a py4j call each)."""
    return F.from_json(F.lit(json.dumps(list(values))), "array<string>")


def with_bucket_file_ids(
    keyed: DataFrame,
    partitions: Sequence[str],
    file_ids: Sequence[str],
    num_buckets: int,
    index_fields: Sequence[str] = (),
) -> DataFrame:
    """``keyed`` with each record's file id under the bucket index (:data:`FILE_ID_COL`,
    appended): its key's bucket in its partition. ``file_ids`` is laid out as
    :func:`hudilite.index.bucket.bucket_file_ids` returns it (``partition index *
    num_buckets + bucket``); records whose partition is not in ``partitions`` are dropped.
    """
    bucket = bucket_id(F.col(RECORD_KEY_COL), num_buckets, index_fields)
    if len(file_ids) != len(partitions) * num_buckets:
        raise ValueError(
            f"{len(file_ids)} file ids for {len(partitions)} partitions x {num_buckets} buckets"
        )
    if not partitions:
        return keyed.limit(0).withColumn(FILE_ID_COL, F.lit(None).cast("string"))
    if len(file_ids) <= LITERAL_SLOTS and len(partitions) <= LITERAL_PARTITIONS:
        # Filtered on the partition (a cheap test, and the hash is computed for kept
        # records only): every file id in the array is set, so none is null after.
        pp = F.col(PARTITION_PATH_COL)
        ids = _string_array(file_ids)
        if len(partitions) == 1:
            kept = keyed.filter(pp == F.lit(partitions[0]))
            slot = bucket
        else:
            names = _string_array(partitions)
            kept = keyed.filter(F.array_contains(names, pp))
            offset = (F.array_position(names, pp) - 1) * F.lit(num_buckets)
            slot = (offset + bucket).cast("int")
        return kept.withColumn(FILE_ID_COL, F.get(ids, slot))
    # From Arrow (one transfer), not rows (many thousands of them for a large table).
    count = len(partitions)
    slots = pa.table(
        {
            _JOIN_PARTITION: pa.array(partitions, pa.string()).take(
                pa.array([i for i in range(count) for _ in range(num_buckets)], pa.int32())
            ),
            _JOIN_BUCKET: pa.array(list(range(num_buckets)) * count, pa.int32()),
            _JOIN_FILE_ID: pa.array(file_ids, pa.string()),
        }
    )
    table = keyed.sparkSession.createDataFrame(slots)
    tagged = keyed.withColumn(_BUCKET, bucket)
    joined = tagged.join(
        F.broadcast(table),
        (tagged[PARTITION_PATH_COL] == table[_JOIN_PARTITION])
        & (tagged[_BUCKET] == table[_JOIN_BUCKET]),
        "inner",
    )
    return joined.select(
        *[tagged[c] for c in keyed.columns], table[_JOIN_FILE_ID].alias(FILE_ID_COL)
    )
