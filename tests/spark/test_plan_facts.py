"""What a write learns from its input's plan: the row bound and whether Spark holds the rows.

An upsert caches its keyed batch unless the batch is already held in memory (a cached
DataFrame or local rows, through deterministic expressions); either way the write must
store exactly the batch's rows.
"""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import hudilite
from hudilite.spark.plan_facts import held_in_memory, row_bound

pytestmark = pytest.mark.spark


def test_cached_and_local_batches_are_held_in_memory(spark, tmp_path) -> None:
    path = str(tmp_path / "src.parquet")
    pq.write_table(pa.table({"id": list(range(10)), "v": [f"v{i}" for i in range(10)]}), path)
    from_file = spark.read.parquet(path)
    assert not held_in_memory(from_file)
    assert not held_in_memory(from_file.select("id", F.upper("v").alias("v")))
    cached = spark.read.parquet(path).cache()
    try:
        cached.count()
        assert held_in_memory(cached)
        assert held_in_memory(cached.select("id", F.upper("v").alias("v")).filter("id > 2"))
        # rand() computes other rows each time the plan runs: not safe to recompute.
        assert not held_in_memory(cached.withColumn("r", F.rand()))
        # A join with a file nobody cached is not all in memory; the same file's read is
        # (Spark substitutes the cached data for any plan equal to the cached one).
        other = str(tmp_path / "other.parquet")
        pq.write_table(pa.table({"id": [1, 2], "w": ["x", "y"]}), other)
        assert not held_in_memory(cached.join(spark.read.parquet(other), "id"))
        assert held_in_memory(cached.join(from_file.withColumnRenamed("v", "w"), "id"))
    finally:
        cached.unpersist()
    local = spark.createDataFrame(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    assert held_in_memory(local)
    assert row_bound(local) == 2
    assert row_bound(from_file) == math.inf


def test_upsert_of_a_cached_batch_stores_exactly_its_rows(spark, tmp_path) -> None:
    """A cached batch (not cached again by the write) upserted into a bucket-index MOR
    table and a copy-on-write table: every key once, the later ts winning."""
    base = pa.table(
        {
            "id": [f"k{i}" for i in range(40)],
            "ts": [1] * 40,
            "p": ["a", "b"] * 20,
            "v": [f"old{i}" for i in range(40)],
        }
    )
    path = str(tmp_path / "batch.parquet")
    batch_rows = pa.table(
        {
            "id": [f"k{i}" for i in range(30, 60)],
            "ts": [2] * 30,
            "p": ["a", "b"] * 15,
            "v": [f"new{i}" for i in range(30, 60)],
        }
    )
    pq.write_table(batch_rows, path)
    options = {
        # Past the driver-side write's limit: the Spark write's path.
        "hoodie.hudilite.write.local.max.rows": "5",
    }
    for kind, extra in (
        ("mor", {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}),
        ("cow", {}),
    ):
        table = hudilite.Table.create(
            spark,
            str(tmp_path / kind),
            base.schema,
            record_key="id",
            ordering_field="ts",
            partition_by=["p"],
            table_type=kind,
            options=extra,
        )
        table.write(base, operation="bulk_insert")
        batch = spark.read.parquet(path).cache()
        try:
            batch.count()
            assert held_in_memory(batch)
            result = table.write(batch, operation="upsert", options=options)
        finally:
            batch.unpersist()
        assert not result.extra["driver_side"]
        # The bucket index tags every record with its bucket's file group, so its log
        # appends count as updates (as Hudi counts them); the simple index tells them apart.
        expected_counts = (0, 30) if kind == "mor" else (20, 10)
        assert (result.rows_inserted, result.rows_updated) == expected_counts
        rows = sorted((r["id"], r["v"]) for r in table.to_arrow(columns=["id", "v"]).to_pylist())
        expected = sorted(
            [(f"k{i}", f"old{i}") for i in range(30)]
            + [(f"k{i}", f"new{i}") for i in range(30, 60)]
        )
        assert rows == expected, kind
