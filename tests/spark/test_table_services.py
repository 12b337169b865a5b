"""Table services through the Table API: inline compaction, scheduled plans, automatic cleaning."""

from __future__ import annotations

import pytest

from hudilite.errors import InstantNotFoundError
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import KV

COLS = KV.columns
batch = KV.batch


@pytest.mark.parametrize("version", [6, 8])
def test_inline_compaction_after_num_commits(spark, tmp_path, version):
    t = KV.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        table_version=version,
        options={"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"},
    )
    t.write(batch(("a", 1, 0), ("b", 1, 0)))
    r2 = t.write(batch(("a", 2, 1)))
    assert r2.extra["compactions"] == []  # 2 delta commits: not yet
    r3 = t.write(batch(("b", 2, 1)))
    (done,) = r3.extra["compactions"]
    assert done.num_file_groups == 1
    actions = [i.action for i in t.timeline()]
    assert actions == ["deltacommit"] * 3 + ["commit"]  # the compaction completes as a commit
    expected = [("a", 2, 1), ("b", 2, 1)]
    assert spark_rows(t.read(), COLS) == expected
    assert rows(hudi_rs_read(t.path, read_optimized=True), COLS) == expected


def test_scheduled_compaction_runs_later_in_lifo_or_fifo_order(spark, tmp_path):
    t = KV.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        table_version=8,
        options={
            "hoodie.compact.schedule.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "1",
        },
    )
    t.write(batch(("a", 1, 0)))
    r = t.write(batch(("a", 2, 1)))
    plan = r.extra["scheduled_compaction"]
    assert plan is not None
    pending = [i for i in t.timeline() if i.action == "compaction"]
    assert [i.state.name for i in pending] == ["REQUESTED"]
    assert spark_rows(t.read(), COLS) == [("a", 2, 1)]  # correct while the plan is pending
    results = t.compact(schedule=False, options={"hoodie.compaction.order": "LIFO"})
    assert [res.instant_time for res in results] == [pending[0].requested_time]
    assert spark_rows(t.read(), COLS) == [("a", 2, 1)]
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 2, 1)]


@pytest.mark.services
def test_automatic_cleaning_and_time_travel_to_a_cleaned_instant(spark, tmp_path):
    t = KV.create(spark, str(tmp_path / "t"), options={"hoodie.cleaner.commits.retained": "1"})
    first = t.write(batch(("a", 1, 0)))
    t.write(batch(("a", 2, 1)))
    third = t.write(batch(("a", 3, 2)))
    assert third.extra["clean"] is not None and third.extra["clean"].num_files_deleted >= 1
    assert [i.action for i in t.timeline()].count("clean") >= 1
    with pytest.raises(InstantNotFoundError, match="clean"):
        t.read(as_of=first.instant_time)
    assert spark_rows(t.read(as_of=third.instant_time), COLS) == [("a", 3, 2)]
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 3, 2)]


@pytest.mark.services
def test_savepoint_keeps_files_and_restore_returns_to_it(spark, tmp_path):
    t = KV.create(spark, str(tmp_path / "t"), options={"hoodie.cleaner.commits.retained": "1"})
    first = t.write(batch(("a", 1, 0), ("b", 1, 0)))
    sp = t.savepoint()
    assert sp.instant_time == first.instant_time
    assert [s.instant_time for s in t.savepoints()] == [first.instant_time]
    t.write(batch(("a", 2, 1)))
    t.write(batch(("c", 1, 1)))
    t.write(batch(("b", 5, 5)))
    # The savepointed version survived cleaning: time travel to it still works.
    assert spark_rows(t.read(as_of=first.instant_time), COLS) == [("a", 1, 0), ("b", 1, 0)]
    res = t.restore(first.instant_time)
    assert res is not None
    assert spark_rows(t.read(), COLS) == [("a", 1, 0), ("b", 1, 0)]
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 1, 0), ("b", 1, 0)]
    last = t.write(batch(("d", 1, 1)))
    t.rollback(last.instant_time)
    assert spark_rows(t.read(), COLS) == [("a", 1, 0), ("b", 1, 0)]
