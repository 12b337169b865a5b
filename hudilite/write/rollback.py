"""Rolling back an instant: the one rollback executor, and lazy rollback of failed writes.

Every rollback, whoever asks for it (a failed write, a user, a restore, a table service
undoing an attempt), runs as Hudi's ``BaseRollbackActionExecutor`` does:

1. **plan**: ``R.rollback.requested`` holds an Avro ``HoodieRollbackPlan`` naming the
   instant to roll back and the files to delete (:func:`request_rollback`). A pending plan
   for the same instant is *resumed*, never duplicated (:func:`pending_rollback_of`);
2. **execute** (:func:`execute_rollback`): ``R.rollback.inflight``; a completed target
   loses its completed file first (Hudi's ``revertToInflight``), so readers stop seeing it
   before its files vanish; the planned files (and the ``.tmp`` leftovers of interrupted
   creates beside them) are deleted; ``R.rollback`` completes with
   ``HoodieRollbackMetadata`` (deleted and failed files per partition); then the target's
   remaining timeline files, its markers and its heartbeat go.

**Failed writes** (:func:`rollback_failed_writes`, Hudi's lazy failed-writes cleaning):
a pending write whose heartbeat expired is presumed dead. Its writer may in fact be alive
(a stalled heartbeat) and about to commit, and a writer deletes its heartbeat once it
committed, so the *decision* is made under the table lock against a fresh timeline: an
instant that completed is never touched, and the rollback plan is written before the lock
is released. From then on the write cannot complete -- :meth:`WriteTransaction.commit`
checks under the same lock that no rollback of its instant was planned
(:func:`rollback_planned_for`) -- so the files are deleted outside the lock.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudilite import failpoints
from hudilite.config import TableConfig
from hudilite.config.vocab import CLUSTER_OPERATION
from hudilite.errors import TimelineError
from hudilite.filegroup.slices import join_path
from hudilite.filegroup.view import FileSystemView
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.heartbeat import HEARTBEAT_DIR, Heartbeat, heartbeat_path, is_expired
from hudilite.timeline.instant import (
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from hudilite.write.markers import TEMP_DIR, delete_markers, marked_files

WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
ROLLBACK_PLAN_VERSION = 1
ROLLBACK_METADATA_VERSION = 1
#: Heartbeat interval of a running rollback (a pending rollback without a fresh beat was
#: abandoned and is resumed by the next rollback pass).
ROLLBACK_HEARTBEAT_MS = 60000

#: Timeline actions an instant's files may carry: a completed compaction is a ``commit``
#: whose requested/inflight files say ``compaction`` (likewise clustering, log compaction).
_ACTIONS_OF = {
    COMMIT: (COMMIT, COMPACTION),
    DELTA_COMMIT: (DELTA_COMMIT, LOG_COMPACTION),
    REPLACE_COMMIT: (REPLACE_COMMIT, CLUSTERING),
    COMPACTION: (COMPACTION, COMMIT),
    LOG_COMPACTION: (LOG_COMPACTION, DELTA_COMMIT),
    CLUSTERING: (CLUSTERING, REPLACE_COMMIT),
}
#: ``FileSystemGateway._temp_name``: ``.<name>.<32 hex>.tmp`` beside the file being created.
_TMP = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{32}\.tmp$")


@dataclass(frozen=True)
class RollbackResult:
    """What one rollback did.

    ``rollback_instant`` is the rollback's own instant time, ``rolled_back_instant`` and
    ``action`` the target, ``files_deleted``/``files_failed`` table-relative data file
    paths, ``metadata`` the ``HoodieRollbackMetadata`` record written (restore nests it).
    """

    rollback_instant: str
    rolled_back_instant: str
    action: str = ""
    files_deleted: tuple[str, ...] = ()
    files_failed: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    duration_s: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_files_deleted(self) -> int:
        """How many data files were deleted."""
        return len(self.files_deleted)


@dataclass(frozen=True)
class RollbackPlan:
    """A rollback on the timeline: its own (pending) instant, the target and the files
    its ``HoodieRollbackPlan`` names (table-relative)."""

    instant: Instant
    target: Instant
    files: tuple[str, ...]


def instant_info(instant: Instant) -> dict[str, str]:
    """A ``HoodieInstantInfo`` record (requested time and the action as on disk)."""
    return {"commitTime": instant.requested_time, "action": instant.action}


def _partition_of(rel_path: str) -> str:
    return posixpath.dirname(rel_path)


def _by_partition(paths: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in sorted(set(paths)):
        out.setdefault(_partition_of(rel), []).append(rel)
    return out


# ------------------------------------------------------------------------------- plans


def _read_plan(timeline: Timeline, rollback_time: str) -> dict[str, Any] | None:
    try:
        data = timeline.instant_content(Instant(rollback_time, ROLLBACK, State.REQUESTED))
        return read_avro_record(data) if data.strip() else None
    except Exception:  # no or unreadable plan: it says nothing about any target
        return None


def _plan_of(timeline: Timeline, inst: Instant) -> RollbackPlan | None:
    record = _read_plan(timeline, inst.requested_time)
    info = (record or {}).get("instantToRollback") or {}
    if not info.get("commitTime"):
        return None
    target_time = str(info["commitTime"])
    target = timeline.get(target_time) or Instant(
        target_time, str(info.get("action") or COMMIT), State.INFLIGHT
    )
    files: set[str] = set()
    for request in (record or {}).get("RollbackRequests") or []:
        partition = request.get("partitionPath") or ""
        for path in request.get("filesToBeDeleted") or []:
            files.add(join_path(partition, str(path).rstrip("/").rsplit("/", 1)[-1]))
    return RollbackPlan(inst, target, tuple(sorted(files)))


def pending_rollback_of(timeline: Timeline, target_time: str) -> RollbackPlan | None:
    """The pending rollback whose plan targets ``target_time`` (the latest, if several),
    to be resumed instead of planning a second one."""
    found = _rollbacks_of(timeline, target_time, completed=False)
    return found[-1] if found else None


def _rollbacks_of(timeline: Timeline, target_time: str, *, completed: bool) -> list[RollbackPlan]:
    """The completed (or pending) rollbacks whose plans target ``target_time``, oldest first."""
    plans = []
    for inst in timeline.filter(actions=ROLLBACK):
        if inst.is_completed == completed and inst.requested_time > target_time:
            plan = _plan_of(timeline, inst)
            if plan is not None and plan.target.requested_time == target_time:
                plans.append(plan)
    return plans


def rollback_planned_for(
    timeline: Timeline, target_time: str, since: str | None = None
) -> str | None:
    """Requested time of a rollback (any state) whose plan targets ``target_time`` and
    that was requested after ``since`` (default: ``target_time``; a table-service attempt
    passes a time from before it went inflight, so rollbacks of earlier attempts of the
    same instant do not count), or None. An attempt must not complete once one exists:
    its files are being deleted."""
    floor = max(target_time, since or target_time)
    for inst in timeline.filter(actions=ROLLBACK):
        if inst.requested_time <= floor:
            continue  # a rollback is always planned after what it undoes
        plan = _plan_of(timeline, inst)
        if plan is not None and plan.target.requested_time == target_time:
            return inst.requested_time
    return None


def request_rollback(
    gw: FileSystemGateway,
    config: TableConfig,
    target: Instant,
    files: Sequence[str],
    rollback_time: str | None = None,
) -> RollbackPlan:
    """Put a rollback plan for ``target`` deleting ``files`` on the timeline."""
    record = {
        "instantToRollback": instant_info(target),
        "RollbackRequests": [
            {
                "partitionPath": partition,
                "fileId": "",
                "latestBaseInstant": target.requested_time,
                "filesToBeDeleted": [gw.uri(p) for p in rels],
                "logBlocksToBeDeleted": {},
            }
            for partition, rels in _by_partition(files).items()
        ],
        "version": ROLLBACK_PLAN_VERSION,
    }
    requested = TimelineWriter(gw, config).create_requested(
        ROLLBACK, rollback_time, write_avro_record("HoodieRollbackPlan", record)
    )
    return RollbackPlan(requested, target, tuple(sorted(set(files))))


def resume_or_request(
    gw: FileSystemGateway,
    config: TableConfig,
    timeline: Timeline,
    target: Instant,
    files: Sequence[str],
    rollback_time: str | None = None,
) -> RollbackPlan:
    """The pending rollback of ``target`` if one exists (an interrupted rollback is
    finished, not repeated), else a new plan; ``files`` are added to a resumed plan's."""
    pending = pending_rollback_of(timeline, target.requested_time)
    if pending is None:
        return request_rollback(gw, config, target, files, rollback_time)
    return RollbackPlan(pending.instant, target, tuple(sorted({*pending.files, *files})))


# ----------------------------------------------------------------------------- execution


def _delete_tmp_siblings(gw: FileSystemGateway, files: Iterable[str]) -> None:
    """Delete the ``.tmp`` files an interrupted create of any of ``files`` left."""
    by_dir: dict[str, set[str]] = {}
    for rel in files:
        by_dir.setdefault(_partition_of(rel), set()).add(posixpath.basename(rel))
    for directory, names in by_dir.items():
        for entry in gw.list_dir(directory):
            m = _TMP.match(entry.name)
            if not entry.is_dir and m is not None and m.group("name") in names:
                gw.delete_file(join_path(directory, entry.name))


def execute_rollback(
    gw: FileSystemGateway,
    config: TableConfig,
    plan: RollbackPlan,
    *,
    keep_requested: bool = False,
    locked_complete: bool = False,
    heartbeat_interval_ms: int = ROLLBACK_HEARTBEAT_MS,
    lock_options: Any = None,
) -> RollbackResult:
    """Carry out ``plan`` (see the module docstring); safe to re-run after a crash and to
    run twice at once (every step is idempotent).

    ``keep_requested`` keeps the target's requested file (a failed compaction attempt is
    reverted to requested so it can run again); otherwise every timeline file of the
    target goes. Savepoint files sharing the target's time are never touched.
    ``locked_complete`` completes the rollback under the table lock (when another process
    may be finishing the same plan; ``lock_options`` choose the lock provider). The
    rollback beats its own heartbeat every ``heartbeat_interval_ms`` while it runs.
    """
    started = time.monotonic()
    writer = TimelineWriter(gw, config)
    target = plan.target
    rb_time = plan.instant.requested_time
    heartbeat = Heartbeat(gw, rb_time, heartbeat_interval_ms).start()
    try:
        inflight = plan.instant.as_state(State.INFLIGHT)
        if plan.instant.state is State.REQUESTED:
            # Resumed, or run by another process too: then it is inflight already.
            with contextlib.suppress(TimelineError):
                writer.transition_inflight(plan.instant)
        failpoints.check(None, "rollback_after_plan")
        actions = _ACTIONS_OF.get(target.action, (target.action,))
        if target.is_completed:
            writer.delete_files(target.requested_time, actions, [State.COMPLETED])
        files = sorted(set(plan.files))
        deleted: list[str] = []
        failed: list[str] = []
        for rel in files:
            try:
                gw.delete_file(rel)  # already gone counts as deleted: rollback is idempotent
                deleted.append(rel)
            except OSError:
                failed.append(rel)
            failpoints.check(None, "rollback_mid_delete")
        failpoints.check(None, "rollback_before_complete")
        # A create interrupted mid-way leaves a .tmp beside its (absent, but marked) file.
        _delete_tmp_siblings(gw, {*files, *marked_files(gw, target.requested_time)})
        failed_set = set(failed)
        groups = _by_partition(files)
        meta = {
            "startRollbackTime": rb_time,
            "timeTakenInMillis": int((time.monotonic() - started) * 1000),
            "totalFilesDeleted": len(deleted),
            "commitsRollback": [target.requested_time],
            "partitionMetadata": {
                partition: {
                    "partitionPath": partition,
                    "successDeleteFiles": [gw.uri(p) for p in rels if p not in failed_set],
                    "failedDeleteFiles": [gw.uri(p) for p in rels if p in failed_set],
                    "rollbackLogFiles": {},
                    "logFilesFromFailedCommit": {},
                }
                for partition, rels in groups.items()
            },
            "version": ROLLBACK_METADATA_VERSION,
            "instantsRollback": [instant_info(target)],
        }
        content = write_avro_record("HoodieRollbackMetadata", meta)
        if locked_complete:
            with table_lock(gw, lock_options):
                _complete_once(gw, config, writer, inflight, content)
        else:
            _complete_once(gw, config, writer, inflight, content)
        failpoints.check(None, "rollback_after_complete")
        states = [State.INFLIGHT] if keep_requested else [State.INFLIGHT, State.REQUESTED]
        writer.delete_files(target.requested_time, actions, states)
        delete_markers(gw, target.requested_time)
        # Only now, with the rollback visible, may the target's heartbeat go.
        gw.delete_file(heartbeat_path(target.requested_time))
    finally:
        heartbeat.stop()
    return RollbackResult(
        rollback_instant=rb_time,
        rolled_back_instant=target.requested_time,
        action=target.action,
        files_deleted=tuple(deleted),
        files_failed=tuple(failed),
        partitions=tuple(groups),
        duration_s=time.monotonic() - started,
        metadata=meta,
    )


def _complete_once(
    gw: FileSystemGateway,
    config: TableConfig,
    writer: TimelineWriter,
    inflight: Instant,
    content: bytes,
) -> None:
    if Timeline.load(gw, config).is_completed(inflight.requested_time):
        return  # another process finishing the same plan got there first
    writer.complete(inflight, content)


def perform_rollback(
    gw: FileSystemGateway,
    config: TableConfig,
    target: Instant,
    files: Sequence[str],
    *,
    keep_requested: bool = False,
    rollback_time: str | None = None,
) -> RollbackResult:
    """Roll back ``target`` by deleting ``files`` (table-relative): plan (or resume the
    pending plan of ``target``) and execute, in the caller's process and lock context."""
    timeline = Timeline.load(gw, config)
    plan = resume_or_request(gw, config, timeline, target, files, rollback_time)
    return execute_rollback(gw, config, plan, keep_requested=keep_requested)


# ------------------------------------------------------------------------- failed writes


def _is_clustering(timeline: Timeline, instant: Instant) -> bool:
    """True for a version-6 pending clustering: a replacecommit whose request holds a
    clustering plan. Hudi never rolls those back as failed writes; clustering rolls back
    its own abandoned attempts (``hudilite.services.clustering``)."""
    if instant.action != REPLACE_COMMIT:
        return False
    try:
        data = timeline.instant_content(
            Instant(instant.requested_time, REPLACE_COMMIT, State.REQUESTED)
        )
        return (
            bool(data.strip()) and read_avro_record(data).get("operationType") == CLUSTER_OPERATION
        )
    except Exception:  # no or unreadable request: an ordinary write
        return False


def instant_files(gw: FileSystemGateway, config: TableConfig, instant_time: str) -> list[str]:
    """Every data file a pending write or table-service attempt left: files named with
    it, and (as version-6 log names carry their slice's base instant, not the writer's)
    the files its markers name."""
    view = FileSystemView(gw, config, Timeline.load(gw, config))
    files = set(view.files_of_instant(instant_time))
    files.update(p for p in marked_files(gw, instant_time) if gw.exists(p))
    return sorted(files)


def _plan_failed_write(
    gw: FileSystemGateway,
    config: TableConfig,
    timeline: Timeline,
    target: Instant,
) -> RollbackPlan:
    """Under the table lock: the plan that rolls back the pending write ``target``.

    A rollback of ``target`` that completed but died before removing the target's own
    timeline files is finished (its clean-up re-run), never followed by a second one."""
    done = _rollbacks_of(timeline, target.requested_time, completed=True)
    if done:
        return done[0]
    files = instant_files(gw, config, target.requested_time)
    return resume_or_request(gw, config, timeline, target, files)


def _execute_failed_write(
    gw: FileSystemGateway,
    config: TableConfig,
    plan: RollbackPlan,
    heartbeat_interval_ms: int,
    lock_options: Any = None,
) -> RollbackResult:
    """Outside the lock: the target can no longer complete, so its files (as listed now:
    the writer may have added some since the plan) are deleted."""
    files = {*plan.files, *instant_files(gw, config, plan.target.requested_time)}
    full = RollbackPlan(plan.instant, plan.target, tuple(sorted(files)))
    return execute_rollback(
        gw,
        config,
        full,
        locked_complete=True,
        heartbeat_interval_ms=heartbeat_interval_ms,
        lock_options=lock_options,
    )


def _next_failed_write(
    gw: FileSystemGateway,
    config: TableConfig,
    timeline: Timeline,
    heartbeat_interval_ms: int,
    tolerable_misses: int,
    skip: set[str],
) -> RollbackPlan | None:
    """Under the table lock, on a fresh timeline: the next rollback to run, resuming an
    abandoned rollback of a failed write first, else planning one for a pending write
    whose heartbeat expired. Completed instants are never candidates."""
    for inst in timeline.filter(actions=ROLLBACK):
        if not inst.is_pending or inst.requested_time in skip:
            continue
        plan = _plan_of(timeline, inst)
        if plan is None or plan.target.action not in WRITE_ACTIONS:
            continue  # a table service's or restore's rollback: its owner resumes it
        if plan.target.is_completed or _is_clustering(timeline, plan.target):
            continue  # a user's rollback of a completed write: rollback_instant resumes it
        if plan.target.requested_time in skip:
            continue
        if is_expired(gw, inst.requested_time, heartbeat_interval_ms, tolerable_misses):
            return plan
        skip.add(plan.target.requested_time)  # someone is running this rollback right now
    for inst in timeline.pending():
        if inst.action not in WRITE_ACTIONS or inst.requested_time in skip:
            continue
        if _is_clustering(timeline, inst):
            continue  # a table service awaiting execution (v6 spells it replacecommit)
        if not is_expired(gw, inst.requested_time, heartbeat_interval_ms, tolerable_misses):
            continue  # another writer is still working on it
        return _plan_failed_write(gw, config, timeline, inst)
    return None


def rollback_failed_writes(
    gw: FileSystemGateway,
    config: TableConfig,
    *,
    heartbeat_interval_ms: int,
    tolerable_misses: int,
    exclude: str | None = None,
    lock_options: Any = None,
) -> list[RollbackResult]:
    """Roll back every pending write whose writer is gone (heartbeat expired), and finish
    rollbacks of failed writes that were interrupted. Each decision is taken under the
    table lock on a fresh timeline; see the module docstring. Then the leftovers of
    finished and crashed instants go (:func:`clean_leftovers`)."""
    results: list[RollbackResult] = []
    skip = {exclude} if exclude else set()
    while True:
        with table_lock(gw, lock_options):
            timeline = Timeline.load(gw, config)
            plan = _next_failed_write(
                gw, config, timeline, heartbeat_interval_ms, tolerable_misses, skip
            )
        if plan is None:
            clean_leftovers(gw, config, heartbeat_interval_ms * tolerable_misses)
            return results
        skip.add(plan.target.requested_time)
        skip.add(plan.instant.requested_time)
        results.append(_execute_failed_write(gw, config, plan, heartbeat_interval_ms, lock_options))


def clean_leftovers(gw: FileSystemGateway, config: TableConfig, expiry_ms: int) -> list[str]:
    """Remove what finished, rolled-back or crashed instants left behind; returns the
    table-relative paths removed.

    * heartbeat files of instants that completed or are no longer on the timeline (a
      writer beats before it reserves its instant, so an absent instant's heartbeat only
      goes once it is older than ``expiry_ms``);
    * marker folders ``.hoodie/.temp/<instant>`` of instants that completed or are gone;
    * ``.tmp`` files of interrupted creates (``FileSystemGateway._temp_name``) in the
      metadata, timeline and heartbeat folders, once older than ``expiry_ms``. Those
      beside data files go with the rollback of the write that created them.

    The folders are listed *before* the timeline is loaded: markers are only created once
    their instant is on the timeline, so a marker folder listed here whose instant the
    later timeline lacks was rolled back (or archived), never a write just starting.
    """
    now = time.time_ns() // 1_000_000
    heartbeats = gw.list_dir(HEARTBEAT_DIR)
    markers = [e for e in gw.list_dir(TEMP_DIR) if e.is_dir and e.name.isdigit()]
    folders = sorted({".hoodie", config.timeline_dir})
    tmps = [e for d in folders for e in gw.list_dir(d) if not e.is_dir and _TMP.match(e.name)]
    timeline = Timeline.load(gw, config)
    removed: list[str] = []

    def gone_or_done(instant_time: str) -> bool:
        inst = timeline.get(instant_time)
        return inst is None or inst.is_completed

    for e in heartbeats:
        if e.is_dir:
            continue
        stale = now - e.mtime_ms > expiry_ms
        if _TMP.match(e.name):
            done = stale
        else:
            inst = timeline.get(e.name)
            done = (inst is not None and inst.is_completed) or (inst is None and stale)
        if done and gw.delete_file(e.path):
            removed.append(e.path)
    for e in markers:
        if gone_or_done(e.name) and gw.delete_dir(e.path):
            removed.append(e.path)
    for e in tmps:
        if now - e.mtime_ms > expiry_ms and gw.delete_file(e.path):
            removed.append(e.path)
    return removed


def rollback_own_write(
    gw: FileSystemGateway,
    config: TableConfig,
    instant_time: str,
    heartbeat_interval_ms: int = ROLLBACK_HEARTBEAT_MS,
    lock_options: Any = None,
) -> RollbackResult | None:
    """A writer undoes its own failed write ``instant_time`` (decided under the lock: a
    completed instant is left alone; a rollback another process planned is joined).

    When the instant is already gone (another process rolled it back completely), the
    files its markers still name are deleted: nothing can commit them any more.
    """
    with table_lock(gw, lock_options):
        timeline = Timeline.load(gw, config)
        target = timeline.get(instant_time)
        plan = None
        if target is not None and target.is_pending:
            plan = _plan_failed_write(gw, config, timeline, target)
    if plan is not None:
        return _execute_failed_write(gw, config, plan, heartbeat_interval_ms, lock_options)
    if target is None:
        for rel in marked_files(gw, instant_time):
            gw.delete_file(rel)
        _delete_tmp_siblings(gw, marked_files(gw, instant_time))
        delete_markers(gw, instant_time)
    return None
