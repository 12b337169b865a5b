"""``run_ttl``: delete expired partitions, as Hudi's partition TTL does.

Parameters and output are Hudi 1.x's ``RunTTLProcedure`` (apache/hudi ``08be0a22``):
``table`` (or ``path``), ``ttl_policy`` (becomes
``hoodie.partition.ttl.management.strategy.type``), ``retain_days``
(``hoodie.partition.ttl.strategy.days.retain``), ``options`` (``k=v,...``, merged last) over
the session's and the table's options; one row per partition deleted, ``deleted_partitions``.

Which partitions expire (``SparkPartitionTTLActionExecutor`` with Hudi's strategies): none
unless the table is partitioned, has a completed instant and ``days.retain`` is positive.
The candidates are ``hoodie.partition.ttl.strategy.partition.selected`` (comma-separated) or
every partition; a partition expires when the TTL run's instant time is later than its
reference time plus ``days.retain`` days:

* ``KEEP_BY_TIME`` (default, ``KeepByTimeStrategy``): the latest base instant of its live
  file slices -- the last write that rewrote or created a file there;
* ``KEEP_BY_CREATION_TIME`` (``KeepByCreationTimeStrategy``): the ``commitTime`` of its
  ``.hoodie_partition_metadata``.

``hoodie.partition.ttl.strategy.class`` names the strategy by Hudi's class instead (it wins
over the type; another class is refused by name). At most
``hoodie.partition.ttl.strategy.max.delete.partitions`` (1000) partitions go per run, in
partition order. A partition without live file groups (already deleted) is never a
candidate: Hudi's time strategy skips it the same way, its creation-time strategy would
write an empty delete. The expired partitions are deleted with one DELETE_PARTITION
``replacecommit`` through :meth:`hudilite.Table.delete_partitions` (the table lock, the
metadata table kept, the inline services after the commit), as Hudi's TTL commits a
``SparkDeletePartitionCommitActionExecutor``. As in Hudi, a partition that a pending
compaction or clustering plan works on makes the run delete nothing (logged; run it again
after the plan completes); with nothing expired nothing is written and no row is returned.
"""

from __future__ import annotations

import logging
from typing import Any

from hudilite import config as cfg
from hudilite.services._common import resolve_options
from hudilite.storage.layout import read_partition_metadata
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant_time import plus_millis
from hudilite.timeline.plans import pending_plan_groups
from hudilite.timeline.timeline import TimelineWriter

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    parse_options,
    procedure,
)

_log = logging.getLogger("hudilite.procedures")

KEEP_BY_TIME = "KEEP_BY_TIME"
KEEP_BY_CREATION_TIME = "KEEP_BY_CREATION_TIME"
_STRATEGY_PACKAGE = "org.apache.hudi.table.action.ttl.strategy."
#: Hudi's ``PartitionTTLStrategyType``: class name -> type.
STRATEGY_CLASSES = {
    _STRATEGY_PACKAGE + "KeepByTimeStrategy": KEEP_BY_TIME,
    _STRATEGY_PACKAGE + "KeepByCreationTimeStrategy": KEEP_BY_CREATION_TIME,
}
_DAY_MS = 24 * 3600 * 1000


def ttl_instant_time(state: TableState) -> str:
    """The TTL run's instant time: a new instant time of the table (its time zone)."""
    return TimelineWriter(state.gw, state.config).new_instant_time()


def strategy_of(ctx: ProcedureContext, opts: cfg.Options) -> str:
    """The strategy type: the class option first (Hudi's order), else the type option."""
    cls = str(opts.get(cfg.PARTITION_TTL_STRATEGY_CLASS) or "").strip()
    if cls:
        if cls not in STRATEGY_CLASSES:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: unknown {cfg.PARTITION_TTL_STRATEGY_CLASS.name} {cls!r}; use "
                f"{' or '.join(sorted(STRATEGY_CLASSES))}"
            )
        return STRATEGY_CLASSES[cls]
    return str(opts.get(cfg.PARTITION_TTL_STRATEGY_TYPE))


def expired_partitions(state: TableState, opts: cfg.Options, strategy: str, now: str) -> list[str]:
    """The partitions ``strategy`` finds expired at instant time ``now`` (see the module
    docstring), at most ``max.delete.partitions``, in partition order."""
    days = int(opts.get(cfg.PARTITION_TTL_DAYS_RETAIN))
    if days <= 0 or not state.config.is_partitioned or state.timeline.last_completed() is None:
        return []
    ttl_ms = days * _DAY_MS
    selected = str(opts.get(cfg.PARTITION_TTL_PARTITION_SELECTED) or "")
    wanted = [p.strip().strip("/") for p in selected.split(",") if p.strip()]
    latest: dict[str, str] = {}
    for s in state.view.latest_slices(partitions=wanted or None):
        if s.partition not in latest or s.base_instant > latest[s.partition]:
            latest[s.partition] = s.base_instant
    expired = []
    for partition in sorted(latest):
        if strategy == KEEP_BY_CREATION_TIME:
            meta = read_partition_metadata(state.gw, partition) or {}
            reference = meta.get("commitTime")
        else:
            reference = latest[partition]
        if reference and now > plus_millis(reference, ttl_ms):
            expired.append(partition)
    limit = int(opts.get(cfg.PARTITION_TTL_MAX_DELETE))
    return expired[: max(limit, 0)]


@procedure(
    "run_ttl",
    [
        Param("table", "string"),
        Param("ttl_policy", "string"),
        Param("retain_days", "integer"),
        Param("options", "string"),
        Param("path", "string"),
    ],
    [Output("deleted_partitions")],
    "Deletes the partitions whose time-to-live expired (KEEP_BY_TIME: last write, "
    "KEEP_BY_CREATION_TIME: creation) with a DELETE_PARTITION replacecommit.",
)
def run_ttl(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per partition deleted, in partition order; none when nothing expired."""
    confs: dict[str, str] = {}
    if args["ttl_policy"] is not None:
        policy = str(args["ttl_policy"]).strip().upper()
        if policy not in (KEEP_BY_TIME, KEEP_BY_CREATION_TIME):
            raise ProcedureArgumentError(
                f"{ctx.procedure}: unknown ttl_policy {args['ttl_policy']!r}; use "
                f"{KEEP_BY_TIME} or {KEEP_BY_CREATION_TIME}"
            )
        confs[cfg.PARTITION_TTL_STRATEGY_TYPE.name] = policy
    if args["retain_days"] is not None:
        confs[cfg.PARTITION_TTL_DAYS_RETAIN.name] = str(args["retain_days"])
    options = {**ctx.options, **confs, **parse_options(args["options"])}
    cfg.check_options(options)
    tbl = ctx.table(args)
    state = tbl.state()
    opts = resolve_options(state, options)
    strategy = strategy_of(ctx, opts)
    expired = expired_partitions(state, opts, strategy, ttl_instant_time(state))
    if not expired:
        return []
    busy = sorted(
        (p, instant)
        for (p, _), (instant, _) in pending_plan_groups(state.timeline).items()
        if p in expired
    )
    if busy:
        # Hudi's executor catches HoodieDeletePartitionPendingTableServiceException and
        # deletes nothing this time.
        _log.warning(
            "%s: partition %r is under pending table service %s; nothing deleted, run again "
            "after it completes",
            ctx.procedure,
            busy[0][0],
            busy[0][1],
        )
        return []
    tbl.delete_partitions(expired, options=options)
    return [(p,) for p in expired]
