"""``df.write.format("hudilite").options(...).mode(...).save(path)``: the Python data
source's writer, for the writes that need no shuffle.

It takes the options of :func:`hudilite.save` (:mod:`hudilite.spark.save`: table creation
on the first write, the conflict checks, ``mode("overwrite")`` recreating the table) for
the operations each Spark task can do alone on its share of the rows:

* ``bulk_insert`` and ``insert``: every task writes its rows, sorted by partition path and
  key, into new file groups (an insert here packs nothing into existing small files: that
  would need the counts of every task first);
* ``insert_overwrite`` / ``insert_overwrite_table``: the same, committed as a
  ``replacecommit`` that replaces the file groups of the partitions written (or of the
  whole table).

``upsert`` (Hudi's default operation), ``delete`` and ``delete_partition`` need the rows
grouped by key or looked up in the table first, which a data source writer cannot do; so
do an insert's duplicate policy (``hoodie.datasource.insert.dup.policy``),
``hoodie.combine.before.insert`` and a bucket-index table. They are refused before anything
is written, with the one line that says to call ``hudilite.save`` instead. Spark takes only
``append`` and ``overwrite`` from a Python data source (it refuses ``error`` and ``ignore``
itself).

The write is one instant, as :class:`~hudilite.write.transaction.WriteTransaction` runs it,
split over three processes: the driver's planning worker reserves the instant (after
rolling back dead writes) and leaves it inflight; the tasks write base files with markers
and keep its heartbeat alive while they run; the commit worker completes it under the
table lock (conflict checks, stray files of failed task attempts deleted), or rolls it back
when a task or the commit fails.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.errors import ConfigError, SchemaError
from hudilite.schema import (
    META_COLUMNS,
    OPERATION_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    arrow_to_avro_schema,
    cast_to_schema,
)
from hudilite.spark.insert_dedup import dup_policy
from hudilite.spark.save import (
    SaveRequest,
    check_mode,
    check_name,
    check_new_table,
    check_table,
    create_table,
    resolve,
    write_options,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import new_file_id, write_partition_metadata
from hudilite.tablestate.state import PROPERTIES_FILE, TableState
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.file_group_writer import (
    WriteContext,
    bulk_write_partition_stream,
    write_stat_from_row,
)
from hudilite.write.keying import KeyingSpec, key_batch
from hudilite.write.result import WriteResult
from hudilite.write.transaction import WriteTransaction, commit_metadata, inflight_content
from hudilite.write.write_config import WriteConfig, resolve_write_config

#: Operations a data source writer runs, with Hudi's operation type names.
OPERATIONS = {
    op: cfg.OPERATION_TYPES[op]
    for op in (
        cfg.OP_INSERT,
        cfg.OP_BULK_INSERT,
        cfg.OP_INSERT_OVERWRITE,
        cfg.OP_INSERT_OVERWRITE_TABLE,
    )
}


def _use_save(what: str) -> ConfigError:
    return ConfigError(
        f"{what} cannot run through df.write.format('hudilite'): it needs the rows grouped "
        "by key first; use hudilite.save(df, path, options=..., mode=...) instead"
    )


class SplitTransaction(WriteTransaction):
    """A :class:`WriteTransaction` begun in one process and committed in another: the
    driver's heartbeat thread stops once the instant is reserved (the file stays; the
    tasks beat while they write) and the object travels pickled to the commit worker."""

    def begin(self, operation_type: str) -> None:
        """Reserve the instant and leave it inflight."""
        self.__enter__()
        self.start_inflight(inflight_content(self.config, [], operation_type))
        if self._heartbeat is not None:
            self._heartbeat.stop(delete=False)
            self._heartbeat = None

    def __getstate__(self) -> dict[str, Any]:
        # The timeline writer's thread lock and the heartbeat thread stay in this process.
        state = dict(self.__dict__)
        state["writer"] = None
        state["_heartbeat"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.writer = TimelineWriter(self.gw, self.config)

    def finish(self, metadata: Any) -> Any:
        """Complete the instant (:meth:`WriteTransaction.commit`), or roll it back."""
        self._heartbeat = Heartbeat(self.gw, self.instant_time, self.heartbeat_interval_ms)
        self._heartbeat.start()
        try:
            completed = self.commit(metadata)
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self.__exit__(None, None, None)
        return completed


@dataclass
class _Files(WriterCommitMessage):
    """What one task wrote: a stats row per base file."""

    stats: list[dict[str, Any]]


def _refusals(req: SaveRequest, wc: WriteConfig) -> None:
    if req.operation not in OPERATIONS:
        raise _use_save(f"the {req.operation} operation")
    if wc.index.kind == cfg.INDEX_BUCKET:
        raise _use_save("a write to a bucket-index table")
    if req.operation in ("insert", "bulk_insert") and dup_policy(wc, req.operation) != "none":
        raise _use_save(f"{cfg.INSERT_DUP_POLICY.name}={dup_policy(wc, req.operation)}")
    if req.operation in ("insert", "bulk_insert") and wc.combine_before_insert:
        raise _use_save(f"{cfg.COMBINE_BEFORE_INSERT.name}=true")


def make_writer(options: Mapping[str, str], schema: StructType, overwrite: bool) -> HudiliteWriter:
    """The writer of one ``save``: checks, the table (created or recreated) and the
    reserved instant; nothing is written when a check fails."""
    given = {k: v for k, v in options.items() if k.lower() != "path"}
    path = options.get("path")
    if not path:
        raise ConfigError("the hudilite data source needs a table path: .save(path)")
    req = resolve(path, given, "overwrite" if overwrite else "append")
    _refusals(req, resolve_write_config(None, req.opts))
    data_fields = [f for f in schema.fields if f.name not in (*META_COLUMNS, OPERATION_COL)]
    data = StructType(data_fields)
    gw = FileSystemGateway(req.path, storage_options=req.storage)
    req.table_name  # noqa: B018  (required, as in Hudi)
    if gw.exists(PROPERTIES_FILE):
        current = TableState.load(gw).config
        check_table(req, current, gw.abs_path(""))
        check_name(req, current, gw.abs_path(""))
    if not (
        gw.exists(PROPERTIES_FILE)
        and (req.mode != "overwrite" or req.operation == "insert_overwrite_table")
    ):
        check_new_table(req, [f.name for f in data_fields])  # before anything is deleted
    if not check_mode(req, gw):
        create_table(req, data)
    state = TableState.load(gw)
    # The write's options are parsed here, once (issue 28).
    wc = resolve_write_config(state, write_options(req, state.config))
    _refusals(req, wc)  # the table's own write defaults count too
    target = state.data_schema
    given_names = {f.name for f in data_fields}
    missing = [f.name for f in target if f.name not in given_names]
    extra = sorted(given_names - set(target.names))
    where = gw.abs_path("")
    if missing:
        raise SchemaError(f"the data lacks column {missing[0]!r} of the table at {where}")
    if extra:
        raise SchemaError(f"column {extra[0]!r} is not in the table schema of {where}")
    overwrite_op = req.operation.startswith("insert_overwrite")
    action = REPLACE_COMMIT if overwrite_op else (DELTA_COMMIT if state.config.is_mor else COMMIT)
    txn = SplitTransaction(
        gw,
        state.config,
        action,
        heartbeat_interval_ms=wc.heartbeat_interval_ms,
        tolerable_misses=wc.heartbeat_tolerable_misses,
        lock_options=wc.options,
        lock=wc.lock,
    )
    txn.begin(OPERATIONS[req.operation])
    storage = state.storage_schema
    ctx = WriteContext(
        gw=gw,
        instant_time=txn.instant_time,
        storage_schema=storage,
        merge_spec=wc.merge_spec,
        operation="bulk_insert",
        max_file_size=wc.max_file_size,
        table_version=state.config.table_version,
        log_schema_json="",
        bloom=wc.bloom,
    )
    return HudiliteWriter(
        txn=txn,
        ctx=ctx,
        keying=KeyingSpec(keygen=wc.keygen),
        data_schema=target,
        operation=req.operation,
        started=time.monotonic(),
    )


class HudiliteWriter(DataSourceArrowWriter):
    """Writes each task's rows into new file groups; commits or rolls back the instant."""

    def __init__(
        self,
        *,
        txn: SplitTransaction,
        ctx: WriteContext,
        keying: KeyingSpec,
        data_schema: pa.Schema,
        operation: str,
        started: float,
    ) -> None:
        self.txn = txn
        self.ctx = ctx
        self.keying = keying
        self.data_schema = data_schema
        self.operation = operation
        self.started = started
        #: The result of the commit (set in the process that ran :meth:`commit`).
        self.result: WriteResult | None = None

    # ------------------------------------------------------------------ in the tasks
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        beat = Heartbeat(self.ctx.gw, self.ctx.instant_time, self.txn.heartbeat_interval_ms)
        beat.start()
        try:
            return _Files(self._write(iterator))
        finally:
            beat.stop(delete=False)  # the commit deletes it

    def _write(self, iterator: Iterator[pa.RecordBatch]) -> list[dict[str, Any]]:
        task = TaskContext.get()
        pid = task.partitionId() if task is not None else 0
        token = f"{pid}-{task.stageId()}-{task.taskAttemptId()}" if task is not None else "0-0-0"
        offset = pid << 33
        keyed: list[pa.RecordBatch] = []
        for batch in iterator:
            table = pa.Table.from_batches([batch])
            drop = [c for c in table.column_names if c in META_COLUMNS or c == OPERATION_COL]
            table = cast_to_schema(table.drop_columns(drop), self.data_schema)
            for b in table.to_batches():
                keyed.append(key_batch(self.keying, b, offset))
                offset += b.num_rows
        if not keyed:
            return []
        rows = pa.Table.from_batches(keyed).sort_by(
            [(PARTITION_PATH_COL, "ascending"), (RECORD_KEY_COL, "ascending")]
        )
        for part in pc.unique(rows[PARTITION_PATH_COL]).to_pylist():
            write_partition_metadata(self.ctx.gw, part, self.ctx.instant_time)
        out = bulk_write_partition_stream(
            self.ctx, rows.to_batches(), lambda: token, pid, new_file_id
        )
        return [r for t in out for r in t.to_pylist()]

    # ------------------------------------------------------------- in the commit worker
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        stats = [s for m in messages if isinstance(m, _Files) for s in m.stats]
        gw, config = self.ctx.gw, self.txn.config
        replaced: dict[str, list[str]] = {}
        if self.operation.startswith("insert_overwrite"):
            state = TableState.load(gw)
            written = sorted({str(s["partition_path"]) for s in stats})
            scope = None if self.operation == "insert_overwrite_table" else written
            for s in state.view.latest_slices(partitions=scope):
                replaced.setdefault(s.partition, []).append(s.file_id)
        schema = arrow_to_avro_schema(
            self.data_schema, f"{config.name}_record", f"hoodie.{config.name}"
        )
        metadata = commit_metadata(
            config,
            json.dumps(schema, separators=(",", ":")),
            [write_stat_from_row(s) for s in stats],
            OPERATIONS[self.operation],
            replaced,
        )
        completed = self.txn.finish(metadata)
        self.result = WriteResult.from_stats(
            instant_time=completed.requested_time,
            completion_time=completed.completion_time,
            operation=self.operation,
            stats=stats,
            replaced_file_groups=sum(len(v) for v in replaced.values()),
            duration_s=time.monotonic() - self.started,
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # A task failed (or the commit did, which rolled back already): undo the instant
        # unless it is no longer pending.
        timeline = Timeline.load(self.ctx.gw, self.txn.config)
        current = timeline.get(self.txn.instant_time)
        if current is not None and current.is_pending:
            self.txn.rollback()
