"""The ``hudilite`` Python data source: ``spark.read.format("hudilite")`` returns exactly
what ``Table.read()`` returns (COW and MOR; snapshot, read-optimized, incremental, time
travel), and ``CREATE TEMPORARY VIEW ... USING hudilite`` reads the current snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
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


def test_temporary_view_reads_the_snapshot(spark: Any, tmp_path: Path) -> None:
    """Spark plans a Python data source's scan once per relation: a view shows the
    snapshot of its first query until it is created again."""
    t = hudilite.Table.create(
        spark, str(tmp_path / "trips"), SCHEMA, record_key="id", ordering_field="ts"
    )
    t.write(_batch(range(4), 1), "insert")
    create = f"CREATE OR REPLACE TEMPORARY VIEW ds_trips USING hudilite OPTIONS (path '{t.path}')"
    spark.sql(create)
    try:
        assert spark.sql("SELECT count(*) FROM ds_trips").first()[0] == 4
        t.write(_batch(range(2, 7), 2))
        spark.sql(create)
        got = spark.sql("SELECT id, ts FROM ds_trips ORDER BY id").collect()
        assert [(r.id, r.ts) for r in got] == [
            ("k00", 1),
            ("k01", 1),
            ("k02", 2),
            ("k03", 2),
            ("k04", 2),
            ("k05", 2),
            ("k06", 2),
        ]
    finally:
        spark.catalog.dropTempView("ds_trips")


def test_bad_options_fail_clearly(spark: Any, tables: dict) -> None:
    t, _ = tables["cow"]
    with pytest.raises(Exception, match=r"begin\.instanttime"):
        spark.read.format("hudilite").option("hoodie.datasource.query.type", "incremental").load(
            t.path
        ).collect()


def test_partition_filters_skip_other_partitions(spark: Any, tables: dict) -> None:
    t, _ = tables["mor"]
    assert spark.conf.get("spark.sql.python.filterPushdown.enabled") == "true"
    df = spark.read.format("hudilite").load(t.path).filter("p = 'p1' AND ts > 1")
    _same(t.read(where="p = 'p1' AND ts > 1"), df)
    wanted = [s for s in t.state().view.latest_slices() if s.partition == "p=p1"]
    assert 0 < len(wanted) == df.rdd.getNumPartitions()
    both = spark.read.format("hudilite").load(t.path).filter("p IN ('p0', 'p1')")
    assert both.rdd.getNumPartitions() == len(t.state().view.latest_slices())
