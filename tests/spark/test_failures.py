"""Failed and concurrent writes: nothing half-written, rollbacks, conflicts."""

from __future__ import annotations

import pytest

import hudilite
from hudilite.errors import ConflictError, WriteError
from hudilite.spark import write_job
from hudilite.storage.layout import BaseFileName, new_file_id
from hudilite.tablestate.state import TableState
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_V_P

COLS = ID_TS_V_P.columns


batch = ID_TS_V_P.batch


@pytest.fixture(params=[6, 8], ids=["v6", "v8"])
def table(request, spark, tmp_path) -> hudilite.Table:
    t = ID_TS_V_P.create(spark, str(tmp_path / "t"), table_version=request.param)
    t.write(batch(("a", 1, "x", "p1"), ("b", 1, "x", "p2")))
    return t


def data_files(t: hudilite.Table) -> set[str]:
    import os

    out = set()
    for root, dirs, files in os.walk(t.path):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        out |= {
            os.path.relpath(os.path.join(root, f), t.path) for f in files if f.endswith(".parquet")
        }
    return out


@pytest.mark.parametrize("point", ["before_file_write", "after_file_write", "before_commit"])
def test_failed_write_leaves_previous_state(table, point):
    before_rows = spark_rows(table.read(), COLS)
    before_files = data_files(table)
    with pytest.raises(Exception) as info:
        table.write(
            batch(("a", 2, "y", "p1"), ("c", 1, "y", "p1")),
            options={write_job.FAIL_POINT_KEY: point},
        )
    assert "simulated failure" in str(info.value)
    assert spark_rows(table.read(), COLS) == before_rows
    assert rows(hudi_rs_read(table.path), COLS) == before_rows
    assert data_files(table) == before_files  # the failed write's files were deleted
    actions = [(i.action, i.state.name) for i in table.timeline()]
    assert actions == [("commit", "COMPLETED"), ("rollback", "COMPLETED")]
    # The table keeps working afterwards.
    r = table.write(batch(("a", 3, "z", "p1")))
    assert r.num_updates == 1


def test_crashed_writer_is_rolled_back_by_the_next_write(table):
    gw = table.gw
    state = TableState.load(gw)
    before = spark_rows(table.read(), COLS)
    txn = WriteTransaction(gw, state.config, "commit", heartbeat_interval_ms=50, tolerable_misses=1)
    txn.__enter__()
    txn.start_inflight()
    # The dead writer managed to write a data file before it died.
    src = next(p for p in data_files(table) if p.startswith("p=p1/"))
    name = BaseFileName(new_file_id(), "0-1-2", txn.instant_time).render()
    gw.write_bytes(f"p=p1/{name}", gw.read_bytes(src))
    assert txn._heartbeat is not None
    txn._heartbeat.__exit__(None, None, None)  # the process is gone: no more heartbeats
    crashed = txn.instant_time

    assert spark_rows(table.read(), COLS) == before  # never visible
    assert rows(hudi_rs_read(table.path), COLS) == before
    r = table.write(batch(("c", 1, "y", "p1")))
    assert r.rolled_back == (crashed,)
    assert f"p=p1/{name}" not in data_files(table)
    assert crashed not in {i.requested_time for i in table.timeline()}
    assert [i.action for i in table.timeline()] == ["commit", "rollback", "commit"]
    assert spark_rows(table.read(), ["id"]) == [("a",), ("b",), ("c",)]


def test_live_writer_is_not_rolled_back(table):
    state = TableState.load(table.gw)
    with WriteTransaction(table.gw, state.config, "commit") as txn:
        txn.start_inflight()
        r = table.write(batch(("c", 1, "y", "p1")))
        assert r.rolled_back == ()
        assert txn.instant_time in {i.requested_time for i in table.timeline()}


def test_concurrent_writers_same_file_group_conflict(table, monkeypatch):
    original = WriteTransaction.commit
    calls = {"n": 0}

    def interleaved(self, metadata):
        calls["n"] += 1
        if calls["n"] == 1:
            # Another writer commits an update to the same file group first.
            table.write(batch(("a", 5, "other", "p1")))
        return original(self, metadata)

    monkeypatch.setattr(WriteTransaction, "commit", interleaved)
    with pytest.raises(ConflictError, match="conflicts with commit"):
        table.write(batch(("a", 2, "mine", "p1")))
    monkeypatch.setattr(WriteTransaction, "commit", original)
    assert spark_rows(table.read(), ["id", "v"]) == [("a", "other"), ("b", "x")]
    assert rows(hudi_rs_read(table.path), ["id", "v"]) == [("a", "other"), ("b", "x")]
    assert [i.action for i in table.timeline()] == ["commit", "commit", "rollback"]


def test_concurrent_writers_disjoint_file_groups_both_commit(table, monkeypatch):
    original = WriteTransaction.commit
    calls = {"n": 0}

    def interleaved(self, metadata):
        calls["n"] += 1
        if calls["n"] == 1:
            table.write(batch(("b", 5, "other", "p2")))
        return original(self, metadata)

    monkeypatch.setattr(WriteTransaction, "commit", interleaved)
    table.write(batch(("a", 2, "mine", "p1")))
    monkeypatch.setattr(WriteTransaction, "commit", original)
    assert spark_rows(table.read(), ["id", "v"]) == [("a", "mine"), ("b", "other")]
    assert [i.action for i in table.timeline()] == ["commit"] * 3


def test_write_error_is_a_hudilite_error():
    assert issubclass(WriteError, hudilite.HudiliteError)
    assert issubclass(ConflictError, hudilite.HudiliteError)
