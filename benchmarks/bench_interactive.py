"""Interactive statements: one-row INSERT, UPDATE and point SELECT through hudilite's SQL
against Spark SQL's own statements on a plain Parquet table, in one run, one SparkSession.

Both tables hold the same ``--rows`` trips-like rows (``bench_cow.make_rows``: string key,
20 city partitions). hudilite's is a copy-on-write table created and filled through
``hudilite.connect(...).sql`` (``USING hudi``, record key ``uuid``, ordering field ``ts``);
Spark's is a session-catalog table ``USING parquet PARTITIONED BY (city)`` filled by
``INSERT INTO ... SELECT``. Then, warm (after ``--warmup`` untimed statements of each kind),
``--repeats`` times each:

* ``INSERT INTO t VALUES (...)``: one new row (Spark appends a file to the partition);
* ``UPDATE t SET fare = ... WHERE uuid = '...'``: one stored row (hudilite); Spark SQL has no
  UPDATE on Parquet, so its figure is the one-row INSERT's, the write it can do;
* ``SELECT * FROM t WHERE uuid = '...'`` collected: one stored row.

More lines give the writes' floors, for information: the UPDATE against Spark's point
SELECT (an UPDATE must first find its row), the INSERT with
``hoodie.parquet.small.file.limit = 0`` against Spark's INSERT (without Hudi's small-file
handling, which rewrites the partition's small base file, an insert is an append too), and
both against Spark doing the same work itself (``spark_floors``): rewriting the partition's
small base file with the new row, and finding the row then rewriting its base file.

Prints medians (ms) and the hudilite/Spark ratios as a Markdown table (issue 15's
"one-row INSERT / UPDATE / point SELECT" row; target <= 1.5x); ``--out`` writes it too.

    python benchmarks/bench_interactive.py --rows 1000000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import spark_floors
from bench_cow import make_rows

COLUMNS = "uuid, ts, rider, driver, fare, tip, distance_km, passengers, begin_lat, city"
DDL_COLUMNS = (
    "uuid STRING, ts BIGINT, rider STRING, driver STRING, fare DOUBLE, tip DOUBLE, "
    "distance_km DOUBLE, passengers INT, begin_lat DOUBLE, city STRING"
)


def _row(n: int) -> str:
    """The VALUES tuple of a new row with key ``new-<n>``."""
    return f"('new-{n:08d}', {1_900_000_000_000 + n}, 'r', 'd', 1.5, 0.5, 2.0, 1, 10.0, 'city_03')"


def _values(spark, n: int):
    return spark.sql(f"SELECT * FROM VALUES {_row(n)} AS v({COLUMNS})")


def _floor_files(spark, warehouse: str, key: str) -> tuple[str, str]:
    """hudilite's live base files the floors rewrite: the one of city_03 (where the INSERTs
    go) and the one holding ``key`` (the UPDATEs' row)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import hudilite
    from hudilite.read.planner import plan_snapshot

    table = hudilite.Table.load(spark, os.path.join(warehouse, "default.db", "t"))
    files = [os.path.join(table.path, f) for f in plan_snapshot(table.state().view).native_paths]
    insert_file = next(f for f in files if os.path.dirname(f).endswith("city_03"))
    update_file = next(
        f
        for f in files
        if pc.any(pc.equal(pq.read_table(f, columns=["_hoodie_record_key"])[0], key)).as_py()
    )
    # Copies: the timed INSERTs and UPDATEs replace these files, and the clean removes them.
    floor = tempfile.mkdtemp(prefix="floor_files_", dir=warehouse)
    copies = []
    for i, f in enumerate((insert_file, update_file)):
        copies.append(os.path.join(floor, f"{i}.parquet"))
        shutil.copyfile(f, copies[-1])
    return copies[0], copies[1]


def _rewrite(spark, path: str, extra, out: str, update: tuple[str, int] | None = None) -> None:
    """Spark rewriting the base file ``path`` as one new file: plus the rows of ``extra``,
    or with ``fare`` of key ``update[0]`` set to ``update[1]``."""
    from pyspark.sql import functions as F

    df = spark.read.parquet(path)
    if extra is not None:
        df = df.unionByName(extra)
    if update is not None:
        key, fare = update
        df = df.withColumn(
            "fare", F.when(F.col("uuid") == key, F.lit(float(fare))).otherwise(F.col("fare"))
        )
    df.coalesce(1).write.mode("overwrite").parquet(out)


def _median_ms(fn: Callable[[int], object], warmup: int, repeats: int, start: int) -> float:
    for i in range(warmup):
        fn(start + i)
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(start + warmup + i)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def measure(
    spark, warehouse: str, rows: int, repeats: int, warmup: int
) -> dict[str, tuple[float, float]]:
    """Median milliseconds of each statement kind: ``{name: (hudilite, spark)}``; the first
    three are the issue's, the others their floors (information).

    Fills a hudilite table in the ``warehouse`` folder and the session-catalog table
    ``spark_t`` (dropped again) with the same ``rows`` rows, then times the statements."""
    import hudilite

    source = make_rows(0, rows, seed=1)
    src = spark.createDataFrame(source.to_pandas())
    src.createOrReplaceTempView("bench_source")
    spark.sql("DROP TABLE IF EXISTS spark_t")
    spark.sql(f"CREATE TABLE spark_t ({DDL_COLUMNS}) USING parquet PARTITIONED BY (city)")
    try:
        spark.sql(f"INSERT INTO spark_t SELECT {COLUMNS} FROM bench_source")
        session = hudilite.connect(warehouse, spark=spark)
        session.sql(
            f"CREATE TABLE t ({DDL_COLUMNS}) USING hudi PARTITIONED BY (city) "
            "TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts')"
        )
        session.sql("SET hoodie.spark.sql.insert.into.operation = bulk_insert")
        session.sql(f"INSERT INTO t SELECT {COLUMNS} FROM bench_source")
        session.sql("RESET hoodie.spark.sql.insert.into.operation")
        key = source.column("uuid")[rows // 2].as_py()

        def spark_insert(n: int) -> object:
            return spark.sql(f"INSERT INTO spark_t VALUES {_row(n)}")

        def spark_select(n: int) -> object:
            return spark.sql(f"SELECT * FROM spark_t WHERE uuid = '{key}'").collect()

        def ours_insert(n: int) -> object:
            return session.sql(f"INSERT INTO t VALUES {_row(n)}")

        def ours_update(n: int) -> object:
            return session.sql(f"UPDATE t SET fare = {n} WHERE uuid = '{key}'")

        def ours_select(n: int) -> object:
            return session.sql(f"SELECT * FROM t WHERE uuid = '{key}'").collect()

        def ours_append(n: int) -> object:
            # A new one-row file group instead of a rewrite of the partition's small file.
            return session.sql(f"INSERT INTO t VALUES {_row(10_000 + n)}")

        w, r = warmup, repeats
        figures = {
            "one-row INSERT": (_median_ms(ours_insert, w, r, 0), _median_ms(spark_insert, w, r, 0)),
            "one-row UPDATE (Spark: INSERT)": (
                _median_ms(ours_update, w, r, 0),
                _median_ms(spark_insert, w, r, 1000),
            ),
            "point SELECT": (_median_ms(ours_select, w, r, 0), _median_ms(spark_select, w, r, 0)),
        }
        # The same work done by Spark itself (spark_floors): an INSERT rewrites the
        # partition's small base file with the new row; an UPDATE finds its row and
        # rewrites the row's base file. Measured before the small-file-limit-0 INSERTs
        # below add one-row file groups to the partition (the INSERTs after those pack into
        # a one-row file, less work than the floor's).
        insert_file, update_file = _floor_files(spark, warehouse, key)
        out = os.path.join(tempfile.mkdtemp(prefix="floor_", dir=warehouse), "out")

        def spark_rewrite_insert(n: int) -> object:
            return _rewrite(spark, insert_file, spark_floors.with_meta(_values(spark, n)), out)

        def spark_rewrite_update(n: int) -> object:
            found = spark_select(n)
            assert len(found) == 1
            return _rewrite(spark, update_file, None, out, update=(key, n))

        insert_floor = (
            _median_ms(ours_insert, w, r, 3000),
            _median_ms(spark_rewrite_insert, w, r, 3000),
        )
        # The floors of the two writes (information): an UPDATE must first find its row, a
        # point SELECT; an INSERT into a partition with a small base file rewrites that file
        # (Hudi's small-file handling), so without it the write is an append like Spark's.
        figures["one-row UPDATE vs Spark's point SELECT (finding the row)"] = (
            _median_ms(ours_update, w, r, 2000),
            _median_ms(spark_select, w, r, 0),
        )
        session.sql("SET hoodie.parquet.small.file.limit = 0")
        figures["one-row INSERT, small-file limit 0 (a new file, as Spark appends one)"] = (
            _median_ms(ours_append, w, r, 0),
            _median_ms(spark_insert, w, r, 2000),
        )
        session.sql("RESET hoodie.parquet.small.file.limit")
        figures["one-row INSERT vs Spark rewriting the small file with the row (floor)"] = (
            insert_floor
        )
        figures["one-row UPDATE vs Spark finding the row and rewriting its file (floor)"] = (
            _median_ms(ours_update, w, r, 3000),
            _median_ms(spark_rewrite_update, w, r, 3000),
        )
        return figures
    finally:
        spark.sql("DROP TABLE IF EXISTS spark_t")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    # why: pyspark and hudilite load only once the arguments parsed (--help stays quick)
    import hudilite

    spark = hudilite.spark_session()
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(spark, str(Path(tmp) / "wh"), args.rows, args.repeats, args.warmup)
    lines = [
        f"Interactive statements, {args.rows:,}-row tables (20 partitions), warm, "
        f"median of {args.repeats}",
        "",
        "| statement | hudilite SQL (ms) | Spark SQL on Parquet (ms) | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, (ours, theirs) in figures.items():
        lines.append(f"| {name} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f}x |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()
