"""Clustering without Spark: plans as Hudi writes them, planning rules, execution, failures.

Tables are built with ``MiniTable`` from ``test_compaction_plan`` (explicit file groups, one
commit per call; v6/v8, COW/MOR).
"""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pytest

from hudilite.errors import ConfigError, ConflictError, InstantNotFoundError, WriteError
from hudilite.filegroup.slices import BaseFile, FileSlice, LogFile
from hudilite.services import clustering_plan as cp
from hudilite.services.clustering import (
    cluster,
    execute_clustering,
    schedule_clustering,
    stale_slices,
)
from hudilite.services.clustering_plan import (
    ClusteringGroup,
    ClusteringPlan,
    ClusteringSlice,
    clustering_instants,
    pending_clusterings,
    plan_groups,
    read_clustering_plan,
)
from hudilite.services.compaction import schedule_compaction
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.storage.parquet_io import read_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import CLUSTERING, REPLACE_COMMIT, ROLLBACK, Instant, State
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.transaction import WriteTransaction
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable

V9_COW = FIXTURES / "sample_table" / "cow" / "v9_txns_simple_nometa.zip"
V9_PLAN = "20260307135709297"
SORT = "hoodie.clustering.plan.strategy.sort.columns"


def small_table(root: Path, version: int, mor: bool) -> MiniTable:
    """Partition x: groups a-0 (updated, one delete) and c-0; partition y: group b-0."""
    t = MiniTable(root, version=version, mor=mor)
    t.write({("x", "a-0"): [("k1", 1, "m"), ("k2", 1, "z")], ("y", "b-0"): [("k3", 1, "v3")]})
    t.write({("x", "c-0"): [("k4", 1, "a"), ("k5", 1, None)], ("x", "a-0"): [("k1", 2, "b")]})
    t.write({("x", "a-0"): [("k2", None, None)]}, delete=True)
    return t


def fixture_timeline(tmp_path: Path) -> Path:
    if not V9_COW.exists():
        pytest.skip("fixture v9_txns_simple_nometa is absent")
    return unzip_table(V9_COW, tmp_path / "fx") / ".hoodie" / "timeline"


# ------------------------------------------------------------------------- plan encoding


def test_hudi_plan_round_trips_field_by_field(tmp_path):
    raw = (fixture_timeline(tmp_path) / f"{V9_PLAN}.clustering.requested").read_bytes()
    plan = ClusteringPlan.from_bytes(V9_PLAN, raw)
    assert [len(g.slices) for g in plan.groups] == [2, 1, 2]
    first = plan.groups[0].slices[0]
    assert first.partition_path == "region=apac"
    assert first.file_id == "501c09bc-09b2-4abe-81ee-31bd9cea901b-0"
    assert first.data_file == (
        "501c09bc-09b2-4abe-81ee-31bd9cea901b-0_0-55-112_20260307135708654.parquet"
    )
    assert first.delta_files == () and plan.sort_columns == ()
    assert plan.strategy_class == cp.EXECUTION_STRATEGY and plan.preserve_metadata
    assert plan.involved_partitions == ("region=apac,region=apac,region=eu,region=us,region=us")
    assert plan.replaced_file_ids()["region=us"] == [
        "d32df875-21bd-41a4-941a-924fc7b82f01-0",
        "742a4f26-7e5c-4b1c-bb9a-d13433f75557-0",
    ]
    theirs = next(fastavro.reader(io.BytesIO(raw)))
    reader = fastavro.reader(io.BytesIO(plan.to_avro_bytes()))
    assert next(reader) == theirs  # the same record, field for field
    schema = reader.writer_schema
    assert isinstance(schema, dict)
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata"


def test_hudi_clustering_is_found_on_its_timeline(tmp_path):
    base = fixture_timeline(tmp_path).parent.parent
    state = TableState.load(FileSystemGateway(str(base)))
    found = clustering_instants(state.timeline)
    assert [(i.requested_time, i.action, i.state) for i, _ in found] == [
        (V9_PLAN, REPLACE_COMMIT, State.COMPLETED)
    ]
    # The insert overwrite's replacecommit (empty request) is no clustering.
    assert state.timeline.get("20260307135707243") is not None
    assert pending_clusterings(state.timeline) == []
    assert read_clustering_plan(state, V9_PLAN).groups == found[0][1].groups
    with pytest.raises(InstantNotFoundError):
        read_clustering_plan(state, "20260307135707243")


def test_our_plan_round_trips():
    plan = ClusteringPlan(
        "20240101000000000",
        (
            ClusteringGroup(
                (
                    ClusteringSlice("p=1", "f1-0", "file:///t/p=1/f1-0_0-1-2_1.parquet"),
                    ClusteringSlice("p=1", "f2-0", "", ("file:///t/p=1/.f2-0_1.log.1_0-1-2",)),
                ),
                3,
                {"TOTAL_LOG_FILES": 1.0},
            ),
        ),
        {SORT: "a,b"},
    )
    back = ClusteringPlan.from_bytes(plan.instant_time, plan.to_avro_bytes())
    assert back == plan and back.sort_columns == ("a", "b")
    assert back.groups[0].num_output_file_groups == 3
    assert back.slices[1].data_file is None
    assert back.slices[1].delta_files == (".f2-0_1.log.1_0-1-2",)


def test_metrics_keep_hudis_last_slice_quirk():
    mb = 1024 * 1024
    a = FileSlice("p", "a", "1", BaseFile("p", BaseFileName("a", "0-1-2", "1"), 3 * mb), ())
    log = LogFile("p", LogFileName("b", "1", 1, "0-1-2"), mb)
    b = FileSlice("p", "b", "1", None, (log,))
    m = cp._metrics([a, b], 120 * mb)
    assert m == {
        "TOTAL_LOG_FILES": 1.0,
        "TOTAL_IO_MB": 121.0,  # the last slice's read (1) + write (120), not the sum
        "TOTAL_IO_READ_MB": 1.0,
        "TOTAL_LOG_FILES_SIZE": float(mb),
        "TOTAL_IO_WRITE_MB": 120.0,
    }


# ------------------------------------------------------------------------------ planning


def test_plan_groups_follow_the_size_based_strategy(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=False)
    state = t.state()
    groups = plan_groups(state)
    assert [(g.partition_path, {s.file_id for s in g.slices}) for g in groups] == [
        ("x", {"a-0", "c-0"}),
        ("y", {"b-0"}),
    ]
    assert all(g.num_output_file_groups == 1 for g in groups)
    sizes = {s.file_id: s.base_file.size for s in state.view.latest_slices() if s.base_file}
    assert [s.file_id for s in groups[0].slices] == sorted(["a-0", "c-0"], key=lambda f: -sizes[f])
    assert groups[0].slices[0].data_file_path.startswith("file://")
    # Base files at or above the small-file limit are left alone.
    limit = {"hoodie.clustering.plan.strategy.small.file.limit": str(min(sizes.values()))}
    assert all(len(g.slices) <= 1 for g in plan_groups(state, limit))
    # A group holds at most max.bytes.per.group; a lone slice needs single-group clustering.
    per_slice = plan_groups(state, {"hoodie.clustering.plan.strategy.max.bytes.per.group": "1"})
    assert len(per_slice) == 3
    no_single = {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "false"}
    assert [g.partition_path for g in plan_groups(state, no_single)] == ["x"]
    # ... unless sort columns are set (Hudi's shouldClusteringSingleGroup).
    assert len(plan_groups(state, {**no_single, SORT: "v"})) == 2
    # Output files: ceil(group bytes / target.file.max.bytes).
    tiny = plan_groups(state, {"hoodie.clustering.plan.strategy.target.file.max.bytes": "1000"})
    assert tiny[1].num_output_file_groups == -(-sizes["b-0"] // 1000)
    capped = plan_groups(state, {"hoodie.clustering.plan.strategy.max.num.groups": "1"})
    assert [g.partition_path for g in capped] == ["x"]


def test_partition_selection(tmp_path):
    t = small_table(tmp_path / "t", 6, mor=False)
    state = t.state()

    def parts(**opts: str) -> list[str]:
        return [g.partition_path for g in plan_groups(state, opts)]

    assert parts(**{"hoodie.clustering.plan.strategy.partition.selected": "y"}) == ["y"]
    assert parts(**{"hoodie.clustering.plan.strategy.partition.regex.pattern": "x|z"}) == ["x"]
    assert parts(**{"hoodie.clustering.plan.strategy.partition.regex.pattern": "x.+"}) == []
    recent = {
        "hoodie.clustering.plan.partition.filter.mode": "RECENT_DAYS",
        "hoodie.clustering.plan.strategy.daybased.lookback.partitions": "1",
    }
    assert parts(**recent) == ["y"]
    skip = {**recent, "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": "1"}
    assert parts(**skip) == ["x"]
    ranged = {
        "hoodie.clustering.plan.partition.filter.mode": "SELECTED_PARTITIONS",
        "hoodie.clustering.plan.strategy.cluster.begin.partition": "y",
    }
    assert parts(**ranged) == ["y"]
    with pytest.raises(ConfigError, match="DAY_ROLLING"):
        plan_groups(state, {"hoodie.clustering.plan.partition.filter.mode": "day_rolling"})


def test_sort_columns_and_layout_are_checked(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=False)
    plan = schedule_clustering(t.state(), {SORT: "V, K"})
    assert plan is not None and plan.sort_columns == ("v", "k")
    t2 = small_table(tmp_path / "t2", 8, mor=False)
    with pytest.raises(ConfigError, match="'nope'"):
        schedule_clustering(t2.state(), {SORT: "v,nope"})
    with pytest.raises(ConfigError, match="z-order"):
        schedule_clustering(t2.state(), {SORT: "v", "hoodie.layout.optimize.strategy": "z-order"})
    with pytest.raises(ConfigError, match="BUCKET"):
        schedule_clustering(t2.state(), {"hoodie.index.type": "bucket"})
    assert pending_clusterings(t2.state().timeline) == []


def test_plans_skip_file_groups_of_pending_plans(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=True)
    compaction = schedule_compaction(t.state(), force=True)
    assert compaction is not None and compaction.plan.file_groups == {("x", "a-0")}
    first = schedule_clustering(t.state())
    assert first is not None and first.file_groups == {("x", "c-0"), ("y", "b-0")}
    assert schedule_clustering(t.state()) is None  # everything else is busy
    assert schedule_compaction(t.state(), force=True) is None  # x/a-0 is already planned
    t.write({("y", "b-0"): [("k3", 5, "w")]})
    assert stale_slices(t.state(), first) == ["y/b-0 was written to after the plan"]


# ---------------------------------------------------------------------------- execution


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("mor", [False, True])
def test_clustering_rewrites_groups_and_reads_stay_equal(tmp_path, version, mor):
    t = small_table(tmp_path / "t", version, mor)
    before = t.read()
    assert before == [
        ("k1", 2, "b", "x"),
        ("k3", 1, "v3", "y"),
        ("k4", 1, "a", "x"),
        ("k5", 1, None, "x"),
    ]
    plan = schedule_clustering(t.state(), {SORT: "v"})
    assert plan is not None
    T = plan.instant_time
    requested = f"{T}.{'clustering' if version == 8 else 'replacecommit'}.requested"
    assert requested in t.timeline_names()
    assert pending_clusterings(t.state().timeline)[0].requested_time == T
    assert t.read() == before  # a pending plan changes nothing
    result = execute_clustering(t.state(), T)
    assert (result.num_input_groups, result.num_input_file_groups) == (2, 3)
    assert result.num_output_files == 2 and result.num_records_written == 4
    assert t.read() == before
    assert rows(hudi_rs_read(t.path), DATA) == before
    inst = t.state().timeline.get(T)
    assert inst is not None and inst.action == REPLACE_COMMIT and inst.is_completed
    meta = t.state().timeline.commit_metadata(inst)
    assert meta.operation_type == "CLUSTER" and not meta.compacted
    assert {p: sorted(ids) for p, ids in meta.partition_to_replace_file_ids.items()} == {
        "x": ["a-0", "c-0"],
        "y": ["b-0"],
    }
    assert all(
        s.prev_commit == "null" and s.num_inserts == s.num_writes for s in meta.write_stats()
    )
    assert meta.extra_metadata["schema"] == t.schema_json
    # One new file per group, sorted by v (nulls first), meta columns kept but the file name.
    live = [s for s in t.state().view.latest_slices()]
    assert [(s.partition, s.base_instant, s.log_files) for s in live] == [
        ("x", T, ()),
        ("y", T, ()),
    ]
    x_file = live[0].base_file
    assert x_file is not None
    new = read_base_file(t.gw, x_file.path).to_pylist()
    assert [r["v"] for r in new] == [None, "a", "b"]
    assert {r["_hoodie_file_name"] for r in new} == {x_file.file_name}
    assert {r["_hoodie_commit_time"] for r in new} < {i.requested_time for i in t.state().timeline}
    assert T not in {r["_hoodie_commit_time"] for r in new}
    shown = clustering_instants(t.state().timeline)
    assert [(i.requested_time, i.state, len(p.groups)) for i, p in shown] == [
        (T, State.COMPLETED, 2)
    ]
    # Later writes go to the new file groups; nothing is left to cluster in y.
    t2 = t.state().view.latest_slices(partitions=["y"])[0].file_id
    t.write({("y", t2): [("k3", 9, "later")]})
    assert rows(hudi_rs_read(t.path), DATA) == t.read()
    assert ("k3", 9, "later", "y") in t.read()


def test_many_output_files_split_the_sorted_rows(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=False)
    opts = {SORT: "k", "hoodie.clustering.plan.strategy.target.file.max.bytes": "1"}
    (result,) = cluster(t.state(), opts)
    assert result.num_output_files == 4  # one file per row: never more files than rows
    firsts = sorted(read_base_file(t.gw, p).to_pylist()[0]["k"] for p in result.file_paths)
    assert firsts == ["k1", "k3", "k4", "k5"]
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


def test_cluster_runs_every_pending_plan_when_nothing_new_is_planned(tmp_path):
    t = small_table(tmp_path / "t", 6, mor=True)
    first = schedule_clustering(
        t.state(), {"hoodie.clustering.plan.strategy.partition.selected": "x"}
    )
    second = schedule_clustering(t.state())
    assert first is not None and second is not None
    results = cluster(t.state(), schedule=False)
    assert [r.instant_time for r in results] == [first.instant_time, second.instant_time]
    # One file per partition now: left alone unless single-group clustering (Hudi's default
    # re-clusters lone small files every time).
    no_single = {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "false"}
    assert cluster(t.state(), no_single) == []
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


def test_version6_pending_clustering_survives_later_writes(tmp_path):
    t = small_table(tmp_path / "t", 6, mor=False)
    plan = schedule_clustering(
        t.state(), {"hoodie.clustering.plan.strategy.partition.selected": "y"}
    )
    assert plan is not None
    t.write({("x", "a-0"): [("k1", 3, "c")]})  # rolls back failed writes first
    assert [i.requested_time for i in pending_clusterings(t.state().timeline)] == [
        plan.instant_time
    ]
    execute_clustering(t.state(), plan.instant_time)
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


@pytest.mark.parametrize("version", [6, 8])
def test_a_write_to_a_planned_group_drops_the_plan(tmp_path, version):
    t = small_table(tmp_path / "t", version, mor=True)
    plan = schedule_clustering(t.state())
    assert plan is not None
    t.write({("x", "c-0"): [("k4", 7, "newer")]})
    expected = t.read()
    with pytest.raises(ConflictError, match="plan removed"):
        execute_clustering(t.state(), plan.instant_time)
    assert pending_clusterings(t.state().timeline) == []
    assert t.read() == expected and ("k4", 7, "newer", "x") in expected
    assert rows(hudi_rs_read(t.path), DATA) == expected
    assert schedule_clustering(t.state()) is not None  # a fresh plan sees the new data


def test_a_write_committing_after_the_clustering_conflicts(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=False)
    plan = schedule_clustering(t.state())
    assert plan is not None
    with pytest.raises(ConflictError), WriteTransaction(t.gw, t.config, "commit") as txn:
        execute_clustering(t.state(), plan.instant_time)
        stat = WriteStat("c-0", f"x/c-0_0-1-0_{txn.instant_time}.parquet", "x")
        txn.commit(CommitMetadata({"x": [stat]}, "UPSERT", {"schema": t.schema_json}))
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


@pytest.mark.parametrize("point", ["after_file_write", "before_commit"])
def test_failed_clustering_is_rolled_back_and_can_be_retried(tmp_path, point):
    t = small_table(tmp_path / "t", 6, mor=True)
    before = t.read()
    plan = schedule_clustering(t.state())
    assert plan is not None
    T = plan.instant_time
    with pytest.raises(WriteError, match="simulated failure"):
        execute_clustering(t.state(), T, {"hudilite.internal.fail.point": point})
    names = t.timeline_names()
    assert f"{T}.replacecommit.requested" in names and f"{T}.replacecommit.inflight" not in names
    assert any(n.endswith(".rollback") for n in names)
    assert not [f for f in t.files(".parquet") if f.endswith(f"_{T}.parquet")]
    assert not t.gw.exists(f".hoodie/.temp/{T}")
    assert t.read() == before and rows(hudi_rs_read(t.path), DATA) == before
    result = execute_clustering(t.state(), T)
    assert result.rolled_back_attempt is None and t.read() == before


def test_abandoned_inflight_attempt_is_rolled_back_first(tmp_path):
    t = small_table(tmp_path / "t", 8, mor=False)
    plan = schedule_clustering(t.state())
    assert plan is not None
    T = plan.instant_time
    TimelineWriter(t.gw, t.config).transition_inflight(Instant(T, CLUSTERING, State.REQUESTED))
    junk = f"x/new-0_9-9-9_{T}.parquet"
    t.gw.write_bytes(junk, b"half a file")
    with Heartbeat(t.gw, T, 60000), pytest.raises(ConflictError, match="another process"):
        execute_clustering(t.state(), T)
    result = execute_clustering(t.state(), T)
    assert result.rolled_back_attempt is not None and not t.gw.exists(junk)
    rollbacks = t.state().timeline.filter(actions=ROLLBACK)
    assert [r.requested_time for r in rollbacks] == [result.rolled_back_attempt]
    assert rows(hudi_rs_read(t.path), DATA) == t.read()
    with pytest.raises(Exception, match="already completed"):
        execute_clustering(t.state(), T)
