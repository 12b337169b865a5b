"""The pure-Arrow parts of the write path: packing, indexes, keying, the file-group writer."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudilite.index.bucket import (
    bucket_id,
    bucket_of_file_id,
    hash_key_values,
    java_list_hash,
    java_string_hash,
    new_bucket_file_id,
)
from hudilite.index.simple import candidate_files, overlaps
from hudilite.keygen import KeyGenSpec
from hudilite.merge import MergeSpec
from hudilite.schema import with_meta_columns
from hudilite.storage import bloom_filter as bf
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName
from hudilite.storage.parquet_io import (
    read_base_file,
    read_bloom_filter,
    read_footer,
    read_key_range,
)
from hudilite.write.assign import PackingSettings, SmallFile, assign_inserts, average_record_size
from hudilite.write.file_group_writer import ExistingFile, WriteContext, write_file_group
from hudilite.write.keying import KeyingSpec, key_batch


def ids(prefix: str = "new"):
    counter = itertools.count()
    return lambda: f"{prefix}{next(counter)}"


def test_small_files_are_filled_before_new_file_groups():
    settings = PackingSettings(small_file_limit=1000, max_file_size=2000, avg_record_size=100)
    smalls = {
        "p": [
            SmallFile("p", "f-big", "p/f-big", "1", 1500),  # not small: above the limit
            SmallFile("p", "f-small", "p/f-small", "1", 500),  # room for 15 records
        ]
    }
    buckets = assign_inserts({"p": 40, "q": 0}, smalls, settings, ids())
    assert [(b.file_id, b.capacity, b.is_new) for b in buckets] == [
        ("f-small", 15, False),
        ("new0", 13, True),  # 25 left over, 20 per new file: two files of 13 and 12
        ("new1", 12, True),
    ]
    assert buckets[0].lo == 0.0 and buckets[-1].hi == 1.0
    assert buckets[0].hi == pytest.approx(15 / 40)


def test_packing_disabled_by_zero_limit_and_record_size_estimate():
    settings = PackingSettings(small_file_limit=0, max_file_size=1000, avg_record_size=100)
    smalls = {"p": [SmallFile("p", "f", "p/f", "1", 10)]}
    buckets = assign_inserts({"p": 5}, smalls, settings, ids())
    assert [(b.file_id, b.is_new) for b in buckets] == [("new0", True)]
    assert average_record_size([(500, 10), (100_000, 1000)], 1024) == 100  # tiny commit skipped
    assert average_record_size([], 1024) == 1024
    # Hudi's threshold: only a commit larger than threshold bytes informs the estimate
    # (a few records under a bloom-filter footer would otherwise read as ~40 KB each).
    assert (
        average_record_size([(431_000, 10), (10_000_000, 1000)], 1024, threshold=5_000_000)
        == 10_000
    )
    assert average_record_size([(431_000, 10)], 1024, threshold=104_857_600) == 1024
    assert average_record_size([(1001, 10)], 1024, threshold=0) == 101  # rounds up, as Hudi


def test_simple_index_prunes_files_by_footer_key_range():
    assert overlaps(("b", "d"), ("a", "b")) and not overlaps(("c", "d"), ("a", "b"))
    assert overlaps(None, ("a", "b"))
    ranges = {"f1": ("a", "c"), "f2": ("m", "z"), "f3": None, "f4": ("a", "z")}
    files = [("p", "f1"), ("p", "f2"), ("p", "f3"), ("other", "f4")]
    assert candidate_files(files, {"p": ("d", "k")}, ranges.get) == ["f3"]
    assert candidate_files(files, {"p": ("b", "n")}, ranges.get) == ["f1", "f2", "f3"]


def test_bucket_hash_matches_java():
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_list_hash(["a"]) == 128  # List.of("a").hashCode() = 31 + 97
    assert hash_key_values("id:1,name:x", ["name"]) == ["x"]
    assert hash_key_values("plain", ["id"]) == ["plain"]
    # (List.of("hello").hashCode() & MAX) % 7 = (31 + 99162322) % 7
    assert bucket_id("hello", 7) == (31 + 99162322) % 7
    fid = new_bucket_file_id(3)
    assert fid.startswith("00000003-") and fid.endswith("-0")
    assert bucket_of_file_id(fid) == 3 and bucket_of_file_id("abc-0") is None


SCHEMA = pa.schema([("k", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def keyed(rows: list[tuple], *, delete: bool = False, seq: int = 0) -> pa.Table:
    batch = pa.RecordBatch.from_pylist(
        [dict(zip(["k", "ts", "v"], r, strict=True)) for r in rows], SCHEMA
    )
    spec = KeyingSpec(KeyGenSpec("NON_PARTITION", ("k",)), delete_all=delete)
    return pa.Table.from_batches([key_batch(spec, batch, seq)])


def test_keying_adds_key_partition_order_and_delete_flag():
    t = keyed([("a", 1, "x"), ("b", 2, "y")], seq=100)
    assert t.column_names[-4:] == [
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hl_seq",
        "_hl_delete",
    ]
    assert t["_hoodie_record_key"].to_pylist() == ["a", "b"]
    assert t["_hoodie_partition_path"].to_pylist() == ["", ""]
    assert t["_hl_seq"].to_pylist() == [100, 101]
    assert keyed([("a", 1, "x")], delete=True)["_hl_delete"].to_pylist() == [True]


def test_file_group_writer_merges_and_preserves_untouched_records(tmp_path):
    gw = FileSystemGateway(str(tmp_path))
    ctx = WriteContext(
        gw=gw,
        instant_time="20240101000000000",
        storage_schema=with_meta_columns(SCHEMA),
        merge_spec=MergeSpec("EVENT_TIME_ORDERING", "ts"),
        operation="upsert",
    )
    stats = write_file_group(ctx, "", "fg-0", keyed([("a", 1, "x"), ("b", 1, "y")]), "0-1-2", 0)
    first = stats.to_pylist()[0]
    assert first["path"] == "fg-0_0-1-2_20240101000000000.parquet"
    assert (first["num_inserts"], first["num_updates"], first["prev_commit"]) == (2, 0, "null")
    assert read_key_range(gw, first["path"]) == ("a", "b")

    ctx2 = WriteContext(
        gw=gw,
        instant_time="20240102000000000",
        storage_schema=ctx.storage_schema,
        merge_spec=ctx.merge_spec,
        operation="upsert",
        existing={("", "fg-0"): ExistingFile(first["path"], "20240101000000000")},
    )
    incoming = keyed([("a", 5, "x2"), ("b", 0, "stale"), ("c", 1, "z"), ("c", 2, "z2")])
    second = write_file_group(ctx2, "", "fg-0", incoming, "0-3-4", 1).to_pylist()[0]
    assert (second["num_inserts"], second["num_updates"], second["num_deletes"]) == (1, 1, 0)
    assert second["prev_commit"] == "20240101000000000"
    out = read_base_file(gw, second["path"]).to_pylist()
    by_key = {r["k"]: r for r in out}
    assert {k: (r["ts"], r["v"]) for k, r in by_key.items()} == {
        "a": (5, "x2"),
        "b": (1, "y"),
        "c": (2, "z2"),
    }
    assert by_key["b"]["_hoodie_commit_time"] == "20240101000000000"  # untouched: preserved
    assert by_key["a"]["_hoodie_commit_time"] == "20240102000000000"
    assert by_key["a"]["_hoodie_commit_seqno"].startswith("20240102000000000_1_")
    name = BaseFileName.parse(second["path"])
    assert name is not None and {r["_hoodie_file_name"] for r in out} == {second["path"]}

    ctx3 = WriteContext(
        gw=gw,
        instant_time="20240103000000000",
        storage_schema=ctx.storage_schema,
        merge_spec=ctx.merge_spec,
        operation="delete",
        existing={("", "fg-0"): ExistingFile(second["path"], "20240102000000000")},
    )
    gone = keyed([("a", None, None), ("b", None, None), ("c", None, None)], delete=True)
    third = write_file_group(ctx3, "", "fg-0", gone, "0-5-6", 0).to_pylist()[0]
    assert (third["num_deletes"], third["num_writes"]) == (3, 0)
    assert read_base_file(gw, third["path"]).num_rows == 0  # an empty file ends the old slice


def upsert_context(
    gw: FileSystemGateway, instant: str, operation: str = "upsert", existing: str | None = None
) -> WriteContext:
    """A write into file group ``fg-0`` of a non-partitioned table (replacing ``existing``)."""
    return WriteContext(
        gw=gw,
        instant_time=instant,
        storage_schema=with_meta_columns(SCHEMA),
        merge_spec=MergeSpec("EVENT_TIME_ORDERING", "ts"),
        operation=operation,
        existing={("", "fg-0"): ExistingFile(existing, "x")} if existing else {},
    )


def test_a_merge_extends_the_old_files_bloom_filter_with_its_new_keys(tmp_path, monkeypatch):
    """The rewritten file's filter holds every key it stores, deleted keys' bits kept."""
    gw = FileSystemGateway(str(tmp_path))
    hashed: list[int] = []
    real = bf.key_positions

    def counting(keys, vector_size, nb_hash):
        hashed.append(len(keys))
        return real(keys, vector_size, nb_hash)

    monkeypatch.setattr(bf, "key_positions", counting)

    def ctx(instant: str, operation: str = "upsert", existing: str | None = None):
        return upsert_context(gw, instant, operation, existing)

    first = [(f"k{i:04d}", 1, "a") for i in range(300)]
    path1 = write_file_group(ctx("20240101000000000"), "", "fg-0", keyed(first), "0-1-2", 0)
    path1 = path1.to_pylist()[0]["path"]
    more = [(f"k{i:04d}", 2, "b") for i in range(250, 400)]  # 50 updates, 100 inserts
    ctx2 = ctx("20240102000000000", existing=path1)
    hashed.clear()
    path2 = write_file_group(ctx2, "", "fg-0", keyed(more), "0-3-4", 0).to_pylist()[0]["path"]
    assert hashed == [100]  # only the inserted keys were hashed
    keys = [f"k{i:04d}" for i in range(400)]
    # No key deleted: the same filter as one built from the file's keys in write order.
    written = read_base_file(gw, path2)["_hoodie_record_key"]
    assert sorted(written.to_pylist()) == keys
    assert (
        read_footer(gw, path2)[bf.BLOOM_FILTER_FOOTER]
        == bf.build(bf.BloomConfig(), [written]).serialize()
    )
    gone = keyed([(f"k{i:04d}", None, None) for i in range(0, 400, 2)], delete=True)
    ctx3 = ctx("20240103000000000", operation="delete", existing=path2)
    path3 = write_file_group(ctx3, "", "fg-0", gone, "0-5-6", 0).to_pylist()[0]["path"]
    kept = read_base_file(gw, path3)["_hoodie_record_key"].to_pylist()
    assert kept == keys[1::2]
    assert read_bloom_filter(gw, path3).might_contain_many(kept).all()


def test_unique_meta_columns_are_written_without_a_dictionary(tmp_path):
    ctx = upsert_context(FileSystemGateway(str(tmp_path)), "20240101000000000")
    rows = [(f"k{i:04d}", 1, "same") for i in range(100)]
    path = write_file_group(ctx, "", "fg-0", keyed(rows), "0-1-2", 0).to_pylist()[0]["path"]
    meta = pq.ParquetFile(str(tmp_path / path)).metadata.row_group(0)
    encodings = {
        meta.column(i).path_in_schema: meta.column(i).encodings for i in range(meta.num_columns)
    }
    assert "RLE_DICTIONARY" not in encodings["_hoodie_record_key"]
    assert "RLE_DICTIONARY" not in encodings["_hoodie_commit_seqno"]
    assert "RLE_DICTIONARY" in encodings["_hoodie_commit_time"]
    assert "RLE_DICTIONARY" in encodings["v"]
