"""Compaction procedures: ``run_compaction`` and ``show_compaction`` (merge-on-read tables).

``run_compaction(op, table|path, timestamp, options, instants, limit)`` follows Hudi:
``op`` is ``schedule``, ``execute``, ``scheduleandexecute`` or ``run`` (Hudi's alias of
``scheduleandexecute``); ``timestamp`` or ``instants`` execute those pending plans; with
``scheduleandexecute`` the new plan runs if one was made, else every pending one (the
oldest ``limit``). Rows: ``(timestamp, operation_size, state)`` newest first.
"""

from __future__ import annotations

from typing import Any

from hudilite.services.compaction import read_compaction_plan
from hudilite.timeline.instant import COMPACTION, Instant

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    parse_options,
    procedure,
    run_pending,
)

_OPS = ("schedule", "execute", "scheduleandexecute")
_COMPACTION_OUTPUT = [Output("timestamp"), Output("operation_size", "int"), Output("state")]


def _plan_size(tbl: Any, instant: Instant) -> int:
    return len(read_compaction_plan(tbl.state(), instant.requested_time).operations)


def _compaction_instants(tbl: Any) -> list[Instant]:
    """Every compaction on the active timeline (pending ones and completed ones)."""
    state = tbl.state()
    out = []
    for i in state.timeline.instants:
        if i.action == COMPACTION or (i.action == "commit" and state.config.is_mor):
            out.append(i)
    return out


@procedure(
    "run_compaction",
    [
        Param("op", "string", required=True),
        Param("table", "string"),
        Param("path", "string"),
        Param("timestamp", "long"),
        Param("options", "string"),
        Param("instants", "string"),
        Param("limit", "integer"),
    ],
    _COMPACTION_OUTPUT,
    "Schedules and/or runs compaction of a merge-on-read table.",
)
def run_compaction(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    op = str(args["op"]).lower()
    op = "scheduleandexecute" if op == "run" else op
    if op not in _OPS:
        raise ProcedureArgumentError(
            f"run_compaction: invalid op {args['op']!r}; use schedule, execute, "
            "scheduleandexecute or run"
        )
    tbl = ctx.table(args)
    if not tbl.config.is_mor:
        raise ProcedureError(
            f"run_compaction: {tbl.config.name} is a copy-on-write table; compaction applies "
            "to merge-on-read tables"
        )
    options = {**ctx.options, **parse_options(args["options"])}
    instants = args["instants"]
    if args["timestamp"] is not None and not instants:
        # Hudi's legacy form: a timestamp executes that pending plan.
        instants, op = str(args["timestamp"]), "execute"
    pending = sorted(
        i.requested_time
        for i in tbl.state().timeline.instants
        if i.action == COMPACTION and i.is_pending
    )

    def schedule() -> str | None:
        plan = tbl.schedule_compaction(force=True, options=options)
        return None if plan is None else plan.instant_time

    to_run = run_pending(
        "run_compaction",
        "compaction",
        op,
        instants=instants,
        pending=pending,
        limit=args["limit"],
        schedule=schedule,
        execute=lambda instant: tbl.compact(instant_time=instant, options=options),
    )
    by_time = {i.requested_time: i for i in tbl.timeline()}
    rows = []
    for instant in sorted(to_run, reverse=True):
        current = by_time.get(instant)
        if current is None:
            continue
        rows.append((instant, _plan_size(tbl, current), current.state.name))
    return rows


@procedure(
    "show_compaction",
    [Param("table", "string"), Param("path", "string"), Param("limit", "integer", default=20)],
    _COMPACTION_OUTPUT,
    "Lists the compactions of a merge-on-read table, newest first.",
    read_only=True,
)
def show_compaction(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    tbl = ctx.table(args)
    if not tbl.config.is_mor:
        raise ProcedureError("show_compaction: cannot show compaction on a copy-on-write table")
    instants = sorted(_compaction_instants(tbl), key=lambda i: i.requested_time, reverse=True)
    return [(i.requested_time, _plan_size(tbl, i), i.state.name) for i in instants[: args["limit"]]]
