"""Instants: one action on the timeline, in one state, and the file names that encode them.

Every file in the timeline folder is named after an instant. The encoding depends on the
timeline layout (``hoodie.timeline.layout.version``), see ``docs/dev/hudi-format.md`` §3:

=================  ==========================  ==========================
state              layout 1 (table v6)         layout 2 (table v8, v9)
=================  ==========================  ==========================
requested          ``T.<action>.requested``    same
inflight           ``T.<action>.inflight``     same
completed          ``T.<action>``              ``T_C.<action>``
=================  ==========================  ==========================

with these quirks, kept for byte compatibility with Hudi:

* an inflight *commit* is just ``T.inflight`` (the action is implied);
* a completed *compaction* is a ``commit`` (``T.commit`` / ``T_C.commit``), a completed
  *log compaction* a ``deltacommit`` and a completed *clustering* a ``replacecommit``;
* layout 1 has no ``clustering`` action: clustering is a ``replacecommit`` from the start;
* a *savepoint* has no requested file, only ``T.savepoint.inflight`` and the completed one.

So the action of an :class:`Instant` is what its file says: a compaction shows up as
``compaction`` while requested/inflight and as ``commit`` once completed.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace

# Action names exactly as they appear in Hudi file names.
COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLUSTERING = "clustering"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"

#: Every action hudilite recognises in a file name; other names in the folder are ignored.
ALL_ACTIONS: frozenset[str] = frozenset(
    {
        COMMIT,
        DELTA_COMMIT,
        REPLACE_COMMIT,
        COMPACTION,
        LOG_COMPACTION,
        CLUSTERING,
        CLEAN,
        ROLLBACK,
        SAVEPOINT,
        RESTORE,
        INDEXING,
        SCHEMA_COMMIT,
    }
)

#: Completed actions that change the data of the table (what readers build snapshots from).
WRITE_ACTIONS: frozenset[str] = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT})

#: Pending table services whose completion is written under another action name.
_COMPLETED_ACTION = {
    COMPACTION: COMMIT,
    LOG_COMPACTION: DELTA_COMMIT,
    CLUSTERING: REPLACE_COMMIT,
}

LAYOUT_V1 = 1
LAYOUT_V2 = 2

_REQUESTED_EXT = "requested"
_INFLIGHT_EXT = "inflight"

# <requested>[_<completion>].<action>[.<requested|inflight>]; times are 14+ digits.
_NAME = re.compile(r"^(\d{14,})(?:_(\d{14,}))?\.([a-z]+)(?:\.([a-z]+))?$", re.ASCII)
_TIMES = re.compile(r"^(\d{14,})(?:_(\d{14,}))?\.", re.ASCII)
_DIGITS = re.compile(r"[0-9]+")


class State(enum.Enum):
    """Lifecycle of an instant, ordered: requested < inflight < completed."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.value < other.value


def completed_action(action: str) -> str:
    """The action name a completed ``action`` is written under (compaction → commit ...)."""
    return _COMPLETED_ACTION.get(action, action)


@dataclass(frozen=True)
class Instant:
    """One action on the timeline in one state.

    ``requested_time`` identifies the instant (unique per table); ``completion_time`` is set
    only for completed instants of layout 2 (and when known). Instances sort by requested
    time, then state, then action, which is the timeline order.
    """

    requested_time: str
    action: str
    state: State
    completion_time: str | None = None

    def __post_init__(self) -> None:
        if not _DIGITS.fullmatch(self.requested_time):
            raise ValueError(f"bad requested time {self.requested_time!r}")
        if self.action not in ALL_ACTIONS:
            raise ValueError(f"unknown action {self.action!r}")
        if self.completion_time is not None:
            if self.state is not State.COMPLETED:
                raise ValueError("only a completed instant has a completion time")
            if not _DIGITS.fullmatch(self.completion_time):
                raise ValueError(f"bad completion time {self.completion_time!r}")

    # -- states -----------------------------------------------------------------------------

    @property
    def is_requested(self) -> bool:
        """True in the requested state (planned, no work started)."""
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        """True in the inflight state (work started, may have written files)."""
        return self.state is State.INFLIGHT

    @property
    def is_completed(self) -> bool:
        """True once the action committed."""
        return self.state is State.COMPLETED

    @property
    def is_pending(self) -> bool:
        """True while requested or inflight."""
        return self.state is not State.COMPLETED

    @property
    def is_write(self) -> bool:
        """True for actions that write data files (commit, deltacommit, replacecommit and
        the table services that complete as one of those)."""
        return completed_action(self.action) in WRITE_ACTIONS

    def as_state(self, state: State, completion_time: str | None = None) -> Instant:
        """The same instant in ``state``; completing maps the action (compaction → commit)."""
        action = completed_action(self.action) if state is State.COMPLETED else self.action
        return replace(self, action=action, state=state, completion_time=completion_time)

    # -- ordering -----------------------------------------------------------------------------

    def sort_key(self) -> tuple[str, int, str]:
        """Timeline order: requested time, then state, then action."""
        return (self.requested_time, self.state.value, self.action)

    def __lt__(self, other: Instant) -> bool:
        return self.sort_key() < other.sort_key()

    def __le__(self, other: Instant) -> bool:
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: Instant) -> bool:
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: Instant) -> bool:
        return self.sort_key() >= other.sort_key()

    # -- file names -------------------------------------------------------------------------

    @classmethod
    def parse(cls, file_name: str, layout_version: int) -> Instant | None:
        """Parse a timeline file name; None when the name is not an instant file.

        Non-instant entries of the timeline folder (``hoodie.properties``, ``archived``,
        ``history``, ``.aux``, temp files ...) return None so a caller can simply skip them.
        A layout-2 completed file without ``_C`` (hudi-rs ignores those) parses with
        ``completion_time=None``; a layout-1 name with ``_C`` is not valid and returns None.
        """
        m = _NAME.match(file_name)
        if m is None:
            return None
        requested, completion, action, ext = m.groups()
        if completion is not None and layout_version < LAYOUT_V2:
            return None
        if action == _INFLIGHT_EXT and ext is None and completion is None:
            # ``T.inflight``: the inflight state of a commit.
            return cls(requested, COMMIT, State.INFLIGHT)
        if action not in ALL_ACTIONS:
            return None
        if ext is None:
            return cls(requested, action, State.COMPLETED, completion)
        if completion is not None:
            return None  # "T_C.action.requested" is not a Hudi name
        if ext == _REQUESTED_EXT:
            return cls(requested, action, State.REQUESTED)
        if ext == _INFLIGHT_EXT:
            return cls(requested, action, State.INFLIGHT)
        return None

    def file_name(self, layout_version: int) -> str:
        """The timeline file name of this instant under ``layout_version`` (1 or 2).

        Raises ``ValueError`` for states Hudi never writes (a requested savepoint).
        """
        action = self.action
        if layout_version < LAYOUT_V2 and action == CLUSTERING:
            action = REPLACE_COMMIT  # layout 1 spells clustering as a replacecommit
        t = self.requested_time
        if self.state is State.REQUESTED:
            if action == SAVEPOINT:
                raise ValueError("a savepoint has no requested state; start it inflight")
            return f"{t}.{action}.{_REQUESTED_EXT}"
        if self.state is State.INFLIGHT:
            if action == COMMIT:
                return f"{t}.{_INFLIGHT_EXT}"
            return f"{t}.{action}.{_INFLIGHT_EXT}"
        action = completed_action(action)
        if layout_version >= LAYOUT_V2 and self.completion_time is not None:
            return f"{t}_{self.completion_time}.{action}"
        return f"{t}.{action}"

    def __str__(self) -> str:
        suffix = f" completed at {self.completion_time}" if self.completion_time else ""
        return f"[{self.requested_time} {self.action} {self.state.name}{suffix}]"


def times_in_name(file_name: str) -> list[str]:
    """Every instant time in a timeline file name (requested and, for v8, completion).

    Also matches files whose action hudilite does not know, so that a new instant time never
    collides with one written by a newer Hudi release.
    """
    m = _TIMES.match(file_name)
    if m is None:
        return []
    return [t for t in m.groups() if t is not None]
