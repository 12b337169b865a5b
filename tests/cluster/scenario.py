"""The driver of the standalone-cluster test, run in its own process (one SparkContext each).

``python scenario.py MASTER_URL EXECUTOR_PYTHON WORKDIR [JAVA_OPTIONS]`` connects to the
cluster with ``hudilite.spark_session(master=..., ship_package=True, python=EXECUTOR_PYTHON)``
(``JAVA_OPTIONS``: performance flags of the driver's and executors' JVMs) and runs
writes (COW and MOR upserts, deletes), reads, compaction, clustering and SQL, asserting
the exact rows after each step; it prints ``STEP <name> ok`` per step. The expected rows
come from the ``expected_*`` functions, which the pytest side also uses to check the
tables with hudi-rs afterwards. Executors must not have hudilite installed: the first
step proves they import it from the shipped zip.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

import hudilite

COLS = ["id", "ts", "v", "p"]
SQL_COLS = ["id", "ts", "qty", "city"]


# ------------------------------------------------------------------------ expected rows
def expected_cow() -> list[tuple]:
    """300 inserts, an upsert of 150 keys (100 updates, 50 inserts, one stale), 10 deletes."""
    out = {}
    for i in range(350):
        if 10 <= i < 20:
            continue
        newer = i >= 200
        out[i] = (f"k{i:03d}", 2 if newer else 1, i * 10 if newer else i, f"p{i % 3}")
    return sorted(out.values())


def expected_mor() -> list[tuple]:
    """300 inserts, 100 updates to log files, 10 deletes; compaction changes no row."""
    return sorted(
        (f"k{i:03d}", 2 if i < 100 else 1, -i if i < 100 else i, f"p{i % 3}")
        for i in range(300)
        if not 290 <= i < 300
    )


def expected_sql() -> list[tuple]:
    """INSERT 200, UPDATE the small sf orders, MERGE 30 (10 updates, 20 inserts), DELETE one."""
    out: dict[str, tuple] = {}
    for i in range(200):
        city = "sf" if i % 2 == 0 else "nyc"
        qty = i + 1000 if city == "sf" and i < 50 else i
        out[f"o{i:03d}"] = (f"o{i:03d}", 2 if qty != i else 1, qty, city)
    for i in range(190, 220):
        out[f"o{i:03d}"] = (f"o{i:03d}", 3, -i, "sf" if i % 2 == 0 else "nyc")
    del out["o001"]
    return sorted(out.values())


def table_rows(table: pa.Table, cols: list[str]) -> list[tuple]:
    """Sorted tuples of ``cols``, for exact comparisons."""
    return sorted(tuple(r[c] for c in cols) for r in table.select(cols).to_pylist())


_START = time.monotonic()


def step(name: str) -> None:
    """Report a finished step (the pytest side checks that every step reported)."""
    print(f"STEP {name} ok {time.monotonic() - _START:.1f}s", flush=True)


def check(name: str, got: Any, want: Any) -> None:
    if got != want:
        raise AssertionError(f"{name}: got {got!r}\nwant {want!r}")


# ------------------------------------------------------------------------ steps
def probe_executors(spark: Any, python: str) -> None:
    """Two executors, each in its own JVM, run Python workers on ``python`` and import
    hudilite from the shipped zip (they cannot import it otherwise)."""
    jsc = spark.sparkContext._jsc.sc()
    deadline = time.monotonic() + 60
    while jsc.getExecutorIds().size() < 2:
        if time.monotonic() > deadline:
            raise AssertionError(f"executors: {jsc.getExecutorIds()}")
        time.sleep(0.5)

    def where(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import hudilite as shipped

        for _ in batches:
            row = {"file": shipped.__file__, "python": sys.executable, "daemon": os.getppid()}
            yield pa.RecordBatch.from_pylist([row])

    seen = (
        spark.range(0, 8, numPartitions=8)
        .mapInArrow(where, "file string, python string, daemon long")
        .toArrow()
        .to_pylist()
    )
    from hudilite.spark.shipping import build_package_zip

    # Executors fetch the zip into their own work folder and import from it.
    zipped = os.path.basename(build_package_zip())
    files = {r["file"] for r in seen}
    check("executor hudilite", files, {f"./{zipped}/hudilite/__init__.py"})
    check("executor python", {r["python"] for r in seen}, {python})
    # One Python daemon per executor JVM: both executors ran tasks.
    check("executor daemons", len({r["daemon"] for r in seen}), 2)


def cow_writes_reads_clustering(spark: Any, base: Path) -> None:
    t = hudilite.Table.create(
        spark,
        str(base / "cow"),
        pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("p", pa.string())]),
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type="cow",
        table_version=6,
    )
    # Generated in the executors: no table data passes through the driver.
    key = "format_string('k%03d', id) AS id"
    part = "concat('p', CAST(id % 3 AS STRING)) AS p"
    r = t.write(spark.range(0, 300).selectExpr(key, "1L AS ts", "id AS v", part))
    check("cow insert", (r.num_inserts, r.num_updates), (300, 0))
    upsert = spark.range(200, 350).selectExpr(key, "2L AS ts", "id * 10 AS v", part)
    stale = spark.range(0, 1).selectExpr(key, "0L AS ts", "-1L AS v", part)  # loses: ts 0 < 1
    r = t.write(upsert.unionByName(stale), operation="upsert")
    check("cow upsert", (r.num_inserts, r.num_updates), (50, 100))
    r = t.write(spark.range(10, 20).selectExpr(key, "9L AS ts", "0L AS v", part), "delete")
    check("cow delete", r.num_deletes, 10)
    check("cow read", table_rows(t.read().toArrow(), COLS), expected_cow())
    check("cow to_arrow", table_rows(t.to_arrow(), COLS), expected_cow())
    step("cow")

    results = t.cluster(options={"hoodie.clustering.plan.strategy.sort.columns": "v"})
    check("clustering ran", len(results), 1)
    check("clustering instant", t.timeline()[-1].action, "replacecommit")
    check("clustered read", table_rows(t.read().toArrow(), COLS), expected_cow())
    step("clustering")


def mor_writes_reads_compaction(spark: Any, base: Path) -> None:
    t = hudilite.Table.create(
        spark,
        str(base / "mor"),
        pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("p", pa.string())]),
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type="mor",
        table_version=8,
        options={"hoodie.compact.inline": "false", "hoodie.clean.automatic": "false"},
    )
    key = "format_string('k%03d', id) AS id"
    part = "concat('p', CAST(id % 3 AS STRING)) AS p"
    t.write(spark.range(0, 300).selectExpr(key, "1L AS ts", "id AS v", part))
    r = t.write(spark.range(0, 100).selectExpr(key, "2L AS ts", "-id AS v", part), "upsert")
    check("mor upsert", (r.num_inserts, r.num_updates), (0, 100))
    t.write(spark.range(290, 300).selectExpr(key, "9L AS ts", "0L AS v", part), "delete")
    check("mor read", table_rows(t.read().toArrow(), COLS), expected_mor())
    step("mor")

    results = t.compact()
    check("compaction ran", len(results), 1)
    check("compaction instant", t.timeline()[-1].action, "commit")
    check("compacted read", table_rows(t.read().toArrow(), COLS), expected_mor())
    ro = t.read(query_type="read_optimized").toArrow()
    check("compacted base files", table_rows(ro, COLS), expected_mor())
    step("compaction")


def sql(spark: Any, base: Path) -> None:
    s = hudilite.connect(warehouse=str(base / "warehouse"), spark=spark)
    s.sql(
        "CREATE TABLE orders (id STRING, ts BIGINT, qty INT, city STRING) USING hudi "
        "PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
        "type = 'mor')"
    )
    s.sql(
        "INSERT INTO orders SELECT format_string('o%03d', id), 1, CAST(id AS INT), "
        "IF(id % 2 = 0, 'sf', 'nyc') FROM range(200)"
    )
    s.sql("UPDATE orders SET qty = qty + 1000, ts = 2 WHERE city = 'sf' AND qty < 50")
    merged = s.sql(
        "MERGE INTO orders t USING (SELECT format_string('o%03d', id) AS id, 3L AS ts, "
        "CAST(-id AS INT) AS qty, IF(id % 2 = 0, 'sf', 'nyc') AS city FROM range(190, 220)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    ).toArrow()
    check(
        "merge counts",
        merged.select(["num_inserted_rows", "num_updated_rows"]).to_pylist(),
        [{"num_inserted_rows": 20, "num_updated_rows": 10}],
    )
    s.sql("DELETE FROM orders WHERE id = 'o001'")
    got = s.sql("SELECT id, ts, qty, city FROM orders").toArrow()
    check("sql select", table_rows(got, SQL_COLS), expected_sql())
    total = s.sql("SELECT count(*) AS n, sum(qty) AS q FROM orders").toArrow().to_pylist()
    want = expected_sql()
    check("sql aggregate", total, [{"n": len(want), "q": sum(r[2] for r in want)}])
    step("sql")


def main(master: str, python: str, work: str, java_options: str = "") -> None:
    base = Path(work)
    spark = hudilite.spark_session(
        master=master,
        app_name="hudilite-cluster-test",
        ship_package=True,
        python=python,
        shuffle_partitions=2,  # one per executor core: tiny tables, fewer tasks
        driver_memory="1g",
        conf={
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.cores.max": "2",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            # No adaptive re-planning: with tables this small it only adds a job per shuffle
            # (as in the shared test session, tests/conftest.py).
            "spark.sql.adaptive.enabled": "false",
            # Performance flags of the driver's and executors' JVMs (tests/helpers.py).
            "spark.driver.extraJavaOptions": java_options,
            "spark.executor.extraJavaOptions": java_options,
        },
    )
    try:
        step("session")
        probe_executors(spark, python)
        step("executors")
        cow_writes_reads_clustering(spark, base)
        mor_writes_reads_compaction(spark, base)
        sql(spark, base)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
