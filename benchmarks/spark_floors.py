"""Floors for ``bench_targets.py``: Spark itself doing the work of a hudilite write, natively.

hudilite runs on Spark, so what Spark's own planner, shuffle and Parquet writer take for the
same work bounds what a hudilite write can take (issue 15: a row "within 1.2x of the
measured floor that prevents it, for example Spark's own cost for the same work"). Each
floor writes the same rows with the same layout as hudilite does, through Spark's native
Parquet writer, and the five Hudi meta columns computed by Spark expressions:

* bulk load: the rows with their meta columns, shuffled by partition (and a hash spread
  over the tasks, as hudilite's bulk insert), sorted by partition and key within each task,
  written as Parquet partitioned by the partition path (the partition column stays in the
  files, as Hudi stores it);
* copy-on-write upsert: Spark's own copy-on-write MERGE of a batch into that copy (every
  stored row not superseded by the batch, plus the batch; written as a new copy), the way a
  MERGE on plain Parquet runs on Spark; every file is rewritten, as every file group is in
  the benchmark's upserts (random keys in every partition);
* merge-on-read upsert (simple index): the stored keys read to find the file group of each
  updated key, then the batch written next to them (Parquet instead of Avro logs);
* merge-on-read upsert (bucket index): the batch's buckets computed in the JVM (Java's
  ``String.hashCode`` through ``java.util.Objects.hashCode``), shuffled by (partition,
  bucket) and written.
* merge-on-read snapshot scan: the stored rows (the table's base files, read by Spark's
  vectorized reader) merged with the rows of the uncompacted upserts (given to Spark as
  Parquet, where hudilite decodes Avro log blocks): every stored row whose key an upsert
  changed dropped by a broadcast anti-join, plus each changed key's latest row, the
  cheapest native plan found (docs/dev/benchmark-diary.md: joins on file
  positions, and filters, were slower).

No pyspark at import time (the scripts import hudilite only once arguments are parsed).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

#: The instant the floors stamp into ``_hoodie_commit_time`` (any fixed value will do).
INSTANT = "20261126000000000"
KEY, PARTITION = "uuid", "city"


def with_meta(df: Any, instant: str = INSTANT) -> Any:
    """``df`` with Hudi's five meta columns first, computed by Spark expressions."""
    from pyspark.sql import functions as F

    seqno = F.concat_ws(
        "_",
        F.lit(instant),
        F.spark_partition_id().cast("string"),
        F.monotonically_increasing_id().cast("string"),
    )
    return df.select(
        F.lit(instant).alias("_hoodie_commit_time"),
        seqno.alias("_hoodie_commit_seqno"),
        F.col(KEY).alias("_hoodie_record_key"),
        F.col(PARTITION).alias("_hoodie_partition_path"),
        # The file a row lands in is only known to the writer; a constant of the same length.
        F.lit("00000000-0000-0000-0000-000000000000-0_0-0-0_" + instant + ".parquet").alias(
            "_hoodie_file_name"
        ),
        *df.columns,
    )


def _write(df: Any, out: str) -> None:
    (
        df.write.mode("overwrite")
        .partitionBy("_hoodie_partition_path")
        .option("compression", "snappy")
        .parquet(out)
    )


def bulk_load(spark: Any, load: str, out: str) -> None:
    """The bulk-load floor: ``load``'s rows with meta columns, laid out as hudilite's bulk
    insert lays them out (see the module doc), written to ``out``."""
    from pyspark.sql import functions as F

    parallelism = max(1, spark.sparkContext.defaultParallelism)
    df = with_meta(spark.read.parquet(load))
    # As hudilite's _bulk_write: twice the cores' tasks, at least one per partition.
    partitions = df.select(PARTITION).distinct().count()
    tasks = max(partitions, parallelism * 2)
    spread = max(1, -(-tasks // partitions))
    df = df.withColumn("_spread", F.pmod(F.xxhash64(KEY), F.lit(spread)))
    df = df.repartition(tasks, PARTITION, "_spread").drop("_spread")
    _write(df.sortWithinPartitions(PARTITION, KEY), out)


def cow_upsert(spark: Any, current: str, batch: str, out: str) -> None:
    """The copy-on-write upsert floor: ``current`` merged with ``batch`` (its rows win),
    written to ``out``."""
    stored = spark.read.parquet(current)
    incoming = with_meta(spark.read.parquet(batch))
    kept = stored.join(incoming.select(KEY), KEY, "left_anti")
    _write(kept.unionByName(incoming), out)


def mor_upsert(spark: Any, current: str, batch: str, out: str) -> None:
    """The merge-on-read (simple index) upsert floor: every stored key read and joined with
    ``batch`` to find each updated key's file, the batch written to ``out`` with it."""
    from pyspark.sql import functions as F

    keys = spark.read.parquet(current).select(
        F.col("_hoodie_record_key").alias(KEY), F.col("_metadata.file_name").alias("_file")
    )
    incoming = with_meta(spark.read.parquet(batch))
    located = incoming.join(keys, KEY, "left")
    _write(located.repartition("_hoodie_partition_path", "_file"), out)


def bucket_upsert(spark: Any, batch: str, buckets: int, out: str) -> None:
    """The merge-on-read bucket-index upsert floor: the batch's buckets (Hudi's hash of the
    key, computed in the JVM) and a shuffle by (partition, bucket) before it is written."""
    from pyspark.sql import functions as F

    java_hash = F.expr(f"CAST(java_method('java.util.Objects', 'hashCode', {KEY}) AS BIGINT)")
    bucket = ((F.lit(31) + java_hash).bitwiseAND(F.lit(2147483647))) % F.lit(buckets)
    incoming = with_meta(spark.read.parquet(batch)).withColumn("_bucket", bucket)
    _write(incoming.repartition("_hoodie_partition_path", "_bucket"), out)


def mor_snapshot(spark: Any, base_files: list[str], batches: list[str]) -> Any:
    """The merge-on-read scan floor: the snapshot of ``base_files`` after the upsert
    ``batches`` (Parquet, in commit order), as a DataFrame with the meta columns."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    changed = None
    for i, path in enumerate(batches):
        rows = with_meta(spark.read.parquet(path)).withColumn("_round", F.lit(i))
        changed = rows if changed is None else changed.unionByName(rows)
    assert changed is not None, "no upsert batches"
    # Each changed key's latest row: the highest ordering value, then the latest commit.
    order = Window.partitionBy("_hoodie_record_key").orderBy(F.desc("ts"), F.desc("_round"))
    latest = changed.withColumn("_n", F.row_number().over(order))
    latest = latest.filter("_n = 1").drop("_n", "_round")
    stored = spark.read.parquet(*base_files)
    kept = stored.join(
        F.broadcast(changed.select("_hoodie_record_key").distinct()),
        "_hoodie_record_key",
        "left_anti",
    )
    return kept.unionByName(latest)


def replace(out: str, current: str) -> None:
    """Make ``out`` the current copy (the upsert floors write a new copy each time)."""
    shutil.rmtree(current, ignore_errors=True)
    os.replace(out, current)
