"""The metadata table kept by every action (hudilite/metadata/sync.py, the guard's keep path),
without a JVM: engine clustering, clean, rollback and restore on Hudi-written v8
and v9 tables, and commits completed through the timeline writer itself.

After each action the files partition, read through hudilite's reader (base file + the log
blocks of completed metadata deltacommits whose data instant completed), equals the live data
files of a storage listing, and hudi-rs reads the rows it read before (the actions here do
not change rows). hudi==0.5.0 lists storage, not the metadata table, so it cannot check the
listing itself; hudilite's reader agrees with the metadata tables Hudi wrote
(tests/unit/metadata/test_metadata_table.py)."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.clean import clean
from hudilite.services.clustering import cluster
from hudilite.services.restore import restore
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import create_savepoint
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, Instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write import metadata_guard as mg
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read

V8_COW = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
V9_META = "sample_table/cow/v9_txns_simple_meta.zip"


def _gw(zip_rel: str, tmp_path: Path, *, enable: bool = True) -> FileSystemGateway:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    if enable:
        stored = properties_file.read_write_defaults(gw)
        stored[cfg.METADATA_ENABLED.name] = "true"
        gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    return gw


def _config(gw: FileSystemGateway) -> cfg.TableConfig:
    return cfg.TableConfig.from_properties(properties_file.load(gw))


def listed(gw: FileSystemGateway) -> dict[str, dict[str, int]]:
    """The files partition as hudilite's reader merges it, filtered by the data timeline."""
    return mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, _config(gw))))


def live(gw: FileSystemGateway) -> dict[str, dict[str, int]]:
    return mt.live_files(gw, _config(gw))


def rows(gw: FileSystemGateway) -> list[tuple]:
    table = hudi_rs_read(gw.abs_path(""))
    cols = [c for c in table.column_names if not c.startswith("_hoodie")]
    return sorted(tuple(str(v) for v in r.values()) for r in table.select(cols).to_pylist())


def guard(gw: FileSystemGateway) -> None:
    with table_lock(gw):
        pass


def fake_commit(gw: FileSystemGateway, *, complete: bool = True) -> tuple[Instant, bytes, str]:
    """A commit adding a copy of an existing base file as a new file group (as a write would:
    requested, inflight, the file, completed with its write stat). Returns the inflight
    instant, its content and the file's table-relative path."""
    config = _config(gw)
    view_files = sorted(
        (p, n) for p, files in live(gw).items() for n in files if n.endswith(".parquet")
    )
    partition, name = view_files[0]
    src = f"{partition}/{name}" if partition else name
    writer = TimelineWriter(gw, config)
    inst = writer.transition_inflight(writer.create_requested(COMMIT))
    parsed = parse_data_file_name(name)
    assert isinstance(parsed, BaseFileName)
    file_id = "f" * 8 + "-0000-0000-0000-000000000000-0"
    new = BaseFileName(file_id, "0-1-0", inst.requested_time, ".parquet").render()
    rel = f"{partition}/{new}" if partition else new
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
    if complete:
        with table_lock(gw):
            writer.complete(inst, content)
    return inst, content, rel


@pytest.mark.parametrize("zip_rel", [V8_COW, V9_MOR])
def test_the_guard_builds_the_files_partition_and_commits_keep_it(
    zip_rel: str, tmp_path: Path
) -> None:
    gw = _gw(zip_rel, tmp_path)
    before = rows(gw)
    guard(gw)
    assert sync.listed_partitions(properties_file.load(gw)) == ["files"]
    assert listed(gw) == live(gw)
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT]
    with table_lock(gw):
        assert mg.apply_guard(gw) is False  # kept as it is
    inst, _, rel = fake_commit(gw)
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT, inst.requested_time]
    got = listed(gw)
    assert got == live(gw)
    partition, name = rel.rsplit("/", 1) if "/" in rel else ("", rel)
    assert name in got[partition]
    # The copy is a second file group of the same keys: hudi-rs reads both.
    assert len(rows(gw)) == len(before) + _rows_in(gw, rel)


def _rows_in(gw: FileSystemGateway, rel: str) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(gw.abs_path(rel)).num_rows


def test_without_the_option_the_guard_removes_the_metadata_table_as_before(tmp_path: Path) -> None:
    gw = _gw(V9_META, tmp_path, enable=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mg.MetadataTableRemoved)
        guard(gw)
    assert not gw.exists(mt.METADATA_DIR)
    assert sync.listed_partitions(properties_file.load(gw)) == []
    fake_commit(gw)
    assert not gw.exists(mt.METADATA_DIR)  # nothing maintained, nothing written


def test_partitions_hudilite_cannot_keep_are_dropped_and_files_rebuilt(tmp_path: Path) -> None:
    gw = _gw(V9_META, tmp_path)
    before = rows(gw)
    listed_before = sync.listed_partitions(properties_file.load(gw))
    assert "files" in listed_before and len(listed_before) > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", mg.MetadataTableRemoved)  # nothing is removed whole
        guard(gw)
    props = properties_file.load(gw)
    assert sync.listed_partitions(props) == ["files"]
    assert props.get(cfg.METADATA_PARTITION_KEYS[1], "") == ""
    folders = sorted(e.name for e in gw.list_dir(mt.METADATA_DIR) if e.is_dir)
    assert folders == [".hoodie", "files"]
    assert not gw.exists(mg.DEFAULT_INDEX_DEFS)
    # Hudi's own metadata compaction is read (tests/unit/metadata/test_metadata_compact.py), its
    # other table services would be rebuilt from a listing: none is left.
    assert sync.foreign_actions(gw) == []
    assert listed(gw) == live(gw)
    assert rows(gw) == before


def test_a_stray_metadata_deltacommit_is_invisible_then_rolled_back(tmp_path: Path) -> None:
    gw = _gw(V9_COW, tmp_path)
    guard(gw)
    before = listed(gw)
    inst, content, rel = fake_commit(gw, complete=False)
    # What a crash between the two completions leaves: the metadata deltacommit only.
    sync.before_complete(gw, inst, content)
    assert inst.requested_time in mt.completed_deltacommits(gw)
    assert listed(gw) == before == live(gw)  # the reader checks the data timeline
    unfiltered = mt.listing_of(mt.read_files_partition(gw))
    assert rel.rsplit("/", 1)[-1] in unfiltered[rel.rsplit("/", 1)[0]]
    guard(gw)  # the next writer, under the table lock
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT]
    assert not [e for e in gw.list_dir(f"{mt.METADATA_DIR}/files") if inst.requested_time in e.name]
    # The failed write's rollback writes nothing to the metadata table (Hudi's rule).
    rollback_instant(TableState.load(gw), inst.requested_time)
    assert not gw.exists(rel)
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT]
    assert listed(gw) == live(gw) == before


def test_rolling_back_a_completed_commit_rolls_back_its_metadata_deltacommit(
    tmp_path: Path,
) -> None:
    gw = _gw(V8_COW, tmp_path)
    guard(gw)
    before = listed(gw)
    inst, _, rel = fake_commit(gw)
    assert listed(gw) != before
    rollback_instant(TableState.load(gw), inst.requested_time)
    assert not gw.exists(rel)
    assert inst.requested_time not in sync.deltacommit_times(gw)
    assert listed(gw) == live(gw) == before


def test_rolling_back_a_commit_older_than_the_metadata_table_deletes_its_files(
    tmp_path: Path,
) -> None:
    gw = _gw(V8_COW, tmp_path, enable=False)
    inst, _, rel = fake_commit(gw)  # before the metadata table exists
    stored = {cfg.METADATA_ENABLED.name: "true"}
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    guard(gw)
    partition, name = rel.rsplit("/", 1)
    assert name in listed(gw)[partition]
    result = rollback_instant(TableState.load(gw), inst.requested_time)
    assert name not in listed(gw)[partition]
    assert listed(gw) == live(gw)
    assert result.rollback_instant in sync.deltacommit_times(gw)


def test_clustering_and_clean_keep_the_files_partition(tmp_path: Path) -> None:
    # (Compaction is covered by tests/spark/test_metadata_table_writes.py: the fixtures'
    # log files are all compacted, and only a Spark write makes new ones.)
    gw = _gw(V9_MOR, tmp_path)
    before = rows(gw)
    guard(gw)
    small = {"hoodie.clustering.plan.strategy.small.file.limit": str(10**9)}
    clustered = cluster(TableState.load(gw), small)
    assert clustered and all(r.instant_time in mt.completed_deltacommits(gw) for r in clustered)
    assert listed(gw) == live(gw)
    assert rows(gw) == before
    cleaned = clean(TableState.load(gw), {"hoodie.cleaner.commits.retained": "1"})
    assert cleaned is not None and cleaned.instant_time in mt.completed_deltacommits(gw)
    assert listed(gw) == live(gw)
    assert rows(gw) == before


def test_restore_rebuilds_the_files_partition(tmp_path: Path) -> None:
    gw = _gw(V9_COW, tmp_path)
    guard(gw)
    before, files_before = rows(gw), listed(gw)
    saved = create_savepoint(TableState.load(gw))
    fake_commit(gw)
    fake_commit(gw)
    assert listed(gw) != files_before
    restore(TableState.load(gw), saved.instant_time)
    assert listed(gw) == live(gw) == files_before
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT]
    assert rows(gw) == before


def test_the_option_on_a_version_6_table_is_refused_by_name_and_treated_as_off(
    tmp_path: Path,
) -> None:
    gw = _gw("sample_table/cow/v6_nonpartitioned.zip", tmp_path)
    with pytest.warns(mg.MetadataTableUnsupported) as caught:
        guard(gw)
    (warning,) = caught
    assert str(warning.message) == (
        f"hoodie.metadata.enable=true has no effect on {gw.uri('')}: hudilite keeps a metadata "
        "table on table versions 8 and 9 only, this table is version 6 (upgrade it, or unset "
        "the option)"
    )
    assert not gw.exists(mt.METADATA_DIR)
    fake_commit(gw)
    assert not gw.exists(mt.METADATA_DIR)
