"""Table version upgrade 6 -> 8 and downgrade 8 -> 6 without Spark: every real fixture
table reads the same in hudi-rs (and hudilite) before, after and back again; timeline
names, contents, properties and archives follow Hudi's handlers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudilite.config import parse_properties
from hudilite.errors import ConfigError, ConflictError
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.services.archive import archive, archived_timeline
from hudilite.services.upgrade import (
    change_table_version,
    downgrade_table,
    parse_table_version,
    upgrade_table,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import CLUSTERING, COMMIT, REPLACE_COMMIT, Instant, State
from hudilite.timeline.instant_time import instant_to_epoch_ms
from hudilite.timeline.metadata import AVRO_MAGIC, write_avro_record
from tests.conftest import fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_archive_select import KEEP, C, T, Table

ZIPS = [z for z in fixture_zips() if "/v9_" not in str(z)]


def state_of(base: Path | str) -> TableState:
    return TableState.load(FileSystemGateway(str(base)))


def ours(base: Path) -> pa.Table:
    st = state_of(base)
    plan = plan_snapshot(st.view)
    return read_plan_arrow(st.gw, plan, st.storage_schema, merge_spec=st.merge_spec(st.options()))


def props(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie/hoodie.properties").read_text())


@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_fixture_tables_read_the_same_after_both_directions(tmp_path: Path, zip_path: Path) -> None:
    base = unzip_table(zip_path, tmp_path)
    version = state_of(base).config.table_version
    other = 8 if version == 6 else 6
    before = hudi_rs_read(str(base))
    # Merge-on-read tables are compacted first, which renames the files holding the rows.
    cols = (
        [c for c in before.column_names if c != "_hoodie_file_name"] if before.num_columns else None
    )
    result = change_table_version(state_of(base), other)
    assert (result.from_version, result.to_version, result.changed) == (version, other, True)
    assert props(base)["hoodie.table.version"] == str(other)
    assert props(base)["hoodie.timeline.layout.version"] == ("2" if other == 8 else "1")
    after = hudi_rs_read(str(base))
    assert rows(after, cols) == rows(before, cols)
    assert rows(ours(base), cols) == rows(before, cols)
    change_table_version(state_of(base), version)
    assert rows(hudi_rs_read(str(base)), cols) == rows(before, cols)
    assert state_of(base).config.table_version == version


def test_unknown_versions_are_refused(tmp_path: Path) -> None:
    t = Table(tmp_path, 6)
    with pytest.raises(ConfigError, match="cannot change table version 6 to 7: hudilite changes"):
        change_table_version(t.state(), "SEVEN")
    with pytest.raises(ConfigError, match="'SIXX'"):
        change_table_version(t.state(), "SIXX")
    with pytest.raises(ConfigError, match="use downgrade"):
        upgrade_table(t.state(), 5)
    with pytest.raises(ConfigError, match="use upgrade"):
        downgrade_table(t.state(), 8)
    assert change_table_version(t.state(), "SIX").changed is False
    assert [parse_table_version(v) for v in ("SIX", "eight", "6", 8)] == [6, 8, 6, 8]


def test_upgrade_moves_and_converts_the_timeline(tmp_path: Path) -> None:
    t = Table(tmp_path, 6)
    for n in (1, 2, 3, 4):
        t.write(n)
    plan = write_avro_record(
        "HoodieRequestedReplaceMetadata", {"operationType": "CLUSTER", "clusteringPlan": None}
    )
    t.put(Instant(T(5), REPLACE_COMMIT, State.REQUESTED), plan)  # a pending clustering
    archive(t.state(), KEEP)  # 1 and 2 go to .hoodie/archived
    result = upgrade_table(t.state(), "EIGHT")
    assert result.archived_instants_converted == 2
    names = sorted(p.name for p in (tmp_path / ".hoodie/timeline").iterdir() if p.is_file())
    assert names == [
        f"{T(3)}.commit.requested",
        f"{T(3)}.inflight",
        f"{T(3)}_{C(3)}.commit",  # completion time = the v6 file's modification time
        f"{T(4)}.commit.requested",
        f"{T(4)}.inflight",
        f"{T(4)}_{C(4)}.commit",
        f"{T(5)}.clustering.requested",
    ]
    assert (tmp_path / f".hoodie/timeline/{T(3)}_{C(3)}.commit").read_bytes().startswith(AVRO_MAGIC)
    assert not [p for p in (tmp_path / ".hoodie").iterdir() if p.name.startswith("2024")]
    p = props(tmp_path)
    assert p["hoodie.table.initial.version"] == "6" and p["hoodie.timeline.path"] == "timeline"
    assert p["hoodie.table.keygenerator.type"] == "NON_PARTITION"
    assert p["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert "hoodie.table.keygenerator.class" not in p
    assert not (tmp_path / ".hoodie/hoodie.properties.backup").exists()
    arch = archived_timeline(t.state())
    assert [(i.requested_time, i.completion_time) for i in arch] == [(T(1), C(1)), (T(2), C(2))]

    # ... and back: names, JSON content, modification times, the archive kept once.
    downgrade_table(t.state(), 6)
    done = tmp_path / f".hoodie/{T(3)}.commit"
    assert done.read_bytes().startswith(b"{")
    assert os.stat(done).st_mtime_ns // 1_000_000 == instant_to_epoch_ms(C(3))
    assert (tmp_path / f".hoodie/{T(5)}.replacecommit.requested").exists()
    assert not [p for p in (tmp_path / ".hoodie/timeline").iterdir() if p.is_file()]
    p = props(tmp_path)
    assert "hoodie.record.merge.mode" not in p and "hoodie.table.initial.version" not in p
    assert p["hoodie.table.keygenerator.class"].endswith(".NonpartitionedKeyGenerator")
    entries = archived_timeline(t.state())
    assert [(i.requested_time, i.action, i.state.name) for i in entries] == [
        (T(1), COMMIT, "COMPLETED"),
        (T(2), COMMIT, "COMPLETED"),
    ]
    assert state_of(tmp_path).timeline.get(T(5)) == Instant(T(5), REPLACE_COMMIT, State.REQUESTED)


def test_v8_archive_becomes_a_v6_archive(tmp_path: Path) -> None:
    t = Table(tmp_path, 8)
    for n in (1, 2, 3, 4):
        t.write(n)
    plan = write_avro_record("HoodieRequestedReplaceMetadata", {"operationType": "CLUSTER"})
    t.put(Instant(T(5), CLUSTERING, State.REQUESTED), plan)
    archive(t.state(), KEEP)
    result = downgrade_table(t.state(), "SIX")
    assert result.archived_instants_converted == 2
    assert sorted(p.name for p in (tmp_path / ".hoodie/archived").iterdir()) == [
        ".commits_.archive.1_1-0-1"
    ]
    got = [(i.requested_time, i.action, i.completion_time) for i in archived_timeline(t.state())]
    assert got == [(T(1), COMMIT, C(1)), (T(2), COMMIT, C(2))]
    assert state_of(tmp_path).timeline.get(T(5)) == Instant(T(5), REPLACE_COMMIT, State.REQUESTED)
    upgrade_table(t.state(), 8)  # the LSM files are still there: nothing converted twice
    assert [i.requested_time for i in archived_timeline(t.state())] == [T(1), T(2)]
    assert state_of(tmp_path).timeline.get(T(5)) == Instant(T(5), CLUSTERING, State.REQUESTED)


def test_a_write_in_flight_blocks_the_change(tmp_path: Path) -> None:
    t = Table(tmp_path, 6)
    t.write(1)
    t.write(2, done=False)
    with (
        Heartbeat(t.gw, T(2), 60_000),
        pytest.raises(ConflictError, match=f"write {T(2)} \\(commit\\) is in flight"),
    ):
        upgrade_table(t.state(), 8)
    assert state_of(tmp_path).config.table_version == 6
    # Without a heartbeat the writer is gone: its instant is rolled back first.
    result: Any = upgrade_table(t.state(), 8)
    assert result.rolled_back == (T(2),)
    assert [i.action for i in state_of(tmp_path).timeline.instants] == [COMMIT, "rollback"]
