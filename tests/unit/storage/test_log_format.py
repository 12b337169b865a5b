"""Hudi log files: framing, block contents, corrupt-block recovery, fixtures and hudi-rs interop."""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudilite.errors import CorruptFileError, HudiliteError, SchemaError
from hudilite.schema import arrow_to_avro_schema, to_storage_schema, with_meta_columns
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import LogFileName
from hudilite.storage.log_blocks import (
    DELETE_RECORD_LIST_SCHEMA,
    decode_deletes,
    encode_avro_records,
    encode_deletes,
)
from hudilite.storage.log_format import (
    MAGIC,
    BlockType,
    DeleteKey,
    HeaderKey,
    LogBlock,
    LogFileExistsError,
    avro_data_block,
    block_deletes,
    block_records,
    delete_block,
    header_keys_for,
    is_natural_order,
    parquet_data_block,
    read_log_file,
    rollback_block,
    write_log_file,
)
from tests.conftest import FIXTURES, fixture_zips
from tests.helpers import hudi_rs_read

IT, SC = HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA

# --- the fixture logs, block by block --------------------------------------------------------
# (log file, block type, header key order, instant, record/delete keys, instant before the
# block at which deleted keys still exist). Java writes headers in HashMap order, which is
# why the v6 delete block has SCHEMA first.
TRIPS_8I1U = "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip"
TRIPS_8I3D = "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip"
TXNS_V9 = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
PARQ_NP = "sample_table/mor/parquet/v6_nonpartitioned.zip"
# Hudi 1.1 with its metadata table on (the data table's logs; the metadata table's own are
# HFile blocks, see tests/unit/storage/test_hfile.py).
META_SIMPLE = "sample_table/mor/avro/v9_txns_simple_meta.zip"
META_COMPLEX = "sample_table/mor/avro/v9_txns_complex_meta.zip"
META_NONPART = "sample_table/mor/avro/v9_txns_nonpart_meta.zip"
PARQ_SK = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip"
LogSpec = tuple[str, BlockType, list[HeaderKey], str, list[str], str | None]
FIXTURE_LOGS: dict[str, list[LogSpec]] = {
    TRIPS_8I1U: [
        ("city=san_francisco/.d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808"
         ".log.1_0-26-85", BlockType.AVRO_DATA, [IT, SC], "20250331030645735",
         ["9909a8b1-2d15-4d3d-8ec9-efc48c536a00"], None),
    ],
    TRIPS_8I3D: [
        ("city=san_francisco/.6d3d1d6e-2298-4080-a0c1-494877d6f40a-0_20250618054711154"
         ".log.1_0-26-85", BlockType.DELETE, [SC, IT], "20250618054714114",
         ["e96c4396-3fad-413a-a942-4cb36106d721", "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
          "334e26e9-8355-45cc-97c6-c31daf0df330"], "20250618054711154"),
    ],
    TXNS_V9: [
        ("region=us/.db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_20260307135830801.log.1_0-10-23",
         BlockType.AVRO_DATA, [IT, SC], "20260307135830801", ["TXN-001"], None),
        ("region=us/.db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_20260307135832616.log.1_0-17-38",
         BlockType.DELETE, [IT, SC], "20260307135832616", ["TXN-002"], "20260307135830801"),
        ("region=eu/.c06fe141-9f11-46fb-aa70-d7f9d2dcca2f-0_20260307135833781.log.1_0-24-53",
         BlockType.AVRO_DATA, [IT, SC], "20260307135833781", ["TXN-005"], None),
        ("region=eu/.c06fe141-9f11-46fb-aa70-d7f9d2dcca2f-0_20260307135834808.log.1_0-31-68",
         BlockType.DELETE, [IT, SC], "20260307135834808", ["TXN-005"], "20260307135833781"),
        ("region=apac/.9c6ed25b-6c9d-4793-ad27-1c8518086b6a-0_20260307135835748.log.1_0-38-83",
         BlockType.AVRO_DATA, [IT, SC], "20260307135835748", ["TXN-007"], None),
    ],
    META_SIMPLE: [
        ("region=apac/.c3b646cc-8602-47c5-b010-3fe002241298-0_20260307162611195.log.1_0-157-346",
         BlockType.AVRO_DATA, [SC, IT], "20260307162611195", ["TXN-007"], None),
        ("region=eu/.c923cb31-a2d3-49c6-8f47-4be96502c239-0_20260307162607806.log.1_0-104-236",
         BlockType.AVRO_DATA, [SC, IT], "20260307162607806", ["TXN-005"], None),
        ("region=eu/.c923cb31-a2d3-49c6-8f47-4be96502c239-0_20260307162609526.log.1_0-130-290",
         BlockType.DELETE, [SC, IT], "20260307162609526", ["TXN-005"], "20260307162607806"),
        ("region=us/.3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162604102.log.1_0-52-126",
         BlockType.AVRO_DATA, [SC, IT], "20260307162604102", ["TXN-001"], None),
        ("region=us/.3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162606034.log.1_0-78-180",
         BlockType.DELETE, [SC, IT], "20260307162606034", ["TXN-002"], "20260307162604102"),
    ],
    META_COMPLEX: [
        ("region=apac/.dcae9272-b2c6-4f9d-b5b0-760a64ba5c3c-0_20260307162641811.log.1_0-157-346",
         BlockType.AVRO_DATA, [IT, SC], "20260307162641811", ["txn_id:TXN-007,account_id:ACC-E"],
         None),
        ("region=eu/.5dc94328-3d16-4d4f-bdf7-977f328da8fb-0_20260307162638495.log.1_0-104-236",
         BlockType.AVRO_DATA, [IT, SC], "20260307162638495", ["txn_id:TXN-005,account_id:ACC-D"],
         None),
        ("region=eu/.5dc94328-3d16-4d4f-bdf7-977f328da8fb-0_20260307162640152.log.1_0-130-290",
         BlockType.DELETE, [IT, SC], "20260307162640152", ["txn_id:TXN-005,account_id:ACC-D"],
         "20260307162638495"),
        ("region=us/.39cc539f-61e9-4996-8096-4d89715c4142-0_20260307162634665.log.1_0-52-126",
         BlockType.AVRO_DATA, [IT, SC], "20260307162634665", ["txn_id:TXN-001,account_id:ACC-A"],
         None),
        ("region=us/.39cc539f-61e9-4996-8096-4d89715c4142-0_20260307162636727.log.1_0-78-180",
         BlockType.DELETE, [IT, SC], "20260307162636727", ["txn_id:TXN-002,account_id:ACC-B"],
         "20260307162634665"),
    ],
    META_NONPART: [
        (".0ad34fbd-dd1a-4a9e-b367-63404003fa9c-0_20260307162703640.log.1_0-39-86",
         BlockType.AVRO_DATA, [SC, IT], "20260307162703640", ["TXN-001"], None),
        (".0ad34fbd-dd1a-4a9e-b367-63404003fa9c-0_20260307162705410.log.1_0-57-121",
         BlockType.DELETE, [SC, IT], "20260307162705410", ["TXN-002"], "20260307162703640"),
        (".0ad34fbd-dd1a-4a9e-b367-63404003fa9c-0_20260307162706874.log.1_0-75-158",
         BlockType.AVRO_DATA, [SC, IT], "20260307162706874", ["TXN-005"], None),
        (".0ad34fbd-dd1a-4a9e-b367-63404003fa9c-0_20260307162708294.log.1_0-93-193",
         BlockType.DELETE, [SC, IT], "20260307162708294", ["TXN-005"], "20260307162706874"),
        (".0ad34fbd-dd1a-4a9e-b367-63404003fa9c-0_20260307162709632.log.1_0-111-230",
         BlockType.AVRO_DATA, [SC, IT], "20260307162709632", ["TXN-007"], None),
    ],
    PARQ_NP: [
        (".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43",
         BlockType.PARQUET_DATA, [IT, SC], "20250117083136333", ["1"], None),
    ],
    PARQ_SK: [
        ("10/.26e33b7b-aa9f-4f2e-b683-a90ef0d5861d-0_20250121000547796.log.1_0-33-47",
         BlockType.PARQUET_DATA, [IT, SC], "20250121000557095", ["1"], None),
    ],
}  # fmt: skip


def _log_files(base: Path) -> list[str]:
    """Every log file of a table (relative paths), found by Hudi's log file name pattern."""
    found = [p for p in base.rglob(".*") if p.is_file() and LogFileName.parse(p.name)]
    return sorted(str(p.relative_to(base)) for p in found if ".hoodie" not in p.parts)


def test_every_mor_fixture_is_covered() -> None:
    mor = {str(z.relative_to(FIXTURES)) for z in fixture_zips() if "/mor/" in str(z)}
    if not mor:
        pytest.skip("../shared/fixtures is absent")
    assert mor == set(FIXTURE_LOGS)


@pytest.mark.parametrize("fixture", sorted(FIXTURE_LOGS))
def test_fixture_logs_reencode_byte_exact(shared_fixture: Callable[[str], Path], fixture: str):
    base = shared_fixture(fixture)
    logs = _log_files(base)
    assert logs == sorted(spec[0] for spec in FIXTURE_LOGS[fixture])
    for rel in logs:
        raw = (base / rel).read_bytes()
        blocks = LogBlock.decode_stream(raw)
        assert [b.block_type for b in blocks if b.block_type == BlockType.CORRUPT] == []
        assert b"".join(b.encode() for b in blocks) == raw
        for block in blocks:
            if block.block_type == BlockType.AVRO_DATA:
                # From Arrow back to Hudi's bytes: the datum encoder matches Java exactly.
                rows = block_records(block)
                again = avro_data_block(rows, block.schema or "", block.instant_time or "")
                assert again.content == block.content
                assert again.header == block.header
                # Java writes the header in HashMap order, which differs between blocks.
                again.header = dict(block.header)
                assert again.encode() == raw
            elif block.block_type == BlockType.DELETE:
                assert encode_deletes(block_deletes(block)) == block.content
            elif block.block_type == BlockType.PARQUET_DATA:
                # No extra framing: the content is a bare Parquet file.
                assert block.content[:4] == block.content[-4:] == b"PAR1"


@pytest.mark.parametrize("fixture", sorted(FIXTURE_LOGS))
def test_fixture_logs_decode_like_hudi_rs(shared_fixture: Callable[[str], Path], fixture: str):
    base = shared_fixture(fixture)
    gw = FileSystemGateway(str(base))
    for rel, btype, header_keys, instant, keys, present_before in FIXTURE_LOGS[fixture]:
        [block] = read_log_file(gw, rel)
        assert block.block_type == btype
        assert list(block.header) == header_keys
        assert block.instant_time == instant
        assert block.footer == {}
        schema = json.loads(block.schema or "")
        assert [f["name"] for f in schema["fields"]][:5] == [
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
            "_hoodie_partition_path", "_hoodie_file_name",
        ]  # fmt: skip
        # hudi-rs as of the block's own instant shows exactly what the block did.
        oracle = hudi_rs_read(str(base), as_of=instant)
        oracle_rows = {r["_hoodie_record_key"]: r for r in oracle.to_pylist()}
        if btype == BlockType.DELETE:
            deletes = block_deletes(block)
            assert [d.record_key for d in deletes] == keys
            assert all(d.ordering_value == 0 and d.wrapper == "IntWrapper" for d in deletes)
            assert all(is_natural_order(d) for d in deletes)
            before = hudi_rs_read(str(base), as_of=present_before or "")
            for d in deletes:
                assert d.record_key not in oracle_rows
                [row] = [r for r in before.to_pylist() if r["_hoodie_record_key"] == d.record_key]
                assert d.partition_path == row["_hoodie_partition_path"]
            continue
        rows = block_records(block)
        assert rows.column("_hoodie_record_key").to_pylist() == keys
        assert [f.type for f in rows.schema] == [
            oracle.schema.field(n).type for n in rows.column_names
        ]
        for row in rows.to_pylist():
            assert row == oracle_rows[row["_hoodie_record_key"]]
            assert row["_hoodie_commit_time"] == instant


def test_fixture_corrupted_log_recovers(shared_fixture: Callable[[str], Path]) -> None:
    base = shared_fixture(TRIPS_8I1U)
    gw = FileSystemGateway(str(base))
    rel = FIXTURE_LOGS[TRIPS_8I1U][0][0]
    raw = (base / rel).read_bytes()
    [good] = LogBlock.decode_stream(raw)
    # A flipped byte in the block length: the trailing length disagrees -> one CORRUPT block.
    flipped = bytearray(raw)
    flipped[13] ^= 0x01
    gw.write_bytes(rel, bytes(flipped))
    assert read_log_file(gw, rel) == [LogBlock(BlockType.CORRUPT, content=bytes(flipped))]
    # The same block appended twice, then the file torn in the middle of the second copy.
    torn = raw + raw[: len(raw) // 2]
    gw.write_bytes(rel, torn)
    assert read_log_file(gw, rel) == [
        good,
        LogBlock(BlockType.CORRUPT, content=raw[: len(raw) // 2]),
    ]


# --- hudi-rs reads blocks written here ---------------------------------------------------


@pytest.fixture
def trips(shared_fixture: Callable[[str], Path]) -> tuple[Path, LogBlock]:
    """The 8i1u table and its one update block (rider-D's fare 33.9 -> 25.0)."""
    base = shared_fixture(TRIPS_8I1U)
    [block] = read_log_file(FileSystemGateway(str(base)), FIXTURE_LOGS[TRIPS_8I1U][0][0])
    return base, block


def _next_log(base: Path, blocks: list[LogBlock]) -> None:
    """Write ``blocks`` as version 2 of the update's log file."""
    rel = FIXTURE_LOGS[TRIPS_8I1U][0][0].replace(".log.1_", ".log.2_")
    write_log_file(FileSystemGateway(str(base)), rel, blocks, table_version=6)


def _fares(base: Path) -> dict[str, float]:
    rows = hudi_rs_read(str(base)).to_pylist()
    return {r["rider"]: r["fare"] for r in rows if r["city"] == "san_francisco"}


def test_hudi_rs_applies_written_rollback_block(trips: tuple[Path, LogBlock]) -> None:
    base, update = trips
    assert _fares(base)["rider-D"] == 25.0
    _next_log(base, [rollback_block("20250331030645999", update.instant_time or "")])
    assert _fares(base) == {"rider-A": 19.1, "rider-C": 27.7, "rider-D": 33.9, "rider-E": 93.5}


@pytest.mark.parametrize("build", [avro_data_block, parquet_data_block])
def test_hudi_rs_reads_written_data_blocks(trips: tuple[Path, LogBlock], build: Any) -> None:
    base, update = trips
    rows = block_records(update)
    rows = rows.set_column(rows.schema.get_field_index("fare"), "fare", pa.array([77.0]))
    # Same (completed) instant as the fixture's update: only visible instants are read.
    _next_log(base, [build(rows, update.schema, update.instant_time)])
    assert _fares(base)["rider-D"] == 77.0


def test_hudi_rs_applies_written_delete_block(trips: tuple[Path, LogBlock]) -> None:
    base, update = trips
    key = DeleteKey("1dced545-862b-4ceb-8b43-d2a568f6616b", "city=san_francisco", 1695332066204)
    block = delete_block([key], update.instant_time or "", update.schema, ordering_type=pa.int64())
    _next_log(base, [block])
    assert "rider-E" not in _fares(base)


# --- framing ---------------------------------------------------------------------------------


def test_rollback_block_bytes_exact() -> None:
    block = rollback_block("20240102000000000", "20240101000000000")
    body = (
        struct.pack(">ii", 1, 0)  # format version, COMMAND
        + struct.pack(">i", 3)
        + struct.pack(">ii", 0, 17) + b"20240102000000000"
        + struct.pack(">ii", 1, 17) + b"20240101000000000"
        + struct.pack(">ii", 3, 1) + b"0"
        + struct.pack(">q", 0)  # empty content
        + struct.pack(">i", 0)  # empty footer
    )  # fmt: skip
    length = len(body) + 8
    trailer = struct.pack(">q", length + 6)  # the whole block minus this field
    assert block.encode() == MAGIC + struct.pack(">q", length) + body + trailer
    assert block.is_rollback and not block.is_data
    assert block.target_instant_time == "20240101000000000"
    assert LogBlock.decode_stream(block.encode()) == [block]


def test_header_keys_per_table_version() -> None:
    assert max(header_keys_for(6)) == HeaderKey.BLOCK_IDENTIFIER
    assert HeaderKey.IS_PARTIAL in header_keys_for(8)
    block = LogBlock(BlockType.AVRO_DATA, {IT: "1", HeaderKey.IS_PARTIAL: "false"}, b"x")
    with pytest.raises(ValueError, match="unknown to table version 6"):
        block.encode(table_version=6)
    assert LogBlock.decode_stream(block.encode(table_version=8)) == [block]


def test_unknown_header_ordinal_kept_and_footer_round_trips() -> None:
    block = LogBlock(BlockType.COMMAND, {IT: "1"}, b"", {HeaderKey.BLOCK_IDENTIFIER: "x"})
    raw = bytearray(block.encode())
    raw[26:30] = struct.pack(">i", 42)  # the INSTANT_TIME ordinal -> an ordinal from the future
    [decoded] = LogBlock.decode_stream(bytes(raw))
    assert decoded.header == {42: "1"} and decoded.footer == block.footer
    assert decoded.encode() == bytes(raw)
    with pytest.raises(ValueError):
        decoded.encode(table_version=8)


def _three_blocks() -> tuple[list[LogBlock], list[bytes]]:
    table = _sample_table(3)
    blocks = [
        avro_data_block(table, _avro_schema(table), "20240101000000001"),
        delete_block([DeleteKey("k1", "p"), DeleteKey("k2", "p", 5)], "20240101000000002"),
        rollback_block("20240101000000003", "20240101000000001"),
    ]
    return blocks, [b.encode() for b in blocks]


def _corrupt(content: bytes) -> LogBlock:
    return LogBlock(BlockType.CORRUPT, content=content)


def test_decode_stream_of_intact_blocks() -> None:
    blocks, raw = _three_blocks()
    assert LogBlock.decode_stream(b"".join(raw)) == blocks
    assert LogBlock.decode_stream(b"") == []


@pytest.mark.parametrize(
    "damage",
    [
        "length_byte_flipped",
        "trailing_length_flipped",
        "header_count_wrong",
        "content_length_wrong",
        "unknown_block_type",
        "truncated_in_last",
        "truncated_in_middle",
        "garbage_before",
        "garbage_between",
        "next_magic_damaged",
        "torn_magic_at_end",
    ],
)
def test_corrupt_blocks_are_isolated(damage: str) -> None:
    blocks, (a, b, c) = _three_blocks()
    A, B, C = blocks

    def patched(raw: bytes, offset: int, value: bytes) -> bytes:
        return raw[:offset] + value + raw[offset + len(value) :]

    b_len = patched(b, 13, bytes([b[13] ^ 1]))  # B's block length off by one
    b_trail = b[:-1] + bytes([b[-1] ^ 1])
    b_count = patched(b, 22, struct.pack(">i", 3))  # header count 1 -> 3
    b_type = patched(b, 18, struct.pack(">i", 9))
    a_clen_at = len(a) - 8 - 4 - len(A.content) - 8  # content length precedes content + footer
    a_clen = patched(a, a_clen_at, struct.pack(">q", len(A.content) - 1))
    cases: dict[str, tuple[bytes, list[LogBlock]]] = {
        # B's trailing length no longer matches: B is CORRUPT, decoding resumes at C's magic.
        "length_byte_flipped": (a + b_len + c, [A, _corrupt(b_len), C]),
        "trailing_length_flipped": (a + b_trail + c, [A, _corrupt(b_trail), C]),
        # Outer lengths consistent, but the inner fields overrun or underrun the block.
        "header_count_wrong": (a + b_count + c, [A, _corrupt(b_count), C]),
        "content_length_wrong": (a_clen + b + c, [_corrupt(a_clen), B, C]),
        "unknown_block_type": (a + b_type + c, [A, _corrupt(b_type), C]),
        # A torn write: the last block runs past the end of the file.
        "truncated_in_last": (a + b + c[:-5], [A, B, _corrupt(c[:-5])]),
        # Torn in the middle: everything from the tear's block to EOF is one CORRUPT block.
        "truncated_in_middle": (a + b[:40], [A, _corrupt(b[:40])]),
        "garbage_before": (b"junk" + a + b + c, [_corrupt(b"junk"), A, B, C]),
        # Hudi also demands the next magic right after a block: junk there spoils A.
        "garbage_between": (a + b"junk!!" + b + c, [_corrupt(a + b"junk!!"), B, C]),
        # B's magic damaged: A is not followed by a magic (CORRUPT), and the damaged region
        # runs on to C's magic.
        "next_magic_damaged": (a + b"#HUDX#" + b[6:] + c, [_corrupt(a + b"#HUDX#" + b[6:]), C]),
        # Fewer than 6 bytes after a block count as EOF for that block (as in Hudi).
        "torn_magic_at_end": (a + b + c + b"#HU", [A, B, C, _corrupt(b"#HU")]),
    }
    data, expected = cases[damage]
    decoded = LogBlock.decode_stream(data)
    assert decoded == expected
    assert b"".join(x.encode() for x in decoded) == data


def test_damaged_content_raises_corrupt_file_error() -> None:
    blocks, _ = _three_blocks()
    avro, delete, _rollback = blocks
    for content in (
        avro.content[:-1],
        avro.content + b"\x00",
        b"\x00\x00\x00\x02" + avro.content[4:],
        b"",
    ):
        with pytest.raises(CorruptFileError):
            block_records(LogBlock(BlockType.AVRO_DATA, avro.header, content))
    longer = struct.pack(">ii", 3, len(delete.content) - 7) + delete.content[8:] + b"\x00"
    for content in (
        delete.content[:-1],
        delete.content[:6],
        b"\x00\x00\x00\x01" + delete.content[4:],
        longer,  # the declared length covers a byte the delete list does not use
    ):
        with pytest.raises(CorruptFileError):
            block_deletes(LogBlock(BlockType.DELETE, delete.header, content))
    with pytest.raises(CorruptFileError):
        block_records(LogBlock(BlockType.PARQUET_DATA, avro.header, b"PAR1 not parquet PAR1"))
    with pytest.raises(CorruptFileError, match="SCHEMA"):
        block_records(LogBlock(BlockType.AVRO_DATA, {IT: "1"}, avro.content))
    with pytest.raises(ValueError):
        block_records(delete)
    with pytest.raises(ValueError):
        block_deletes(avro)


# --- data blocks ---------------------------------------------------------------------------------

_XY = pa.struct([("x", pa.int32()), ("y", pa.string())])
_INNER = pa.struct([("m", pa.map_(pa.string(), pa.int32())), ("e", pa.list_(pa.string()))])
ALL_TYPES = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("flag", pa.bool_()),
        ("small", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("amount", pa.decimal128(10, 2)),
        ("wide", pa.decimal128(38, 18)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("blob", pa.binary()),
        ("tags", pa.list_(pa.int64())),
        ("items", pa.list_(_XY)),
        ("attrs", pa.map_(pa.string(), pa.struct([("z", pa.list_(pa.float64()))]))),
        ("nested", pa.struct([("a", pa.int64()), ("n", _INNER)])),
    ]
)


def _sample_rows() -> list[dict[str, Any]]:
    full = {
        "id": 1, "name": "a", "flag": True, "small": -7, "f32": 1.5, "f64": 2.25,
        "amount": Decimal("-12.34"), "wide": Decimal("12345678901234567890.123456789012345678"),
        "day": date(2020, 1, 2), "ts": datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        "blob": b"\x00\xff", "tags": [1, None, 3], "items": [{"x": 1, "y": "q"}, None],
        "attrs": {"k": {"z": [1.0]}, "n": None},
        "nested": {"a": 1, "n": {"m": {"k": 1}, "e": []}},
    }  # fmt: skip
    empty = {k: None for k in full} | {"id": 2}
    edge = {
        "id": -(2**62), "name": "ü" * 200, "flag": False, "small": -(2**31), "f32": float("inf"),
        "f64": -0.0, "amount": Decimal("99999999.99"), "wide": Decimal("-1"),
        "day": date(1900, 1, 1), "ts": datetime(1, 1, 1, tzinfo=UTC), "blob": b"",
        "tags": [], "items": [], "attrs": {}, "nested": {"a": None, "n": None},
    }  # fmt: skip
    return [full, empty, edge]


def _with_meta(table: pa.Table) -> pa.Table:
    n = table.num_rows
    meta = {
        "_hoodie_commit_time": pa.array(["20240101000000001"] * n, pa.string()),
        "_hoodie_commit_seqno": pa.array(
            [f"20240101000000001_0_{i}" for i in range(n)], pa.string()
        ),
        "_hoodie_record_key": pa.array([f"k{i}" for i in range(n)], pa.string()),
        "_hoodie_partition_path": pa.array(["p"] * n, pa.string()),
        "_hoodie_file_name": pa.array(["f-0"] * n, pa.string()),
    }
    return pa.table({**meta, **{c: table[c] for c in table.column_names}})


def _sample_table(repeat: int = 1) -> pa.Table:
    return _with_meta(pa.Table.from_pylist(_sample_rows() * repeat, schema=ALL_TYPES))


def _avro_schema(table: pa.Table) -> str:
    storage = with_meta_columns(to_storage_schema(table.schema))
    return json.dumps(arrow_to_avro_schema(storage, "t_record", "hoodie.t"), separators=(",", ":"))


def _fastavro_content(table: pa.Table, avro_schema_json: str) -> bytes:
    """The reference encoding: fastavro, row by row (maps as dicts)."""

    def py(value: Any, t: pa.DataType) -> Any:
        if value is None:
            return None
        if pa.types.is_map(t):
            return {k: py(v, t.item_type) for k, v in value}
        if pa.types.is_struct(t):
            return {f.name: py(value[f.name], f.type) for f in t}
        if pa.types.is_list(t):
            return [py(v, t.value_type) for v in value]
        return value

    parsed = fastavro.parse_schema(json.loads(avro_schema_json))
    out = io.BytesIO(struct.pack(">ii", 3, table.num_rows))
    out.seek(8)
    for row in table.to_pylist():
        datum = io.BytesIO()
        fastavro.schemaless_writer(
            datum, parsed, {f.name: py(row[f.name], f.type) for f in table.schema}
        )
        out.write(struct.pack(">i", datum.tell()) + datum.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("build", [avro_data_block, parquet_data_block])
def test_data_block_round_trip_all_types(build: Any) -> None:
    table = _sample_table()
    schema = _avro_schema(table)
    block = build(table, schema, "20240101000000001")
    assert block.header == {IT: "20240101000000001", SC: schema}
    [decoded] = LogBlock.decode_stream(block.encode())
    rows = block_records(decoded)
    assert rows.schema.names == table.schema.names
    assert rows.to_pylist() == table.to_pylist()


def test_avro_encoding_matches_fastavro_on_sliced_chunked_input() -> None:
    table = _sample_table(2)
    table = pa.concat_tables([table.slice(1, 3), table.slice(0, 2)])
    schema = _avro_schema(table)
    assert encode_avro_records(table, schema) == _fastavro_content(table, schema)


def test_avro_block_accepts_schema_dict_and_casts_columns() -> None:
    table = pa.table({"_hoodie_record_key": ["a"], "v": pa.array([1], pa.int8())})
    bytes_decimal = {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 1}
    spec = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
            {"name": "v", "type": ["long", "null"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
            {"name": "d", "type": ["null", bytes_decimal]},
            {"name": "fx", "type": ["null", {"type": "fixed", "name": "F", "size": 2}]},
        ],
    }
    table = table.append_column("e", pa.array(["B"]))
    table = table.append_column("d", pa.array([Decimal("-12.8")], pa.decimal128(9, 1)))
    table = table.append_column("fx", pa.array([b"ab"]))
    block = avro_data_block(table, spec, "1")
    assert block.schema == json.dumps(spec, separators=(",", ":"))
    expected = {"_hoodie_record_key": "a", "v": 1, "e": "B", "d": Decimal("-12.8"), "fx": b"ab"}
    assert block_records(block).to_pylist() == [expected]
    # Bytes decimals as Java's BigInteger.toByteArray: minimal two's complement, so -128 is
    # the one byte 0x80 (fastavro writes ff80; both decode alike).
    assert block.content.endswith(b"\x02\x02\x80\x02ab")
    parsed = fastavro.parse_schema(spec)
    assert fastavro.schemaless_reader(io.BytesIO(block.content[12:]), parsed, None) == expected


def test_avro_block_schema_errors() -> None:
    table = _sample_table()
    schema = _avro_schema(table)
    with pytest.raises(SchemaError, match="name"):
        avro_data_block(table.drop_columns(["name"]), schema, "1")
    strict = json.dumps({"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]})
    with pytest.raises(SchemaError):
        avro_data_block(pa.table({"v": pa.array([1, None])}), strict, "1")
    fixed_decimal = {"type": "fixed", "name": "f", "size": 2, "logicalType": "decimal"}
    fixed_decimal |= {"precision": 4, "scale": 0}
    fixed = json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "d", "type": fixed_decimal}]}
    )
    # 40000 does not fit decimal(4, 0), nor 2 bytes; Arrow holds it when built unchecked.
    unchecked = pa.Array.from_buffers(
        pa.decimal128(4, 0), 1, [None, pa.py_buffer((40000).to_bytes(16, "little"))]
    )
    with pytest.raises(SchemaError, match="fixed"):
        avro_data_block(pa.table({"d": unchecked}), fixed, "1")
    with pytest.raises(SchemaError, match="invalid Avro schema"):
        avro_data_block(pa.table({"d": unchecked}), fixed.replace('"size": 2', '"size": 1'), "1")


def test_avro_block_with_named_type_reference() -> None:
    # The second decimal refers to the first by name: both must decode as decimals.
    dec = {"type": "fixed", "name": "Dec", "size": 5, "logicalType": "decimal"}
    dec |= {"precision": 10, "scale": 2}
    fields = [{"name": "a", "type": ["null", dec]}, {"name": "b", "type": ["null", "Dec"]}]
    spec = {"type": "record", "name": "r", "namespace": "ns", "fields": fields}
    table = pa.table(
        {
            "a": pa.array([Decimal("1.25"), None], pa.decimal128(10, 2)),
            "b": pa.array([None, Decimal("-3.50")], pa.decimal128(10, 2)),
        }
    )
    block = avro_data_block(table, spec, "1")
    assert block.content == _fastavro_content(table, block.schema or "")
    assert block_records(block).to_pylist() == table.to_pylist()


def test_parquet_block_missing_header_column_reads_as_null() -> None:
    table = _sample_table()
    schema = _avro_schema(table)
    narrow = _avro_schema(table.drop_columns(["name"]))
    block = parquet_data_block(table.drop_columns(["name"]), narrow, "1")
    wide = LogBlock(BlockType.PARQUET_DATA, {IT: "1", SC: schema}, block.content)
    rows = block_records(wide)
    assert rows.column_names == table.column_names
    assert rows.column("name").null_count == table.num_rows


@pytest.mark.parametrize("build", [avro_data_block, parquet_data_block])
def test_empty_data_block(build: Any) -> None:
    table = _sample_table().slice(0, 0)
    block = build(table, _avro_schema(table), "1")
    assert block_records(block).num_rows == 0
    assert block_records(block).schema.names == table.schema.names


def test_avro_block_of_many_rows_round_trips() -> None:
    table = _sample_table(2000)
    block = avro_data_block(table, _avro_schema(table), "1")
    assert block_records(block).equals(block_records(LogBlock.decode_stream(block.encode())[0]))
    assert block_records(block).to_pylist()[-3:] == table.slice(table.num_rows - 3).to_pylist()


_LONGS = st.integers(-(2**63), 2**63 - 1)
_XY_VALUES = st.fixed_dictionaries(
    {"x": st.none() | st.integers(-5, 5), "y": st.none() | st.text(max_size=3)}
)
_Z_VALUES = st.fixed_dictionaries(
    {"z": st.none() | st.lists(st.floats(allow_nan=False), max_size=2)}
)
_NULLABLE = {
    "id": _LONGS,
    "name": st.text(max_size=8),
    "flag": st.booleans(),
    "small": st.integers(-(2**31), 2**31 - 1),
    "f32": st.floats(width=32, allow_nan=False),
    "f64": st.floats(allow_nan=False),
    "amount": st.decimals(-(10**8) + 1, 10**8 - 1, places=2, allow_nan=False),
    "day": st.dates(date(1, 1, 1), date(9999, 12, 31)),
    "ts": st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30), timezones=st.just(UTC)),
    "blob": st.binary(max_size=8),
    "tags": st.lists(st.none() | _LONGS, max_size=3),
    "items": st.lists(st.none() | _XY_VALUES, max_size=3),
    "attrs": st.dictionaries(st.text(max_size=3), st.none() | _Z_VALUES, max_size=2),
}
_ROWS = st.lists(
    st.fixed_dictionaries({k: st.none() | v for k, v in _NULLABLE.items()}), max_size=6
)
HYPO_SCHEMA = pa.schema([f for f in ALL_TYPES if f.name in _NULLABLE])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ROWS)
def test_avro_encoding_property(rows: list[dict[str, Any]]) -> None:
    table = _with_meta(pa.Table.from_pylist(rows, schema=HYPO_SCHEMA))
    schema = _avro_schema(table)
    content = encode_avro_records(table, schema)
    assert content == _fastavro_content(table, schema)
    block = LogBlock(BlockType.AVRO_DATA, {SC: schema}, content)
    assert block_records(block).to_pylist() == table.to_pylist()


# --- delete blocks -------------------------------------------------------------------------------

_FIXTURE_DELETE_CONTENT = bytes.fromhex(
    "000000030000001802020e" + b"TXN-005".hex() + "0212" + b"region=eu".hex() + "040000"
)


def test_delete_content_matches_hudi_bytes() -> None:
    # The v9 fixture's delete of TXN-005 (SQL DELETE: IntWrapper(0) as ordering value).
    keys = decode_deletes(_FIXTURE_DELETE_CONTENT)
    assert keys == [DeleteKey("TXN-005", "region=eu", 0)]
    assert keys[0].wrapper == "IntWrapper" and is_natural_order(keys[0])
    assert encode_deletes(keys) == _FIXTURE_DELETE_CONTENT
    # A key without an ordering value is written exactly like Hudi's natural-order delete.
    assert encode_deletes([DeleteKey("TXN-005", "region=eu")]) == _FIXTURE_DELETE_CONTENT


_1AM = datetime(2024, 1, 1, 1, tzinfo=UTC)
ORDERING_CASES: list[tuple[Any, Any, Any, Any]] = [
    # (value given, ordering_type, wrapper written, value read back)
    (True, None, "BooleanWrapper", True),
    (7, None, "IntWrapper", 7),
    (2**40, None, "LongWrapper", 2**40),
    (7, pa.int64(), "LongWrapper", 7),
    (7, pa.int16(), "IntWrapper", 7),
    (1.5, pa.float32(), "FloatWrapper", 1.5),
    (1.5, None, "DoubleWrapper", 1.5),
    ("b", None, "StringWrapper", "b"),
    (b"\x01", None, "BytesWrapper", b"\x01"),
    (Decimal("-1.5"), None, "DecimalWrapper", Decimal("-1.500000000000000")),
    (3, pa.decimal128(5, 0), "DecimalWrapper", Decimal("3.000000000000000")),
    (date(2024, 2, 29), None, "DateWrapper", date(2024, 2, 29)),
    (_1AM, None, "TimestampMicrosWrapper", _1AM),
    # Java writes a timestamp ordering field's raw epoch micros (a Long).
    (_1AM, pa.timestamp("us", tz="UTC"), "LongWrapper", 1704070800000000),
    (_1AM.replace(tzinfo=None), pa.timestamp("us"), "LongWrapper", 1704070800000000),
    (_1AM.replace(tzinfo=None), None, "TimestampMicrosWrapper", _1AM),
    (time(1, 2, 3, 4), None, "TimeMicrosWrapper", time(1, 2, 3, 4)),
    ((1, "a"), None, ("IntWrapper", "StringWrapper"), (1, "a")),
]


@pytest.mark.parametrize(("value", "ordering_type", "wrapper", "back"), ORDERING_CASES)
def test_delete_ordering_wrappers(value: Any, ordering_type: Any, wrapper: Any, back: Any) -> None:
    block = delete_block([DeleteKey("k", "p", value)], "1", ordering_type=ordering_type)
    assert block.header == {IT: "1"}
    [key] = block_deletes(LogBlock.decode_stream(block.encode())[0])
    assert (key.record_key, key.partition_path, key.ordering_value) == ("k", "p", back)
    assert type(key.ordering_value) is type(back)
    assert key.wrapper == wrapper
    assert not is_natural_order(key)
    # Decoded keys carry their wrapper, so re-encoding is exact.
    assert encode_deletes([key]) == block.content


def test_delete_wrappers_by_explicit_name_and_union_order() -> None:
    keys = [
        DeleteKey("a", "", 0, "LongWrapper"),
        DeleteKey("b", "", date(1970, 1, 2), "DateWrapper"),
        DeleteKey("c", "", (date(1970, 1, 3), None), ("LocalDateWrapper", None)),
    ]
    content = encode_deletes(keys)
    # Union branch indices follow the .avsc: LongWrapper is branch 3, DateWrapper 8,
    # ArrayWrapper 12 and, inside it, LocalDateWrapper 12 (zigzag varints 06, 10, 18, 18).
    assert content[8:] == bytes.fromhex(
        "06" "020261" "0200" "0600" "020262" "0200" "1002"
        "020263" "0200" "18" "02" "04" "1804" "00" "00" "00"
    )  # fmt: skip
    parsed = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)
    assert fastavro.schemaless_reader(io.BytesIO(content[8:]), parsed, None)
    decoded = decode_deletes(content)
    assert decoded == keys
    assert [k.wrapper for k in decoded] == [
        "LongWrapper",
        "DateWrapper",
        ("LocalDateWrapper", None),
    ]
    assert not is_natural_order(decoded[0])  # a Long zero is not Java's Integer 0


def test_delete_ordering_errors() -> None:
    with pytest.raises(ValueError, match="wrapper"):
        encode_deletes([DeleteKey("k", "p", object())])
    with pytest.raises(ValueError, match="unknown"):
        encode_deletes([DeleteKey("k", "p", 1, "NoSuchWrapper")])
    with pytest.raises(ValueError):
        delete_block([DeleteKey("k", "p", 1)], "1", ordering_type=pa.list_(pa.int32()))


def test_is_natural_order() -> None:
    assert is_natural_order(None) and is_natural_order(0)
    assert not is_natural_order(0.0) and not is_natural_order(False) and not is_natural_order(1)
    assert is_natural_order(DeleteKey("k", "p"))
    assert is_natural_order(DeleteKey("k", "p", 0, "IntWrapper"))
    assert not is_natural_order(DeleteKey("k", "p", 0, "LongWrapper"))


def test_empty_delete_block() -> None:
    block = delete_block([], "1", '{"type":"record","name":"r","fields":[]}')
    assert list(block.header) == [IT, SC]
    assert block_deletes(block) == []
    assert block.content == bytes.fromhex("000000030000000100")


# --- files ---------------------------------------------------------------------------------------


def test_write_and_read_log_file(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "tbl"))
    blocks, raw = _three_blocks()
    rel = "p/.f1-0_20240101000000001.log.1_0-1-2"
    assert write_log_file(gw, rel, blocks) == len(b"".join(raw))
    assert (tmp_path / "tbl" / rel).read_bytes() == b"".join(raw)
    assert read_log_file(gw, rel) == blocks
    with pytest.raises(LogFileExistsError) as info:
        write_log_file(gw, rel, blocks[:1])
    assert isinstance(info.value, FileExistsError) and isinstance(info.value, HudiliteError)
    assert read_log_file(gw, rel) == blocks  # untouched
    with pytest.raises(FileNotFoundError):
        read_log_file(gw, "p/.f1-0_20240101000000001.log.2_0-1-2")


def test_write_log_file_checks_header_keys_before_writing(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "tbl"))
    block = LogBlock(BlockType.COMMAND, {IT: "1", HeaderKey.IS_PARTIAL: "true"})
    with pytest.raises(ValueError):
        write_log_file(gw, "x.log", [block], table_version=6)
    assert not gw.exists("x.log")
