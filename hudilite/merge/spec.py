"""Which record wins: the merge mode of a table and how it is configured.

Hudi has spelled the same two semantics three ways over its versions, and
hudilite has to honour all of them when it writes into an existing table:

* v8+ ``hoodie.record.merge.mode`` = ``COMMIT_TIME_ORDERING`` | ``EVENT_TIME_ORDERING``;
* v6 payload classes (``hoodie.compaction.payload.class`` in the table,
  ``hoodie.datasource.write.payload.class`` as a write option):
  ``OverwriteWithLatestAvroPayload`` is commit time, ``DefaultHoodieRecordPayload``
  and ``EventTimeAvroPayload`` are event time;
* nothing configured: event time when an ordering (precombine) field is set,
  else commit time (Hudi 1.x's default; :class:`~hudilite.config.TableConfig`
  already resolves v6 tables without a payload to commit time, as Hudi 0.x did).

Payloads with other semantics (``PartialUpdateAvroPayload``,
``OverwriteNonDefaultsWithLatestAvroPayload``, the CDC payloads, ...) are refused
rather than approximated: merging them as plain event time would silently lose
column values. They are the extension point: add a mode constant here, map the
payload in :data:`PAYLOAD_MODES`, and give the mode its branch in
:mod:`hudilite.merge.merger` (partial update = event time plus "null fields of
the winner take the loser's value", a per-column ``pc.if_else`` after the pick).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudilite.errors import ConfigError

if TYPE_CHECKING:
    from hudilite.config import Options, TableConfig

COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
MODES = (COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING)

#: Short spellings accepted for the modes (``MergeSpec("event_time", "ts")``).
_MODE_ALIASES = {
    "COMMIT_TIME": COMMIT_TIME_ORDERING,
    "EVENT_TIME": EVENT_TIME_ORDERING,
}

#: Payload class (simple name) -> mode, for the payloads whose semantics are a mode.
PAYLOAD_MODES: dict[str, str] = {
    "OverwriteWithLatestAvroPayload": COMMIT_TIME_ORDERING,
    "DefaultHoodieRecordPayload": EVENT_TIME_ORDERING,
    "EventTimeAvroPayload": EVENT_TIME_ORDERING,
}


def mode_for_payload(payload_class: str) -> str:
    """The merge mode of a Hudi payload class; :class:`ConfigError` if it has none."""
    simple = payload_class.strip().rsplit(".", 1)[-1]
    try:
        return PAYLOAD_MODES[simple]
    except KeyError:
        raise ConfigError(
            f"payload class {payload_class!r} is not supported by hudilite "
            f"(supported: {', '.join(sorted(PAYLOAD_MODES))})"
        ) from None


@dataclass(frozen=True)
class MergeSpec:
    """How two versions of a record combine.

    ``mode`` is ``COMMIT_TIME_ORDERING`` (the later write wins) or
    ``EVENT_TIME_ORDERING`` (the greater ``ordering_field`` value wins, null
    lowest, ties to the later write; see :mod:`hudilite.merge.merger`). Event
    time without an ordering field behaves as commit time, as Hudi's
    ``DefaultHoodieRecordPayload`` does when no ordering field is configured.
    """

    mode: str = COMMIT_TIME_ORDERING
    ordering_field: str | None = None

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

    @property
    def event_time(self) -> bool:
        """True when records are compared by their ordering value."""
        return self.mode == EVENT_TIME_ORDERING and self.ordering_field is not None

    @classmethod
    def from_config(cls, config: TableConfig, options: Options | None = None) -> MergeSpec:
        """The merge spec of a write: the write ``options`` over the table's config.

        An explicit ``hoodie.record.merge.mode`` option wins, then a payload class
        option, then the table (its payload class is checked too, so a table
        created with an unsupported payload is refused rather than mis-merged).
        Several ordering fields (Hudi 1.1) are not supported yet.
        """
        from hudilite.config import MERGE_MODE, ORDERING_FIELDS, PAYLOAD_CLASS

        ordering: tuple[str, ...] = tuple(config.ordering_fields)
        if options is not None and options.is_set(ORDERING_FIELDS):
            ordering = tuple(options.get(ORDERING_FIELDS) or ())
        if len(ordering) > 1:
            raise ConfigError(
                f"several ordering fields {list(ordering)} are not supported; use one"
            )
        field = ordering[0] if ordering else None

        option_payload = options.get(PAYLOAD_CLASS) if options is not None else None
        if options is not None and options.is_set(MERGE_MODE):
            mode = options.get(MERGE_MODE)
        elif option_payload:
            mode = mode_for_payload(option_payload)
        else:
            if config.payload_class:
                mode_for_payload(config.payload_class)  # refuse unsupported payloads
            mode = config.merge_mode or (EVENT_TIME_ORDERING if field else COMMIT_TIME_ORDERING)
        if mode not in MODES:
            raise ConfigError(
                f"merge mode {mode!r} (payload {config.payload_class!r}) is not supported"
            )
        return cls(mode, field)


__all__ = [
    "COMMIT_TIME_ORDERING",
    "EVENT_TIME_ORDERING",
    "MODES",
    "PAYLOAD_MODES",
    "MergeSpec",
    "mode_for_payload",
]
