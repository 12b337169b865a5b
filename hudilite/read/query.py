"""A table query from its arguments to rows, without Spark: the query type's plan, the
partitions a ``where`` predicate leaves, and the read into a pyarrow Table.

``Table.read`` / ``Table.to_arrow`` (and a pinned ``TableSnapshot``'s reads) take the same
arguments: a query type (``snapshot``, ``read_optimized`` or ``incremental``), a
time-travel instant or an incremental range, a SQL ``where`` and read options. This
module turns them into a :class:`~hudilite.read.planner.ScanPlan` (:func:`plan_query`),
prunes partitions by a parsed :class:`~hudilite.read.where.Predicate` on their path values
(:func:`prune_partitions`; no data file is opened) and reads the plan in this process
(:func:`read_arrow`). The Spark read of the same plan is
:mod:`hudilite.spark.table_read`'s, which prunes the predicates this module's parser does
not take with a Spark job over :func:`partition_rows`.

Every function takes a loaded :class:`~hudilite.tablestate.state.TableState`: the caller
decides whether that is the table now or a pinned snapshot. Options are taken as given (the
facade checks them against the registry once, where the user passed them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hudilite import config as cfg
from hudilite.errors import ConfigError, CorruptFileError, MissingFileError
from hudilite.keygen import partition_values
from hudilite.metadata.listing import listing_view
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import ScanPlan, plan_incremental, plan_snapshot, skip_files
from hudilite.read.where import Predicate
from hudilite.tablestate.state import TableState

#: The query types a read takes.
QUERY_TYPES = ("snapshot", "read_optimized", "incremental")


def _prunable(state: TableState) -> bool:
    # Only the simple and complex key generators write ``field=value`` / ``value`` folders
    # whose segments are the fields' values; a timestamp or custom one reformats them.
    return bool(state.config.partition_fields) and state.config.keygen_type in (
        cfg.KEYGEN_SIMPLE,
        cfg.KEYGEN_COMPLEX,
    )


def plan_query(
    state: TableState,
    query_type: str,
    as_of: str | None,
    start: str | None,
    end: str | None,
    partitions: list[str] | None,
    options: Mapping[str, Any] | None = None,
) -> ScanPlan:
    """The scan plan of one read of ``state``: a snapshot (``as_of``: time travel) or
    read-optimized read of ``partitions`` (None: all), or an incremental read of the commits
    in ``(start, end]``. A ``start``/``end`` on another query type, an incremental read
    without ``start`` or an unknown query type raise :class:`ConfigError` naming it."""
    given = {k: str(v) for k, v in (options or {}).items()}
    ignore = bool(state.options(given).get(cfg.READ_IGNORE_MISSING_FILES))
    if query_type == "incremental":
        if start is None:
            raise ConfigError("an incremental read needs start=<instant time>")
        return plan_incremental(state.timeline, state.view, start, end, ignore_missing_files=ignore)
    if query_type in ("snapshot", "read_optimized"):
        if start is not None or end is not None:
            raise ConfigError("start/end apply to query_type='incremental' only")
        return plan_snapshot(
            state.view,
            as_of=as_of,
            partitions=partitions,
            read_optimized=query_type == "read_optimized",
            ignore_missing_files=ignore,
        )
    raise ConfigError(
        f"unknown query_type {query_type!r}; use snapshot, read_optimized or incremental"
    )


def prune_partitions(state: TableState, pred: Predicate) -> list[str] | None:
    """The partitions whose path values satisfy ``pred``, or None when it names another
    column (or the table's key generator does not write plain values): every partition may
    then hold matching rows. The partitions are listed through the files partition of the
    metadata table when the table keeps one."""
    if not _prunable(state):
        return None
    spec = state.keygen(state.options())
    return pred.partitions(
        listing_view(state.view).partitions(),
        lambda p: partition_values(spec, p),
        state.config.partition_fields,
        state.data_schema,
    )


def partition_rows(state: TableState) -> tuple[list[str], list[tuple[str | None, ...]]] | None:
    """The partition fields and one row per partition, ``(path, value of each field...)``,
    for a pruning that evaluates a predicate elsewhere (Spark SQL); None when the table's
    partitions cannot be pruned by value."""
    if not _prunable(state):
        return None
    fields = list(state.config.partition_fields)
    spec = state.keygen(state.options())
    parts = listing_view(state.view).partitions()
    return fields, [(p, *[partition_values(spec, p).get(f) for f in fields]) for p in parts]


def read_arrow(
    state: TableState,
    query_type: str,
    as_of: str | None,
    start: str | None,
    end: str | None,
    columns: list[str] | None,
    options: Mapping[str, Any] | None,
    where: str | None = None,
) -> pa.Table:
    """The rows of one read of ``state`` as a pyarrow Table, read in this process.

    ``where`` is parsed by :class:`~hudilite.read.where.Predicate` (a predicate it does not
    take raises :class:`ConfigError`): it prunes the partitions and filters the rows;
    ``columns`` (None: all) are returned, the filter's columns read beside them. A missing
    or unreadable data file raises :class:`MissingFileError` / :class:`CorruptFileError`
    naming the table."""
    pred = Predicate.parse(where, state.storage_schema) if where else None
    partitions = prune_partitions(state, pred) if pred else None
    plan = plan_query(state, query_type, as_of, start, end, partitions, options)
    plan = skip_files(state, plan, pred, options)  # data skipping by column statistics
    wanted = columns
    if pred is not None and columns is not None:  # the filter's columns are read too
        wanted = list(dict.fromkeys([*columns, *sorted(pred.columns)]))
    where_at = state.gw.abs_path("")
    try:
        table = read_plan_arrow(
            state.gw,
            plan,
            state.storage_schema,
            columns=wanted,
            merge_spec=state.merge_spec(state.options()),
        )
    except FileNotFoundError as exc:
        raise MissingFileError(f"a data file of {where_at} is missing: {exc}") from exc
    except (pa.ArrowInvalid, OSError) as exc:
        raise CorruptFileError(f"a data file of {where_at} is unreadable: {exc}") from exc
    if pred is None:
        return table
    table = table.filter(pred.expression)
    return table if columns is None else table.select(columns)


__all__ = ["QUERY_TYPES", "partition_rows", "plan_query", "prune_partitions", "read_arrow"]
