"""``Table.snapshot(as_of=None)``: a pinned view read once (issue 28, Table as a facade).

Commits, an ADD COLUMNS and a property change land after the snapshot: its ``config``,
``schema``, ``timeline``, ``read()`` and ``to_arrow()`` stay what they were (and what hudi-rs
reads as of the snapshot's instant), while ``Table`` itself sees the new state. A snapshot
``as_of`` an earlier instant reads that instant; a snapshot is still the ``read_snapshot`` a
write checks for conflicts.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudilite.errors import ConfigError, ConflictError, InstantNotFoundError, MissingFileError
from hudilite.table.api import Table
from tests.helpers import SparkJobs, hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64()), ("ts", pa.int64()), ("p", pa.string())])
COLS = ["id", "n", "ts", "p"]
FIRST = [("a", 1, 1, "p1"), ("b", 2, 1, "p2")]


def batch(data: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r, strict=True)) for r in data], schema=SCHEMA)


@pytest.fixture(params=[("mor", 6), ("cow", 8)], ids=["mor6", "cow8"])
def table(request: pytest.FixtureRequest, spark: Any, tmp_path: Path) -> Table:
    kind, version = request.param
    t = Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type=kind,
        table_version=version,
        options={"hoodie.parquet.small.file.limit": "0"},
    )
    t.write(batch(FIRST), "insert")
    return t


def test_snapshot_reads_the_same_rows_schema_and_config_after_later_commits(table):
    snap = table.snapshot()
    first = table.timeline()[-1].requested_time
    assert snap.instant == snap.version == first
    assert snap.as_of is None
    # An update of "a" (a log file of its slice on MOR), a new row, a new column, a new name.
    second = table.write(batch([("a", 10, 2, "p1"), ("c", 3, 1, "p1")])).instant_time
    table.add_columns([pa.field("extra", pa.string())])
    table.rename("renamed")

    assert spark_rows(snap.read(), COLS) == FIRST
    assert rows(snap.to_arrow(), COLS) == FIRST
    assert rows(snap.to_arrow(columns=["id"])) == [("a",), ("b",)]
    assert spark_rows(snap.read(where="p = 'p1'"), COLS) == [FIRST[0]]
    assert rows(hudi_rs_read(table.path, as_of=first), COLS) == FIRST
    assert snap.schema.names == COLS
    assert snap.config.name == "t"
    assert [i.requested_time for i in snap.timeline] == [first]

    # The table itself re-reads the disk: new rows, new column, new name, longer timeline.
    now = [("a", 10, 2, "p1"), ("b", 2, 1, "p2"), ("c", 3, 1, "p1")]
    assert rows(table.to_arrow(), COLS) == now
    assert rows(hudi_rs_read(table.path), COLS) == now
    assert table.schema.names == ["id", "n", "ts", "extra", "p"]
    assert table.config.name == "renamed"
    assert [i.requested_time for i in table.timeline()][:2] == [first, second]
    # A snapshot taken now sees it all.
    assert rows(table.snapshot().to_arrow(), COLS) == now
    assert table.snapshot().schema.names == ["id", "n", "ts", "extra", "p"]


def test_snapshot_is_immutable(table):
    snap = table.snapshot()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.schema = pa.schema([])  # type: ignore[misc]


def test_snapshot_as_of_an_earlier_instant(table):
    first = table.timeline()[-1].requested_time
    table.write(batch([("a", 10, 2, "p1")]))
    table.add_columns([pa.field("extra", pa.string())])

    snap = table.snapshot(as_of=first)
    assert (snap.as_of, snap.instant) == (first, first)
    assert [i.requested_time for i in snap.timeline] == [first]
    assert snap.schema.names == COLS
    assert rows(snap.to_arrow(), COLS) == FIRST
    assert spark_rows(snap.read(), COLS) == FIRST
    assert rows(hudi_rs_read(table.path, as_of=first), COLS) == FIRST

    with pytest.raises(InstantNotFoundError) as info:
        table.snapshot(as_of="20000101000000000")
    assert str(info.value) == (
        "cannot read as of 20000101000000000: it is before the first instant on the active "
        f"timeline ({first}); older instants are archived or predate the table"
    )


def test_write_computed_from_a_snapshot_conflicts_with_a_later_commit(table):
    snap = table.snapshot()
    changed = snap.read().where("id = 'a'").selectExpr("id", "n + 1 AS n", "ts", "p")
    other = table.write(batch([("a", 100, 1, "p1")])).instant_time
    with pytest.raises(ConflictError) as info:
        table.write(changed, read_snapshot=snap)
    assert re.search(
        rf"conflicts with commit\(s\) {other} \(it changed the same file groups\), completed "
        rf"after the snapshot it read \({snap.instant}\)",
        str(info.value),
    ), str(info.value)
    assert rows(table.to_arrow(), COLS) == [("a", 100, 1, "p1"), FIRST[1]]


def test_to_arrow_where_filters_and_prunes_partitions_without_spark(table, spark):
    table.write(batch([("c", 3, 1, "p1")]))
    everything = [*FIRST, ("c", 3, 1, "p1")]
    assert rows(hudi_rs_read(table.path), COLS) == everything
    with SparkJobs(spark) as jobs:
        got = table.to_arrow(where="p = 'p1'")
        only_ids = table.to_arrow(columns=["id"], where="n > 1")
        snap_rows = table.snapshot().to_arrow(where="n < 3 AND p IN ('p1', 'p2')")
    assert jobs.jobs == 0
    assert rows(got, COLS) == [FIRST[0], ("c", 3, 1, "p1")]
    assert spark_rows(table.read(where="p = 'p1'"), COLS) == rows(got, COLS)
    assert only_ids.column_names == ["id"]
    assert rows(only_ids) == [("b",), ("c",)]
    assert rows(snap_rows, COLS) == FIRST

    # The p2 partition's files go: a predicate on the partition column never reads them,
    # one naming another column reads every partition and finds them missing.
    p2 = Path(table.path) / "p=p2"
    for f in p2.iterdir():
        if not f.name.startswith(".hoodie_partition_metadata"):
            f.unlink()
    assert rows(table.to_arrow(where="p = 'p1'"), COLS) == [FIRST[0], ("c", 3, 1, "p1")]
    with pytest.raises(MissingFileError):
        table.to_arrow(where="p = 'p1' AND n > 0")


def test_to_arrow_where_refuses_what_it_cannot_evaluate(table):
    with pytest.raises(ConfigError) as info:
        table.to_arrow(where="upper(p) = 'P1'")
    assert str(info.value) == (
        "where \"upper(p) = 'P1'\": unsupported in a read without Spark (to_arrow): UPPER(p)"
    )
    with pytest.raises(ConfigError) as info:
        table.to_arrow(where="q = 1")
    assert str(info.value).startswith("where 'q = 1' names 'q', not a column of the table (")


def test_read_where_prunes_without_a_spark_job(table, spark):
    """read(where=) prunes in Arrow when to_arrow takes the predicate; other SQL still
    prunes with Spark (one job) and filters rows in Spark."""
    with SparkJobs(spark) as jobs:
        df = table.read(where="p = 'p2'")
    assert jobs.jobs == 0
    assert spark_rows(df, COLS) == [FIRST[1]]
    with SparkJobs(spark) as jobs:
        df = table.read(where="upper(p) = 'P2'")
    assert jobs.jobs == 1
    assert spark_rows(df, COLS) == [FIRST[1]]
