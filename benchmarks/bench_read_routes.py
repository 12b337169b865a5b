"""Read routes benchmark: one selective query through each way of reading a hudilite table
from Spark (issue 27.6), to put a measured cost beside the plain-Spark routes in the docs.

The table: ``--rows`` trips-like rows (string key, long ts, 6 other columns) in
``--partitions`` city partitions, copy-on-write, bulk-loaded in one commit into a SQL
warehouse. The query: ``count(*)`` and ``sum(fare)`` of one city's rows with
``fare > 90`` (one partition, two columns, about 1/10 of that partition's rows). Routes:

* ``format``: ``spark.read.format("hudilite").load(path)`` then ``where`` and ``agg``;
* ``register``: ``hudilite.register(spark, warehouse=)`` then plain ``spark.sql``;
* ``Table.read``: ``Table.read(where="city = '...'")`` then ``where`` and ``agg``;
* ``hudilite SQL``: ``hudilite.connect(warehouse).sql(...)``.

The first two go through Spark's Python data source API, which has no column pruning;
hudilite takes no pushed filters there (Spark 4.3 reuses one filtered query's planned
partitions for the next query of the relation), so every column of every partition is read
and Spark filters afterwards. The last two plan the
table's live files on the driver, prune partitions by the filter and let Spark's Parquet
reader read only the columns the query needs.

Each route runs once to warm up, then ``--repeats`` times (a fresh DataFrame each time);
the script prints the median and every time, and checks that all routes return the same
answer.

    python benchmarks/bench_read_routes.py --rows 400000 --partitions 8 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa


def make_rows(rows: int, partitions: int, seed: int = 7) -> pa.Table:
    """Deterministic trips-like rows: keys ``trip-<n>``, cities ``city_00``.."""
    rng = np.random.default_rng(seed)
    cities = np.array([f"city_{i:02d}" for i in range(partitions)])
    return pa.table(
        {
            "uuid": [f"trip-{i}" for i in range(rows)],
            "ts": np.arange(rows, dtype=np.int64),
            "rider": [f"rider-{i % 5000}" for i in range(rows)],
            "driver": [f"driver-{i % 2000}" for i in range(rows)],
            "fare": rng.uniform(0, 100, rows).round(2),
            "distance": rng.uniform(0, 30, rows).round(3),
            "passengers": rng.integers(1, 5, rows).astype(np.int32),
            "notes": [f"note {i % 97} for the trip" for i in range(rows)],
            "city": cities[rng.integers(0, partitions, rows)],
        }
    )


def timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, list[float]]:
    """Run ``fn`` once to warm up, then ``repeats`` times; its answer and the times."""
    answer = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        again = fn()
        times.append(time.perf_counter() - t0)
        assert again == answer, (again, answer)
    return answer, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="work folder (default: a temp folder)")
    args = parser.parse_args()

    from pyspark.sql import functions as F

    import hudilite

    work = args.dir or tempfile.mkdtemp(prefix="hl-read-routes-")
    wh = os.path.join(work, "wh")
    spark = hudilite.spark_session(master="local[2]")
    s = hudilite.connect(wh, spark=spark)
    s.sql(
        "CREATE TABLE trips (uuid STRING, ts BIGINT, rider STRING, driver STRING, fare DOUBLE, "
        "distance DOUBLE, passengers INT, notes STRING, city STRING) USING hudi "
        "PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts')"
    )
    path = next(r[1] for r in s.sql("DESCRIBE EXTENDED trips").collect() if r[0] == "Location")
    t = hudilite.Table.load(spark, path)
    t0 = time.perf_counter()
    t.write(make_rows(args.rows, args.partitions), "bulk_insert")
    print(
        f"bulk load of {args.rows:,} rows in {args.partitions} partitions: "
        f"{time.perf_counter() - t0:.1f} s"
    )
    hudilite.register(spark, warehouse=wh)

    city, cut = "city_03", 90
    where = f"city = '{city}' AND fare > {cut}"
    query = f"SELECT count(*) AS n, round(sum(fare), 2) AS s FROM trips WHERE {where}"

    def agg(df: Any) -> tuple[int, float]:
        r = (
            df.where(F.col("fare") > cut)
            .agg(F.count("*").alias("n"), F.round(F.sum("fare"), 2).alias("s"))
            .collect()[0]
        )
        return int(r[0]), float(r[1])

    routes: dict[str, Callable[[], Any]] = {
        'spark.read.format("hudilite").load(path)': lambda: agg(
            spark.read.format("hudilite").load(path).where(F.col("city") == city)
        ),
        "register(spark, warehouse=) + spark.sql": lambda: tuple(
            spark.sql(query.replace("FROM trips", "FROM default.trips")).collect()[0]
        ),
        "Table.read(where=...)": lambda: agg(t.read(where=f"city = '{city}'")),
        "hudilite SQL (connect().sql)": lambda: tuple(s.sql(query).collect()[0]),
    }
    results = {}
    answers = set()
    for name, fn in routes.items():
        answer, times = timed(fn, args.repeats)
        answers.add((int(answer[0]), float(answer[1])))
        results[name] = times
    assert len(answers) == 1, answers
    load = os.getloadavg()[0]
    print(f"query: {query}  ->  {answers.pop()}   (load average {load:.1f})")
    print()
    print("| route | median (s) | runs (s) |")
    print("|---|---:|---|")
    for name, times in results.items():
        runs = ", ".join(f"{x:.2f}" for x in times)
        print(f"| {name} | {statistics.median(times):.2f} | {runs} |")
    spark.stop()
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
