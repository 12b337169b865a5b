"""Virtual keys (``hoodie.populate.meta.fields=false``): stored rows without a
``_hoodie_record_key`` are keyed by their record key fields, in the merge and in base files."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.config import TableConfig
from hudilite.errors import KeyGenerationError
from hudilite.merge import MergeSpec, merge_file_group
from hudilite.schema import DELETE_COL, RECORD_KEY_COL, SEQ_COL
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import (
    BaseFileWriter,
    read_bloom_filter,
    read_key_range,
    read_stored_keys,
)
from hudilite.virtual_keys import (
    record_key_spec,
    stored_record_keys,
    virtual_key_spec,
    with_stored_keys,
)


def config(keygen: str, keys: tuple[str, ...], populate: bool = False, **props: str) -> TableConfig:
    base = TableConfig.new(
        name="t",
        table_type="COPY_ON_WRITE",
        record_key_fields=keys,
        partition_fields=("p",) if keygen != "NON_PARTITION" else (),
        ordering_fields=("ts",),
        keygen_type=keygen,
    )
    merged = {**base.props, "hoodie.populate.meta.fields": str(populate).lower(), **props}
    return TableConfig.from_properties(merged)


def test_virtual_key_spec_only_for_tables_without_meta_fields():
    assert virtual_key_spec(config("SIMPLE", ("id",), populate=True)) is None
    spec = virtual_key_spec(config("SIMPLE", ("id",)))
    assert spec is not None and spec.record_key_fields == ("id",)


@pytest.mark.parametrize(
    ("keygen", "keys", "props", "expected"),
    [
        ("SIMPLE", ("id",), {}, ["k1", "k2"]),
        ("COMPLEX", ("id", "n"), {}, ["id:k1,n:1", "id:k2,n:__null__"]),
        ("COMPLEX", ("id",), {}, ["id:k1", "id:k2"]),
        ("COMPLEX", ("id",), {"hoodie.table.complex.keygen.encoding": "VALUE_ONLY"}, ["k1", "k2"]),
        ("NON_PARTITION", ("id", "n"), {}, ["id:k1,n:1", "id:k2,n:__null__"]),
    ],
)
def test_record_key_spec_renders_keys_as_the_tables_generator(keygen, keys, props, expected):
    rows = pa.table({"id": ["k1", "k2"], "n": [1, None], "p": ["x", "y"]})
    assert stored_record_keys(rows, record_key_spec(config(keygen, keys, **props))).to_pylist() == (
        expected
    )


def test_record_key_spec_of_a_timestamp_table_needs_no_timebased_settings():
    """A Hudi 0.x timestamp table keeps its timestamp type only in the catalog: its keys
    can still be derived (the partition path comes from the file)."""
    spec = record_key_spec(config("TIMESTAMP", ("id",)))
    assert stored_record_keys(pa.table({"id": ["a"]}), spec).to_pylist() == ["a"]


def test_stored_keys_fill_only_missing_ones():
    spec = record_key_spec(config("SIMPLE", ("id",)))
    rows = pa.table({RECORD_KEY_COL: ["kept", None, ""], "id": ["x", "b", "c"]})
    assert stored_record_keys(rows, spec).to_pylist() == ["kept", "b", "c"]
    # Without virtual keys the stored column is returned as it is.
    assert stored_record_keys(rows, None).to_pylist() == ["kept", None, ""]
    # No meta column at all.
    assert stored_record_keys(pa.table({"id": ["q"]}), spec).to_pylist() == ["q"]
    with pytest.raises(KeyGenerationError, match=r"record key field 'id' is null in row 0"):
        stored_record_keys(
            pa.table(
                {RECORD_KEY_COL: [None], "id": [None]},
            ),
            spec,
        )


def test_with_stored_keys_fills_key_and_partition():
    spec = record_key_spec(config("SIMPLE", ("id",)))
    rows = pa.table(
        {RECORD_KEY_COL: [None, "b"], "_hoodie_partition_path": [None, "p=1"], "id": ["a", "b"]}
    )
    out = with_stored_keys(rows, spec, "p=1")
    assert out[RECORD_KEY_COL].to_pylist() == ["a", "b"]
    assert out["_hoodie_partition_path"].to_pylist() == ["p=1", "p=1"]


def _incoming(*recs: tuple[str, int, str]) -> pa.Table:
    n = len(recs)
    return pa.table(
        {
            RECORD_KEY_COL: [r[0] for r in recs],
            "id": [r[0] for r in recs],
            "ts": [r[1] for r in recs],
            "v": [r[2] for r in recs],
            SEQ_COL: pa.array(range(n), pa.int64()),
            DELETE_COL: [False] * n,
        }
    )


def test_merge_matches_base_rows_without_keys_by_their_fields():
    base = pa.table(
        {
            RECORD_KEY_COL: pa.nulls(2, pa.string()),
            "id": ["a", "b"],
            "ts": [1, 1],
            "v": ["a1", "b1"],
        }
    )
    incoming = _incoming(("a", 2, "a2"), ("c", 2, "c2"))
    with_keys = MergeSpec("EVENT_TIME_ORDERING", "ts", virtual_keys=record_key_spec(
        config("SIMPLE", ("id",))))  # fmt: skip
    out = merge_file_group(with_keys, base, incoming)
    assert (out.inserts, out.updates, out.unchanged_rows) == (1, 1, 1)
    got = sorted((r["id"], r["v"]) for r in out.table.select(["id", "v"]).to_pylist())
    assert got == [("a", "a2"), ("b", "b1"), ("c", "c2")]
    # A table that stores its keys: a keyless stored row is damage, not a virtual key.
    with pytest.raises(KeyGenerationError, match=r"_hoodie_record_key is null in row 0"):
        merge_file_group(MergeSpec("EVENT_TIME_ORDERING", "ts"), base, incoming)


def test_base_file_with_keyless_rows_gets_no_bloom_filter_or_key_range(tmp_path):
    gw = FileSystemGateway(str(tmp_path))
    schema = pa.schema([(RECORD_KEY_COL, pa.string()), ("id", pa.string())])
    for name, keys in (("full.parquet", ["a", "b"]), ("partial.parquet", ["a", None]),
                       ("empty.parquet", ["a", ""])):  # fmt: skip
        with BaseFileWriter(gw, name, schema, bloom=BloomConfig()) as w:
            w.write(pa.table({RECORD_KEY_COL: keys, "id": ["a", "b"]}, schema))
    assert read_key_range(gw, "full.parquet") == ("a", "b")
    assert read_key_range(gw, "partial.parquet") is None
    assert read_key_range(gw, "empty.parquet") is None
    assert read_bloom_filter(gw, "full.parquet") is not None
    assert read_bloom_filter(gw, "partial.parquet") is None
    spec = record_key_spec(config("SIMPLE", ("id",)))
    assert read_stored_keys(gw, "partial.parquet", spec).to_pylist() == ["a", "b"]
    assert read_stored_keys(gw, "empty.parquet", spec).to_pylist() == ["a", "b"]
