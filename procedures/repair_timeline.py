"""Repairs of pending instants: ``run_rollback_inflight_tableservice``,
``cleanup_stale_inflight_commits`` and ``repair_corrupted_clean_files``, with Hudi's
parameters and output columns (``RunRollbackInflightTableServiceProcedure``,
``CleanupStaleInflightCommitsProcedure``, ``RepairCorruptedCleanFilesProcedure`` in
``hudi-spark-datasource/hudi-spark/.../command/procedures/``). As in the other procedures,
``path`` may name the table instead of ``table``, after Hudi's parameters.

Every rollback goes through :mod:`hudilite.write.rollback` (plan, execute, the metadata
table's deltacommit rolled back with it) and is decided under the table lock on a fresh
timeline, so a completed instant is never touched, and an instant whose writer still
beats its heartbeat is left alone: rolling it back under a live writer would leave the
files it goes on writing behind (Hudi rolls it back regardless).

``run_rollback_inflight_tableservice(table, path, pending_instant,
delete_request_instant_file)`` rolls back one *inflight* compaction or clustering
(``clustering`` on version 8+, on version 6 a ``replacecommit`` whose request holds a
clustering plan), as Hudi's ``rollbackInflightCompaction`` / ``rollbackInflightClustering``:
what the attempt wrote is deleted under a ``rollback`` instant and the instant reverts to
requested, its plan kept for the next run; ``delete_request_instant_file`` then deletes the
plan too. One row ``(instant, time_cost)``, the time in milliseconds as text. Anything else
at ``pending_instant`` (nothing, a requested plan, another action) is an error naming it.
Beyond Hudi, deleting the plan of a version-6 compaction that later log files were written
against (their names carry its time as base instant) is refused: without the plan their
slice would hide the records of the slice before it.

``cleanup_stale_inflight_commits(table, allowed_inflight_interval_minutes,
include_ingestion_commits, dry_run)`` finds the pending instants of the write timeline
(commit, deltacommit, replacecommit, compaction, log compaction, clustering) requested more
than ``allowed_inflight_interval_minutes`` ago (the cut-off rendered in the table's timeline
zone, as Hudi's ``HoodieTimelineCleanupUtil``), commits and deltacommits only with
``include_ingestion_commits``, and rolls each back: a table service reverts to requested
(a plan never started is requested already: nothing to do), a write is removed. Rows
``(instant_time, action, rollback_status)`` in timeline order, the status null in a dry run,
false for an instant that completed meanwhile or whose heartbeat is alive (not rolled back).

``repair_corrupted_clean_files(table)`` deletes the timeline files of every pending clean
whose plan (``T.clean.requested``, Avro ``HoodieCleanerPlan``) cannot be decoded, as Hudi
does for "Not an Avro data file" and Avro errors; an inflight clean without its requested
file has no plan either and goes too. One row ``(result)``: true.
"""

from __future__ import annotations

import time
from typing import Any

from hudilite.config.vocab import CLUSTER_OPERATION
from hudilite.errors import ConflictError, HudiliteError, InstantNotFoundError
from hudilite.services._common import heartbeat_settings, resolve_options
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import is_expired
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import epoch_ms_to_instant, is_instant_time
from hudilite.timeline.metadata import read_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from hudilite.write.rollback import instant_files, perform_rollback, resume_or_request

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

#: Hudi's write timeline (``getWriteTimeline``).
WRITE_TIMELINE = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING)
#: Ingestion actions ``include_ingestion_commits`` guards.
INGESTION = (COMMIT, DELTA_COMMIT)


def is_clustering(timeline: Timeline, instant: Instant) -> bool:
    """Whether ``instant`` is a clustering: the ``clustering`` action, or (version 6) a
    ``replacecommit`` whose request holds a clustering plan (Hudi's
    ``ClusteringUtils.getInflightClusteringInstant``)."""
    if instant.action == CLUSTERING:
        return True
    if instant.action != REPLACE_COMMIT:
        return False
    try:
        data = timeline.instant_content(instant.as_state(State.REQUESTED))
        record = read_avro_record(data) if data.strip() else {}
    except Exception:  # no or unreadable request: an ordinary replace commit
        return False
    return record.get("operationType") == CLUSTER_OPERATION and bool(record.get("clusteringPlan"))


def _table_service(timeline: Timeline, instant: Instant) -> bool:
    return instant.action in (COMPACTION, LOG_COMPACTION) or is_clustering(timeline, instant)


def roll_back_pending(state: TableState, instant: Instant, options: Any) -> bool:
    """Roll back the pending ``instant`` unless its writer is alive; True when done.

    Under the table lock on a fresh timeline: an instant no longer pending, or whose
    heartbeat is fresh, is left alone (False); otherwise the rollback plan is put on the
    timeline before the lock is released (the attempt can no longer complete) and carried
    out after it. A table service reverts to requested, its plan kept; a write goes."""
    gw, config = state.gw, state.config
    opts = resolve_options(state, options)
    interval, misses = heartbeat_settings(opts)
    t = instant.requested_time
    with table_lock(gw, opts):
        fresh = Timeline.load(gw, config)
        current = fresh.get(t)
        if current is None or not current.is_pending:
            return False
        if not is_expired(gw, t, interval, misses):
            return False
        service = _table_service(fresh, current)
        if service and current.state is State.REQUESTED:
            return True  # a plan never started: already what a rollback leaves
        resume_or_request(gw, config, fresh, current, instant_files(gw, config, t))
    perform_rollback(gw, config, current, [], keep_requested=service)
    return True


# ------------------------------------------------------------------ single table service


@procedure(
    "run_rollback_inflight_tableservice",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("pending_instant", "string", required=True),
        Param("delete_request_instant_file", "boolean", default=False),
    ],
    [Output("instant"), Output("time_cost")],
    "Rolls back an inflight compaction or clustering to requested (optionally deleting its plan).",
)
def run_rollback_inflight_tableservice(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row ``(instant, time_cost)``: the instant rolled back and the milliseconds it
    took, as text."""
    state = ctx.table(args).state()
    t = str(args["pending_instant"]).strip()
    if not is_instant_time(t):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: pending_instant {t!r} is not an instant time (17 or 14 digits)"
        )
    instant = state.timeline.get(t)
    if instant is None or not instant.is_inflight or not _table_service(state.timeline, instant):
        what = "nothing" if instant is None else f"a {instant.action} ({instant.state.name})"
        raise ProcedureError(
            f"{ctx.procedure}: no inflight compaction or clustering at {t}: {what} is there"
        )
    if instant.action == LOG_COMPACTION:
        raise ProcedureError(
            f"{ctx.procedure}: {t} is a log compaction; Hudi's procedure rolls back "
            "compactions and clusterings only (cleanup_stale_inflight_commits takes it)"
        )
    started = time.monotonic()
    if not roll_back_pending(state, instant, ctx.options):
        raise ConflictError(
            f"{ctx.procedure}: {instant.action} {t} is being executed by another process "
            "(its heartbeat is alive) or completed meanwhile; nothing was rolled back"
        )
    if args["delete_request_instant_file"]:
        _delete_plan(ctx.procedure, TableState.load(state.gw), instant)
    cost = int((time.monotonic() - started) * 1000)
    return [(t, str(cost))]


def _delete_plan(proc: str, state: TableState, instant: Instant) -> None:
    """Delete the requested file of the table service ``instant`` (reverted to requested)."""
    t = instant.requested_time
    with table_lock(state.gw):
        fresh = Timeline.load(state.gw, state.config)
        current = fresh.get(t)
        if current is None:
            return
        if current.state is not State.REQUESTED:
            raise ConflictError(
                f"{proc}: {current.action} {t} was started again by another process; "
                "its plan was kept"
            )
        if state.config.layout_version < 2 and current.action == COMPACTION:
            later = sorted(
                log.path
                for group in state.view.file_groups()
                for sl in group.slices
                if sl.base_instant == t
                for log in sl.log_files
            )
            if later:
                raise ProcedureError(
                    f"{proc}: rolled back {t} but kept its plan: log files written after it "
                    f"carry it as their base instant ({', '.join(later)}); run the "
                    "compaction instead"
                )
        TimelineWriter(state.gw, state.config).delete_files(
            t, actions=(current.action,), states=(State.REQUESTED,)
        )


# ------------------------------------------------------------------ stale pending instants


@procedure(
    "cleanup_stale_inflight_commits",
    [
        Param("table", "string"),
        Param("allowed_inflight_interval_minutes", "integer", default=180),
        Param("include_ingestion_commits", "boolean", default=False),
        Param("dry_run", "boolean", default=False),
        Param("path", "string"),
    ],
    [Output("instant_time"), Output("action"), Output("rollback_status", "boolean")],
    "Rolls back pending write-timeline instants older than a number of minutes.",
)
def cleanup_stale_inflight_commits(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row ``(instant_time, action, rollback_status)`` per stale pending instant, in
    timeline order; the status is null in a dry run, false where nothing was rolled back
    (completed meanwhile, or a live heartbeat)."""
    minutes = args["allowed_inflight_interval_minutes"]
    if minutes < 0:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: allowed_inflight_interval_minutes must be 0 or more, got {minutes}"
        )
    state = ctx.table(args).state()
    now_ms = time.time_ns() // 1_000_000
    cutoff = epoch_ms_to_instant(now_ms - minutes * 60_000, utc=state.config.timeline_utc)
    skip = () if args["include_ingestion_commits"] else INGESTION
    stale = [
        i
        for i in state.timeline.pending()
        if i.action in WRITE_TIMELINE and i.action not in skip and i.requested_time < cutoff
    ]
    if args["dry_run"]:
        return [(i.requested_time, i.action, None) for i in stale]
    rows = []
    for instant in stale:
        try:
            done = roll_back_pending(TableState.load(state.gw), instant, ctx.options)
        except HudiliteError:
            done = False  # Hudi reports a failed rollback as false and goes on
        rows.append((instant.requested_time, instant.action, done))
    return rows


# ----------------------------------------------------------------------- corrupted cleans


def _plan_readable(timeline: Timeline, instant: Instant) -> bool:
    """Whether the clean ``instant``'s requested plan decodes as Avro."""
    try:
        data = timeline.instant_content(instant.as_state(State.REQUESTED))
    except InstantNotFoundError:
        return False
    try:
        read_avro_record(data)
    except Exception:  # Avro's own errors (bad magic, truncated blocks, bad schema)
        return False
    return True


@procedure(
    "repair_corrupted_clean_files",
    [Param("table", "string"), Param("path", "string")],
    [Output("result", "boolean")],
    "Deletes pending clean instants whose plan cannot be read.",
)
def repair_corrupted_clean_files(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """``(true,)`` once every pending clean with an unreadable plan is off the timeline."""
    state = ctx.table(args).state()
    with table_lock(state.gw):
        fresh = Timeline.load(state.gw, state.config)
        writer = TimelineWriter(state.gw, state.config)
        for instant in fresh.filter(actions=CLEAN):
            if instant.is_pending and not _plan_readable(fresh, instant):
                writer.delete_files(
                    instant.requested_time, (CLEAN,), (State.INFLIGHT, State.REQUESTED)
                )
    return [(True,)]
