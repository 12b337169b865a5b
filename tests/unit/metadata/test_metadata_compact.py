"""Compaction of the metadata table's files partition (hudilite/metadata/compact.py) and the
reader of compacted slices (table.current_slice), without a JVM.

Hudi's own compactions: the six ``v9_txns_*_meta`` fixtures each hold one; the reader starts
at its base file and merges the logs that completed after it (one was requested before it),
and the guard keeps such a table instead of rebuilding it. hudilite's compactions, on v8 and
v9 tables built by the engine's timeline writer: after ``hoodie.metadata.compact.max.delta.
commits`` deltacommits the timeline holds Hudi's compaction instants, the new HFile base file
holds the merged records, and the listing still equals the live files of a storage listing
(hudi==0.5.0 does not list through the metadata table, so it cannot check it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import ConfigError, WriteError
from hudilite.metadata import clean as mclean
from hudilite.metadata import compact, hfiles, sync
from hudilite.metadata import table as mt
from hudilite.services.rollback_completed import rollback_instant
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.hfile import HFileReader
from hudilite.storage.layout import BaseFileName
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read

META_ZIPS = [z for z in fixture_zips() if z.stem.endswith("_meta") and z.stem.startswith("v9_")]
V8_COW = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
V9_META = "sample_table/cow/v9_txns_simple_meta.zip"
FILES = f"{mt.METADATA_DIR}/{mt.FILES_PARTITION}"


def _gw(zip_rel: str, tmp_path: Path, max_commits: str | None = "3") -> FileSystemGateway:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    if max_commits is not None:
        stored[cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name] = max_commits
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    return gw


def _config(gw: FileSystemGateway) -> cfg.TableConfig:
    return cfg.TableConfig.from_properties(properties_file.load(gw))


def listed(gw: FileSystemGateway) -> dict[str, dict[str, int]]:
    return mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, _config(gw))))


def live(gw: FileSystemGateway) -> dict[str, dict[str, int]]:
    return mt.live_files(gw, _config(gw))


def guard(gw: FileSystemGateway) -> None:
    with table_lock(gw):
        pass


def commit_copy(gw: FileSystemGateway, n: int) -> tuple[str, str]:
    """A completed commit adding a copy of a live base file as a new file group ``n``
    (requested, inflight, the file, completed through the timeline writer under the lock).
    Returns its instant time and the file's table-relative path."""
    config = _config(gw)
    partition, name = sorted(
        (p, f) for p, files in live(gw).items() for f in files if f.endswith(".parquet")
    )[0]
    writer = TimelineWriter(gw, config)
    inst = writer.transition_inflight(writer.create_requested(COMMIT))
    file_id = f"{n:08d}-0000-0000-0000-000000000000-0"
    new = BaseFileName(file_id, "0-1-0", inst.requested_time, ".parquet").render()
    rel = f"{partition}/{new}" if partition else new
    src = f"{partition}/{name}" if partition else name
    shutil.copyfile(gw.abs_path(src), gw.abs_path(rel))
    size = os.path.getsize(gw.abs_path(rel))
    stat = WriteStat(
        file_id=file_id,
        path=rel,
        partition_path=partition,
        num_writes=1,
        num_inserts=1,
        total_write_bytes=size,
        file_size_in_bytes=size,
    )
    content = CommitMetadata(
        partition_to_write_stats={partition: [stat]}, operation_type="INSERT"
    ).to_bytes(config.layout_version)
    with table_lock(gw):
        writer.complete(inst, content)
    return inst.requested_time, rel


def timeline_names(gw: FileSystemGateway, instant_time: str) -> list[str]:
    return sorted(e.name for e in gw.list_dir(mt.TIMELINE_DIR) if e.name.startswith(instant_time))


@pytest.mark.parametrize("zp", META_ZIPS, ids=[fixture_id(z) for z in META_ZIPS])
def test_the_reader_starts_at_hudis_compaction(zp: Path, tmp_path: Path) -> None:
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    timeline = mt.load_timeline(gw)
    assert len(timeline.compactions) == 1 and not timeline.pending_compactions
    at = timeline.last_compaction
    assert at is not None
    data_timeline = Timeline.load(gw, _config(gw))
    file_slice = mt.current_slice(gw, data_timeline)
    assert file_slice.base_instant == at
    assert file_slice.base_path is not None and file_slice.base_path.endswith(f"_{at}.hfile")
    logs = [t for t, _ in file_slice.logs]
    after = sorted(t for t, done in timeline.deltacommits.items() if done > at)
    files_logs = {
        e.name.split("_")[1].split(".")[0] for e in gw.list_dir(FILES) if ".log." in e.name
    }
    assert logs == [t for t in after if t in files_logs]
    # A deltacommit requested before the compaction but completed after it is in its slice.
    assert any(t < at for t in logs)
    # The compacted slice lists what the initial base file with every log lists, and what
    # storage holds.
    everything = mt.read_slice(
        gw,
        mt.FilesSlice(
            mt.INIT_INSTANT,
            f"{FILES}/" + next(e.name for e in gw.list_dir(FILES) if e.name.endswith("0.hfile")),
            tuple(
                (t, f"{FILES}/{e.name}")
                for e in sorted(gw.list_dir(FILES), key=lambda e: e.name)
                if ".log." in e.name and (t := e.name.split("_")[1].split(".")[0])
            ),
        ),
    )
    ours = mt.listing_of(mt.read_slice(gw, file_slice))
    assert ours == mt.listing_of(everything) == mt.live_files(gw, _config(gw))


def test_the_guard_keeps_a_table_hudi_compacted(tmp_path: Path) -> None:
    gw = _gw(V9_META, tmp_path)
    hudis = mt.load_timeline(gw).last_compaction
    base = next(e.name for e in gw.list_dir(FILES) if e.name.endswith(f"_{hudis}.hfile"))
    guard(gw)
    assert sync.foreign_actions(gw) == []
    assert mt.load_timeline(gw).last_compaction == hudis  # not rebuilt from a listing
    assert gw.exists(f"{FILES}/{base}")
    assert mt.current_slice(gw).base_instant == hudis
    assert listed(gw) == live(gw)
    time, rel = commit_copy(gw, 1)
    assert time in mt.completed_deltacommits(gw)
    assert rel.rsplit("/", 1)[-1] in listed(gw)[rel.rsplit("/", 1)[0]]
    assert listed(gw) == live(gw)


@pytest.mark.parametrize("zip_rel", [V8_COW, V9_MOR])
def test_compaction_after_max_delta_commits(zip_rel: str, tmp_path: Path) -> None:
    gw = _gw(zip_rel, tmp_path, "3")
    rows_before = hudi_rs_read(gw.abs_path("")).num_rows
    guard(gw)
    assert compact.deltacommits_since_compaction(mt.load_timeline(gw)) == [mt.INIT_INSTANT]
    times = [commit_copy(gw, 1)[0], commit_copy(gw, 2)[0]]
    assert mt.load_timeline(gw).compactions == {}  # 3 deltacommits, none due yet
    before = mt.read_files_partition(gw)
    slice_before = mt.current_slice(gw)
    times.append(commit_copy(gw, 3)[0])  # due: compacted before its deltacommit
    timeline = mt.load_timeline(gw)
    assert len(timeline.compactions) == 1
    at = timeline.last_compaction
    # As in Hudi's fixtures: requested after the data instant, which completes after it.
    assert at is not None and times[2] == max(timeline.deltacommits) < at
    assert timeline.deltacommits[times[2]] > timeline.compactions[at]
    assert timeline_names(gw, at) == [
        f"{at}.compaction.inflight",
        f"{at}.compaction.requested",
        f"{at}_{timeline.compactions[at]}.commit",
    ]
    plan = read_avro_record(gw.read_bytes(f"{mt.TIMELINE_DIR}/{at}.compaction.requested"))
    [op] = plan["operations"]
    assert op["partitionPath"] == "files" and op["fileId"] == mt.FILES_FILE_ID
    assert op["baseInstantTime"] == mt.INIT_INSTANT
    assert op["dataFilePath"] == slice_before.base_path.rsplit("/", 1)[-1]  # type: ignore[union-attr]
    assert op["deltaFilePaths"] == [p.rsplit("/", 1)[-1] for _, p in slice_before.logs]
    assert len(op["deltaFilePaths"]) == 3  # the initialization's empty log and two commits
    done = [e.name for e in gw.list_dir(mt.TIMELINE_DIR) if e.name.endswith(".commit")]
    meta = CommitMetadata.from_bytes(gw.read_bytes(f"{mt.TIMELINE_DIR}/{done[0]}"))
    assert meta.compacted and meta.operation_type == "COMPACT"
    [stat] = meta.partition_to_write_stats["files"]
    name = f"{mt.FILES_FILE_ID}_{mt.WRITE_TOKEN}_{at}.hfile"
    assert stat.path == f"files/{name}" and stat.file_size_in_bytes == gw.size(f"{FILES}/{name}")
    # The base file holds the merged records, with Hudi's base-file info.
    data = gw.read_bytes(f"{FILES}/{name}")
    assert {r.key: r for r in hfiles.decode(data)} == before
    info = HFileReader(data).file_info_values()
    assert info["minRecordKey"] == min(before) and info["maxRecordKey"] == max(before)
    # The reader: the new base file and the third commit's log only.
    file_slice = mt.current_slice(gw, Timeline.load(gw, _config(gw)))
    assert (file_slice.base_instant, [t for t, _ in file_slice.logs]) == (at, [times[2]])
    assert listed(gw) == live(gw)
    # Three more deltacommits later, the next compaction starts from this one's base file.
    times += [commit_copy(gw, n)[0] for n in (4, 5, 6)]
    timeline = mt.load_timeline(gw)
    assert len(timeline.compactions) == 2
    second = timeline.last_compaction
    assert second is not None and times[5] < second
    plan = read_avro_record(gw.read_bytes(f"{mt.TIMELINE_DIR}/{second}.compaction.requested"))
    assert plan["operations"][0]["baseInstantTime"] == at
    assert [p.split("_")[1].split(".")[0] for p in plan["operations"][0]["deltaFilePaths"]] == [
        times[2],
        times[3],
        times[4],
    ]
    assert listed(gw) == live(gw)
    assert [t for t, _ in mt.current_slice(gw).logs] == [times[5]]
    assert hudi_rs_read(gw.abs_path("")).num_rows > rows_before


def test_a_crash_mid_compaction_is_invisible_then_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw = _gw(V8_COW, tmp_path, "2")
    guard(gw)
    first, _ = commit_copy(gw, 1)
    monkeypatch.setenv(failpoints.ENV_VAR, compact.AFTER_BASE_FILE)
    with pytest.raises(WriteError, match=compact.AFTER_BASE_FILE):
        commit_copy(gw, 2)
    monkeypatch.delenv(failpoints.ENV_VAR)
    timeline = mt.load_timeline(gw)
    [pending] = timeline.pending_compactions
    assert timeline.compactions == {}
    assert [e.name for e in gw.list_dir(FILES) if e.name.endswith(f"_{pending}.hfile")]
    # The pending compaction's base file is read by no reader.
    assert mt.current_slice(gw).base_instant == mt.INIT_INSTANT
    assert listed(gw) == live(gw)
    guard(gw)  # the next writer rolls back the compaction and the data write's leftovers
    assert mt.load_timeline(gw).pending_compactions == frozenset()
    assert timeline_names(gw, pending) == []
    assert not [e for e in gw.list_dir(FILES) if pending in e.name]
    commit_copy(gw, 3)  # compacts again (two deltacommits since the base file)
    timeline = mt.load_timeline(gw)
    assert len(timeline.compactions) == 1 and timeline.last_compaction != pending
    assert listed(gw) == live(gw)
    assert first in timeline.deltacommits


def test_rolling_back_a_compacted_commit_deletes_its_files(tmp_path: Path) -> None:
    gw = _gw(V8_COW, tmp_path, None)
    guard(gw)
    time, rel = commit_copy(gw, 1)
    with table_lock(gw):
        at = compact.compact(gw, Timeline.load(gw, _config(gw)))
    partition, name = rel.rsplit("/", 1)
    assert mt.current_slice(gw).base_instant == at and mt.current_slice(gw).logs == ()
    assert name in listed(gw)[partition]
    result = rollback_instant(TableState.load(gw), time)
    assert not gw.exists(rel)
    assert time not in sync.deltacommit_times(gw)
    assert result.rollback_instant in mt.completed_deltacommits(gw)
    assert name not in listed(gw)[partition]
    assert listed(gw) == live(gw)


def test_the_trigger_is_hudis_default_and_checked(tmp_path: Path) -> None:
    assert compact.max_delta_commits({}) == 10
    assert compact.max_delta_commits({cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name: "4"}) == 4
    gw = _gw(V8_COW, tmp_path, "0")
    with pytest.raises(ConfigError) as err:
        guard(gw)
    assert str(err.value) == "hoodie.metadata.compact.max.delta.commits must be at least 1, got 0"
    assert not gw.exists(mt.METADATA_DIR)  # refused before anything was written


def test_old_slices_are_cleaned_three_instants_after_a_compaction(tmp_path: Path) -> None:
    gw = _gw(V9_MOR, tmp_path, "4")
    guard(gw)
    times = [commit_copy(gw, n)[0] for n in range(1, 11)]
    timeline = mt.load_timeline(gw)
    first, second = sorted(timeline.compactions)  # at the 4th and the 8th commit
    names = sorted(e.name for e in gw.list_dir(FILES))
    stale = sorted(
        n
        for n in names
        if n.endswith(f"_{mt.INIT_INSTANT}.hfile")
        or any(f"_{t}.log." in n for t in (mt.INIT_INSTANT, *times[:3]))
    )
    assert len(stale) == 5  # the initial base file, its empty log and three commits' logs
    assert mclean.stale_files(gw, timeline) == ([f"{FILES}/{n}" for n in stale], first)
    # Not cleaned yet: two deltacommits completed after the second compaction, Hudi waits for 3.
    assert not [e for e in gw.list_dir(mt.TIMELINE_DIR) if ".clean" in e.name]
    times.append(commit_copy(gw, 11)[0])  # three deltacommits after the second compaction
    timeline = mt.load_timeline(gw)
    cleans = [e.name for e in gw.list_dir(mt.TIMELINE_DIR) if ".clean" in e.name]
    assert len(cleans) == 3  # requested, inflight, completed
    done = next(n for n in cleans if n.endswith(".clean"))
    meta = read_avro_record(gw.read_bytes(f"{mt.TIMELINE_DIR}/{done}"))
    files_meta = meta["partitionMetadata"]["files"]
    assert sorted(files_meta["successDeleteFiles"]) == stale
    assert meta["earliestCommitToRetain"] == first
    assert sorted(e.name for e in gw.list_dir(FILES)) == sorted(
        set(names) - set(stale) | {e.name for e in gw.list_dir(FILES) if times[10] in e.name}
    )
    assert sync.foreign_actions(gw) == []  # the guard keeps a cleaned metadata table
    assert mt.current_slice(gw).base_instant == second
    assert listed(gw) == live(gw)
    # A clean that did not complete is finished by the next call, with the same instant.
    clean_time = done.split("_")[0]
    gw.delete_file(f"{mt.TIMELINE_DIR}/{done}")
    with table_lock(gw):
        assert mclean.clean_if_due(gw) == clean_time
    assert any(
        n.startswith(clean_time) and n.endswith(".clean") for n in timeline_names(gw, clean_time)
    )
    assert listed(gw) == live(gw)
