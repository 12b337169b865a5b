"""The active timeline: reading it (`Timeline`) and appending to it (`TimelineWriter`).

The timeline folder (``.hoodie/`` for table v6, ``.hoodie/timeline/`` for v8+) holds one
file per instant *state*: an instant moves requested → inflight → completed by gaining
files, never by rewriting one. :class:`Timeline` is an immutable snapshot of one listing,
keeping each instant in its most advanced state.

Concurrency model of :class:`TimelineWriter` (no lock service needed):

* Instant files are only ever created with ``create_exclusive`` and never overwritten, so a
  second writer racing for the same file name loses cleanly (``TimelineError`` or a retry).
* A new requested time is *reserved* by exclusively creating its requested file.
  ``create_requested`` retries with a later time (+1 ms or more) when the name exists, and
  also when, after creating it, a re-listing shows another file using the same time (another
  process reserving the same millisecond for a different action). Both racers then back
  off, so no time is ever shared. Callers must use the time of the returned instant.
* On filesystems without an atomic create-if-absent (object stores), the exists-then-write
  window remains; the re-listing narrows it but cannot close it.

Every instant that writes records (commits, delta commits, replace commits, compactions,
clusterings) starts with :meth:`TimelineWriter.create_requested`, so that is where a table
whose config asks for something hudilite does not implement (a table version 9 feature,
``TableConfig.check_writable``) is refused, before anything is written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from hudilite.errors import InstantNotFoundError, TimelineError
from hudilite.schema import latest_schema_json
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.timeline.instant import (
    CLUSTERING,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    SAVEPOINT,
    WRITE_ACTIONS,
    Instant,
    State,
    completed_action,
    times_in_name,
)
from hudilite.timeline.instant_time import next_instant_time
from hudilite.timeline.metadata import CommitMetadata

#: Actions that produce or plan data files: their earliest instant bounds the active timeline.
_WRITE_TIMELINE_ACTIONS = WRITE_ACTIONS | {COMPACTION, LOG_COMPACTION, CLUSTERING}

#: How many times ``create_requested`` moves to a later time before giving up.
MAX_RESERVE_ATTEMPTS = 100


class TimelineConfig(Protocol):
    """What the timeline needs from ``hudilite.config.TableConfig``."""

    @property
    def layout_version(self) -> int: ...

    @property
    def timeline_dir(self) -> str: ...


def _disk_action(instant: Instant, layout_version: int) -> str:
    """The action name this instant's file carries on disk."""
    if instant.is_completed:
        return completed_action(instant.action)
    if layout_version < 2 and instant.action == CLUSTERING:
        return REPLACE_COMMIT
    return instant.action


def _max_time(names: Iterable[str]) -> str | None:
    """Highest instant time (requested or completion) in any of ``names``."""
    times = [t for n in names for t in times_in_name(n)]
    return max(times) if times else None


class Timeline:
    """An immutable snapshot of the active timeline, one entry per requested time.

    Build it with :meth:`load`. Instants are sorted by requested time; each is in its most
    advanced state (a commit with requested, inflight and completed files appears once,
    completed).
    """

    def __init__(self, gw: FileSystemGateway, config: TimelineConfig, file_names: Iterable[str]):
        self.gw = gw
        self.layout_version = config.layout_version
        self.timeline_dir = config.timeline_dir
        names = list(file_names)
        self._files: dict[str, list[Instant]] = {}
        for name in names:
            inst = Instant.parse(name, self.layout_version)
            if inst is not None:
                self._files.setdefault(inst.requested_time, []).append(inst)
        # A savepoint shares its commit's instant time; the commit is the instant that
        # counts for the timeline (savepoints are listed from ``self._files``).
        latest: dict[str, Instant] = {
            t: max(
                states,
                key=lambda i: (
                    i.action != SAVEPOINT,
                    i.state.value,
                    i.completion_time or "",
                    i.action,
                ),
            )
            for t, states in self._files.items()
        }
        self._instants: tuple[Instant, ...] = tuple(sorted(latest.values()))
        self._by_time = latest
        self._max_time = _max_time(names)
        self._metadata_cache: dict[Instant, CommitMetadata] = {}

    @classmethod
    def load(cls, gw: FileSystemGateway, config: TimelineConfig) -> Timeline:
        """List the timeline folder of the table behind ``gw`` (empty if it is missing)."""
        entries = gw.list_dir(config.timeline_dir)
        return cls(gw, config, (e.name for e in entries if not e.is_dir))

    # -- views ---------------------------------------------------------------------------------

    @property
    def instants(self) -> list[Instant]:
        """Every instant, most advanced state, sorted by requested time."""
        return list(self._instants)

    def __iter__(self) -> Iterator[Instant]:
        return iter(self._instants)

    def __len__(self) -> int:
        return len(self._instants)

    def __contains__(self, requested_time: object) -> bool:
        return requested_time in self._by_time

    def __repr__(self) -> str:
        return f"Timeline({', '.join(str(i) for i in self._instants)})"

    def file_instants(self) -> frozenset[Instant]:
        """Every instant file of the listing (each state of each instant, savepoints
        included): two listings with the same set hold the same timeline."""
        return frozenset(i for states in self._files.values() for i in states)

    def get(self, requested_time: str) -> Instant | None:
        """The instant requested at ``requested_time`` (most advanced state), or None."""
        return self._by_time.get(requested_time)

    def completed(self) -> list[Instant]:
        """Completed instants of every action."""
        return [i for i in self._instants if i.is_completed]

    def pending(self) -> list[Instant]:
        """Requested or inflight instants of every action."""
        return [i for i in self._instants if i.is_pending]

    def filter(
        self,
        actions: Iterable[str] | str | None = None,
        states: Iterable[State] | State | None = None,
    ) -> list[Instant]:
        """Instants whose action is in ``actions`` and state in ``states`` (None = any)."""
        acts = {actions} if isinstance(actions, str) else set(actions or ())
        sts = {states} if isinstance(states, State) else set(states or ())
        return [
            i
            for i in self._instants
            if (not acts or i.action in acts) and (not sts or i.state in sts)
        ]

    def commits(self) -> list[Instant]:
        """Completed write actions (commit, deltacommit, replacecommit) by requested time.

        A completed compaction is a ``commit`` and a completed clustering a
        ``replacecommit``, so both are included.
        """
        return [i for i in self._instants if i.is_completed and i.action in WRITE_ACTIONS]

    def commits_in_range(self, start: str | None, end: str | None) -> list[Instant]:
        """Completed write actions in ``(start, end]`` (None = open), as incremental reads
        define it: by completion time on layout 2, by requested time on layout 1; sorted by
        that time."""

        def key(i: Instant) -> str:
            return self.completion_time(i.requested_time) or i.requested_time

        out = [
            i
            for i in self.commits()
            if (start is None or key(i) > start) and (end is None or key(i) <= end)
        ]
        return sorted(out, key=key)

    def is_completed(self, requested_time: str) -> bool:
        """True when the instant requested at ``requested_time`` is on the timeline, completed."""
        inst = self._by_time.get(requested_time)
        return inst is not None and inst.is_completed

    def completion_time(self, requested_time: str) -> str | None:
        """When the instant completed: the ``_C`` of its v8 file name. Layout 1 records no
        completion time, so there (and for a v8 file without ``_C``) this is the requested
        time, which is how v6 orders commits. None when not completed."""
        inst = self._by_time.get(requested_time)
        if inst is None or not inst.is_completed:
            return None
        return inst.completion_time or inst.requested_time

    def last_completed(self, actions: Iterable[str] | None = None) -> Instant | None:
        """The completed instant with the highest requested time (optionally of ``actions``)."""
        acts = set(actions) if actions is not None else None
        for inst in reversed(self._instants):
            if inst.is_completed and (acts is None or inst.action in acts):
                return inst
        return None

    def last_commit(self) -> Instant | None:
        """The last completed write action (see :meth:`commits`), or None."""
        commits = self.commits()
        return commits[-1] if commits else None

    def first_active(self) -> Instant | None:
        """The earliest write-related instant (any state) still on the active timeline.

        Anything older and absent from the timeline was archived, i.e. committed (Hudi only
        archives completed instants and never past a pending one); see :meth:`is_archived`.
        """
        for inst in self._instants:
            if inst.action in _WRITE_TIMELINE_ACTIONS:
                return inst
        return None

    def is_archived(self, requested_time: str) -> bool:
        """True when ``requested_time`` is not on the timeline but older than its start."""
        first = self.first_active()
        return (
            requested_time not in self._by_time
            and first is not None
            and requested_time < first.requested_time
        )

    def is_completed_or_archived(self, requested_time: str) -> bool:
        """True when files written at ``requested_time`` are committed (Hudi's
        ``containsOrBeforeTimelineStarts``)."""
        return self.is_completed(requested_time) or self.is_archived(requested_time)

    def max_instant_time(self) -> str | None:
        """Highest instant time in any timeline file name, completion times included."""
        return self._max_time

    # -- contents ------------------------------------------------------------------------------

    def file_name(self, instant: Instant) -> str:
        """The on-disk file name of ``instant`` (found in the listing, so the ``_C`` of a v8
        completed instant need not be known by the caller)."""
        wanted = _disk_action(instant, self.layout_version)
        for cand in self._files.get(instant.requested_time, ()):
            if cand.state is instant.state and cand.action == wanted:
                return cand.file_name(self.layout_version)
        raise InstantNotFoundError(f"{instant} is not on the timeline")

    def instant_content(self, instant: Instant) -> bytes:
        """The raw bytes of ``instant``'s file (empty for most requested files)."""
        path = join(self.timeline_dir, self.file_name(instant))
        try:
            return self.gw.read_bytes(path)
        except FileNotFoundError:
            raise InstantNotFoundError(f"{instant}: {path} disappeared") from None

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Decoded commit metadata of a commit/deltacommit/replacecommit (any state; empty
        content gives empty metadata). Completed instants are cached: they never change."""
        cached = self._metadata_cache.get(instant)
        if cached is not None:
            return cached
        data = self.instant_content(instant)
        source = f"{self.gw.abs_path(join(self.timeline_dir, self.file_name(instant)))} ({instant})"
        meta = CommitMetadata.from_bytes(data, source)
        if instant.is_completed:
            self._metadata_cache[instant] = meta
        return meta

    def schema_json(
        self, create_schema: str | None, visible: Callable[[str], bool] | None = None
    ) -> str | None:
        """The table's Avro schema (JSON): the one rule every reader and writer uses.

        Hudi's ``TableSchemaResolver``: the schema recorded by the completed write with the
        newest *requested* time, on every table version (``ActiveTimelineV2`` sorts the
        commits by requested time, and hudi-rs takes its last commit in that order), skipping
        table services (:attr:`CommitMetadata.table_schema`) and writes that recorded none;
        else ``create_schema``. ``visible`` limits the writes by requested time (a read as
        of an instant). Completion order would let a compaction planned before a schema
        change, finishing after it, bring the old schema back.
        """
        writes = [i for i in self.commits() if visible is None or visible(i.requested_time)]
        writes.sort(key=lambda i: i.requested_time, reverse=True)
        return latest_schema_json(
            (self.commit_metadata(i).table_schema for i in writes), create_schema
        )

    def replaced_file_ids(self, as_of: str | None = None) -> set[tuple[str, str]]:
        """(partition, file id) of every file group retired by a completed replacecommit
        requested at or before ``as_of`` (None = all).

        The cut compares requested times on both layouts, the same rule that makes the
        replacement files (named with that requested time) visible, so a snapshot never
        shows both the old and the new file groups.
        """
        out: set[tuple[str, str]] = set()
        for inst in self.commits():
            if inst.action != REPLACE_COMMIT:
                continue
            if as_of is not None and inst.requested_time > as_of:
                break
            out |= self.commit_metadata(inst).replaced_file_groups()
        return out


def savepoint_instants(gw: FileSystemGateway, config: TimelineConfig) -> list[Instant]:
    """Every savepoint timeline file's instant (any state), sorted by time, from a fresh
    listing of the timeline folder."""
    out = []
    for entry in gw.list_dir(config.timeline_dir):
        if entry.is_dir:
            continue
        inst = Instant.parse(entry.name, config.layout_version)
        if inst is not None and inst.action == SAVEPOINT:
            out.append(inst)
    return sorted(out)


def savepoint_times(gw: FileSystemGateway, config: TimelineConfig) -> list[str]:
    """Requested times of the completed savepoints, oldest first."""
    return [i.requested_time for i in savepoint_instants(gw, config) if i.is_completed]


#: Actions that write records (refused on a table hudilite cannot honour).
_RECORD_ACTIONS = WRITE_ACTIONS | {COMPACTION, LOG_COMPACTION, CLUSTERING}

#: Called as ``hook(gw, instant, content)`` right before a completed file is written: the
#: metadata table's deltacommit of that instant (``hudilite.metadata.sync`` registers it when
#: imported; the timeline cannot import the metadata table, which is built on it).
_BEFORE_COMPLETE: list[Callable[[FileSystemGateway, Instant, bytes], None]] = []


def before_complete(hook: Callable[[FileSystemGateway, Instant, bytes], None]) -> None:
    """Register ``hook`` to run in :meth:`TimelineWriter.complete` before the completed file
    is created (once per hook)."""
    if hook not in _BEFORE_COMPLETE:
        _BEFORE_COMPLETE.append(hook)


class TimelineWriter:
    """Appends instants to the timeline of one table; see the module doc for concurrency.

    Usage for a write: ``inst = w.create_requested(COMMIT)``,
    ``inst = w.transition_inflight(inst, plan)``, ``done = w.complete(inst, metadata)``.
    """

    def __init__(self, gw: FileSystemGateway, config: TimelineConfig) -> None:
        self.gw = gw
        # TableConfig.check_writable (configs without one have nothing to refuse).
        self._check_writable = getattr(config, "check_writable", None)
        self.layout_version = config.layout_version
        self.timeline_dir = config.timeline_dir
        self._lock = threading.Lock()
        self._last_issued: str | None = None

    # -- instant times -------------------------------------------------------------------------

    def _names(self) -> list[str]:
        return [e.name for e in self.gw.list_dir(self.timeline_dir) if not e.is_dir]

    def _next_time(self, floor: str | None = None) -> str:
        """A time above everything on disk, everything issued here and ``floor``."""
        with self._lock:
            candidates = [t for t in (_max_time(self._names()), self._last_issued, floor) if t]
            issued = next_instant_time(max(candidates) if candidates else None)
            self._last_issued = issued
            return issued

    def new_instant_time(self) -> str:
        """A fresh instant time greater than every time on the timeline (pending instants and
        v8 completion times included) and than every earlier call on this writer.

        Not yet reserved: another process may pick the same value until
        :meth:`create_requested` creates the requested file.
        """
        return self._next_time()

    # -- transitions ---------------------------------------------------------------------------

    def _path(self, instant: Instant) -> str:
        return join(self.timeline_dir, instant.file_name(self.layout_version))

    def _create(self, instant: Instant, content: bytes) -> bool:
        return self.gw.create_exclusive(self._path(instant), content)

    def create_requested(
        self, action: str, time: str | None = None, content: bytes = b""
    ) -> Instant:
        """Reserve an instant time by creating the requested file of ``action``.

        ``time`` defaults to :meth:`new_instant_time`. If that file exists, or another file
        shows up with the same time, a later time is tried instead (+1 ms at least), so the
        returned instant's ``requested_time`` may differ from ``time``. A savepoint has no
        requested state: its inflight file is created and an inflight instant returned.
        """
        if self._check_writable is not None and action in _RECORD_ACTIONS:
            self._check_writable()
        state = State.INFLIGHT if action == SAVEPOINT else State.REQUESTED
        t = time or self.new_instant_time()
        for _ in range(MAX_RESERVE_ATTEMPTS):
            inst = Instant(t, action, state)
            mine = inst.file_name(self.layout_version)
            if self._create(inst, content):
                rivals = [n for n in self._names() if n != mine and t in times_in_name(n)]
                if not rivals:
                    return inst
                # Someone else uses this time for another action: back off (they will too).
                self.gw.delete_file(join(self.timeline_dir, mine))
            t = self._next_time(floor=t)
        raise TimelineError(
            f"could not reserve an instant time for {action} after {MAX_RESERVE_ATTEMPTS} tries"
        )

    def transition_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        """Create the inflight file of a requested instant; returns the inflight instant."""
        if instant.is_completed:
            raise TimelineError(f"{instant} is already completed")
        inflight = instant.as_state(State.INFLIGHT)
        if not self._create(inflight, content):
            raise TimelineError(f"{inflight} already exists")
        return inflight

    def complete(self, instant: Instant, content: bytes) -> Instant:
        """Create the completed file of a pending instant; returns the completed instant.

        Layout 2 names it ``T_C.<action>`` with a fresh completion time ``C`` greater than
        ``T`` and every time on the timeline; layout 1 names it ``T.<action>``. A completed
        compaction is written as ``commit``, a clustering as ``replacecommit``. Raises
        ``TimelineError`` if the instant is already completed (never overwrites).
        """
        if instant.is_completed:
            raise TimelineError(f"{instant} is already completed")
        names = self._names()
        for name in names:
            other = Instant.parse(name, self.layout_version)
            if other and other.requested_time == instant.requested_time and other.is_completed:
                raise TimelineError(f"{instant.requested_time} is already completed as {name}")
        for hook in _BEFORE_COMPLETE:
            hook(self.gw, instant, content)  # the metadata table first: Hudi's order
        completion = None
        if self.layout_version >= 2:
            completion = self._next_time(floor=instant.requested_time)
        done = instant.as_state(State.COMPLETED, completion)
        if not self._create(done, content):
            raise TimelineError(f"{done} already exists")
        return done

    def create_file(self, instant: Instant, content: bytes = b"") -> Instant:
        """Create exactly the file of ``instant`` (state and, on layout 2, completion time
        as given), never overwriting one; ``TimelineError`` if it exists.

        For instants that share their requested time with another instant on purpose
        (a savepoint names the commit it protects), where :meth:`create_requested` would
        back off and :meth:`complete` would see the commit as already completed.
        """
        if not self._create(instant, content):
            raise TimelineError(f"{instant} already exists on the timeline")
        return instant

    def delete_files(
        self,
        requested_time: str,
        actions: Iterable[str] | None = None,
        states: Iterable[State] = (State.COMPLETED, State.INFLIGHT, State.REQUESTED),
    ) -> list[str]:
        """Delete the timeline files of ``requested_time`` whose action (as on disk) is in
        ``actions`` (None = any) and state in ``states``; returns the paths deleted.

        Most advanced state first (completed, inflight, requested), so a concurrent reader
        never sees a later state without the earlier ones. The folder is listed, so v8
        completed names (``T_C.action``) are found without knowing ``C``. Callers decide
        whether a completed instant may go (a rollback of a completed write, a savepoint,
        the rollbacks a restore absorbed); :meth:`delete_instant_files` refuses to.
        """
        wanted_actions = None if actions is None else set(actions)
        wanted_states = set(states)
        found: list[Instant] = []
        for name in self._names():
            inst = Instant.parse(name, self.layout_version)
            if inst is None or inst.requested_time != requested_time:
                continue
            if inst.state not in wanted_states:
                continue
            if wanted_actions is None or inst.action in wanted_actions:
                found.append(inst)
        deleted = []
        for inst in sorted(found, key=lambda i: -i.state.value):
            path = self._path(inst)
            if self.gw.delete_file(path):
                deleted.append(path)
        return deleted

    def delete_instant_files(self, instant: Instant) -> list[str]:
        """Delete the requested and inflight files of a pending instant (rollback).

        The inflight file goes first, so a concurrent reader never sees an inflight instant
        without its requested file. Raises ``TimelineError`` if the instant completed.
        Returns the table-relative paths deleted.
        """
        mine: list[Instant] = []
        for name in self._names():
            other = Instant.parse(name, self.layout_version)
            if other is None or other.requested_time != instant.requested_time:
                continue
            if other.is_completed:
                raise TimelineError(f"refusing to delete completed instant {name}")
            mine.append(other)
        deleted = []
        for inst in sorted(mine, key=lambda i: -i.state.value):
            path = self._path(inst)
            if self.gw.delete_file(path):
                deleted.append(path)
        return deleted
