"""Changing a table's properties after creation: ALTER TABLE SET/UNSET TBLPROPERTIES, RENAME.

A table keeps options in two files (see ``Table.create`` and ``TableState.options``):

* ``.hoodie/hoodie.properties`` -- Hudi's table config, read by every Hudi reader. Keys
  for which :func:`hudilite.config.is_table_property` holds go here.
* ``.hoodie/hudilite.properties`` (``WRITE_DEFAULTS_FILE``) -- write options that are not
  Hudi table properties (small-file limit, ...), applied to every later write.

Options are named as the user likes (``primaryKey``, ``preCombineField``, ``type``, Flink
names...); each is resolved to its canonical key the way :class:`hudilite.config.Options`
resolves it, stored under that name, and every other spelling of it is removed from both
files so an old alias cannot shadow the new value.

Some properties describe data already on disk and cannot change (Hudi's
``HoodieWriterUtils.validateTableConfig`` rejects a different record key, precombine field,
key generator or partition path; the rest below fix the file layout or the meaning of
stored records): changing one raises :class:`ConfigError` naming the key and its current
value. Setting one to its current value is allowed (nothing to change). The index type and
bucket settings are fixed once the table holds data (records were placed by them).

``hoodie.properties`` is rewritten by :mod:`hudilite.tablestate.properties_file` the way Hudi's
``HoodieTableConfig.modify`` does it (backup, new file, read-back, backup removed; the
checksum recomputed). Keys hudilite does not know are kept verbatim. Every change runs
under the table's commit lock, so two concurrent changes do not lose each other's keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from hudilite import config as cfg
from hudilite.config.table_config import (
    ARCHIVE_FOLDER_DEFAULT,
    ARCHIVE_FOLDER_KEY,
    HISTORY_PATH_KEY,
)
from hudilite.errors import ConfigError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.properties_file import BACKUP_FILE as BACKUP_FILE  # re-exported
from hudilite.tablestate.properties_file import CHECKSUM_KEY
from hudilite.tablestate.properties_file import read_write_defaults as read_write_defaults
from hudilite.tablestate.state import WRITE_DEFAULTS_FILE, TableState
from hudilite.write.lock import table_lock

# Fixed at creation: they say how records are keyed, partitioned, merged and laid out.
_FIXED_KEYS: tuple[cfg.ConfigKey, ...] = (
    cfg.TABLE_TYPE,
    cfg.TABLE_VERSION,
    cfg.DATABASE_NAME,
    cfg.RECORDKEY_FIELDS,
    cfg.ORDERING_FIELDS,
    cfg.PARTITION_FIELDS,
    cfg.KEYGEN_TYPE,
    cfg.KEYGEN_CLASS,
    cfg.TIMESTAMP_TYPE,
    cfg.TIMESTAMP_INPUT_FORMAT,
    cfg.TIMESTAMP_OUTPUT_FORMAT,
    cfg.TIMESTAMP_TIMEZONE,
    cfg.HIVE_STYLE,
    cfg.URL_ENCODE,
    cfg.POPULATE_META_FIELDS,
    cfg.CHANGELOG_ENABLED,
    cfg.MERGE_MODE,
    cfg.PAYLOAD_CLASS,
)
# Fixed once data exists: the index placed every record by them.
_FIXED_ONCE_WRITTEN: tuple[cfg.ConfigKey, ...] = (
    cfg.INDEX_TYPE,
    cfg.BUCKET_NUM,
    cfg.BUCKET_HASH_FIELD,
)
# hoodie.properties keys outside the option registry that are just as fixed.
_FIXED_RAW = frozenset(
    {
        "hoodie.table.initial.version",
        "hoodie.timeline.layout.version",
        "hoodie.table.base.file.format",
        "hoodie.table.create.schema",  # changed by add_columns, which commits the schema
        cfg.TIMELINE_TIMEZONE.name,
        "hoodie.timeline.path",
        HISTORY_PATH_KEY,
        ARCHIVE_FOLDER_KEY,
        "hoodie.datasource.write.drop.partition.columns",
        "hoodie.record.merge.strategy.id",
        "hoodie.table.metadata.partitions",
        "hoodie.table.metadata.partitions.inflight",
        CHECKSUM_KEY,
    }
)
# What readers assume when a table's hoodie.properties lacks one of those keys.
_RAW_DEFAULTS = {
    "hoodie.table.base.file.format": "PARQUET",
    ARCHIVE_FOLDER_KEY: ARCHIVE_FOLDER_DEFAULT,
    "hoodie.datasource.write.drop.partition.columns": "false",
}
_TABLE_NAME = re.compile(r"[A-Za-z0-9_\-]+")

Changes = dict[str, str | None]  # key -> new value, None = remove


# ------------------------------------------------------------------------- file handling


def read_table_properties(gw: FileSystemGateway) -> dict[str, str]:
    """``hoodie.properties`` as stored, recovering from an interrupted rewrite first (the
    caller holds the table lock)."""
    return properties_file.recover(gw)


def store_table_properties(gw: FileSystemGateway, props: Mapping[str, str]) -> dict[str, str]:
    """Replace ``hoodie.properties`` with ``props``; see :func:`properties_file.store`."""
    return properties_file.store(gw, props)


def update_table_properties(
    gw: FileSystemGateway,
    changes: Mapping[str, str | None],
    *,
    write_defaults: Mapping[str, str | None] | None = None,
) -> None:
    """Set (or, with ``None``, remove) keys of ``hoodie.properties`` and of the write
    defaults under the table lock.

    Used by schema evolution (``hoodie.table.create.schema``, optional columns); no check
    of what may change happens here.
    """
    with table_lock(gw):
        _apply(gw, dict(changes), dict(write_defaults or {}))


def _apply(gw: FileSystemGateway, table: Changes, defaults: Changes) -> None:
    """Write both files' changes (the caller holds the lock); unchanged files are not
    rewritten."""
    if table:
        props = read_table_properties(gw)
        new = _changed(props, table)
        if new != props:
            store_table_properties(gw, new)
    if defaults:
        current = read_write_defaults(gw)
        new = _changed(current, defaults)
        if new != current:
            if new:
                gw.write_bytes(WRITE_DEFAULTS_FILE, properties_file.encode(new))
            else:
                gw.delete_file(WRITE_DEFAULTS_FILE)


def _changed(props: Mapping[str, str], changes: Changes) -> dict[str, str]:
    out = dict(props)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


# ------------------------------------------------------------------------ what may change


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return "(unset)" if value is None else str(value)


def _current(state: TableState, key: cfg.ConfigKey) -> Any:
    """The typed value a fixed key has now (from the table config where it lives there)."""
    c = state.config
    typed = {
        cfg.TABLE_NAME.name: c.name,
        cfg.DATABASE_NAME.name: c.database,
        cfg.TABLE_TYPE.name: c.table_type,
        cfg.TABLE_VERSION.name: c.table_version,
        cfg.RECORDKEY_FIELDS.name: c.record_key_fields,
        cfg.ORDERING_FIELDS.name: c.ordering_fields,
        cfg.PARTITION_FIELDS.name: c.partition_fields,
        cfg.KEYGEN_TYPE.name: c.keygen_type,
        cfg.KEYGEN_CLASS.name: c.props.get("hoodie.table.keygenerator.class")
        or cfg.KEYGEN_CLASSES.get(c.keygen_type),
        cfg.HIVE_STYLE.name: c.hive_style,
        cfg.URL_ENCODE.name: c.url_encode,
        cfg.POPULATE_META_FIELDS.name: c.populate_meta_fields,
        cfg.MERGE_MODE.name: c.merge_mode,
        cfg.PAYLOAD_CLASS.name: c.payload_class,
    }
    if key.name in typed:
        return typed[key.name]
    return state.options().get(key)


def _same(state: TableState, key: cfg.ConfigKey, value: str) -> bool:
    """Whether ``value`` is what the fixed ``key`` already is."""
    current = _current(state, key)
    if key is cfg.KEYGEN_CLASS:
        return cfg.keygen_type_from_class(value) == state.config.keygen_type
    try:
        parsed = key.parse(value)
    except (ValueError, TypeError):
        return False
    if key is cfg.ORDERING_FIELDS and not parsed and not current:
        return True
    return bool(parsed == current)


def _fixed_reason(state: TableState, name: str, key: cfg.ConfigKey | None) -> str | None:
    """Why ``name`` cannot change, or None when it may."""
    if key is cfg.TABLE_NAME:
        return "use rename() to change the table name"
    canonical = key.name if key is not None else name
    if (key is not None and key in _FIXED_KEYS) or canonical.lower() in _FIXED_RAW:
        return "it is fixed when the table is created"
    if key is not None and key in _FIXED_ONCE_WRITTEN and state.timeline.commits():
        return "the table's records were placed by it"
    return None


def _raw_value(state: TableState, name: str) -> str:
    """A key outside the registry as stored (or as readers default it), ``""`` if unset."""
    props = state.config.props
    return props.get(name, _RAW_DEFAULTS.get(name.lower(), ""))


def _refuse(state: TableState, name: str, key: cfg.ConfigKey | None, why: str) -> ConfigError:
    current = _current(state, key) if key is not None else (_raw_value(state, name) or None)
    shown = f"{name!r}" if key is None or key.name == name else f"{name!r} ({key.name})"
    return ConfigError(
        f"cannot change table property {shown}: {why} (current value: {_text(current)!r})"
    )


def _spellings(
    name: str, key: cfg.ConfigKey | None, *files: Mapping[str, str]
) -> dict[int, list[str]]:
    """For each file (by position), its keys that spell ``key`` (any alias, any case)."""
    names = {n.lower() for n in (key.all_names() if key is not None else (name,))}
    return {i: [k for k in f if k.lower() in names] for i, f in enumerate(files)}


def _plan_set(state: TableState, props: Mapping[str, Any]) -> tuple[Changes, Changes]:
    table: Changes = {}
    defaults: Changes = {}
    stored, written = state.config.props, read_write_defaults(state.gw)
    for raw_name, raw_value in props.items():
        name, value = str(raw_name).strip(), _text(raw_value)
        if not name:
            raise ConfigError("a property key must not be empty")
        key = cfg.find_key(name)
        why = _fixed_reason(state, name, key)
        if why is not None:
            raw_name = key.name if key is not None else name
            same = (
                _same(state, key, value)
                if key is not None and raw_name.lower() not in _FIXED_RAW
                else _raw_value(state, raw_name).strip().lower() == value.strip().lower()
            )
            if same:
                continue  # nothing changes
            raise _refuse(state, name, key, why)
        if key is not None:
            cfg.Options({key.name: value}).get(key)  # a malformed value raises, naming the key
        canonical = key.name if key is not None else name
        spelled = _spellings(name, key, stored, written)
        for k in spelled[0]:
            table[k] = None
        for k in spelled[1]:
            defaults[k] = None
        target = table if cfg.is_table_property(canonical) else defaults
        target[canonical] = value
    return table, defaults


def set_properties(state: TableState, props: Mapping[str, Any]) -> None:
    """ALTER TABLE SET TBLPROPERTIES: store ``props`` (see module docstring).

    Raises :class:`ConfigError` for a fixed property given a new value (naming the key
    and its current value) and for a value the key's parser rejects; nothing is written
    then.
    """
    if not props:
        return
    with table_lock(state.gw):
        state = TableState.load(state.gw)  # decide on what is on disk now
        table, defaults = _plan_set(state, props)
        _apply(state.gw, table, defaults)


def unset_properties(state: TableState, keys: Iterable[str]) -> None:
    """ALTER TABLE UNSET TBLPROPERTIES: remove ``keys`` (every spelling) from both files.

    Keys that are not set are ignored; a fixed property raises :class:`ConfigError`.
    """
    if isinstance(keys, str):
        keys = [keys]
    names = [str(k).strip() for k in keys if str(k).strip()]
    if not names:
        return
    with table_lock(state.gw):
        state = TableState.load(state.gw)
        stored, written = state.config.props, read_write_defaults(state.gw)
        table: Changes = {}
        defaults: Changes = {}
        for name in names:
            key = cfg.find_key(name)
            spelled = _spellings(name, key, stored, written)
            present = bool(spelled[0] or spelled[1])
            why = _fixed_reason(state, name, key)
            always_fixed = why is not None and (
                key is None or key not in _FIXED_ONCE_WRITTEN or key is cfg.TABLE_NAME
            )
            if why is not None and (always_fixed or present):
                raise _refuse(state, name, key, why)
            table.update(dict.fromkeys(spelled[0]))
            defaults.update(dict.fromkeys(spelled[1]))
        _apply(state.gw, table, defaults)


def rename_table(state: TableState, new_name: str) -> None:
    """Change ``hoodie.table.name`` (and the checksum); no file moves."""
    name = str(new_name).strip()
    if not _TABLE_NAME.fullmatch(name):
        raise ConfigError(
            f"invalid value {new_name!r} for option 'hoodie.table.name' "
            "(letters, digits, '_' and '-')"
        )
    with table_lock(state.gw):
        props = read_table_properties(state.gw)
        changes: Changes = {k: name for k in _spellings("", cfg.TABLE_NAME, props)[0]}
        changes["hoodie.table.name"] = name
        _apply(state.gw, changes, {})
