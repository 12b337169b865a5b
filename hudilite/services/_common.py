"""Small helpers shared by the table services (compaction, clustering, clean, savepoint,
rollback).

Nothing here decides policy; these are the plan chores every service repeats: resolving
options, reading the file groups named by pending compaction and clustering plans, and the
table's current Avro schema for commit metadata (timeline files are written only by
``TimelineWriter``, rollbacks only through ``hudilite.write.rollback``). The second half
is what compaction and clustering share to execute a plan: the executor context
(:class:`ServiceContext`), the text form of plan units for Spark rows, one
heartbeat-guarded attempt (:func:`run_attempt`) and its commit (:func:`commit_attempt`).
"""

from __future__ import annotations

import base64
import json
import pickle
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import pyarrow as pa

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.config import Options
from hudilite.errors import (
    ConflictError,
    CorruptFileError,
    HudiliteError,
    TimelineError,
    WriteError,
)
from hudilite.failpoints import FAIL_POINT_KEY as FAIL_POINT_KEY  # re-export
from hudilite.filegroup.slices import BaseFile, CommittedRange, FileSlice, LogFile, join_path
from hudilite.index.bloom_index import bloom_config
from hudilite.merge import MergeSpec
from hudilite.read.file_group_reader import read_file_slice
from hudilite.schema import arrow_to_avro_schema
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import Heartbeat, is_expired
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.plans import PLAN_ACTIONS as PLAN_ACTIONS  # re-exported
from hudilite.timeline.plans import pending_plan_groups as pending_plan_groups
from hudilite.timeline.plans import plan_file_groups as plan_file_groups
from hudilite.timeline.plans import read_plan as read_plan
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.finalize import finalize_write
from hudilite.write.lock import table_lock
from hudilite.write.markers import delete_markers
from hudilite.write.rollback import (
    instant_files,
    resume_or_request,
    rollback_failed_writes,
    rollback_planned_for,
)

OptionsLike = Options | Mapping[str, Any] | None
ReadSliceFn = Callable[..., pa.Table]

_T = TypeVar("_T")
_ContextT = TypeVar("_ContextT", bound="ServiceContext")


def resolve_options(state: TableState, options: OptionsLike) -> Options:
    """Table properties and write defaults overlaid with the call's ``options``."""
    if isinstance(options, Options):
        return state.options(options.raw)
    return state.options({k: str(v) for k, v in (options or {}).items() if v is not None})


def partition_of(rel_path: str) -> str:
    """Partition path of a table-relative data file path (``""`` at the base path)."""
    return posixpath.dirname(rel_path)


def table_schema_json(state: TableState) -> str:
    """The Avro schema (JSON) of the data columns, as the latest commit recorded it (kept
    verbatim, so a schema written by Hudi stays byte-identical), else the create schema,
    else rendered from the Arrow schema."""
    if state.schema_json:
        return state.schema_json
    name = state.config.name
    avro = arrow_to_avro_schema(state.data_schema, f"{name}_record", f"hoodie.{name}")
    return json.dumps(avro, separators=(",", ":"))


# ------------------------------------------------------ executing compaction and clustering


def heartbeat_settings(opts: Options) -> tuple[int, int]:
    """``(heartbeat interval in ms, tolerable misses)`` of ``opts``."""
    return int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)), int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES))


def rollback_expired_writes(state: TableState, opts: Options) -> None:
    """Roll back failed writes (expired heartbeats) before a table service is planned."""
    interval, misses = heartbeat_settings(opts)
    rollback_failed_writes(
        state.gw,
        state.config,
        heartbeat_interval_ms=interval,
        tolerable_misses=misses,
        lock_options=opts,
    )


def default_reader() -> ReadSliceFn:
    """``read_file_slice``, the merge reader of file slices."""
    return read_file_slice


@dataclass(frozen=True)
class ServiceContext:
    """What an executor needs to rewrite file slices for table service ``instant_time``
    (pickled to Spark tasks). ``completed`` maps the requested time of every completed
    instant to its completion time (None on table version 6); it decides which log blocks
    apply and, on version 8, the order of the log files. ``kind`` names the service in
    error messages."""

    kind: ClassVar[str] = "table service"

    gw: FileSystemGateway
    instant_time: str
    storage_schema: pa.Schema
    merge_spec: MergeSpec
    table_version: int
    completed: Mapping[str, str | None]
    timeline_start: str | None
    read_slice_fn: ReadSliceFn | None = None
    fail_point: str | None = None  # test hook, see check_fail_point
    bloom: BloomConfig = BloomConfig()  # the bloom filter of every base file written
    #: Log file path -> bytes completed commits recorded writing (``LogFile.committed``):
    #: a damaged block there fails the rewrite instead of being compacted away.
    log_ranges: Mapping[str, tuple[CommittedRange, ...]] = field(default_factory=dict)

    @classmethod
    def of_state(
        cls: type[_ContextT],
        state: TableState,
        instant_time: str,
        opts: Options,
        read_slice_fn: ReadSliceFn | None = None,
        **extra: Any,
    ) -> _ContextT:
        """The context of ``instant_time`` on ``state``'s timeline (``extra``: the
        subclass's own fields)."""
        first = state.timeline.first_active()
        return cls(
            gw=state.gw,
            instant_time=instant_time,
            storage_schema=state.storage_schema,
            merge_spec=state.merge_spec(opts),
            table_version=int(state.config.table_version),
            completed={i.requested_time: i.completion_time for i in state.timeline.completed()},
            timeline_start=first.requested_time if first is not None else None,
            read_slice_fn=read_slice_fn,
            fail_point=opts.raw.get(FAIL_POINT_KEY),
            bloom=bloom_config(opts),
            log_ranges=state.view.committed_log_ranges() if state.config.is_mor else {},
            **extra,
        )

    def is_instant_visible(self, instant_time: str) -> bool:
        """Log blocks the service applies: of instants before ``T`` that completed (or
        were archived)."""
        if instant_time >= self.instant_time:
            return False
        if instant_time in self.completed:
            return True
        return self.timeline_start is not None and instant_time < self.timeline_start

    def check_fail_point(self, name: str) -> None:
        """Raise a simulated crash at ``name`` when the test hook asks for it."""
        failpoints.check(self.fail_point, name)

    def planned_slice(
        self,
        partition: str,
        file_id: str,
        data_file: str | None,
        delta_files: Sequence[str],
        base_instant: str | None = None,
    ) -> FileSlice:
        """The slice a plan names (base file name, log file names), with sizes from
        storage and version-8 log order; ``base_instant`` defaults to the base file's
        instant, else the oldest log's.

        Raises :class:`CorruptFileError` when a planned file is missing (it was deleted
        behind the plan's back; rewriting without it would lose or resurrect data).
        """

        def size(rel: str) -> int:
            try:
                return self.gw.size(rel)
            except FileNotFoundError:
                raise CorruptFileError(
                    f"{self.kind} {self.instant_time}: planned file {rel} is missing"
                ) from None

        base = None
        if data_file:
            name = BaseFileName.parse(data_file)
            if name is None:
                raise CorruptFileError(f"{self.kind} plan names a bad base file {data_file!r}")
            base = BaseFile(partition, name, size(join_path(partition, data_file)))
        logs = []
        for log_name in delta_files:
            parsed = LogFileName.parse(log_name)
            if parsed is None:
                raise CorruptFileError(f"{self.kind} plan names a bad log file {log_name!r}")
            completion = (
                self.completed.get(parsed.base_instant) or parsed.base_instant
                if self.table_version >= 8
                else None
            )
            path = join_path(partition, log_name)
            committed = self.log_ranges.get(path, ())
            logs.append(LogFile(partition, parsed, size(path), completion, committed))
        logs.sort(key=LogFile.sort_key)
        if base_instant is None:
            base_instant = (
                base.instant_time
                if base is not None
                else min((log.instant_time for log in logs), default="")
            )
        return FileSlice(partition, file_id, base_instant, base, tuple(logs))


def encode_unit(unit: object) -> str:
    """Text form of a plan unit (operation, group) for a DataFrame row (base64 pickle)."""
    return base64.b64encode(pickle.dumps(unit, protocol=pickle.HIGHEST_PROTOCOL)).decode()


def decode_unit(text: str, cls: type[_T], what: str) -> _T:
    """Inverse of :func:`encode_unit`; :class:`CorruptFileError` unless a ``cls``."""
    value = pickle.loads(base64.b64decode(text))
    if not isinstance(value, cls):
        raise CorruptFileError(f"not a {what}: {type(value).__name__}")
    return value


def take_over_expired(
    state: TableState,
    kind: str,
    instant: Instant,
    opts: Options,
    rollback: Callable[[TableState], str],
) -> tuple[TableState, str | None]:
    """Before a new attempt of the pending ``instant``: an inflight attempt whose
    heartbeat expired is rolled back (``rollback(state)`` returns the rollback instant)
    and the table reloaded; a live one is a :class:`ConflictError`. Returns the state to
    go on with and the rollback instant (None when there was nothing to take over).

    The attempt may only look dead (a stalled heartbeat) and be about to commit, so the
    decision is taken under the table lock on a fresh timeline (a completed instant is
    never touched) and the rollback plan is on the timeline before the lock is released:
    :func:`commit_attempt` then refuses to complete the old attempt. ``rollback`` resumes
    that plan outside the lock."""
    if not instant.is_inflight:
        return state, None
    interval, misses = heartbeat_settings(opts)
    t = instant.requested_time
    with table_lock(state.gw, opts):
        fresh = Timeline.load(state.gw, state.config)
        current = fresh.get(t)
        if current is None or current.is_completed:
            raise TimelineError(f"{kind} {t} is already completed")
        if not current.is_inflight:
            return TableState.load(state.gw), None  # the attempt was reverted meanwhile
        if not is_expired(state.gw, t, interval, misses):
            raise ConflictError(f"{kind} {t} is being executed by another process")
        files = instant_files(state.gw, state.config, t)
        resume_or_request(state.gw, state.config, fresh, current, files)
    rolled_back = rollback(state)
    return TableState.load(state.gw), rolled_back


def run_attempt(
    state: TableState,
    kind: str,
    requested: Instant,
    opts: Options,
    work: Callable[[Instant], _T],
    rollback: Callable[[], object],
) -> _T:
    """One attempt of the pending table service ``requested``: start its heartbeat, move
    it inflight and return ``work(inflight)``. Losing the race to go inflight is a
    :class:`ConflictError`. On a failure of ``work``, ``rollback()`` undoes the attempt
    (the plan stays requested) and the error is re-raised (non-hudilite errors as
    :class:`WriteError`)."""
    instant_time = requested.requested_time
    interval, _ = heartbeat_settings(opts)
    # Beat before going inflight, so no one mistakes the fresh attempt for a dead one.
    heartbeat = Heartbeat(state.gw, instant_time, interval).start()
    writer = TimelineWriter(state.gw, state.config)
    try:
        inflight = writer.transition_inflight(requested)
    except TimelineError:
        heartbeat.stop(delete=False)  # the heartbeat file is the other attempt's now
        raise ConflictError(f"{kind} {instant_time} was started by another process") from None
    taken_over = False
    try:
        try:
            return work(inflight)
        except _TakenOver:
            # Another process rolls this attempt back and may already run the next one:
            # undoing "our" instant now (or dropping its heartbeat) would hit that attempt.
            taken_over = True
            raise
        except BaseException as exc:
            rollback()
            if isinstance(exc, HudiliteError) or not isinstance(exc, Exception):
                raise
            raise WriteError(
                f"{kind} {instant_time} failed and was rolled back (its plan stays "
                f"requested): {exc}"
            ) from exc
    finally:
        heartbeat.stop(delete=not taken_over)


def commit_attempt(
    state: TableState,
    inflight: Instant,
    stats: Sequence[WriteStat],
    metadata: Callable[[dict[str, list[WriteStat]]], bytes],
) -> Instant:
    """Complete ``inflight`` with the commit metadata ``metadata(stats by partition)``
    (called under the table lock), after deleting files its markers name that no stat
    lists (a retried task's duplicates, see :mod:`hudilite.write.finalize`); then drop its
    markers."""
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    with table_lock(state.gw) as held:
        _check_attempt_still_pending(state, inflight)
        # After the check: a taken-over attempt must not delete the new attempt's files.
        finalize_write(state.gw, inflight.requested_time, stats)
        failpoints.check(None, "before_complete")
        held.check()  # a lease lost meanwhile: another writer may be committing now
        done = TimelineWriter(state.gw, state.config).complete(inflight, metadata(by_partition))
    failpoints.check(None, "after_complete")
    delete_markers(state.gw, inflight.requested_time)
    return done


class _TakenOver(ConflictError):
    """This attempt was taken for dead and its rollback planned by another process."""


def _check_attempt_still_pending(state: TableState, inflight: Instant) -> None:
    """Under the table lock: refuse to complete an attempt another process took for dead
    (a rollback of it was planned since ``state`` was loaded, before the attempt went
    inflight) or whose inflight file is gone."""
    t = inflight.requested_time
    fresh = Timeline.load(state.gw, state.config)
    rollback = rollback_planned_for(fresh, t, since=state.timeline.max_instant_time())
    if rollback is not None:
        raise _TakenOver(
            f"{t} cannot commit: rollback {rollback} of this attempt was planned by another "
            "process that found its heartbeat expired; retry"
        )
    current = fresh.get(t)
    if current is None or not current.is_inflight:
        raise _TakenOver(f"{t} cannot commit: the attempt is no longer inflight ({current})")
