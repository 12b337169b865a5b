"""hudilite reads the real merge-on-read Hudi tables in ../shared exactly as hudi-rs does.

For every MOR fixture: the snapshot (Spark and ``to_arrow``), time travel to every
completed delta commit / commit / replace commit, the read-optimized query, and an
incremental read from the first commit, all compared with hudi-rs row by row, every column.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hudilite
from tests.conftest import fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read, rows, spark_rows

MOR = [z for z in fixture_zips() if "/mor/" in str(z)]
WRITES = ("commit", "deltacommit", "replacecommit")


def _completed_writes(table: hudilite.Table) -> list[str]:
    return [
        i.requested_time
        for i in table.timeline()
        if i.state.name == "COMPLETED" and i.action in WRITES
    ]


def _check(ours_df, theirs, *, arrow=None) -> None:
    if theirs.num_columns == 0:
        assert ours_df.count() == 0
        if arrow is not None:
            assert arrow.num_rows == 0
        return
    cols = theirs.column_names
    assert ours_df.columns == cols
    assert spark_rows(ours_df, cols) == rows(theirs, cols)
    if arrow is not None:
        assert arrow.column_names == cols
        assert rows(arrow, cols) == rows(theirs, cols)


@pytest.fixture(scope="module", params=MOR, ids=[fixture_id(z) for z in MOR])
def mor_table(request, tmp_path_factory) -> Path:
    """One unzipped MOR fixture, shared by the tests of this module."""
    return unzip_table(request.param, tmp_path_factory.mktemp("mor"))


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_has_log_files(mor_table):
    # The fixtures are what the other tests are about: each holds at least one log file.
    assert any(p.name.startswith(".") and ".log." in p.name for p in mor_table.rglob("*"))


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_snapshot(spark, mor_table):
    base = str(mor_table)
    t = hudilite.Table.load(spark, base)
    theirs = hudi_rs_read(base)
    _check(t.read(), theirs, arrow=t.to_arrow())


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_time_travel(spark, mor_table):
    base = str(mor_table)
    t = hudilite.Table.load(spark, base)
    instants = _completed_writes(t)
    assert instants
    for instant in instants:
        theirs = hudi_rs_read(base, as_of=instant)
        ours = t.read(as_of=instant)
        try:
            _check(ours, theirs, arrow=t.to_arrow(as_of=instant))
        except AssertionError as exc:
            raise AssertionError(f"as of {instant}: {exc}") from exc


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_read_optimized(spark, mor_table):
    base = str(mor_table)
    t = hudilite.Table.load(spark, base)
    theirs = hudi_rs_read(base, read_optimized="true")
    ours = t.read(query_type="read_optimized")
    _check(ours, theirs, arrow=t.to_arrow(query_type="read_optimized"))


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_incremental(spark, mor_table):
    base = str(mor_table)
    t = hudilite.Table.load(spark, base)
    instants = _completed_writes(t)
    # From each write to the latest, and to the next write only: log records included.
    for k, start in enumerate(instants[:-1]):
        for end in (None, instants[k + 1]):
            opts = {"start": start} if end is None else {"start": start, "end": end}
            theirs = hudi_rs_read(base, **opts)
            ours = t.read(query_type="incremental", start=start, end=end)
            arrow = t.to_arrow(query_type="incremental", start=start, end=end)
            try:
                _check(ours, theirs, arrow=arrow)
            except AssertionError as exc:
                raise AssertionError(f"incremental ({start}, {end}]: {exc}") from exc


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_fixture_incremental_every_window_to_arrow(spark, mor_table):
    # Every (start, end] pair through the Arrow reader (no Spark job: cheap).
    base = str(mor_table)
    t = hudilite.Table.load(spark, base)
    instants = _completed_writes(t)
    for k, start in enumerate(instants):
        for end in instants[k + 1 :]:
            theirs = hudi_rs_read(base, start=start, end=end)
            ours = t.to_arrow(query_type="incremental", start=start, end=end)
            if theirs.num_columns == 0:
                assert ours.num_rows == 0, (start, end)
                continue
            cols = theirs.column_names
            assert rows(ours, cols) == rows(theirs, cols), (start, end)


@pytest.mark.skipif(not MOR, reason="../shared/fixtures is absent")
def test_mor_snapshot_merges_logs(spark, tmp_path):
    """The specific outcomes the log blocks of the quickstart fixtures encode."""
    by_name = {z.stem: z for z in MOR}
    if "v6_trips_8i1u" not in by_name or "v6_trips_8i3d" not in by_name:
        pytest.skip("quickstart MOR fixtures are absent")
    updated = hudilite.Table.load(spark, str(unzip_table(by_name["v6_trips_8i1u"], tmp_path / "u")))
    fares = {r["rider"]: r for r in updated.read().collect()}
    assert len(fares) == 8
    # The avro data block's record, with the meta columns the log record carries.
    assert fares["rider-D"]["fare"] == 25.0
    assert fares["rider-D"]["_hoodie_commit_time"] == "20250331030645735"
    assert fares["rider-D"]["_hoodie_file_name"] == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"

    deleted = hudilite.Table.load(spark, str(unzip_table(by_name["v6_trips_8i3d"], tmp_path / "d")))
    riders = sorted(r["rider"] for r in deleted.read().collect())
    assert riders == ["rider-E", "rider-F", "rider-G", "rider-I", "rider-J"]
    assert deleted.read(query_type="read_optimized").count() == 8


def test_hudilite_written_mor_table_reads_like_hudi_rs(spark, tmp_path):
    """A MOR table hudilite wrote (updates, an out-of-order update, deletes) reads as hudi-rs
    reads it: snapshot, time travel, read-optimized, incremental (both readers)."""
    schema = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("city", pa.string())])

    def batch(*recs: tuple) -> pa.Table:
        names = schema.names
        return pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in recs], schema)

    t = hudilite.Table.create(
        spark,
        str(tmp_path / "trips"),
        schema,
        record_key="uuid",
        ordering_field="ts",
        partition_by=["city"],
        table_type="mor",
    )
    writes = [
        t.write(batch(("a", 1, "sf"), ("b", 1, "sf"), ("c", 1, "la"))),
        t.write(batch(("a", 2, "sf"), ("b", 0, "sf"), ("d", 1, "la"))),  # b: older event
        t.write(batch(("c", 5, "la")), operation="delete"),
        t.write(batch(("a", 3, "sf"), ("c", 6, "la"))),
    ]
    base = t.path
    assert any(".log." in p.name for p in Path(base).rglob("*"))
    _check(t.read(), hudi_rs_read(base), arrow=t.to_arrow())
    for w in writes:
        theirs = hudi_rs_read(base, as_of=w.instant_time)
        _check(t.read(as_of=w.instant_time), theirs, arrow=t.to_arrow(as_of=w.instant_time))
    ro = hudi_rs_read(base, read_optimized="true")
    _check(t.read(query_type="read_optimized"), ro, arrow=t.to_arrow(query_type="read_optimized"))
    for w in writes[:-1]:
        start = w.instant_time
        theirs = hudi_rs_read(base, start=start)
        ours = t.read(query_type="incremental", start=start)
        _check(ours, theirs, arrow=t.to_arrow(query_type="incremental", start=start))
    # From the first write: b's older-event update is returned (the base row it loses to in
    # a snapshot was written before the range, so it is not part of the merge).
    inc = t.to_arrow(query_type="incremental", start=writes[0].instant_time)
    assert ("b", 0) in {(r["uuid"], r["ts"]) for r in inc.to_pylist()}
    assert ("b", 1) in {(r["uuid"], r["ts"]) for r in t.to_arrow().to_pylist()}
