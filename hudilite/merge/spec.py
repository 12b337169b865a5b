"""Which record wins: the merge rules of a table and how they are configured.

A :class:`MergeSpec` holds everything :mod:`hudilite.merge.merger` needs to combine
two versions of a record:

``mode`` and ``ordering_field``
    ``COMMIT_TIME_ORDERING`` (the later write wins) or ``EVENT_TIME_ORDERING``
    (the greater ordering value wins, null lowest, ties to the later write).
``partial_update``
    The winner's null fields take the loser's values (Hudi's
    ``PartialUpdateAvroPayload`` / ``OverwriteNonDefaultsWithLatestAvroPayload``).
``sequence_groups``
    Column groups with their own ordering column (like Paimon's
    ``fields.<seq>.sequence-group``), each updated independently.
``delete_field`` / ``delete_marker``
    Which data column marks a record as a delete (:meth:`MergeSpec.mark_deletes`).
``changelog``
    The table keeps every change (``_hoodie_operation``, Flink's changelog mode);
    writers then use :func:`hudilite.merge.changelog_rows` instead of collapsing.
``virtual_keys``
    A table without meta fields (``hoodie.populate.meta.fields=false``): stored records
    without a ``_hoodie_record_key`` are matched by the key of their record key fields
    (:func:`hudilite.keygen.stored_record_keys`).

Configuration (:meth:`MergeSpec.from_config`; write options win over the table's
``hoodie.properties``):

* v8+ ``hoodie.record.merge.mode`` = ``COMMIT_TIME_ORDERING`` | ``EVENT_TIME_ORDERING``;
* v6 payload classes (``hoodie.compaction.payload.class`` in the table,
  ``hoodie.datasource.write.payload.class`` as a write option), see :data:`PAYLOADS`:

  ==========================================  ======================  ==============
  payload                                     mode                    partial update
  ==========================================  ======================  ==============
  ``OverwriteWithLatestAvroPayload``          COMMIT_TIME_ORDERING    no
  ``DefaultHoodieRecordPayload``              EVENT_TIME_ORDERING     no
  ``EventTimeAvroPayload``                    EVENT_TIME_ORDERING     no
  ``PartialUpdateAvroPayload``                EVENT_TIME_ORDERING     yes
  ``OverwriteNonDefaultsWithLatestAvroPayload`` COMMIT_TIME_ORDERING  yes
  ``PostgresDebeziumAvroPayload``             EVENT_TIME_ORDERING     no
  ``MySqlDebeziumAvroPayload``                EVENT_TIME_ORDERING     no
  ``AWSDmsAvroPayload``                       COMMIT_TIME_ORDERING    no
  ==========================================  ======================  ==============

  The CDC payloads (:data:`~hudilite.config.vocab.CDC_PAYLOADS`) also fix their ordering
  column and delete marker, as their Java classes hard-code them: Postgres orders by
  ``_event_lsn``, MySQL by ``_event_seq`` (``"<binlog file>.<position>"``, compared as two
  numbers: :attr:`MergeSpec.binlog_seq`), and both delete on ``_change_operation_type =
  'd'``; DMS deletes on ``Op = 'D'`` and, as Hudi 1.1 maps it, orders by commit time. A
  table ordering field other than the payload's is refused (Hudi would pre-combine by one
  and merge by the other). Postgres' TOAST placeholder ``__debezium_unavailable_value``
  (which Hudi replaces by the stored value) is not merged: a record holding it is refused
  (:meth:`MergeSpec.check_records`);

  (the same mapping as Hudi 1.1's payload deprecation, RFC-97); other payloads are
  refused rather than approximated, except ``EmptyHoodieRecordPayload`` as a write
  option of an upsert: every incoming record then deletes its key
  (:func:`is_empty_payload`; the writer turns the records into natural-order deletes);
* nothing configured: event time when an ordering (precombine) field is set, else
  commit time (Hudi 1.x's default; :class:`~hudilite.config.TableConfig` already
  resolves v6 tables without a payload to commit time, as Hudi 0.x did);
* partial update, in this order: the hudilite option :data:`PARTIAL_UPDATE`
  (``hoodie.datasource.write.partial.update=true|false``), then Hudi 1.1's
  :data:`PARTIAL_UPDATE_MODE` (``hoodie.table.partial.update.mode``: ``NONE`` or
  ``IGNORE_DEFAULTS``; hudilite's columns all default to null, so "ignore defaults"
  is "a null keeps the stored value"; ``FILL_UNAVAILABLE``: a text column holding the
  table's ``hoodie.record.merge.property.partial.update.unavailable.value`` keeps the
  stored value, as a version 9 ``PostgresDebeziumAvroPayload`` table merges Debezium's
  TOAST placeholder; ``KEEP_VALUES`` is refused), then the payload class;
* sequence groups: :data:`SEQUENCE_GROUPS` (``hoodie.hudilite.sequence.groups``),
  syntax in :func:`parse_sequence_groups`;
* deletes: ``hoodie.payload.delete.field`` (default ``_hoodie_is_deleted``) and
  ``hoodie.payload.delete.marker`` (default: the field's boolean truth);
* changelog: ``hoodie.allow.operation.metadata.field`` / ``changelog.enabled``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as _cfg
from hudilite.config import (
    CHANGELOG_ENABLED,
    COMMIT_TIME_ORDERING,
    CUSTOM_MERGE,
    DELETE_FIELD,
    DELETE_MARKER,
    EVENT_TIME_ORDERING,
    MERGE_MODE,
    ORDERING_FIELDS,
    PAYLOAD_CLASS,
    PAYLOADS,
    ConfigKey,
)
from hudilite.config.sequence_groups import SequenceGroup as SequenceGroup  # re-exported
from hudilite.config.sequence_groups import format_sequence_groups as format_sequence_groups
from hudilite.config.sequence_groups import parse_sequence_groups as parse_sequence_groups
from hudilite.config.table_config import (
    DEBEZIUM_UNAVAILABLE_VALUE,
    MYSQL_BINLOG_ORDERING,
    UNAVAILABLE_VALUE_PROPERTY,
    v9_payload_migration,
)
from hudilite.config.vocab import CdcPayload, cdc_payload
from hudilite.errors import ConfigError
from hudilite.keygen import KeyGenSpec
from hudilite.merge.delete_markers import apply_delete_markers
from hudilite.schema import IS_DELETED_COL
from hudilite.virtual_keys import virtual_key_spec

if TYPE_CHECKING:
    from hudilite.config import Options, TableConfig

MODES = (COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING)

#: Short spellings accepted for the modes (``MergeSpec("event_time", "ts")``).
_MODE_ALIASES = {
    "COMMIT_TIME": COMMIT_TIME_ORDERING,
    "EVENT_TIME": EVENT_TIME_ORDERING,
}

#: Payload class (simple name) -> mode (kept for callers of the older API).
PAYLOAD_MODES: dict[str, str] = {name: mode for name, (mode, _) in PAYLOADS.items()}

# --- options this module reads (declared in hudilite.config, the one registry) -----------

#: hudilite option: partial update with either mode (null incoming fields keep stored values).
PARTIAL_UPDATE = _cfg.PARTIAL_UPDATE
#: Hudi 1.1's table property; ``NONE`` or ``IGNORE_DEFAULTS`` are supported.
PARTIAL_UPDATE_MODE = _cfg.PARTIAL_UPDATE_MODE
#: hudilite option: ``"<ordering col>:<col>,<col>;<ordering col>:<col>"``.
SEQUENCE_GROUPS = _cfg.SEQUENCE_GROUPS


def payload_semantics(payload_class: str) -> tuple[str, bool]:
    """``(mode, partial_update)`` of a Hudi payload class; :class:`ConfigError` if unsupported."""
    simple = payload_class.strip().rsplit(".", 1)[-1]
    try:
        return PAYLOADS[simple]
    except KeyError:
        raise ConfigError(
            f"payload class {payload_class!r} is not supported by hudilite "
            f"(supported: {', '.join(sorted(PAYLOADS))})"
        ) from None


#: Hudi's ``EmptyHoodieRecordPayload``: every record it carries deletes its key, whatever
#: the ordering value (``combineAndGetUpdateValue`` and ``getInsertValue`` return empty).
EMPTY_PAYLOAD = "EmptyHoodieRecordPayload"


def is_empty_payload(payload_class: str | None) -> bool:
    """True for Hudi's ``EmptyHoodieRecordPayload`` (any package prefix)."""
    return bool(payload_class) and str(payload_class).strip().rsplit(".", 1)[-1] == EMPTY_PAYLOAD


def mode_for_payload(payload_class: str) -> str:
    """The merge mode of a Hudi payload class; :class:`ConfigError` if it has none."""
    return payload_semantics(payload_class)[0]


# --- the spec -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergeSpec:
    """How two versions of a record combine (the rules are in :mod:`hudilite.merge.merger`).

    ``mode`` is ``COMMIT_TIME_ORDERING`` (the later write wins) or
    ``EVENT_TIME_ORDERING`` (the greater ``ordering_field`` value wins, null
    lowest, ties to the later write). Event time without an ordering field
    behaves as commit time, as Hudi's ``DefaultHoodieRecordPayload`` does when no
    ordering field is configured. ``sequence_groups``: see
    :func:`parse_sequence_groups` for the option text. ``delete_marker`` None
    means "the delete field is true"; a string is compared with the field's text.
    ``binlog_seq``: the ordering values are MySQL ``"file.pos"`` texts, compared as the
    pair of numbers. ``binlog_pos_field`` (Hudi 1.1's ``MySqlDebeziumAvroPayload``
    mapping, ordering fields ``_event_bin_file,_event_pos``): the ordering value is the pair
    (``ordering_field``'s text, this field's number), compared in that order as Hudi's
    ``ArrayComparable`` compares them. ``toast_check``: records holding Debezium's TOAST
    placeholder are refused (:meth:`check_records`). ``cdc_deletes``: the delete marker is compared
    ignoring case and ``_hoodie_is_deleted`` deletes too (the CDC payloads' rule).
    ``unavailable_value`` (Hudi 1.1's ``FILL_UNAVAILABLE`` partial update, with
    ``partial_update``): a text column holding this value is "unavailable" and takes the
    other version's value, where a null is an ordinary value.
    """

    mode: str = COMMIT_TIME_ORDERING
    ordering_field: str | None = None
    partial_update: bool = False
    sequence_groups: tuple[SequenceGroup, ...] = ()
    delete_field: str = IS_DELETED_COL
    delete_marker: str | None = None
    changelog: bool = False
    virtual_keys: KeyGenSpec | None = None
    binlog_seq: bool = False
    toast_check: bool = False
    cdc_deletes: bool = False
    unavailable_value: str | None = None
    binlog_pos_field: str | None = None

    def __post_init__(self) -> None:
        mode = str(self.mode).strip().upper()
        mode = _MODE_ALIASES.get(mode, mode)
        if mode not in MODES:
            raise ConfigError(
                f"invalid value {self.mode!r} for option 'hoodie.record.merge.mode' "
                f"(expected {'|'.join(MODES)})"
            )
        object.__setattr__(self, "mode", mode)
        if self.ordering_field is not None and not self.ordering_field.strip():
            object.__setattr__(self, "ordering_field", None)
        object.__setattr__(self, "partial_update", bool(self.partial_update))
        object.__setattr__(self, "changelog", bool(self.changelog))
        groups: Any = self.sequence_groups
        if isinstance(groups, str):
            groups = parse_sequence_groups(groups)
        groups = tuple(groups or ())
        if not all(isinstance(g, SequenceGroup) for g in groups):
            raise ConfigError(f"sequence_groups must be SequenceGroup values, got {groups!r}")
        seen: dict[str, str] = {}
        for group in groups:
            for col in group.all_columns:
                if col in seen:
                    raise ConfigError(
                        f"column {col!r} is in two sequence groups "
                        f"({seen[col]!r} and {group.ordering_field!r})"
                    )
                seen[col] = group.ordering_field
        if self.ordering_field is not None and self.ordering_field in seen:
            raise ConfigError(
                f"the ordering field {self.ordering_field!r} cannot be in a sequence group"
            )
        object.__setattr__(self, "sequence_groups", groups)
        if not self.delete_field or not str(self.delete_field).strip():
            object.__setattr__(self, "delete_field", IS_DELETED_COL)

    @property
    def event_time(self) -> bool:
        """True when records are compared by their ordering value."""
        return self.mode == EVENT_TIME_ORDERING and self.ordering_field is not None

    @property
    def simple(self) -> bool:
        """True when the whole record wins or loses (no partial update, no groups)."""
        return not self.partial_update and not self.sequence_groups

    @property
    def grouped_columns(self) -> frozenset[str]:
        """Every column that belongs to a sequence group (ordering fields included)."""
        return frozenset(c for g in self.sequence_groups for c in g.all_columns)

    def check_records(self, table: pa.Table) -> None:
        """Refuse incoming records this spec cannot merge as Hudi would.

        With ``toast_check`` (``PostgresDebeziumAvroPayload``): a text column holding
        Debezium's unchanged-TOAST placeholder, which Hudi replaces by the stored value
        (``mergeToastedValuesIfPresent``); hudilite does not, so it writes nothing.
        """
        if not self.toast_check:
            return
        for name in table.column_names:
            column = table[name]
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
                continue
            if pc.any(pc.match_substring(column, DEBEZIUM_UNAVAILABLE_VALUE)).as_py():
                raise ConfigError(
                    f"column {name!r} holds Debezium's TOAST placeholder "
                    f"{DEBEZIUM_UNAVAILABLE_VALUE!r}: hudilite does not merge unchanged TOAST "
                    "values (send the full row)"
                )

    def mark_deletes(self, table: pa.Table) -> pa.Table:
        """``table`` with ``_hl_delete`` set where the delete field holds the marker.

        Existing ``_hl_delete`` flags are kept (OR-ed); see
        :func:`hudilite.merge.apply_delete_markers`.
        """
        marker: Any = True if self.delete_marker is None else self.delete_marker
        return apply_delete_markers(table, self.delete_field, marker, cdc=self.cdc_deletes)

    @classmethod
    def from_config(cls, config: TableConfig, options: Options | None = None) -> MergeSpec:
        """The merge spec of a write: the write ``options`` over the table's config.

        Mode: an explicit ``hoodie.record.merge.mode`` option wins, then a payload
        class option, then the table (its payload class is checked too, so a table
        created with an unsupported payload is refused rather than mis-merged).
        Partial update: :data:`PARTIAL_UPDATE`, then :data:`PARTIAL_UPDATE_MODE`,
        then the payload class (option, else table). The other keys are looked up
        in the options, then in the table's properties. Several ordering fields
        (Hudi 1.1) are refused, but for MySqlDebeziumAvroPayload's
        ``_event_bin_file,_event_pos`` (:attr:`binlog_pos_field`).
        """
        ordering: tuple[str, ...] = tuple(config.ordering_fields)
        if options is not None and options.is_set(ORDERING_FIELDS):
            ordering = tuple(options.get(ORDERING_FIELDS) or ())
        if len(ordering) > 1 and ordering != MYSQL_BINLOG_ORDERING:
            raise ConfigError(
                f"several ordering fields {list(ordering)} are not supported; use one "
                f"(or MySqlDebeziumAvroPayload's {','.join(MYSQL_BINLOG_ORDERING)})"
            )
        ordering_field = ordering[0] if ordering else None
        pos_field = ordering[1] if len(ordering) > 1 else None

        option_payload = options.get(PAYLOAD_CLASS) if options is not None else None
        explicit_mode = options is not None and options.is_set(MERGE_MODE)
        table_payload: tuple[str, bool] | None = None
        if config.payload_class and not (explicit_mode and not _known(config.payload_class)):
            # An unsupported table payload is refused, unless the write names its mode.
            table_payload = payload_semantics(config.payload_class)
        payload = payload_semantics(option_payload) if option_payload else table_payload
        if explicit_mode:
            assert options is not None
            mode = options.get(MERGE_MODE)
        elif option_payload and payload is not None:
            mode = payload[0]
        elif config.merge_mode not in MODES and table_payload is not None:
            mode = table_payload[0]  # v8 tables record payload merging as CUSTOM
        else:
            mode = config.merge_mode or (
                EVENT_TIME_ORDERING if ordering_field else COMMIT_TIME_ORDERING
            )
        if mode == CUSTOM_MERGE and payload is not None:
            mode = payload[0]  # CUSTOM through a payload hudilite merges like (Hudi 1.0)
        if mode not in MODES:
            raise ConfigError(
                f"merge mode {mode!r} (payload {config.payload_class!r}) is not supported"
            )

        partial_text = _lookup(PARTIAL_UPDATE, options, config)
        partial_mode = _lookup(PARTIAL_UPDATE_MODE, options, config)
        unavailable: str | None = None
        if partial_text is not None:
            partial = _parse(PARTIAL_UPDATE, partial_text)
        elif partial_mode is not None and partial_mode.strip():
            partial = _partial_from_mode(partial_mode)
            if partial_mode.strip().upper() == "FILL_UNAVAILABLE":
                unavailable = _unavailable_value(config)
        else:
            partial = payload[1] if payload is not None else False

        groups_text = _lookup(SEQUENCE_GROUPS, options, config)
        groups = parse_sequence_groups(groups_text) if groups_text else ()

        changelog_text = _lookup(CHANGELOG_ENABLED, options, config)
        cdc = cdc_payload(option_payload or config.payload_class)
        if cdc is not None and config.table_version >= 9 and v9_payload_migration(cdc.class_name):
            # Hudi 1.1 merges a version 9 table by its merge mode and merge properties, which
            # the table recorded for the payload when it was created (a payload option too).
            cdc = None
        cdc_deletes = False
        delete_field = _lookup(DELETE_FIELD, options, config)
        delete_marker = _lookup(DELETE_MARKER, options, config)
        if cdc is not None:
            ordering_field = _cdc_ordering(cdc, ordering_field, mode)
            # The payload's own column and marker (also as the merge properties Hudi's 9 -> 8
            # downgrade leaves behind) delete by the payload's rule.
            if delete_field is None or (delete_field, delete_marker) == (
                cdc.delete_field,
                cdc.delete_marker,
            ):
                delete_field, delete_marker = cdc.delete_field, cdc.delete_marker
                cdc_deletes = True
        return cls(
            mode,
            ordering_field,
            partial_update=partial,
            sequence_groups=groups,
            delete_field=delete_field or IS_DELETED_COL,
            delete_marker=delete_marker,
            changelog=_parse(CHANGELOG_ENABLED, changelog_text) if changelog_text else False,
            virtual_keys=virtual_key_spec(config, options),
            binlog_seq=cdc is not None and cdc.binlog_seq and mode == EVENT_TIME_ORDERING,
            toast_check=cdc is not None and cdc.class_name.endswith("PostgresDebeziumAvroPayload"),
            cdc_deletes=cdc_deletes,
            unavailable_value=unavailable,
            binlog_pos_field=pos_field if mode == EVENT_TIME_ORDERING else None,
        )


def _unavailable_value(config: TableConfig) -> str:
    """FILL_UNAVAILABLE's value: the table's merge property (Hudi 1.1 writes it with the
    mode); a table naming none is refused, as there is nothing to compare with."""
    value = config.merge_properties.get(UNAVAILABLE_VALUE_PROPERTY)
    if not value:
        raise ConfigError(
            f"{PARTIAL_UPDATE_MODE.name}='FILL_UNAVAILABLE' needs the table property "
            f"hoodie.record.merge.property.{UNAVAILABLE_VALUE_PROPERTY} (the unavailable value)"
        )
    return value


def _cdc_ordering(cdc: CdcPayload, table_field: str | None, mode: str) -> str | None:
    """The ordering field of a CDC payload's merge: the payload's own column. A different
    table ordering field is refused: Hudi would pre-combine a batch by it and merge with the
    stored row by the payload's column."""
    if cdc.ordering_field is None or mode != EVENT_TIME_ORDERING:
        return table_field
    if table_field is not None and table_field != cdc.ordering_field:
        name = cdc.class_name.rsplit(".", 1)[-1]
        raise ConfigError(
            f"payload {name} orders by {cdc.ordering_field!r}, but the ordering "
            f"(precombine) field is {table_field!r}"
        )
    return cdc.ordering_field


def _known(payload_class: str) -> bool:
    return payload_class.strip().rsplit(".", 1)[-1] in PAYLOADS


def _lookup(key: ConfigKey, options: Options | None, config: TableConfig) -> str | None:
    """The raw value of ``key``: from the options, else from the table's properties."""
    if options is not None:
        value = options.get_raw(key)
        if value is not None:
            return value
    props = {k.lower(): v for k, v in (config.props or {}).items()}
    for name in key.all_names():
        value = props.get(name.lower())
        if value is not None:
            return value
    return None


def _parse(key: ConfigKey, value: str) -> Any:
    try:
        return key.parse(value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"invalid value {value!r} for option {key.name!r}: {exc}") from None


def _partial_from_mode(value: str) -> bool:
    mode = value.strip().upper()
    if mode == "NONE":
        return False
    if mode in ("IGNORE_DEFAULTS", "FILL_UNAVAILABLE"):
        return True
    raise ConfigError(
        f"unsupported value {value!r} for option {PARTIAL_UPDATE_MODE.name!r} "
        "(hudilite supports NONE, IGNORE_DEFAULTS and FILL_UNAVAILABLE)"
    )


__all__ = [
    "COMMIT_TIME_ORDERING",
    "EMPTY_PAYLOAD",
    "EVENT_TIME_ORDERING",
    "MODES",
    "PARTIAL_UPDATE",
    "PARTIAL_UPDATE_MODE",
    "PAYLOADS",
    "PAYLOAD_MODES",
    "SEQUENCE_GROUPS",
    "MergeSpec",
    "SequenceGroup",
    "format_sequence_groups",
    "mode_for_payload",
    "parse_sequence_groups",
    "payload_semantics",
]
