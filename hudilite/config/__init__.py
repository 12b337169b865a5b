"""Option keys, their defaults and parsers, and the ``hoodie.properties`` codec.

A package of small modules; this module re-exports every name callers use
(``from hudilite import config as cfg; cfg.X`` and ``from hudilite.config import X``):

- :mod:`~hudilite.config.registry`: :class:`ConfigKey`, name/alias lookup, :class:`Options`
  (the one registry: every key any module reads is declared in a ``keys_*`` module).
- :mod:`~hudilite.config.checks`: unknown, unsupported and deprecated keys warn
  (:class:`~hudilite.errors.OptionWarning`), or raise with ``hudilite.options.strict=true``.
- :mod:`~hudilite.config.parsers`: value parsers (``parse_bool``, ``parse_size``, ...).
- :mod:`~hudilite.config.vocab`: key generator and merge mode vocabulary.
- ``keys_table``, ``keys_write``, ``keys_read``, ``keys_index``, ``keys_services``,
  ``keys_lock``, ``keys_flink``: the key declarations, by family. Every public name of a
  ``keys_*`` module is re-exported here (star import), so a new key needs no edit here.
- :mod:`~hudilite.config.properties`: the Java ``Properties`` codec.
- :mod:`~hudilite.config.table_config`: :class:`TableConfig` (``hoodie.properties``).
- :mod:`~hudilite.config.reference`: ``python -m hudilite.config.reference`` prints
  ``docs/options.md``.
"""

# ruff: noqa: F401  (this module re-exports)

from __future__ import annotations

from hudilite.config.checks import (
    STRICT_ENV_VAR,
    check_options,
    collect_warnings,
    is_strict,
    problem,
    suggestions,
)
from hudilite.config.keys_flink import *  # noqa: F403
from hudilite.config.keys_index import *  # noqa: F403
from hudilite.config.keys_lock import *  # noqa: F403
from hudilite.config.keys_read import *  # noqa: F403
from hudilite.config.keys_services import *  # noqa: F403
from hudilite.config.keys_table import *  # noqa: F403
from hudilite.config.keys_write import *  # noqa: F403
from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_seconds,
    parse_size,
    parse_table_type,
    to_text,
)
from hudilite.config.properties import (
    parse_properties,
    render_properties,
    table_checksum,
)
from hudilite.config.registry import (
    SCOPES,
    ConfigKey,
    Options,
    all_keys,
    declare,
    fed_by,
    find_key,
    is_table_property,
)
from hudilite.config.table_config import (
    METADATA_PARTITION_KEYS,
    SUPPORTED_TABLE_VERSIONS,
    TableConfig,
)
from hudilite.config.vocab import (
    CLUSTER_OPERATION,
    COMMIT_TIME_ORDERING,
    COMMIT_TIME_STRATEGY_ID,
    COMPACT_OPERATION,
    CUSTOM_MERGE,
    DEFAULT_PAYLOAD,
    EVENT_TIME_ORDERING,
    EVENT_TIME_PAYLOAD,
    EVENT_TIME_STRATEGY_ID,
    GLOBAL_INDEX_PREFIX,
    INDEX_BLOOM,
    INDEX_BUCKET,
    INDEX_OPERATION,
    INDEX_RECORD,
    INDEX_SIMPLE,
    INDEX_TYPES,
    KEYGEN_CLASSES,
    KEYGEN_COMPLEX,
    KEYGEN_CUSTOM,
    KEYGEN_NON_PARTITION,
    KEYGEN_SIMPLE,
    KEYGEN_TIMESTAMP,
    KEYGEN_TYPES,
    LOG_COMPACT_OPERATION,
    OP_BULK_INSERT,
    OP_DELETE,
    OP_DELETE_PARTITION,
    OP_INSERT,
    OP_INSERT_OVERWRITE,
    OP_INSERT_OVERWRITE_TABLE,
    OP_UPSERT,
    OPERATION_TYPES,
    OVERWRITE_PAYLOAD,
    PARTIAL_UPDATE_PAYLOAD,
    PAYLOADS,
    TABLE_SERVICE_OPERATIONS,
    WRITE_OPERATIONS,
    infer_keygen_type,
    keygen_type_from_class,
    merge_mode_for_payload,
    normalize_keygen_type,
    payload_for_merge_mode,
)
from hudilite.errors import ConfigError

#: Every declared key, once each (``all_keys()`` for keys declared after import).
ALL_KEYS: tuple[ConfigKey, ...] = all_keys()
