"""Keys of Hudi's Flink connector (``FlinkOptions``) and common Hudi keys hudilite does not
implement.

Flink keys with a hudilite meaning are aliases of the Spark keys elsewhere in this package
(``table.type``, ``precombine.field`` / ``write.precombine.field``, ``payload.class``,
``write.operation``, ``index.type``, ``changelog.enabled``, ``compaction.*``, ``clean.*``,
``archive.*``, ``clustering.plan.*``...). Keys in a different unit (``write.parquet.max.file.size``
in MB) feed their Spark key through a conversion. The rest are declared here as unsupported,
with the reason, so giving one warns by name (an error with ``hudilite.options.strict``)
instead of passing unnoticed; a value that is what hudilite does anyway (for example
``hive_sync.enabled=false``) is accepted quietly.
"""

from __future__ import annotations

from typing import Any

from hudilite.config.keys_services import CLUSTERING_SMALL_FILE_LIMIT
from hudilite.config.keys_write import COMBINE_BEFORE_INSERT, MAX_FILE_SIZE
from hudilite.config.parsers import parse_bool, parse_int
from hudilite.config.registry import ConfigKey, _key

_MB = 1024 * 1024


def _mb_to_bytes(value: str) -> str:
    return str(int(float(str(value).strip()) * _MB))


def _unsupported(
    name: str,
    default: Any,
    doc: str,
    reason: str,
    *,
    scope: str = "write",
    ignore: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
) -> ConfigKey:
    return _key(
        name,
        default,
        doc,
        aliases=aliases,
        scope=scope,
        unsupported=reason,
        ignore_values=ignore,
    )


_STREAMING = "hudilite writes and reads in Spark batch jobs (no Flink streaming pipeline)"
_PARALLELISM = "Spark decides task parallelism (hudilite has no Flink operators to size)"
_MEMORY = "hudilite has no Flink task memory buffers to size"
_HIVE_SYNC = "hudilite keeps its own catalog and does not sync to a Hive metastore"
_STATE_INDEX = "hudilite has no Flink state index (hoodie.index.type decides)"
_METADATA = "hudilite maintains no metadata table"
_CDC = (
    "hudilite writes no CDC log files (changelog.enabled keeps every change in MOR logs; "
    "hoodie.datasource.query.incremental.format=cdc reads changes of any table without them)"
)

# ---- Flink keys hudilite implements in another unit -------------------------------------

FLINK_PARQUET_MAX_FILE_SIZE = _key(
    "write.parquet.max.file.size",
    120,
    "Flink: target base file size in MB (hoodie.parquet.max.file.size in bytes).",
    parse=parse_int,
    feeds=((MAX_FILE_SIZE, _mb_to_bytes),),
)
FLINK_CLUSTERING_SMALL_FILE_LIMIT = _key(
    "clustering.plan.strategy.small.file.limit",
    600,
    "Flink: clustering candidates are base files below this many MB "
    "(hoodie.clustering.plan.strategy.small.file.limit in bytes).",
    parse=parse_int,
    scope="service",
    feeds=((CLUSTERING_SMALL_FILE_LIMIT, _mb_to_bytes),),
)
FLINK_PRE_COMBINE = _key(
    "write.precombine",
    False,
    "Flink: de-duplicate incoming records by key before an insert (hoodie.combine.before."
    "insert); upserts are always de-duplicated.",
    parse=parse_bool,
    feeds=((COMBINE_BEFORE_INSERT, lambda v: "true" if parse_bool(v) else None),),
)

# ---- Flink keys hudilite does not implement --------------------------------------------

FLINK_PATH = _key(
    "path",
    None,
    "Table base path as a connector option (hudilite takes it as Table.create's path or "
    "SQL LOCATION; Spark's writer passes it too).",
    scope="table",
)
FLINK_CONNECTOR = _key(
    "connector", None, "Flink SQL connector name ('hudi'); nothing to configure.", scope="table"
)
FLINK_EVENT_TIME_FIELD = _unsupported(
    "eventtime.field", "ts", "Flink: field giving record freshness metrics.", _STREAMING
)
FLINK_RECORD_MERGER_IMPLS = _unsupported(
    "hoodie.datasource.write.record.merger.impls",
    None,
    "Hudi record merger implementation classes.",
    "hudilite merges with Hudi's built-in merge modes and payloads, not Java mergers",
    aliases=("record.merger.impls", "hoodie.write.record.merge.custom.implementation.classes"),
)
FLINK_PARTITION_DEFAULT_NAME = _unsupported(
    "partition.default_name",
    "__HIVE_DEFAULT_PARTITION__",
    "Partition path of a null or empty partition value.",
    "hudilite writes Hudi's default partition name and it cannot be changed",
    ignore=("__hive_default_partition__",),
)
FLINK_CDC_ENABLED = _unsupported(
    "hoodie.table.cdc.enabled",
    False,
    "Persist change data for CDC queries.",
    _CDC,
    scope="table",
    ignore=("false",),
    aliases=("cdc.enabled",),
)
FLINK_CDC_LOGGING_MODE = _unsupported(
    "hoodie.table.cdc.supplemental.logging.mode",
    "DATA_BEFORE_AFTER",
    "What CDC log files hold.",
    _CDC,
    scope="table",
    aliases=("cdc.supplemental.logging.mode",),
)
METADATA_ENABLED = _key(
    "hoodie.metadata.enable",
    False,
    "Keep Hudi's metadata table on a version 8 or 9 table (a table option, stored in the "
    "table's write options): its files partition is built from a listing when missing and "
    "updated by every action; partitions hudilite cannot keep (secondary indexes, ...) "
    "are dropped, column_stats, partition_stats and record_index too unless their "
    "hoodie.metadata.index.column.stats.enable, ...partition.stats.enable and "
    "hoodie.metadata.record.index.enable. Off (the default), any metadata table is removed "
    "before an action changes the table. A restore rebuilds the files partition from a "
    "listing.",
    aliases=("metadata.enabled",),
    parse=parse_bool,
)
METADATA_COMPACT_MAX_DELTA_COMMITS = _key(
    "hoodie.metadata.compact.max.delta.commits",
    10,
    "Compact the metadata table's files partition once this many metadata deltacommits "
    "completed since its latest base file (Hudi's NUM_COMMITS trigger): a compaction instant "
    "on the metadata timeline writes a new HFile base file merging the base file and the "
    "logs, so readers merge at most this many log files. Used when hoodie.metadata.enable is "
    "true; at least 1.",
    parse=parse_int,
)
METADATA_COLUMN_STATS_ENABLED = _key(
    "hoodie.metadata.index.column.stats.enable",
    False,
    "Keep the metadata table's column_stats partition (with hoodie.metadata.enable): the "
    "min, max, value and null counts of the indexed columns of every live base and log "
    "file, kept exact by every action, built from the files partition when turned on, "
    "dropped when turned off. Reads skip files by it (hoodie.enable.data.skipping).",
    parse=parse_bool,
)
METADATA_COLUMN_STATS_COLUMNS = _key(
    "hoodie.metadata.index.column.stats.column.list",
    None,
    "Comma-separated columns whose statistics column_stats keeps, besides "
    "_hoodie_commit_time, _hoodie_partition_path and _hoodie_record_key; unset: the first "
    "32 data columns of a supported type (Hudi 1.x's default). A name that is not a "
    "column is refused.",
)
METADATA_PARTITION_STATS_ENABLED = _key(
    "hoodie.metadata.index.partition.stats.enable",
    False,
    "Keep the metadata table's partition_stats partition (with column_stats on): per data "
    "partition and indexed column, the aggregate of its latest file slices' statistics, "
    "recomputed for every partition an action touches. Snapshot reads of the latest state "
    "skip whole partitions by it before they look at files. Non-partitioned tables get none.",
    parse=parse_bool,
)
METADATA_BLOOM_FILTER_ENABLED = _key(
    "hoodie.metadata.index.bloom.filter.enable",
    False,
    "Keep the metadata table's bloom_filters partition (with hoodie.metadata.enable): the "
    "footer bloom filter of every live base file, kept exact by every action, built from "
    "the files partition when turned on, dropped when turned off. The BLOOM index reads "
    "filters from it with hoodie.bloom.index.use.metadata.",
    parse=parse_bool,
)
METADATA_BLOOM_FILTER_FILE_GROUP_COUNT = _key(
    "hoodie.metadata.index.bloom.filter.file.group.count",
    4,
    "File groups of the bloom_filters partition, fixed when it is built (at least 1).",
    parse=parse_int,
)
DATA_SKIPPING_ENABLED = _key(
    "hoodie.enable.data.skipping",
    True,
    "Skip file slices by the metadata table's column_stats in reads with a where predicate "
    "(Table.read, to_arrow): a slice is left out only when the statistics of its base file "
    "and of every log file prove no row can match.",
    parse=parse_bool,
    scope="read",
)
FLINK_METADATA_COMPACTION_DELTA_COMMITS = _unsupported(
    "metadata.compaction.delta_commits", 10, "Metadata table compaction trigger.", _METADATA
)
FLINK_INDEX_BOOTSTRAP = _unsupported(
    "index.bootstrap.enabled",
    False,
    "Flink: load the state index from the table.",
    _STATE_INDEX,
    ignore=("false",),
)
FLINK_INDEX_STATE_TTL = _unsupported(
    "index.state.ttl", 0.0, "Flink: state index TTL in days.", _STATE_INDEX, ignore=("0", "0.0")
)
FLINK_INDEX_PARTITION_REGEX = _unsupported(
    "index.partition.regex", ".*", "Flink: partitions loaded into the state index.", _STATE_INDEX
)
FLINK_READ_TASKS = _unsupported(
    "read.tasks", None, "Flink: read parallelism.", _PARALLELISM, scope="read"
)
FLINK_SOURCE_AVRO_SCHEMA_PATH = _unsupported(
    "source.avro-schema.path",
    None,
    "Flink: source Avro schema file.",
    "hudilite takes the schema from the DataFrame or the table",
)
FLINK_SOURCE_AVRO_SCHEMA = _unsupported(
    "source.avro-schema",
    None,
    "Flink: source Avro schema.",
    "hudilite takes the schema from the DataFrame or the table",
)
MERGE_TYPE = _unsupported(
    "hoodie.datasource.merge.type",
    "payload_combine",
    "MOR snapshot reads: payload_combine or skip_merge.",
    "MOR snapshot reads always merge logs into base files (payload_combine)",
    scope="read",
    ignore=("payload_combine",),
)
FLINK_READ_UTC_TIMEZONE = _unsupported(
    "read.utc-timezone",
    True,
    "Flink: zone of epoch/LocalDateTime conversion on read.",
    "Spark's session time zone decides",
    scope="read",
    ignore=("true",),
)
# Flink read keys the hudilite data source maps (hudilite/spark/read_options.py).
FLINK_READ_STREAMING = _key(
    "read.streaming.enabled",
    False,
    "Flink: read as a streaming source. format('hudilite'): true with spark.readStream, "
    "false with spark.read (the other value is refused).",
    parse=parse_bool,
    scope="read",
)
FLINK_READ_STREAMING_CHECK_INTERVAL = _key(
    "read.streaming.check-interval",
    60,
    "Flink: streaming read poll seconds. format('hudilite'): checked (whole number >= 1), no "
    "effect: the Spark query's trigger sets the poll interval (trigger(processingTime=...)).",
    parse=parse_int,
    scope="read",
)
FLINK_READ_STREAMING_SKIP_COMPACTION = _key(
    "read.streaming.skip_compaction",
    True,
    "Flink: a streaming read skips compaction commits. format('hudilite') always does (rows "
    "a compaction rewrote keep their commit time and are not delivered again); false is "
    "refused.",
    parse=parse_bool,
    scope="read",
)
FLINK_READ_STREAMING_SKIP_CLUSTERING = _key(
    "read.streaming.skip_clustering",
    True,
    "Flink: a streaming read skips clustering commits. format('hudilite') always does; false "
    "is refused.",
    parse=parse_bool,
    scope="read",
)
FLINK_READ_STREAMING_SKIP_INSERT_OVERWRITE = _unsupported(
    "read.streaming.skip_insertoverwrite",
    False,
    "Flink: a streaming read skips insert overwrite commits.",
    "format('hudilite') streams deliver the rows insert overwrite commits write (as false)",
    scope="read",
    ignore=("false",),
)
FLINK_READ_START_COMMIT = _key(
    "read.start-commit",
    None,
    "Flink: first commit to read, inclusive ('earliest' or an instant T). format('hudilite'): "
    "batch: an incremental read from T - 1 ms (hoodie.datasource.read.begin.instanttime is "
    "exclusive); stream: hoodie.datasource.streaming.startOffset = T - 1 ms.",
    scope="read",
)
FLINK_READ_END_COMMIT = _key(
    "read.end-commit",
    None,
    "Flink: last commit to read (inclusive). format('hudilite') batch reads: "
    "hoodie.datasource.read.end.instanttime; refused on a stream.",
    scope="read",
)
FLINK_READ_COMMITS_LIMIT = _key(
    "read.commits.limit",
    None,
    "Flink: commits per streaming poll. format('hudilite') streams: "
    "hoodie.datasource.read.streaming.max.instants.per.batch; refused on a batch read.",
    parse=parse_int,
    scope="read",
)
FLINK_READ_CDC_FROM_CHANGELOG = _unsupported(
    "read.cdc.from.changelog", True, "Flink: CDC reads from changelog files.", _CDC, scope="read"
)
FLINK_READ_DATA_SKIPPING = _unsupported(
    "read.data.skipping.enabled",
    False,
    "Flink: prune files with metadata table column stats.",
    _METADATA + " (partition pruning still applies)",
    scope="read",
    ignore=("false",),
)
FLINK_INSERT_CLUSTER = _unsupported(
    "write.insert.cluster",
    False,
    "Flink: inserts merge into small files of a COW table.",
    "inserts always fill small files (hoodie.parquet.small.file.limit decides)",
)
FLINK_RETRY_TIMES = _unsupported("write.retry.times", 3, "Flink checkpoint retries.", _STREAMING)
FLINK_RETRY_INTERVAL = _unsupported(
    "write.retry.interval.ms", 2000, "Flink checkpoint retry pause.", _STREAMING
)
FLINK_IGNORE_FAILED = _unsupported(
    "write.ignore.failed",
    False,
    "Flink: commit although some records failed.",
    "a hudilite write that fails in any task is rolled back",
    ignore=("false",),
)
BUCKET_INDEX_ENGINE = _unsupported(
    "hoodie.index.bucket.engine",
    "SIMPLE",
    "Bucket index engine: SIMPLE or CONSISTENT_HASHING.",
    "only the SIMPLE bucket engine (fixed bucket count) is implemented",
    scope="table",
    ignore=("simple",),
)
FLINK_WRITE_UTC_TIMEZONE = _unsupported(
    "write.utc-timezone",
    True,
    "Flink: zone of epoch/LocalDateTime conversion on write.",
    "Spark's session time zone decides",
    ignore=("true",),
)
FLINK_PARTITION_FORMAT = _unsupported(
    "write.partition.format",
    None,
    "Flink: date format of datetime partitioning.",
    "use the TIMESTAMP key generator (hoodie.keygen.timebased.output.dateformat)",
)
FLINK_INDEX_BOOTSTRAP_TASKS = _unsupported(
    "write.index_bootstrap.tasks", None, "Flink parallelism.", _PARALLELISM
)
FLINK_BUCKET_ASSIGN_TASKS = _unsupported(
    "write.bucket_assign.tasks", None, "Flink parallelism.", _PARALLELISM
)
FLINK_WRITE_TASKS = _unsupported("write.tasks", None, "Flink parallelism.", _PARALLELISM)
FLINK_WRITE_TASK_MAX_SIZE = _unsupported(
    "write.task.max.size", 1024.0, "Flink write task memory (MB).", _MEMORY
)
FLINK_WRITE_RATE_LIMIT = _unsupported(
    "write.rate.limit",
    0,
    "Flink: records per second a write may ingest (0: no limit).",
    "hudilite writes do not throttle (as write.rate.limit=0)",
    ignore=("0",),
)
FLINK_WRITE_BATCH_SIZE = _unsupported(
    "write.batch.size", 256.0, "Flink write buffer flush size (MB).", _MEMORY
)
FLINK_WRITE_LOG_BLOCK_SIZE = _unsupported(
    "write.log_block.size",
    128,
    "Flink: max log block size (MB).",
    "a write appends one data block per file group",
)
FLINK_WRITE_LOG_MAX_SIZE = _unsupported(
    "write.log.max.size",
    1024,
    "Flink: log file size before rolling over (MB).",
    "each delta commit writes its own log file",
    aliases=("hoodie.logfile.max.size",),
)
FLINK_WRITE_PARQUET_BLOCK_SIZE = _unsupported(
    "write.parquet.block.size",
    120,
    "Flink: parquet row group size (MB).",
    "hudilite's parquet writer sizes row groups itself",
    aliases=("hoodie.parquet.block.size",),
)
FLINK_WRITE_PARQUET_PAGE_SIZE = _unsupported(
    "write.parquet.page.size",
    1,
    "Flink: parquet page size (MB).",
    "hudilite's parquet writer sizes pages itself",
    aliases=("hoodie.parquet.page.size",),
)
FLINK_WRITE_MERGE_MAX_MEMORY = _unsupported(
    "write.merge.max_memory", 100, "Flink merge memory (MB).", _MEMORY
)
FLINK_WRITE_COMMIT_ACK_TIMEOUT = _unsupported(
    "write.commit.ack.timeout", -1, "Flink internal commit ack timeout.", _STREAMING
)
FLINK_BULK_INSERT_SHUFFLE = _unsupported(
    "write.bulk_insert.shuffle_input", True, "Flink bulk insert shuffle.", _PARALLELISM
)
FLINK_BULK_INSERT_SORT = _unsupported(
    "write.bulk_insert.sort_input",
    True,
    "Flink: sort bulk insert input.",
    "bulk inserts write rows in input order per partition",
)
FLINK_BULK_INSERT_SORT_BY_KEY = _unsupported(
    "write.bulk_insert.sort_input.by_record_key",
    False,
    "Flink: sort bulk insert input by record key.",
    "bulk inserts write rows in input order per partition",
    ignore=("false",),
)
FLINK_WRITE_SORT_MEMORY = _unsupported("write.sort.memory", 128, "Flink sort memory (MB).", _MEMORY)
FLINK_PARTITION_OVERWRITE_MODE = _unsupported(
    "write.partition.overwrite.mode",
    "STATIC",
    "Flink: INSERT OVERWRITE of a partitioned table replaces the partitions of the "
    "PARTITION spec (STATIC) or those the query writes (DYNAMIC).",
    "use operation insert_overwrite (the partitions written) or insert_overwrite_table",
)
FLINK_WRITE_CLIENT_ID = _unsupported(
    "write.client.id", None, "Flink writer pipeline id.", _STREAMING
)
FLINK_COMPACTION_TASKS = _unsupported(
    "compaction.tasks", None, "Flink compaction parallelism.", _PARALLELISM, scope="service"
)
FLINK_COMPACTION_TIMEOUT = _unsupported(
    "compaction.timeout.seconds",
    1200,
    "Flink: roll back a compaction running longer than this.",
    "a failed compaction is rolled back when the next one runs",
    scope="service",
)
FLINK_COMPACTION_MAX_MEMORY = _unsupported(
    "compaction.max_memory", 100, "Flink compaction memory (MB).", _MEMORY, scope="service"
)
FLINK_CLUSTERING_SCHEDULE = _unsupported(
    "clustering.schedule.enabled",
    False,
    "Flink: schedule clustering plans after commits.",
    "schedule clustering with t.schedule_clustering() or CALL run_clustering",
    scope="service",
    ignore=("false",),
)
FLINK_CLUSTERING_ASYNC = _unsupported(
    "clustering.async.enabled",
    False,
    "Flink: run clustering plans asynchronously.",
    "run clustering with t.cluster() or CALL run_clustering",
    scope="service",
    ignore=("false",),
)
FLINK_CLUSTERING_DELTA_COMMITS = _unsupported(
    "clustering.delta_commits",
    4,
    "Flink: commits between clustering plans.",
    "clustering is scheduled explicitly",
    scope="service",
)
FLINK_CLUSTERING_TASKS = _unsupported(
    "clustering.tasks", None, "Flink clustering parallelism.", _PARALLELISM, scope="service"
)
FLINK_CLUSTERING_PLAN_STRATEGY_CLASS = _unsupported(
    "hoodie.clustering.plan.strategy.class",
    None,
    "Clustering plan strategy class.",
    "hudilite plans by size (Hudi's SparkSizeBasedClusteringPlanStrategy rules)",
    scope="service",
    aliases=("clustering.plan.strategy.class",),
)
FLINK_LOOKUP_JOIN_CACHE_TTL = _unsupported(
    "lookup.join.cache.ttl", None, "Flink lookup join cache TTL.", _STREAMING, scope="read"
)

# ---- Hive sync: every key refused by name (hive_sync.enabled=false is accepted) ----------

HIVE_SYNC_ENABLED = _unsupported(
    "hoodie.datasource.hive_sync.enable",
    False,
    "Sync the table to a Hive metastore after writes.",
    _HIVE_SYNC,
    ignore=("false",),
    aliases=("hive_sync.enabled", "hive_sync.enable", "hoodie.datasource.meta.sync.enable"),
)
_HIVE_SYNC_KEYS = (
    ("db", "hoodie.datasource.hive_sync.database"),
    ("table", "hoodie.datasource.hive_sync.table"),
    ("file_format", None),
    ("mode", "hoodie.datasource.hive_sync.mode"),
    ("username", "hoodie.datasource.hive_sync.username"),
    ("password", "hoodie.datasource.hive_sync.password"),
    ("jdbc_url", "hoodie.datasource.hive_sync.jdbcurl"),
    ("metastore.uris", "hoodie.datasource.hive_sync.metastore.uris"),
    ("partition_fields", "hoodie.datasource.hive_sync.partition_fields"),
    ("partition_extractor_class", "hoodie.datasource.hive_sync.partition_extractor_class"),
    ("assume_date_partitioning", "hoodie.datasource.hive_sync.assume_date_partitioning"),
    ("use_jdbc", "hoodie.datasource.hive_sync.use_jdbc"),
    ("auto_create_db", "hoodie.datasource.hive_sync.auto_create_database"),
    ("ignore_exceptions", "hoodie.datasource.hive_sync.ignore_exceptions"),
    ("skip_ro_suffix", "hoodie.datasource.hive_sync.skip_ro_suffix"),
    ("support_timestamp", "hoodie.datasource.hive_sync.support_timestamp"),
    ("table_properties", "hoodie.datasource.hive_sync.table_properties"),
    ("serde_properties", "hoodie.datasource.hive_sync.serde_properties"),
    ("conf.dir", None),
    ("table.strategy", "hoodie.datasource.hive_sync.table.strategy"),
)
#: Every hive sync key, by its Flink name (``hive_sync.<suffix>``).
HIVE_SYNC_KEYS: dict[str, ConfigKey] = {
    "hive_sync." + suffix: _unsupported(
        spark or "hive_sync." + suffix,
        None,
        f"Hive sync setting ({suffix}).",
        _HIVE_SYNC,
        aliases=("hive_sync." + suffix,) if spark else (),
    )
    for suffix, spark in _HIVE_SYNC_KEYS
}

# ---- common Hudi Spark keys hudilite does not implement -----------------------------------

_SPARK_PARALLELISM_KEYS = (
    "hoodie.upsert.shuffle.parallelism",
    "hoodie.insert.shuffle.parallelism",
    "hoodie.bulkinsert.shuffle.parallelism",
    "hoodie.delete.shuffle.parallelism",
)
SHUFFLE_PARALLELISM_KEYS: dict[str, ConfigKey] = {
    name: _unsupported(name, 0, "Hudi write shuffle parallelism.", _PARALLELISM)
    for name in _SPARK_PARALLELISM_KEYS
}
SCHEMA_ON_READ = _unsupported(
    "hoodie.schema.on.read.enable",
    False,
    "Schema on read (an internal schema with column ids: columns may be dropped and renamed).",
    "hudilite evolves schemas by adding and widening columns only",
    scope="table",
    ignore=("false",),
)
