"""Clustering: rewrite groups of small file slices as fewer, optionally sorted, base files.

Works on copy-on-write and merge-on-read tables, as Hudi's clustering does; the plan and
its encoding are in :mod:`hudilite.services.clustering_plan`.

Scheduling (:func:`schedule_clustering`) writes the plan as the requested file of a new
instant ``T`` (``T.clustering.requested`` on table version 8+, ``T.replacecommit.requested``
on version 6), under the table lock like compaction, so no write completes while the
slices are listed.

Execution (:func:`execute_clustering`) moves ``T`` inflight (with a heartbeat), then for
every input group (:func:`cluster_group`, one Spark task each through the ``runner`` hook,
see ``hudilite.spark.clustering_job``): reads each planned slice with ``read_file_slice``
(base file merged with the log blocks of instants completed before ``T``), concatenates
them, sorts the rows by the plan's sort columns (ascending, nulls first: Spark's ``sort``)
when it has any, and writes ``num_output_file_groups`` new base files
``<new fileId>_<token>_<T>.parquet`` in the same partition. Every record keeps its meta
columns except ``_hoodie_file_name`` (Hudi's ``preserveHoodieMetadata``). ``T`` completes
as a ``replacecommit`` with ``operationType=CLUSTER`` whose ``partitionToReplaceFileIds``
lists every input file group, so readers (ours and any Hudi reader) switch to the new
files atomically.

Writes to file groups of a pending plan (why the plan is checked twice): Hudi rejects
updates to them (``SparkRejectUpdateStrategy``); hudilite's writers send no new inserts
there (small-file packing skips groups with pending work) but do not refuse updates. So
before writing and again under the lock just before committing, every planned slice must
still be the live slice of its file group with no other files (a write that completed
since the plan would otherwise be lost). If one is not, the clustering is rolled back and
its plan removed (``ConflictError``; schedule a new one). A write that completes after the
clustering touching a replaced group fails its own conflict check and is rolled back.

A failed attempt deletes its files, is recorded as a rollback and goes back to requested,
so it can be retried; an inflight attempt whose heartbeat expired is rolled back the same
way before a new one starts. Writers never roll back a pending clustering (it is a table
service, not a failed write), see ``hudilite.write.rollback``.

A group is merged, sorted and written by one task in memory, so its size is bounded by
``hoodie.clustering.plan.strategy.max.bytes.per.group`` (lower it for small executors).
Tables with the bucket index are refused: their file ids carry the bucket number.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa

from hudilite import config as cfg
from hudilite.errors import ConfigError, ConflictError, TimelineError, WriteError
from hudilite.filegroup.slices import FileSlice, join_path
from hudilite.schema import FILE_NAME_COL
from hudilite.services._common import FAIL_POINT_KEY as FAIL_POINT_KEY  # re-export
from hudilite.services._common import (
    OptionsLike,
    ReadSliceFn,
    ServiceContext,
    commit_attempt,
    default_reader,
    resolve_options,
    rollback_expired_writes,
    table_schema_json,
    take_over_expired,
)
from hudilite.services.clustering_plan import (
    ClusteringGroup,
    ClusteringPlan,
    ClusteringSlice,
    pending_action,
    pending_clusterings,
    plan_groups,
    plan_strategy_params,
    read_clustering_plan,
)
from hudilite.services.rollback_completed import RollbackInstantResult, perform_rollback
from hudilite.services.table_service import TableService, execute_plan
from hudilite.storage.layout import BaseFileName, new_file_id
from hudilite.storage.parquet_io import write_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant, State
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.lock import table_lock
from hudilite.write.markers import create_marker, marked_files

_PYARROW_MAJOR = int(pa.__version__.split(".")[0])


@dataclass(frozen=True)
class ClusteringResult:
    """Metrics of one completed clustering (the same numbers are in its commit metadata)."""

    instant_time: str
    completion_time: str | None
    num_input_groups: int
    num_input_file_groups: int
    num_output_files: int
    num_records_written: int
    bytes_written: int
    partitions: tuple[str, ...]
    replaced_file_ids: Mapping[str, Sequence[str]]
    file_paths: tuple[str, ...]
    duration_s: float
    rolled_back_attempt: str | None = None  # rollback instant of an earlier failed attempt

    def __str__(self) -> str:
        return (
            f"clustering @ {self.instant_time}: {self.num_input_file_groups} file group(s) "
            f"-> {self.num_output_files} file(s), {self.num_records_written} records"
        )


# ------------------------------------------------------------------------- the executor side


@dataclass(frozen=True)
class ClusteringContext(ServiceContext):
    """What an executor needs to rewrite the groups of clustering ``instant_time`` (pickled
    to Spark tasks); see :class:`ServiceContext`. ``sort_columns`` order each group's
    rows."""

    kind: ClassVar[str] = "clustering"

    sort_columns: tuple[str, ...] = ()

    def file_slice(self, info: ClusteringSlice) -> FileSlice:
        """The slice ``info`` names, with sizes from storage and version-8 log order;
        :class:`CorruptFileError` when a planned file is missing."""
        return self.planned_slice(
            info.partition_path, info.file_id, info.data_file, info.delta_files
        )


def sort_rows(table: pa.Table, columns: Sequence[str]) -> pa.Table:
    """Rows sorted by ``columns`` ascending, nulls first (Spark's default order)."""
    if not columns or table.num_rows < 2:
        return table
    try:
        if _PYARROW_MAJOR >= 25:  # null placement per sort key; the option is deprecated
            return table.sort_by([(c, "ascending", "at_start") for c in columns])
        return table.sort_by([(c, "ascending") for c in columns], null_placement="at_start")
    except pa.ArrowNotImplementedError as exc:  # e.g. a struct or map column
        raise WriteError(f"cannot sort clustered rows by {', '.join(columns)}: {exc}") from None


def cluster_group(
    ctx: ClusteringContext, group: ClusteringGroup, write_token: str
) -> list[WriteStat]:
    """Rewrite one input group: merge its slices, sort, write the new base files; returns
    one write stat per file written (none when every record of the group was deleted)."""
    started = time.monotonic()
    read = ctx.read_slice_fn or default_reader()
    parts = [
        read(
            ctx.gw,
            ctx.file_slice(info),
            merge_spec=ctx.merge_spec,
            schema=ctx.storage_schema,
            is_instant_visible=ctx.is_instant_visible,
            as_of=None,
        )
        for info in group.slices
    ]
    rows = pa.concat_tables([p.select(ctx.storage_schema.names) for p in parts])
    rows = sort_rows(rows.cast(ctx.storage_schema), ctx.sort_columns)
    scan_ms = int((time.monotonic() - started) * 1000)
    if rows.num_rows == 0:
        return []
    files = max(1, min(group.num_output_file_groups, rows.num_rows))
    per_file = math.ceil(rows.num_rows / files)
    stats = []
    for start in range(0, rows.num_rows, per_file):
        written = time.monotonic()
        chunk = rows.slice(start, per_file)
        file_id = new_file_id()
        name = BaseFileName(file_id, write_token, ctx.instant_time).render()
        rel = join_path(group.partition_path, name)
        index = ctx.storage_schema.get_field_index(FILE_NAME_COL)
        chunk = chunk.set_column(
            index, FILE_NAME_COL, pa.repeat(pa.scalar(name, pa.string()), chunk.num_rows)
        )
        ctx.check_fail_point("before_file_write")
        create_marker(ctx.gw, ctx.instant_time, rel, "CREATE")
        size = write_base_file(ctx.gw, rel, chunk, bloom=ctx.bloom)
        ctx.check_fail_point("after_file_write")
        stats.append(
            WriteStat(
                file_id=file_id,
                path=rel,
                partition_path=group.partition_path,
                prev_commit="null",
                num_writes=chunk.num_rows,
                num_inserts=chunk.num_rows,
                total_write_bytes=size,
                file_size_in_bytes=size,
                runtime_stats={
                    "totalScanTime": scan_ms if start == 0 else 0,
                    "totalCreateTime": int((time.monotonic() - written) * 1000),
                    "totalUpsertTime": 0,
                },
            )
        )
    return stats


#: Clustering as a table service: one unit per input group.
CLUSTERING_SERVICE: TableService[ClusteringContext, ClusteringGroup] = TableService(
    "clustering", ClusteringGroup, "clustering group", cluster_group
)

Runner = Callable[[ClusteringContext, Sequence[ClusteringGroup]], list[WriteStat]]
run_locally = CLUSTERING_SERVICE.run_locally
encode_group = CLUSTERING_SERVICE.encode
decode_group = CLUSTERING_SERVICE.decode


# ------------------------------------------------------------------------------ scheduling


def schedule_clustering(state: TableState, options: OptionsLike = None) -> ClusteringPlan | None:
    """Plan a clustering of the table's small file slices; None when nothing qualifies.

    Options: the ``hoodie.clustering.plan.*`` keys of :mod:`hudilite.config` (see
    :mod:`hudilite.services.clustering_plan`); ``hoodie.clustering.plan.strategy.sort.columns``
    (validated here) goes into the plan. Raises :class:`ConfigError` for an unknown sort
    column, an unsupported layout strategy or a bucket-index table.
    """
    opts = resolve_options(state, options)
    if opts.get(cfg.INDEX_TYPE) == cfg.INDEX_BUCKET:
        # Bucket files are found by the bucket number in their file id; new file groups
        # would hide records from the index (Hudi refuses this too for the simple bucket).
        raise ConfigError(
            "clustering is not supported for tables with hoodie.index.type=BUCKET: "
            "it would move records out of their buckets"
        )
    params = plan_strategy_params(state, opts)
    state.config.check_writable()  # before the lock and its metadata-table guard
    rollback_expired_writes(state, opts)
    with table_lock(state.gw, opts):
        state = TableState.load(state.gw)
        groups = plan_groups(state, opts)
        if not groups:
            return None
        writer = TimelineWriter(state.gw, state.config)
        plan = ClusteringPlan("", tuple(groups), params)
        requested = writer.create_requested(
            pending_action(state.config.layout_version),
            writer.new_instant_time(),
            plan.to_avro_bytes(),
        )
    return ClusteringPlan(requested.requested_time, plan.groups, params)


# ------------------------------------------------------------------------------- execution


def clustering_context(
    state: TableState,
    plan: ClusteringPlan,
    options: OptionsLike = None,
    read_slice_fn: ReadSliceFn | None = None,
) -> ClusteringContext:
    """The executor context of ``plan`` on ``state``'s timeline."""
    opts = resolve_options(state, options)
    return ClusteringContext.of_state(
        state, plan.instant_time, opts, read_slice_fn, sort_columns=plan.sort_columns
    )


def stale_slices(state: TableState, plan: ClusteringPlan) -> list[str]:
    """Planned slices that are no longer the whole live slice of their file group (a write
    changed or replaced the group since the plan), described for an error message."""
    live = {s.group_key: s for s in state.view.latest_slices(partitions=list(plan.partitions))}
    out = []
    for info in plan.slices:
        where = f"{info.partition_path or '<root>'}/{info.file_id}"
        current = live.get(info.group_key)
        if current is None:
            out.append(f"{where} is gone")
            continue
        base = current.base_file.file_name if current.base_file is not None else None
        extra = {log.file_name for log in current.log_files} - set(info.delta_files)
        if base != info.data_file or extra:
            out.append(f"{where} was written to after the plan")
    return out


def _target(state: TableState, instant_time: str, st: State) -> Instant:
    found = state.timeline.get(instant_time)
    if found is not None and found.is_pending:
        return found
    return Instant(instant_time, pending_action(state.config.layout_version), st)


def _rollback(state: TableState, instant_time: str, *, keep_plan: bool) -> RollbackInstantResult:
    """Undo an attempt of clustering ``instant_time``: delete what it wrote and record a
    rollback; the plan stays requested (``keep_plan``) or goes too."""
    files = {p for p in marked_files(state.gw, instant_time) if state.gw.exists(p)}
    files.update(state.view.files_of_instant(instant_time))
    target = _target(state, instant_time, State.INFLIGHT)
    return perform_rollback(state.gw, state.config, target, sorted(files), keep_requested=keep_plan)


def _drop_if_stale(state: TableState, plan: ClusteringPlan) -> None:
    stale = stale_slices(state, plan)
    if stale:
        _rollback(state, plan.instant_time, keep_plan=False)
        raise ConflictError(
            f"clustering {plan.instant_time} was rolled back and its plan removed: "
            f"{'; '.join(stale[:3])}; schedule a new clustering"
        )


def _commit(
    state: TableState, inflight: Instant, plan: ClusteringPlan, stats: list[WriteStat]
) -> Instant:
    def metadata(by_partition: dict[str, list[WriteStat]]) -> bytes:
        current = TableState.load(state.gw)
        _drop_if_stale(current, plan)
        meta = CommitMetadata(
            partition_to_write_stats=by_partition,
            operation_type=cfg.CLUSTER_OPERATION,
            # The schema as of now: readers take the latest commit's, so recording the one
            # read at the start would undo a column change committed meanwhile.
            extra_metadata={"schema": table_schema_json(current)},
            partition_to_replace_file_ids=plan.replaced_file_ids(),
        )
        return meta.to_bytes(state.config.layout_version, replace=True)

    return commit_attempt(state, inflight, stats, metadata)


def execute_clustering(
    state: TableState,
    instant_time: str,
    options: OptionsLike = None,
    *,
    runner: Runner | None = None,
    read_slice_fn: ReadSliceFn | None = None,
) -> ClusteringResult:
    """Run the pending clustering ``instant_time`` and commit it.

    ``runner(ctx, groups) -> write stats`` executes the groups (default: in this process).
    On a failure the attempt is rolled back (the plan stays requested) and the error
    re-raised (non-hudilite errors as :class:`WriteError`); when a write changed a planned
    file group the plan is removed too (:class:`ConflictError`).
    """
    started = time.monotonic()
    opts = resolve_options(state, options)
    state = TableState.load(state.gw)
    inst = state.timeline.get(instant_time)
    plan = read_clustering_plan(state, instant_time)  # InstantNotFoundError if none
    if inst is None or inst.is_completed:
        raise TimelineError(f"clustering {instant_time} is already completed")
    state, rolled_back = take_over_expired(
        state,
        "clustering",
        inst,
        opts,
        lambda st: _rollback(st, instant_time, keep_plan=True).rollback_instant,
    )
    _drop_if_stale(state, plan)

    def rollback() -> None:
        current = TableState.load(state.gw)
        if current.timeline.get(instant_time) is not None:  # else a conflict removed it
            _rollback(current, instant_time, keep_plan=True)

    done, stats = execute_plan(
        CLUSTERING_SERVICE,
        state,
        _target(state, instant_time, State.REQUESTED),
        opts,
        context=lambda: clustering_context(state, plan, opts, read_slice_fn),
        units=plan.groups,
        commit=lambda inflight, stats: _commit(state, inflight, plan, stats),
        rollback=rollback,
        runner=runner,
    )
    return ClusteringResult(
        instant_time=instant_time,
        completion_time=done.completion_time,
        num_input_groups=len(plan.groups),
        num_input_file_groups=len(plan.file_groups),
        num_output_files=len(stats),
        num_records_written=sum(s.num_writes for s in stats),
        bytes_written=sum(s.total_write_bytes for s in stats),
        partitions=plan.partitions,
        replaced_file_ids=plan.replaced_file_ids(),
        file_paths=tuple(sorted(str(s.path) for s in stats)),
        duration_s=time.monotonic() - started,
        rolled_back_attempt=rolled_back,
    )


def cluster(
    state: TableState,
    options: OptionsLike = None,
    *,
    schedule: bool = True,
    instant_times: Sequence[str] | None = None,
    runner: Runner | None = None,
) -> list[ClusteringResult]:
    """Schedule a clustering (if ``schedule``), then run pending ones: ``instant_times``,
    or the new plan if one was made, else every pending plan oldest first (the procedure's
    ``scheduleandexecute``). Returns one result per clustering completed."""
    if instant_times is None:
        plan = schedule_clustering(state, options) if schedule else None
        if plan is not None:
            instant_times = [plan.instant_time]
        else:
            timeline = TableState.load(state.gw).timeline
            instant_times = [i.requested_time for i in pending_clusterings(timeline)]
    return [execute_clustering(state, t, options, runner=runner) for t in instant_times]
