"""The fixed cost of a write, in Spark jobs: exact counts, so a change that adds a job fails.

A job costs a scheduling round trip whatever its size, and a small write's time is mostly
these round trips (docs/dev/benchmark-diary.md, "Fixed cost per write (Spark jobs)"). The counts
are those of the test session (``local[2]``, adaptive execution off; with it on, every
shuffle stage is a job of its own). ``tests.helpers.SparkJobs`` counts by job group.
If a change needs an extra job, update the number and say which job it is.

Writes of up to ``hoodie.hudilite.write.local.max.rows`` records run in the driver after
one job computes their input; the counts of the Spark write are taken with that option 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudilite
from tests.helpers import SparkJobs

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("city", pa.string())]
)


def batch(start: int, count: int, ts: int) -> pa.Table:
    ids = range(start, start + count)
    return pa.table(
        {
            "id": [f"k{i:04d}" for i in ids],
            "ts": [ts] * count,
            "v": list(ids),
            "city": ["a" if i % 2 else "b" for i in ids],
        },
        schema=SCHEMA,
    )


def table(spark: Any, path: Path, seed: bool = True, **kwargs: Any) -> Any:
    """A two-partition table, with one commit of 100 rows when ``seed``."""
    t = hudilite.Table.create(
        spark,
        str(path),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["city"],
        **kwargs,
    )
    if seed:
        t.write(batch(0, 100, 1), operation="bulk_insert")
    return t


# The Spark write, whatever the input's size.
SPARK = {"hoodie.hudilite.write.local.max.rows": "0"}


def jobs(spark: Any, fn: Any) -> int:
    with SparkJobs(spark) as counted:
        fn()
    return counted.jobs


@pytest.mark.services  # the automatic clean and archive run too, as in production: no job
def test_one_row_cow_upsert_of_a_stored_key(spark: Any, tmp_path: Path) -> None:
    t = table(spark, tmp_path / "t")
    # 1: key stats (per-partition counts, key ranges, non-delete counts)
    # 2: broadcast of the located keys (joined back onto the batch)
    # 3: shuffle by file group, merge and write (stats rows collected)
    # The batch's keys (the simple index joins base-file keys with them) are broadcast
    # without a job: the batch is local rows, which the write keys again rather than
    # caching (plan_facts.held_in_memory), and Spark folds keying into the local rows.
    assert jobs(spark, lambda: t.write(batch(5, 1, 2), options=SPARK)) == 3
    assert t.read().count() == 100
    # From a file, the batch is cached once keyed, and broadcasting its keys is a job.
    source = tmp_path / "batch.parquet"
    pq.write_table(batch(7, 1, 3), source)
    from_file = spark.read.parquet(str(source))  # (reading its footer is a job of its own)
    assert jobs(spark, lambda: t.write(from_file, options=SPARK)) == 4
    assert t.read().count() == 100


def test_one_row_upsert_of_a_new_key_runs_no_index_job(spark: Any, tmp_path: Path) -> None:
    t = table(spark, tmp_path / "t")
    # The key is outside every base file's key range: no file to search, so no lookup
    # and the insert count is the key stats' count.
    # 1: key stats; 2: write
    assert jobs(spark, lambda: t.write(batch(900, 1, 2), options=SPARK)) == 2


def test_insert_and_bulk_insert(spark: Any, tmp_path: Path) -> None:
    t = table(spark, tmp_path / "t")
    # 1: key stats (its non-delete counts are the insert counts); 2: write (inserts are
    # given their file group by an expression, no broadcast)
    assert jobs(spark, lambda: t.write(batch(500, 3, 2), "insert", options=SPARK)) == 2
    empty = table(spark, tmp_path / "empty", seed=False)
    # 1: key stats; 2: sort within partitions and write
    assert jobs(spark, lambda: empty.write(batch(0, 50, 1), "bulk_insert", options=SPARK)) == 2
    assert empty.read().count() == 50


def test_upsert_into_an_empty_table(spark: Any, tmp_path: Path) -> None:
    empty = table(spark, tmp_path / "t", seed=False)
    # 1: key stats; 2: write (no base file, so no index lookup and no insert count)
    assert jobs(spark, lambda: empty.write(batch(0, 20, 1), options=SPARK)) == 2


def test_bucket_index_upsert(spark: Any, tmp_path: Path) -> None:
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    t = table(spark, tmp_path / "t", seed=False, options=opts)
    t.write(batch(0, 100, 1))
    # 1: key stats; 2: write (the file group is computed from the key in the keying
    # task: no base file read, no broadcast)
    assert jobs(spark, lambda: t.write(batch(5, 3, 2), options=SPARK)) == 2
    assert t.read().count() == 100


@pytest.mark.parametrize(
    "case", ["update", "new key", "insert", "into empty table", "bucket index", "delete"]
)
def test_small_writes_in_the_driver_run_one_job(spark: Any, tmp_path: Path, case: str) -> None:
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    t = table(
        spark,
        tmp_path / "t",
        seed=case != "into empty table",
        options=opts if case == "bucket index" else None,
    )
    data = batch(900 if case == "new key" else 5, 3, 2)
    operation = {"insert": "insert", "delete": "delete"}.get(case, "upsert")
    # 1: the keyed input, collected; index, assignment and write run in the driver.
    with SparkJobs(spark) as counted:
        result = t.write(data, operation)
    assert (counted.jobs, result.extra["driver_side"]) == (1, True)
