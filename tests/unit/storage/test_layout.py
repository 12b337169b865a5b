"""File names and partition metadata: parse/render against every real fixture file."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hudilite.config import parse_properties
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import (
    PARTITION_METADATA_FILE,
    BaseFileName,
    LogFileName,
    data_file_path,
    is_partition_dir,
    is_partition_metadata_name,
    make_write_token,
    new_file_id,
    parse_data_file_name,
    partition_depth,
    read_partition_metadata,
    render_partition_metadata,
    split_data_file_path,
    write_partition_metadata,
)

ALL_FIXTURES = [
    "sample_table/cow/v6_complexkeygen_hivestyle.zip",
    "sample_table/cow/v6_empty.zip",
    "sample_table/cow/v6_nonpartitioned.zip",
    "sample_table/cow/v6_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v8_nonpartitioned.zip",
    "sample_table/cow/v8_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v9_txns_simple_nometa.zip",
    "sample_table/mor/avro/v9_txns_simple_nometa.zip",
    "sample_table/mor/parquet/v6_nonpartitioned.zip",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip",
]


def _data_files(base: Path) -> list[Path]:
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file() and ".hoodie" not in p.relative_to(base).parts[:1] and p.name != ".DS_Store"
    )


def test_base_file_name_parse_render() -> None:
    name = "a22e8257-e249-45e9-ba46-115bc85adcba-0_1-140-199_20240418173213674.parquet"
    parsed = BaseFileName.parse(name)
    assert parsed == BaseFileName(
        "a22e8257-e249-45e9-ba46-115bc85adcba-0", "1-140-199", "20240418173213674", ".parquet"
    )
    assert parsed is not None and parsed.render() == name and str(parsed) == name


def test_log_file_name_parse_render() -> None:
    name = ".26e33b7b-aa9f-4f2e-b683-a90ef0d5861d-0_20250121000547796.log.1_0-33-47"
    parsed = LogFileName.parse(name)
    assert parsed == LogFileName(
        "26e33b7b-aa9f-4f2e-b683-a90ef0d5861d-0", "20250121000547796", 1, "0-33-47"
    )
    assert parsed is not None and parsed.render() == name
    nxt = parsed.next_version("1-2-3")
    assert nxt.render() == (".26e33b7b-aa9f-4f2e-b683-a90ef0d5861d-0_20250121000547796.log.2_1-2-3")
    assert parsed.sort_key() < nxt.sort_key()


@pytest.mark.parametrize(
    "name",
    [
        ".abc-0_20240101000000000.log.12",  # legacy, no write token
        ".abc-0_20240101000000000.log.3_0-1-2.cdc",
        ".abc-0_20240101000000000.archive.1_0-1-2",
    ],
)
def test_log_file_name_variants_round_trip(name: str) -> None:
    parsed = LogFileName.parse(name)
    assert parsed is not None
    assert parsed.render() == name


@pytest.mark.parametrize(
    "name",
    [
        ".hoodie_partition_metadata",
        ".hoodie_partition_metadata.parquet",
        "hoodie.properties",
        "20240101000000000.commit",
        ".f.parquet.0a1b.tmp",
        "abc-0_0-1-2_2024.parquet.crc",
        "nounderscore.parquet",
        ".DS_Store",
    ],
)
def test_non_data_names_are_rejected(name: str) -> None:
    assert BaseFileName.parse(name) is None
    assert LogFileName.parse(name) is None
    assert parse_data_file_name(name) is None


@pytest.mark.parametrize("rel", ALL_FIXTURES, ids=lambda r: r.removesuffix(".zip"))
def test_every_fixture_data_file_round_trips(
    shared_fixture: Callable[[str], Path], rel: str
) -> None:
    base = shared_fixture(rel)
    counts = {"base": 0, "log": 0, "meta": 0}
    for path in _data_files(base):
        if is_partition_metadata_name(path.name):
            counts["meta"] += 1
            continue
        parsed = parse_data_file_name(path.name)
        assert parsed is not None, path.name
        assert parsed.render() == path.name
        assert re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-\d+", parsed.file_id)
        if isinstance(parsed, BaseFileName):
            counts["base"] += 1
            assert re.fullmatch(r"\d+-\d+-\d+", parsed.write_token)
            assert len(parsed.instant_time) == 17
        else:
            counts["log"] += 1
            assert parsed.version >= 1
    # v6_empty has no data at all; every other table has base files and partition metadata.
    if "v6_empty" in rel:
        assert counts == {"base": 0, "log": 0, "meta": 0}
    else:
        assert counts["base"] > 0 and counts["meta"] > 0
    if "/mor/" in rel:
        assert counts["log"] > 0


def test_new_file_id_and_write_token() -> None:
    fid = new_file_id()
    assert re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-0", fid)
    assert new_file_id() != fid
    assert make_write_token(1, 140, 199) == "1-140-199"
    name = BaseFileName(fid, make_write_token(0, 1, 2), "20240101000000000").render()
    assert BaseFileName.parse(name) == BaseFileName(fid, "0-1-2", "20240101000000000")
    with pytest.raises(ValueError):
        make_write_token(-1, 0, 0)


def test_paths_and_depth() -> None:
    b = BaseFileName("f-0", "0-1-2", "20240101000000000")
    assert data_file_path("", b) == "f-0_0-1-2_20240101000000000.parquet"
    assert data_file_path("city=sf", b.render()) == "city=sf/f-0_0-1-2_20240101000000000.parquet"
    assert split_data_file_path("2023/04/01/x.parquet") == ("2023/04/01", "x.parquet")
    assert split_data_file_path("x.parquet") == ("", "x.parquet")
    assert [partition_depth(p) for p in ("", "a=1", "2023/04/01")] == [0, 1, 3]


def test_render_partition_metadata_exact() -> None:
    now = datetime(2025, 7, 13, 1, 5, 36, tzinfo=UTC)
    assert render_partition_metadata("20250713010535797", 0, now) == (
        "#partition metadata\n"
        "#Sun Jul 13 01:05:36 UTC 2025\n"
        "commitTime=20250713010535797\n"
        "partitionDepth=0\n"
    )


def test_write_partition_metadata_only_when_missing(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "t"))
    assert not is_partition_dir(gw, "2023/04/01")
    assert write_partition_metadata(gw, "2023/04/01", "20240101000000000") is True
    assert write_partition_metadata(gw, "2023/04/01", "20240202000000000") is False
    assert read_partition_metadata(gw, "2023/04/01") == {
        "commitTime": "20240101000000000",
        "partitionDepth": "3",
    }
    assert is_partition_dir(gw, "2023/04/01")
    assert not is_partition_dir(gw, "2023/04")
    assert write_partition_metadata(gw, "", "20240101000000000", depth=0) is True
    assert (tmp_path / "t" / PARTITION_METADATA_FILE).exists()
    assert read_partition_metadata(gw, "nope") is None


def test_reads_java_partition_metadata(shared_fixture: Callable[[str], Path]) -> None:
    base = shared_fixture("sample_table/cow/v6_complexkeygen_hivestyle.zip")
    gw = FileSystemGateway(str(base))
    parts = sorted(str(p.parent.relative_to(base)) for p in base.rglob(PARTITION_METADATA_FILE))
    assert parts and all(re.fullmatch(r"byteField=\d+/shortField=\d+", p) for p in parts)
    for part in parts:
        assert is_partition_dir(gw, part)
        meta = read_partition_metadata(gw, part)
        assert meta is not None
        assert meta["partitionDepth"] == "2"
        assert re.fullmatch(r"\d{17}", meta["commitTime"])
        on_disk = parse_properties((base / part / PARTITION_METADATA_FILE).read_text("latin-1"))
        assert meta == on_disk
