"""Option keys, their defaults and parsers, and the ``hoodie.properties`` codec.

A package of small modules; this module re-exports every name callers use
(``from hudilite import config as cfg; cfg.X`` and ``from hudilite.config import X``):

- :mod:`~hudilite.config.registry`: :class:`ConfigKey`, name/alias lookup, :class:`Options`.
- :mod:`~hudilite.config.parsers`: value parsers (``parse_bool``, ``parse_size``, ...).
- :mod:`~hudilite.config.vocab`: key generator and merge mode vocabulary.
- ``keys_table``, ``keys_write``, ``keys_read``, ``keys_index``, ``keys_services``,
  ``keys_lock``: the key declarations, by family.
- :mod:`~hudilite.config.properties`: the Java ``Properties`` codec.
- :mod:`~hudilite.config.table_config`: :class:`TableConfig` (``hoodie.properties``).
"""

from __future__ import annotations

from hudilite.config.keys_index import (
    BUCKET_HASH_FIELD,
    BUCKET_NUM,
    INDEX_TYPE,
)
from hudilite.config.keys_lock import (
    CONCURRENCY_MODE,
    HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TOLERABLE_MISSES,
    LOCK_FILESYSTEM_EXPIRE,
    LOCK_FILESYSTEM_PATH,
    LOCK_HEARTBEAT_INTERVAL_MS,
    LOCK_NUM_RETRIES,
    LOCK_PROVIDER,
    LOCK_RETRY_WAIT_MS,
    LOCK_STORAGE_RENEW_SECS,
    LOCK_STORAGE_VALIDITY_SECS,
    LOCK_WAIT_MS,
)
from hudilite.config.keys_read import (
    AS_OF_INSTANT,
    BEGIN_INSTANT,
    END_INSTANT,
    QUERY_TYPE,
    READ_IGNORE_MISSING_FILES,
)
from hudilite.config.keys_services import (
    AUTO_ARCHIVE,
    AUTO_CLEAN,
    CLEANER_COMMITS_RETAINED,
    CLUSTERING_BEGIN_PARTITION,
    CLUSTERING_END_PARTITION,
    CLUSTERING_LOOKBACK_PARTITIONS,
    CLUSTERING_MAX_BYTES_PER_GROUP,
    CLUSTERING_MAX_NUM_GROUPS,
    CLUSTERING_PARTITION_FILTER_MODE,
    CLUSTERING_PARTITION_REGEX,
    CLUSTERING_PARTITION_SELECTED,
    CLUSTERING_SINGLE_GROUP,
    CLUSTERING_SKIP_LATEST_PARTITIONS,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_SORT_COLUMNS,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
    INLINE_COMPACT,
    INLINE_COMPACT_DELTA_COMMITS,
    KEEP_MAX_COMMITS,
    KEEP_MIN_COMMITS,
    LAYOUT_OPTIMIZE_STRATEGY,
    SCHEDULE_INLINE_COMPACT,
)
from hudilite.config.keys_table import (
    CHANGELOG_ENABLED,
    DATABASE_NAME,
    DELETE_FIELD,
    DELETE_MARKER,
    HIVE_STYLE,
    KEYGEN_CLASS,
    KEYGEN_TYPE,
    MERGE_MODE,
    OPERATION,
    ORDERING_FIELDS,
    PARTITION_FIELDS,
    PAYLOAD_CLASS,
    POPULATE_META_FIELDS,
    RECORDKEY_FIELDS,
    TABLE_NAME,
    TABLE_TYPE,
    TABLE_VERSION,
    TIMESTAMP_INPUT_FORMAT,
    TIMESTAMP_OUTPUT_FORMAT,
    TIMESTAMP_TIMEZONE,
    TIMESTAMP_TYPE,
    URL_ENCODE,
)
from hudilite.config.keys_write import (
    COMBINE_BEFORE_INSERT,
    COMBINE_BEFORE_UPSERT,
    INSERT_DROP_DUPLICATES,
    KEY_CONFLICT_CHECK,
    LOG_BLOCK_FORMAT,
    MAX_FILE_SIZE,
    OPTIONAL_COLUMNS,
    RECORD_SIZE_ESTIMATE,
    SET_NULL_FOR_MISSING_COLUMNS,
    SMALL_FILE_LIMIT,
)
from hudilite.config.parsers import (
    _FALSE as _FALSE,
)
from hudilite.config.parsers import (
    _SIZE_RE as _SIZE_RE,
)
from hudilite.config.parsers import (
    _SIZE_UNITS as _SIZE_UNITS,
)
from hudilite.config.parsers import (
    _TRUE as _TRUE,
)
from hudilite.config.parsers import (
    _parse_seconds as _parse_seconds,
)
from hudilite.config.parsers import (
    _to_text as _to_text,
)
from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_size,
    parse_table_type,
)
from hudilite.config.properties import (
    _UNESCAPE as _UNESCAPE,
)
from hudilite.config.properties import (
    _escape as _escape,
)
from hudilite.config.properties import (
    _logical_lines as _logical_lines,
)
from hudilite.config.properties import (
    _unescape as _unescape,
)
from hudilite.config.properties import (
    parse_properties,
    render_properties,
    table_checksum,
)
from hudilite.config.registry import (
    _REGISTRY as _REGISTRY,
)
from hudilite.config.registry import (
    ConfigKey,
    Options,
    all_keys,
    find_key,
)
from hudilite.config.registry import (
    _key as _key,
)
from hudilite.config.table_config import (
    _FORBIDDEN_KEYS as _FORBIDDEN_KEYS,
)
from hudilite.config.table_config import (
    _MANAGED_KEYS as _MANAGED_KEYS,
)
from hudilite.config.table_config import (
    _TABLE_PROPERTY_PREFIXES as _TABLE_PROPERTY_PREFIXES,
)
from hudilite.config.table_config import (
    SUPPORTED_TABLE_VERSIONS,
    TableConfig,
    is_table_property,
)
from hudilite.config.vocab import (
    _KEYGEN_BY_SIMPLE_CLASS as _KEYGEN_BY_SIMPLE_CLASS,
)
from hudilite.config.vocab import (
    COMMIT_TIME_ORDERING,
    COMMIT_TIME_STRATEGY_ID,
    CUSTOM_MERGE,
    DEFAULT_PAYLOAD,
    EVENT_TIME_ORDERING,
    EVENT_TIME_PAYLOAD,
    EVENT_TIME_STRATEGY_ID,
    KEYGEN_CLASSES,
    KEYGEN_TYPES,
    OVERWRITE_PAYLOAD,
    PARTIAL_UPDATE_PAYLOAD,
    PAYLOADS,
    infer_keygen_type,
    keygen_type_from_class,
    merge_mode_for_payload,
    normalize_keygen_type,
    payload_for_merge_mode,
)
from hudilite.errors import ConfigError

ALL_KEYS: tuple[ConfigKey, ...] = all_keys()

__all__ = [
    "ALL_KEYS",
    "AS_OF_INSTANT",
    "AUTO_ARCHIVE",
    "AUTO_CLEAN",
    "BEGIN_INSTANT",
    "BUCKET_HASH_FIELD",
    "BUCKET_NUM",
    "CHANGELOG_ENABLED",
    "CLEANER_COMMITS_RETAINED",
    "CLUSTERING_BEGIN_PARTITION",
    "CLUSTERING_END_PARTITION",
    "CLUSTERING_LOOKBACK_PARTITIONS",
    "CLUSTERING_MAX_BYTES_PER_GROUP",
    "CLUSTERING_MAX_NUM_GROUPS",
    "CLUSTERING_PARTITION_FILTER_MODE",
    "CLUSTERING_PARTITION_REGEX",
    "CLUSTERING_PARTITION_SELECTED",
    "CLUSTERING_SINGLE_GROUP",
    "CLUSTERING_SKIP_LATEST_PARTITIONS",
    "CLUSTERING_SMALL_FILE_LIMIT",
    "CLUSTERING_SORT_COLUMNS",
    "CLUSTERING_TARGET_FILE_MAX_BYTES",
    "COMBINE_BEFORE_INSERT",
    "COMBINE_BEFORE_UPSERT",
    "COMMIT_TIME_ORDERING",
    "COMMIT_TIME_STRATEGY_ID",
    "CONCURRENCY_MODE",
    "CUSTOM_MERGE",
    "DATABASE_NAME",
    "DEFAULT_PAYLOAD",
    "DELETE_FIELD",
    "DELETE_MARKER",
    "END_INSTANT",
    "EVENT_TIME_ORDERING",
    "EVENT_TIME_PAYLOAD",
    "EVENT_TIME_STRATEGY_ID",
    "HEARTBEAT_INTERVAL_MS",
    "HEARTBEAT_TOLERABLE_MISSES",
    "HIVE_STYLE",
    "INDEX_TYPE",
    "INLINE_COMPACT",
    "INLINE_COMPACT_DELTA_COMMITS",
    "INSERT_DROP_DUPLICATES",
    "KEEP_MAX_COMMITS",
    "KEEP_MIN_COMMITS",
    "KEYGEN_CLASS",
    "KEYGEN_CLASSES",
    "KEYGEN_TYPE",
    "KEYGEN_TYPES",
    "KEY_CONFLICT_CHECK",
    "LAYOUT_OPTIMIZE_STRATEGY",
    "LOCK_FILESYSTEM_EXPIRE",
    "LOCK_FILESYSTEM_PATH",
    "LOCK_HEARTBEAT_INTERVAL_MS",
    "LOCK_NUM_RETRIES",
    "LOCK_PROVIDER",
    "LOCK_RETRY_WAIT_MS",
    "LOCK_STORAGE_RENEW_SECS",
    "LOCK_STORAGE_VALIDITY_SECS",
    "LOCK_WAIT_MS",
    "LOG_BLOCK_FORMAT",
    "MAX_FILE_SIZE",
    "MERGE_MODE",
    "OPERATION",
    "OPTIONAL_COLUMNS",
    "ORDERING_FIELDS",
    "OVERWRITE_PAYLOAD",
    "PARTIAL_UPDATE_PAYLOAD",
    "PARTITION_FIELDS",
    "PAYLOADS",
    "PAYLOAD_CLASS",
    "POPULATE_META_FIELDS",
    "QUERY_TYPE",
    "READ_IGNORE_MISSING_FILES",
    "RECORDKEY_FIELDS",
    "RECORD_SIZE_ESTIMATE",
    "SCHEDULE_INLINE_COMPACT",
    "SET_NULL_FOR_MISSING_COLUMNS",
    "SMALL_FILE_LIMIT",
    "SUPPORTED_TABLE_VERSIONS",
    "TABLE_NAME",
    "TABLE_TYPE",
    "TABLE_VERSION",
    "TIMESTAMP_INPUT_FORMAT",
    "TIMESTAMP_OUTPUT_FORMAT",
    "TIMESTAMP_TIMEZONE",
    "TIMESTAMP_TYPE",
    "URL_ENCODE",
    "ConfigError",
    "ConfigKey",
    "Options",
    "TableConfig",
    "all_keys",
    "choice",
    "find_key",
    "infer_keygen_type",
    "is_table_property",
    "keygen_type_from_class",
    "merge_mode_for_payload",
    "normalize_keygen_type",
    "parse_bool",
    "parse_fields",
    "parse_int",
    "parse_properties",
    "parse_size",
    "parse_table_type",
    "payload_for_merge_mode",
    "render_properties",
    "table_checksum",
]
