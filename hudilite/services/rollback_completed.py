"""Rolling back instants on purpose: a completed write, a table-service plan, a failed attempt.

The rollback itself (plan, revert of a completed target, deletes, metadata) is the one
executor in ``hudilite.write.rollback``, which also undoes *failed* writes (pending
instants whose writer died). This module holds the rules for rolling back instants a user
or a table service wants gone, the way Hudi's ``BaseRollbackActionExecutor`` is used:
which files an instant wrote (:func:`files_written_by`), and :func:`rollback_instant`,
the user-facing rule set: like Hudi it only rolls back the latest write, refuses
savepointed instants, and refuses when the cleaner already removed the file versions the
table would fall back to. A rollback that died midway is finished by the next call (its
pending plan is resumed, never duplicated).
"""

from __future__ import annotations

from hudilite import config as cfg
from hudilite.errors import ConflictError, HudiliteError, InstantNotFoundError
from hudilite.services._common import OptionsLike, resolve_options
from hudilite.services.savepoint import savepoint_times
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import is_expired
from hudilite.timeline.instant import (
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    Instant,
)
from hudilite.timeline.timeline import Timeline
from hudilite.write.markers import marked_files
from hudilite.write.rollback import (
    RollbackResult,
    pending_rollback_of,
    perform_rollback,
    rollback_failed_writes,
)

#: Every action that writes or plans data files, in any state.
DATA_ACTIONS = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING}
)
_WRITES = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT})

#: What one rollback did (the one executor's result, ``hudilite.write.rollback``).
RollbackInstantResult = RollbackResult


def planned_rollback_files(gw: FileSystemGateway, timeline: Timeline, target_time: str) -> set[str]:
    """Files the *pending* rollback of ``target_time`` planned to delete (that still exist).

    A rollback that crashed after removing its target's completed file leaves no commit
    metadata to find version-6 log files by; its plan still lists them.
    """
    plan = pending_rollback_of(timeline, target_time)
    return {p for p in (plan.files if plan else ()) if gw.exists(p)}


def files_written_by(state: TableState, instant_time: str) -> list[str]:
    """Every data file ``instant_time`` wrote that still exists: base files named with it,
    files its commit metadata or markers list, files a crashed rollback planned to delete."""
    files = set(state.view.files_of_instant(instant_time))
    files.update(p for p in marked_files(state.gw, instant_time) if state.gw.exists(p))
    files |= planned_rollback_files(state.gw, state.timeline, instant_time)
    return sorted(files)


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
        gw, config, heartbeat_interval_ms=interval, tolerable_misses=misses, lock_options=opts
    ):
        if done.rolled_back_instant == instant_time:
            return done
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
