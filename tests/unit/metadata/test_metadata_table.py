"""The metadata table's layout and initialization (hudilite/metadata/table.py): the files
partition built from a storage listing, compared with the metadata tables Hudi 1.1 wrote.

hudi==0.5.0 does not list files through a metadata table (its reads are the same with the
fixtures' ``.hoodie/metadata`` deleted), so these tests read the files partition with
hudilite's reader, which is checked against Hudi's own metadata tables first."""

from __future__ import annotations

import pytest

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.metadata import convert, hfiles
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.log_format import BlockType, block_deletes, read_log_file
from hudilite.tablestate import properties_file
from hudilite.timeline.timeline import Timeline
from tests.conftest import FIXTURES, fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read

META_ZIPS = [z for z in fixture_zips() if z.stem.endswith("_meta") and z.stem.startswith("v9_")]
#: v8 and v9 tables without a metadata table, COW and MOR, partitioned or not.
PLAIN = [
    "sample_table/cow/v8_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v8_nonpartitioned.zip",
    "sample_table/cow/v9_txns_simple_nometa.zip",
    "sample_table/mor/avro/v9_txns_simple_nometa.zip",
]


def _gw(zip_rel: str, tmp_path) -> FileSystemGateway:  # type: ignore[no-untyped-def]
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    return FileSystemGateway(str(unzip_table(zp, tmp_path)))


def _config(gw: FileSystemGateway) -> cfg.TableConfig:
    return cfg.TableConfig.from_properties(properties_file.load(gw))


@pytest.mark.parametrize("zp", META_ZIPS, ids=[fixture_id(z) for z in META_ZIPS])
def test_storage_listing_equals_hudis_files_partition(zp, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    config = _config(gw)
    theirs = mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, config)))
    assert theirs == mt.live_files(gw, config)
    assert sum(len(f) for f in theirs.values()) >= 3
    # Our metadata table's hoodie.properties is Hudi's, key for key.
    hudis = properties_file.decode(gw.read_bytes(mt.PROPERTIES))
    assert mt.metadata_properties(properties_file.load(gw)) == hudis


@pytest.mark.parametrize("zip_rel", [*PLAIN, "sample_table/cow/v9_txns_complex_meta.zip"])
def test_initialize_lists_the_live_files(zip_rel, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = _gw(zip_rel, tmp_path)
    rows_before = hudi_rs_read(gw.abs_path("")).num_rows
    config = _config(gw)
    expected = mt.live_files(gw, config)
    result = mt.initialize(gw)
    assert result.listing == expected
    assert result.base_file == "files-0000-0_0-0-0_00000000000000000.hfile"
    # readers are told, and the data table's config still loads
    props = properties_file.load(gw)
    assert props["hoodie.table.metadata.partitions"] == "files"
    assert _config(gw).table_version == config.table_version
    timeline = sorted(e.name for e in gw.list_dir(mt.TIMELINE_DIR))
    assert timeline[:2] == [
        "00000000000000000.deltacommit.inflight",
        "00000000000000000.deltacommit.requested",
    ]
    assert timeline[2].startswith("00000000000000000_") and timeline[2].endswith(".deltacommit")
    assert len(timeline) == 3
    files = sorted(e.name for e in gw.list_dir(".hoodie/metadata/files"))
    assert files == [
        ".files-0000-0_00000000000000000.log.1_0-0-0",
        ".hoodie_partition_metadata",
        result.base_file,
    ]
    (block,) = read_log_file(gw, f".hoodie/metadata/files/{files[0]}")
    assert block.block_type == BlockType.DELETE and block_deletes(block) == []
    mdt_props = properties_file.decode(gw.read_bytes(mt.PROPERTIES))
    assert mdt_props["hoodie.table.version"] == str(config.table_version)
    assert mdt_props["hoodie.table.name"] == f"{config.name}_metadata"
    assert properties_file.problem(mdt_props) is None  # its checksum holds
    # The files partition reads back as the listing, partition list included.
    records = mt.read_files_partition(gw, Timeline.load(gw, config))
    assert mt.listing_of(records) == expected
    assert set(records[rec.ALL_PARTITIONS_KEY].live()) == {rec.partition_id(p) for p in expected}
    base = hfiles.decode(gw.read_bytes(f".hoodie/metadata/files/{result.base_file}"))
    assert [r.key for r in base] == sorted(r.key for r in base)
    assert hudi_rs_read(gw.abs_path("")).num_rows == rows_before


def test_initialize_leaves_out_uncommitted_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = _gw("sample_table/cow/v9_txns_simple_nometa.zip", tmp_path)
    committed = mt.live_files(gw, _config(gw))
    partition = sorted(committed)[0]
    some = sorted(committed[partition])[0]
    # a file of a write that never completed (same file id, a later instant)
    stray = some.rsplit("_", 1)[0] + "_29990101000000000.parquet"
    gw.write_bytes(f"{partition}/{stray}", gw.read_bytes(f"{partition}/{some}"))
    result = mt.initialize(gw)
    assert result.listing == committed
    assert stray not in mt.listing_of(mt.read_files_partition(gw))[partition]


def test_a_file_left_out_is_missing_from_the_listing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = _gw("sample_table/cow/v8_simplekeygen_nonhivestyle.zip", tmp_path)
    full = mt.live_files(gw, _config(gw))
    partition = sorted(full)[0]
    dropped = sorted(full[partition])[0]
    partial = {p: {n: s for n, s in f.items() if n != dropped} for p, f in full.items()}
    mt.initialize(gw, listing=partial)
    listed = mt.listing_of(mt.read_files_partition(gw))
    assert dropped not in listed[partition]
    assert listed == partial != full
    # rebuilding from storage puts it back (the old metadata table is replaced)
    mt.initialize(gw)
    assert mt.listing_of(mt.read_files_partition(gw)) == full


def test_version_6_is_refused_by_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = _gw("sample_table/cow/v6_nonpartitioned.zip", tmp_path)
    before = gw.read_bytes(properties_file.PROPERTIES_FILE)
    with pytest.raises(
        ConfigError, match="only on table versions 8 and 9; this table is version 6"
    ):
        mt.initialize(gw)
    assert not gw.exists(mt.METADATA_DIR)
    assert gw.read_bytes(properties_file.PROPERTIES_FILE) == before


def test_a_deltacommit_adds_an_instants_files_once_it_completes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    gw = _gw("sample_table/mor/avro/v9_txns_simple_nometa.zip", tmp_path)
    config = _config(gw)
    timeline = Timeline.load(gw, config)
    last = [i for i in timeline.completed() if i.action == "deltacommit"][-1]
    metadata = timeline.commit_metadata(last)
    full = mt.live_files(gw, config)
    # the listing before the last deltacommit: without the files it wrote
    written = {
        (p, s.path.rsplit("/", 1)[-1])
        for p, st in metadata.partition_to_write_stats.items()
        for s in st
    }
    before = {p: {n: z for n, z in f.items() if (p, n) not in written} for p, f in full.items()}
    assert before != full
    mt.initialize(gw, listing=before)
    mt.write_deltacommit(gw, last.requested_time, convert.commit_records(metadata))
    assert mt.listing_of(mt.read_files_partition(gw, timeline)) == full
    # a deltacommit whose data instant never completed is read by no one who checks the
    # data timeline
    pending = "29990101000000000"
    partition = sorted(full)[0]
    mt.write_deltacommit(gw, pending, [rec.partition_files_record(partition, {"ghost.parquet": 1})])
    assert mt.listing_of(mt.read_files_partition(gw, timeline)) == full
    unchecked = mt.listing_of(mt.read_files_partition(gw))
    assert unchecked[partition] == {**full[partition], "ghost.parquet": 1}
