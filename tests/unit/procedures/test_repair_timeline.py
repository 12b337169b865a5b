"""``run_rollback_inflight_tableservice``, ``cleanup_stale_inflight_commits`` and
``repair_corrupted_clean_files`` (issue 30) on engine-built tables, without Spark: exact
rows, the timeline and files after, what hudi-rs reads, and the one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.errors import ConflictError
from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.services.clustering import schedule_clustering
from hudilite.services.compaction import schedule_compaction
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import CLEAN, COMMIT, REPLACE_COMMIT, ROLLBACK, Instant, State
from hudilite.timeline.metadata import read_avro_record
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.markers import create_marker
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call


def mor(tmp_path: Path, version: int) -> MiniTable:
    t = MiniTable(tmp_path / f"t{version}", version=version)
    t.write({("x", "a-0"): [("k1", 1, "v1")], ("y", "b-0"): [("k2", 1, "v2")]})
    t.write({("x", "a-0"): [("k1", 2, "v3")]})
    return t


def start_attempt(t: MiniTable, requested: Instant, fid: str) -> str:
    """An attempt of ``requested`` that died after writing one file (no heartbeat left)."""
    TimelineWriter(t.gw, t.config).transition_inflight(requested)
    rel = f"x/{fid}_0-9-9_{requested.requested_time}.parquet"
    create_marker(t.gw, requested.requested_time, rel, "CREATE")
    t.gw.write_bytes(rel, b"half a file")
    return rel


def rollback_of(t: MiniTable, target: str) -> dict:
    timeline = t.state().timeline
    done = [i for i in timeline.filter(actions=ROLLBACK) if i.is_completed]
    metas = [read_avro_record(timeline.instant_content(i)) for i in done]
    return next(m for m in metas if m["commitsRollback"] == [target])


@pytest.mark.parametrize("version", [6, 8])
def test_rollback_inflight_compaction_keeps_its_plan(tmp_path: Path, version: int) -> None:
    t = mor(tmp_path, version)
    before = t.read()
    plan = schedule_compaction(t.state(), force=True)
    assert plan is not None
    c = plan.instant_time
    stray = start_attempt(t, Instant(c, "compaction", State.REQUESTED), "a-0")

    got = call("run_rollback_inflight_tableservice", path=t.path, pending_instant=c)

    assert len(got) == 1 and got[0][0] == c and got[0][1].isdigit()
    assert t.state().timeline.get(c) == Instant(c, "compaction", State.REQUESTED)
    assert not t.gw.exists(stray)
    deleted = rollback_of(t, c)["partitionMetadata"]["x"]["successDeleteFiles"]
    assert deleted == [t.gw.uri(stray)]
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


def test_rollback_inflight_clustering_and_delete_its_plan(tmp_path: Path) -> None:
    t = mor(tmp_path, 8)
    before = t.read()
    plan = schedule_clustering(
        t.state(), {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "true"}
    )
    assert plan is not None
    c = plan.instant_time
    stray = start_attempt(t, Instant(c, "clustering", State.REQUESTED), "new-0")
    got = call(
        "run_rollback_inflight_tableservice",
        path=t.path,
        pending_instant=c,
        delete_request_instant_file=True,
    )
    assert [r[0] for r in got] == [c]
    assert t.state().timeline.get(c) is None  # plan deleted with it
    assert not t.gw.exists(stray)
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


def test_rollback_inflight_tableservice_refusals(tmp_path: Path) -> None:
    t = mor(tmp_path, 6)
    last = t.state().timeline.last_commit()
    assert last is not None
    plan = schedule_compaction(t.state(), force=True)
    assert plan is not None
    c = plan.instant_time
    with pytest.raises(ProcedureArgumentError) as bad:
        call("run_rollback_inflight_tableservice", path=t.path, pending_instant="2024-01-01")
    assert str(bad.value) == (
        "run_rollback_inflight_tableservice: pending_instant '2024-01-01' is not an instant "
        "time (17 or 14 digits)"
    )
    for instant, what in [
        (c, "a compaction (REQUESTED)"),
        (last.requested_time, "a deltacommit (COMPLETED)"),
        ("20200101000000000", "nothing"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call("run_rollback_inflight_tableservice", path=t.path, pending_instant=instant)
        assert str(err.value) == (
            f"run_rollback_inflight_tableservice: no inflight compaction or clustering at "
            f"{instant}: {what} is there"
        )
    # a live attempt (its heartbeat beats) is left alone
    stray = start_attempt(t, Instant(c, "compaction", State.REQUESTED), "a-0")
    beat = Heartbeat(t.gw, c, 60000).start()
    try:
        with pytest.raises(ConflictError, match=f"compaction {c} is being executed by another"):
            call("run_rollback_inflight_tableservice", path=t.path, pending_instant=c)
    finally:
        beat.stop()
    assert t.gw.exists(stray)
    # version 6: a log written after the plan carries its time; the plan must stay
    t.write({("x", "a-0"): [("k1", 3, "v4")]})
    # (hudi-rs does not merge a v6 log written against a pending compaction: it reads
    # the slice before; the procedure changes neither reader's rows)
    reads = (t.read(), rows(hudi_rs_read(t.path), DATA))
    with pytest.raises(ProcedureError) as kept:
        call(
            "run_rollback_inflight_tableservice",
            path=t.path,
            pending_instant=c,
            delete_request_instant_file=True,
        )
    assert str(kept.value).startswith(
        f"run_rollback_inflight_tableservice: rolled back {c} but kept its plan: log files "
        "written after it carry it as their base instant (x/.a-0_"
    )
    assert t.state().timeline.get(c) == Instant(c, "compaction", State.REQUESTED)
    assert not t.gw.exists(stray)
    assert (t.read(), rows(hudi_rs_read(t.path), DATA)) == reads


def test_cleanup_stale_inflight_commits(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", mor=False)
    t.write({("x", "a-0"): [("k1", 1, "v1")]})
    before = t.read()
    writer = TimelineWriter(t.gw, t.config)
    old_write = writer.create_requested(COMMIT, "20200101000000000")
    writer.transition_inflight(old_write)
    stray = "x/b-0_0-1-0_20200101000000000.parquet"
    create_marker(t.gw, old_write.requested_time, stray, "CREATE")
    t.gw.write_bytes(stray, b"partial")
    old_replace = writer.create_requested(REPLACE_COMMIT, "20200101000001000")
    writer.transition_inflight(old_replace)
    recent = writer.create_requested(COMMIT)  # requested now: not stale
    names = t.timeline_names()

    assert call("cleanup_stale_inflight_commits", path=t.path, dry_run=True) == [
        ("20200101000001000", "replacecommit", None)
    ]
    assert call(
        "cleanup_stale_inflight_commits",
        path=t.path,
        include_ingestion_commits=True,
        dry_run=True,
    ) == [("20200101000000000", "commit", None), ("20200101000001000", "replacecommit", None)]
    assert t.timeline_names() == names  # a dry run writes nothing

    assert call("cleanup_stale_inflight_commits", path=t.path, include_ingestion_commits=True) == [
        ("20200101000000000", "commit", True),
        ("20200101000001000", "replacecommit", True),
    ]
    timeline = t.state().timeline
    assert timeline.get("20200101000000000") is None
    assert timeline.get("20200101000001000") is None
    assert timeline.get(recent.requested_time) == recent  # younger than 180 minutes
    assert not t.gw.exists(stray)
    assert rollback_of(t, "20200101000000000")["partitionMetadata"]["x"]["successDeleteFiles"] == [
        t.gw.uri(stray)
    ]
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)
    with pytest.raises(ProcedureArgumentError) as bad:
        call("cleanup_stale_inflight_commits", path=t.path, allowed_inflight_interval_minutes=-5)
    assert str(bad.value) == (
        "cleanup_stale_inflight_commits: allowed_inflight_interval_minutes must be 0 or more, "
        "got -5"
    )


def test_repair_corrupted_clean_files(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", mor=False)
    t.write({("x", "a-0"): [("k1", 1, "v1")]})
    t.write({("x", "a-0"): [("k1", 2, "v2")]})
    before = t.read()
    writer = TimelineWriter(t.gw, t.config)
    corrupt = writer.create_requested(CLEAN, content=b"this is not avro")
    writer.transition_inflight(corrupt)
    empty = writer.create_requested(CLEAN)
    names = set(t.timeline_names())

    assert call("repair_corrupted_clean_files", path=t.path) == [(True,)]
    gone = names - set(t.timeline_names())
    assert gone == {
        f"{corrupt.requested_time}.clean.requested",
        f"{corrupt.requested_time}.clean.inflight",
        f"{empty.requested_time}.clean.requested",
    }
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)
    assert call("repair_corrupted_clean_files", path=t.path) == [(True,)]  # nothing left
