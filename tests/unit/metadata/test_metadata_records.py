"""The files partition's records (hudilite/metadata/records.py, hfiles.py) against the records
Hudi 1.1 wrote in the ``v9_txns_*_meta`` fixtures: every entry decodes and encodes back to
Hudi's exact datum bytes, re-encoded HFiles hold the same entries and file info, and merging
the initial base file with the log blocks gives the records Hudi's own metadata compaction
wrote."""

from __future__ import annotations

import pytest

from hudilite.errors import CorruptFileError
from hudilite.metadata import hfiles
from hudilite.metadata import records as rec
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.hfile import HFileReader
from hudilite.storage.hfile_records import decode_hfile_dicts
from hudilite.storage.log_format import BlockType, read_log_file
from tests.conftest import fixture_id, fixture_zips, unzip_table

META_ZIPS = [z for z in fixture_zips() if z.stem.endswith("_meta") and z.stem.startswith("v9_")]
FILES = ".hoodie/metadata/files"


@pytest.fixture(scope="module", params=META_ZIPS, ids=[fixture_id(z) for z in META_ZIPS])
def meta_table(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> FileSystemGateway:
    dest = tmp_path_factory.mktemp(request.param.stem)
    return FileSystemGateway(str(unzip_table(request.param, dest)))


def _completed(gw: FileSystemGateway) -> dict[str, str]:
    """Requested -> completion time of the metadata table's completed deltacommits."""
    out = {}
    for entry in gw.list_dir(".hoodie/metadata/.hoodie/timeline"):
        stem, _, action = entry.name.partition(".")
        if action == "deltacommit" and "_" in stem:
            requested, completed = stem.split("_")
            out[requested] = completed
    return out


def _blocks(gw: FileSystemGateway) -> list[tuple[str, bytes]]:
    """(instant, content) of every HFILE block of the files partition's log files."""
    out = []
    for entry in gw.list_dir(FILES):
        if ".log." in entry.name:
            for block in read_log_file(gw, entry.path):
                if block.block_type == BlockType.HFILE:
                    assert block.schema == rec.schema_json()  # Hudi's exact schema text
                    out.append((block.instant_time or "", block.content))
    return sorted(out)


def _base_files(gw: FileSystemGateway) -> dict[str, bytes]:
    return {e.name: gw.read_bytes(e.path) for e in gw.list_dir(FILES) if e.name.endswith(".hfile")}


def _info(reader: HFileReader) -> dict[str, object]:
    """File info as compared: HBase 2.4's writer (ours) stores the last key as a KeyValue key
    and averages those, Hudi 1.1's own writer the row alone; both decode to the same row."""
    info = reader.file_info_values()
    del info["hfile.AVG_KEY_LEN"]
    return info


def test_meta_fixtures_present() -> None:
    if not META_ZIPS:
        pytest.skip("../shared/fixtures is absent")
    assert len(META_ZIPS) == 6  # cow and mor: simple, complex, nonpart


def test_every_entry_round_trips_to_hudis_bytes(meta_table: FileSystemGateway) -> None:
    blocks = _blocks(meta_table)
    assert len(blocks) >= 10
    for _, content in blocks:
        for key, value in HFileReader(content).entries():
            record = rec.decode_datum(key.decode(), value)
            assert record.key == key.decode()
            assert rec.encode_datum(record) == value
    for name, content in _base_files(meta_table).items():
        # Initialization writes no _hoodie_file_name; compaction writes the file's name.
        file_name = None if name.endswith("_00000000000000000.hfile") else name
        for key, value in HFileReader(content).entries():
            record = rec.decode_datum(key.decode(), value)
            ours = rec.encode_datum(record, file_name=file_name)
            if file_name is None:
                assert ours == value
            else:
                # Compaction's maps were presized by putAll: another HashMap order, the
                # same entries.
                assert rec.decode_datum(key.decode(), ours) == record
                assert len(ours) == len(value)


def test_records_match_an_independent_decode(meta_table: FileSystemGateway) -> None:
    for _, content in _blocks(meta_table):
        dicts = decode_hfile_dicts(content, rec.schema_json())
        records = hfiles.decode(content)
        assert [r.key for r in records] == [k for k, _ in dicts]
        for record, (_, value) in zip(records, dicts, strict=True):
            assert rec.to_avro(record) == value
            assert value["type"] in (rec.PARTITION_LIST, rec.FILE_LIST)


def test_reencoded_hfiles_hold_the_same_entries(meta_table: FileSystemGateway) -> None:
    for _, content in _blocks(meta_table):
        theirs = HFileReader(content)
        ours = HFileReader(
            hfiles.encode_log_block(
                hfiles.decode(content),
                file_creation_time_ms=int(theirs.file_info_values()["hfile.CREATE_TIME_TS"]),
            )
        )
        assert list(ours.entries()) == list(theirs.entries())
        assert _info(ours) == _info(theirs)
        assert ours.meta_block_names() == theirs.meta_block_names() == []
    for name, content in _base_files(meta_table).items():
        theirs = HFileReader(content)
        file_name = None if name.endswith("_00000000000000000.hfile") else name
        ours = HFileReader(
            hfiles.encode_base_file(
                hfiles.decode(content),
                file_name=file_name,
                file_creation_time_ms=int(theirs.file_info_values()["hfile.CREATE_TIME_TS"]),
            )
        )
        assert _info(ours) == _info(theirs)
        assert ours.meta_block("bloomFilter") == theirs.meta_block("bloomFilter")
        assert [k for k, _ in ours.entries()] == [k for k, _ in theirs.entries()]


def test_merging_logs_gives_hudis_compacted_base_file(meta_table: FileSystemGateway) -> None:
    bases = _base_files(meta_table)
    initial = next(c for n, c in bases.items() if n.endswith("_00000000000000000.hfile"))
    compacted = [n for n in bases if not n.endswith("_00000000000000000.hfile")]
    assert len(compacted) == 1
    at = compacted[0].rsplit("_", 1)[1].removesuffix(".hfile")
    # Hudi compacts before it writes a deltacommit: the logs of the deltacommits completed
    # before the compaction was requested.
    done = _completed(meta_table)
    logs = [hfiles.decode(c) for t, c in _blocks(meta_table) if t in done and done[t] < at]
    merged = rec.merge_all([hfiles.decode(initial), *logs])
    theirs = {r.key: r for r in hfiles.decode(bases[compacted[0]])}
    assert merged.keys() == theirs.keys()
    for key, record in merged.items():
        assert record.files == theirs[key].files, key
    partitions = merged[rec.ALL_PARTITIONS_KEY].live()
    assert set(partitions) == set(merged) - {rec.ALL_PARTITIONS_KEY}


def test_merge_rules() -> None:
    a = rec.partition_files_record("p", {"f1": 10, "f2": 5})
    b = rec.partition_files_record("p", {"f1": 7, "f3": 1}, deleted=["f2", "f9"])
    merged = rec.merge(a, b)
    # larger size wins; a listed file's deletion drops it; an unlisted one stays a tombstone
    assert merged.files == {
        "f1": rec.FileInfo(10),
        "f3": rec.FileInfo(1),
        "f9": rec.FileInfo(0, True),
    }
    assert merged.live() == {"f1": 10, "f3": 1}
    again = rec.merge(merged, rec.partition_files_record("p", deleted=["f9"]))
    assert again.files["f9"] == rec.FileInfo(0, True)
    with pytest.raises(CorruptFileError, match="cannot merge record 'q'"):
        rec.merge(a, rec.partition_files_record("q", {"x": 1}))
    listing = rec.partition_list_record(["", "a=1"])
    assert listing.key == "__all_partitions__" and listing.type == rec.PARTITION_LIST
    assert listing.files == {".": rec.FileInfo(0), "a=1": rec.FileInfo(0)}
    assert rec.partition_path(".") == "" and rec.partition_id("") == "."


def test_java_hash_order() -> None:
    assert rec.java_string_hash("hello") == 99162322
    # Hudi's own order for these three partitions (v9_txns_cow_simple_meta's first commit)
    assert rec.java_hash_order(["region=us", "region=apac", "region=eu"]) == [
        "region=eu",
        "region=us",
        "region=apac",
    ]


def test_other_record_types_are_refused() -> None:
    value = rec.to_avro(rec.partition_files_record("p", {"f": 1}))
    value["type"] = 5
    with pytest.raises(CorruptFileError, match="record 'p' of type 5 is not a files-partition"):
        rec.from_avro(value)
