"""DELETE_PARTITION and truncate on tables Hudi wrote, without a JVM; hudi-rs is the oracle."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudilite.errors import ConfigError, PartitionNotFoundError, WriteError
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.services.partitions import (
    DELETE_PARTITION,
    delete_partitions,
    resolve_partitions,
    truncate_table,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.metadata import read_avro_record
from tests.helpers import hudi_rs_read, rows

COW_V6 = "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"
COW_V8 = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
MOR_V6 = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip"
UNPARTITIONED = "sample_table/cow/v6_nonpartitioned.zip"

pytest.importorskip("hudi")


def load(base: Path) -> TableState:
    return TableState.load(FileSystemGateway(str(base)))


def ours(state: TableState, cols: list[str]) -> list[tuple]:
    """The snapshot as hudilite's Arrow reader sees it now."""
    state = TableState.load(state.gw)
    table = read_plan_arrow(
        state.gw,
        plan_snapshot(state.view),
        state.storage_schema,
        merge_spec=state.merge_spec(state.options()),
    )
    return rows(table, cols)


def timeline_listing(state: TableState) -> list[str]:
    return sorted(os.listdir(state.gw.abs_path(state.config.timeline_dir)))


@pytest.mark.parametrize("fixture", [COW_V6, COW_V8, MOR_V6], ids=["cow-v6", "cow-v8", "mor-v6"])
def test_delete_partition_of_a_hudi_table(shared_fixture, fixture):
    base = shared_fixture(fixture)
    state = load(base)
    cols = ["id", "name", "byteField"]
    before = rows(hudi_rs_read(str(base)), cols)
    assert ours(state, cols) == before
    groups = sorted(s.file_id for s in state.view.latest_slices(partitions=["10"]))
    r = delete_partitions(state, ["10"])
    dropped = [row for row in before if row[2] == 10]
    assert (r.rows_deleted, r.replaced_file_groups) == (len(dropped), len(groups))
    assert r.extra["replaced_file_ids"] == {"10": groups}
    after = [row for row in before if row[2] != 10]
    assert rows(hudi_rs_read(str(base)), cols) == after
    assert ours(state, cols) == after
    state = load(base)
    last = state.timeline.commits()[-1]
    assert last.action == "replacecommit"
    meta = state.timeline.commit_metadata(last)
    assert meta.operation_type == DELETE_PARTITION
    assert meta.partition_to_replace_file_ids == {"10": groups}
    # The request says what it is, like Hudi's HoodieRequestedReplaceMetadata.
    requested = [n for n in timeline_listing(state) if n.endswith(".replacecommit.requested")]
    data = state.gw.read_bytes(f"{state.config.timeline_dir}/{requested[0]}")
    assert read_avro_record(data)["operationType"] == DELETE_PARTITION


def test_merge_on_read_rows_are_counted_after_merging(shared_fixture):
    state = load(shared_fixture(MOR_V6))
    assert any(s.has_logs for s in state.view.latest_slices(partitions=["10"]))
    counted: list[int] = []

    def counter(st: TableState, plan) -> int:
        assert not plan.native_paths and plan.merge_slices
        n = read_plan_arrow(st.gw, plan, st.storage_schema).num_rows
        counted.append(n)
        return n

    r = delete_partitions(state, "10", count_merged=counter)
    assert counted == [2] and r.rows_deleted == 2  # ids 1 (updated in a log) and 3


def test_unknown_partition_is_refused_before_anything_is_written(shared_fixture):
    state = load(shared_fixture(COW_V6))
    listing = timeline_listing(state)
    with pytest.raises(PartitionNotFoundError, match=r"'99'.*'10', '20', '30'"):
        delete_partitions(state, ["10", "99"])
    with pytest.raises(PartitionNotFoundError, match="did you mean '10'"):
        resolve_partitions(state, ["byteField=10"])
    with pytest.raises(ConfigError, match="at least one"):
        delete_partitions(state, [])
    assert timeline_listing(state) == listing
    assert resolve_partitions(state, ["/20/", "10", "10"]) == ["10", "20"]


def test_failure_before_commit_rolls_back(shared_fixture):
    base = shared_fixture(COW_V8)
    state = load(base)
    before = rows(hudi_rs_read(str(base)), ["id"])
    with pytest.raises(WriteError):
        delete_partitions(state, ["10"], {"hudilite.internal.fail.point": "before_commit"})
    state = load(base)
    assert [i.action for i in state.timeline.pending()] == []
    assert state.timeline.instants[-1].action == "rollback"
    assert rows(hudi_rs_read(str(base)), ["id"]) == before


def test_truncate_unpartitioned_table(shared_fixture):
    base = shared_fixture(UNPARTITIONED)
    state = load(base)
    n = hudi_rs_read(str(base)).num_rows
    assert n > 0
    r = truncate_table(state)
    assert (r.rows_deleted, r.partitions) == (n, ("",))
    assert hudi_rs_read(str(base)).num_rows == 0
    assert ours(state, ["id"]) == []
    meta = load(base).timeline.commit_metadata(load(base).timeline.commits()[-1])
    assert set(meta.partition_to_replace_file_ids) == {""}
    assert set(meta.partition_to_write_stats) == {""}  # Hudi readers expect the key
    assert isinstance(meta.extra_metadata["schema"], str)
