"""A table query as a Spark DataFrame: the Spark side of :mod:`hudilite.read.query`.

``Table.read`` (and a pinned snapshot's ``read``) plan with :func:`hudilite.read.query.
plan_query`, as ``to_arrow`` does, and read the plan with :func:`hudilite.spark.read_job.
read_plan`; the ``where`` predicate is then applied by Spark SQL, so any predicate Spark
takes works. Partitions are pruned before planning: in Arrow when
:class:`~hudilite.read.where.Predicate` parses the predicate (no Spark job), else by
:func:`prune_partitions_spark`, one small Spark job over the partitions' path values.

:func:`merged_row_counter` is the Spark counter of merged rows a partition delete reports
(:mod:`hudilite.services.partitions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hudilite.errors import ConfigError
from hudilite.read.planner import ScanPlan, skip_files
from hudilite.read.query import partition_rows, plan_query, prune_partitions
from hudilite.read.where import Predicate
from hudilite.services.partitions import MergedRowCounter
from hudilite.spark.convert import spark_schema
from hudilite.spark.read_job import read_plan
from hudilite.spark.task_errors import read_error_from
from hudilite.tablestate.state import TableState

#: The column of the partition path in the pruning job's frame.
_PARTITION = "_hl_partition"


def prune_partitions_spark(spark: SparkSession, state: TableState, where: str) -> list[str] | None:
    """The partitions whose path values satisfy the Spark SQL predicate ``where``, or None
    when it names another column (Spark cannot resolve it against the partition fields) or
    the partitions cannot be pruned by value (:func:`~hudilite.read.query.partition_rows`).
    """
    found = partition_rows(state)
    if found is None:
        return None
    fields, rows = found
    types = {f.name: f.type for f in state.data_schema}
    frame = spark.createDataFrame(
        rows, ", ".join([f"`{_PARTITION}` string"] + [f"`{f}` string" for f in fields])
    )
    # The path values are strings; the predicate compares them as the columns' types.
    frame = frame.select(
        _PARTITION,
        *[
            F.col(f"`{f}`")
            .cast(spark_schema(pa.schema([pa.field(f, types[f])]))[0].dataType)
            .alias(f)
            for f in fields
        ],
    )
    try:
        return [r[0] for r in frame.filter(F.expr(where)).select(_PARTITION).collect()]
    except AnalysisException:
        return None


def read_frame(
    spark: SparkSession,
    state: TableState,
    query_type: str,
    as_of: str | None,
    start: str | None,
    end: str | None,
    where: str | None,
    options: Mapping[str, Any] | None,
) -> DataFrame:
    """One read of ``state`` as a DataFrame (Hudi's ``_hoodie_*`` columns first), filtered
    by ``where`` after its partitions are pruned. A data file that vanished or is damaged
    when Spark lists it raises :class:`~hudilite.errors.MissingFileError` /
    :class:`~hudilite.errors.CorruptFileError` naming it."""
    partitions = None
    if where:
        try:  # pruned in Arrow when to_arrow takes the predicate, else by a Spark job
            pred = Predicate.parse(where, state.storage_schema)
        except ConfigError:
            partitions = prune_partitions_spark(spark, state, where)
        else:
            partitions = prune_partitions(state, pred)
    plan = plan_query(state, query_type, as_of, start, end, partitions, options)
    plan = skip_files(state, plan, Predicate.parse_or_none(where, state.storage_schema), options)
    try:
        df = read_plan(spark, state, plan)
    except Exception as exc:  # Spark lists the files now: one may have vanished since
        mapped = read_error_from(exc)
        if mapped is None:
            raise
        raise mapped from exc
    return df.filter(F.expr(where)) if where else df


def merged_row_counter(spark: SparkSession) -> MergedRowCounter:
    """Counts the rows of merge-on-read slices with logs by merging them in executors."""

    def count(state: TableState, plan: ScanPlan) -> int:
        return read_plan(spark, state, plan).count()

    return count


__all__ = ["merged_row_counter", "prune_partitions_spark", "read_frame"]
