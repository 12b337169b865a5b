"""Compaction as a Spark job: one task per compaction operation (file slice).

The driver plans and commits (``hudilite.services.compaction``); this module only supplies
the ``runner`` that executes a plan's operations on the cluster: a small DataFrame with
one row per operation (its pickled descriptor), spread one row per partition, and a
``mapInArrow`` that merges the slice and writes its new base file, returning the pickled
write stat. Failures inside tasks come back as hudilite's own errors; the compaction is
then rolled back by the driver (its plan stays requested).

:func:`task_runner` is that machinery for any
:class:`~hudilite.services.table_service.TableService` (compaction here, clustering in
``hudilite.spark.clustering_job``).
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from hudilite.errors import WriteError
from hudilite.services._common import OptionsLike
from hudilite.services.compaction import (
    COMPACTION_SERVICE,
    CompactionResult,
    Runner,
    compact,
    execute_compaction,
)
from hudilite.services.table_service import ServiceContextLike, TableService
from hudilite.spark.task_errors import first_line, hudilite_error_from
from hudilite.tablestate.state import TableState
from hudilite.timeline.metadata import WriteStat

_UNITS_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("unit", StringType(), False)]
)
_OUT_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("stats", StringType(), False)]
)
_OUT_ARROW = pa.schema([("idx", pa.int32()), ("stats", pa.string())])

ContextT = TypeVar("ContextT", bound=ServiceContextLike)
UnitT = TypeVar("UnitT")


def _write_token() -> str:
    ctx = TaskContext.get()
    if ctx is None:  # pragma: no cover - only inside Spark tasks
        return "0-0-0"
    return f"{ctx.partitionId()}-{ctx.stageId()}-{ctx.taskAttemptId()}"


def task_runner(
    spark: SparkSession, service: TableService[ContextT, UnitT]
) -> Callable[[ContextT, Sequence[UnitT]], list[WriteStat]]:
    """A runner of the table ``service`` executing each plan unit as its own Spark task.

    Each unit's text (``service.encode``) is a DataFrame row; inside the task
    ``service.run_encoded(ctx, text, write_token)`` decodes and runs it, returning its
    write stats (``ctx`` and ``service`` are pickled to the executors). The runner returns
    the stats of every unit in plan order; a failed task raises hudilite's own error, else
    :class:`WriteError` naming the service.
    """
    kind, encode, execute = service.kind, service.encode, service.run_encoded

    def run(ctx: ContextT, units: Sequence[UnitT]) -> list[WriteStat]:
        if not units:
            return []
        rows = [(i, encode(unit)) for i, unit in enumerate(units)]
        rdd = spark.sparkContext.parallelize(rows, numSlices=len(rows))
        frame = spark.createDataFrame(rdd, _UNITS_SCHEMA)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            token = _write_token()
            for batch in batches:
                idx = batch.column("idx").to_pylist()
                texts = batch.column("unit").to_pylist()
                stats = [
                    base64.b64encode(pickle.dumps(execute(ctx, text, token))).decode()
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
                raise WriteError(f"{kind} task failed: {first_line(exc)}") from exc
            raise mapped from exc
        by_idx = {int(r["idx"]): pickle.loads(base64.b64decode(r["stats"])) for r in out}
        return [stat for i in range(len(units)) for stat in by_idx[i]]

    return run


def spark_runner(spark: SparkSession) -> Runner:
    """A compaction runner executing each operation as its own Spark task."""
    return task_runner(spark, COMPACTION_SERVICE)


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
