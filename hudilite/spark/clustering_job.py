"""Clustering as a Spark job: one task per clustering group.

The driver plans and commits (``hudilite.services.clustering``); this module supplies the
``runner`` that executes a plan's groups on the cluster, like
``hudilite.spark.services_job`` does for compaction: a small DataFrame with one row per
group (its pickled descriptor), spread one row per partition, and a ``mapInArrow`` that
reads and merges the group's slices, sorts the rows and writes the new base files,
returning the pickled write stats. Only those small stat rows reach the driver. Failures
inside tasks come back as hudilite's own errors; the clustering is then rolled back by the
driver (its plan stays requested).
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
from hudilite.services.clustering import (
    ClusteringContext,
    ClusteringResult,
    Runner,
    cluster,
    cluster_group,
    decode_group,
    encode_group,
    execute_clustering,
)
from hudilite.services.clustering_plan import ClusteringGroup
from hudilite.spark.task_errors import first_line, hudilite_error_from
from hudilite.table_state import TableState
from hudilite.timeline.metadata import WriteStat

_GROUPS_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("group", StringType(), False)]
)
_OUT_SCHEMA = StructType(
    [StructField("idx", IntegerType(), False), StructField("stats", StringType(), False)]
)
_OUT_ARROW = pa.schema([("idx", pa.int32()), ("stats", pa.string())])


def _write_token() -> str:
    ctx = TaskContext.get()
    if ctx is None:  # pragma: no cover - only inside Spark tasks
        return "0-0-0"
    return f"{ctx.partitionId()}-{ctx.stageId()}-{ctx.taskAttemptId()}"


def spark_runner(spark: SparkSession) -> Runner:
    """A clustering runner executing each input group as its own Spark task."""

    def run(ctx: ClusteringContext, groups: Sequence[ClusteringGroup]) -> list[WriteStat]:
        if not groups:
            return []
        rows = [(i, encode_group(g)) for i, g in enumerate(groups)]
        rdd = spark.sparkContext.parallelize(rows, numSlices=len(rows))
        frame = spark.createDataFrame(rdd, _GROUPS_SCHEMA)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            token = _write_token()
            for batch in batches:
                idx = batch.column("idx").to_pylist()
                texts = batch.column("group").to_pylist()
                stats = [
                    base64.b64encode(
                        pickle.dumps(cluster_group(ctx, decode_group(text), token))
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
                raise WriteError(f"clustering task failed: {first_line(exc)}") from exc
            raise mapped from exc
        by_idx = {int(r["idx"]): pickle.loads(base64.b64decode(r["stats"])) for r in out}
        return [stat for i in range(len(groups)) for stat in by_idx[i]]

    return run


def run_clustering(
    spark: SparkSession,
    state: TableState,
    options: OptionsLike = None,
    *,
    schedule: bool = True,
    instant_times: Sequence[str] | None = None,
) -> list[ClusteringResult]:
    """Schedule (if ``schedule``) and run pending clusterings on Spark; see
    :func:`hudilite.services.clustering.cluster`."""
    return cluster(
        state,
        options,
        schedule=schedule,
        instant_times=instant_times,
        runner=spark_runner(spark),
    )


def execute_clustering_spark(
    spark: SparkSession, state: TableState, instant_time: str, options: OptionsLike = None
) -> ClusteringResult:
    """Run one pending clustering on Spark and commit it."""
    return execute_clustering(state, instant_time, options, runner=spark_runner(spark))
