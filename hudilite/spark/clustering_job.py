"""Clustering as a Spark job: one task per clustering group.

The driver plans and commits (``hudilite.services.clustering``); this module supplies the
``runner`` that executes a plan's groups on the cluster through the same
``hudilite.spark.services_job.task_runner`` as compaction: a small DataFrame with one row
per group (its pickled descriptor), spread one row per partition, and a ``mapInArrow``
that reads and merges the group's slices, sorts the rows and writes the new base files,
returning the pickled write stats. Only those small stat rows reach the driver. Failures
inside tasks come back as hudilite's own errors; the clustering is then rolled back by the
driver (its plan stays requested).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import SparkSession

from hudilite.services._common import OptionsLike
from hudilite.services.clustering import (
    CLUSTERING_SERVICE,
    ClusteringResult,
    Runner,
    cluster,
    execute_clustering,
)
from hudilite.spark.services_job import task_runner
from hudilite.tablestate.state import TableState


def spark_runner(spark: SparkSession) -> Runner:
    """A clustering runner executing each input group as its own Spark task."""
    return task_runner(spark, CLUSTERING_SERVICE)


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
