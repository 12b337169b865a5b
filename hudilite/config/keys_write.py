"""Write keys: file sizing, de-duplication, missing columns, log blocks, conflict checks."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_float,
    parse_int,
    parse_size,
)
from hudilite.config.registry import _key

SMALL_FILE_LIMIT = _key(
    "hoodie.parquet.small.file.limit",
    104857600,
    "Base files below this size take new inserts.",
    parse=parse_size,
)
MAX_FILE_SIZE = _key(
    "hoodie.parquet.max.file.size", 125829120, "Target base file size.", parse=parse_size
)
RECORD_SIZE_ESTIMATE = _key(
    "hoodie.copyonwrite.record.size.estimate",
    1024,
    "Bytes per record assumed before any commit exists.",
    parse=parse_size,
)

RECORD_SIZE_ESTIMATION_THRESHOLD = _key(
    "hoodie.record.size.estimation.threshold",
    1.0,
    "A commit informs the record size estimate only when it wrote more than this times "
    "hoodie.parquet.small.file.limit bytes.",
    parse=parse_float,
)
RECORD_SIZE_ESTIMATOR_MAX_COMMITS = _key(
    "hoodie.record.size.estimator.max.commits",
    5,
    "How many recent commits the record size estimate looks at.",
    parse=parse_int,
)
RECORD_SIZE_ESTIMATOR_METADATA_SIZE = _key(
    "hoodie.record.size.estimator.average.metadata.size",
    0,
    "Bytes of file metadata (footer, bloom filter) subtracted per file before estimating.",
    parse=parse_size,
)

KEY_CONFLICT_CHECK = _key(
    "hoodie.hudilite.write.conflict.check.keys",
    True,
    "Upserts fail with ConflictError when a concurrent upsert inserted the same new keys "
    "(file-group conflict checks alone would keep both copies); see hudilite.write.conflict.",
    parse=parse_bool,
)
NULL_ORDERING_VALUE = _key(
    "hoodie.hudilite.write.null.ordering.value",
    "warn",
    "What an upsert does with incoming records whose ordering (precombine) field is null or "
    "missing from the input: warn (write them, as Hudi 1.x does, with a warning naming the "
    "field and how many records; under event-time ordering a null sorts lowest, so such a "
    "record does not replace a stored one with a value), fail (refuse the write naming the "
    "field and a record key, as Hudi 0.x's payloads do: 'Ordering value is null') or allow "
    "(write them without a word).",
    parse=choice("warn", "fail", "allow", upper=False),
)
SQL_CONFLICT_RETRIES = _key(
    "hoodie.hudilite.sql.conflict.retries",
    0,
    "SQL UPDATE, DELETE, MERGE INTO and an INSERT whose query reads its target table: when "
    "the write fails with ConflictError because another commit completed after the snapshot "
    "it read, run the statement again on a fresh snapshot, up to this many times (0: fail "
    "at once). The last failure names the other commit. A session SET or a table property.",
    aliases=("hudilite.sql.conflict.retries",),
    parse=parse_int,
)
COMBINE_BEFORE_INSERT = _key(
    "hoodie.combine.before.insert", False, "De-duplicate inserts by key.", parse=parse_bool
)
COMBINE_BEFORE_UPSERT = _key(
    "hoodie.combine.before.upsert",
    True,
    "De-duplicate upserts by key.",
    parse=parse_bool,
    unsupported="hudilite always de-duplicates upserts by key (the merge rule decides)",
    ignore_values=("true",),
)
SET_NULL_FOR_MISSING_COLUMNS = _key(
    "hoodie.write.set.null.for.missing.columns",
    False,
    "Columns a write omits become null (record key and partition fields stay required).",
    parse=parse_bool,
)
OPTIONAL_COLUMNS = _key(
    "hoodie.hudilite.optional.columns",
    None,
    "Columns a write may omit (null); add_columns records the columns it adds here.",
    parse=parse_fields,
)
# INSERT INTO as Hudi 0.14+/1.x does it (Hudi's DataSourceWriteOptions / HoodieSparkSqlWriter).
INSERT_INTO_OPERATION = _key(
    "hoodie.spark.sql.insert.into.operation",
    "insert",
    "Operation of SQL INSERT INTO: insert, upsert or bulk_insert. Unset, INSERT INTO "
    "upserts a table with a record key and an ordering field and inserts (keeping "
    "duplicate keys) into any other, as Hudi 0.14+ does; hoodie.datasource.write.operation "
    "wins over it.",
    parse=choice("insert", "upsert", "bulk_insert", upper=False),
)
INSERT_DUP_POLICY = _key(
    "hoodie.datasource.insert.dup.policy",
    "none",
    "What an insert does with incoming records whose key exists: none (keep both), drop "
    "(drop the incoming record) or fail (error naming the key).",
    parse=choice("none", "drop", "fail", upper=False),
)
INSERT_DROP_DUPLICATES = _key(
    "hoodie.datasource.write.insert.drop.duplicates",
    False,
    "Drop inserted records whose key already exists (true = dup policy drop).",
    aliases=("insert.drop.duplicates", "write.insert.drop.duplicates"),
    parse=parse_bool,
    deprecated="use hoodie.datasource.insert.dup.policy=drop",
    feeds=((INSERT_DUP_POLICY, lambda v: "drop" if parse_bool(v) else None),),
)


def _insert_mode_dup_policy(value: str) -> str | None:
    mode = choice("upsert", "strict", "non-strict", upper=False)(value)
    return {"strict": "fail", "non-strict": "none"}.get(mode)


# SQL INSERT INTO reads this key itself (Hudi's deduceOperation needs the table's record key
# and ordering field: hudilite.sqlext.insert_rule); the feed serves Table.write.
SQL_INSERT_MODE = _key(
    "hoodie.sql.insert.mode",
    None,
    "Deprecated INSERT INTO mode, used while hoodie.spark.sql.insert.into.operation is "
    "unset: upsert and strict upsert a table with a record key and an ordering field "
    "(strict refusing keys a copy-on-write table holds), non-strict inserts.",
    parse=choice("upsert", "strict", "non-strict", upper=False),
    deprecated="use hoodie.spark.sql.insert.into.operation and hoodie.datasource.insert.dup.policy",
    feeds=((INSERT_DUP_POLICY, _insert_mode_dup_policy),),
)
LOG_BLOCK_FORMAT = _key(
    "hoodie.logfile.data.block.format",
    "avro",
    "Data block format of MOR log files: avro or parquet.",
    parse=choice("avro", "parquet", upper=False),
)

# hudilite's own switches (not Hudi keys).
OPTIONS_STRICT = _key(
    "hudilite.options.strict",
    False,
    "hudilite: an unknown or unsupported option key is an error (ConfigError) instead of a "
    "warning.",
    parse=parse_bool,
)
FAIL_POINT = _key(
    "hudilite.internal.fail.point",
    None,
    "hudilite tests: fail a write or table service at a named point (see hudilite.failpoints).",
    internal=True,
)
NATIVE_KEYS = _key(
    "hudilite.keygen.native",
    True,
    "hudilite: compute record keys with Spark expressions where possible (false: always the "
    "Arrow key generator).",
    parse=parse_bool,
    internal=True,
)
LOCAL_WRITE_MAX_ROWS = _key(
    "hoodie.hudilite.write.local.max.rows",
    10000,
    "An upsert, insert or delete of at most this many records runs in the driver "
    "with pyarrow once its input is computed (one Spark job instead of five to nine); 0 "
    "always runs writes as Spark jobs. Bulk inserts, overwrites and global indexes always "
    "run as Spark jobs.",
    parse=parse_int,
)
LOCAL_WRITE_MAX_FILE_GROUPS = _key(
    "hoodie.hudilite.write.local.max.file.groups",
    16,
    "A write small enough for the driver (hoodie.hudilite.write.local.max.rows) still runs "
    "its index lookup and file writes as Spark tasks when it would read or rewrite more than "
    "this many stored file groups: more files than the driver should do alone. A SIMPLE or "
    "BLOOM index lookup reads every file group of the partitions the records touch; an "
    "insert rewrites the small files it packs into, a BUCKET-index write its records' "
    "buckets.",
    parse=parse_int,
)
OVERWRITE_PARTITIONS = _key(
    "hudilite.overwrite.partitions",
    None,
    "hudilite SQL: JSON list of the partition paths an INSERT OVERWRITE ... PARTITION "
    "replaces (set by the SQL layer).",
    internal=True,
)
STREAMING_CHECKPOINT_IDENTIFIER = _key(
    "hoodie.datasource.write.streaming.checkpoint.identifier",
    "default_single_writer",
    "Streaming writes: the identifier under which each commit records its micro-batch id "
    "(a replayed batch is skipped).",
)
STREAMING_RETRY_COUNT = _key(
    "hoodie.datasource.write.streaming.retry.count",
    3,
    "Streaming writes: attempts at a micro-batch whose write failed (each failed attempt is "
    "rolled back) before the query fails.",
    parse=parse_int,
)
STREAMING_RETRY_INTERVAL_MS = _key(
    "hoodie.datasource.write.streaming.retry.interval.ms",
    2000,
    "Streaming writes: wait before the first retry of a failed micro-batch, doubled after "
    "each further failure.",
    parse=parse_int,
)
