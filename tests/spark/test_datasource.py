"""The ``hudilite`` Python data source: ``spark.read.format("hudilite")`` returns exactly
what ``Table.read()`` returns (COW and MOR; snapshot, read-optimized, incremental, time
travel); views of :mod:`hudilite.spark.views` and ``hudilite.register(spark, warehouse=)``
read the current snapshot at every query."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.spark.read_options import exclusive_start
from hudilite.spark.views import create_view
from tests.helpers import spark_rows

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()), ("p", pa.string())]
)


def _batch(keys: range, ts: int) -> pa.Table:
    return pa.Table.from_pylist(
        [{"id": f"k{k:02d}", "ts": ts, "fare": k * 1.5 + ts, "p": f"p{k % 2}"} for k in keys],
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """A COW v6 and a MOR v8 table with three commits each (MOR: updates in log files)."""
    root = tmp_path_factory.mktemp("ds")
    out = {}
    for kind, version in (("cow", 6), ("mor", 8)):
        t = hudilite.Table.create(
            spark,
            str(root / kind),
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            partition_by=["p"],
            table_type=kind,
            table_version=version,
            options={"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"},
        )
        times = [
            t.write(_batch(range(10), 1), "insert").instant_time,
            t.write(_batch(range(5, 14), 2)).instant_time,
            t.write(_batch(range(0, 3), 3)).instant_time,
        ]
        out[kind] = (t, times)
    return out


def _same(expected: Any, got: Any) -> None:
    cols = expected.columns
    assert got.columns == cols
    assert spark_rows(got, cols) == spark_rows(expected, cols)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_batch_reads_equal_table_read(spark: Any, tables: dict, kind: str) -> None:
    t, times = tables[kind]
    reader = spark.read.format("hudilite")
    _same(t.read(), reader.load(t.path))
    _same(
        t.read(query_type="read_optimized"),
        reader.option("hoodie.datasource.query.type", "read_optimized").load(t.path),
    )
    _same(
        t.read(as_of=times[1]),
        spark.read.format("hudilite").option("as.of.instant", times[1]).load(t.path),
    )
    inc = (
        spark.read.format("hudilite")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.read.begin.instanttime", times[0])
    )
    _same(t.read(query_type="incremental", start=times[0]), inc.load(t.path))
    _same(
        t.read(query_type="incremental", start=times[0], end=times[1]),
        inc.option("hoodie.datasource.read.end.instanttime", times[1]).load(t.path),
    )
    # One Spark partition per file slice.
    slices = len(t.state().view.latest_slices())
    assert spark.read.format("hudilite").load(t.path).rdd.getNumPartitions() == slices


def _ids(spark: Any, sql: str) -> list[tuple[str, int]]:
    return [(r.id, r.ts) for r in spark.sql(sql).collect()]


def test_views_read_the_current_snapshot_at_every_query(spark: Any, tmp_path: Path) -> None:
    """``create_view`` views plan again at every query; a ``USING`` view keeps the
    snapshot of its first query (Spark 4.3 plans a provider instance's read once)."""
    t = hudilite.Table.create(
        spark, str(tmp_path / "trips"), SCHEMA, record_key="id", ordering_field="ts"
    )
    t.write(_batch(range(3), 1), "insert")
    assert create_view(spark, "ds_trips", t.path) == "ds_trips"
    # Made again (its anchor table dropped and created): the table's files stay.
    assert create_view(spark, "ds_trips", t.path) == "ds_trips"
    spark.sql(f"CREATE TEMPORARY VIEW ds_using USING hudilite OPTIONS (path '{t.path}')")
    try:
        first = [("k00", 1), ("k01", 1), ("k02", 1)]
        assert _ids(spark, "SELECT id, ts FROM ds_trips ORDER BY id") == first
        assert _ids(spark, "SELECT id, ts FROM ds_using ORDER BY id") == first
        t.write(_batch(range(2, 4), 2))
        second = [("k00", 1), ("k01", 1), ("k02", 2), ("k03", 2)]
        assert _ids(spark, "SELECT id, ts FROM ds_trips ORDER BY id") == second
        assert _ids(spark, "SELECT id, ts FROM ds_using ORDER BY id") == first
        t.write(_batch(range(4, 5), 3), "insert")
        assert spark.sql("SELECT count(*) FROM ds_trips").first()[0] == 5
        # One query, one snapshot: both sides of a self-join read the same instant.
        joined = spark.sql("SELECT count(*) FROM ds_trips a JOIN ds_trips b USING (id)")
        assert joined.first()[0] == 5
    finally:
        spark.catalog.dropTempView("ds_trips")
        spark.catalog.dropTempView("ds_using")


def test_register_warehouse_makes_db_table_views(spark: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    s = hudilite.connect(wh, spark=spark)
    s.sql("CREATE TABLE rw_trips (id STRING, ts BIGINT) USING hudilite WITH ('primaryKey'='id')")
    s.sql("CREATE DATABASE rw_sales")
    s.sql(
        "CREATE TABLE rw_sales.orders (id STRING, ts BIGINT) USING hudilite "
        "WITH ('primaryKey'='id', 'type'='mor')"
    )
    s.sql("INSERT INTO rw_trips VALUES ('a', 1)")
    s.sql("INSERT INTO rw_sales.orders VALUES ('o', 1)")
    try:
        names = hudilite.register(spark, warehouse=wh)
        assert names == ["default.rw_trips", "rw_sales.orders"]
        assert _ids(spark, "SELECT id, ts FROM rw_trips") == [("a", 1)]
        assert _ids(spark, "SELECT id, ts FROM default.rw_trips") == [("a", 1)]
        assert _ids(spark, "SELECT id, ts FROM rw_sales.orders") == [("o", 1)]
        s.sql("INSERT INTO rw_trips VALUES ('b', 2)")
        s.sql("UPDATE rw_sales.orders SET ts = 5 WHERE id = 'o'")
        assert _ids(spark, "SELECT id, ts FROM rw_trips ORDER BY id") == [("a", 1), ("b", 2)]
        assert _ids(spark, "SELECT id, ts FROM rw_sales.orders") == [("o", 5)]
    finally:
        spark.sql("DROP VIEW IF EXISTS spark_catalog.default.rw_trips")
        spark.sql("DROP DATABASE IF EXISTS spark_catalog.rw_sales CASCADE")
    # Dropping the Spark database dropped views only: the hudilite table is whole.
    assert [tuple(r) for r in s.sql("SELECT id, ts FROM rw_sales.orders").collect()] == [("o", 5)]


def test_bad_options_fail_clearly(spark: Any, tables: dict) -> None:
    t, _ = tables["cow"]
    with pytest.raises(Exception, match=r"begin\.instanttime"):
        spark.read.format("hudilite").option("hoodie.datasource.query.type", "incremental").load(
            t.path
        ).collect()


def test_a_filtered_query_hides_no_rows_from_the_next(spark: Any, tables: dict) -> None:
    """Spark 4.3 reuses a relation's planned partitions across queries: a filtered query
    must not leave a pruned plan behind (no partition pruning by pushed filters)."""
    t, _ = tables["mor"]
    df = spark.read.format("hudilite").load(t.path)
    _same(t.read(where="p = 'p1' AND ts > 1"), df.filter("p = 'p1' AND ts > 1"))
    _same(t.read(), df)
    assert df.rdd.getNumPartitions() == len(t.state().view.latest_slices())


def test_flink_read_names_map_to_spark_reads(spark: Any, tables: dict, tmp_path: Path) -> None:
    """``read.start-commit`` is inclusive, ``read.end-commit`` inclusive, ``read.commits.limit``
    caps a micro-batch; a Flink read option hudilite does not implement is refused by name."""
    t, times = tables["cow"]

    def commit_times(df: Any) -> list[str]:
        return sorted({r[0] for r in df.select("_hoodie_commit_time").collect()})

    flink = spark.read.format("hudilite").option("read.start-commit", times[1])
    assert commit_times(flink.load(t.path)) == [times[1], times[2]]
    _same(t.read(query_type="incremental", start=exclusive_start(times[1])), flink.load(t.path))
    ranged = flink.option("read.end-commit", times[1]).load(t.path)
    assert commit_times(ranged) == [times[1]]
    with pytest.raises(Exception, match=r"option read\.tasks='2' is not supported"):
        spark.read.format("hudilite").option("read.tasks", "2").load(t.path).collect()

    seen: list[list[str]] = []
    q = (
        spark.readStream.format("hudilite")
        .option("read.streaming.enabled", "true")
        .option("read.start-commit", times[1])
        .option("read.commits.limit", "1")
        .option("read.streaming.check-interval", "5")
        .load(t.path)
        .writeStream.foreachBatch(lambda df, _: seen.append(commit_times(df)))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    assert q.exception() is None
    assert seen == [[times[1]], [times[2]]]
