"""The driver-side write of small inputs (``hoodie.hudilite.write.local.max.rows``) against the
Spark write: the same sequence of writes into two tables, one each way, must leave the
same rows, report the same metrics and be read alike by hudi-rs.

Covers both table types and the three non-global indexes, updates that win and lose on
the ordering field, duplicates in one batch, deletes (operation and ``_hoodie_is_deleted``),
deletes of absent keys, inserts that keep duplicates, small-file packing, and the choice of
path (plan-bounded inputs, a probed input, an input over the limit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudilite
from hudilite.spark import write_job
from tests.helpers import SparkJobs, hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("ts", pa.int64()),
        ("v", pa.string()),
        ("city", pa.string()),
        ("_hoodie_is_deleted", pa.bool_()),
    ]
)
DATA = ["id", "ts", "v", "city"]
KEYED = ["_hoodie_record_key", "_hoodie_partition_path", *DATA]
LOCAL = "hoodie.hudilite.write.local.max.rows"


def batch(*recs: tuple[str, int, str, str] | tuple[str, int, str, str, bool]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"id": r[0], "ts": r[1], "v": r[2], "city": r[3], "_hoodie_is_deleted": len(r) > 4}
            for r in recs
        ],
        SCHEMA,
    )


# (operation, batch): each write of the scenario, applied to both tables in turn.
STEPS: list[tuple[str, pa.Table]] = [
    (
        "upsert",
        batch(("a", 1, "a1", "x"), ("b", 1, "b1", "x"), ("c", 1, "c1", "y"), ("d", 1, "d1", "y")),
    ),
    # b wins (later ts), c loses (earlier ts), e is new and twice in the batch (ts 3 wins).
    (
        "upsert",
        batch(
            ("b", 2, "b2", "x"),
            ("c", 0, "c0", "y"),
            ("e", 3, "e3", "y"),
            ("e", 2, "e2", "y"),
        ),
    ),
    # a deleted by the operation; zz is not in the table (nothing to do).
    ("delete", batch(("a", 9, "", "x"), ("zz", 9, "", "x"))),
    # d deleted by its flag, f inserted, b updated again.
    ("upsert", batch(("d", 5, "d5", "y", True), ("f", 1, "f1", "x"), ("b", 3, "b3", "x"))),
    # insert keeps a duplicate of an existing key, as Hudi's insert does.
    ("insert", batch(("c", 7, "c7", "y"), ("g", 1, "g1", "y"))),
    # a key comes back after its delete.
    ("upsert", batch(("a", 10, "a10", "x"))),
]


def _table(spark: Any, path: Path, table_type: str, index: str) -> hudilite.Table:
    options = {"hoodie.index.type": index}
    if index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = "2"
    return hudilite.Table.create(
        spark,
        str(path),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["city"],
        table_type=table_type,  # type: ignore[arg-type]
        options=options,
    )


def _metrics(r: Any) -> tuple[int, int, int, int]:
    return (r.num_inserts, r.num_updates, r.num_deletes, r.num_writes)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@pytest.mark.parametrize("index", ["SIMPLE", "BLOOM", "BUCKET"])
def test_driver_side_write_matches_the_spark_write(
    spark: Any, tmp_path: Path, table_type: str, index: str
) -> None:
    local = _table(spark, tmp_path / "local", table_type, index)
    distributed = _table(spark, tmp_path / "spark", table_type, index)
    for operation, data in STEPS:
        a = local.write(data, operation)  # type: ignore[arg-type]
        b = distributed.write(data, operation, options={LOCAL: "0"})  # type: ignore[arg-type]
        assert a.extra["driver_side"] is True
        assert b.extra["driver_side"] is False
        assert _metrics(a) == _metrics(b), operation
        assert spark_rows(local.read(), KEYED) == spark_rows(distributed.read(), KEYED)
    got = spark_rows(local.read(), KEYED)
    expected = [
        ("a", "city=x", 10, "a10"),
        ("b", "city=x", 3, "b3"),
        ("c", "city=y", 1, "c1"),
        ("c", "city=y", 7, "c7"),
        ("e", "city=y", 3, "e3"),
        ("f", "city=x", 1, "f1"),
        ("g", "city=y", 1, "g1"),
    ]
    if (table_type, index) == ("mor", "BUCKET"):
        # The insert's c lands in the log of c's bucket, and a file slice's merge keeps
        # one record per key (the later ts), as Hudi's readers do.
        expected.remove(("c", "city=y", 1, "c1"))
    assert [(r[0], r[1], r[3], r[4]) for r in got] == expected
    # hudi-rs reads what the driver wrote as it reads the Spark write's table.
    assert rows(hudi_rs_read(local.path), KEYED) == got
    assert rows(hudi_rs_read(distributed.path), KEYED) == got


def _parquet(spark: Any, tmp_path: Path, prefix: str, n: int, city: str) -> Any:
    """``n`` new rows read back from a Parquet file (a plan with no row bound)."""
    path = tmp_path / f"{prefix}.parquet"
    pq.write_table(batch(*[(f"{prefix}{i}", i, "p", city) for i in range(n)]), path)
    df = spark.read.parquet(str(path))
    assert df._jdf.queryExecution().optimizedPlan().maxRows().isEmpty()
    return df


def test_inputs_choose_the_path(spark: Any, tmp_path: Path) -> None:
    t = _table(spark, tmp_path / "t", "cow", "SIMPLE")
    # A pyarrow table becomes a local relation: bounded by its plan.
    assert t.write(batch(("a", 1, "a1", "x"))).extra["driver_side"] is True
    # A Parquet read is not bounded by its plan: the write takes one row over the limit
    # from the cached records. 3 rows, under the limit: the driver.
    r = t.write(_parquet(spark, tmp_path, "k", 3, "x"), options={LOCAL: "3"})
    assert (r.extra["driver_side"], r.num_inserts) == (True, 3)
    # One row over the limit: the Spark write, with the records the probe cached.
    r = t.write(_parquet(spark, tmp_path, "m", 4, "y"), options={LOCAL: "3"})
    assert (r.extra["driver_side"], r.num_inserts) == (False, 4)
    # Bulk inserts always run as Spark jobs.
    r = t.write(batch(("z", 1, "z1", "y")), "bulk_insert")
    assert r.extra["driver_side"] is False
    assert spark_rows(t.read(), ["id"]) == [
        ("a",),
        ("k0",),
        ("k1",),
        ("k2",),
        ("m0",),
        ("m1",),
        ("m2",),
        ("m3",),
        ("z",),
    ]


def test_global_index_writes_run_as_spark_jobs(spark: Any, tmp_path: Path) -> None:
    t = _table(spark, tmp_path / "t", "cow", "GLOBAL_SIMPLE")
    t.write(batch(("a", 1, "a1", "x")))
    r = t.write(batch(("a", 2, "a2", "y")))
    assert r.extra["driver_side"] is False
    assert spark_rows(t.read(), ["id", "city"]) == [("a", "y")]


def test_one_row_sql_insert_runs_one_spark_job(spark: Any, session: Any) -> None:
    session.sql(
        "CREATE TABLE t (id INT, name STRING, ts BIGINT) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')"
    )
    session.sql("INSERT INTO t VALUES (1, 'a', 1)")
    with SparkJobs(spark) as counted:
        session.sql("INSERT INTO t VALUES (2, 'b', 1)")
    # The one job computes the keyed row; the rest runs in the driver.
    assert counted.jobs == 1
    with SparkJobs(spark) as counted:
        session.sql("UPDATE t SET name = 'B' WHERE id = 2")
    # The probe's scan of the table finds the row; nothing else runs in Spark.
    assert counted.jobs == 1
    assert [tuple(r) for r in session.sql("SELECT id, name FROM t ORDER BY id").collect()] == [
        (1, "a"),
        (2, "B"),
    ]


def test_failed_driver_side_write_leaves_the_previous_state(spark: Any, tmp_path: Path) -> None:
    t = _table(spark, tmp_path / "t", "cow", "SIMPLE")
    t.write(batch(("a", 1, "a1", "x"), ("b", 1, "b1", "y")))
    before = spark_rows(t.read(), KEYED)
    files = sorted(p.name for p in Path(t.path).rglob("*.parquet"))
    with pytest.raises(Exception, match="simulated failure"):
        t.write(
            batch(("a", 2, "a2", "x"), ("b", 2, "b2", "y")),
            options={write_job.FAIL_POINT_KEY: "after_file_write"},
        )
    assert spark_rows(t.read(), KEYED) == before
    assert rows(hudi_rs_read(t.path), KEYED) == before
    # Both groups' new files are gone (the second group finished before the rollback).
    assert sorted(p.name for p in Path(t.path).rglob("*.parquet")) == files


def test_small_write_into_many_file_groups_runs_its_files_as_spark_tasks(
    spark: Any, tmp_path: Path
) -> None:
    t = _table(spark, tmp_path / "t", "cow", "SIMPLE")
    t.write(batch(("a", 1, "a1", "x"), ("b", 1, "b1", "y")))
    groups = "hoodie.hudilite.write.local.max.file.groups"
    # Two partitions of one file group each: over a limit of one, the index lookup and the
    # file writes run as Spark tasks (the records were still collected: two rows).
    r = t.write(batch(("a", 2, "a2", "x"), ("c", 1, "c1", "y")), options={groups: "1"})
    assert (r.extra["driver_side"], r.num_updates, r.num_inserts) == (False, 1, 1)
    r = t.write(batch(("b", 2, "b2", "y"), ("d", 1, "d1", "x")), options={groups: "2"})
    assert (r.extra["driver_side"], r.num_updates, r.num_inserts) == (True, 1, 1)
    expected = [("a", "a2"), ("b", "b2"), ("c", "c1"), ("d", "d1")]
    assert spark_rows(t.read(), ["id", "v"]) == expected
    assert rows(hudi_rs_read(t.path), ["id", "v"]) == expected


def test_the_file_group_limit_counts_the_groups_a_write_reads_or_rewrites(
    spark: Any, tmp_path: Path
) -> None:
    """An insert rewrites only the small files it packs into, and a bucket-index upsert only
    its records' buckets: either stays in the driver in a partition of many file groups, as
    long as it rewrites no more than the limit; an index lookup reads them all."""
    groups = "hoodie.hudilite.write.local.max.file.groups"
    t = _table(spark, tmp_path / "t", "cow", "SIMPLE")
    for i in range(3):  # three one-row file groups in partition x
        t.write(batch((f"k{i}", 1, f"v{i}", "x")), options={"hoodie.parquet.small.file.limit": "0"})
    r = t.write(batch(("n", 1, "n1", "x")), operation="insert", options={groups: "1"})
    assert (r.extra["driver_side"], r.num_inserts, r.files_written) == (True, 1, 1)
    r = t.write(batch(("k0", 2, "v0b", "x")), options={groups: "2"})  # SIMPLE reads all 3
    assert (r.extra["driver_side"], r.num_updates) == (False, 1)
    expected = [("k0", "v0b"), ("k1", "v1"), ("k2", "v2"), ("n", "n1")]
    assert spark_rows(t.read(), ["id", "v"]) == expected
    assert rows(hudi_rs_read(t.path), ["id", "v"]) == expected

    b = _table(spark, tmp_path / "b", "cow", "BUCKET")  # 2 buckets per partition
    b.write(batch(*((f"k{i}", 1, f"v{i}", "x") for i in range(8))))
    one = b.write(batch(("k0", 2, "w0", "x")), options={groups: "1"})
    assert (one.extra["driver_side"], one.num_updates) == (True, 1)
    every = b.write(batch(*((f"k{i}", 3, f"z{i}", "x") for i in range(8))), options={groups: "1"})
    assert (every.extra["driver_side"], every.num_updates) == (False, 8)
    expected = [(f"k{i}", f"z{i}") for i in range(8)]
    assert spark_rows(b.read(), ["id", "v"]) == expected
    assert rows(hudi_rs_read(b.path), ["id", "v"]) == expected
