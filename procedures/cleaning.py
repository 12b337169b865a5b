"""Cleaning procedures: ``run_clean``, ``show_cleans``, ``show_cleans_metadata`` and
``show_clean_plans``.

``run_clean`` follows Hudi 1.0's ``RunCleanProcedure``: each parameter given becomes a
cleaner option (``clean_policy`` → ``hoodie.cleaner.policy``, ``retain_commits`` →
``hoodie.cleaner.commits.retained``, ``hours_retained`` → ``hoodie.cleaner.hours.retained``,
``file_versions_retained`` → ``hoodie.cleaner.fileversions.retained``, ``trigger_strategy`` →
``hoodie.clean.trigger.strategy``, ``trigger_max_commits`` → ``hoodie.clean.max.commits``),
``options`` (``k=v,...``) are merged last. Pending cleans always run first; with
``schedule_in_line`` a new clean is planned when its trigger fires (``NUM_COMMITS``: at
least ``hoodie.clean.max.commits`` (1) commits since the last clean's last completed
commit, as Hudi's ``CleanPlanActionExecutor.needsCleaning``) and executed. The one row
comes from the last clean's ``HoodieCleanMetadata``; no row when nothing was cleaned.
``skip_locking`` (0.14/0.15) is accepted and has no effect: planning takes the table lock.

The ``show_*`` procedures are Hudi's post-1.0 ones (newest first); ``filter`` is a Spark
SQL predicate over the output columns, applied before ``limit``. ``showArchived`` (or
``show_archived``) merges in the cleans of the archived timeline, with the metadata and plan
the archive kept (table version 6: ``.hoodie/archived``; 8: the LSM timeline).
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.services.archive import archived_timeline
from hudilite.services.archive_formats import ArchivedInstant
from hudilite.services.clean import (
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanResult,
    commits_since_last_clean,
    execute_clean,
    pending_cleans,
    schedule_clean,
)
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLEAN, Instant, State
from hudilite.timeline.metadata import read_avro_record

from .commits import transition_time
from .registry import (
    REGISTRY,
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    parse_options,
    procedure,
)

CLEAN_TRIGGER_STRATEGY = cfg.CLEAN_TRIGGER_STRATEGY.name
CLEAN_MAX_COMMITS = cfg.CLEAN_MAX_COMMITS.name
_POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)
#: run_clean parameter → the write option it overrides.
_PARAM_KEYS = {
    "clean_policy": CLEANER_POLICY.name,
    "retain_commits": CLEANER_COMMITS_RETAINED.name,
    "hours_retained": CLEANER_HOURS_RETAINED.name,
    "file_versions_retained": CLEANER_FILE_VERSIONS_RETAINED.name,
    "trigger_strategy": CLEAN_TRIGGER_STRATEGY,
    "trigger_max_commits": CLEAN_MAX_COMMITS,
}

# ---------------------------------------------------------------------------------------
# helpers shared with the savepoint and rollback procedures


def filtered(
    ctx: ProcedureContext, rows: list[tuple[Any, ...]], limit: int | None, filter_expr: str | None
) -> list[tuple[Any, ...]] | DataFrame:
    """``rows`` (already in output order) kept by ``filter_expr`` (a Spark SQL predicate
    over the output columns), then the first ``limit``; an invalid expression is an error
    naming it."""
    if limit is not None and limit <= 0:
        raise ProcedureArgumentError(f"{ctx.procedure}: limit must be positive, got {limit}")
    if not filter_expr or not filter_expr.strip():
        return rows[:limit] if limit is not None else rows
    frame = ctx.frame(rows, REGISTRY[ctx.procedure].schema)
    try:
        out = frame.filter(F.expr(filter_expr))
        _ = out.schema  # analysed here, so a bad column fails now rather than on collect
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0]
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid filter {filter_expr!r}: {first}"
        ) from None
    return out.limit(limit) if limit is not None else out


def archived_instants(
    state: TableState, show_archived: bool, action: str, active: set[str]
) -> list[ArchivedInstant]:
    """With ``show_archived``, the archived ``action`` instants (most advanced state, with
    the metadata and plan the archive holds) whose requested time is not in ``active``
    (an archival interrupted before deleting the timeline files leaves both: the active
    copy wins); nothing without it, so the archive is only read when asked for."""
    if not show_archived:
        return []
    return [
        a for a in archived_timeline(state) if a.action == action and a.requested_time not in active
    ]


# ---------------------------------------------------------------------------------------
# run_clean


def _option_choice(ctx: ProcedureContext, param: str, value: str, allowed: tuple[str, ...]) -> str:
    text = value.strip().upper()
    if text not in allowed:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid {param} {value!r}; use {', '.join(allowed)}"
        )
    return text


def _clean_row(result: CleanResult) -> tuple[Any, ...]:
    meta = result.metadata
    return (
        meta.get("startCleanTime", result.instant_time),
        int(meta.get("timeTakenInMillis") or 0),
        int(meta.get("totalFilesDeleted") or 0),
        meta.get("earliestCommitToRetain"),
        # Hudi renders the bootstrap map with Jackson: "{}" when empty.
        json.dumps(meta.get("bootstrapPartitionMetadata") or {}, separators=(",", ":")),
        meta.get("version"),
    )


@procedure(
    "run_clean",
    [
        Param("table", "string"),
        Param("schedule_in_line", "boolean", default=True),
        Param("clean_policy", "string"),
        Param("retain_commits", "integer"),
        Param("hours_retained", "integer"),
        Param("file_versions_retained", "integer"),
        Param("trigger_strategy", "string"),
        Param("trigger_max_commits", "integer"),
        Param("options", "string"),
        Param("skip_locking", "boolean", default=False),
        Param("path", "string"),
    ],
    [
        Output("start_clean_time"),
        Output("time_taken_in_millis", "long"),
        Output("total_files_deleted", "int"),
        Output("earliest_commit_to_retain"),
        Output("bootstrap_part_metadata"),
        Output("version", "int"),
    ],
    "Runs pending cleans and, when due, plans and runs a new one.",
)
def run_clean(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Clean the table; one row of the last clean's metadata, none when nothing was done."""
    if args["clean_policy"] is not None:
        args["clean_policy"] = _option_choice(ctx, "clean_policy", args["clean_policy"], _POLICIES)
    if args["trigger_strategy"] is not None:
        args["trigger_strategy"] = _option_choice(
            ctx, "trigger_strategy", args["trigger_strategy"], ("NUM_COMMITS",)
        )
    for name in ("retain_commits", "file_versions_retained", "trigger_max_commits"):
        if args[name] is not None and args[name] < 1:
            raise ProcedureArgumentError(f"{ctx.procedure}: {name} must be at least 1")
    if args["hours_retained"] is not None and args["hours_retained"] < 0:
        raise ProcedureArgumentError(f"{ctx.procedure}: hours_retained must not be negative")
    tbl = ctx.table(args)
    overrides = {key: str(args[p]) for p, key in _PARAM_KEYS.items() if args[p] is not None}
    options = {**ctx.options, **overrides, **parse_options(args["options"])}
    state = tbl.state()
    raw = state.options(options).raw
    strategy = str(raw.get(CLEAN_TRIGGER_STRATEGY, "NUM_COMMITS")).strip().upper()
    if strategy != "NUM_COMMITS":  # the only strategy Hudi has
        raise ProcedureArgumentError(
            f"{ctx.procedure}: unsupported {CLEAN_TRIGGER_STRATEGY} {strategy!r}; use NUM_COMMITS"
        )
    try:
        max_commits = int(str(raw.get(CLEAN_MAX_COMMITS, "1")).strip())
    except ValueError:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {CLEAN_MAX_COMMITS} must be an integer, "
            f"got {raw.get(CLEAN_MAX_COMMITS)!r}"
        ) from None
    # As Hudi's clean action: earlier pending cleans are finished first.
    results = [execute_clean(state, t) for t in pending_cleans(state)]
    state = TableState.load(state.gw)
    if args["schedule_in_line"] and commits_since_last_clean(state) >= max_commits:
        scheduled = schedule_clean(state, options)
        if scheduled is not None:
            fresh = TableState.load(state.gw)
            results.append(execute_clean(fresh, scheduled[0].requested_time))
    return [_clean_row(results[-1])] if results else []


# ---------------------------------------------------------------------------------------
# show_cleans / show_cleans_metadata / show_clean_plans

_SHOW_PARAMS = [
    Param("table", "string"),
    Param("limit", "integer", default=10),
    Param("showArchived", "boolean", default=False),
    Param("filter", "string", default=""),
    Param("path", "string"),
    Param("show_archived", "boolean", default=False),
]


#: One clean to show: requested time, state transition time, action, metadata.
_Clean = tuple[str, str | None, str, dict[str, Any]]


def _completed_cleans(state: TableState, show_archived: bool) -> list[_Clean]:
    """Completed cleans newest first, each with its ``HoodieCleanMetadata``; archived ones
    too with ``show_archived`` (transition time: the completion time the archive recorded,
    metadata: the archived entry's)."""
    cleans = [i for i in state.timeline.filter(actions=CLEAN) if i.is_completed]
    out: list[_Clean] = [
        (
            i.requested_time,
            transition_time(state, i),
            i.action,
            read_avro_record(state.timeline.instant_content(i)),
        )
        for i in cleans
    ]
    active = {i.requested_time for i in cleans}
    out += [
        (a.requested_time, a.completion_time, a.action, dict(a.metadata or {}))
        for a in archived_instants(state, show_archived, CLEAN, active)
        if a.is_completed
    ]
    return sorted(out, key=lambda c: c[0], reverse=True)


def _show_state(ctx: ProcedureContext, args: dict[str, Any]) -> tuple[TableState, bool]:
    """The table's state and whether archived instants were asked for (either spelling)."""
    return ctx.table(args).state(), bool(args["showArchived"] or args["show_archived"])


@procedure(
    "show_cleans",
    _SHOW_PARAMS,
    [
        Output("clean_time"),
        Output("state_transition_time"),
        Output("action"),
        Output("start_clean_time"),
        Output("time_taken_in_millis", "long"),
        Output("total_files_deleted", "int"),
        Output("earliest_commit_to_retain"),
        Output("last_completed_commit_timestamp"),
        Output("version", "int"),
    ],
    "Lists the completed cleans, newest first.",
    read_only=True,
)
def show_cleans(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per completed clean (archived ones too with ``showArchived``)."""
    state, show_archived = _show_state(ctx, args)
    rows = [
        (
            time,
            when,
            action,
            meta.get("startCleanTime"),
            meta.get("timeTakenInMillis"),
            meta.get("totalFilesDeleted"),
            meta.get("earliestCommitToRetain"),
            meta.get("lastCompletedCommitTimestamp"),
            meta.get("version"),
        )
        for time, when, action, meta in _completed_cleans(state, show_archived)
    ]
    return filtered(ctx, rows, args["limit"], args["filter"])


@procedure(
    "show_cleans_metadata",
    _SHOW_PARAMS,
    [
        Output("clean_time"),
        Output("state_transition_time"),
        Output("action"),
        Output("start_clean_time"),
        Output("partition_path"),
        Output("policy"),
        Output("delete_path_patterns", "int"),
        Output("success_delete_files", "int"),
        Output("failed_delete_files", "int"),
        Output("is_partition_deleted", "boolean"),
        Output("time_taken_in_millis", "long"),
        Output("total_files_deleted", "int"),
    ],
    "Lists the completed cleans per partition, newest first.",
    read_only=True,
)
def show_cleans_metadata(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per partition of every completed clean (archived ones too with
    ``showArchived``; ``limit`` counts rows)."""
    state, show_archived = _show_state(ctx, args)
    rows = []
    for time, when, action, meta in _completed_cleans(state, show_archived):
        for partition, pm in sorted((meta.get("partitionMetadata") or {}).items()):
            rows.append(
                (
                    time,
                    when,
                    action,
                    meta.get("startCleanTime"),
                    partition,
                    pm.get("policy"),
                    len(pm.get("deletePathPatterns") or []),
                    len(pm.get("successDeleteFiles") or []),
                    len(pm.get("failedDeleteFiles") or []),
                    bool(pm.get("isPartitionDeleted")),
                    meta.get("timeTakenInMillis"),
                    meta.get("totalFilesDeleted"),
                )
            )
    return filtered(ctx, rows, args["limit"], args["filter"])


def _plan_row(time: str, state_name: str, action: str, plan: Any) -> tuple[Any, ...]:
    """A ``show_clean_plans`` row from a ``HoodieCleanerPlan`` (None: unreadable)."""
    if not isinstance(plan, dict):  # as Hudi: an unreadable plan gives nulls, not a failure
        return (time, state_name, action) + (None,) * 7
    earliest = plan.get("earliestInstantToRetain") or {}
    extra = plan.get("extraMetadata") or {}
    return (
        time,
        state_name,
        action,
        earliest.get("timestamp"),
        plan.get("lastCompletedCommitTimestamp"),
        plan.get("policy"),
        plan.get("version"),
        len(plan.get("filePathsToBeDeletedPerPartition") or {}),
        len(plan.get("partitionsToBeDeleted") or []),
        ", ".join(f"{k}={v}" for k, v in extra.items()) or None,
    )


def _active_plan(state: TableState, inst: Instant) -> Any:
    """The ``.clean.requested`` plan of an active clean, None when unreadable."""
    try:
        return read_avro_record(
            state.timeline.instant_content(Instant(inst.requested_time, CLEAN, State.REQUESTED))
        )
    except Exception:  # damaged or missing plan: a row of nulls, as in Hudi
        return None


@procedure(
    "show_clean_plans",
    _SHOW_PARAMS,
    [
        Output("plan_time"),
        Output("state"),
        Output("action"),
        Output("earliest_instant_to_retain"),
        Output("last_completed_commit_timestamp"),
        Output("policy"),
        Output("version", "int"),
        Output("total_partitions_to_clean", "int"),
        Output("total_partitions_to_delete", "int"),
        Output("extra_metadata"),
    ],
    "Lists the clean plans (requested, inflight and completed cleans), newest first.",
    read_only=True,
)
def show_clean_plans(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per clean instant in any state, from its ``HoodieCleanerPlan``; archived
    cleans too with ``showArchived`` (the plan the archive kept with them)."""
    state, show_archived = _show_state(ctx, args)
    cleans = list(state.timeline.filter(actions=CLEAN))
    rows = [
        _plan_row(i.requested_time, i.state.name, i.action, _active_plan(state, i)) for i in cleans
    ]
    active = {i.requested_time for i in cleans}
    rows += [
        _plan_row(a.requested_time, a.state.name, a.action, dict(a.plan) if a.plan else None)
        for a in archived_instants(state, show_archived, CLEAN, active)
    ]
    rows.sort(key=lambda r: r[0], reverse=True)
    return filtered(ctx, rows, args["limit"], args["filter"])
