"""Clustering procedures: ``run_clustering`` and ``show_clustering`` (COW and MOR tables).

``run_clustering(table|path, predicate, order, show_involved_partition, op,
order_strategy, options, instants, selected_partitions, selected_partitions_reg, limit)``
follows Hudi's ``RunClusteringProcedure``:

* ``predicate`` (only partition columns, else "Only partition predicates are allowed")
  or else ``selected_partitions`` (comma-separated paths, verbatim) pick the partitions
  (``hoodie.clustering.plan.partition.filter.mode=SELECTED_PARTITIONS``); a selection
  matching nothing returns no rows and schedules nothing. Without one,
  ``selected_partitions_reg`` (1.0; ``partition_regex_pattern`` later) sets the
  partition regex;
* ``order`` names the sort columns (checked case-insensitively against the table's
  columns: "Order column not exist:<col>"); ``order_strategy`` ``linear`` sorts plainly,
  ``z-order``/``hilbert`` are refused (not supported);
* ``options`` (``k=v,k2=v2``) override all of the above;
* ``op`` is ``schedule``, ``execute`` or ``scheduleandexecute`` (the default; no ``run``
  alias here), ``instants`` execute those pending plans, ``limit`` keeps the oldest N
  pending plans; with ``scheduleandexecute`` the new plan runs if one was made, else every
  pending one.

Rows: ``(timestamp, input_group_size, state, involved_partitions)`` of the instants run,
newest first; ``involved_partitions`` is ``*`` unless ``show_involved_partition``, then
the partition of every input slice, sorted and comma-joined (duplicates included, as
Hudi's ``extractPartitions`` prints them). ``show_clustering(table|path, limit,
show_involved_partition)`` gives the same rows for every clustering on the timeline.

Where hudilite differs from Hudi 1.0, on purpose: a pending clustering of a version-8
table (action ``clustering``) is listed like a pending ``replacecommit`` (Hudi's code only
matches the ``replacecommit`` action, so it would hide it), and replace commits that are
not clusterings (insert overwrite, partition deletes) are skipped instead of failing.
"""

from __future__ import annotations

from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.keygen import DEFAULT_PARTITION_PATH, partition_values
from hudilite.services.clustering_plan import clustering_instants, pending_clusterings
from hudilite.spark.convert import spark_schema

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
_CLUSTERING_OUTPUT = [
    Output("timestamp"),
    Output("input_group_size", "int"),
    Output("state"),
    Output("involved_partitions"),
]
_UNSUPPORTED_LAYOUTS = ("z-order", "zorder", "hilbert")


def _rows(tbl: Any, times: set[str] | None, show_partitions: bool) -> list[tuple[Any, ...]]:
    """One row per clustering on the timeline (only ``times`` when given), newest first."""
    found = clustering_instants(tbl.state().timeline)
    out = []
    for inst, plan in sorted(found, key=lambda p: p[0].requested_time, reverse=True):
        if times is not None and inst.requested_time not in times:
            continue
        parts = plan.involved_partitions if show_partitions else "*"
        out.append((inst.requested_time, len(plan.groups), inst.state.name, parts))
    return out


def _matching_partitions(ctx: ProcedureContext, tbl: Any, predicate: str) -> list[str]:
    """Partition paths whose partition values satisfy ``predicate`` (Hudi's
    ``prunePartition``); the predicate may name partition columns only."""
    state = tbl.state()
    schema = spark_schema(state.data_schema)
    try:
        _ = ctx.spark.createDataFrame([], schema).filter(F.expr(predicate)).schema
    except Exception as exc:  # a parse or analysis error: unknown column, bad syntax
        raise ProcedureArgumentError(
            f"run_clustering: cannot resolve predicate {predicate!r} against "
            f"{state.config.name}: {str(exc).splitlines()[0]}"
        ) from None
    fields = list(state.config.partition_fields)
    if state.config.keygen_type not in (
        cfg.KEYGEN_SIMPLE,
        cfg.KEYGEN_COMPLEX,
        cfg.KEYGEN_NON_PARTITION,
    ):
        raise ProcedureError(
            f"run_clustering: a predicate needs partition paths that hold the column values; "
            f"{state.config.keygen_type} key generators do not: use selected_partitions"
        )
    spec = state.keygen(state.options())
    rows = []
    for path in state.view.partitions():
        values = partition_values(spec, path) if fields else {}
        rows.append(
            (
                path,
                *[
                    None if values.get(f) == DEFAULT_PARTITION_PATH else values.get(f)
                    for f in fields
                ],
            )
        )
    ddl = ", ".join(["`_hl_partition` string"] + [f"`{f}` string" for f in fields])
    frame = ctx.spark.createDataFrame(rows, ddl).select(
        "_hl_partition",
        *[F.col(f"`{f}`").try_cast(schema[f].dataType).alias(f) for f in fields],
    )
    try:
        matched = frame.filter(F.expr(predicate)).select("_hl_partition")
        return sorted(r[0] for r in matched.collect())
    except AnalysisException:
        raise ProcedureError(
            f"run_clustering: Only partition predicates are allowed: {predicate!r} names "
            f"columns other than the partition columns ({', '.join(fields) or 'none'})"
        ) from None


def _order_columns(tbl: Any, order: str) -> str:
    """``order`` with each column spelt as in the table; Hudi's check (case-insensitive)."""
    by_lower = {f.name.lower(): f.name for f in tbl.state().data_schema}
    out = []
    for col in order.split(","):
        name = by_lower.get(col.strip().lower())
        if name is None:
            raise ProcedureError(f"run_clustering: Order column not exist:{col.strip()}")
        out.append(name)
    return ",".join(out)


def _selection(ctx: ProcedureContext, tbl: Any, args: dict[str, Any]) -> str | None:
    """The selected partitions, comma-joined (``""``: none matched), or None when neither
    ``predicate`` nor ``selected_partitions`` is given; the predicate wins."""
    if args["predicate"]:
        return ",".join(_matching_partitions(ctx, tbl, str(args["predicate"])))
    if args["selected_partitions"] is not None:
        return str(args["selected_partitions"])
    return None


def _clustering_options(
    ctx: ProcedureContext, tbl: Any, args: dict[str, Any], selected: str | None
) -> dict[str, str]:
    """The write options the arguments stand for (session options first, ``options``
    last, as Hudi merges them); raises for bad arguments."""
    conf: dict[str, str] = {}
    if selected is not None:
        conf[cfg.CLUSTERING_PARTITION_FILTER_MODE.name] = "SELECTED_PARTITIONS"
        conf[cfg.CLUSTERING_PARTITION_SELECTED.name] = selected
    else:
        regex = args["selected_partitions_reg"] or args["partition_regex_pattern"]
        if regex:
            conf[cfg.CLUSTERING_PARTITION_REGEX.name] = str(regex)
    if args["order"]:
        conf[cfg.CLUSTERING_SORT_COLUMNS.name] = _order_columns(tbl, str(args["order"]))
    if args["order_strategy"]:
        strategy = str(args["order_strategy"]).strip().lower()
        if strategy in _UNSUPPORTED_LAYOUTS:
            raise ProcedureError(
                f"run_clustering: order_strategy {args['order_strategy']!r} is not supported; "
                "hudilite sorts clustered rows linearly (order_strategy => 'linear')"
            )
        if strategy != "linear":
            raise ProcedureArgumentError(
                f"run_clustering: invalid order_strategy {args['order_strategy']!r}; use "
                "linear (z-order and hilbert are not supported)"
            )
        conf[cfg.LAYOUT_OPTIMIZE_STRATEGY.name] = strategy
    return {**ctx.options, **conf, **parse_options(args["options"])}


@procedure(
    "run_clustering",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("predicate", "string"),
        Param("order", "string"),
        Param("show_involved_partition", "boolean", default=False),
        Param("op", "string"),
        Param("order_strategy", "string"),
        Param("options", "string"),
        Param("instants", "string"),
        Param("selected_partitions", "string"),
        Param("selected_partitions_reg", "string"),
        Param("limit", "integer"),
        Param("partition_regex_pattern", "string"),  # the post-1.0 name of the one above
    ],
    _CLUSTERING_OUTPUT,
    "Schedules and/or runs clustering of a table (small file groups rewritten, optionally sorted).",
)
def run_clustering(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    op = str(args["op"] or "scheduleandexecute").strip().lower()
    if op not in _OPS:
        raise ProcedureArgumentError(
            f"run_clustering: invalid op {args['op']!r}; use schedule, execute or "
            "scheduleandexecute"
        )
    tbl = ctx.table(args)
    selected = _selection(ctx, tbl, args)
    if selected == "":
        return []  # the selection matched no partition: Hudi schedules nothing
    options = _clustering_options(ctx, tbl, args, selected)
    pending = [i.requested_time for i in pending_clusterings(tbl.state().timeline)]

    def schedule() -> str | None:
        plan = tbl.schedule_clustering(options=options)
        return None if plan is None else plan.instant_time

    to_run = run_pending(
        "run_clustering",
        "clustering",
        op,
        instants=args["instants"],
        pending=pending,
        limit=args["limit"],
        schedule=schedule,
        execute=lambda instant: tbl.cluster(instant_time=instant, options=options),
        op_given=args["op"] is not None,
    )
    return _rows(tbl, set(to_run), bool(args["show_involved_partition"]))


@procedure(
    "show_clustering",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("limit", "integer", default=20),
        Param("show_involved_partition", "boolean", default=False),
    ],
    _CLUSTERING_OUTPUT,
    "Lists the clusterings of a table (pending and completed), newest first.",
    read_only=True,
)
def show_clustering(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    tbl = ctx.table(args)
    return _rows(tbl, None, bool(args["show_involved_partition"]))[: args["limit"]]
