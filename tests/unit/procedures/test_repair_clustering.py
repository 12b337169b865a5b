"""``repair_clustering_plan`` (issue 30) on engine-built tables, without Spark: exact rows
of a dry run and of the repair (named files, and a plan file that is not Parquet), the
plan rewritten and backed up, the pruned plan executing, what hudi-rs reads, and the
one-line refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.services.clustering import execute_clustering, schedule_clustering
from hudilite.timeline.instant import CLUSTERING, REPLACE_COMMIT, Instant, State
from hudilite.timeline.metadata import read_avro_record
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call

SINGLE = {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "true"}


def planned(tmp_path: Path, version: int) -> tuple[MiniTable, str, dict[str, str]]:
    """Groups a-0 and c-0 in x, b-0 in y, and a clustering plan naming all three."""
    t = MiniTable(tmp_path / f"t{version}", version=version, mor=False)
    t.write(
        {
            ("x", "a-0"): [("k1", 1, "v1")],
            ("x", "c-0"): [("k3", 1, "v3")],
            ("y", "b-0"): [("k2", 1, "v2")],
        }
    )
    plan = schedule_clustering(t.state(), SINGLE)
    assert plan is not None
    return t, plan.instant_time, data_files(t, plan.instant_time)


def request(t: MiniTable, instant: str) -> dict:
    timeline = t.state().timeline
    inst = timeline.get(instant)
    assert inst is not None and inst.state is State.REQUESTED
    return read_avro_record(timeline.instant_content(inst))


def data_files(t: MiniTable, instant: str) -> dict[str, str]:
    """File id -> the plan's dataFilePath."""
    groups = request(t, instant)["clusteringPlan"]["inputGroups"]
    return {sl["fileId"]: sl["dataFilePath"] for g in groups for sl in g["slices"]}


def test_repair_clustering_plan_removes_named_files(tmp_path: Path) -> None:
    t, c, files = planned(tmp_path, 8)
    assert sorted(files) == ["a-0", "b-0", "c-0"]
    before = t.read()
    timeline_dir = Path(t.path) / ".hoodie" / "timeline"
    old_request = next(timeline_dir.glob(f"{c}.clustering.requested")).read_bytes()
    other = files["b-0"].replace("b-0_", "zz-0_")
    named = f" {files['b-0']},{other}, {files['b-0']} "

    assert call("repair_clustering_plan", path=t.path, instant=c, invalid_parquet_files=named) == [
        (c, files["b-0"], "WOULD_REMOVE_FROM_PLAN", False, "USER_REQUESTED"),
        (c, other, "WOULD_REMOVE_FROM_PLAN", False, "USER_REQUESTED"),
    ]
    assert data_files(t, c) == files  # a dry run writes nothing

    got = call(
        "repair_clustering_plan",
        path=t.path,
        instant=c,
        op="DELETE",
        invalid_parquet_files=named,
        dry_run=False,
    )
    assert got == [
        (c, files["b-0"], "REMOVED_FROM_PLAN", False, "USER_REQUESTED"),
        (c, other, "NOT_FOUND_IN_PLAN", False, "USER_REQUESTED"),
    ]
    assert data_files(t, c) == {"a-0": files["a-0"], "c-0": files["c-0"]}
    assert t.state().timeline.get(c) == Instant(c, CLUSTERING, State.REQUESTED)
    backups = list(
        (Path(t.path) / ".hoodie" / ".repair" / "repair_clustering_plan" / c).glob("*/*")
    )
    assert [(b.name, b.read_bytes()) for b in backups] == [
        (f"{c}.clustering.requested", old_request)
    ]
    assert t.gw.exists(files["b-0"].rsplit("/t8/", 1)[1])  # need_delete was not asked

    done = execute_clustering(t.state(), c)  # the pruned plan runs
    assert done.instant_time == c
    timeline = t.state().timeline
    completed = timeline.get(c)
    assert completed is not None and completed.is_completed
    replaced = timeline.commit_metadata(completed).replaced_file_groups()
    assert replaced == {("x", "a-0"), ("x", "c-0")}
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


def test_repair_clustering_plan_validates_parquet_files(tmp_path: Path) -> None:
    t, c, files = planned(tmp_path, 6)
    assert t.state().timeline.get(c) == Instant(c, REPLACE_COMMIT, State.REQUESTED)
    broken = files["c-0"].rsplit("/t6/", 1)[1]
    t.gw.write_bytes(broken, b"not parquet at all")

    assert call("repair_clustering_plan", path=t.path, instant=c) == [
        (c, files["c-0"], "WOULD_REMOVE_FROM_PLAN", False, "NOT_PARQUET_FILE")
    ]
    got = call(
        "repair_clustering_plan",
        path=t.path,
        instant=c,
        op="checkanddelete",
        dry_run=False,
        need_delete=True,
        backup=False,
    )
    assert got == [(c, files["c-0"], "REMOVED_FROM_PLAN", True, "NOT_PARQUET_FILE")]
    assert not t.gw.exists(broken)
    assert data_files(t, c) == {"a-0": files["a-0"], "b-0": files["b-0"]}
    assert not (Path(t.path) / ".hoodie" / ".repair").exists()
    assert call("repair_clustering_plan", path=t.path, instant=c, op="validate_delete") == []


def test_repair_clustering_plan_refusals(tmp_path: Path) -> None:
    t, c, files = planned(tmp_path, 8)
    written = t.state().timeline.last_commit()
    assert written is not None
    every = ",".join(files.values())
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        (
            {"instant": written.requested_time},
            ProcedureError,
            f"repair_clustering_plan: the requested clustering plan for instant "
            f"{written.requested_time} does not exist (modifications of a started or "
            "completed clustering are not supported)",
        ),
        (
            {"instant": c, "op": "bogus"},
            ProcedureArgumentError,
            "repair_clustering_plan: unsupported operation 'bogus'; supported operations: "
            "delete, validate_delete, checkanddelete",
        ),
        (
            {"instant": c, "op": "delete"},
            ProcedureArgumentError,
            "repair_clustering_plan: set the files to remove from the clustering plan with "
            "invalid_parquet_files",
        ),
        (
            {"instant": c, "invalid_parquet_files": every},
            ProcedureError,
            f"repair_clustering_plan: repairing clustering instant {c} would remove all input "
            "groups; set allow_empty_plan => true to allow it",
        ),
        (
            {"instant": c, "validation_parallelism": 0},
            ProcedureArgumentError,
            "repair_clustering_plan: validation_parallelism must be at least 1, got 0",
        ),
    ]
    for named, error, message in cases:
        with pytest.raises(error) as info:
            call("repair_clustering_plan", path=t.path, dry_run=False, **named)
        assert str(info.value) == message
    assert data_files(t, c) == files  # nothing written
    emptied = call(
        "repair_clustering_plan",
        path=t.path,
        instant=c,
        invalid_parquet_files=every,
        allow_empty_plan=True,
        dry_run=False,
    )
    assert [r[2] for r in emptied] == ["REMOVED_FROM_PLAN"] * 3
    assert request(t, c)["clusteringPlan"]["inputGroups"] == []
