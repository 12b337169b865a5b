"""Tables without meta fields (``hoodie.populate.meta.fields=false``, Hudi's virtual keys).

No fixture of ../shared has such a table and hudilite does not create them, so each test
writes a table with hudilite and then leaves it as Hudi writes one without meta fields
(:func:`strip_meta_fields`): the property false, the five ``_hoodie_*`` columns of every
base file and log record null, no bloom filter and no key-range footer in the base files.
Upserts and deletes must then find the stored rows by their record key fields, in every
index hudilite supports, in the driver-side and the Spark write, and merge-on-read reads
and compaction must match log records to base rows the same way. hudi-rs reads the result.
"""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudilite
from hudilite.errors import DuplicateKeyError, KeyGenerationError
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.log_blocks import encode_avro_records
from hudilite.storage.log_format import BlockType, LogBlock, block_records, read_log_file
from hudilite.storage.parquet_io import read_key_range
from hudilite.tablestate import properties_file
from hudilite.timeline.metadata import CommitMetadata
from tests.helpers import META, hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("v", pa.string())]
)
COLS = ["id", "ts", "region", "v"]
HOODIE_FOOTERS = (
    b"org.apache.hudi.bloomfilter",
    b"hoodie_min_record_key",
    b"hoodie_max_record_key",
)


def batch(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r, strict=True)) for r in recs], SCHEMA)


def strip_meta_fields(path: str) -> None:
    """Leave a table as Hudi writes one with ``hoodie.populate.meta.fields=false``."""
    gw = FileSystemGateway(path)
    props = properties_file.load(gw)
    props["hoodie.populate.meta.fields"] = "false"
    properties_file.store(gw, props)
    for entry in gw.list_recursive(""):
        name = entry.name
        if entry.is_dir or entry.path.startswith(".hoodie"):
            continue
        if name.endswith(".parquet"):
            table = pq.read_table(gw.abs_path(entry.path))
            for col in META:
                i = table.schema.get_field_index(col)
                table = table.set_column(i, col, pa.nulls(table.num_rows, pa.string()))
            kept = {
                k: v for k, v in (table.schema.metadata or {}).items() if k not in HOODIE_FOOTERS
            }
            gw.delete_file(entry.path)
            pq.write_table(table.replace_schema_metadata(kept), gw.abs_path(entry.path))
        elif ".log." in name:
            blocks = []
            for block in read_log_file(gw, entry.path):
                if block.block_type == BlockType.AVRO_DATA:
                    records = block_records(block)
                    for col in META:
                        i = records.schema.get_field_index(col)
                        records = records.set_column(
                            i, col, pa.nulls(records.num_rows, pa.string())
                        )
                    content = encode_avro_records(records, block.schema or "")
                    block = LogBlock(block.block_type, block.header, content, block.footer)
                blocks.append(block.encode())
            gw.delete_file(entry.path)
            gw.write_bytes(entry.path, b"".join(blocks))
    record_file_sizes(gw)


def record_file_sizes(gw: FileSystemGateway) -> None:
    """Make the completed commits record the files' sizes as they are now, as if Hudi had
    written them so (the readers and writers check files against their commits)."""
    sizes = {e.path: e.size for e in gw.list_recursive("") if not e.is_dir}
    for entry in gw.list_dir(".hoodie/timeline"):
        if entry.name.endswith((".commit", ".deltacommit")) and "_" in entry.name:
            meta = CommitMetadata.from_bytes(gw.read_bytes(entry.path))
            for stats in meta.partition_to_write_stats.values():
                stats[:] = [
                    dataclasses.replace(st, file_size_in_bytes=sizes[st.path])
                    if st.path in sizes
                    else st
                    for st in stats
                ]
            gw.delete_file(entry.path)
            gw.write_bytes(entry.path, meta.to_bytes(2))


def metaless_table(spark, path, table_type: str, options: dict[str, str] | None = None):
    t = hudilite.Table.create(
        spark,
        path,
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["region"],
        table_type=table_type,
        table_version=8,
        options={"hoodie.datasource.write.hive_style_partitioning": "false", **(options or {})},
    )
    t.write(batch(("a", 1, "us", "a1"), ("b", 1, "us", "b1"), ("c", 1, "eu", "c1")))
    strip_meta_fields(t.path)
    return hudilite.Table.load(spark, t.path)


def assert_rows(t, expected: list[tuple]) -> None:
    assert spark_rows(t.read(), COLS) == expected
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected


INDEXES = {
    "SIMPLE": {},
    "BLOOM": {},
    "GLOBAL_SIMPLE": {},
    "BUCKET": {"hoodie.bucket.index.num.buckets": "2"},
}


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@pytest.mark.parametrize("index", sorted(INDEXES))
def test_upsert_and_delete_find_rows_by_their_key_fields(spark, tmp_path, table_type, index):
    options = {"hoodie.index.type": index, **INDEXES[index]}
    t = metaless_table(spark, str(tmp_path / "t"), table_type, options)
    # The table is as Hudi leaves it: no stored key, no footer an index could trust.
    gw = FileSystemGateway(t.path)
    base_files = [e.path for e in gw.list_recursive("") if e.name.endswith(".parquet")]
    assert base_files and all(read_key_range(gw, p) is None for p in base_files)
    assert spark_rows(t.read(), ["_hoodie_record_key"]) == [(None,)] * 3

    # An upsert through Spark's index job (no driver-side write): a updated, d inserted.
    spark_path = {"hoodie.hudilite.write.local.max.rows": "0"}
    result = t.write(batch(("a", 2, "us", "a2"), ("d", 2, "eu", "d2")), options=spark_path)
    assert (result.num_inserts, result.num_updates) == (1, 1)
    assert_rows(t, [("a", 2, "us", "a2"), ("b", 1, "us", "b1"), ("c", 1, "eu", "c1"),
                    ("d", 2, "eu", "d2")])  # fmt: skip

    # A delete written in the driver (a small input): the stored row of b goes.
    result = t.write(batch(("b", 3, "us", None)), operation="delete")
    assert result.num_deletes == 1
    expected = [("a", 2, "us", "a2"), ("c", 1, "eu", "c1"), ("d", 2, "eu", "d2")]
    assert_rows(t, expected)

    if index == "GLOBAL_SIMPLE":
        # The global index finds c stored in eu and moves it to us (Hudi's default).
        t.write(batch(("c", 4, "us", "c4")))
        expected = [("a", 2, "us", "a2"), ("c", 4, "us", "c4"), ("d", 2, "eu", "d2")]
        assert_rows(t, expected)
    if table_type == "mor":
        assert len(t.compact()) == 1
        assert all(not s.log_files for s in t.state().view.latest_slices())
        assert_rows(t, expected)
        # After compaction the stored rows still match by their fields.
        t.write(batch(("d", 5, "eu", "d5")))
        expected = [r if r[0] != "d" else ("d", 5, "eu", "d5") for r in expected]
        assert_rows(t, expected)


def test_mor_log_records_without_keys_merge_and_compact(spark, tmp_path):
    """Log records Hudi wrote without meta fields update their base rows when read and
    when compacted (the log is stripped after hudilite wrote it)."""
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["region"],
        table_type="mor",
        table_version=8,
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"},
    )
    t.write(batch(("a", 1, "us", "a1"), ("b", 1, "us", "b1")))
    t.write(batch(("a", 2, "us", "a2"), ("c", 2, "us", "c2")))
    strip_meta_fields(t.path)
    t = hudilite.Table.load(spark, t.path)
    gw = FileSystemGateway(t.path)
    logs = [e.path for e in gw.list_recursive("") if ".log." in e.name]
    assert logs
    keys = [block_records(b)["_hoodie_record_key"].to_pylist() for b in read_log_file(gw, logs[0])]
    assert keys == [[None, None]]
    expected = [("a", 2, "us", "a2"), ("b", 1, "us", "b1"), ("c", 2, "us", "c2")]
    assert_rows(t, expected)
    # An update of a key only a keyless log record holds, then compaction.
    t.write(batch(("c", 3, "us", "c3")))
    expected = [("a", 2, "us", "a2"), ("b", 1, "us", "b1"), ("c", 3, "us", "c3")]
    assert_rows(t, expected)
    assert len(t.compact()) == 1
    assert all(not s.log_files for s in t.state().view.latest_slices())
    assert_rows(t, expected)


def test_sql_update_and_delete_on_a_metaless_table(spark, tmp_path):
    t = metaless_table(spark, str(tmp_path / "t"), "cow")
    session = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    session.sql(f"CREATE TABLE metaless USING hudi LOCATION '{t.path}'")
    session.sql("UPDATE metaless SET v = 'a9', ts = 9 WHERE id = 'a'")
    session.sql("DELETE FROM metaless WHERE id = 'c'")
    session.sql("MERGE INTO metaless t USING (SELECT 'b' AS id, 7L AS ts, 'us' AS region, "
                "'b7' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")  # fmt: skip
    got = session.sql("SELECT id, ts, region, v FROM metaless ORDER BY id").collect()
    expected = [("a", 9, "us", "a9"), ("b", 7, "us", "b7")]
    assert [tuple(r) for r in got] == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected


def test_a_stored_row_without_key_fields_is_refused_by_name(spark, tmp_path):
    """A row whose meta key is null and whose record key field is null cannot be matched:
    the write fails naming the field, before any file is written."""
    t = metaless_table(spark, str(tmp_path / "t"), "cow")
    gw = FileSystemGateway(t.path)
    path = next(e.path for e in gw.list_recursive("us") if e.name.endswith(".parquet"))
    table = pq.read_table(gw.abs_path(path))
    table = table.set_column(table.schema.get_field_index("id"), "id", pa.nulls(2, pa.string()))
    gw.delete_file(path)
    pq.write_table(table, gw.abs_path(path))
    record_file_sizes(gw)
    before = sorted(e.path for e in gw.list_recursive(""))
    with pytest.raises(KeyGenerationError, match=r"record key field 'id' is null in row 0"):
        t.write(batch(("a", 2, "us", "a2")))
    after = sorted(e.path for e in gw.list_recursive("") if not e.path.startswith(".hoodie"))
    assert after == [p for p in before if not p.startswith(".hoodie")]
    assert json.dumps(properties_file.load(gw)["hoodie.populate.meta.fields"]) == '"false"'


def test_insert_dup_policy_finds_keys_stored_without_meta_fields(spark, tmp_path):
    t = metaless_table(spark, str(tmp_path / "t"), "cow")
    policy = "hoodie.datasource.insert.dup.policy"
    with pytest.raises(DuplicateKeyError, match=r"already holds key\(s\) 'a' \(partition 'us'\)"):
        t.write(batch(("a", 5, "us", "a5"), ("e", 5, "eu", "e5")), operation="insert",
                options={policy: "fail"})  # fmt: skip
    t.write(batch(("a", 5, "us", "a5"), ("e", 5, "eu", "e5")), operation="insert",
            options={policy: "drop"})  # fmt: skip
    expected = [("a", 1, "us", "a1"), ("b", 1, "us", "b1"), ("c", 1, "eu", "c1"),
                ("e", 5, "eu", "e5")]  # fmt: skip
    assert_rows(t, expected)
