"""Compaction as a Spark job: one task per compaction operation (file slice).

The driver plans and commits (``hudilite.services.compaction``); this module only supplies
the ``runner`` that executes a plan's operations on the cluster: a small DataFrame with
one row per operation (its pickled descriptor), spread one row per partition, and a
``mapInArrow`` that merges the slice and writes its new base file, returning the pickled
write stat. Failures inside tasks come back as hudilite's own errors; the compaction is
then rolled back by the driver (its plan stays requested).
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from hudilite.errors import WriteError
from hudilite.services._common import OptionsLike
from hudilite.services.compaction import (
    CompactionContext,
    CompactionOperation,
    CompactionResult,
    Runner,
    compact,
    compact_operation,
    decode_operation,
    encode_operation,
    execute_compaction,
)
from hudilite.spark.task_errors import first_line, hudilite_error_from
from hudilite.table_state import TableState
from hudilite.timeline.metadata import WriteStat

_OPS_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("op", StringType(), False)]
)
_OUT_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("stat", StringType(), False)]
)
_OUT_ARROW = pa.schema([("idx", pa.int32()), ("stat", pa.string())])


def _write_token() -> str:
    ctx = TaskContext.get()
    if ctx is None:  # pragma: no cover - only inside Spark tasks
        return "0-0-0"
    return f"{ctx.partitionId()}-{ctx.stageId()}-{ctx.taskAttemptId()}"


def spark_runner(spark: SparkSession) -> Runner:
    """A compaction runner executing each operation as its own Spark task."""

    def run(ctx: CompactionContext, ops: Sequence[CompactionOperation]) -> list[WriteStat]:
        if not ops:
            return []
        rows = [(i, encode_operation(op)) for i, op in enumerate(ops)]
        rdd = spark.sparkContext.parallelize(rows, numSlices=len(rows))
        frame = spark.createDataFrame(rdd, _OPS_SCHEMA)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            token = _write_token()
            for batch in batches:
                idx = batch.column("idx").to_pylist()
                texts = batch.column("op").to_pylist()
                stats = [
                    base64.b64encode(
                        pickle.dumps(compact_operation(ctx, decode_operation(text), token))
                    ).decode()
                    for text in texts
                ]
                yield pa.RecordBatch.from_arrays(
                    [pa.array(idx, pa.int32()), pa.array(stats, pa.string())], schema=_OUT_ARROW
                )

        try:
            out = frame.mapInArrow(task, _OUT_SCHEMA).collect()
        except Exception as exc:
            mapped = hudilite_error_from(exc)
            if mapped is None:
                raise WriteError(f"compaction task failed: {first_line(exc)}") from exc
            raise mapped from exc
        by_idx = {int(r["idx"]): pickle.loads(base64.b64decode(r["stat"])) for r in out}
        return [by_idx[i] for i in range(len(ops))]

    return run


def run_compaction(
    spark: SparkSession,
    state: TableState,
    options: OptionsLike = None,
    *,
    schedule: bool = True,
    force: bool = False,
    instant_times: Sequence[str] | None = None,
) -> list[CompactionResult]:
    """Schedule (if triggered, or ``force``) and run pending compactions on Spark; see
    :func:`hudilite.services.compaction.compact`."""
    return compact(
        state,
        options,
        schedule=schedule,
        force=force,
        instant_times=instant_times,
        runner=spark_runner(spark),
    )


def execute_compaction_spark(
    spark: SparkSession, state: TableState, instant_time: str, options: OptionsLike = None
) -> CompactionResult:
    """Run one pending compaction on Spark and commit it."""
    return execute_compaction(state, instant_time, None, options, runner=spark_runner(spark))
