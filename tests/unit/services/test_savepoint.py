"""Savepoints, restore and rollback of completed instants, without Spark."""

from __future__ import annotations

import importlib

import pytest

from hudilite.errors import HudiliteError, InstantNotFoundError, TimelineError
from hudilite.services.clean import clean
from hudilite.services.compaction import execute_compaction, schedule_compaction
from hudilite.services.restore import restore
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import (
    create_savepoint,
    delete_savepoint,
    get_savepoint,
    list_savepoints,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.instant import RESTORE, ROLLBACK
from hudilite.timeline.metadata import read_avro_record
from hudilite.timeline.timeline import Timeline
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable, mor_with_logs

A = ("x", "a-0")
B = ("y", "b-0")
# The module, not the function of the same name that ``hudilite.services`` exports.
restore_mod = importlib.import_module("hudilite.services.restore")


def _timeline_hides_savepointed_commits() -> bool:
    """Whether ``Timeline`` still lets ``T.savepoint`` shadow the commit ``T`` it protects
    (one instant per requested time); savepoints share their commit's time in Hudi."""

    class _Config:
        layout_version = 1
        timeline_dir = ".hoodie"

    t = "20240101000000000"
    timeline = Timeline(
        FileSystemGateway("/nonexistent"), _Config(), [f"{t}.commit", f"{t}.savepoint"]
    )
    return [i.requested_time for i in timeline.commits()] != [t]


def test_a_savepoint_does_not_hide_the_commit_sharing_its_time() -> None:
    assert not _timeline_hides_savepointed_commits()


def later_times(t: MiniTable, after: str) -> list[str]:
    """Requested times on the timeline after ``after`` (any action)."""
    return sorted({i.requested_time for i in t.state().timeline if i.requested_time > after})


# ------------------------------------------------------------------------------ savepoints


@pytest.mark.parametrize("version", [6, 8])
def test_savepoint_pins_the_latest_files_of_its_commit(tmp_path, version):
    t, times = mor_with_logs(tmp_path / "t", version)
    sp = create_savepoint(t.state(), user="ops", comments="before the migration")
    assert sp.instant_time == times[-1]
    slices = {s.group_key: s for s in t.state().view.latest_slices()}
    assert sp.files == frozenset(p for s in slices.values() for p in s.paths)
    assert sp.num_files == 5  # a: base + 3 logs; b: base
    names = t.timeline_names()
    assert f"{sp.instant_time}.savepoint.inflight" in names
    done = [n for n in names if n.startswith(sp.instant_time) and n.endswith(".savepoint")]
    assert len(done) == 1 and ("_" in done[0]) == (version == 8)
    raw = t.gw.read_bytes(f"{t.config.timeline_dir}/{done[0]}")
    record = read_avro_record(raw)
    assert record["savepointedBy"] == "ops" and record["comments"] == "before the migration"
    assert set(record["partitionMetadata"]) == {"x", "y"}
    assert record["partitionMetadata"]["y"]["partitionPath"] == "y"
    assert list_savepoints(t.state()) == [sp] and get_savepoint(t.state(), sp.instant_time) == sp
    with pytest.raises(TimelineError, match="already savepointed"):
        create_savepoint(t.state())
    assert rows(hudi_rs_read(t.path), DATA) == t.read()
    assert delete_savepoint(t.state(), sp.instant_time)
    assert list_savepoints(t.state()) == [] and not delete_savepoint(t.state(), sp.instant_time)
    assert not [n for n in t.timeline_names() if "savepoint" in n]


def test_savepoint_of_an_older_commit_and_refusals(tmp_path):
    t = MiniTable(tmp_path / "t", mor=False)
    times = [t.write({A: [("k1", i, f"v{i}")]}) for i in range(4)]
    sp = create_savepoint(t.state(), times[1])
    assert sp.files == frozenset(f for f in t.files("a-0_") if f.endswith(f"_{times[1]}.parquet"))
    with pytest.raises(InstantNotFoundError):
        create_savepoint(t.state(), "20000101000000000")
    opts = {"hoodie.cleaner.commits.retained": "1"}
    assert clean(t.state(), opts) is not None
    with pytest.raises(HudiliteError, match="cleaner only retains"):
        create_savepoint(t.state(), times[0])


# --------------------------------------------------------------------------------- restore


@pytest.mark.parametrize(("version", "mor"), [(6, False), (8, False), (6, True), (8, True)])
def test_restore_returns_to_the_savepointed_snapshot(tmp_path, version, mor):
    if mor:
        t, _ = mor_with_logs(tmp_path / "t", version)
    else:
        t = MiniTable(tmp_path / "t", version=version, mor=False)
        t.write({A: [("k1", 1, "v1"), ("k2", 1, "v2")], B: [("k3", 1, "v3")]})
        t.write({A: [("k1", 2, "v1b")]})
    snapshot, files = t.read(), t.files()
    sp = create_savepoint(t.state())
    t.write({A: [("k1", 30, "after")], B: [("k3", 30, "after")]})
    if mor:
        planned = schedule_compaction(t.state(), force=True)
        assert planned is not None
        execute_compaction(t.state(), planned.instant_time)
        t.write({A: [("k7", 1, "seven")]})
        later_sp = create_savepoint(t.state())
        t.write({B: [("k3", 40, "pending plan next")]})
        assert schedule_compaction(t.state(), force=True) is not None  # stays pending
    else:
        later_sp = create_savepoint(t.state())
    t.write({("x", "c-0"): [("k8", 1, "new group")]}, replace={"x": ["a-0"]})
    assert t.read() != snapshot
    undone = later_times(t, sp.instant_time)

    result = restore(t.state(), sp.instant_time)
    assert list(result.rolled_back) == sorted(undone, reverse=True)
    assert result.savepoints_deleted == (later_sp.instant_time,)
    assert t.read() == snapshot == rows(hudi_rs_read(t.path), DATA)
    assert t.files() == files  # every data file written after the savepoint is gone
    timeline = t.state().timeline
    assert later_times(t, sp.instant_time) == [result.instant_time]
    assert not timeline.filter(actions=ROLLBACK)  # folded into the restore, as Hudi does
    (inst,) = timeline.filter(actions=RESTORE)
    assert inst.is_completed
    meta = read_avro_record(timeline.instant_content(inst))
    assert meta["instantsToRollback"] == list(result.rolled_back)
    assert set(meta["hoodieRestoreMetadata"]) == set(result.rolled_back)
    assert [i["commitTime"] for i in meta["restoreInstantInfo"]] == list(result.rolled_back)
    assert [s.instant_time for s in list_savepoints(t.state())] == [sp.instant_time]
    # The table keeps working.
    t.write({A: [("k1", 99, "again")]})
    assert ("k1", 99, "again", "x") in t.read()
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


def test_restore_refuses_when_savepointed_files_are_missing(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 6)
    sp = create_savepoint(t.state())
    t.write({A: [("k1", 30, "after")]})
    names = t.timeline_names()
    t.gw.delete_file(sorted(sp.files)[0])
    with pytest.raises(HudiliteError, match="savepointed file"):
        restore(t.state(), sp.instant_time)
    assert t.timeline_names() == names
    with pytest.raises(InstantNotFoundError):
        restore(t.state(), "20000101000000000")


def test_a_crashed_restore_is_finished_by_the_next_call(tmp_path, monkeypatch):
    t = MiniTable(tmp_path / "t", version=8, mor=True)
    t.write({A: [("k1", 1, "v1")]})
    snapshot = t.read()
    sp = create_savepoint(t.state())
    for i in range(3):
        t.write({A: [("k1", 10 + i, f"u{i}")]})
    real = restore_mod.perform_rollback
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(restore_mod, "perform_rollback", flaky)
    with pytest.raises(OSError):
        restore(t.state(), sp.instant_time)
    monkeypatch.setattr(restore_mod, "perform_rollback", real)
    pending = [i for i in t.state().timeline.filter(actions=RESTORE) if i.is_pending]
    assert len(pending) == 1
    result = restore(t.state(), sp.instant_time)
    assert result.instant_time == pending[0].requested_time
    assert len(result.rolled_back) == 2  # the first was undone before the crash
    assert t.read() == snapshot == rows(hudi_rs_read(t.path), DATA)
    assert not t.state().timeline.filter(actions=ROLLBACK)


# ------------------------------------------------------------------------ rollback_instant


@pytest.mark.parametrize(("version", "mor"), [(6, False), (8, False), (6, True), (8, True)])
def test_rollback_of_the_latest_write(tmp_path, version, mor):
    t = MiniTable(tmp_path / "t", version=version, mor=mor)
    t.write({A: [("k1", 1, "v1")], B: [("k2", 1, "v2")]})
    before, files = t.read(), t.files()
    last = t.write({A: [("k1", 2, "v1b"), ("k3", 1, "v3")]})
    result = rollback_instant(t.state(), last)
    assert result.rolled_back_instant == last and result.num_files_deleted == 1
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)
    assert t.files() == files
    names = t.timeline_names()
    assert not [n for n in names if n.startswith(last)]  # v8: T_C.<action> deleted too
    assert [i.requested_time for i in t.state().timeline.filter(actions=ROLLBACK)] == [
        result.rollback_instant
    ]
    meta = read_avro_record(
        t.state().timeline.instant_content(t.state().timeline.filter(actions=ROLLBACK)[0])
    )
    assert meta["commitsRollback"] == [last] and meta["totalFilesDeleted"] == 1


def test_rollback_rules(tmp_path):
    t = MiniTable(tmp_path / "t", mor=False)
    times = [t.write({A: [("k1", i, f"v{i}")]}) for i in range(3)]
    with pytest.raises(HudiliteError, match="only the latest"):
        rollback_instant(t.state(), times[1])
    with pytest.raises(InstantNotFoundError):
        rollback_instant(t.state(), "20000101000000000")
    create_savepoint(t.state(), times[2])
    with pytest.raises(HudiliteError, match="savepointed"):
        rollback_instant(t.state(), times[2])
    delete_savepoint(t.state(), times[2])
    opts = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}
    assert clean(t.state(), {**opts, "hoodie.cleaner.fileversions.retained": "1"}) is not None
    with pytest.raises(HudiliteError, match="cleaner already removed"):
        rollback_instant(t.state(), times[2])


@pytest.mark.parametrize("version", [6, 8])
def test_rollback_of_a_completed_compaction_brings_back_the_old_slice(tmp_path, version):
    t, _ = mor_with_logs(tmp_path / "t", version)
    expected, files = t.read(), t.files()
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    execute_compaction(t.state(), planned.instant_time)
    result = rollback_instant(t.state(), planned.instant_time)
    assert result.files_deleted[0].endswith(f"_{planned.instant_time}.parquet")
    assert t.files() == files and not t.state().timeline.get(planned.instant_time)
    assert t.read() == expected == rows(hudi_rs_read(t.path), DATA)


def test_rollback_of_a_pending_compaction_plan(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 8)
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    rollback_instant(t.state(), planned.instant_time)
    assert not [n for n in t.timeline_names() if n.startswith(planned.instant_time)]
    v6, _ = mor_with_logs(tmp_path / "v6", 6)
    plan6 = schedule_compaction(v6.state(), force=True)
    assert plan6 is not None
    v6.write({A: [("k1", 70, "into the new slice")]})
    with pytest.raises(HudiliteError, match="depend on it"):
        rollback_instant(v6.state(), plan6.instant_time)
