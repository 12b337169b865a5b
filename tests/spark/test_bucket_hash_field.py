"""``hoodie.bucket.index.hash.field``: buckets hash only the configured record key fields, as
Hudi's bucket index does (a writer that hashed every key field would store a key Hudi wrote
in another bucket: twice)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import ConfigError
from hudilite.index import bucket as ref
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [("a", pa.string()), ("b", pa.string()), ("ts", pa.int64()), ("city", pa.string())]
)
DATA = ["a", "b", "ts", "city"]


def _batch(recs: list[tuple[str, str, int, str]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(DATA, r, strict=True)) for r in recs], SCHEMA)


def _file_id(file_name: str) -> str:
    file_id = file_name.split("_")[0]
    return file_id[1:] if file_id.startswith(".") else file_id  # a log file: .<id>_...


@pytest.mark.parametrize("local", [True, False], ids=["driver", "spark"])
def test_buckets_hash_the_configured_fields(spark: Any, tmp_path: Any, local: bool) -> None:
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key=["a", "b"],
        ordering_field="ts",
        partition_by=["city"],
        table_type="mor",
        options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "8",
            "hoodie.bucket.index.hash.field": "a",
        },
    )
    # The option comes from the table's properties: the writes do not repeat it.
    write = {"hoodie.hudilite.write.local.max.rows": "100000" if local else "0"}
    recs = [(f"a{i % 6}", f"b{i}", 1, "sf" if i % 2 else "la") for i in range(40)]
    t.write(_batch(recs), options=write)
    r = t.write(_batch([(a, b, 2, c) for a, b, _, c in recs[::3]]), options=write)
    assert (r.num_updates, r.num_inserts) == (14, 0)
    stored = t.read().toArrow()
    assert stored.num_rows == 40
    buckets_of_a: dict[tuple[str, str], set[int | None]] = {}
    for row in stored.select(["_hoodie_record_key", "_hoodie_file_name", "a", "city"]).to_pylist():
        bucket = ref.bucket_of_file_id(_file_id(row["_hoodie_file_name"]))
        assert bucket == ref.bucket_id(row["_hoodie_record_key"], 8, ["a"]), row
        buckets_of_a.setdefault((row["city"], row["a"]), set()).add(bucket)
    # Every row of one `a` (in one partition) sits in one bucket, whatever its `b`.
    assert all(len(found) == 1 for found in buckets_of_a.values())
    want = {(a, b, 2 if i % 3 == 0 else 1, c) for i, (a, b, _, c) in enumerate(recs)}
    assert set(spark_rows(t.read(), DATA)) == want
    assert spark_rows(t.read(), DATA) == rows(hudi_rs_read(t.path), DATA)


def test_hash_fields_must_be_record_key_fields() -> None:
    assert ref.hash_fields(("a", "b"), None) == ["a", "b"]
    assert ref.hash_fields(("a", "b"), ("b",)) == ["b"]
    with pytest.raises(ConfigError) as err:
        ref.hash_fields(("a", "b"), ("a", "city"))
    assert str(err.value) == (
        "hoodie.bucket.index.hash.field 'a,city' names 'city', not a record key field (a, b)"
    )
