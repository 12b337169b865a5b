"""``TableConfig``: the typed view of ``.hoodie/hoodie.properties``.

``from_properties``/``to_properties`` read and write the keys listed in
``docs/dev/hudi-format.md`` §2 for table versions 6, 8 and 9.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudilite.config.parsers import (
    _to_text,
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_table_type,
)
from hudilite.config.properties import render_properties, table_checksum
from hudilite.config.registry import is_table_property
from hudilite.config.vocab import (
    COMMIT_TIME_ORDERING,
    COMMIT_TIME_STRATEGY_ID,
    CUSTOM_MERGE,
    EVENT_TIME_ORDERING,
    EVENT_TIME_STRATEGY_ID,
    KEYGEN_CLASSES,
    KEYGEN_NON_PARTITION,
    KEYGEN_SIMPLE,
    KEYGEN_TIMESTAMP,
    PAYLOADS,
    cdc_payload,
    infer_keygen_type,
    keygen_type_from_class,
    merge_mode_for_payload,
    normalize_keygen_type,
    payload_for_merge_mode,
)
from hudilite.errors import ConfigError

_TIMELINE_TZ = "hoodie.table.timeline.timezone"  # read only by TableConfig.timeline_utc
# The archive folder layout (Hudi's keys and defaults), read only by the properties below:
# v6 archives into .hoodie/<archivelog.folder>, v8+ into .hoodie/timeline/<history.path>.
ARCHIVE_FOLDER_KEY, ARCHIVE_FOLDER_DEFAULT = "hoodie.archivelog.folder", "archived"
HISTORY_PATH_KEY, HISTORY_PATH_DEFAULT = "hoodie.timeline.history.path", "history"
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
    _TIMELINE_TZ,
    "hoodie.record.merge.mode",
    "hoodie.record.merge.strategy.id",
    "hoodie.compaction.payload.class",
    "hoodie.timeline.path",
    HISTORY_PATH_KEY,
    ARCHIVE_FOLDER_KEY,
    "hoodie.datasource.write.drop.partition.columns",
    "hoodie.table.checksum",
)
#: Never written with a value: listing metadata partitions without maintaining the metadata
#: table makes Java and hudi-rs readers trust a stale file index and miss our files (a config
#: drops them; hoodie.properties rewrites blank them, see hudilite.tablestate.properties_file).
METADATA_PARTITION_KEYS = (
    "hoodie.table.metadata.partitions",
    "hoodie.table.metadata.partitions.inflight",
)
SUPPORTED_TABLE_VERSIONS = (6, 8, 9)

#: Hudi's ``PAYLOAD_BASED_MERGE_STRATEGY_UUID``: CUSTOM merging through a payload class.
PAYLOAD_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"
#: Version 9 keys (Hudi 1.1's ``HoodieTableConfig``).
TABLE_FORMAT_KEY = "hoodie.table.format"
NATIVE_FORMAT = "native"
LEGACY_PAYLOAD_KEY = "hoodie.table.legacy.payload.class"
PARTIAL_UPDATE_MODE_KEY = "hoodie.table.partial.update.mode"
MERGE_PROPERTIES_KEY = "hoodie.table.merge.properties"
MERGE_PROPERTY_PREFIX = "hoodie.record.merge.property."
_PAYLOAD_PACKAGE = "org.apache.hudi.common.model."


@dataclass(frozen=True)
class PayloadMigration:
    """What a version 9 table records instead of a payload class Hudi 1.1 deprecated (RFC-97):
    the merge mode, the partial update mode and the merge properties (without
    :data:`MERGE_PROPERTY_PREFIX`), as ``EightToNineUpgradeHandler`` sets them."""

    merge_mode: str
    partial_update_mode: str | None = None
    merge_properties: tuple[tuple[str, str], ...] = ()
    #: The ordering fields Hudi 1.1 sets whatever the caller gave (the Debezium payloads').
    ordering_fields: tuple[str, ...] = ()


#: Debezium's placeholder for an unchanged TOAST column, which Hudi 1.1's FILL_UNAVAILABLE
#: partial update replaces by the stored value (``HoodieTableConfig.DEBEZIUM_UNAVAILABLE_VALUE``).
DEBEZIUM_UNAVAILABLE_VALUE = "__debezium_unavailable_value"
#: The merge property naming the value FILL_UNAVAILABLE replaces (``PARTIAL_UPDATE_UNAVAILABLE_
#: VALUE``, stored as ``hoodie.record.merge.property.partial.update.unavailable.value``).
UNAVAILABLE_VALUE_PROPERTY = "partial.update.unavailable.value"
_DEBEZIUM_DELETES = (
    ("hoodie.payload.delete.field", "_change_operation_type"),
    ("hoodie.payload.delete.marker", "d"),
)
#: The ordering fields Hudi 1.1 gives a ``MySqlDebeziumAvroPayload`` table (the binlog file
#: name, then the position in it): the only several ordering fields hudilite merges by.
MYSQL_BINLOG_ORDERING = ("_event_bin_file", "_event_pos")

#: The deprecated payloads hudilite can merge (simple class name -> migration); the payload
#: classes are recorded as ``hoodie.table.legacy.payload.class``, as Hudi 1.1's
#: ``EightToNineUpgradeHandler`` and ``inferMergingConfigsForV9TableCreation`` record them.
V9_PAYLOAD_MIGRATIONS: dict[str, PayloadMigration] = {
    "DefaultHoodieRecordPayload": PayloadMigration(EVENT_TIME_ORDERING),
    "EventTimeAvroPayload": PayloadMigration(EVENT_TIME_ORDERING),
    "OverwriteWithLatestAvroPayload": PayloadMigration(COMMIT_TIME_ORDERING),
    "PartialUpdateAvroPayload": PayloadMigration(EVENT_TIME_ORDERING, "IGNORE_DEFAULTS"),
    "OverwriteNonDefaultsWithLatestAvroPayload": PayloadMigration(
        COMMIT_TIME_ORDERING, "IGNORE_DEFAULTS"
    ),
    "AWSDmsAvroPayload": PayloadMigration(
        COMMIT_TIME_ORDERING,
        None,
        (("hoodie.payload.delete.field", "Op"), ("hoodie.payload.delete.marker", "D")),
    ),
    # Event time by the log position, deletes by the operation column, and an unchanged
    # TOAST column filled from the stored row.
    "PostgresDebeziumAvroPayload": PayloadMigration(
        EVENT_TIME_ORDERING,
        "FILL_UNAVAILABLE",
        ((UNAVAILABLE_VALUE_PROPERTY, DEBEZIUM_UNAVAILABLE_VALUE), *_DEBEZIUM_DELETES),
        ("_event_lsn",),
    ),
    # Event time by the binlog file then position (two ordering fields), deletes by the
    # operation column.
    "MySqlDebeziumAvroPayload": PayloadMigration(
        EVENT_TIME_ORDERING, None, _DEBEZIUM_DELETES, MYSQL_BINLOG_ORDERING
    ),
}
#: Partial update modes hudilite merges (its columns default to null, so IGNORE_DEFAULTS is
#: "a null keeps the stored value"; FILL_UNAVAILABLE: a column holding the table's
#: unavailable value keeps the stored value).
SUPPORTED_PARTIAL_UPDATE_MODES = ("NONE", "IGNORE_DEFAULTS", "FILL_UNAVAILABLE")
#: Merge properties hudilite honours (aliases of its delete options, and FILL_UNAVAILABLE's
#: value).
SUPPORTED_MERGE_PROPERTIES = (
    "hoodie.payload.delete.field",
    "hoodie.payload.delete.marker",
    UNAVAILABLE_VALUE_PROPERTY,
)


def simple_class_name(class_name: str) -> str:
    """``org.apache.hudi.common.model.X`` -> ``X``."""
    return class_name.strip().rsplit(".", 1)[-1]


#: Payloads a version 8 table (Hudi 1.0) records with their own merge mode; every other
#: payload class is recorded as CUSTOM merging through it (``PAYLOAD_STRATEGY_ID``), as
#: ``HoodieTableConfig.inferCorrectMergingBehavior`` does.
_V8_MODE_PAYLOADS = {
    "DefaultHoodieRecordPayload": EVENT_TIME_ORDERING,
    "EventTimeAvroPayload": EVENT_TIME_ORDERING,
    "OverwriteWithLatestAvroPayload": COMMIT_TIME_ORDERING,
}


def v8_merge_mode_for_payload(payload_class: str) -> str:
    """The ``hoodie.record.merge.mode`` a version 8 table records for ``payload_class``."""
    return _V8_MODE_PAYLOADS.get(simple_class_name(payload_class), CUSTOM_MERGE)


def v9_payload_migration(payload_class: str | None) -> PayloadMigration | None:
    """How version 9 records ``payload_class`` (None: a payload it keeps as it is)."""
    if not payload_class:
        return None
    return V9_PAYLOAD_MIGRATIONS.get(simple_class_name(payload_class))


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
        return self.legacy_archive_dir if self.layout_version == 1 else self.history_dir

    @property
    def legacy_archive_dir(self) -> str:
        """The version 6 archive folder (``.hoodie/archived`` unless configured), whatever
        this table's version: a version change converts between the two."""
        return ".hoodie/" + self.props.get(ARCHIVE_FOLDER_KEY, ARCHIVE_FOLDER_DEFAULT)

    @property
    def history_dir(self) -> str:
        """The version 8+ LSM history folder (``.hoodie/timeline/history`` unless
        configured), whatever this table's version."""
        return ".hoodie/timeline/" + self.props.get(HISTORY_PATH_KEY, HISTORY_PATH_DEFAULT)

    @property
    def timeline_utc(self) -> bool:
        """Whether instant times are UTC (``hoodie.table.timeline.timezone``), else the
        machine's local wall-clock time: Java's default, when the key is missing, is
        ``LOCAL``. The one reading of the key; callers never look at the raw property."""
        return str(self.props.get(_TIMELINE_TZ) or "LOCAL").upper() == "UTC"

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
    def merge_strategy_id(self) -> str | None:
        """The ``hoodie.record.merge.strategy.id`` this config renders: on v8 the built-in
        merger of an event- or commit-time mode, on v9 none for those (Hudi 1.1 writes none
        and its upgrade removes it), and whatever the table says for CUSTOM (or on v6)."""
        if self.merge_mode != CUSTOM_MERGE and self.table_version >= 8:
            if self.table_version >= 9:
                return None
            return {
                EVENT_TIME_ORDERING: EVENT_TIME_STRATEGY_ID,
                COMMIT_TIME_ORDERING: COMMIT_TIME_STRATEGY_ID,
            }.get(self.merge_mode)
        return self.props.get("hoodie.record.merge.strategy.id") or None

    @property
    def merge_properties(self) -> dict[str, str]:
        """Version 9 merge properties: ``hoodie.record.merge.property.<key>`` as ``key``."""
        n = len(MERGE_PROPERTY_PREFIX)
        return {k[n:]: v for k, v in self.props.items() if k.startswith(MERGE_PROPERTY_PREFIX)}

    def unsupported_features(self) -> list[str]:
        """What hudilite cannot honour in this table's config, each naming its key and
        value (empty when every feature is supported). Versions 6 and 8 have none of
        these keys (a CUSTOM merger of theirs is refused by :class:`~hudilite.merge.MergeSpec`);
        :meth:`check_writable` refuses a write on them."""
        out: list[str] = []
        if self.table_version < 9:
            return out
        props = self.props
        if len(self.ordering_fields) > 1 and self.ordering_fields != MYSQL_BINLOG_ORDERING:
            out.append(
                f"hoodie.table.ordering.fields={','.join(self.ordering_fields)!r} "
                "(hudilite orders records by one field, or by MySqlDebeziumAvroPayload's "
                f"{','.join(MYSQL_BINLOG_ORDERING)})"
            )
        fmt = (props.get(TABLE_FORMAT_KEY) or NATIVE_FORMAT).strip()
        if fmt.lower() != NATIVE_FORMAT:
            out.append(f"{TABLE_FORMAT_KEY}={fmt!r} (hudilite writes only the native format)")
        partial = (props.get(PARTIAL_UPDATE_MODE_KEY) or "").strip()
        if partial and partial.upper() not in SUPPORTED_PARTIAL_UPDATE_MODES:
            out.append(
                f"{PARTIAL_UPDATE_MODE_KEY}={partial!r} "
                f"(hudilite merges {', '.join(SUPPORTED_PARTIAL_UPDATE_MODES)})"
            )
        elif partial.upper() == "FILL_UNAVAILABLE" and not self.merge_properties.get(
            UNAVAILABLE_VALUE_PROPERTY
        ):
            out.append(
                f"{PARTIAL_UPDATE_MODE_KEY}={partial!r} without "
                f"{MERGE_PROPERTY_PREFIX}{UNAVAILABLE_VALUE_PROPERTY} (the unavailable value)"
            )
        for key in sorted(self.merge_properties):
            if key not in SUPPORTED_MERGE_PROPERTIES:
                value = props[MERGE_PROPERTY_PREFIX + key]
                out.append(
                    f"{MERGE_PROPERTY_PREFIX}{key}={value!r} (hudilite honours only "
                    f"{', '.join(MERGE_PROPERTY_PREFIX + k for k in SUPPORTED_MERGE_PROPERTIES)})"
                )
        merged = (props.get(MERGE_PROPERTIES_KEY) or "").strip()
        if merged:
            out.append(
                f"{MERGE_PROPERTIES_KEY}={merged!r} (hudilite reads merge properties from "
                f"{MERGE_PROPERTY_PREFIX}* keys)"
            )
        legacy = (props.get(LEGACY_PAYLOAD_KEY) or "").strip()
        if legacy and simple_class_name(legacy) not in V9_PAYLOAD_MIGRATIONS:
            out.append(f"{LEGACY_PAYLOAD_KEY}={legacy!r} (hudilite does not merge like it)")
        strategy = self.props.get("hoodie.record.merge.strategy.id")
        if self.merge_mode == CUSTOM_MERGE and strategy and strategy != PAYLOAD_STRATEGY_ID:
            out.append(
                f"hoodie.record.merge.strategy.id={strategy!r} with hoodie.record.merge.mode="
                "CUSTOM (a custom record merger hudilite cannot run)"
            )
        elif self.merge_mode == CUSTOM_MERGE and not (
            self.payload_class and simple_class_name(self.payload_class) in PAYLOADS
        ):
            out.append(
                f"hoodie.record.merge.mode=CUSTOM with hoodie.compaction.payload.class="
                f"{self.payload_class!r} (hudilite merges only {', '.join(sorted(PAYLOADS))})"
            )
        return out

    def check_writable(self) -> None:
        """Refuse (:class:`ConfigError`, naming the key and its value) to write a table whose
        config asks for something hudilite does not implement, before anything is written."""
        problems = self.unsupported_features()
        if problems:
            raise ConfigError(
                f"table {self.name!r} (version {self.table_version}) uses "
                f"{'; '.join(problems)}: hudilite refuses to write it"
            )

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
        if kg == KEYGEN_NON_PARTITION and parts:
            raise ConfigError(f"key generator NON_PARTITION cannot partition by {','.join(parts)}")
        if kg in (KEYGEN_SIMPLE, KEYGEN_TIMESTAMP) and len(keys) > 1:
            raise ConfigError(f"key generator {kg} takes one record key field, got {keys}")
        props = {
            k: _to_text(v)
            for k, v in (extra or {}).items()
            if v is not None and is_table_property(k) and k not in _MANAGED_KEYS
        }
        migration = v9_payload_migration(payload_class) if version >= 9 else None
        if migration is not None and migration.ordering_fields:
            # Hudi 1.1 reconciles a Debezium payload's ordering to its own column.
            order = migration.ordering_fields
        if merge_mode is not None:
            mode = choice(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM_MERGE)(merge_mode)
        elif migration is not None:
            mode = migration.merge_mode
        elif payload_class and version == 8:
            mode = v8_merge_mode_for_payload(payload_class)
        elif payload_class:
            mode = merge_mode_for_payload(payload_class)
        else:
            mode = EVENT_TIME_ORDERING if order else COMMIT_TIME_ORDERING
        cdc = cdc_payload(payload_class) if version < 9 else None
        if cdc is not None and payload_class:
            # The Debezium payloads order by their log position: Hudi's streamer makes it
            # the precombine field; another field is refused by the merge spec.
            order = order or ((cdc.ordering_field,) if cdc.ordering_field else ())
            payload_class = cdc.class_name if "." not in payload_class else payload_class
        elif payload_class and version < 9 and "." not in payload_class:
            payload_class = _PAYLOAD_PACKAGE + payload_class
        if mode == EVENT_TIME_ORDERING and not order:
            raise ConfigError("merge mode EVENT_TIME_ORDERING needs an ordering (precombine) field")
        payload = payload_class or payload_for_merge_mode(mode)
        if version == 6 and payload is None:
            raise ConfigError("a CUSTOM merge mode on a v6 table needs a payload class")
        if version >= 9:
            payload = _v9_creation_props(props, mode, payload_class, migration)
        if mode == CUSTOM_MERGE:
            # A custom merger names its strategy; a payload class merges through Hudi's
            # payload-based strategy.
            strategy = (extra or {}).get("hoodie.record.merge.strategy.id")
            strategy = strategy or (PAYLOAD_STRATEGY_ID if payload else None)
            if strategy:
                props["hoodie.record.merge.strategy.id"] = _to_text(strategy)
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
            props=props,
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
        tz = self.props.get(_TIMELINE_TZ)
        if tz is None and "hoodie.table.checksum" not in self.props:
            tz = "UTC"
        if tz is not None:
            out[_TIMELINE_TZ] = tz
        if v8 or "hoodie.record.merge.mode" in self.props:
            out["hoodie.record.merge.mode"] = self.merge_mode
        if self.merge_strategy_id:
            out["hoodie.record.merge.strategy.id"] = self.merge_strategy_id
        # new() always resolves a payload before v9; a table read from disk keeps what it
        # had. Version 9 keeps one only to merge with (CUSTOM): Hudi 1.1 moves the payloads
        # it deprecated to hoodie.table.legacy.payload.class.
        if self.payload_class and (self.table_version < 9 or self.merge_mode == CUSTOM_MERGE):
            out["hoodie.compaction.payload.class"] = self.payload_class
        if v8:
            out["hoodie.timeline.path"] = self.props.get("hoodie.timeline.path", "timeline")
            out[HISTORY_PATH_KEY] = self.props.get(HISTORY_PATH_KEY, HISTORY_PATH_DEFAULT)
        out[ARCHIVE_FOLDER_KEY] = self.props.get(ARCHIVE_FOLDER_KEY, ARCHIVE_FOLDER_DEFAULT)
        out["hoodie.datasource.write.drop.partition.columns"] = "false"
        for k, v in self.props.items():
            if k not in out and k not in _MANAGED_KEYS and k not in METADATA_PARTITION_KEYS:
                out[k] = v
        out["hoodie.table.checksum"] = str(self.checksum)
        return out

    def render(self, comment: str | None = None) -> str:
        """``hoodie.properties`` text for this config."""
        return render_properties(self.to_properties(), comment)


def _v9_creation_props(
    props: dict[str, str],
    mode: str,
    payload_class: str | None,
    migration: PayloadMigration | None,
) -> str | None:
    """Complete ``props`` of a version 9 table being created as Hudi 1.1 does
    (``HoodieTableConfig.inferMergingConfigsForV9TableCreation``); returns the payload class
    it keeps in ``hoodie.compaction.payload.class`` (only a CUSTOM table's)."""
    props.setdefault(TABLE_FORMAT_KEY, NATIVE_FORMAT)
    if migration is not None:
        assert payload_class is not None
        cdc = cdc_payload(payload_class)
        if cdc is not None:
            name = cdc.class_name  # org.apache.hudi.common.model.debezium.* included
        else:
            name = payload_class if "." in payload_class else _PAYLOAD_PACKAGE + payload_class
        props[LEGACY_PAYLOAD_KEY] = name
        if migration.partial_update_mode:
            props.setdefault(PARTIAL_UPDATE_MODE_KEY, migration.partial_update_mode)
        for key, value in migration.merge_properties:
            props.setdefault(MERGE_PROPERTY_PREFIX + key, value)
        return None
    return payload_class if mode == CUSTOM_MERGE else None
