"""Merge-on-read compaction: plan which file slices to compact, then rewrite them as base files.

Scheduling (:func:`schedule_compaction`) writes ``T.compaction.requested`` holding the
Avro ``HoodieCompactionPlan`` of :mod:`hudilite.services.compaction_plan`: one operation per
file slice with log files, largest logs first, within ``hoodie.compaction.target.io``
(:func:`plan_operations`); slices of file groups in a pending compaction or clustering plan
are left out.

The trigger (``hoodie.compact.inline.trigger.strategy``) counts delta commits since the
last completed compaction (``NUM_COMMITS``, default 5 =
``hoodie.compact.inline.max.delta.commits``), or since the last requested one
(``NUM_COMMITS_AFTER_LAST_REQUEST``), or the seconds since then (``TIME_ELAPSED``,
``hoodie.compact.inline.max.delta.seconds``, 3600), or both (``NUM_AND_TIME``,
``NUM_OR_TIME``); ``force=True`` ignores it.

Why scheduling holds the table lock: the plan must list every log file of the chosen
slices that a reader sees, and nothing else. Under the lock no write can complete, the
compaction time ``T`` is taken after the listing, and every later completion time is
greater than ``T``; so on table version 8 the logs of later delta commits attach to the
new slice ``T`` by completion time (``docs/dev/hudi-format.md`` §6). Version 6 names logs by
slice, so a delta commit in flight while ``T`` is planned could still write into the old
slice and be lost when it is compacted away: scheduling refuses then (Hudi 0.x's
"earliest inflight write must be later than the compaction" rule), and writers after
``T`` must name their logs with ``T`` (:func:`log_base_instants`).

Execution (:func:`execute_compaction`) moves ``T`` inflight (with a heartbeat), merges
each slice exactly as planned with ``read_file_slice`` (log blocks of instants completed
before ``T``), writes ``<fileId>_<token>_<T>.parquet`` keeping every record's commit
time and sequence number (only ``_hoodie_file_name`` changes, as Hudi's compaction does)
and commits a ``commit`` with ``operationType=COMPACT``, ``compacted=true``. The
per-operation work (:func:`compact_operation`) is plain Arrow: the Spark job in
``hudilite.spark.services_job`` runs one task per operation through the ``runner``
hook. A failed attempt deletes its files, is recorded as a rollback and goes back to
requested, so it can be retried; an inflight attempt whose heartbeat expired is rolled
back the same way before a new one starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import ConfigError, ConflictError, InstantNotFoundError, TimelineError
from hudilite.filegroup.slices import FileSlice, join_path
from hudilite.keygen import KeyGenSpec
from hudilite.schema import COMMIT_SEQNO_COL, FILE_NAME_COL, RECORD_KEY_COL
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

# The plan, its operations and reading it live in compaction_plan.py; callers import them
# from here as before (and tests reach _metrics as compaction._metrics).
from hudilite.services.compaction_plan import COMPACTION_PLAN_VERSION as COMPACTION_PLAN_VERSION
from hudilite.services.compaction_plan import (
    CompactionOperation,
    CompactionPlan,
    CompactionPlanResult,
    pending_compactions,
    plan_operations,
    read_compaction_plan,
)
from hudilite.services.compaction_plan import _metrics as _metrics
from hudilite.services.compaction_plan import log_base_instants as log_base_instants
from hudilite.services.rollback_completed import RollbackInstantResult, perform_rollback
from hudilite.services.table_service import TableService, execute_plan
from hudilite.storage.layout import BaseFileName
from hudilite.storage.parquet_io import read_base_file_and_filter, read_schema, write_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import parse_instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.virtual_keys import key_columns, stored_record_keys
from hudilite.write.lock import table_lock
from hudilite.write.markers import create_marker, marked_files

# The compaction options (declared in hudilite.config, the one registry).
TRIGGER_STRATEGIES = cfg.TRIGGER_STRATEGIES
COMPACT_DELTA_COMMITS = cfg.INLINE_COMPACT_DELTA_COMMITS
COMPACT_TRIGGER_STRATEGY = cfg.COMPACT_TRIGGER_STRATEGY
COMPACT_DELTA_SECONDS = cfg.COMPACT_DELTA_SECONDS
COMPACTION_TARGET_IO_MB = cfg.COMPACTION_TARGET_IO_MB
COMPACTION_ORDER = cfg.COMPACTION_ORDER


@dataclass(frozen=True)
class CompactionResult:
    """Metrics of one completed compaction (the same numbers are in its commit metadata)."""

    instant_time: str
    completion_time: str | None
    num_file_groups: int
    num_log_files_compacted: int
    log_bytes_compacted: int
    num_records_written: int
    num_inserts: int
    num_updates: int
    num_deletes: int
    bytes_written: int
    partitions: tuple[str, ...]
    file_paths: tuple[str, ...]
    duration_s: float
    rolled_back_attempt: str | None = None  # rollback instant of an earlier failed attempt

    def __str__(self) -> str:
        return (
            f"compaction @ {self.instant_time}: {self.num_file_groups} file group(s), "
            f"{self.num_log_files_compacted} log file(s) -> {self.num_records_written} records"
        )


# ------------------------------------------------------------------------- the executor side


@dataclass(frozen=True)
class CompactionContext(ServiceContext):
    """What an executor needs to compact operations of instant ``instant_time`` (pickled
    to Spark tasks); see :class:`ServiceContext`."""

    kind: ClassVar[str] = "compaction"

    def file_slice(self, op: CompactionOperation) -> FileSlice:
        """The slice ``op`` names, with sizes from storage and version-8 log order.

        Raises :class:`CorruptFileError` when a planned file is missing (it was deleted
        behind the plan's back; compacting without it would lose or resurrect data).
        """
        return self.planned_slice(
            op.partition_path, op.file_id, op.data_file, op.delta_files, op.base_instant
        )


def _count_changes(
    base: pa.Table | None, out: pa.Table, virtual: KeyGenSpec | None = None
) -> tuple[int, int, int]:
    """(inserts, updates, deletes) of ``out`` against the slice's base file rows: a key
    absent from the base is an insert, a base key whose sequence number changed an
    update, a base key missing from ``out`` a delete. ``virtual``: a table without meta
    fields, whose stored rows are matched by their record key fields."""
    if base is None or base.num_rows == 0:
        return out.num_rows, 0, 0
    base_keys, out_keys = stored_record_keys(base, virtual), stored_record_keys(out, virtual)
    in_base = pc.is_in(out_keys, value_set=base_keys)
    inserts = out.num_rows - int(pc.sum(in_base).as_py() or 0)
    same_seq = pc.is_in(out[COMMIT_SEQNO_COL], value_set=base[COMMIT_SEQNO_COL].combine_chunks())
    updated = pc.and_(in_base, pc.invert(same_seq))
    updates = int(pc.sum(pc.fill_null(updated, False)).as_py() or 0)
    kept = pc.is_in(base_keys, value_set=out_keys)
    deletes = base.num_rows - int(pc.sum(kept).as_py() or 0)
    return inserts, updates, deletes


def compact_operation(
    ctx: CompactionContext,
    op: CompactionOperation,
    write_token: str,
    read_slice_fn: ReadSliceFn | None = None,
) -> WriteStat:
    """Compact one operation: merge its slice and write the new base file; returns the
    write stat (Hudi's compaction stat fields, ``prevCommit`` = the slice's base instant).

    ``totalLogRecords``/``totalUpdatedRecordsCompacted`` count the records the logs
    changed (Hudi counts every log record read, superseded duplicates included).
    """
    started = time.monotonic()
    file_slice = ctx.file_slice(op)
    read = read_slice_fn or ctx.read_slice_fn or default_reader()
    merged = read(
        ctx.gw,
        file_slice,
        merge_spec=ctx.merge_spec,
        schema=ctx.storage_schema,
        is_instant_visible=ctx.is_instant_visible,
        as_of=None,
    )
    read_ms = int((time.monotonic() - started) * 1000)
    name = BaseFileName(op.file_id, write_token, ctx.instant_time).render()
    rel = join_path(op.partition_path, name)
    columns = []
    for f in ctx.storage_schema:
        if f.name == FILE_NAME_COL:
            columns.append(pa.repeat(pa.scalar(name, pa.string()), merged.num_rows))
        else:
            columns.append(merged[f.name].cast(f.type))
    out = pa.Table.from_arrays(columns, schema=ctx.storage_schema)
    base_rows, stored = None, None
    if file_slice.base_file is not None:
        # The key columns count the changes; the filter (same open) seeds the new one.
        virtual = ctx.merge_spec.virtual_keys
        columns = [*key_columns(virtual), COMMIT_SEQNO_COL]
        if virtual is not None:  # key fields added by a later schema may be absent
            present = set(read_schema(ctx.gw, file_slice.base_file.path).names)
            columns = [c for c in columns if c in present]
        base_rows, stored = read_base_file_and_filter(
            ctx.gw, file_slice.base_file.path, columns=columns
        )
    inserts, updates, deletes = _count_changes(base_rows, out, ctx.merge_spec.virtual_keys)
    ctx.check_fail_point("before_file_write")
    create_marker(ctx.gw, ctx.instant_time, rel, "CREATE")
    written = time.monotonic()
    seed, known = None, None
    if ctx.bloom is not None and stored is not None and base_rows is not None and out.num_rows:
        # Keys the base file stored are in its filter already: only the others are hashed.
        seed = ctx.bloom.resume(stored)
        if seed is not None:
            known = pc.is_in(
                out[RECORD_KEY_COL], value_set=base_rows[RECORD_KEY_COL].combine_chunks()
            )
    size = write_base_file(ctx.gw, rel, out, bloom=ctx.bloom, bloom_seed=seed, known=known)
    write_ms = int((time.monotonic() - written) * 1000)
    ctx.check_fail_point("after_file_write")
    changed = inserts + updates + deletes
    return WriteStat(
        file_id=op.file_id,
        path=rel,
        partition_path=op.partition_path,
        prev_commit=op.base_instant,
        num_writes=out.num_rows,
        num_deletes=deletes,
        num_update_writes=updates,
        num_inserts=inserts,
        total_write_bytes=size,
        file_size_in_bytes=size,
        total_log_records=changed,
        total_updated_records_compacted=changed,
        total_log_files_compacted=len(file_slice.log_files),
        total_log_size_compacted=sum(log.size for log in file_slice.log_files),
        prev_base_file=op.data_file,
        total_log_read_time_ms=read_ms,
        runtime_stats={"totalScanTime": read_ms, "totalCreateTime": 0, "totalUpsertTime": write_ms},
    )


def _compact_unit(
    ctx: CompactionContext, op: CompactionOperation, write_token: str
) -> list[WriteStat]:
    return [compact_operation(ctx, op, write_token)]


#: Compaction as a table service: one unit per operation (file slice).
COMPACTION_SERVICE: TableService[CompactionContext, CompactionOperation] = TableService(
    "compaction", CompactionOperation, "compaction operation", _compact_unit
)

Runner = Callable[[CompactionContext, Sequence[CompactionOperation]], list[WriteStat]]
run_locally = COMPACTION_SERVICE.run_locally
encode_operation = COMPACTION_SERVICE.encode
decode_operation = COMPACTION_SERVICE.decode


# ------------------------------------------------------------------------------ scheduling


def _last_compaction(timeline: Timeline, after_request: bool) -> str | None:
    """Requested time of the last completed commit/replacecommit (Hudi's "commit timeline"
    of a MOR table), or, with ``after_request``, of the last compaction requested."""
    times = [i.requested_time for i in timeline.commits() if i.action in (COMMIT, REPLACE_COMMIT)]
    if after_request:
        times += [i.requested_time for i in timeline.filter(actions=COMPACTION) if i.is_pending]
    return max(times) if times else None


def delta_commits_since_compaction(
    timeline: Timeline, after_request: bool = False
) -> tuple[int, str | None]:
    """(delta commits in any state after the last compaction, the reference time): the
    last compaction's time, else the first delta commit's (Hudi's
    ``getDeltaCommitsSinceLatestCompaction``); ``(0, None)`` with no delta commits."""
    last = _last_compaction(timeline, after_request)
    deltas = [i.requested_time for i in timeline.filter(actions=DELTA_COMMIT)]
    if last is not None:
        return sum(1 for t in deltas if t > last), last
    if not deltas:
        return 0, None
    return len(deltas), min(deltas)


def _triggered(strategy: str, count: int, ref: str | None, now: str, opts: cfg.Options) -> bool:
    if ref is None:
        return False
    max_commits = int(opts.get(COMPACT_DELTA_COMMITS))
    max_seconds = int(opts.get(COMPACT_DELTA_SECONDS))
    by_num = count >= max_commits
    by_time = (parse_instant(now) - parse_instant(ref)).total_seconds() >= max_seconds
    if strategy in ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST"):
        return by_num
    if strategy == "TIME_ELAPSED":
        return by_time
    if strategy == "NUM_AND_TIME":
        return by_num and by_time
    return by_num or by_time


def _pending_writes(timeline: Timeline) -> list[Instant]:
    return [i for i in timeline.pending() if i.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)]


def schedule_compaction(
    state: TableState, options: OptionsLike = None, *, force: bool = False
) -> CompactionPlanResult | None:
    """Plan a compaction if the trigger says so (or ``force``); None when not triggered or
    nothing has log files. Writes ``T.compaction.requested``; see the module docstring.

    Raises :class:`ConfigError` on a copy-on-write table and, on table version 6,
    :class:`ConflictError` while a write is in flight (retry once it finished).
    """
    if not state.config.is_mor:
        raise ConfigError("compaction applies to merge-on-read tables only")
    state.config.check_writable()  # before the lock and its metadata-table guard
    opts = resolve_options(state, options)
    strategy = str(opts.get(COMPACT_TRIGGER_STRATEGY))
    rollback_expired_writes(state, opts)
    with table_lock(state.gw, opts):
        state = TableState.load(state.gw)
        writer = TimelineWriter(state.gw, state.config)
        instant_time = writer.new_instant_time()
        count, ref = delta_commits_since_compaction(
            state.timeline, after_request=strategy == "NUM_COMMITS_AFTER_LAST_REQUEST"
        )
        if not force and not _triggered(strategy, count, ref, instant_time, opts):
            return None
        pending = _pending_writes(state.timeline)
        if pending and state.config.layout_version < 2:
            raise ConflictError(
                f"cannot schedule a compaction while write {pending[0].requested_time} is in "
                "flight on a version-6 table (its log files could miss the plan); retry later"
            )
        ops = plan_operations(state, opts)
        if not ops:
            return None
        plan = CompactionPlan(instant_time, tuple(ops))
        requested = writer.create_requested(COMPACTION, instant_time, plan.to_avro_bytes())
    plan = CompactionPlan(requested.requested_time, plan.operations)
    return CompactionPlanResult(
        requested.requested_time, plan, "force" if force else strategy, count
    )


# ------------------------------------------------------------------------------- execution


def compaction_context(
    state: TableState,
    instant_time: str,
    options: OptionsLike = None,
    read_slice_fn: ReadSliceFn | None = None,
) -> CompactionContext:
    """The executor context of compaction ``instant_time`` on ``state``'s timeline."""
    opts = resolve_options(state, options)
    return CompactionContext.of_state(state, instant_time, opts, read_slice_fn)


def _rollback_attempt(state: TableState, instant_time: str) -> RollbackInstantResult:
    """Undo a failed/abandoned attempt of compaction ``instant_time``: delete what it wrote,
    record a rollback, revert the instant to requested (its plan stays)."""
    files = set(marked_files(state.gw, instant_time))
    files.update(state.view.files_of_instant(instant_time))
    target = state.timeline.get(instant_time) or Instant(instant_time, COMPACTION, State.INFLIGHT)
    return perform_rollback(state.gw, state.config, target, sorted(files), keep_requested=True)


def _commit(
    state: TableState,
    inflight: Instant,
    stats: Sequence[WriteStat],
) -> Instant:
    schema = table_schema_json(state)

    def metadata(by_partition: dict[str, list[WriteStat]]) -> bytes:
        meta = CommitMetadata(
            partition_to_write_stats=by_partition,
            operation_type="COMPACT",
            extra_metadata={"schema": schema},
            compacted=True,
        )
        return meta.to_bytes(state.config.layout_version)

    return commit_attempt(state, inflight, stats, metadata)


def execute_compaction(
    state: TableState,
    instant_time: str,
    read_slice_fn: ReadSliceFn | None = None,
    options: OptionsLike = None,
    *,
    runner: Runner | None = None,
) -> CompactionResult:
    """Run the pending compaction ``instant_time`` and commit it.

    ``runner(ctx, operations) -> write stats`` executes the operations (default: in this
    process, :func:`run_locally`); ``read_slice_fn`` replaces ``read_file_slice``. On any
    error the attempt is rolled back (the plan stays requested) and the error re-raised
    (non-hudilite errors as :class:`WriteError`).
    """
    started = time.monotonic()
    opts = resolve_options(state, options)
    state = TableState.load(state.gw)
    inst = state.timeline.get(instant_time)
    if inst is not None and inst.is_completed and inst.action == COMMIT:
        raise TimelineError(f"compaction {instant_time} is already completed")
    if inst is None or inst.action != COMPACTION:
        raise InstantNotFoundError(f"no pending compaction {instant_time} on the timeline")
    state, rolled_back = take_over_expired(
        state,
        "compaction",
        inst,
        opts,
        lambda st: _rollback_attempt(st, instant_time).rollback_instant,
    )
    plan = read_compaction_plan(state, instant_time)

    def rollback() -> None:
        _rollback_attempt(TableState.load(state.gw), instant_time)

    done, stats = execute_plan(
        COMPACTION_SERVICE,
        state,
        Instant(instant_time, COMPACTION, State.REQUESTED),
        opts,
        context=lambda: compaction_context(state, instant_time, opts, read_slice_fn),
        units=plan.operations,
        commit=lambda inflight, stats: _commit(state, inflight, stats),
        rollback=rollback,
        runner=runner,
    )
    return CompactionResult(
        instant_time=instant_time,
        completion_time=done.completion_time,
        num_file_groups=len(stats),
        num_log_files_compacted=sum(s.total_log_files_compacted for s in stats),
        log_bytes_compacted=sum(s.total_log_size_compacted for s in stats),
        num_records_written=sum(s.num_writes for s in stats),
        num_inserts=sum(s.num_inserts for s in stats),
        num_updates=sum(s.num_update_writes for s in stats),
        num_deletes=sum(s.num_deletes for s in stats),
        bytes_written=sum(s.total_write_bytes for s in stats),
        partitions=plan.partitions,
        file_paths=tuple(sorted(str(s.path) for s in stats)),
        duration_s=time.monotonic() - started,
        rolled_back_attempt=rolled_back,
    )


def compact(
    state: TableState,
    options: OptionsLike = None,
    *,
    schedule: bool = True,
    force: bool = False,
    instant_times: Sequence[str] | None = None,
    read_slice_fn: ReadSliceFn | None = None,
    runner: Runner | None = None,
) -> list[CompactionResult]:
    """Schedule a compaction (if ``schedule`` and triggered, or ``force``), then run the
    pending ones -- ``instant_times``, or all in ``hoodie.compaction.order`` (FIFO by
    default). Returns one result per compaction completed."""
    opts = resolve_options(state, options)
    if schedule and instant_times is None:
        schedule_compaction(state, opts, force=force)
    state = TableState.load(state.gw)
    if instant_times is None:
        order = str(opts.get(COMPACTION_ORDER))
        instant_times = [i.requested_time for i in pending_compactions(state, order)]
    return [execute_compaction(state, t, read_slice_fn, opts, runner=runner) for t in instant_times]
