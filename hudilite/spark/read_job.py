"""Reads as Spark jobs.

A :class:`ScanPlan` has two kinds of files:

* ``native_paths`` -- base files of slices without logs: Spark's own Parquet reader;
* ``merge_slices`` -- slices with log files: a small DataFrame with one row per slice (a
  text descriptor, see :func:`hudilite.read.file_group_reader.encode_slice`), spread over
  tasks, and ``mapInArrow`` merging each slice with
  :func:`hudilite.read.file_group_reader.read_file_slice` (base + log blocks, the table's
  merge spec) into rows of the table's schema.

Both parts have the table's full schema (meta columns first) and are unioned; the
incremental row filter on ``_hoodie_commit_time`` applies to both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from hudilite.read.file_group_reader import (
    decode_slice,
    encode_slice,
    read_file_slice,
    read_slice_changes,
)
from hudilite.read.planner import ScanPlan
from hudilite.schema import COMMIT_TIME_COL, cast_to_schema
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.table_state import TableState

#: Schema of the slice descriptor DataFrame.
_SLICES_SCHEMA = StructType(
    [StructField("idx", LongType(), False), StructField("slice", StringType(), False)]
)


def read_plan(spark: SparkSession, state: TableState, plan: ScanPlan) -> DataFrame:
    """Turn a scan plan into a DataFrame with the table's full schema (meta columns first)."""
    schema = spark_schema(state.storage_schema)
    parts: list[DataFrame] = []
    if plan.native_paths:
        paths = [state.gw.uri(p) for p in plan.native_paths]
        parts.append(spark.read.schema(schema).parquet(*paths))
    if plan.merge_slices:
        parts.append(_merged(spark, state, plan, schema))
    if not parts:
        return spark.createDataFrame([], schema)
    df = parts[0]
    for other in parts[1:]:
        df = df.unionByName(other)
    return _filter_commits(df, plan)


def _filter_commits(df: DataFrame, plan: ScanPlan) -> DataFrame:
    commit_times = getattr(plan, "commit_times", None)
    if commit_times is not None:
        return df.filter(F.col(COMMIT_TIME_COL).isin(sorted(commit_times)))
    if plan.commit_range is not None:
        start, end = plan.commit_range
        if start is not None:
            df = df.filter(F.col(COMMIT_TIME_COL) > F.lit(start))
        if end is not None:
            df = df.filter(F.col(COMMIT_TIME_COL) <= F.lit(end))
    return df


def _parallelism(spark: SparkSession) -> int:
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # no SparkContext (Spark Connect): the shuffle partition count
        return max(1, int(spark.conf.get("spark.sql.shuffle.partitions") or 1))


def _merged(
    spark: SparkSession, state: TableState, plan: ScanPlan, schema: StructType
) -> DataFrame:
    """The merged rows of ``plan.merge_slices``: one ``read_file_slice`` per slice in tasks."""
    # What the executors need, all picklable and small: the gateway, the merge spec, the
    # storage schema, the batch schema Spark expects, and the plan's visibility rules
    # (the plan without its file lists; ScanPlan.is_instant_visible is the one rule).
    gw = state.gw
    merge_spec = state.merge_spec(state.options())
    storage = state.storage_schema
    target: pa.Schema = arrow_schema(schema)
    visibility = dataclasses.replace(plan, native_paths=[], merge_slices=[])
    # Incremental reads of changelog tables return every change, not the merged state.
    changes = state.changelog and plan.commit_times is not None

    # Largest slices first: round-robin repartitioning then spreads the big ones.
    slices = sorted(plan.merge_slices, key=lambda s: s.total_size, reverse=True)
    rows = [(i, encode_slice(s)) for i, s in enumerate(slices)]
    tasks = min(len(rows), _parallelism(spark))
    descriptors = spark.createDataFrame(rows, _SLICES_SCHEMA).repartition(tasks)

    def merge_slices(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for descriptor in batch.column("slice").to_pylist():
                if changes:
                    assert visibility.commit_times is not None
                    table = read_slice_changes(
                        gw,
                        decode_slice(descriptor),
                        schema=storage,
                        is_instant_visible=visibility.is_instant_visible,
                        commit_times=visibility.commit_times,
                    )
                    yield from cast_to_schema(table, target).to_batches()
                    continue
                table = read_file_slice(
                    gw,
                    decode_slice(descriptor),
                    merge_spec=merge_spec,
                    schema=storage,
                    is_instant_visible=visibility.is_instant_visible,
                    as_of=visibility.as_of,
                    commit_times=visibility.commit_times,
                )
                yield from cast_to_schema(table, target).to_batches()

    return descriptors.mapInArrow(merge_slices, schema)
