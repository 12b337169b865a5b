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

from __future__ import annotations

from hudilite.config.keys_index import *  # noqa: F403
from hudilite.config.keys_lock import *  # noqa: F403
from hudilite.config.keys_read import *  # noqa: F403
from hudilite.config.keys_services import *  # noqa: F403
from hudilite.config.keys_table import *  # noqa: F403
from hudilite.config.keys_write import *  # noqa: F403
from hudilite.config.parsers import (
    choice as choice,
)
from hudilite.config.parsers import (
    parse_bool as parse_bool,
)
from hudilite.config.parsers import (
    parse_fields as parse_fields,
)
from hudilite.config.parsers import (
    parse_int as parse_int,
)
from hudilite.config.parsers import (
    parse_seconds as parse_seconds,
)
from hudilite.config.parsers import (
    parse_size as parse_size,
)
from hudilite.config.parsers import (
    parse_table_type as parse_table_type,
)
from hudilite.config.parsers import (
    to_text as to_text,
)
from hudilite.config.properties import (
    parse_properties as parse_properties,
)
from hudilite.config.properties import (
    render_properties as render_properties,
)
from hudilite.config.properties import (
    table_checksum as table_checksum,
)
from hudilite.config.registry import (
    SCOPES as SCOPES,
)
from hudilite.config.registry import (
    ConfigKey as ConfigKey,
)
from hudilite.config.registry import (
    Options as Options,
)
from hudilite.config.registry import (
    all_keys as all_keys,
)
from hudilite.config.registry import (
    declare as declare,
)
from hudilite.config.registry import (
    fed_by as fed_by,
)
from hudilite.config.registry import (
    find_key as find_key,
)
from hudilite.config.table_config import (
    SUPPORTED_TABLE_VERSIONS as SUPPORTED_TABLE_VERSIONS,
)
from hudilite.config.table_config import (
    TableConfig as TableConfig,
)
from hudilite.config.table_config import (
    is_table_property as is_table_property,
)
from hudilite.config.vocab import (
    COMMIT_TIME_ORDERING as COMMIT_TIME_ORDERING,
)
from hudilite.config.vocab import (
    COMMIT_TIME_STRATEGY_ID as COMMIT_TIME_STRATEGY_ID,
)
from hudilite.config.vocab import (
    CUSTOM_MERGE as CUSTOM_MERGE,
)
from hudilite.config.vocab import (
    DEFAULT_PAYLOAD as DEFAULT_PAYLOAD,
)
from hudilite.config.vocab import (
    EVENT_TIME_ORDERING as EVENT_TIME_ORDERING,
)
from hudilite.config.vocab import (
    EVENT_TIME_PAYLOAD as EVENT_TIME_PAYLOAD,
)
from hudilite.config.vocab import (
    EVENT_TIME_STRATEGY_ID as EVENT_TIME_STRATEGY_ID,
)
from hudilite.config.vocab import (
    KEYGEN_CLASSES as KEYGEN_CLASSES,
)
from hudilite.config.vocab import (
    KEYGEN_TYPES as KEYGEN_TYPES,
)
from hudilite.config.vocab import (
    OVERWRITE_PAYLOAD as OVERWRITE_PAYLOAD,
)
from hudilite.config.vocab import (
    PARTIAL_UPDATE_PAYLOAD as PARTIAL_UPDATE_PAYLOAD,
)
from hudilite.config.vocab import (
    PAYLOADS as PAYLOADS,
)
from hudilite.config.vocab import (
    infer_keygen_type as infer_keygen_type,
)
from hudilite.config.vocab import (
    keygen_type_from_class as keygen_type_from_class,
)
from hudilite.config.vocab import (
    merge_mode_for_payload as merge_mode_for_payload,
)
from hudilite.config.vocab import (
    normalize_keygen_type as normalize_keygen_type,
)
from hudilite.config.vocab import (
    payload_for_merge_mode as payload_for_merge_mode,
)
from hudilite.errors import ConfigError as ConfigError

#: Every declared key, once each (``all_keys()`` for keys declared after import).
ALL_KEYS: tuple[ConfigKey, ...] = all_keys()
