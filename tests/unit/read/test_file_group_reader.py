"""read_file_slice on hand-built file slices: base file + log files written with log_format."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudilite.errors import CorruptFileError, SchemaError
from hudilite.filegroup.slices import BaseFile, FileSlice, LogFile
from hudilite.merge import MergeSpec
from hudilite.read.file_group_reader import (
    conform,
    decode_slice,
    encode_slice,
    log_records,
    read_file_slice,
    scan_log_blocks,
)
from hudilite.schema import arrow_to_avro_schema, with_meta_columns
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.storage.log_format import (
    BlockType,
    DeleteKey,
    LogBlock,
    avro_data_block,
    delete_block,
    parquet_data_block,
    rollback_block,
    write_log_file,
)
from hudilite.storage.parquet_io import write_base_file

FILE_ID = "0a1b2c3d-0000-4000-8000-000000000000-0"
PARTITION = "p=1"
T0 = "20240101000000000"  # base file
T1 = "20240101000100000"
T2 = "20240101000200000"
T3 = "20240101000300000"
T4 = "20240101000400000"

DATA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("val", pa.string())])
SCHEMA = with_meta_columns(DATA)
AVRO = arrow_to_avro_schema(SCHEMA, "t_record", "hoodie.t")
EVENT = MergeSpec("EVENT_TIME_ORDERING", "ts")
COMMIT = MergeSpec("COMMIT_TIME_ORDERING", "ts")


def everything_visible(_instant: str) -> bool:
    return True


def records(instant: str, rows: Sequence[tuple[str, int | None, str]]) -> pa.Table:
    """Full log records (meta + data) as a delta commit ``instant`` writes them."""
    return pa.table(
        {
            "_hoodie_commit_time": [instant] * len(rows),
            "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in range(len(rows))],
            "_hoodie_record_key": [r[0] for r in rows],
            "_hoodie_partition_path": [PARTITION] * len(rows),
            "_hoodie_file_name": [FILE_ID] * len(rows),
            "id": [r[0] for r in rows],
            "ts": pa.array([r[1] for r in rows], pa.int64()),
            "val": [r[2] for r in rows],
        },
        schema=SCHEMA,
    )


class SliceBuilder:
    """Writes a base file and log files into a temporary table folder."""

    def __init__(self, root: Path) -> None:
        self.gw = FileSystemGateway(str(root))
        self.base: BaseFile | None = None
        self.logs: list[LogFile] = []

    def base_file(self, rows: Sequence[tuple[str, int | None, str]]) -> SliceBuilder:
        name = BaseFileName(FILE_ID, "0-1-2", T0)
        table = records(T0, rows)
        table = table.set_column(4, "_hoodie_file_name", pa.array([name.render()] * len(rows)))
        size = write_base_file(self.gw, f"{PARTITION}/{name.render()}", table)
        self.base = BaseFile(PARTITION, name, size)
        return self

    def log(self, *blocks: LogBlock, raw_tail: bytes = b"") -> SliceBuilder:
        name = LogFileName(FILE_ID, T0, len(self.logs) + 1, "0-1-2")
        path = f"{PARTITION}/{name.render()}"
        size = write_log_file(self.gw, path, blocks)
        if raw_tail:
            self.gw.write_bytes(path, self.gw.read_bytes(path) + raw_tail)
            size += len(raw_tail)
        self.logs.append(LogFile(PARTITION, name, size))
        return self

    @property
    def slice(self) -> FileSlice:
        return FileSlice(PARTITION, FILE_ID, T0, self.base, tuple(self.logs))

    def read(
        self,
        spec: MergeSpec = EVENT,
        *,
        visible: Callable[[str], bool] = everything_visible,
        as_of: str | None = None,
        schema: pa.Schema = SCHEMA,
    ) -> pa.Table:
        return read_file_slice(
            self.gw,
            self.slice,
            merge_spec=spec,
            schema=schema,
            is_instant_visible=visible,
            as_of=as_of,
        )


def state(table: pa.Table) -> dict[str, tuple[Any, ...]]:
    """``id -> (ts, val, commit time)`` of the output rows."""
    out = {}
    for r in table.to_pylist():
        assert r["id"] not in out, f"duplicate key {r['id']}"
        out[r["id"]] = (r["ts"], r["val"], r["_hoodie_commit_time"])
    return out


def avro(instant: str, rows: Sequence[tuple[str, int | None, str]]) -> LogBlock:
    return avro_data_block(records(instant, rows), AVRO, instant)


def deletes(instant: str, *keys: tuple[str, Any]) -> LogBlock:
    entries = [DeleteKey(k, PARTITION, v) for k, v in keys]
    return delete_block(entries, instant, AVRO, ordering_type=pa.int64())


@pytest.fixture
def slices(tmp_path: Path) -> SliceBuilder:
    return SliceBuilder(tmp_path)


BASE_ROWS = [("a", 10, "a0"), ("b", 10, "b0"), ("c", 10, "c0")]


# ------------------------------------------------------------------------------ basics


def test_base_only_slice_reads_base_rows_untouched(slices):
    out = slices.base_file(BASE_ROWS).read()
    assert out.schema == SCHEMA
    assert state(out) == {"a": (10, "a0", T0), "b": (10, "b0", T0), "c": (10, "c0", T0)}
    # Meta columns come from the base file as stored.
    names = set(out.column("_hoodie_file_name").to_pylist())
    assert names == {BaseFileName(FILE_ID, "0-1-2", T0).render()}


def test_avro_update_and_insert_keep_log_meta_columns(slices):
    slices.base_file(BASE_ROWS).log(avro(T1, [("a", 11, "a1"), ("d", 1, "d1")]))
    out = slices.read()
    assert state(out) == {
        "a": (11, "a1", T1),
        "b": (10, "b0", T0),
        "c": (10, "c0", T0),
        "d": (1, "d1", T1),
    }
    row = next(r for r in out.to_pylist() if r["id"] == "a")
    assert row["_hoodie_commit_seqno"] == f"{T1}_0_0"
    assert row["_hoodie_file_name"] == FILE_ID  # what the log record carries


def test_parquet_data_block(slices):
    block = parquet_data_block(records(T1, [("b", 12, "b1")]), AVRO, T1)
    assert block.block_type == BlockType.PARQUET_DATA
    out = slices.base_file(BASE_ROWS).log(block).read()
    assert state(out)["b"] == (12, "b1", T1)


def test_log_only_slice(slices):
    out = slices.log(avro(T1, [("x", 1, "x1"), ("y", 1, "y1")]), deletes(T2, ("x", None))).read()
    assert state(out) == {"y": (1, "y1", T1)}


def test_empty_slice_gives_empty_table_of_schema(slices):
    out = slices.read()
    assert out.num_rows == 0 and out.schema == SCHEMA


def test_later_blocks_and_later_logs_are_later_writes(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 20, "a1")]), avro(T2, [("a", 20, "a2")]))
    slices.log(avro(T3, [("a", 20, "a3"), ("a", 20, "a3bis")]))
    # Equal ordering values: the later write wins, across blocks, files and rows.
    assert state(slices.read())["a"] == (20, "a3bis", T3)


def test_event_time_keeps_greater_ordering_value_across_blocks(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 30, "a1")]), avro(T2, [("a", 25, "a2"), ("b", 5, "b2")]))
    out = state(slices.read(EVENT))
    assert out["a"] == (30, "a1", T1)  # later block, smaller ts: loses
    assert out["b"] == (10, "b0", T0)  # smaller than the base's ts: the base row stays
    out = state(slices.read(COMMIT))
    assert out["a"] == (25, "a2", T2) and out["b"] == (5, "b2", T2)


# ------------------------------------------------------------------------------- blocks


def test_rollback_block_drops_earlier_blocks_of_its_target(slices):
    slices.base_file(BASE_ROWS)
    slices.log(
        avro(T1, [("a", 11, "a1")]),
        avro(T2, [("b", 12, "b2")]),
        avro(T1, [("c", 11, "c1")]),
        rollback_block(T3, T1),
    )
    slices.log(avro(T4, [("c", 14, "c4")]))
    out = state(slices.read())
    assert out == {"a": (10, "a0", T0), "b": (12, "b2", T2), "c": (14, "c4", T4)}


def test_rollback_block_only_affects_blocks_before_it(slices):
    slices.base_file(BASE_ROWS).log(
        avro(T1, [("a", 11, "a1")]), rollback_block(T2, T1), avro(T1, [("b", 11, "b1")])
    )
    out = state(slices.read())
    assert out["a"] == (10, "a0", T0) and out["b"] == (11, "b1", T1)


def test_rollback_block_applies_even_when_its_own_instant_is_not_completed(slices):
    # Hudi stamps rollback blocks with an instant that may be pending (the rollback itself).
    slices.base_file(BASE_ROWS).log(avro(T1, [("a", 11, "a1")]), rollback_block(T3, T1))
    assert state(slices.read(visible=lambda t: t != T3))["a"] == (10, "a0", T0)


def test_block_of_invisible_instant_is_skipped(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 11, "a1")]), avro(T2, [("b", 12, "b2")]), deletes(T2, ("c", None)))
    slices.log(avro(T3, [("d", 13, "d3")]))
    out = state(slices.read(visible=lambda t: t != T2))  # T2 pending or failed
    assert out == {
        "a": (11, "a1", T1),
        "b": (10, "b0", T0),
        "c": (10, "c0", T0),
        "d": (13, "d3", T3),
    }


def test_as_of_cuts_off_newer_blocks(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 11, "a1")]), avro(T2, [("a", 12, "a2")]), deletes(T3, ("b", None)))
    assert state(slices.read(as_of=T1)) == {
        "a": (11, "a1", T1),
        "b": (10, "b0", T0),
        "c": (10, "c0", T0),
    }
    assert state(slices.read(as_of=T2))["a"] == (12, "a2", T2)
    assert "b" not in state(slices.read(as_of=T3))
    # A rollback newer than the read instant does not apply either.
    slices.log(rollback_block(T4, T1))
    assert state(slices.read(as_of=T3))["a"] == (12, "a2", T2)


def test_corrupt_blocks_are_skipped(slices):
    good = avro(T2, [("b", 12, "b2")]).encode()
    torn = avro(T1, [("a", 11, "a1")]).encode()[:-20]  # a crashed append
    slices.base_file(BASE_ROWS).log(avro(T1, [("c", 11, "c1")]), raw_tail=torn + good)
    blocks = scan_log_blocks(slices.gw, slices.logs, is_instant_visible=everything_visible)
    assert [b.instant_time for b in blocks] == [T1, T2]
    out = state(slices.read())
    assert out == {"a": (10, "a0", T0), "b": (12, "b2", T2), "c": (11, "c1", T1)}


def flip(data: bytes, at: int, n: int = 40) -> bytes:
    """``data`` with ``n`` bytes from ``at`` inverted (a damaged disk or copy)."""
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + n]) + data[at + n :]


def test_a_corrupt_block_a_commit_recorded_fails_naming_the_file(slices):
    # Issue 26: 40 flipped bytes in a committed block were skipped on read (hiding the
    # update) and compaction then made the loss permanent.
    slices.base_file(BASE_ROWS).log(avro(T1, [("a", 11, "a1")]), avro(T2, [("b", 12, "b2")]))
    log = slices.logs[0]
    data = slices.gw.read_bytes(log.path)
    first = len(avro(T1, [("a", 11, "a1")]).encode())
    slices.gw.write_bytes(log.path, flip(data, first + 60))
    slices.logs[0] = dataclasses.replace(log, committed=((0, first, T1), (first, len(data), T2)))
    with pytest.raises(CorruptFileError) as err:
        slices.read()
    assert str(err.value) == (
        f"log file {slices.gw.abs_path(log.path)} has a corrupt block at bytes "
        f"{first}-{len(data)}, inside bytes {first}-{len(data)} that commit {T2} recorded "
        "as written: its committed records cannot be read; restore the file, or roll back "
        "or restore the table past that commit"
    )
    # Without a record of the bytes (a log no completed commit names) it is skipped.
    slices.logs[0] = dataclasses.replace(log, committed=((0, first, T1),))
    assert state(slices.read()) == {"a": (11, "a1", T1), "b": (10, "b0", T0), "c": (10, "c0", T0)}


def test_a_torn_append_between_committed_appends_is_skipped(slices):
    # Hudi appends to a log file on HDFS: a failed append leaves a torn region that later
    # appends follow; only the ranges completed commits recorded (logOffset + size) count.
    first = avro(T1, [("c", 11, "c1")]).encode()
    torn = avro(T3, [("a", 13, "a3")]).encode()[:-20]
    good = avro(T2, [("b", 12, "b2")]).encode()
    slices.base_file(BASE_ROWS).log(avro(T1, [("c", 11, "c1")]), raw_tail=torn + good)
    at = len(first) + len(torn)
    committed = ((0, len(first), T1), (at, at + len(good), T2))
    slices.logs[0] = dataclasses.replace(slices.logs[0], committed=committed)
    out = state(slices.read())
    assert out == {"a": (10, "a0", T0), "b": (12, "b2", T2), "c": (11, "c1", T1)}


def test_commit_times_restrict_the_merge_to_the_incremental_range(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 5, "a1"), ("b", 20, "b1")]), deletes(T1, ("c", None)))
    slices.log(avro(T2, [("d", 1, "d2")]))

    def read(times: set[str]) -> dict[str, tuple[Any, ...]]:
        table = read_file_slice(
            slices.gw,
            slices.slice,
            merge_spec=EVENT,
            schema=SCHEMA,
            is_instant_visible=everything_visible,
            commit_times=times,
        )
        return state(table)

    # Only T1 takes part: the base rows (T0) are not read, so a(ts 5) has nothing to lose
    # to and c's delete has nothing to delete (Hudi's and hudi-rs's incremental MOR reads).
    assert read({T1}) == {"a": (5, "a1", T1), "b": (20, "b1", T1)}
    # With the base file's commit in range it is the snapshot of those commits.
    assert read({T0, T1}) == {"a": (10, "a0", T0), "b": (20, "b1", T1)}
    assert read({T2}) == {"d": (1, "d2", T2)}


# ------------------------------------------------------------------------------ deletes


def test_natural_order_delete_wins_over_greater_ordering_value(slices):
    # IntWrapper(0), what Hudi writes for SQL DELETE: wins whatever the stored ts.
    slices.base_file([("a", 10**12, "a0"), ("b", 10, "b0")])
    slices.log(avro(T1, [("c", 10**12, "c1")]))
    block = delete_block([DeleteKey("a", PARTITION, 0), DeleteKey("c", PARTITION, None)], T2, AVRO)
    slices.log(block)
    assert state(slices.read(EVENT)) == {"b": (10, "b0", T0)}


def test_event_time_delete_loses_to_greater_stored_ordering_value(slices):
    slices.base_file(BASE_ROWS).log(deletes(T1, ("a", 5), ("b", 10), ("c", 20)))
    out = state(slices.read(EVENT))
    # ts 5 < stored 10: the delete loses; a tie or a greater value deletes.
    assert out == {"a": (10, "a0", T0)}


def test_long_zero_is_not_natural_order(slices):
    # LongWrapper(0) is a real ordering value (Java: Long(0).equals(Integer(0)) is false).
    slices.base_file(BASE_ROWS).log(deletes(T1, ("a", 0)))
    assert "a" in state(slices.read(EVENT))


def test_event_time_delete_against_log_records(slices):
    slices.base_file(BASE_ROWS)
    slices.log(avro(T1, [("a", 50, "a1"), ("b", 50, "b1")]))
    slices.log(deletes(T2, ("a", 40), ("b", 60)))
    out = state(slices.read(EVENT))
    assert out["a"] == (50, "a1", T1) and "b" not in out


def test_record_after_delete_comes_back(slices):
    slices.base_file(BASE_ROWS)
    slices.log(deletes(T1, ("a", None)), avro(T2, [("a", 11, "a2")]))
    assert state(slices.read(EVENT))["a"] == (11, "a2", T2)
    assert state(slices.read(COMMIT))["a"] == (11, "a2", T2)


def test_commit_time_delete_with_ordering_value_always_wins(slices):
    slices.base_file(BASE_ROWS).log(deletes(T1, ("a", 1)))
    assert "a" not in state(slices.read(COMMIT))


def test_delete_of_unknown_key_is_ignored(slices):
    slices.base_file(BASE_ROWS).log(deletes(T1, ("zz", None)))
    assert set(state(slices.read())) == {"a", "b", "c"}


def test_is_deleted_marker_in_log_records(slices):
    with_marker = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    avro_schema = arrow_to_avro_schema(with_marker, "t_record", "hoodie.t")
    rows = records(T1, [("a", 11, "a1"), ("b", 11, "b1")])
    rows = rows.append_column("_hoodie_is_deleted", pa.array([True, False]))
    slices.base_file(BASE_ROWS).log(avro_data_block(rows, avro_schema, T1))
    out = state(slices.read())
    assert "a" not in out and out["b"] == (11, "b1", T1)


# ------------------------------------------------------------------------------ schemas


def test_schema_evolution_between_base_and_blocks(slices):
    wider = SCHEMA.append(pa.field("extra", pa.int32()))
    wider_avro = arrow_to_avro_schema(wider, "t_record", "hoodie.t")
    rows = records(T1, [("a", 11, "a1")]).append_column("extra", pa.array([7], pa.int32()))
    slices.base_file(BASE_ROWS).log(avro_data_block(rows, wider_avro, T1))
    # Read with the wider schema: the base rows have no "extra" -> null.
    target = SCHEMA.append(pa.field("extra", pa.int64()))
    out = slices.read(schema=target)
    assert out.schema == target
    extra = {r["id"]: r["extra"] for r in out.to_pylist()}
    assert extra == {"a": 7, "b": None, "c": None}
    # Read with the narrower schema: the block's extra column is dropped.
    assert slices.read().schema == SCHEMA


def test_conform_matches_struct_fields_by_name():
    old = pa.struct([("x", pa.int32())])
    new = pa.struct([("x", pa.int64()), ("y", pa.string())])
    table = pa.table({"s": pa.array([{"x": 1}, None], old), "l": pa.array([[{"x": 2}], None])})
    target = pa.schema([("s", new), ("l", pa.list_(new)), ("missing", pa.float64())])
    out = conform(table, target)
    assert out.schema == target
    assert out.to_pylist() == [
        {"s": {"x": 1, "y": None}, "l": [{"x": 2, "y": None}], "missing": None},
        {"s": None, "l": None, "missing": None},
    ]


def test_conform_names_the_column_that_does_not_fit():
    table = pa.table({"a": ["not a number"]})
    with pytest.raises(SchemaError, match="'a'"):
        conform(table, pa.schema([("a", pa.int64())]))


def test_log_records_numbers_writes_in_block_order(slices):
    blocks = [avro(T1, [("a", 1, "a1"), ("b", 1, "b1")]), deletes(T2, ("a", None))]
    table = log_records(blocks, merge_spec=EVENT, schema=SCHEMA)
    assert table is not None
    assert table.column("_hl_seq").to_pylist() == [0, 1, 2]
    assert table.column("_hl_delete").to_pylist() == [False, False, True]
    assert table.column("ts").to_pylist() == [1, 1, None]
    assert log_records([], merge_spec=EVENT, schema=SCHEMA) is None


def test_slice_descriptor_round_trip(slices):
    slices.base_file(BASE_ROWS).log(avro(T1, [("a", 1, "a1")]))
    descriptor = encode_slice(slices.slice)
    assert isinstance(descriptor, str)
    assert decode_slice(descriptor) == slices.slice
