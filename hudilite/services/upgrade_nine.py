"""Table version 8 <-> 9: the property and index-definition changes of Hudi 1.1's
``EightToNineUpgradeHandler`` and ``NineToEightDowngradeHandler``.

Versions 8 and 9 share the timeline layout, file names and metadata encodings; what
changes is ``hoodie.properties`` (RFC-97, payload classes deprecated in favour of merge
modes) and the index definitions file. :func:`upgrade_properties` and
:func:`downgrade_properties` turn one version's properties into the other's exactly as the
handlers' change sets do (keys added, then keys removed, with the table version), so a
table Hudi wrote keeps every other key as it was:

upgrade 8 -> 9
    ``hoodie.record.merge.strategy.id`` is removed unless the merge mode is CUSTOM; a CUSTOM
    table whose payload Hudi deprecated gets that payload's mode and built-in strategy;
    the payload class (``hoodie.compaction.payload.class``, else the default Hudi infers
    from the merge mode) moves to ``hoodie.table.legacy.payload.class`` when it is one of
    the eight deprecated payloads; ``PartialUpdateAvroPayload`` and
    ``OverwriteNonDefaultsWithLatestAvroPayload`` get ``hoodie.table.partial.update.mode=
    IGNORE_DEFAULTS``; ``AWSDmsAvroPayload`` (or delete options given to the upgrade) get
    ``hoodie.record.merge.property.hoodie.payload.delete.field``/``.marker``; the ordering
    field moves from ``hoodie.table.precombine.field`` to ``hoodie.table.ordering.fields``;
downgrade 9 -> 8
    ``hoodie.table.partial.update.mode`` is removed; a legacy payload class goes back to
    ``hoodie.compaction.payload.class`` (payloads other than the overwrite, default and
    event-time ones make the table CUSTOM with the payload-based strategy), the AWS DMS and
    Postgres Debezium merge properties are removed; the ordering fields go back to the
    precombine key.

Index definitions (``hoodie.table.index.defs.path``): the upgrade gives every definition
without a ``version`` the version ``V1``; the downgrade drops definitions above ``V1`` (Hudi
drops their metadata-table partitions, which removes them from the file). Both handlers
refuse a table whose complex key generator has one record key field, unless
``hoodie.write.complex.keygen.validation.enable=false``. ``PostgresDebeziumAvroPayload``
moves to event time on ``_event_lsn`` with ``FILL_UNAVAILABLE`` and its merge properties
(and back); ``MySqlDebeziumAvroPayload`` moves to event time on the two ordering fields
``_event_bin_file,_event_pos`` with its delete merge properties, and back to the precombine
field ``_event_seq`` (the downgrade handler leaves its merge properties, as Hudi's does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hudilite import config as cfg
from hudilite.config.table_config import (
    LEGACY_PAYLOAD_KEY,
    MERGE_PROPERTY_PREFIX,
    PARTIAL_UPDATE_MODE_KEY,
    PAYLOAD_STRATEGY_ID,
    V9_PAYLOAD_MIGRATIONS,
    simple_class_name,
)
from hudilite.config.vocab import DEBEZIUM_SEQ_COL
from hudilite.errors import ConfigError, CorruptFileError
from hudilite.storage.fs import FileSystemGateway

PAYLOAD_KEY = "hoodie.compaction.payload.class"
STRATEGY_KEY = "hoodie.record.merge.strategy.id"
#: ``RECORD_MERGE_STRATEGY_ID``'s alternative key: Hudi sets and clears both together.
STRATEGY_ALT_KEY = "hoodie.compaction.record.merger.strategy"
MERGE_MODE_KEY = "hoodie.record.merge.mode"
PRECOMBINE_KEY = "hoodie.table.precombine.field"
ORDERING_KEY = "hoodie.table.ordering.fields"
INDEX_DEFS_KEY = "hoodie.table.index.defs.path"
DEFAULT_INDEX_DEFS = ".hoodie/.index_defs/index.json"

_PKG = "org.apache.hudi.common.model."
_DEFAULT_PAYLOAD = _PKG + "DefaultHoodieRecordPayload"
_OVERWRITE_PAYLOAD = _PKG + "OverwriteWithLatestAvroPayload"
_DEBEZIUM_PAYLOADS = ("MySqlDebeziumAvroPayload", "PostgresDebeziumAvroPayload")
#: ``UpgradeDowngradeUtils.PAYLOAD_CLASSES_TO_HANDLE`` (simple names).
_HANDLED_PAYLOADS = frozenset(V9_PAYLOAD_MIGRATIONS) | frozenset(_DEBEZIUM_PAYLOADS)
#: The payloads a CUSTOM v8 table is moved to a built-in merge mode for on upgrade
#: (``PAYLOADS_MAPPED_TO_*_MERGE_MODE``: not the default and overwrite payloads).
_REMAPPED = frozenset(
    {
        "EventTimeAvroPayload",
        "PartialUpdateAvroPayload",
        "AWSDmsAvroPayload",
        "OverwriteNonDefaultsWithLatestAvroPayload",
        "PostgresDebeziumAvroPayload",
        "MySqlDebeziumAvroPayload",
    }
)
#: Legacy payloads that stay with their own merge mode on downgrade.
_PLAIN = ("OverwriteWithLatestAvroPayload", "DefaultHoodieRecordPayload", "EventTimeAvroPayload")
_STRATEGY_OF_MODE = {
    cfg.EVENT_TIME_ORDERING: cfg.EVENT_TIME_STRATEGY_ID,
    cfg.COMMIT_TIME_ORDERING: cfg.COMMIT_TIME_STRATEGY_ID,
}


def check_complex_keygen(props: Mapping[str, str], options: cfg.Options, direction: str) -> None:
    """Hudi's ``isComplexKeyGeneratorWithSingleRecordKeyField`` guard of both handlers."""
    kg = props.get("hoodie.table.keygenerator.type") or ""
    kg_class = props.get("hoodie.table.keygenerator.class") or ""
    complex_kg = kg.upper() in (cfg.KEYGEN_COMPLEX, cfg.KEYGEN_COMPLEX + "_AVRO") or (
        cfg.keygen_type_from_class(kg_class) == cfg.KEYGEN_COMPLEX if kg_class else False
    )
    keys = cfg.parse_fields(props.get("hoodie.table.recordkey.fields", ""))
    if complex_kg and len(keys) == 1 and options.get(cfg.COMPLEX_KEYGEN_VALIDATION):
        raise ConfigError(
            f"cannot {direction}: the table uses the complex key generator with one record key "
            f"field ({keys[0]}), whose keys differ between Hudi releases (HUDI-7001); set "
            f"{cfg.COMPLEX_KEYGEN_VALIDATION.name}=false once its keys are checked"
        )


def payload_class_of(props: Mapping[str, str]) -> str:
    """Hudi's ``HoodieRecordPayload.getPayloadClassName`` of a table's properties."""
    for key in (PAYLOAD_KEY, LEGACY_PAYLOAD_KEY, "hoodie.datasource.write.payload.class"):
        if props.get(key):
            return props[key].replace("com.uber.hoodie", "org.apache.hudi")
    if props.get(MERGE_MODE_KEY) == cfg.COMMIT_TIME_ORDERING:
        return _OVERWRITE_PAYLOAD
    return _DEFAULT_PAYLOAD


def _apply(
    props: Mapping[str, str], add: dict[str, str], remove: list[str], version: int
) -> dict[str, str]:
    """Hudi's ``UpgradeDowngrade.run``: set the added keys, clear the removed ones, then the
    table version (the timeline layout stays 2)."""
    out = dict(props)
    out.update(add)
    for key in remove:
        out.pop(key, None)
    out["hoodie.table.version"] = str(version)
    out["hoodie.timeline.layout.version"] = "2"
    return out


def upgrade_properties(props: Mapping[str, str], options: cfg.Options) -> dict[str, str]:
    """Version 8 ``hoodie.properties`` as ``EightToNineUpgradeHandler`` leaves them."""
    check_complex_keygen(props, options, "upgrade to table version 9")
    payload = payload_class_of(props)
    simple = simple_class_name(payload)
    add: dict[str, str] = {}
    remove: list[str] = []
    # Merge mode: only a CUSTOM table keeps a strategy id.
    if props.get(MERGE_MODE_KEY) != cfg.CUSTOM_MERGE:
        remove += [STRATEGY_KEY, STRATEGY_ALT_KEY]
    if simple in _REMAPPED:
        mode = V9_PAYLOAD_MIGRATIONS[simple].merge_mode
        add[MERGE_MODE_KEY] = mode
        add[STRATEGY_KEY] = add[STRATEGY_ALT_KEY] = _STRATEGY_OF_MODE[mode]
    migration = V9_PAYLOAD_MIGRATIONS.get(simple)
    # Partial update mode and merge properties.
    if migration is not None and migration.partial_update_mode:
        add[PARTIAL_UPDATE_MODE_KEY] = migration.partial_update_mode
    if migration is not None and migration.merge_properties:
        for key, value in migration.merge_properties:
            add[MERGE_PROPERTY_PREFIX + key] = value
    elif options.get(cfg.DELETE_FIELD) and options.get(cfg.DELETE_MARKER):
        add[MERGE_PROPERTY_PREFIX + cfg.DELETE_FIELD.name] = str(options.get(cfg.DELETE_FIELD))
        add[MERGE_PROPERTY_PREFIX + cfg.DELETE_MARKER.name] = str(options.get(cfg.DELETE_MARKER))
    # Payload class.
    if simple in _HANDLED_PAYLOADS:
        add[LEGACY_PAYLOAD_KEY] = payload
        remove.append(PAYLOAD_KEY)
    # Ordering fields (a Debezium payload's own, as the handler sets them).
    ordering = props.get(ORDERING_KEY) or props.get(PRECOMBINE_KEY)
    if migration is not None and migration.ordering_fields:
        ordering = ",".join(migration.ordering_fields)
    if ordering:
        add[ORDERING_KEY] = ordering
        remove.append(PRECOMBINE_KEY)
    return _apply(props, add, remove, 9)


def downgrade_properties(props: Mapping[str, str], options: cfg.Options) -> dict[str, str]:
    """Version 9 ``hoodie.properties`` as ``NineToEightDowngradeHandler`` leaves them."""
    check_complex_keygen(props, options, "downgrade to table version 8")
    legacy = props.get(LEGACY_PAYLOAD_KEY) or ""
    simple = simple_class_name(legacy) if legacy else ""
    add: dict[str, str] = {}
    remove = [PARTIAL_UPDATE_MODE_KEY]
    if simple in _HANDLED_PAYLOADS:
        remove.append(LEGACY_PAYLOAD_KEY)
        add[PAYLOAD_KEY] = legacy
        if simple not in _PLAIN:
            add[STRATEGY_KEY] = add[STRATEGY_ALT_KEY] = PAYLOAD_STRATEGY_ID
            add[MERGE_MODE_KEY] = cfg.CUSTOM_MERGE
        if simple in ("AWSDmsAvroPayload", "PostgresDebeziumAvroPayload"):
            remove += [
                MERGE_PROPERTY_PREFIX + k for k, _ in V9_PAYLOAD_MIGRATIONS[simple].merge_properties
            ]
    ordering = props.get(ORDERING_KEY)
    if simple == "MySqlDebeziumAvroPayload":
        ordering = DEBEZIUM_SEQ_COL  # the handler's: the v8 payload orders by "file.pos"
    if ordering:
        add[PRECOMBINE_KEY] = ordering
        remove.append(ORDERING_KEY)
    return _apply(props, add, remove, 8)


# --------------------------------------------------------------------- index definitions


def index_defs_path(props: Mapping[str, str]) -> str:
    """Table-relative path of the index definitions file."""
    return (props.get(INDEX_DEFS_KEY) or "").strip().lstrip("/") or DEFAULT_INDEX_DEFS


def _read_defs(gw: FileSystemGateway, rel: str) -> dict | None:
    if not gw.exists(rel):
        return None
    try:
        data = json.loads(gw.read_bytes(rel).decode("utf-8"))
    except ValueError as exc:
        raise CorruptFileError(f"{rel}: not an index definitions file: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("indexDefinitions", {}), dict):
        raise CorruptFileError(f"{rel}: not an index definitions file")
    return data


def _write_defs(gw: FileSystemGateway, rel: str, data: dict) -> None:
    gw.write_bytes(rel, json.dumps(data, indent=2).encode("utf-8"))


def upgrade_index_defs(gw: FileSystemGateway, props: Mapping[str, str]) -> list[str]:
    """``populateIndexVersionIfMissing``: definitions without a version get ``V1``; returns
    their names (the file is rewritten only when there are any)."""
    rel = index_defs_path(props)
    data = _read_defs(gw, rel)
    if data is None:
        return []
    defs = data.get("indexDefinitions") or {}
    missing = [n for n, d in defs.items() if isinstance(d, dict) and not d.get("version")]
    for name in missing:
        defs[name]["version"] = "V1"
    if missing:
        _write_defs(gw, rel, data)
    return missing


def downgrade_index_defs(gw: FileSystemGateway, props: Mapping[str, str]) -> list[str]:
    """``dropNonV1IndexPartitions``: definitions of a version above ``V1`` are dropped (their
    metadata-table partitions are version 9 only); returns their names."""
    rel = index_defs_path(props)
    data = _read_defs(gw, rel)
    if data is None:
        return []
    defs = data.get("indexDefinitions") or {}
    dropped = [
        n
        for n, d in defs.items()
        if isinstance(d, dict) and d.get("version") and str(d["version"]).upper() != "V1"
    ]
    if dropped:
        data["indexDefinitions"] = {n: d for n, d in defs.items() if n not in dropped}
        _write_defs(gw, rel, data)
    return dropped


__all__ = [
    "check_complex_keygen",
    "downgrade_index_defs",
    "downgrade_properties",
    "index_defs_path",
    "payload_class_of",
    "upgrade_index_defs",
    "upgrade_properties",
]
