"""Parquet base files: writer settings, record-key footers, streaming writer, readers."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudilite.errors import CorruptFileError
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import (
    BaseFileWriter,
    read_base_file,
    read_footer,
    read_key_range,
    read_num_rows,
    read_schema,
    write_base_file,
)

REL = "city=sf/f1-0_0-1-2_20240101000000000.parquet"


@pytest.fixture
def gw(tmp_path: Path) -> FileSystemGateway:
    return FileSystemGateway(str(tmp_path / "tbl"))


def _table(keys: list[str | None], start: int = 0) -> pa.Table:
    n = len(keys)
    return pa.table(
        {
            "_hoodie_record_key": pa.array(keys, pa.string()),
            "id": pa.array(range(start, start + n), pa.int32()),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1, 0, 0, i, 123456, tzinfo=dt.UTC) for i in range(n)],
                pa.timestamp("ns", tz="UTC"),
            ),
            "tags": pa.array([["a", "b"]] * n, pa.list_(pa.string())),
        }
    )


def test_write_base_file_footer_and_settings(gw: FileSystemGateway) -> None:
    table = _table(["k3", "k1", "k2"]).replace_schema_metadata({"pandas": "{}"})
    size = write_base_file(gw, REL, table)
    assert size == gw.size(REL)
    meta = pq.read_metadata(gw.abs_path(REL))
    # Only Hudi's keys: no ARROW:schema, no pandas metadata.
    assert set(meta.metadata) == {
        b"hoodie_min_record_key",
        b"hoodie_max_record_key",
        b"org.apache.hudi.bloomfilter",
        b"hoodie_bloom_filter_type_code",
    }
    assert meta.metadata[b"hoodie_min_record_key"] == b"k1"
    assert meta.metadata[b"hoodie_max_record_key"] == b"k3"
    assert meta.metadata[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
    assert read_key_range(gw, REL) == ("k1", "k3")
    assert meta.num_rows == 3
    col = {meta.schema.column(i).path: meta.schema.column(i) for i in range(meta.num_columns)}
    ts = col["ts"].logical_type
    assert ts.type == "TIMESTAMP"
    ts_json = json.loads(ts.to_json())
    assert (ts_json["isAdjustedToUTC"], ts_json["timeUnit"]) == (True, "microseconds")
    # Spec-compliant 3-level lists.
    assert "tags.list.element" in col
    assert meta.row_group(0).column(0).compression == "SNAPPY"


def test_read_base_file_round_trip(gw: FileSystemGateway) -> None:
    table = _table(["b", "a"])
    write_base_file(gw, REL, table)
    got = read_base_file(gw, REL)
    assert got.schema.metadata is None
    assert got.column_names == ["_hoodie_record_key", "id", "ts", "tags"]
    assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert got.column("_hoodie_record_key").to_pylist() == ["b", "a"]
    assert got.column("ts").to_pylist()[1] == dt.datetime(
        2024, 1, 1, 0, 0, 1, 123456, tzinfo=dt.UTC
    )
    assert got.column("tags").to_pylist() == [["a", "b"], ["a", "b"]]
    only = read_base_file(gw, REL, columns=["id"])
    assert only.to_pydict() == {"id": [0, 1]}
    assert read_num_rows(gw, REL) == 2
    assert read_schema(gw, REL) == got.schema


def test_nulls_and_empty_keys(gw: FileSystemGateway) -> None:
    # Rows without a key (a table without meta fields): a range or bloom filter of the
    # other rows would hide them from the index, so the file gets neither.
    write_base_file(gw, "a.parquet", _table([None, "x", None]))
    assert read_key_range(gw, "a.parquet") is None
    assert read_footer(gw, "a.parquet") == {}
    write_base_file(gw, "b.parquet", _table([None]))
    assert read_key_range(gw, "b.parquet") is None
    assert read_footer(gw, "b.parquet") == {}
    write_base_file(gw, "c.parquet", _table([]))
    assert read_key_range(gw, "c.parquet") is None
    assert read_num_rows(gw, "c.parquet") == 0
    no_key = pa.table({"id": pa.array([1], pa.int32())})
    write_base_file(gw, "d.parquet", no_key)
    assert read_key_range(gw, "d.parquet") is None


def test_streaming_writer(gw: FileSystemGateway) -> None:
    schema = _table(["x"]).schema
    with BaseFileWriter(gw, REL, schema, row_group_size=2) as w:
        w.write(_table(["m", "c"]))
        w.write(_table(["z", "d", "q"], start=2).to_batches()[0])
        w.write(_table([]))
    size, rows, lo, hi = w.close()
    assert (rows, lo, hi) == (5, "c", "z")
    assert size == gw.size(REL)
    assert read_key_range(gw, REL) == ("c", "z")
    got = read_base_file(gw, REL)
    assert got.column("_hoodie_record_key").to_pylist() == ["m", "c", "z", "d", "q"]
    assert got.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert pq.read_metadata(gw.abs_path(REL)).num_row_groups == 3
    with pytest.raises(ValueError, match="after close"):
        w.write(_table(["late"]))


def test_streaming_writer_rejects_other_schema_and_aborts(gw: FileSystemGateway) -> None:
    schema = _table(["x"]).schema
    with pytest.raises(ValueError, match="does not match"), BaseFileWriter(gw, REL, schema) as w:
        w.write(pa.table({"id": pa.array([1], pa.int32())}))
    assert not gw.exists(REL)


def test_bytes_written_grows(gw: FileSystemGateway) -> None:
    schema = _table(["x"]).schema
    w = BaseFileWriter(gw, REL, schema, row_group_size=1)
    before = w.bytes_written
    w.write(_table(["a", "b"]))
    assert w.bytes_written > before
    w.close()


def test_corrupt_file(gw: FileSystemGateway) -> None:
    gw.write_bytes("bad.parquet", b"not parquet at all")
    with pytest.raises(CorruptFileError, match=r"bad\.parquet"):
        read_base_file(gw, "bad.parquet")
    with pytest.raises(CorruptFileError):
        read_key_range(gw, "bad.parquet")
    with pytest.raises(FileNotFoundError):
        read_base_file(gw, "missing.parquet")


def test_reads_java_written_base_file(shared_fixture: Callable[[str], Path]) -> None:
    base = shared_fixture("sample_table/cow/v8_nonpartitioned.zip")
    gw = FileSystemGateway(str(base))
    rel = "2746610d-ad02-4adb-a038-5cbb99cbd455-0_0-75-100_20250713010536861.parquet"
    if not gw.exists(rel):
        pytest.skip("fixture file layout changed")
    assert read_key_range(gw, rel) == ("1", "4")
    footer = read_footer(gw, rel)
    assert footer["hoodie_bloom_filter_type_code"] == "DYNAMIC_V0"
    table = read_base_file(gw, rel)
    # The Java footer (bloom filter, Avro schema) must not ride along with the rows.
    assert table.schema.metadata is None
    assert table.column_names[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    assert sorted(table.column("_hoodie_record_key").to_pylist()) == ["1", "2", "3", "4"]
    # Rewriting those rows keeps the types and yields Hudi's footer keys only.
    write_base_file(gw, "copy.parquet", table)
    assert read_base_file(gw, "copy.parquet").equals(table)
    # ... and the same bloom filter, byte for byte, as Hudi wrote for these keys.
    hudi_keys = (
        "hoodie_min_record_key",
        "hoodie_max_record_key",
        "hoodie_bloom_filter_type_code",
        "org.apache.hudi.bloomfilter",
    )
    assert read_footer(gw, "copy.parquet") == {k: footer[k] for k in hudi_keys}


def test_dictionaries_only_for_columns_that_repeat(gw: FileSystemGateway) -> None:
    """Unique columns (the record key, distinct doubles) are written plain; columns that
    repeat their values (a city, a few thousand names) keep dictionaries."""
    n = 20_000
    table = pa.table(
        {
            "_hoodie_record_key": pa.array([f"key-{i:06d}" for i in range(n)]),
            "fare": pa.array([i * 1.25 for i in range(n)], pa.float64()),
            "city": pa.array(["sf", "nyc"] * (n // 2)),
            "driver": pa.array([f"driver-{i % 3000}" for i in range(n)]),
            "note": pa.array([None] * n, pa.string()),
        }
    )
    write_base_file(gw, REL, table)
    meta = pq.read_metadata(gw.abs_path(REL))
    group = meta.row_group(0)
    dictionary = {
        group.column(i).path_in_schema.split(".")[0]: "RLE_DICTIONARY" in group.column(i).encodings
        for i in range(group.num_columns)
    }
    assert dictionary == {
        "_hoodie_record_key": False,
        "fare": False,
        "city": True,
        "driver": True,
        "note": True,
    }
    assert read_base_file(gw, REL).equals(table)


def test_streaming_writer_buffers_batches_into_row_groups(gw: FileSystemGateway) -> None:
    """Without a row group size, batches are buffered (Spark hands a task 65,536 rows at a
    time): a few small writes make one row group, and the size estimate counts them."""
    schema = _table(["x"]).schema
    w = BaseFileWriter(gw, REL, schema)
    for i in range(5):
        w.write(_table([f"k{i}{j}" for j in range(10)], start=10 * i))
        assert w.bytes_written > 0
    size, rows, lo, hi = w.close()
    assert (rows, lo, hi) == (50, "k00", "k49")
    assert size == gw.size(REL)
    assert pq.read_metadata(gw.abs_path(REL)).num_row_groups == 1
    assert read_base_file(gw, REL).column("id").to_pylist() == list(range(50))


def test_empty_streaming_write_is_a_valid_file(gw: FileSystemGateway) -> None:
    schema = _table(["x"]).schema
    with BaseFileWriter(gw, REL, schema) as w:
        pass
    assert w.close()[1] == 0
    assert read_num_rows(gw, REL) == 0
    assert read_schema(gw, REL).names == schema.names
