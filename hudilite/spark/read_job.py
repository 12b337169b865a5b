"""Reads as Spark jobs.

A :class:`ScanPlan` has two kinds of files:

* ``native_paths`` -- base files of slices without logs: Spark's own Parquet reader when
  the JVM can read the table's filesystem (local disk, HDFS:
  ``FileSystemGateway.is_jvm_readable``); elsewhere (S3, GCS: hudilite ships no Hadoop
  connector jars) one descriptor per file, read in the executors' Python workers through
  the (pickled) gateway with pyarrow, see :func:`read_base_files`;
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

from hudilite.keygen import KeyGenSpec
from hudilite.read.file_group_reader import (
    conform,
    decode_slice,
    encode_slice,
    read_file_slice,
    read_slice_changes,
)
from hudilite.read.planner import ScanPlan
from hudilite.schema import COMMIT_TIME_COL, PARTITION_PATH_COL, RECORD_KEY_COL, cast_to_schema
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import read_base_file, read_stored_keys
from hudilite.tablestate.state import TableState
from hudilite.virtual_keys import file_partition

#: Schema of the base file descriptor DataFrame (Python reads).
_PATHS_SCHEMA = StructType(
    [StructField("idx", LongType(), False), StructField("path", StringType(), False)]
)
#: Schema of the slice descriptor DataFrame.
_SLICES_SCHEMA = StructType(
    [StructField("idx", LongType(), False), StructField("slice", StringType(), False)]
)


def read_plan(spark: SparkSession, state: TableState, plan: ScanPlan) -> DataFrame:
    """Turn a scan plan into a DataFrame with the table's full schema (meta columns first)."""
    schema = spark_schema(state.storage_schema)
    parts: list[DataFrame] = []
    if plan.native_paths:
        parts.append(read_base_files(spark, state.gw, plan.native_paths, schema))
    if plan.merge_slices:
        parts.append(_merged(spark, state, plan, schema))
    if not parts:
        return spark.createDataFrame([], schema)
    df = parts[0]
    for other in parts[1:]:
        df = df.unionByName(other)
    return _filter_commits(df, plan)


def read_base_files(
    spark: SparkSession, gw: FileSystemGateway, paths: list[str], schema: StructType
) -> DataFrame:
    """The rows of the base files ``paths`` (table-relative) in ``schema``.

    Spark's Parquet reader reads them when the JVM can (``gw.is_jvm_readable``); otherwise
    each file is read in a task with pyarrow through ``gw`` (which carries its connection
    settings to the executors), columns conformed to ``schema`` as Spark's reader does
    (missing ones null, types cast).
    """
    if gw.is_jvm_readable:
        return spark.read.schema(schema).parquet(*[gw.uri(p) for p in paths])
    target: pa.Schema = arrow_schema(schema)
    # Base files are named <fileId>_<writeToken>_<instant>.parquet: sizes are not known
    # here, so files are spread round-robin over the tasks.
    rows = [(i, p) for i, p in enumerate(sorted(paths))]
    descriptors = spark.createDataFrame(rows, _PATHS_SCHEMA).repartition(
        min(len(rows), _parallelism(spark))
    )

    def read_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                table = read_base_file(gw, path)
                yield from cast_to_schema(conform(table, target, where=path), target).to_batches()

    return descriptors.mapInArrow(read_files, schema)


def base_file_keys(
    spark: SparkSession,
    gw: FileSystemGateway,
    paths: list[str],
    file_id_col: str,
    virtual: KeyGenSpec | None = None,
) -> DataFrame:
    """``(record key, partition path, file id)`` of every row of the base files ``paths``.

    The simple index's view of the stored keys; read by Spark's Parquet reader where the
    JVM can read the files, else in tasks with pyarrow (see :func:`read_base_files`). In a
    table without meta fields (``virtual``, :mod:`hudilite.virtual_keys`) the tasks derive
    missing keys from the record key fields and take each file's partition from its path.
    """
    if gw.is_jvm_readable and virtual is None:
        key_schema = StructType(
            [
                StructField(RECORD_KEY_COL, StringType()),
                StructField(PARTITION_PATH_COL, StringType()),
            ]
        )
        return (
            spark.read.schema(key_schema)
            .parquet(*[gw.uri(p) for p in paths])
            .select(
                RECORD_KEY_COL,
                PARTITION_PATH_COL,
                # The file id comes from the file name, not a column.
                F.substring_index(F.col("_metadata.file_name"), "_", 1).alias(file_id_col),
            )
        )
    out = pa.schema(
        [
            (RECORD_KEY_COL, pa.string()),
            (PARTITION_PATH_COL, pa.string()),
            (file_id_col, pa.string()),
        ]
    )
    rows = [(i, p) for i, p in enumerate(sorted(paths))]
    descriptors = spark.createDataFrame(rows, _PATHS_SCHEMA).repartition(
        min(len(rows), _parallelism(spark))
    )

    def read_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                file_id = path.rsplit("/", 1)[-1].split("_", 1)[0]
                if virtual is not None:
                    keys = read_stored_keys(gw, path, virtual)
                    partitions = pa.repeat(pa.scalar(file_partition(path)), len(keys))
                else:
                    table = read_base_file(gw, path, columns=[RECORD_KEY_COL, PARTITION_PATH_COL])
                    keys = table[RECORD_KEY_COL].combine_chunks().cast(pa.string())
                    partitions = table[PARTITION_PATH_COL].combine_chunks().cast(pa.string())
                yield pa.RecordBatch.from_arrays(
                    [keys, partitions, pa.repeat(file_id, len(keys)).cast(pa.string())],
                    schema=out,
                )

    return descriptors.mapInArrow(read_keys, spark_schema(out))


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
