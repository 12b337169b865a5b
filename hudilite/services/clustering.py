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

import base64
import math
import pickle
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from hudilite import config as cfg
from hudilite.errors import (
    ConfigError,
    ConflictError,
    CorruptFileError,
    HudiliteError,
    TimelineError,
    WriteError,
)
from hudilite.filegroup.slices import BaseFile, FileSlice, LogFile, join_path
from hudilite.merge import MergeSpec
from hudilite.schema import FILE_NAME_COL
from hudilite.services._common import OptionsLike, resolve_options, table_schema_json
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
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName, new_file_id
from hudilite.storage.parquet_io import write_base_file
from hudilite.table_state import TableState
from hudilite.timeline.heartbeat import Heartbeat, is_expired
from hudilite.timeline.instant import Instant, State
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.markers import create_marker, delete_markers, marked_files
from hudilite.write.rollback import rollback_failed_writes
from hudilite.write.transaction import table_lock

ReadSliceFn = Callable[..., pa.Table]
_PYARROW_MAJOR = int(pa.__version__.split(".")[0])
#: Test hook (same key as the write path): raise at a named point of a clustering.
FAIL_POINT_KEY = "hudilite.internal.fail.point"


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
class ClusteringContext:
    """What an executor needs to rewrite the groups of clustering ``instant_time`` (pickled
    to Spark tasks); ``completed`` maps requested -> completion time (None on v6) of every
    completed instant and decides which log blocks apply and the v8 log order."""

    gw: FileSystemGateway
    instant_time: str
    storage_schema: pa.Schema
    merge_spec: MergeSpec
    table_version: int
    completed: Mapping[str, str | None]
    timeline_start: str | None
    sort_columns: tuple[str, ...] = ()
    read_slice_fn: ReadSliceFn | None = None
    fail_point: str | None = None  # test hook, see check_fail_point

    def is_instant_visible(self, instant_time: str) -> bool:
        """Log blocks the clustering applies: of instants before ``T`` that completed (or
        were archived)."""
        if instant_time >= self.instant_time:
            return False
        if instant_time in self.completed:
            return True
        return self.timeline_start is not None and instant_time < self.timeline_start

    def check_fail_point(self, name: str) -> None:
        """Raise a simulated crash at ``name`` when the test hook asks for it."""
        if self.fail_point == name:
            raise WriteError(f"simulated failure at {name!r}")

    def file_slice(self, info: ClusteringSlice) -> FileSlice:
        """The slice ``info`` names, with sizes from storage and version-8 log order;
        :class:`CorruptFileError` when a planned file is missing."""

        def size(rel: str) -> int:
            try:
                return self.gw.size(rel)
            except FileNotFoundError:
                raise CorruptFileError(
                    f"clustering {self.instant_time}: planned file {rel} is missing"
                ) from None

        part = info.partition_path
        base = None
        if info.data_file:
            name = BaseFileName.parse(info.data_file)
            if name is None:
                raise CorruptFileError(f"clustering plan names a bad base file {info.data_file!r}")
            base = BaseFile(part, name, size(join_path(part, info.data_file)))
        logs = []
        for log_name in info.delta_files:
            parsed = LogFileName.parse(log_name)
            if parsed is None:
                raise CorruptFileError(f"clustering plan names a bad log file {log_name!r}")
            completion = (
                self.completed.get(parsed.base_instant) or parsed.base_instant
                if self.table_version >= 8
                else None
            )
            logs.append(LogFile(part, parsed, size(join_path(part, log_name)), completion))
        logs.sort(key=LogFile.sort_key)
        base_instant = (
            base.instant_time
            if base is not None
            else min((log.instant_time for log in logs), default="")
        )
        return FileSlice(part, info.file_id, base_instant, base, tuple(logs))


def _default_reader() -> ReadSliceFn:
    from hudilite.read.file_group_reader import read_file_slice

    return read_file_slice


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
    read = ctx.read_slice_fn or _default_reader()
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
        size = write_base_file(ctx.gw, rel, chunk)
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


Runner = Callable[[ClusteringContext, Sequence[ClusteringGroup]], list[WriteStat]]


def run_locally(ctx: ClusteringContext, groups: Sequence[ClusteringGroup]) -> list[WriteStat]:
    """The default runner: every group in this process, one after the other."""
    return [s for i, g in enumerate(groups) for s in cluster_group(ctx, g, f"{i}-0-{i}")]


def encode_group(group: ClusteringGroup) -> str:
    """Text form of a group for a DataFrame row (base64 pickle)."""
    return base64.b64encode(pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL)).decode()


def decode_group(text: str) -> ClusteringGroup:
    """Inverse of :func:`encode_group`."""
    value = pickle.loads(base64.b64decode(text))
    if not isinstance(value, ClusteringGroup):
        raise CorruptFileError(f"not a clustering group: {type(value).__name__}")
    return value


# ------------------------------------------------------------------------------ scheduling


def schedule_clustering(state: TableState, options: OptionsLike = None) -> ClusteringPlan | None:
    """Plan a clustering of the table's small file slices; None when nothing qualifies.

    Options: the ``hoodie.clustering.plan.*`` keys of :mod:`hudilite.config` (see
    :mod:`hudilite.services.clustering_plan`); ``hoodie.clustering.plan.strategy.sort.columns``
    (validated here) goes into the plan. Raises :class:`ConfigError` for an unknown sort
    column, an unsupported layout strategy or a bucket-index table.
    """
    opts = resolve_options(state, options)
    if opts.get(cfg.INDEX_TYPE) == "BUCKET":
        # Bucket files are found by the bucket number in their file id; new file groups
        # would hide records from the index (Hudi refuses this too for the simple bucket).
        raise ConfigError(
            "clustering is not supported for tables with hoodie.index.type=BUCKET: "
            "it would move records out of their buckets"
        )
    params = plan_strategy_params(state, opts)
    rollback_failed_writes(
        state.gw,
        state.config,
        heartbeat_interval_ms=int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)),
        tolerable_misses=int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES)),
    )
    with table_lock(state.gw):
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
    first = state.timeline.first_active()
    return ClusteringContext(
        gw=state.gw,
        instant_time=plan.instant_time,
        storage_schema=state.storage_schema,
        merge_spec=state.merge_spec(opts),
        table_version=int(state.config.table_version),
        completed={i.requested_time: i.completion_time for i in state.timeline.completed()},
        timeline_start=first.requested_time if first is not None else None,
        sort_columns=plan.sort_columns,
        read_slice_fn=read_slice_fn,
        fail_point=opts.raw.get(FAIL_POINT_KEY),
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
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    written = {s.path for s in stats}
    for leftover in marked_files(state.gw, inflight.requested_time):
        if leftover not in written:  # a retried task's duplicate: never part of the commit
            state.gw.delete_file(leftover)
    with table_lock(state.gw):
        current = TableState.load(state.gw)
        _drop_if_stale(current, plan)
        meta = CommitMetadata(
            partition_to_write_stats=by_partition,
            operation_type="CLUSTER",
            # The schema as of now: readers take the latest commit's, so recording the one
            # read at the start would undo a column change committed meanwhile.
            extra_metadata={"schema": table_schema_json(current)},
            partition_to_replace_file_ids=plan.replaced_file_ids(),
        )
        content = meta.to_bytes(state.config.layout_version, replace=True)
        done = TimelineWriter(state.gw, state.config).complete(inflight, content)
    delete_markers(state.gw, inflight.requested_time)
    return done


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
    interval = int(opts.get(cfg.HEARTBEAT_INTERVAL_MS))
    misses = int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES))
    state = TableState.load(state.gw)
    inst = state.timeline.get(instant_time)
    plan = read_clustering_plan(state, instant_time)  # InstantNotFoundError if none
    if inst is None or inst.is_completed:
        raise TimelineError(f"clustering {instant_time} is already completed")
    rolled_back = None
    if inst.is_inflight:
        if not is_expired(state.gw, instant_time, interval, misses):
            raise ConflictError(f"clustering {instant_time} is being executed by another process")
        rolled_back = _rollback(state, instant_time, keep_plan=True).rollback_instant
        state = TableState.load(state.gw)
    _drop_if_stale(state, plan)
    # Beat before going inflight, so no one mistakes the fresh attempt for a dead one.
    heartbeat = Heartbeat(state.gw, instant_time, interval).start()
    writer = TimelineWriter(state.gw, state.config)
    try:
        inflight = writer.transition_inflight(_target(state, instant_time, State.REQUESTED))
    except TimelineError:
        heartbeat.stop(delete=False)  # the heartbeat file is the other attempt's now
        raise ConflictError(f"clustering {instant_time} was started by another process") from None
    try:
        try:
            ctx = clustering_context(state, plan, opts, read_slice_fn)
            stats = (runner or run_locally)(ctx, plan.groups)
            ctx.check_fail_point("before_commit")
            done = _commit(state, inflight, plan, stats)
        except BaseException as exc:
            current = TableState.load(state.gw)
            if current.timeline.get(instant_time) is not None:  # else a conflict removed it
                _rollback(current, instant_time, keep_plan=True)
            if isinstance(exc, HudiliteError) or not isinstance(exc, Exception):
                raise
            raise WriteError(
                f"clustering {instant_time} failed and was rolled back (its plan stays "
                f"requested): {exc}"
            ) from exc
    finally:
        heartbeat.stop()
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
