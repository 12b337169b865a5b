"""Scan planning: the files of snapshot, time-travel and incremental reads.

Real tables: the plan must name exactly the base files hudi-rs (``hudi==0.5.0``) reads,
for the snapshot, as of every completed commit, and for every incremental step. Log
files: equal for snapshots; for time travel ours are a subset, because hudi-rs lists
every log of a slice and drops newer blocks while reading, while the plan already leaves
out logs of delta commits requested after the read instant (version 8 names them).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hudilite.config import TableConfig, parse_properties
from hudilite.errors import ConfigError, InstantNotFoundError
from hudilite.filegroup import FileSystemView
from hudilite.read import ScanPlan, normalize_instant, plan_incremental, plan_snapshot
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, State
from hudilite.timeline.metadata import CommitMetadata, WriteStat, write_avro_record
from hudilite.timeline.timeline import Timeline
from tests.conftest import FIXTURES, fixture_id, fixture_zips
from tests.unit.filegroup.test_fs_view import T, TableLayout, v8_mor_table

ZIPS = fixture_zips()
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"
V6_MOR = "sample_table/mor/parquet/v6_nonpartitioned.zip"


def open_view(base: Path) -> FileSystemView:
    gw = FileSystemGateway(str(base))
    props = parse_properties(gw.read_bytes(".hoodie/hoodie.properties").decode())
    config = TableConfig.from_properties(props)
    return FileSystemView(gw, config, Timeline.load(gw, config))


def rs_slices(base: Path, **opts: str) -> dict[str, tuple[str, ...]]:
    """hudi-rs file slices: base file path -> log file paths."""
    hudi = pytest.importorskip("hudi")
    table = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    ro = hudi.HudiReadOptions()
    if "as_of" in opts:
        ro = ro.with_as_of_timestamp(opts["as_of"])
    if "start" in opts:
        ro = ro.with_query_type(hudi.HudiQueryType.Incremental)
        ro = ro.with_start_timestamp(opts["start"]).with_end_timestamp(opts["end"])
    return {
        s.base_file_relative_path(): tuple(s.log_files_relative_paths())
        for s in table.get_file_slices(ro)
    }


def merged(plan: ScanPlan) -> dict[str | None, list[str]]:
    return {s.base_path: s.log_paths for s in plan.merge_slices}


def assert_same_files(plan: ScanPlan, theirs: dict[str, tuple[str, ...]], exact_logs: bool) -> None:
    assert plan.base_paths() == sorted(theirs)
    for base, logs in merged(plan).items():
        assert base is not None
        if exact_logs:
            assert tuple(logs) == theirs[base]
        else:
            assert set(logs) <= set(theirs[base])
    for path in plan.native_paths:  # slices we read natively have no logs *for this read*
        assert path in theirs


# --------------------------------------------------------------------- real Hudi tables


@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_fixture_plans_match_hudi_rs(shared_fixture: Any, zip_path: Path) -> None:
    base = shared_fixture(str(zip_path.relative_to(FIXTURES)))
    view = open_view(base)
    assert_same_files(plan_snapshot(view), rs_slices(base), exact_logs=True)
    commits = view.timeline.commits()
    for instant in commits:
        t = instant.requested_time
        plan = plan_snapshot(view, as_of=t)
        assert_same_files(plan, rs_slices(base, as_of=t), exact_logs=view.table_version < 8)
    # Incremental steps between consecutive commits, given as hudi-rs takes them (for v8 it
    # compares those times with completion times, like the planner).
    times = [i.requested_time for i in commits]
    for start, end in itertools.pairwise(times):
        plan = plan_incremental(view.timeline, view, start, end)
        assert plan.base_paths() == sorted(rs_slices(base, start=start, end=end))


def test_v9_mor_exact_plans(shared_fixture: Any) -> None:
    view = open_view(shared_fixture(V9_MOR))
    snap = plan_snapshot(view)
    assert snap.merge_slices == []
    assert snap.native_paths == [
        "region=apac/db3ba9f9-d2c3-4bf4-a2e7-03ea74dd032f-0_0-66-139_20260307135840454.parquet",
        "region=eu/b151ed41-bdc8-4b95-a733-69266ed89edd-0_1-66-140_20260307135840454.parquet",
        "region=eu/c1690aed-ab5b-4e4a-aa70-d8de21cdf5df-0_0-70-148_20260307135840975.parquet",
        "region=us/4625f1ea-a436-4846-a24a-1328e1c036a6-0_2-66-141_20260307135840454.parquet",
        "region=us/7e0f3c9f-f99a-439a-9e9b-e504f87f9ae5-0_1-70-149_20260307135840975.parquet",
    ]
    # As of the first delta commit no log exists yet: everything reads natively.
    first = plan_snapshot(view, as_of="20260307135827749")
    assert first.merge_slices == [] and len(first.native_paths) == 3
    second = plan_snapshot(view, as_of="20260307135830801")
    assert merged(second) == {
        "region=us/db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_1-3-7_20260307135827749.parquet": [
            "region=us/.db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_20260307135830801.log.1_0-10-23"
        ]
    }
    assert second.is_instant_visible("20260307135830801")
    assert not second.is_instant_visible("20260307135832616")
    # v8 incremental ranges are in completion time: 27749 completed at 29538, in range.
    inc = plan_incremental(view.timeline, view, "20260307135827749", "20260307135830801")
    assert inc.commit_times == frozenset({"20260307135827749"})
    assert inc.commit_range == ("20260307135827749", "20260307135830801")
    # Read-optimized: base files only, even where logs exist.
    ro = plan_snapshot(view, as_of="20260307135836605", read_optimized=True)
    assert ro.merge_slices == [] and len(ro.native_paths) == 4
    assert ro.schema is not None and '"txn_id"' in ro.schema


def test_v9_cow_partition_pruning(shared_fixture: Any) -> None:
    view = open_view(shared_fixture(V9_COW))
    plan = plan_snapshot(view, partitions=["region=us"])
    assert plan.native_paths == [
        "region=us/3871f9c0-2553-4393-afe3-9103b996adee-0_1-63-131_20260307135709890.parquet",
        "region=us/870387c8-4759-405b-a176-ee30787abec0-0_2-59-123_20260307135709297.parquet",
    ]
    by_predicate = plan_snapshot(view, partitions=lambda p: p.endswith("=us"))
    assert by_predicate.native_paths == plan.native_paths


def test_v6_mor_exact_plan(shared_fixture: Any) -> None:
    view = open_view(shared_fixture(V6_MOR))
    plan = plan_snapshot(view)
    assert plan.native_paths == [
        "d5c0b12d-088d-48e8-9683-3f0c1eabcaf0-0_1-33-44_20250117083136333.parquet"
    ]
    assert merged(plan) == {
        "d206069c-22c8-4532-b9ea-3cf4282342c4-0_0-13-23_20250117083125837.parquet": [
            ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43"
        ]
    }
    inc = plan_incremental(view.timeline, view, "20250117083125837", "20250117083136333")
    assert inc.commit_times == frozenset({"20250117083136333"})
    assert inc.base_paths() == [
        "d206069c-22c8-4532-b9ea-3cf4282342c4-0_0-13-23_20250117083125837.parquet",
        "d5c0b12d-088d-48e8-9683-3f0c1eabcaf0-0_1-33-44_20250117083136333.parquet",
    ]


# --------------------------------------------------------------------------- read instants


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("20240102030405678", "20240102030405678"),
        ("20240102030405", "20240102030405999"),  # a legacy instant covers its whole second
        ("2024-01-02 03:04:05", "20240102030405000"),
        ("2024-01-02 03:04:05.6", "20240102030405600"),
        ("2024-01-02T03:04:05.678901", "20240102030405678"),
        ("2024-01-02T03:04:05Z", "20240102030405000"),
        ("2024-01-02 05:04:05+02:00", "20240102030405000"),
        ("2024-01-02 03:04", "20240102030400000"),
        ("2024-01-02", "20240102000000000"),
        (datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC), "20240102030405678"),
        (20240102030405678, "20240102030405678"),
    ],
)
def test_normalize_instant(value: Any, expected: str) -> None:
    assert normalize_instant(value) == expected


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", "20241301000000000", "2024010203"])
def test_normalize_instant_rejects(value: str) -> None:
    with pytest.raises(ConfigError):
        normalize_instant(value)


def _v6_cow(tmp_path: Path) -> TableLayout:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    for n in (10, 20, 30):
        stat = WriteStat("fg1-0", f"p/fg1-0_0-1-2_{T(n)}.parquet", "p")
        meta = CommitMetadata({"p": [stat]}, "UPSERT", {"schema": f"schema-{n}"})
        t.instant(T(n), COMMIT, content=meta.to_json_bytes())
        t.base("p", "fg1-0", T(n))
    return t


def test_as_of_before_timeline_or_cleaned_raises(tmp_path: Path) -> None:
    t = _v6_cow(tmp_path)
    clean = {
        "startCleanTime": T(40),
        "timeTakenInMillis": 1,
        "totalFilesDeleted": 0,
        "earliestCommitToRetain": T(20),
        "partitionMetadata": {},
    }
    t.instant(T(40), CLEAN, content=write_avro_record("HoodieCleanMetadata", clean))
    view = t.view()
    with pytest.raises(InstantNotFoundError, match="before the first instant"):
        plan_snapshot(view, as_of=T(5))
    with pytest.raises(InstantNotFoundError, match="cleaner"):
        plan_snapshot(view, as_of=T(15))
    plan = plan_snapshot(view, as_of=T(25))
    assert plan.native_paths == [f"p/fg1-0_0-1-2_{T(20)}.parquet"]
    assert plan.schema == "schema-20"
    assert plan.as_of == T(25)
    with pytest.raises(InstantNotFoundError, match="no commits"):
        plan_snapshot(TableLayout(tmp_path / "empty").view(), as_of=T(1))


def test_v6_incremental(tmp_path: Path) -> None:
    view = _v6_cow(tmp_path).view()
    plan = plan_incremental(view.timeline, view, T(10), T(20))
    assert plan.native_paths == [f"p/fg1-0_0-1-2_{T(20)}.parquet"]
    assert plan.commit_times == frozenset({T(20)})
    assert plan.keeps_commit_time(T(20)) and not plan.keeps_commit_time(T(10))
    latest = plan_incremental(view.timeline, view, T(10))
    assert latest.native_paths == [f"p/fg1-0_0-1-2_{T(30)}.parquet"]
    assert latest.commit_times == frozenset({T(20), T(30)})
    assert plan_incremental(view.timeline, view, T(30)).is_empty
    # The table-state call form.
    state = SimpleNamespace(view=view, timeline=view.timeline)
    assert plan_incremental(state, T(10), T(20)) == plan


def test_incremental_from_before_the_timeline(tmp_path: Path) -> None:
    t = _v6_cow(tmp_path)
    view = t.view()
    full = plan_incremental(view.timeline, view, "20000101000000000", T(20))
    assert full.commit_times is None and full.commit_range == (None, T(20))
    assert full.native_paths == [f"p/fg1-0_0-1-2_{T(20)}.parquet"]
    t.touch(".hoodie/archived/.commits_.archive.1_1-0-1", size=3)
    with pytest.raises(InstantNotFoundError, match="archived"):
        plan_incremental(view.timeline, view, "20000101000000000", T(20))


def test_v8_incremental_uses_completion_times(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    # Make E and D's write stats name the file group, as Hudi's delta commits do.
    stat = WriteStat("fg1-0", f["D"], "p", log_files=[f["D"][2:]])
    t.gw.delete_file(f".hoodie/timeline/{T(30)}_{T(60)}.deltacommit")
    t.instant(T(30), DELTA_COMMIT, completion=T(60), content=t.metadata({"p": [stat]}))
    view = t.view()
    plan = plan_incremental(view.timeline, view, T(55), T(60))
    assert plan.commit_times == frozenset({T(30)})
    assert merged(plan) == {f["b40"]: [f["D"]]}
    assert plan.is_instant_visible(T(30)) and not plan.is_instant_visible(T(75))
    assert plan_incremental(view.timeline, view, T(60), T(79)).is_empty


def test_read_optimized_and_log_only_groups(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    t.instant(T(110), DELTA_COMMIT, completion=T(111))
    only_log = t.log("p", "fg9-0", T(110))
    view = t.view()
    snap = plan_snapshot(view)
    assert snap.native_paths == []
    assert merged(snap) == {f["b40"]: [f["D"], f["F"], f["G"]], None: [only_log]}
    assert snap.base_paths() == [f["b40"]]
    ro = plan_snapshot(view, read_optimized=True)
    assert ro.native_paths == [f["b40"]] and ro.merge_slices == [] and ro.read_optimized
    # Block visibility of the snapshot: completed instants only.
    assert snap.is_instant_visible(T(70)) and not snap.is_instant_visible(T(100))


def test_plan_accepts_a_table_state_but_not_other_things(tmp_path: Path) -> None:
    view = _v6_cow(tmp_path).view()
    assert plan_snapshot(SimpleNamespace(view=view)) == plan_snapshot(view)
    with pytest.raises(TypeError):
        plan_snapshot(object())
    pending = TableLayout(tmp_path / "p2", table_type="COPY_ON_WRITE")
    pending.partition("p")
    pending.instant(T(10), COMMIT, State.INFLIGHT)
    pending.base("p", "fg1-0", T(10))
    assert plan_snapshot(pending.view()).is_empty
