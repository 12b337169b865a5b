"""Rolling back instants on purpose: a completed write, a table-service plan, a failed attempt.

``hudilite.write.rollback`` undoes *failed* writes (pending instants whose writer died).
This module undoes instants a user or a table service wants gone, the way Hudi's
``BaseRollbackActionExecutor`` does:

1. a ``rollback`` instant is requested with an Avro ``HoodieRollbackPlan`` listing the
   files to delete (written first, so a crash midway can be finished from the plan);
2. it goes inflight; a *completed* target loses its completed timeline file first
   (Hudi's ``revertToInflight``) so readers stop seeing it before its files vanish --
   for table version 8 that is the ``T_C.<action>`` file, as Hudi 1.x does;
3. the target's data files are deleted (base files; log files, which hudilite never
   shares between delta commits, so deleting them is exact);
4. the rollback completes with ``HoodieRollbackMetadata``; then the target's remaining
   timeline files go (all of them, or only the inflight one for a failed compaction
   attempt, whose plan stays requested so it can be retried).

:func:`rollback_instant` is the user-facing rule set: like Hudi it only rolls back the
latest write, refuses savepointed instants, and refuses when the cleaner already removed
the file versions the table would fall back to.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.config import TableConfig
from hudilite.errors import ConflictError, HudiliteError, InstantNotFoundError
from hudilite.filegroup.slices import join_path
from hudilite.services._common import (
    OptionsLike,
    delete_timeline_files,
    instant_info,
    partition_of,
    resolve_options,
)
from hudilite.services.savepoint import savepoint_times
from hudilite.storage.fs import FileSystemGateway
from hudilite.table_state import TableState
from hudilite.timeline.heartbeat import heartbeat_path, is_expired
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
from hudilite.write.markers import delete_markers, marked_files
from hudilite.write.rollback import rollback_failed_writes

ROLLBACK_PLAN_VERSION = 1
ROLLBACK_METADATA_VERSION = 1

#: Every action that writes or plans data files, in any state.
DATA_ACTIONS = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING}
)
_WRITES = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT})
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


@dataclass(frozen=True)
class RollbackInstantResult:
    """What one rollback did.

    ``rollback_instant`` is the rollback's own instant time, ``rolled_back_instant`` and
    ``action`` the target, ``files_deleted``/``files_failed`` table-relative data file
    paths, ``metadata`` the ``HoodieRollbackMetadata`` record written (restore nests it).
    """

    rollback_instant: str
    rolled_back_instant: str
    action: str
    files_deleted: tuple[str, ...] = ()
    files_failed: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    duration_s: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_files_deleted(self) -> int:
        """How many data files were deleted."""
        return len(self.files_deleted)


def _by_partition(paths: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in sorted(set(paths)):
        out.setdefault(partition_of(rel), []).append(rel)
    return out


def planned_rollback_files(gw: FileSystemGateway, timeline: Timeline, target_time: str) -> set[str]:
    """Files that *pending* rollback instants planned to delete for ``target_time``.

    A rollback that crashed after removing its target's completed file leaves no commit
    metadata to find version-6 log files by; its plan still lists them.
    """
    out: set[str] = set()
    for inst in timeline.filter(actions=ROLLBACK):
        if inst.is_completed:
            continue
        try:
            plan = read_avro_record(
                timeline.instant_content(Instant(inst.requested_time, ROLLBACK, State.REQUESTED))
            )
        except Exception:  # an unreadable plan says nothing about our target
            continue
        target = (plan.get("instantToRollback") or {}).get("commitTime")
        if target != target_time:
            continue
        for request in plan.get("RollbackRequests") or []:
            partition = request.get("partitionPath") or ""
            for path in request.get("filesToBeDeleted") or []:
                out.add(join_path(partition, path.rstrip("/").rsplit("/", 1)[-1]))
    return {p for p in out if gw.exists(p)}


def files_written_by(state: TableState, instant_time: str) -> list[str]:
    """Every data file ``instant_time`` wrote that still exists: base files named with it,
    files its commit metadata or markers list, files a crashed rollback planned to delete."""
    files = set(state.view.files_of_instant(instant_time))
    files.update(p for p in marked_files(state.gw, instant_time) if state.gw.exists(p))
    files |= planned_rollback_files(state.gw, state.timeline, instant_time)
    return sorted(files)


def perform_rollback(
    gw: FileSystemGateway,
    config: TableConfig,
    target: Instant,
    files: Sequence[str],
    *,
    keep_requested: bool = False,
    rollback_time: str | None = None,
) -> RollbackInstantResult:
    """Roll back ``target`` by deleting ``files`` (table-relative), recorded as a rollback
    instant; see the module docstring for the order of steps.

    ``keep_requested`` keeps the target's requested file (a failed compaction attempt is
    reverted to requested so it can run again); otherwise every timeline file of the
    target goes. Savepoint files sharing the target's time are never touched.
    """
    started = time.monotonic()
    writer = TimelineWriter(gw, config)
    groups = _by_partition(files)
    plan = {
        "instantToRollback": instant_info(target),
        "RollbackRequests": [
            {
                "partitionPath": partition,
                "fileId": "",
                "latestBaseInstant": target.requested_time,
                "filesToBeDeleted": [gw.uri(p) for p in rels],
                "logBlocksToBeDeleted": {},
            }
            for partition, rels in groups.items()
        ],
        "version": ROLLBACK_PLAN_VERSION,
    }
    requested = writer.create_requested(
        ROLLBACK, rollback_time, write_avro_record("HoodieRollbackPlan", plan)
    )
    inflight = writer.transition_inflight(requested)
    failpoints.check(None, "rollback_after_plan")
    actions = _ACTIONS_OF.get(target.action, (target.action,))
    if target.is_completed:
        delete_timeline_files(gw, config, target.requested_time, actions, [State.COMPLETED])
    deleted: list[str] = []
    failed: list[str] = []
    for rel in sorted(set(files)):
        try:
            gw.delete_file(rel)  # already gone counts as deleted: rollback is idempotent
            deleted.append(rel)
        except OSError:
            failed.append(rel)
        failpoints.check(None, "rollback_mid_delete")
    failpoints.check(None, "rollback_before_complete")
    failed_set = set(failed)
    meta = {
        "startRollbackTime": requested.requested_time,
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
    writer.complete(inflight, write_avro_record("HoodieRollbackMetadata", meta))
    failpoints.check(None, "rollback_after_complete")
    states = [State.INFLIGHT] if keep_requested else [State.INFLIGHT, State.REQUESTED]
    delete_timeline_files(gw, config, target.requested_time, actions, states)
    delete_markers(gw, target.requested_time)
    gw.delete_file(heartbeat_path(target.requested_time))
    return RollbackInstantResult(
        rollback_instant=requested.requested_time,
        rolled_back_instant=target.requested_time,
        action=target.action,
        files_deleted=tuple(deleted),
        files_failed=tuple(failed),
        partitions=tuple(groups),
        duration_s=time.monotonic() - started,
        metadata=meta,
    )


# ------------------------------------------------------------------------- rollback_instant


def _completion_order(timeline: Timeline, inst: Instant) -> str:
    return timeline.completion_time(inst.requested_time) or inst.requested_time


def _newer_instants(timeline: Timeline, target: Instant) -> list[Instant]:
    """Data instants (any state) after ``target``: by requested time, and for completed
    ones also by completion time (version 8 instants may complete out of order)."""
    target_done = _completion_order(timeline, target) if target.is_completed else None
    out = []
    for inst in timeline:
        if inst.action not in DATA_ACTIONS or inst.requested_time == target.requested_time:
            continue
        if inst.requested_time > target.requested_time or (
            target_done is not None
            and inst.is_completed
            and _completion_order(timeline, inst) > target_done
        ):
            out.append(inst)
    return out


def check_previous_versions(state: TableState, target: Instant) -> None:
    """Refuse to roll back a completed write whose fallback files were cleaned.

    Rewritten base files (COW merges, compactions) must still have the slice they replace,
    and file groups a replacecommit retired must still have files; otherwise the rollback
    would silently lose data.
    """
    meta = state.timeline.commit_metadata(target)
    groups = {g.group_key: g for g in state.view.file_groups(include_replaced=True)}
    missing: list[str] = []
    for partition, stats in meta.partition_to_write_stats.items():
        for stat in stats:
            if stat.is_delta or stat.prev_commit in (None, "", "null"):
                continue
            group = groups.get((partition, stat.file_id))
            prev = group.slice_at(str(stat.prev_commit)) if group else None
            if prev is None or prev.is_empty:
                missing.append(f"{partition or '<root>'}/{stat.file_id}@{stat.prev_commit}")
    for key in meta.replaced_file_groups():
        group = groups.get(key)
        if group is None or all(s.is_empty for s in group.slices):
            missing.append(f"{key[0] or '<root>'}/{key[1]} (replaced)")
    if missing:
        raise HudiliteError(
            f"cannot roll back {target.requested_time}: the cleaner already removed the "
            f"file versions the table would fall back to ({', '.join(sorted(missing)[:5])})"
        )


def rollback_instant(
    state: TableState, instant_time: str, options: OptionsLike = None
) -> RollbackInstantResult:
    """Roll back one instant, recorded as a ``rollback`` on the timeline.

    Allowed targets: the latest completed write (commit, deltacommit, replacecommit, or
    a completed compaction/clustering) when nothing newer exists and no savepoint names
    it; a pending compaction/clustering plan (deleting the plan); a pending write whose
    writer is gone (heartbeat expired). Raises :class:`InstantNotFoundError` for an
    unknown instant, :class:`ConflictError` when a live writer owns it, and
    :class:`HudiliteError` with the reason otherwise.
    """
    opts = resolve_options(state, options)
    gw, config = state.gw, state.config
    interval = int(opts.get(cfg.HEARTBEAT_INTERVAL_MS))
    misses = int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES))
    for done in rollback_failed_writes(
        gw, config, heartbeat_interval_ms=interval, tolerable_misses=misses
    ):
        if done.rolled_back_instant == instant_time:
            return RollbackInstantResult(
                done.rollback_instant, instant_time, "", tuple(done.files_deleted)
            )
    if instant_time in savepoint_times(gw, config):
        raise HudiliteError(
            f"{instant_time} is savepointed; delete the savepoint before rolling it back"
        )
    state = TableState.load(gw)
    timeline = state.timeline
    target = timeline.get(instant_time)
    if target is None or target.action not in DATA_ACTIONS:
        raise InstantNotFoundError(f"no write or table-service instant {instant_time} to roll back")
    if target.is_pending and target.action in _WRITES:
        raise ConflictError(
            f"{target} is being written by a live writer (its heartbeat is fresh); "
            "wait for it to finish or fail"
        )
    if target.is_pending and not is_expired(gw, instant_time, interval, misses):
        raise ConflictError(f"{target} is being executed right now (its heartbeat is fresh)")
    newer = _newer_instants(timeline, target)
    if target.is_pending:
        # Version 6 delta commits after a pending compaction T write logs named T: dropping
        # the plan would orphan them.
        if config.layout_version < 2 and any(i.action in _WRITES for i in newer):
            raise HudiliteError(
                f"cannot drop compaction/clustering plan {instant_time}: later writes "
                f"({', '.join(i.requested_time for i in newer[:3])}) depend on it"
            )
        return perform_rollback(gw, config, target, files_written_by(state, instant_time))
    if newer:
        names = ", ".join(str(i) for i in newer[:3])
        raise HudiliteError(
            f"only the latest write can be rolled back; roll back newer instants first: {names}"
        )
    check_previous_versions(state, target)
    return perform_rollback(gw, config, target, files_written_by(state, instant_time))
