"""A data instant's files-partition records (hudilite/metadata/convert.py): every commit,
deltacommit, compaction, overwrite and clustering of Hudi 1.1's ``v9_txns_*_meta`` fixtures
converts to exactly the entries (keys and Avro datum bytes) Hudi wrote in the metadata
table's log block of that instant; partition deletion and clean records follow Hudi's
rules."""

from __future__ import annotations

import pytest

from hudilite import config as cfg
from hudilite.metadata import convert
from hudilite.metadata import records as rec
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.hfile import HFileReader
from hudilite.storage.log_format import BlockType, read_log_file
from hudilite.tablestate import properties_file
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline
from tests.conftest import fixture_id, fixture_zips, unzip_table

META_ZIPS = [z for z in fixture_zips() if z.stem.endswith("_meta") and z.stem.startswith("v9_")]
WRITES = ("commit", "deltacommit", "replacecommit")


@pytest.mark.parametrize("zp", META_ZIPS, ids=[fixture_id(z) for z in META_ZIPS])
def test_commits_convert_to_hudis_log_block_entries(zp, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    timeline = Timeline.load(gw, cfg.TableConfig.from_properties(properties_file.load(gw)))
    logs = {
        e.name.split("_")[1].split(".")[0]: e.path
        for e in gw.list_dir(".hoodie/metadata/files")
        if ".log." in e.name
    }
    checked = set()
    for instant in timeline.completed():
        if instant.action not in WRITES:
            continue
        ours = convert.commit_records(timeline.commit_metadata(instant))
        (block,) = [
            b
            for b in read_log_file(gw, logs[instant.requested_time])
            if b.block_type == BlockType.HFILE
        ]
        theirs = dict(HFileReader(block.content).entries())
        assert {r.key.encode(): rec.encode_datum(r) for r in ours} == theirs, instant
        checked.add(instant.action)
    assert "replacecommit" in checked and len(checked) >= 2


def _stat(partition: str, name: str, size: int) -> WriteStat:
    path = f"{partition}/{name}" if partition else name
    return WriteStat(file_id="f", path=path, partition_path=partition, file_size_in_bytes=size)


def test_delete_partition_and_repeated_files() -> None:
    metadata = CommitMetadata(
        partition_to_write_stats={
            "a=1": [_stat("a=1", "x.parquet", 5), _stat("a=1", "x.parquet", 9)],
            "": [_stat("", "y.parquet", 3)],
        },
        operation_type="DELETE_PARTITION",
        partition_to_replace_file_ids={"b=2": ["g1"]},
    )
    records = {r.key: r for r in convert.commit_records(metadata)}
    assert records["a=1"].files == {"x.parquet": rec.FileInfo(9)}
    assert records["."].files == {"y.parquet": rec.FileInfo(3)}
    assert records["__all_partitions__"].files == {
        "a=1": rec.FileInfo(0),
        ".": rec.FileInfo(0),
        "b=2": rec.FileInfo(0, True),
    }


def test_clean_records() -> None:
    clean = {
        "partitionMetadata": {
            "a=1": {"deletePathPatterns": ["f1.parquet", ".f2_1.log.1_0-0-0"]},
            "b=2": {"deletePathPatterns": ["f3.parquet"], "isPartitionDeleted": True},
        }
    }
    records = {r.key: r for r in convert.clean_records(clean)}
    assert records["a=1"].files == {
        "f1.parquet": rec.FileInfo(0, True),
        ".f2_1.log.1_0-0-0": rec.FileInfo(0, True),
    }
    assert records["b=2"].live() == {}
    assert records["__all_partitions__"].files == {"b=2": rec.FileInfo(0, True)}
