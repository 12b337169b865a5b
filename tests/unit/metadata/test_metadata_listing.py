"""Reads list files through the metadata table's files partition (hudilite/metadata/listing.py,
the view's ``listing`` hook, read/planner.py), without a JVM.

Storage calls are counted with a wrapping pyarrow filesystem: a snapshot plan of a table
whose files partition is kept lists the same number of directories whatever its number of
partitions, where a storage walk lists one more per partition. The plan reads the same files
and rows as the storage listing (and hudi-rs, which lists storage)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest

from hudilite import config as cfg
from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import listing
from hudilite.metadata import table as mt
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, write_partition_metadata
from hudilite.table.api import Table
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read

V8_COW = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
V9_META = "sample_table/mor/avro/v9_txns_simple_meta.zip"


class CountingHandler(pafs.FileSystemHandler):
    """The local filesystem, counting directory listings (``get_file_info`` of a selector:
    one LIST request on an object store)."""

    def __init__(self) -> None:
        self.fs = pafs.LocalFileSystem()
        self.lists: list[str] = []

    def get_type_name(self) -> str:
        return "counting"

    def normalize_path(self, path: str) -> str:
        return path

    def equals(self, other: Any) -> bool:
        return other is self

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.lists.append(selector.base_dir)
        return self.fs.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.fs.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("not on a test table")

    def delete_file(self, path: str) -> None:
        self.fs.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self.fs.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.fs.copy_file(src, dest)

    def open_input_stream(self, path: str) -> Any:
        return self.fs.open_input_stream(path)

    def open_input_file(self, path: str) -> Any:
        return self.fs.open_input_file(path)

    def open_output_stream(self, path: str, metadata: Any) -> Any:
        return self.fs.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: Any) -> Any:
        return self.fs.open_append_stream(path, metadata=metadata)


def _table(zip_rel: str, tmp_path: Path, *, enable: bool = True) -> Path:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    base = unzip_table(zp, tmp_path)
    gw = FileSystemGateway(str(base))
    if enable:
        stored = properties_file.read_write_defaults(gw)
        stored[cfg.METADATA_ENABLED.name] = "true"
        gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass  # the guard builds the files partition
    return Path(base)


def counting(base: Path) -> tuple[FileSystemGateway, CountingHandler]:
    handler = CountingHandler()
    return FileSystemGateway(str(base), pafs.PyFileSystem(handler)), handler


def add_partitions(gw: FileSystemGateway, names: list[str]) -> None:
    """One completed commit writing a copy of a live base file into each new partition."""
    state = TableState.load(gw)
    src = sorted((p, f) for p, files in mt.live_files(gw, state.config).items() for f in files)[0]
    writer = TimelineWriter(gw, state.config)
    inst = writer.transition_inflight(writer.create_requested(COMMIT))
    stats: dict[str, list[WriteStat]] = {}
    for n, partition in enumerate(names):
        write_partition_metadata(gw, partition, inst.requested_time)
        file_id = f"{n:08d}-0000-0000-0000-000000000000-0"
        name = BaseFileName(file_id, "0-1-0", inst.requested_time, ".parquet").render()
        rel = f"{partition}/{name}"
        shutil.copyfile(gw.abs_path(f"{src[0]}/{src[1]}"), gw.abs_path(rel))
        size = os.path.getsize(gw.abs_path(rel))
        stats[partition] = [
            WriteStat(
                file_id=file_id,
                path=rel,
                partition_path=partition,
                num_writes=1,
                num_inserts=1,
                total_write_bytes=size,
                file_size_in_bytes=size,
            )
        ]
    content = CommitMetadata(partition_to_write_stats=stats, operation_type="INSERT").to_bytes(
        state.config.layout_version
    )
    with table_lock(gw):
        writer.complete(inst, content)


def assert_plans_the_walks_slices(gw: FileSystemGateway, plan: Any) -> None:
    """``plan`` reads the latest slices a storage walk finds, with the same log files."""
    state = TableState.load(gw)
    walk = FileSystemView(gw, state.config, state.timeline).latest_slices()
    assert plan.native_paths == sorted(
        s.base_file.path for s in walk if s.base_file is not None and not s.has_logs
    )
    merged = sorted((s for s in walk if s.has_logs), key=lambda s: s.group_key)
    assert [s.group_key for s in plan.merge_slices] == [s.group_key for s in merged]
    assert [[lf.path for lf in s.log_files] for s in plan.merge_slices] == [
        [lf.path for lf in s.log_files] for s in merged
    ]


def test_snapshot_lists_do_not_grow_with_partitions(tmp_path: Path) -> None:
    base = _table(V8_COW, tmp_path)
    counts: dict[int, tuple[int, int]] = {}
    for round_, new in enumerate((3, 6)):
        gw, handler = counting(base)
        add_partitions(gw, [f"r{round_}_{i}" for i in range(new)])
        state = TableState.load(gw)
        handler.lists.clear()
        plan = plan_snapshot(state)
        through_metadata = list(handler.lists)
        assert through_metadata and all(".hoodie/metadata" in d for d in through_metadata)
        handler.lists.clear()
        walk = FileSystemView(gw, state.config, state.timeline)
        partitions = walk.partitions()
        counts[len(partitions)] = (len(through_metadata), len(handler.lists))
        assert listing.listing_view(state.view).partitions() == partitions
        # The same files as the storage walk, and the rows hudi-rs reads (it lists storage).
        assert_plans_the_walks_slices(gw, plan)
        rows = read_plan_arrow(gw, plan, state.storage_schema)
        assert rows.num_rows == hudi_rs_read(str(base)).num_rows
    (small, (md_small, walk_small)), (large, (md_large, walk_large)) = sorted(counts.items())
    assert (small, large) == (6, 12)
    assert md_small == md_large == 2  # the metadata timeline and the files partition's folder
    assert walk_large - walk_small == large - small  # one LIST per partition folder
    assert md_large < walk_large


def test_a_merge_on_read_snapshot_plans_the_same_slices(tmp_path: Path) -> None:
    base = _table(V9_MOR, tmp_path)
    gw, handler = counting(base)
    state = TableState.load(gw)
    handler.lists.clear()
    plan = plan_snapshot(state)
    assert handler.lists and all(".hoodie/metadata" in d for d in handler.lists)
    # (The fixture's log files are compacted: they sit in older slices, listed by both.)
    assert any(".log." in f for fs in mt.live_files(gw, state.config).values() for f in fs)
    assert_plans_the_walks_slices(gw, plan)


def test_hudis_metadata_table_is_listed_through_when_usable(tmp_path: Path) -> None:
    zp = FIXTURES / V9_META
    if not zp.exists():
        pytest.skip(f"fixture {V9_META} is absent")
    # Hudi's own files partition (with its compaction) serves reads as it is.
    gw, handler = counting(Path(unzip_table(zp, tmp_path)))
    props = properties_file.load(gw)
    assert listing.usable(gw, props) is not None
    state = TableState.load(gw)
    handler.lists.clear()
    plan = plan_snapshot(state)
    assert handler.lists and all(".hoodie/metadata" in d for d in handler.lists)
    assert_plans_the_walks_slices(gw, plan)
    # A metadata timeline with an action hudilite's reader does not follow: storage again.
    gw.write_bytes(f"{mt.TIMELINE_DIR}/20990101000000000.rollback.requested", b"")
    assert listing.usable(gw, props) is None
    fresh = FileSystemView(gw, state.config, state.timeline)
    assert listing.listing_view(fresh) is fresh
    # Without the files partition listed in hoodie.properties: storage.
    assert listing.usable(gw, {**props, properties_file.METADATA_PARTITION_KEYS[0]: ""}) is None


def test_to_arrow_where_prunes_partitions_from_the_files_partition(tmp_path: Path) -> None:
    base = _table(V8_COW, tmp_path)
    gw, handler = counting(base)
    table = Table(None, gw)  # type: ignore[arg-type]
    handler.lists.clear()
    got = table.to_arrow(where="byteField = 10")
    data_dirs = [d for d in handler.lists if "/.hoodie" not in d]
    assert data_dirs == []  # no partition folder listed: pruning and planning both
    expected = hudi_rs_read(str(base))
    keys = sorted(
        r
        for r, b in zip(expected["id"].to_pylist(), expected["byteField"].to_pylist(), strict=True)
        if b == 10
    )
    assert keys and sorted(got["id"].to_pylist()) == keys
