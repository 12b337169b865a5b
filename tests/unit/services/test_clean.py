"""The cleaner without Spark: Hudi's three policies, replaced groups, savepoints, pending
compactions, the plan/metadata encoding and the read planner's retention check."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hudilite.errors import ConfigError, InstantNotFoundError
from hudilite.read.planner import plan_snapshot
from hudilite.services.clean import (
    CleanPlan,
    clean,
    earliest_commit_to_retain,
    execute_clean,
    plan_clean,
    schedule_clean,
)
from hudilite.services.compaction import execute_compaction, schedule_compaction
from hudilite.services.savepoint import create_savepoint
from hudilite.timeline.instant import CLEAN, COMMIT
from hudilite.timeline.instant_time import parse_instant
from hudilite.timeline.metadata import read_avro_record
from hudilite.timeline.timeline import Timeline
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable, mor_with_logs

A = ("x", "a-0")
B = ("y", "b-0")


def cow_versions(tmp_path, version: int = 6, n: int = 4) -> tuple[MiniTable, list[str]]:
    """A COW table: group a rewritten by ``n`` commits (one slice each), group b once."""
    t = MiniTable(tmp_path / "t", version=version, mor=False)
    times = [t.write({A: [("k1", 0, "v0")], B: [("k2", 0, "b")]})]
    for i in range(1, n):
        times.append(t.write({A: [("k1", i, f"v{i}")]}))
    return t, times


def a_file(t: MiniTable, instant: str) -> str:
    (path,) = [f for f in t.files("a-0_") if f.endswith(f"_{instant}.parquet")]
    return path


@pytest.mark.parametrize("version", [6, 8])
def test_keep_latest_commits_keeps_the_window_and_one_version_before(tmp_path, version):
    t, times = cow_versions(tmp_path, version)
    first = a_file(t, times[0])
    opts = {"hoodie.cleaner.commits.retained": "2"}
    plan = plan_clean(t.state(), opts)
    assert plan is not None and plan.earliest_commit_to_retain == times[2]
    # c3 and c4 are in the window, c2 is the last version before it, b's only slice is latest.
    assert plan.files == {"x": (first,)}
    expected = t.read()
    result = clean(t.state(), opts)
    assert result is not None and result.files_deleted == (first,)
    assert not t.gw.exists(result.files_deleted[0])
    inst = t.state().timeline.get(result.instant_time)
    assert inst is not None and inst.action == CLEAN and inst.is_completed
    meta = read_avro_record(t.state().timeline.instant_content(inst))
    assert meta["earliestCommitToRetain"] == times[2]
    assert meta["lastCompletedCommitTimestamp"] == times[3]
    assert meta["totalFilesDeleted"] == 1 and meta["version"] == 2
    part = meta["partitionMetadata"]["x"]
    assert part["policy"] == "KEEP_LATEST_COMMITS"
    assert part["successDeleteFiles"] == [result.files_deleted[0].rsplit("/", 1)[1]]
    assert part["deletePathPatterns"] == part["successDeleteFiles"]
    # The read planner refuses time travel before what the cleaner retained.
    with pytest.raises(InstantNotFoundError, match="cleaner"):
        plan_snapshot(t.state().view, as_of=times[1])
    assert t.read(as_of=times[2]) == [("k1", 2, "v2", "x"), ("k2", 0, "b", "y")]
    assert t.read() == expected == rows(hudi_rs_read(t.path), DATA)
    assert plan_clean(t.state(), opts) is None  # nothing left to clean


def test_too_few_commits_means_no_clean_instant(tmp_path):
    t, _ = cow_versions(tmp_path)
    assert plan_clean(t.state()) is None  # 4 commits <= 10 retained
    assert clean(t.state()) is None
    assert not t.state().timeline.filter(actions=CLEAN)
    with pytest.raises(ConfigError):
        plan_clean(t.state(), {"hoodie.cleaner.commits.retained": "0"})


def test_keep_latest_file_versions(tmp_path):
    t, times = cow_versions(tmp_path)
    old = sorted(a_file(t, c) for c in times[:3])
    opts = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}
    plan = plan_clean(t.state(), opts)  # default: 3 versions
    assert plan is not None and plan.files == {"x": (a_file(t, times[0]),)}
    assert plan.earliest_instant_to_retain is None
    opts["hoodie.cleaner.fileversions.retained"] = "1"
    result = clean(t.state(), opts)
    assert result is not None
    assert sorted(result.files_deleted) == old
    assert result.earliest_commit_to_retain == ""
    assert (
        rows(hudi_rs_read(t.path), DATA) == t.read() == [("k1", 3, "v3", "x"), ("k2", 0, "b", "y")]
    )


def test_keep_latest_by_hours(tmp_path):
    t, times = cow_versions(tmp_path)
    opts = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"}
    now = parse_instant(times[2]) + timedelta(hours=1)
    plan = plan_clean(t.state(), opts, now=now)
    assert plan is not None and plan.earliest_commit_to_retain == times[2]
    assert plan.files == {"x": (a_file(t, times[0]),)}
    # No commit in the last hour: nothing is known to be safe to delete.
    assert plan_clean(t.state(), opts, now=now + timedelta(hours=100)) is None


def test_earliest_commit_never_passes_a_pending_write(tmp_path):
    t, times = cow_versions(tmp_path, n=4)
    names = [n for n in t.timeline_names() if n != "hoodie.properties"]
    pending = f"{times[1]}5.commit.requested"  # requested after c2, before c3 (18 digits)
    timeline = Timeline(t.gw, t.config, [*names, pending])
    got = earliest_commit_to_retain(timeline, "KEEP_LATEST_COMMITS", 1, 24)
    assert got is not None and got.requested_time == times[1]
    assert earliest_commit_to_retain(t.state().timeline, "KEEP_LATEST_COMMITS", 1, 24) == (
        t.state().timeline.get(times[3])
    )


@pytest.mark.parametrize("policy", ["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"])
def test_replaced_file_groups_are_cleaned_whole(tmp_path, policy):
    t = MiniTable(tmp_path / "t", mor=False)
    c1 = t.write({A: [("k1", 0, "old")], B: [("k2", 0, "b")]})
    c2 = t.write({("x", "c-0"): [("k5", 0, "new")]}, replace={"x": ["a-0"]})
    t.write({B: [("k2", 1, "b1")]})
    opts = {"hoodie.cleaner.policy": policy, "hoodie.cleaner.commits.retained": "1"}
    plan = plan_clean(t.state(), opts)
    assert plan is not None
    assert plan.files["x"] == (a_file(t, c1),)
    if policy == "KEEP_LATEST_COMMITS":
        assert plan.earliest_commit_to_retain > c2
        assert "y" not in plan.files  # b's older version is the one before the window
    expected = t.read()
    assert clean(t.state(), opts) is not None
    assert t.read() == expected == rows(hudi_rs_read(t.path), DATA)


def test_replaced_file_group_stays_while_its_replacecommit_is_retained(tmp_path):
    """A group replaced by a commit inside the retained window keeps its files (a query that
    started before the replacecommit may still read them); other groups clean as usual."""
    t = MiniTable(tmp_path / "t", mor=False)
    c1 = t.write({A: [("k1", 0, "old")], B: [("k2", 0, "b")]})
    t.write({B: [("k2", 1, "b1")]})
    c3 = t.write({B: [("k2", 2, "b2")]})
    c4 = t.write({("x", "c-0"): [("k5", 0, "new")]}, replace={"x": ["a-0"]})
    opts = {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "2"}
    plan = plan_clean(t.state(), opts)
    assert plan is not None
    assert plan.earliest_commit_to_retain == c3 < c4
    assert "x" not in plan.files  # a-0 goes only once c4 is older than the window
    assert plan.files["y"] == tuple(f for f in t.files("b-0_") if f.endswith(f"_{c1}.parquet"))


@pytest.mark.parametrize("version", [6, 8])
def test_pending_compaction_slices_are_kept_then_cleaned_after_it(tmp_path, version):
    t, _ = mor_with_logs(tmp_path / "t", version)
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    t.write({A: [("k1", 50, "late")]})
    opts = {
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.fileversions.retained": "1",
    }
    assert plan_clean(t.state(), opts) is None
    execute_compaction(t.state(), planned.instant_time)
    expected = t.read()
    old_logs = {f for f in t.files(".log.") if planned.instant_time not in f}
    result = clean(t.state(), opts)
    assert result is not None
    op = planned.plan.operations[0]
    gone = {f"x/{op.data_file}", *(f"x/{n}" for n in op.delta_files)}
    assert set(result.files_deleted) == gone
    if version == 8:
        assert old_logs - gone  # the late log attached to the new slice stays
    assert t.read() == expected == rows(hudi_rs_read(t.path), DATA)


def test_savepointed_files_are_never_cleaned(tmp_path):
    t, times = cow_versions(tmp_path)
    sp = create_savepoint(t.state(), times[0])
    assert a_file(t, times[0]) in sp.files
    opts = {
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.fileversions.retained": "1",
    }
    plan = plan_clean(t.state(), opts)
    assert plan is not None and plan.savepointed == (times[0],)
    assert sorted(plan.files["x"]) == sorted(a_file(t, c) for c in times[1:3])
    record = read_avro_record(plan.to_avro_bytes(t.gw))
    assert record["extraMetadata"] == {"savepointed_timestamps": times[0]}


def test_plan_encoding_and_pending_clean_resume(tmp_path):
    t, times = cow_versions(tmp_path)
    opts = {"hoodie.cleaner.commits.retained": "2"}
    scheduled = schedule_clean(t.state(), opts)
    assert scheduled is not None
    inst, plan = scheduled
    raw = t.state().timeline.instant_content(inst)
    record = read_avro_record(raw)
    assert record["version"] == 2 and record["policy"] == "KEEP_LATEST_COMMITS"
    assert record["earliestInstantToRetain"] == {
        "timestamp": times[2],
        "action": COMMIT,
        "state": "COMPLETED",
    }
    (info,) = record["filePathsToBeDeletedPerPartition"]["x"]
    assert info["filePath"] == t.gw.uri(a_file(t, times[0]))
    assert info["isBootstrapBaseFile"] is False
    assert CleanPlan.from_bytes(raw) == plan
    # A crash after deleting some files: the rerun finishes from the plan.
    t.gw.delete_file(a_file(t, times[0]))
    result = clean(t.state(), opts)
    assert result is not None and result.instant_time == inst.requested_time
    assert result.num_files_deleted == 1 and result.files_failed == ()
    with pytest.raises(Exception, match="already completed"):
        execute_clean(t.state(), inst.requested_time)
