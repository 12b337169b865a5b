"""A write as a Spark job: key, index, assign, shuffle by file group, merge and write in executors.

The driver only ever sees small things: per-partition counts and key ranges,
the list of candidate base files and one stats row per file written. Table
data moves between executors (``mapInArrow`` for keying, a broadcast join for
the index, ``applyInArrow`` per file group for the merge and write).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.auto_keys import stored_key_carry
from hudilite.errors import ConfigError, SchemaError, WriteError
from hudilite.failpoints import FAIL_POINT_KEY as FAIL_POINT_KEY  # re-export
from hudilite.index.bucket import hash_fields
from hudilite.read.file_group_reader import encode_slice
from hudilite.schema import (
    DELETE_COL,
    FILE_ID_COL,
    IS_DELETED_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    arrow_to_avro_schema,
)
from hudilite.services.schema_evolution import required_columns
from hudilite.spark.convert import arrow_schema, conform_columns, spark_schema
from hudilite.spark.file_group_assignment import (
    assign_file_groups,
    latest_slices,
    plan_inserts,
    tag_buckets,
)
from hudilite.spark.index_job import LOC_PARTITION_COL, locate, log_only_keys, route_global
from hudilite.spark.insert_dedup import combine_batch, dup_policy, prepare_inserts
from hudilite.spark.keying import keyed_frame
from hudilite.spark.plan_facts import held_in_memory, row_bound
from hudilite.spark.task_errors import first_line, hudilite_error_from
from hudilite.storage.layout import new_file_id
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from hudilite.timeline.metadata import CommitMetadata
from hudilite.write import null_ordering, small_write
from hudilite.write.assign import (
    InsertBucket,
    PackingSettings,
    SmallFile,
    WritePlan,
    take_small_files,
    write_tasks,
)
from hudilite.write.conflict import ReadSnapshot
from hudilite.write.file_group_writer import (
    STATS_SCHEMA,
    WriteContext,
    bulk_write_partition_stream,
    write_file_group,
    write_stat_from_row,
)
from hudilite.write.keying import KeyingSpec
from hudilite.write.result import WriteResult
from hudilite.write.transaction import WriteTransaction, commit_metadata, inflight_content
from hudilite.write.write_config import WriteConfig

# The operations a write job runs (a partition delete is services.partitions').
OPERATIONS = tuple(op for op in cfg.WRITE_OPERATIONS if op != cfg.OP_DELETE_PARTITION)
OPERATION_TYPES = cfg.OPERATION_TYPES
# insert_overwrite: partition paths (JSON list) replaced even when no new row lands in them,
# as SQL's INSERT OVERWRITE ... PARTITION (p='x') empties x when the query returns nothing.
OVERWRITE_PARTITIONS_KEY = cfg.OVERWRITE_PARTITIONS.name
log = logging.getLogger("hudilite.write")
#: extraMetadata entry of a global-index write: how many records it moved to a new
#: partition (``hoodie.*.index.update.partition.path=true``).
RECORDS_MOVED_KEY = "hudilite.index.records.moved"


class PhaseTimer:
    """Wall-clock seconds per phase of a write, reported in ``WriteResult.extra['phases']``."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._last = time.monotonic()

    def mark(self, name: str) -> None:
        """Close the phase that ran since the previous mark."""
        now = time.monotonic()
        self.phases[name] = round(self.phases.get(name, 0.0) + now - self._last, 3)
        log.debug("write phase %s: %.3fs", name, now - self._last)
        self._last = now


def _write_token() -> tuple[str, int]:
    """``<partition>-<stage>-<attempt>`` of the running task, and the partition id."""
    ctx = TaskContext.get()
    if ctx is None:  # pragma: no cover - only inside Spark tasks
        return "0-0-0", 0
    pid = ctx.partitionId()
    return f"{pid}-{ctx.stageId()}-{ctx.taskAttemptId()}", pid


def _input_frame(state: TableState, df: DataFrame, operation: str, wc: WriteConfig) -> DataFrame:
    """Check and cast the caller's columns to the table schema.

    Columns added by schema evolution (and any column, with
    ``hoodie.write.set.null.for.missing.columns``) may be omitted: they are written null.
    """
    target = spark_schema(state.data_schema)
    carry = stored_key_carry(state.config, df.columns)  # a keyless table's stored keys
    if operation == "delete":
        # Only the key and partition columns matter: the delete operation removes the key
        # whatever its ordering value (Hudi's natural-order delete).
        keep = set(state.config.record_key_fields) | set(state.config.partition_fields)
        frame = conform_columns(df, target, required=sorted(keep), carry=carry)
        return frame.select(
            *[
                F.col(f"`{f.name}`")
                if f.name in keep
                else F.lit(None).cast(f.dataType).alias(f.name)
                for f in target.fields
            ],
            *[F.col(c) for c in carry.values()],
        )
    required = required_columns(
        state,
        set_null_for_missing=wc.set_null_for_missing_columns,
        optional_columns=wc.optional_columns,
    )
    return conform_columns(df, target, required=required, carry=carry)


def _write_groups(
    ctx: WriteContext, tagged: DataFrame, num_groups: int, records: int
) -> list[dict[str, Any]]:
    def writefn(table: pa.Table) -> pa.Table:
        token, pid = _write_token()
        partition = table[PARTITION_PATH_COL][0].as_py()
        file_id = table[FILE_ID_COL][0].as_py()
        return write_file_group(ctx, partition, file_id, table, token, pid)

    parallelism = max(1, tagged.sparkSession.sparkContext.defaultParallelism)
    # A file group with a base file and no log target rewrites it (copy-on-write, or a
    # small file taking inserts).
    rewrites = any(key not in ctx.log_targets for key in ctx.existing)
    n = max(1, write_tasks(num_groups, records, rewrites, parallelism))
    out = (
        tagged.repartition(n, PARTITION_PATH_COL, FILE_ID_COL)
        .groupBy(PARTITION_PATH_COL, FILE_ID_COL)
        .applyInArrow(writefn, spark_schema(STATS_SCHEMA))
    )
    return [r.asDict() for r in out.collect()]


def _bulk_write(ctx: WriteContext, keyed: DataFrame, plan: WritePlan) -> list[dict[str, Any]]:
    spark = keyed.sparkSession
    parallelism = max(1, spark.sparkContext.defaultParallelism)
    n_parts = max(1, len(plan.partitions))
    total = sum(plan.partitions.values())
    per_task = max(1, ctx.max_file_size // 100)  # rows; bounded by max_file_size anyway
    tasks = max(n_parts, min(parallelism * 2, math.ceil(total / per_task) or 1))
    spread = max(1, math.ceil(tasks / n_parts))
    frame = keyed.withColumn("_spread", F.pmod(F.xxhash64(RECORD_KEY_COL), F.lit(spread)))
    frame = frame.repartition(tasks, PARTITION_PATH_COL, "_spread").drop("_spread")
    frame = frame.sortWithinPartitions(PARTITION_PATH_COL, RECORD_KEY_COL)
    frame = frame.filter(~F.col(DELETE_COL))

    def bulkfn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        token, pid = _write_token()
        # File ids are unique, so every file of this task may share its write token.
        for t in bulk_write_partition_stream(ctx, batches, lambda: token, pid, new_file_id):
            yield from t.to_batches()

    out = frame.mapInArrow(bulkfn, spark_schema(STATS_SCHEMA))
    return [r.asDict() for r in out.collect()]


def run_write(
    state: TableState,
    data: DataFrame,
    operation: str,
    wc: WriteConfig,
    *,
    extra_metadata: Mapping[str, str] | None = None,
    read_snapshot: ReadSnapshot | None = None,
) -> WriteResult:
    """Write ``data`` into the table with ``operation`` and commit it; returns the metrics.

    ``wc``: the write's settings, resolved once by the caller
    (:func:`hudilite.write.write_config.resolve_write_config`); nothing below re-parses them.

    ``extra_metadata``: entries added to the commit's ``extraMetadata`` (e.g. a streaming
    sink's checkpoint), committed atomically with the data. ``read_snapshot``: the table
    snapshot ``data`` was computed from (an UPDATE's rows, say): the commit then fails with
    ConflictError when a commit it did not see clashes with it (snapshot isolation, see
    :mod:`hudilite.write.conflict`), not only one that completed after this write began."""
    if operation not in OPERATIONS:
        raise ConfigError(
            f"unknown write operation {operation!r}; expected one of {', '.join(OPERATIONS)}"
        )
    started = time.monotonic()
    mor = state.config.is_mor
    overwrite = operation.startswith("insert_overwrite")
    action = REPLACE_COMMIT if overwrite else (DELTA_COMMIT if mor else COMMIT)
    # Hudi's EmptyHoodieRecordPayload on an upsert: every record deletes its key.
    deletes = operation == "delete"
    if operation == "upsert" and wc.empty_payload:
        deletes = True
        wc = wc.without_payload()
    df = _input_frame(state, data, "delete" if deletes else operation, wc)
    delete_field, delete_marker, cdc_deletes = _delete_marker(wc)
    keyspec = KeyingSpec(
        keygen=wc.keygen,
        delete_all=deletes,
        delete_field=delete_field,
        delete_marker=delete_marker,
        cdc_deletes=cdc_deletes,
    )
    local_rows = _local_max_rows(operation, wc)
    cached: list[DataFrame] = []
    try:
        timer = PhaseTimer()

        def run_small(table: pa.Table) -> WriteResult:
            return _run_small(
                df.sparkSession, state, table, operation, wc, action, started, timer,
                extra_metadata, read_snapshot,
            )  # fmt: skip

        bounded = bool(local_rows) and row_bound(df) <= local_rows
        if bounded and not _prepares_inserts(operation, wc):
            # Bounded by its plan (VALUES, a LIMIT, a small local table): collected as it is
            # and keyed in the driver by the Arrow key generator (the keys the JVM
            # expressions render: tests compare the two).
            small = small_write.key_table(keyspec, _collect(df))
            return run_small(small)
        keyed = keyed_frame(df, keyspec, native=wc.native_keys)
        cached.append(keyed)
        if bounded:
            small = _collect(prepare_inserts(state, keyed, operation, wc))
            return run_small(small)
        if operation != "bulk_insert" and not held_in_memory(df):
            # Upserts read the keyed batch several times (plan, index, write); bulk inserts
            # read it twice and are large, so re-reading the source beats caching it. A
            # batch Spark already holds is keyed again more cheaply than cached a second
            # time (a 100k-row batch: 0.4 s to cache, 0.08 s to key).
            # (Inside the try: Spark may evaluate key checks on local data right here.)
            keyed = keyed.persist()
        # Inserts: combine the batch, apply the duplicate policy (before any instant exists).
        prepared = prepare_inserts(state, keyed, operation, wc)
        if operation in ("upsert", "delete") and wc.index.is_global:
            # One record per key across partitions: otherwise a key sent to two partitions
            # in one batch would be written to both (a duplicate under a global index).
            prepared = combine_batch(prepared, wc.merge_spec, global_index=True)
        if prepared is not keyed:
            keyed = prepared.persist() if operation != "bulk_insert" else prepared
            cached.append(keyed)
        if local_rows:
            # The input's size is known only by computing it: take one row more than the
            # limit from the cached records (what is computed stays cached for a Spark write).
            head = _collect(keyed.limit(local_rows + 1))
            if head.num_rows <= local_rows:
                return run_small(head)
        return _run(
            state, keyed, operation, wc, action, started, timer, extra_metadata, read_snapshot
        )
    except Exception as exc:
        # Errors raised inside executors arrive wrapped by Spark: surface ours as themselves.
        mapped = hudilite_error_from(exc)
        if mapped is None:
            raise WriteError(f"{operation} failed and was rolled back: {first_line(exc)}") from exc
        if mapped is exc:
            raise
        raise mapped from exc
    finally:
        for frame in cached:
            frame.unpersist()


#: ``WriteResult.extra`` entry: how the Spark write dropped the deletes of keys the table
#: does not hold (see :func:`unknown_delete_rule`).
UNKNOWN_DELETES_KEY = "unknown_deletes"


def unknown_delete_rule(plan: WritePlan) -> str:
    """How an upsert's Spark write drops the deletes of keys the table does not hold,
    decided from the key statistics the write has already collected (``plan.kept`` counts
    the records that are not deletes, a null flag counted as a delete):

    - ``"none"``: the batch holds no delete, so there is nothing to drop;
    - ``"filter"``: the batch holds only deletes, so no record of it inserts their keys;
    - ``"window"``: deletes and other records, so a delete of a new key is kept when
      another record of the batch inserts that key (:func:`_drop_unknown_deletes`).

    The window shuffles every record by key (1.1-3.3 s per 1M records), so only the
    batches that hold both kinds pay for it."""
    records = sum(plan.partitions.values())
    kept = sum(plan.kept.values())
    if kept >= records:
        return "none"
    return "filter" if kept == 0 else "window"


def _drop_unknown_deletes(tagged: DataFrame) -> DataFrame:
    """``tagged`` without the deletes of keys the table does not hold, except those of a
    key another record of the batch inserts: the file group's merge then decides between
    them (a newer delete leaves nothing), as the driver-side write does."""
    live = F.max(F.when(~F.col(DELETE_COL), F.lit(1))).over(Window.partitionBy(RECORD_KEY_COL))
    flagged = tagged.withColumn("_hl_live_key", live.isNotNull())
    keep = F.col(FILE_ID_COL).isNotNull() | ~F.col(DELETE_COL) | F.col("_hl_live_key")
    return flagged.filter(keep).drop("_hl_live_key")


def _delete_marker(wc: WriteConfig) -> tuple[str, str | None, bool]:
    """The delete field and marker of a write: the options', else the merge spec's (a CDC
    payload's ``_change_operation_type``/``d`` or ``Op``/``D``)."""
    if wc.delete_field:
        return wc.delete_field, wc.delete_marker, False
    try:
        spec = wc.merge_spec
    except ConfigError:
        # A payload the merge refuses fails where the merge runs; inserts never merge.
        return IS_DELETED_COL, wc.delete_marker, False
    return spec.delete_field, spec.delete_marker, spec.cdc_deletes


def _local_max_rows(operation: str, wc: WriteConfig) -> int:
    """The driver-side write's row limit for this write; 0 when it cannot run there."""
    limit = wc.local_max_rows
    index = wc.index
    if (
        limit <= 0
        or operation not in ("upsert", "insert", "delete")
        or index.is_global
        or index.kind not in (cfg.INDEX_SIMPLE, cfg.INDEX_BLOOM, cfg.INDEX_BUCKET)
    ):
        return 0
    return limit


def _prepares_inserts(operation: str, wc: WriteConfig) -> bool:
    """Whether :func:`prepare_inserts` changes this write's records (combining, or a
    duplicate policy other than ``none``)."""
    return operation in ("insert", "bulk_insert") and (
        wc.combine_before_insert or dup_policy(wc, operation) != "none"
    )


def _collect(df: DataFrame) -> pa.Table:
    """``df`` in the driver as Arrow, with the types a Spark task would see."""
    table = df.toArrow()
    return (
        table.cast(arrow_schema(df.schema))
        if table.num_rows
        else arrow_schema(df.schema).empty_table()
    )


def _run_small(
    spark: SparkSession,
    state: TableState,
    keyed: pa.Table,
    operation: str,
    wc: WriteConfig,
    action: str,
    started: float,
    timer: PhaseTimer,
    extra_metadata: Mapping[str, str] | None,
    read_snapshot: ReadSnapshot | None = None,
) -> WriteResult:
    """The write of a small input in the driver (:mod:`hudilite.write.small_write`), or of
    its index lookup and file writes in Spark tasks when it would read or rewrite more than
    ``hoodie.hudilite.write.local.max.file.groups`` stored file groups."""
    field = null_ordering.checked_field(wc.merge_spec, operation, wc.null_ordering)
    if field is not None:
        null_ordering.report(field, *null_ordering.count_nulls(keyed, field), wc.null_ordering)
    plan = small_write.key_stats(keyed)
    timer.mark("key")
    # File groups are written in driver threads: as many as there are cores, up to four.
    threads = min(4, os.cpu_count() or 1)
    max_groups = wc.local_max_file_groups

    def write(state: TableState, ctx: WriteContext, extra: dict[str, Any]) -> list[dict[str, Any]]:
        stats = small_write.index_and_write(
            state, ctx, keyed, plan, operation, wc, extra, threads=threads, max_groups=max_groups
        )
        if stats is None:
            # Few records, but more stored file groups to read or rewrite than the driver
            # should alone (an index lookup reads every file group of the partitions),
            # where a cluster has many executors: the records go to the Spark write's tasks.
            frame = spark.createDataFrame(keyed, schema=spark_schema(keyed.schema))
            return _index_and_write(state, ctx, frame, plan, operation, wc, timer, extra)
        extra["driver_side"] = True
        timer.mark("write")
        return stats

    return _commit(
        state, plan, write, operation, wc, action, started, timer, extra_metadata, read_snapshot
    )


def _run(
    state: TableState,
    keyed: DataFrame,
    operation: str,
    wc: WriteConfig,
    action: str,
    started: float,
    timer: PhaseTimer,
    extra_metadata: Mapping[str, str] | None = None,
    read_snapshot: ReadSnapshot | None = None,
) -> WriteResult:
    # A bucket-index table's records must land in their key's bucket whatever the operation
    # (a bulk insert's fresh file ids would hide them from the next upsert's lookup, which
    # would then store the keys a second time); Hudi's bulk insert also writes by bucket.
    bucketed = wc.index.kind == cfg.INDEX_BUCKET
    bulk = operation == "bulk_insert" and not bucketed
    # Key ranges prune the index lookup, which a bulk insert skips: min/max of strings
    # make Spark sort every record (no hash aggregate for them), 4.1 s of a 10M-row bulk
    # load against 1.6 s for the counts. Counting the keys still evaluates them, so a
    # null or empty key fails here, before an instant exists, as it does for an upsert.
    ranges = (
        [F.count(RECORD_KEY_COL).alias("keys")]
        if bulk
        else [F.min(RECORD_KEY_COL).alias("lo"), F.max(RECORD_KEY_COL).alias("hi")]
    )
    # Upserts count records without an ordering value in the same job (no extra pass).
    field = null_ordering.checked_field(wc.merge_spec, operation, wc.null_ordering)
    if field is not None and field in keyed.columns:
        missing = F.col(f"`{field}`").isNull() & ~F.col(DELETE_COL)
        ranges += [
            F.count(F.when(missing, F.lit(1))).alias(null_ordering.NULLS_COUNT),
            F.min(F.when(missing, F.col(RECORD_KEY_COL))).alias(null_ordering.NULLS_EXAMPLE),
        ]
    rows = (
        keyed.groupBy(PARTITION_PATH_COL)
        .agg(
            F.count(F.lit(1)).alias("n"),
            *ranges,
            # Counted like the index's "not a delete" filter keeps rows (a null flag is
            # not kept): the insert planner's bound, in the same job as the key stats.
            F.count(F.when(~F.col(DELETE_COL), F.lit(1))).alias("kept"),
        )
        .collect()
    )
    plan = WritePlan(
        partitions={r[PARTITION_PATH_COL]: r["n"] for r in rows},
        key_ranges={} if bulk else {r[PARTITION_PATH_COL]: (r["lo"], r["hi"]) for r in rows},
        kept={r[PARTITION_PATH_COL]: r["kept"] for r in rows},
    )
    if field is not None and field in keyed.columns:
        examples = [r[null_ordering.NULLS_EXAMPLE] for r in rows if r[null_ordering.NULLS_EXAMPLE]]
        count = sum(r[null_ordering.NULLS_COUNT] for r in rows)
        null_ordering.report(field, count, min(examples, default=None), wc.null_ordering)
    timer.mark("key")

    def write(state: TableState, ctx: WriteContext, extra: dict[str, Any]) -> list[dict[str, Any]]:
        if bulk:
            stats = _bulk_write(ctx, keyed, plan) if plan.partitions else []
            timer.mark("write")
            return stats
        return _index_and_write(state, ctx, keyed, plan, operation, wc, timer, extra)

    return _commit(
        state, plan, write, operation, wc, action, started, timer, extra_metadata, read_snapshot
    )


def _commit(
    state: TableState,
    plan: WritePlan,
    write: Callable[[TableState, WriteContext, dict[str, Any]], list[dict[str, Any]]],
    operation: str,
    wc: WriteConfig,
    action: str,
    started: float,
    timer: PhaseTimer,
    extra_metadata: Mapping[str, str] | None,
    read_snapshot: ReadSnapshot | None = None,
) -> WriteResult:
    """Run ``write`` inside a write transaction and commit what it wrote: one commit
    protocol for the Spark write and the driver-side one (``read_snapshot``: see
    :func:`run_write`)."""
    opts = wc.options
    # Index metrics, and whether the files were written in the driver (``write`` says so).
    extra: dict[str, Any] = {"driver_side": False}
    overwrite = operation.startswith("insert_overwrite")
    max_file_size = wc.max_file_size
    # Between the records' computation (an UPDATE's read of its snapshot) and the
    # transaction's start: the race tests hold a reading write here so that another
    # writer commits before this one begins (tests/faults/test_read_modify_write.py).
    # Test-only internals stay raw strings (no user sets them; see write_config's doc).
    failpoints.check(opts.raw.get(FAIL_POINT_KEY), "before_transaction")
    _refuse_damaged_slices(state, plan, operation, wc)
    with WriteTransaction(
        state.gw,
        state.config,
        action,
        heartbeat_interval_ms=wc.heartbeat_interval_ms,
        tolerable_misses=wc.heartbeat_tolerable_misses,
        lock_options=opts,
        lock=wc.lock,
    ) as txn:
        state = TableState.load(state.gw)  # after rolling back failed writes
        touched = sorted(plan.partitions)
        # A global index looks for keys (and writes) in every partition of the table.
        is_global = wc.index.is_global
        scope = None if is_global and operation in ("upsert", "delete") else touched
        existing, log_targets = latest_slices(state, scope) if not overwrite else ({}, {})
        storage_schema = state.storage_schema
        ctx = WriteContext(
            gw=state.gw,
            instant_time=txn.instant_time,
            storage_schema=state.storage_schema,
            merge_spec=wc.merge_spec,
            operation=operation,
            existing=existing,
            max_file_size=max_file_size,
            fail_point=opts.raw.get(FAIL_POINT_KEY),
            log_targets=log_targets,
            table_version=state.config.table_version,
            log_schema_json=json.dumps(
                arrow_to_avro_schema(
                    storage_schema, f"{state.config.name}_record", f"hoodie.{state.config.name}"
                ),
                separators=(",", ":"),
            ),
            log_block_format=wc.log_block_format,
            bloom=wc.bloom,
        )
        if state.changelog and state.config.is_mor:
            ctx.slice_descriptors = {
                (s.partition, s.file_id): encode_slice(s)
                for s in state.view.latest_slices(partitions=scope)
            }
            ctx.visible_instants = frozenset(i.requested_time for i in state.timeline.completed())
        replaced: dict[str, list[str]] = {}
        if overwrite:
            named = json.loads(opts.raw.get(OVERWRITE_PARTITIONS_KEY) or "[]")
            scope = None if operation == "insert_overwrite_table" else sorted({*touched, *named})
            for s in state.view.latest_slices(partitions=scope):
                replaced.setdefault(s.partition, []).append(s.file_id)
        # Each partition's metadata file is written with its first data file (see
        # hudilite.write.markers.mark_data_file), not for every partition the keys named.
        txn.start_inflight(_inflight_content(state, touched, operation))
        timer.mark("start")
        stats = write(state, ctx, extra)
        ctx.check_fail_point("before_commit")
        index = extra.get("index")
        if index is not None and index["type"].startswith(cfg.GLOBAL_INDEX_PREFIX):
            # The moves a global index made, with the commit (its write stats show them only
            # as deletes in one partition and inserts in another).
            moved = {RECORDS_MOVED_KEY: str(index["records_moved"])}
            extra_metadata = {**(extra_metadata or {}), **moved}
        metadata = _commit_metadata(state, stats, operation, replaced, extra_metadata)
        txn.check_keys = wc.key_conflict_check
        txn.read_snapshot = read_snapshot
        completed = txn.commit(metadata)
        timer.mark("commit")
    return WriteResult.from_stats(
        instant_time=completed.requested_time,
        completion_time=completed.completion_time,
        operation=operation,
        stats=stats,
        replaced_file_groups=sum(len(v) for v in replaced.values()),
        rolled_back=tuple(r.rolled_back_instant for r in txn.rolled_back),
        duration_s=time.monotonic() - started,
        extra={"phases": timer.phases, **extra},
    )


def _write_scope(
    state: TableState, plan: WritePlan, operation: str, wc: WriteConfig
) -> list[str] | None:
    """The partitions whose latest slices a write builds on (None: every partition): the
    partitions it writes, every partition for a global index's lookup, the whole table for
    ``insert_overwrite_table``."""
    if operation == "insert_overwrite_table":
        return None
    touched = sorted(plan.partitions)
    if operation == "insert_overwrite":
        named = json.loads(wc.options.raw.get(OVERWRITE_PARTITIONS_KEY) or "[]")
        return sorted({*touched, *named})
    if wc.index.is_global and operation in ("upsert", "delete"):
        return None
    return touched


def _refuse_damaged_slices(
    state: TableState, plan: WritePlan, operation: str, wc: WriteConfig
) -> None:
    """Refuse, before an instant exists, a write whose file groups have a missing or short
    file a visible commit wrote (:mod:`hudilite.filegroup.integrity`): refused inside the
    transaction, it left a requested, an inflight and a rollback instant behind. The
    transaction's own load checks again (a file lost in between is still refused there)."""
    state.view.latest_slices(partitions=_write_scope(state, plan, operation, wc))


def _index_and_write(
    state: TableState,
    ctx: WriteContext,
    keyed: DataFrame,
    plan: WritePlan,
    operation: str,
    wc: WriteConfig,
    timer: PhaseTimer,
    extra: dict[str, Any],
) -> list[dict[str, Any]]:
    if not plan.partitions:
        return []
    index = wc.index
    index_type = index.kind
    known = (cfg.INDEX_SIMPLE, cfg.INDEX_BLOOM, cfg.INDEX_BUCKET, cfg.INDEX_RECORD)
    if index_type not in known or (index.is_global and index_type == cfg.INDEX_BUCKET):
        raise ConfigError(
            f"unsupported {cfg.INDEX_TYPE.name}={wc.index_type!r}; use SIMPLE, BLOOM, "
            "GLOBAL_SIMPLE, GLOBAL_BLOOM, BUCKET or RECORD_INDEX"
        )
    uses_index = operation in ("upsert", "delete")
    buckets: list[InsertBucket] = []
    cached: list[DataFrame] = []
    if index_type == cfg.INDEX_BUCKET:
        fields = hash_fields(state.config.record_key_fields, wc.bucket_hash_field)
        tagged = tag_buckets(state, ctx, keyed, plan, wc.bucket_num, fields)
        if operation == "delete":
            # A delete only touches buckets that exist (file ids are unique UUIDs).
            tagged = tagged.filter(F.col(FILE_ID_COL).isin(sorted(f for _, f in ctx.existing)))
    else:
        looked_up = False  # whether any stored key was searched for
        if uses_index:
            searched = sorted({p for p, _ in ctx.existing} | set(plan.partitions))
            # The record index holds the keys of log-only groups too.
            log_keys = (
                None
                if index_type == cfg.INDEX_RECORD
                else log_only_keys(
                    state, keyed, searched if index.is_global else sorted(plan.partitions)
                )
            )
            tagged, metrics = locate(state, keyed, ctx.existing, plan.key_ranges, index, log_keys)
            looked_up = metrics.looked_up
            if index.is_global and looked_up:
                tagged = route_global(
                    state,
                    tagged,
                    index,
                    metrics,
                    ctx.storage_schema,
                    ctx.merge_spec.ordering_field,
                )
            elif index.is_global:
                # No stored location: route_global would keep every record where it is.
                tagged = tagged.drop(LOC_PARTITION_COL)
            extra["index"] = metrics.as_dict()
            cached.extend(metrics.cached)
        else:
            tagged = keyed.withColumn(FILE_ID_COL, F.lit(None).cast("string"))
        # Deletes of keys the table does not hold have nothing to do.
        if operation == "delete":
            tagged = tagged.filter(F.col(FILE_ID_COL).isNotNull())
        else:
            rule = unknown_delete_rule(plan)
            extra[UNKNOWN_DELETES_KEY] = rule
            if rule == "filter":
                tagged = tagged.filter(F.col(FILE_ID_COL).isNotNull() | ~F.col(DELETE_COL))
            elif rule == "window":
                tagged = _drop_unknown_deletes(tagged)
        timer.mark("index")
        overwrite = operation.startswith("insert_overwrite")
        smalls: dict[str, list[SmallFile]] = {}
        if operation != "delete":  # (a delete packs nothing: no record size estimate)
            settings = PackingSettings(
                small_file_limit=0 if overwrite else wc.small_file_limit,
                max_file_size=ctx.max_file_size,
                avg_record_size=wc.avg_record_size,
            )
            buckets, smalls, counted = plan_inserts(state, tagged, plan, settings, looked_up, index)
            if counted is not None:  # the located records, cached by the insert count
                tagged = counted
                cached.append(counted)
        take_small_files(buckets, smalls, ctx.existing, ctx.log_targets)
        tagged = assign_file_groups(tagged, buckets)
    groups = len(ctx.existing) + sum(1 for b in buckets if b.is_new)
    if index_type == cfg.INDEX_BUCKET:
        groups = len(plan.partitions) * wc.bucket_num
    timer.mark("assign")
    try:
        stats = _write_groups(ctx, tagged, max(groups, 1), sum(plan.partitions.values()))
        timer.mark("write")
        return stats
    finally:
        for frame in cached:
            frame.unpersist()


def _inflight_content(state: TableState, partitions: list[str], operation: str) -> bytes:
    return inflight_content(state.config, partitions, OPERATION_TYPES[operation])


def _commit_metadata(
    state: TableState,
    stats: list[dict[str, Any]],
    operation: str,
    replaced: dict[str, list[str]],
    extra: Mapping[str, str] | None = None,
) -> CommitMetadata:
    schema = arrow_to_avro_schema(
        state.data_schema, f"{state.config.name}_record", f"hoodie.{state.config.name}"
    )
    return commit_metadata(
        state.config,
        json.dumps(schema, separators=(",", ":")),
        [write_stat_from_row(s) for s in stats],
        OPERATION_TYPES[operation],
        replaced,
        extra,
    )


def check_no_duplicate_columns(df: DataFrame) -> None:
    """Reject inputs with two columns of the same name (Spark allows them, Hudi cannot)."""
    seen: set[str] = set()
    for name in df.columns:
        if name.lower() in seen:
            raise SchemaError(f"column {name!r} appears twice in the data being written")
        seen.add(name.lower())
