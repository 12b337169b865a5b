"""Reads as Spark jobs: the planner's live base files go to Spark's native parquet reader."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hudilite.errors import HudiliteError
from hudilite.read.planner import ScanPlan
from hudilite.schema import COMMIT_TIME_COL
from hudilite.spark.convert import spark_schema
from hudilite.table_state import TableState


def read_plan(spark: SparkSession, state: TableState, plan: ScanPlan) -> DataFrame:
    """Turn a scan plan into a DataFrame with the table's full schema (meta columns first)."""
    schema = spark_schema(state.storage_schema)
    if plan.merge_slices:
        raise HudiliteError(
            f"{len(plan.merge_slices)} file slice(s) have log files; merge-on-read snapshot "
            "reads are not supported yet (use read_optimized=True for base files only)"
        )
    if not plan.native_paths:
        return spark.createDataFrame([], schema)
    df = spark.read.schema(schema).parquet(*[state.gw.uri(p) for p in plan.native_paths])
    commit_times = getattr(plan, "commit_times", None)
    if commit_times is not None:
        df = df.filter(F.col(COMMIT_TIME_COL).isin(sorted(commit_times)))
    elif plan.commit_range is not None:
        start, end = plan.commit_range
        if start is not None:
            df = df.filter(F.col(COMMIT_TIME_COL) > F.lit(start))
        if end is not None:
            df = df.filter(F.col(COMMIT_TIME_COL) <= F.lit(end))
    return df
