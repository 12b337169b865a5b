"""Option keys, their defaults and parsers, and the ``hoodie.properties`` codec.

Every option hudilite understands is a :class:`ConfigKey` constant defined here, under the
name Hudi's Spark datasource uses (the *canonical* name), with the Hudi SQL short names
(``primaryKey``, ``preCombineField``, ``type``...), Hudi Flink names (``table.type``,
``precombine.field``...) and table-config names (``hoodie.table.*``) as aliases. Callers
wrap user options in :class:`Options` and ask for typed values with ``opts.get(KEY)``.

:class:`TableConfig` is the typed view of ``.hoodie/hoodie.properties``;
``from_properties``/``to_properties`` read and write the keys listed in
``docs/hudi-format.md`` §2 for table versions 6, 8 and 9.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudilite.errors import ConfigError

# --------------------------------------------------------------------------------------------
# Value parsers. Each takes the raw string and raises ConfigError (a ValueError) when it is
# malformed; Options.get re-raises with the option name added.
# --------------------------------------------------------------------------------------------

_TRUE = frozenset({"true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off"})


def parse_bool(value: str | bool) -> bool:
    """``true/false`` (also ``1/0``, ``yes/no``, ``on/off``), case-insensitive."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"not a boolean: {value!r}")


def parse_int(value: str | int) -> int:
    """A decimal integer (underscores allowed, as in Python literals)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(f"not an integer: {value!r}") from None


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(value: str | int) -> int:
    """A byte count: plain digits (Hudi's own format) or ``128m``, ``1.5GB``, ``64KiB``.

    Units are binary (k = 1024), as Spark's ``byteFromString`` treats them.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ConfigError(f"not a size: {value!r}")
    number, unit = match.group(1), match.group(2).lower()
    return int(float(number) * _SIZE_UNITS[unit])


def parse_fields(value: str) -> tuple[str, ...]:
    """A comma-separated field list; blanks are dropped, so ``""`` is the empty tuple."""
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


def parse_table_type(value: str) -> str:
    """``COPY_ON_WRITE``/``MERGE_ON_READ``, also the SQL short forms ``cow``/``mor``."""
    text = str(value).strip().upper()
    aliases = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}
    text = aliases.get(text, text)
    if text not in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        raise ConfigError(f"not a table type: {value!r} (expected cow|mor)")
    return text


def choice(*allowed: str, upper: bool = True) -> Callable[[str], str]:
    """Build a parser accepting one of ``allowed`` (case-insensitive), normalised in case."""

    def _parse(value: str) -> str:
        text = str(value).strip()
        text = text.upper() if upper else text.lower()
        if text not in allowed:
            raise ConfigError(f"not one of {'|'.join(allowed)}: {value!r}")
        return text

    return _parse


# --------------------------------------------------------------------------------------------
# Key generators and merge modes: the vocabulary shared by options and hoodie.properties
# --------------------------------------------------------------------------------------------

KEYGEN_TYPES = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM")

#: The Java class Hudi 0.x records in ``hoodie.table.keygenerator.class`` for each type.
KEYGEN_CLASSES: dict[str, str] = {
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    "TIMESTAMP": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    "CUSTOM": "org.apache.hudi.keygen.CustomKeyGenerator",
}

_KEYGEN_BY_SIMPLE_CLASS = {
    "SimpleKeyGenerator": "SIMPLE",
    "SimpleAvroKeyGenerator": "SIMPLE",
    "ComplexKeyGenerator": "COMPLEX",
    "ComplexAvroKeyGenerator": "COMPLEX",
    "NonpartitionedKeyGenerator": "NON_PARTITION",
    "NonpartitionedAvroKeyGenerator": "NON_PARTITION",
    "TimestampBasedKeyGenerator": "TIMESTAMP",
    "TimestampBasedAvroKeyGenerator": "TIMESTAMP",
    "CustomKeyGenerator": "CUSTOM",
    "CustomAvroKeyGenerator": "CUSTOM",
}


def normalize_keygen_type(value: str) -> str:
    """Upper-case a key generator type; Hudi's ``*_AVRO`` variants map to the base type."""
    text = str(value).strip().upper()
    text = text.removesuffix("_AVRO")
    if text in ("NONPARTITIONED", "NON_PARTITIONED", "NONPARTITION"):
        text = "NON_PARTITION"
    if text not in KEYGEN_TYPES:
        raise ConfigError(
            f"not a key generator type: {value!r} (expected {'|'.join(KEYGEN_TYPES)})"
        )
    return text


def keygen_type_from_class(class_name: str) -> str | None:
    """Type of a Hudi key generator class name (package ignored); None if unknown."""
    return _KEYGEN_BY_SIMPLE_CLASS.get(class_name.strip().rsplit(".", 1)[-1])


def infer_keygen_type(record_key_fields: Iterable[str], partition_fields: Iterable[str]) -> str:
    """The key generator Hudi picks when none is configured (``KeyGenUtils.inferKeyGeneratorType``).

    The one place this is decided (``Table.create``, SQL CREATE TABLE and SHOW CREATE TABLE
    call it): no partition fields -> NON_PARTITION, whatever the number of record key fields
    (its keys for several fields are COMPLEX's ``f1:v1,f2:v2``); several key or partition
    fields -> COMPLEX; else SIMPLE. ``field:type`` partition specs need the custom generator.
    """
    keys, parts = tuple(record_key_fields), tuple(partition_fields)
    if any(":" in p for p in parts):
        return "CUSTOM"
    if not parts:
        return "NON_PARTITION"
    if len(keys) > 1 or len(parts) > 1:
        return "COMPLEX"
    return "SIMPLE"


EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM_MERGE = "CUSTOM"

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
PARTIAL_UPDATE_PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"

#: ``hoodie.record.merge.strategy.id`` values of Hudi 1.x's built-in mergers.
EVENT_TIME_STRATEGY_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"


#: Payload class (simple name) -> (merge mode, partial update): the one mapping (the merge
#: spec and table config inference read it). As Hudi 1.1's upgrade to merge modes
#: (``EightToNineUpgradeHandler``): the ``OverwriteNonDefaults`` and ``PartialUpdate``
#: payloads are commit-time and event-time ordering with partial updates (IGNORE_DEFAULTS).
PAYLOADS: dict[str, tuple[str, bool]] = {
    "OverwriteWithLatestAvroPayload": (COMMIT_TIME_ORDERING, False),
    "DefaultHoodieRecordPayload": (EVENT_TIME_ORDERING, False),
    "EventTimeAvroPayload": (EVENT_TIME_ORDERING, False),
    "PartialUpdateAvroPayload": (EVENT_TIME_ORDERING, True),
    "OverwriteNonDefaultsWithLatestAvroPayload": (COMMIT_TIME_ORDERING, True),
}


def merge_mode_for_payload(payload_class: str) -> str:
    """The merge mode equivalent to a v6 payload class (unknown payloads are CUSTOM)."""
    simple = payload_class.strip().rsplit(".", 1)[-1]
    return PAYLOADS.get(simple, (CUSTOM_MERGE, False))[0]


def payload_for_merge_mode(merge_mode: str) -> str | None:
    """The v6 payload class that gives ``merge_mode``'s semantics (None for CUSTOM)."""
    return {EVENT_TIME_ORDERING: DEFAULT_PAYLOAD, COMMIT_TIME_ORDERING: OVERWRITE_PAYLOAD}.get(
        merge_mode
    )


# --------------------------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigKey:
    """One option: canonical Hudi name, default, doc, accepted aliases and value parser.

    The default is returned as is (already typed); ``parse`` turns a raw string into the
    typed value.
    """

    name: str
    default: Any
    doc: str
    aliases: tuple[str, ...] = ()
    parse: Callable[[str], Any] = str

    def all_names(self) -> tuple[str, ...]:
        """The canonical name first, then the aliases in lookup order."""
        return (self.name, *self.aliases)


_REGISTRY: dict[str, ConfigKey] = {}


def _key(
    name: str,
    default: Any,
    doc: str,
    aliases: tuple[str, ...] = (),
    parse: Callable[[str], Any] = str,
) -> ConfigKey:
    key = ConfigKey(name, default, doc, aliases, parse)
    for n in key.all_names():
        # Two keys sharing a name would make alias resolution ambiguous; fail at import.
        assert n.lower() not in _REGISTRY, f"duplicate option name {n}"
        _REGISTRY[n.lower()] = key
    return key


# Alias order matters when several spellings of one key are given: the canonical name wins,
# then the aliases in the order listed (SQL short names and Flink names before the
# ``hoodie.table.*`` names, so a user's explicit option beats a table property).

TABLE_NAME = _key(
    "hoodie.table.name", None, "Table name.", aliases=("hoodie.datasource.write.table.name",)
)
DATABASE_NAME = _key("hoodie.database.name", "default", "Database the table belongs to.")
TABLE_TYPE = _key(
    "hoodie.datasource.write.table.type",
    "COPY_ON_WRITE",
    "COPY_ON_WRITE or MERGE_ON_READ (SQL: cow|mor).",
    aliases=("type", "table.type", "hoodie.table.type"),
    parse=parse_table_type,
)
TABLE_VERSION = _key(
    "hoodie.write.table.version",
    6,
    "Table version to create: 6 (Hudi 0.14/0.15) or 8 (Hudi 1.0).",
    aliases=("hoodie.table.version",),
    parse=parse_int,
)
OPERATION = _key(
    "hoodie.datasource.write.operation",
    "upsert",
    "Write operation.",
    aliases=("write.operation",),
    parse=choice(
        "upsert",
        "insert",
        "bulk_insert",
        "delete",
        "insert_overwrite",
        "insert_overwrite_table",
        "delete_partition",
        upper=False,
    ),
)
RECORDKEY_FIELDS = _key(
    "hoodie.datasource.write.recordkey.field",
    None,
    "Record key field(s), comma-separated; parsed to a tuple.",
    aliases=("primaryKey", "recordkey.field", "hoodie.table.recordkey.fields"),
    parse=parse_fields,
)
ORDERING_FIELDS = _key(
    "hoodie.datasource.write.precombine.field",
    None,
    "Ordering (precombine) field(s) for event-time merging; parsed to a tuple.",
    aliases=(
        "preCombineField",
        "orderingFields",
        "precombine.field",
        "hoodie.table.ordering.fields",
        "hoodie.table.precombine.field",
    ),
    parse=parse_fields,
)
PARTITION_FIELDS = _key(
    "hoodie.datasource.write.partitionpath.field",
    None,
    "Partition field(s), comma-separated (custom keygen: field:simple|timestamp).",
    aliases=("partitionpath.field", "hoodie.table.partition.fields"),
    parse=parse_fields,
)
HIVE_STYLE = _key(
    "hoodie.datasource.write.hive_style_partitioning",
    False,
    "Partition folders named field=value.",
    parse=parse_bool,
)
URL_ENCODE = _key(
    "hoodie.datasource.write.partitionpath.urlencode",
    False,
    "URL-encode partition path values.",
    parse=parse_bool,
)
KEYGEN_TYPE = _key(
    "hoodie.datasource.write.keygenerator.type",
    None,
    "SIMPLE|COMPLEX|NON_PARTITION|TIMESTAMP|CUSTOM (inferred from the fields when unset).",
    aliases=("hoodie.table.keygenerator.type",),
    parse=normalize_keygen_type,
)
KEYGEN_CLASS = _key(
    "hoodie.datasource.write.keygenerator.class",
    None,
    "Java key generator class; mapped to a KEYGEN_TYPE.",
    aliases=("hoodie.table.keygenerator.class",),
)
TIMESTAMP_TYPE = _key(
    "hoodie.keygen.timebased.timestamp.type",
    None,
    "Timestamp keygen input: UNIX_TIMESTAMP|DATE_STRING|EPOCHMILLISECONDS|...",
    parse=choice(
        "UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR"
    ),
)
TIMESTAMP_OUTPUT_FORMAT = _key(
    "hoodie.keygen.timebased.output.dateformat", None, "Timestamp keygen output date format."
)
TIMESTAMP_INPUT_FORMAT = _key(
    "hoodie.keygen.timebased.input.dateformat", None, "Timestamp keygen input date format."
)
TIMESTAMP_TIMEZONE = _key(
    "hoodie.keygen.timebased.timezone", "UTC", "Timezone of the timestamp keygen."
)
MERGE_MODE = _key(
    "hoodie.record.merge.mode",
    None,
    "EVENT_TIME_ORDERING|COMMIT_TIME_ORDERING|CUSTOM (derived from ordering fields when unset).",
    aliases=("recordMergeMode",),
    parse=choice("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"),
)
PAYLOAD_CLASS = _key(
    "hoodie.datasource.write.payload.class",
    None,
    "Hudi payload class (v6 merge semantics).",
    aliases=("payloadClass", "payload.class", "hoodie.compaction.payload.class"),
)
DELETE_FIELD = _key(
    "hoodie.payload.delete.field",
    None,
    "Data column marking deletes when it equals DELETE_MARKER (default: _hoodie_is_deleted).",
)
DELETE_MARKER = _key(
    "hoodie.payload.delete.marker", None, "Value of DELETE_FIELD that marks a delete."
)
CHANGELOG_ENABLED = _key(
    "hoodie.allow.operation.metadata.field",
    False,
    "Write the _hoodie_operation column (Flink changelog mode).",
    aliases=("changelog.enabled",),
    parse=parse_bool,
)
POPULATE_META_FIELDS = _key(
    "hoodie.populate.meta.fields", True, "Write the _hoodie_* meta columns.", parse=parse_bool
)
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
INDEX_TYPE = _key(
    "hoodie.index.type",
    "SIMPLE",
    "SIMPLE or BUCKET.",
    aliases=("index.type",),
    parse=choice("SIMPLE", "BUCKET"),
)
BUCKET_NUM = _key(
    "hoodie.bucket.index.num.buckets",
    4,
    "Buckets per partition for the bucket index.",
    aliases=("bucket.index.num.buckets",),
    parse=parse_int,
)
BUCKET_HASH_FIELD = _key(
    "hoodie.bucket.index.hash.field",
    None,
    "Fields hashed into buckets (default: the record key fields).",
    parse=parse_fields,
)
HEARTBEAT_INTERVAL_MS = _key(
    "hoodie.client.heartbeat.interval_in_ms", 60000, "Writer heartbeat period.", parse=parse_int
)
HEARTBEAT_TOLERABLE_MISSES = _key(
    "hoodie.client.heartbeat.tolerable.misses",
    2,
    "Missed heartbeats before a writer counts as dead.",
    parse=parse_int,
)
# Table lock (Hudi's HoodieLockConfig / StorageBasedLockConfig names; see hudilite/write/lock.py).


def _parse_seconds(value: str | float) -> float:
    # Hudi takes whole seconds; fractions are accepted so tests can use short leases.
    try:
        return float(str(value).strip())
    except ValueError:
        raise ConfigError(f"not a number of seconds: {value!r}") from None


CONCURRENCY_MODE = _key(
    "hoodie.write.concurrency.mode",
    "single_writer",
    "single_writer|optimistic_concurrency_control (commits are locked and checked in both).",
    parse=choice("single_writer", "optimistic_concurrency_control", upper=False),
)
LOCK_PROVIDER = _key(
    "hoodie.write.lock.provider",
    None,
    "InProcess|FileSystemBased|StorageBased LockProvider (Hudi class or short name); "
    "default: StorageBased on S3, FileSystemBased elsewhere.",
)
LOCK_WAIT_MS = _key(
    "hoodie.write.lock.wait_time_ms",
    60000,
    "How long one attempt waits for a lock held by a live holder.",
    parse=parse_int,
)
LOCK_NUM_RETRIES = _key(
    "hoodie.write.lock.num_retries",
    0,
    "Further attempts after a timed-out one (Hudi: 15; hudilite fails after one wait).",
    parse=parse_int,
)
LOCK_RETRY_WAIT_MS = _key(
    "hoodie.write.lock.wait_time_ms_between_retry",
    100,
    "Pause between polls of a held lock (and between attempts).",
    parse=parse_int,
)
LOCK_HEARTBEAT_INTERVAL_MS = _key(
    "hoodie.write.lock.heartbeat_interval_ms",
    60000,
    "File-based lock: lease renewal period; the lease lasts 5 periods.",
    parse=parse_int,
)
LOCK_FILESYSTEM_PATH = _key(
    "hoodie.write.lock.filesystem.path",
    None,
    "File-based lock: folder of the lock file (default: the table's .hoodie).",
)
LOCK_FILESYSTEM_EXPIRE = _key(
    "hoodie.write.lock.filesystem.expire",
    0,
    "File-based lock: lease in minutes (0: 5 heartbeat intervals).",
    parse=parse_int,
)
LOCK_STORAGE_VALIDITY_SECS = _key(
    "hoodie.write.lock.storage.validity.timeout.secs",
    300.0,
    "Storage-based lock: lease length in seconds.",
    parse=_parse_seconds,
)
LOCK_STORAGE_RENEW_SECS = _key(
    "hoodie.write.lock.storage.renew.interval.secs",
    30.0,
    "Storage-based lock: lease renewal period in seconds.",
    aliases=("hoodie.write.lock.storage.heartbeat.poll.secs",),
    parse=_parse_seconds,
)
KEY_CONFLICT_CHECK = _key(
    "hoodie.hudilite.write.conflict.check.keys",
    True,
    "Upserts fail with ConflictError when a concurrent upsert inserted the same new keys "
    "(file-group conflict checks alone would keep both copies); see hudilite.write.conflict.",
    parse=parse_bool,
)
COMBINE_BEFORE_INSERT = _key(
    "hoodie.combine.before.insert", False, "De-duplicate inserts by key.", parse=parse_bool
)
COMBINE_BEFORE_UPSERT = _key(
    "hoodie.combine.before.upsert", True, "De-duplicate upserts by key.", parse=parse_bool
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
INSERT_DROP_DUPLICATES = _key(
    "hoodie.datasource.write.insert.drop.duplicates",
    False,
    "Drop inserted records whose key already exists.",
    parse=parse_bool,
)
LOG_BLOCK_FORMAT = _key(
    "hoodie.logfile.data.block.format",
    "avro",
    "Data block format of MOR log files: avro or parquet.",
    parse=choice("avro", "parquet", upper=False),
)
QUERY_TYPE = _key(
    "hoodie.datasource.query.type",
    "snapshot",
    "snapshot|incremental|read_optimized.",
    parse=choice("snapshot", "incremental", "read_optimized", upper=False),
)
BEGIN_INSTANT = _key(
    "hoodie.datasource.read.begin.instanttime", None, "Incremental read start (exclusive)."
)
END_INSTANT = _key(
    "hoodie.datasource.read.end.instanttime", None, "Incremental read end (inclusive)."
)
AS_OF_INSTANT = _key("as.of.instant", None, "Time-travel read instant.")
READ_IGNORE_MISSING_FILES = _key(
    "hoodie.hudilite.read.ignore.missing.files",
    False,
    "Read on, with a warning, when a data file a commit names is missing or truncated "
    "(its file group is left out); by default such a read fails naming the file.",
    parse=parse_bool,
)
CLEANER_COMMITS_RETAINED = _key(
    "hoodie.cleaner.commits.retained", 10, "Commits whose files the cleaner keeps.", parse=parse_int
)
AUTO_CLEAN = _key("hoodie.clean.automatic", True, "Clean after each commit.", parse=parse_bool)
AUTO_ARCHIVE = _key(
    "hoodie.archive.automatic",
    True,
    "Archive old instants after each commit (beyond hoodie.keep.max.commits).",
    parse=parse_bool,
)
KEEP_MIN_COMMITS = _key(
    "hoodie.keep.min.commits", 20, "Archival keeps at least this many.", parse=parse_int
)
KEEP_MAX_COMMITS = _key(
    "hoodie.keep.max.commits", 30, "Archival starts above this many.", parse=parse_int
)
INLINE_COMPACT = _key(
    "hoodie.compact.inline",
    False,
    "Schedule (when triggered) and run compaction of MOR tables after each write.",
    aliases=("compaction.async.enabled",),
    parse=parse_bool,
)
SCHEDULE_INLINE_COMPACT = _key(
    "hoodie.compact.schedule.inline",
    False,
    "Only schedule compaction plans after writes (when triggered); a separate run executes them.",
    aliases=("compaction.schedule.enabled",),
    parse=parse_bool,
)
INLINE_COMPACT_DELTA_COMMITS = _key(
    "hoodie.compact.inline.max.delta.commits",
    5,
    "Delta commits that trigger inline compaction.",
    parse=parse_int,
)
# Clustering (Hudi's HoodieClusteringConfig, SparkSizeBasedClusteringPlanStrategy defaults).
CLUSTERING_SMALL_FILE_LIMIT = _key(
    "hoodie.clustering.plan.strategy.small.file.limit",
    314572800,
    "Only file slices whose base file is smaller than this are clustered.",
    parse=parse_size,
)
CLUSTERING_MAX_BYTES_PER_GROUP = _key(
    "hoodie.clustering.plan.strategy.max.bytes.per.group",
    2147483648,
    "Input bytes one clustering group may hold (a log-only slice counts as a max-size file).",
    parse=parse_size,
)
CLUSTERING_TARGET_FILE_MAX_BYTES = _key(
    "hoodie.clustering.plan.strategy.target.file.max.bytes",
    1073741824,
    "Target size of clustering output files: a group writes ceil(bytes / this) files.",
    parse=parse_size,
)
CLUSTERING_MAX_NUM_GROUPS = _key(
    "hoodie.clustering.plan.strategy.max.num.groups",
    30,
    "Clustering groups one plan may hold (per partition and in total).",
    parse=parse_int,
)
CLUSTERING_SORT_COLUMNS = _key(
    "hoodie.clustering.plan.strategy.sort.columns",
    None,
    "Columns clustering sorts the rows of each group by (comma-separated).",
    parse=parse_fields,
)
CLUSTERING_SINGLE_GROUP = _key(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled",
    True,
    "Cluster a partition even when it yields a group of one file slice.",
    parse=parse_bool,
)
CLUSTERING_PARTITION_FILTER_MODE = _key(
    "hoodie.clustering.plan.partition.filter.mode",
    "NONE",
    "Partitions to plan: NONE (all), SELECTED_PARTITIONS, RECENT_DAYS (DAY_ROLLING unsupported).",
    parse=choice("NONE", "SELECTED_PARTITIONS", "RECENT_DAYS", "DAY_ROLLING"),
)
CLUSTERING_PARTITION_SELECTED = _key(
    "hoodie.clustering.plan.strategy.partition.selected",
    None,
    "Comma-separated partition paths to cluster (overrides the regex pattern).",
    parse=parse_fields,
)
CLUSTERING_PARTITION_REGEX = _key(
    "hoodie.clustering.plan.strategy.partition.regex.pattern",
    None,
    "Only partitions whose path fully matches this Java-style regex are clustered.",
)
CLUSTERING_BEGIN_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.begin.partition",
    None,
    "SELECTED_PARTITIONS mode: first partition path (inclusive) of the range to cluster.",
)
CLUSTERING_END_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.end.partition",
    None,
    "SELECTED_PARTITIONS mode: last partition path (inclusive) of the range to cluster.",
)
CLUSTERING_LOOKBACK_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions",
    2,
    "RECENT_DAYS mode: how many of the latest partitions to cluster.",
    parse=parse_int,
)
CLUSTERING_SKIP_LATEST_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions",
    0,
    "RECENT_DAYS mode: how many of the very latest partitions to skip.",
    parse=parse_int,
)
LAYOUT_OPTIMIZE_STRATEGY = _key(
    "hoodie.layout.optimize.strategy",
    "linear",
    "How clustering orders rows by the sort columns: linear (z-order and hilbert unsupported).",
    parse=choice("linear", "z-order", "zorder", "hilbert", upper=False),
)

ALL_KEYS: tuple[ConfigKey, ...] = tuple(dict.fromkeys(_REGISTRY.values()))


def find_key(name: str) -> ConfigKey | None:
    """The key a canonical name or alias (case-insensitive) belongs to, or None."""
    return _REGISTRY.get(name.lower())


def _to_text(value: Any) -> str:
    # Python callers pass bools/ints; store Hudi's spelling so raw stays properties-ready.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Options:
    """User options with alias resolution and typed, validated access.

    ``raw`` keeps every key exactly as given (unknown ``hoodie.*`` keys pass through
    untouched); key matching is case-insensitive, as Spark's option maps are.
    """

    def __init__(self, raw: Mapping[str, Any] | None = None) -> None:
        self.raw: dict[str, str] = {k: _to_text(v) for k, v in (raw or {}).items() if v is not None}
        self._lower: dict[str, str] = {}
        for k, v in self.raw.items():
            self._lower[k.lower()] = v

    def get_raw(self, key: ConfigKey) -> str | None:
        """The unparsed value under the first spelling present, or None."""
        for name in key.all_names():
            value = self._lower.get(name.lower())
            if value is not None:
                return value
        return None

    def is_set(self, key: ConfigKey) -> bool:
        """True when any spelling of ``key`` was given."""
        return self.get_raw(key) is not None

    def get(self, key: ConfigKey, default: Any = ...) -> Any:
        """Parsed value of ``key``; its default (or ``default``) when unset.

        Raises ``ConfigError`` naming the option and the value when it does not parse.
        """
        value = self.get_raw(key)
        if value is None:
            return key.default if default is ... else default
        try:
            return key.parse(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid value {value!r} for option {key.name!r}: {exc}") from None

    def resolved(self) -> dict[str, str]:
        """Known keys under their canonical names (first spelling wins), unknown keys as given."""
        out: dict[str, str] = {}
        for k, v in self.raw.items():
            known = find_key(k)
            if known is None:
                out[k] = v
            elif known.name not in out:
                out[known.name] = self.get_raw(known) or v
        return out

    def with_overrides(self, more: Mapping[str, Any]) -> Options:
        """A new Options where ``more`` replaces every spelling of the keys it sets."""
        merged = dict(self.raw)
        for k in more:
            known = find_key(k)
            names = {n.lower() for n in known.all_names()} if known else {k.lower()}
            merged = {mk: mv for mk, mv in merged.items() if mk.lower() not in names}
        merged.update({k: _to_text(v) for k, v in more.items() if v is not None})
        return Options(merged)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lower

    def __repr__(self) -> str:
        return f"Options({self.raw!r})"


# --------------------------------------------------------------------------------------------
# Java Properties text codec
# --------------------------------------------------------------------------------------------

_UNESCAPE = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> Iterable[str]:
    """Join continuation lines (odd number of trailing backslashes) as java.util.Properties."""
    buf: str | None = None
    for physical in text.splitlines():
        line = physical.lstrip(" \t\f")
        if buf is None:
            if not line or line[0] in "#!":
                continue
            buf = ""
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            buf += line[:-1]
            continue
        yield buf + line
        buf = None
    if buf is not None:
        yield buf


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2 : i + 6]):
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_UNESCAPE.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    # \uXXXX escapes of a surrogate pair must become one code point; a lone one (garbage)
    # stays a lone surrogate, as in Java, instead of failing the decode.
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``Properties`` text (comments, continuations, escapes) into a dict."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        props[_unescape(key)] = _unescape(line[j:])
    return props


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for idx, ch in enumerate(s):
        if ch == " ":
            # Java escapes every space of a key but only the leading ones of a value.
            out.append("\\ " if is_key or idx == 0 else " ")
        elif ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            # Hudi loads hoodie.properties as ISO-8859-1, so anything else must be \uXXXX
            # (UTF-16 code units, as Java writes them).
            units = ch.encode("utf-16-be", "surrogatepass")
            for k in range(0, len(units), 2):
                out.append(f"\\u{int.from_bytes(units[k : k + 2], 'big'):04X}")
        else:
            out.append(ch)
    return "".join(out)


def render_properties(props: Mapping[str, str], comment: str | None = None) -> str:
    """Render ``props`` as Java ``Properties`` text, in the given order, ``\\n`` line ends."""
    lines: list[str] = []
    if comment is not None:
        lines.extend("#" + c for c in comment.splitlines() or [""])
    lines.extend(f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in props.items())
    return "\n".join(lines) + "\n"


def table_checksum(database: str, table: str) -> int:
    """``hoodie.table.checksum``: CRC32 of ``"<database>.<table>"`` (UTF-8)."""
    return zlib.crc32(f"{database}.{table}".encode())


# --------------------------------------------------------------------------------------------
# hoodie.properties
# --------------------------------------------------------------------------------------------

# Keys to_properties() owns: recomputed from the typed fields on every render.
_MANAGED_KEYS = (
    "hoodie.table.name",
    "hoodie.table.type",
    "hoodie.table.version",
    "hoodie.table.initial.version",
    "hoodie.timeline.layout.version",
    "hoodie.table.recordkey.fields",
    "hoodie.table.precombine.field",
    "hoodie.table.ordering.fields",
    "hoodie.table.partition.fields",
    "hoodie.table.keygenerator.class",
    "hoodie.table.keygenerator.type",
    "hoodie.table.base.file.format",
    "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.datasource.write.partitionpath.urlencode",
    "hoodie.populate.meta.fields",
    "hoodie.table.create.schema",
    "hoodie.database.name",
    "hoodie.table.timeline.timezone",
    "hoodie.record.merge.mode",
    "hoodie.compaction.payload.class",
    "hoodie.timeline.path",
    "hoodie.timeline.history.path",
    "hoodie.archivelog.folder",
    "hoodie.datasource.write.drop.partition.columns",
    "hoodie.table.checksum",
)
# Never written: listing metadata partitions without maintaining the metadata table makes
# Java and hudi-rs readers trust a stale file index and miss our files.
_FORBIDDEN_KEYS = ("hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight")
SUPPORTED_TABLE_VERSIONS = (6, 8, 9)


# Prefixes of keys that belong in hoodie.properties (table-level); everything else the user
# passes (write parallelism, SQL short names, ...) is per-write and not persisted.
_TABLE_PROPERTY_PREFIXES = (
    "hoodie.table.",
    "hoodie.keygen.",
    "hoodie.record.merge.",
    "hoodie.timeline.",
    "hoodie.archivelog.",
    "hoodie.compaction.payload.",
    "hoodie.compaction.record.merger.",
    "hoodie.bucket.index.",
    "hoodie.index.type",
    "hoodie.payload.",
)


def is_table_property(key: str) -> bool:
    """True for keys persisted in ``hoodie.properties`` (see ``TableConfig.new``)."""
    return key.startswith(_TABLE_PROPERTY_PREFIXES) and key not in _FORBIDDEN_KEYS


@dataclass(frozen=True)
class TableConfig:
    """Typed view of ``.hoodie/hoodie.properties`` (table versions 6, 8 and 9).

    ``props`` holds every key as on disk; :meth:`to_properties` re-renders the typed fields
    over it, so keys hudilite does not model survive a rewrite. ``partition_fields`` keeps
    the on-disk spelling (custom keygen: ``field:simple``); see :attr:`partition_field_names`.
    """

    name: str
    table_type: str
    table_version: int
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_fields: tuple[str, ...]
    keygen_type: str
    hive_style: bool
    url_encode: bool
    database: str = "default"
    create_schema: str | None = None
    merge_mode: str = COMMIT_TIME_ORDERING
    payload_class: str | None = None
    populate_meta_fields: bool = True
    props: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    # ---- derived ---------------------------------------------------------------------------

    @property
    def layout_version(self) -> int:
        """Timeline layout: 1 for v6 (instants in ``.hoodie/``), 2 for v8+."""
        return 1 if self.table_version < 8 else 2

    @property
    def timeline_dir(self) -> str:
        """Table-relative folder holding the active timeline's instant files."""
        return ".hoodie" if self.layout_version == 1 else ".hoodie/timeline"

    @property
    def archive_dir(self) -> str:
        """Table-relative folder of archived instants (v6 ``archived``, v8 LSM ``history``)."""
        if self.layout_version == 1:
            return ".hoodie/" + self.props.get("hoodie.archivelog.folder", "archived")
        return ".hoodie/timeline/" + self.props.get("hoodie.timeline.history.path", "history")

    @property
    def is_mor(self) -> bool:
        """True for MERGE_ON_READ tables."""
        return self.table_type == "MERGE_ON_READ"

    @property
    def is_partitioned(self) -> bool:
        """False when there are no partition fields (files live in the base path)."""
        return bool(self.partition_fields)

    @property
    def partition_field_names(self) -> tuple[str, ...]:
        """Partition field names without the custom keygen ``:type`` suffix."""
        return tuple(p.split(":", 1)[0] for p in self.partition_fields)

    @property
    def ordering_field(self) -> str | None:
        """The first ordering field, or None (multiple fields only exist from v9 on)."""
        return self.ordering_fields[0] if self.ordering_fields else None

    @property
    def checksum(self) -> int:
        """The ``hoodie.table.checksum`` this config renders."""
        return table_checksum(self.database, self.name)

    # ---- construction ----------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        name: str,
        table_type: str = "COPY_ON_WRITE",
        table_version: int = 6,
        record_key_fields: Iterable[str] = (),
        partition_fields: Iterable[str] = (),
        ordering_fields: Iterable[str] = (),
        keygen_type: str | None = None,
        hive_style: bool = False,
        url_encode: bool = False,
        create_schema: str | None = None,
        database: str = "default",
        merge_mode: str | None = None,
        payload_class: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> TableConfig:
        """Validate and complete the config of a table about to be created.

        Fills in what Hudi would infer: the key generator from the fields, the merge mode
        from the ordering fields or payload (event time when an ordering field is set), and
        for v6/v8 the equivalent payload class. ``extra`` may be all of the user's options:
        only table-level keys (:func:`is_table_property`) are kept and written as given.
        """
        version = int(table_version)
        if version not in SUPPORTED_TABLE_VERSIONS:
            raise ConfigError(f"invalid value {version!r} for option 'hoodie.write.table.version'")
        if not name or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
            raise ConfigError(f"invalid value {name!r} for option 'hoodie.table.name'")
        keys, parts, order = (
            tuple(record_key_fields),
            tuple(partition_fields),
            tuple(ordering_fields),
        )
        kg = normalize_keygen_type(keygen_type) if keygen_type else infer_keygen_type(keys, parts)
        if kg == "NON_PARTITION" and parts:
            raise ConfigError(f"key generator NON_PARTITION cannot partition by {','.join(parts)}")
        if kg in ("SIMPLE", "TIMESTAMP") and len(keys) > 1:
            raise ConfigError(f"key generator {kg} takes one record key field, got {keys}")
        if merge_mode is not None:
            mode = choice(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM_MERGE)(merge_mode)
        elif payload_class:
            mode = merge_mode_for_payload(payload_class)
        else:
            mode = EVENT_TIME_ORDERING if order else COMMIT_TIME_ORDERING
        if mode == EVENT_TIME_ORDERING and not order:
            raise ConfigError("merge mode EVENT_TIME_ORDERING needs an ordering (precombine) field")
        payload = payload_class or payload_for_merge_mode(mode)
        if version == 6 and payload is None:
            raise ConfigError("a CUSTOM merge mode on a v6 table needs a payload class")
        cfg = cls(
            name=name,
            table_type=parse_table_type(table_type),
            table_version=version,
            record_key_fields=keys,
            partition_fields=parts,
            ordering_fields=order,
            keygen_type=kg,
            hive_style=hive_style,
            url_encode=url_encode,
            database=database,
            create_schema=create_schema,
            merge_mode=mode,
            payload_class=payload,
            populate_meta_fields=True,
            props={
                k: _to_text(v)
                for k, v in (extra or {}).items()
                if v is not None and is_table_property(k) and k not in _MANAGED_KEYS
            },
        )
        return dataclasses.replace(cfg, props=cfg.to_properties())

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> TableConfig:
        """Read the parsed ``hoodie.properties`` of a v6/v8/v9 table."""
        name = props.get("hoodie.table.name")
        if not name:
            raise ConfigError("hoodie.properties lacks hoodie.table.name")

        def typed(key: str, default: str, parse: Callable[[str], Any]) -> Any:
            value = props.get(key, default)
            try:
                return parse(value)
            except ValueError:
                raise ConfigError(f"invalid value {value!r} for option {key!r}") from None

        version = typed("hoodie.table.version", "6", parse_int)
        if version not in SUPPORTED_TABLE_VERSIONS:
            raise ConfigError(f"unsupported value {version!r} for option 'hoodie.table.version'")
        keys = parse_fields(props.get("hoodie.table.recordkey.fields", ""))
        parts = parse_fields(props.get("hoodie.table.partition.fields", ""))
        order = parse_fields(
            props.get("hoodie.table.ordering.fields")
            or props.get("hoodie.table.precombine.field", "")
        )
        kg: str | None = None
        if props.get("hoodie.table.keygenerator.type"):
            kg = typed("hoodie.table.keygenerator.type", "", normalize_keygen_type)
        elif props.get("hoodie.table.keygenerator.class"):
            kg = keygen_type_from_class(props["hoodie.table.keygenerator.class"])
        payload = props.get("hoodie.compaction.payload.class") or None
        if props.get("hoodie.record.merge.mode"):
            mode = typed(
                "hoodie.record.merge.mode",
                "",
                choice(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM_MERGE),
            )
        elif payload:
            mode = merge_mode_for_payload(payload)
        elif version < 8:
            # Hudi 0.x's default payload is OverwriteWithLatestAvroPayload.
            mode = COMMIT_TIME_ORDERING
        else:
            mode = EVENT_TIME_ORDERING if order else COMMIT_TIME_ORDERING
        return cls(
            name=name,
            table_type=typed("hoodie.table.type", "COPY_ON_WRITE", parse_table_type),
            table_version=version,
            record_key_fields=keys,
            partition_fields=parts,
            ordering_fields=order,
            keygen_type=kg or infer_keygen_type(keys, parts),
            hive_style=typed(
                "hoodie.datasource.write.hive_style_partitioning", "false", parse_bool
            ),
            url_encode=typed(
                "hoodie.datasource.write.partitionpath.urlencode", "false", parse_bool
            ),
            database=props.get("hoodie.database.name") or "default",
            create_schema=props.get("hoodie.table.create.schema") or None,
            merge_mode=mode,
            payload_class=payload,
            populate_meta_fields=typed("hoodie.populate.meta.fields", "true", parse_bool),
            props=dict(props),
        )

    # ---- rendering -------------------------------------------------------------------------

    def to_properties(self) -> dict[str, str]:
        """Every key for ``hoodie.properties`` of this table version, checksum last.

        Keys of ``props`` that are not managed here (and not forbidden) are kept after the
        managed ones, in their original order.
        """
        v8 = self.table_version >= 8
        out: dict[str, str] = {
            "hoodie.table.name": self.name,
            "hoodie.table.type": self.table_type,
            "hoodie.table.version": str(self.table_version),
        }
        if v8:
            initial = self.props.get("hoodie.table.initial.version", str(self.table_version))
            out["hoodie.table.initial.version"] = initial
        out["hoodie.timeline.layout.version"] = str(self.layout_version)
        if self.record_key_fields:
            out["hoodie.table.recordkey.fields"] = ",".join(self.record_key_fields)
        if self.ordering_fields:
            # v9 renamed the key (and allows several fields).
            order_key = "hoodie.table.ordering.fields" if self.table_version >= 9 else None
            out[order_key or "hoodie.table.precombine.field"] = ",".join(self.ordering_fields)
        # Always present: an empty value is how readers recognise a non-partitioned table.
        out["hoodie.table.partition.fields"] = ",".join(self.partition_fields)
        if v8:
            out["hoodie.table.keygenerator.type"] = self.keygen_type
        else:
            out["hoodie.table.keygenerator.class"] = self.props.get(
                "hoodie.table.keygenerator.class", KEYGEN_CLASSES[self.keygen_type]
            )
            if keygen_type_from_class(out["hoodie.table.keygenerator.class"]) != self.keygen_type:
                out["hoodie.table.keygenerator.class"] = KEYGEN_CLASSES[self.keygen_type]
        out["hoodie.table.base.file.format"] = "PARQUET"
        out["hoodie.datasource.write.hive_style_partitioning"] = _to_text(self.hive_style)
        out["hoodie.datasource.write.partitionpath.urlencode"] = _to_text(self.url_encode)
        out["hoodie.populate.meta.fields"] = _to_text(self.populate_meta_fields)
        if self.create_schema:
            out["hoodie.table.create.schema"] = self.create_schema
        out["hoodie.database.name"] = self.database
        # Java's default is LOCAL, which makes instant times depend on the writer's zone: new
        # tables say UTC; an existing table without the key keeps Java's default.
        tz = self.props.get("hoodie.table.timeline.timezone")
        if tz is None and "hoodie.table.checksum" not in self.props:
            tz = "UTC"
        if tz is not None:
            out["hoodie.table.timeline.timezone"] = tz
        if v8:
            out["hoodie.record.merge.mode"] = self.merge_mode
            strategy = {
                EVENT_TIME_ORDERING: EVENT_TIME_STRATEGY_ID,
                COMMIT_TIME_ORDERING: COMMIT_TIME_STRATEGY_ID,
            }.get(self.merge_mode, self.props.get("hoodie.record.merge.strategy.id"))
            if strategy:
                out["hoodie.record.merge.strategy.id"] = strategy
        elif "hoodie.record.merge.mode" in self.props:
            out["hoodie.record.merge.mode"] = self.merge_mode
        # new() always resolves a payload; a table read from disk keeps what it had.
        if self.payload_class and self.table_version < 9:
            out["hoodie.compaction.payload.class"] = self.payload_class
        if v8:
            out["hoodie.timeline.path"] = self.props.get("hoodie.timeline.path", "timeline")
            out["hoodie.timeline.history.path"] = self.props.get(
                "hoodie.timeline.history.path", "history"
            )
        out["hoodie.archivelog.folder"] = self.props.get("hoodie.archivelog.folder", "archived")
        out["hoodie.datasource.write.drop.partition.columns"] = "false"
        for k, v in self.props.items():
            if k not in out and k not in _MANAGED_KEYS and k not in _FORBIDDEN_KEYS:
                out[k] = v
        out["hoodie.table.checksum"] = str(self.checksum)
        return out

    def render(self, comment: str | None = None) -> str:
        """``hoodie.properties`` text for this config."""
        return render_properties(self.to_properties(), comment)
