"""A rewritten base file's bloom filter keeps finding every key it holds.

Copy-on-write merges and compactions extend the replaced file's filter with the new keys
instead of hashing every key again; the BLOOM index then must still find every stored key
(a key it missed would be stored twice by the next upsert).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.read.planner import plan_snapshot
from hudilite.storage.parquet_io import read_base_file, read_bloom_filter
from tests.helpers import hudi_rs_read, rows
from tests.tables import UUID_TS_CITY

SCHEMA = UUID_TS_CITY.schema


def batch(keys: range | list[int], ts: int) -> pa.Table:
    return pa.table(
        {
            "uuid": [f"k{i:04d}" for i in keys],
            "ts": [ts] * len(keys),
            "city": ["sf" if i % 2 else "la" for i in keys],
        },
        schema=SCHEMA,
    )


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_bloom_index_finds_every_key_after_merges_deletes_and_compaction(
    spark, tmp_path, table_type
):
    t = UUID_TS_CITY.create(
        spark, str(tmp_path / "t"), table_type=table_type, options={"hoodie.index.type": "BLOOM"}
    )
    t.write(batch(range(0, 300), 1))
    t.write(batch(range(250, 400), 2))  # updates and inserts: files rewritten or logged
    t.write(batch(list(range(0, 400, 3)), 3), operation="delete")
    if table_type == "mor":
        t.compact()
    live = sorted(set(range(400)) - set(range(0, 400, 3)))
    state = t.state()
    plan = plan_snapshot(state.view)
    assert plan.native_paths and not plan.merge_slices  # compacted: base files only
    for rel in plan.native_paths:
        keys = read_base_file(state.gw, rel, columns=["_hoodie_record_key"])
        found = read_bloom_filter(state.gw, rel)
        assert found is not None
        assert found.might_contain_many(keys["_hoodie_record_key"]).all(), rel
    # Every stored key is found again: an upsert of all of them updates, stores no copy.
    again = t.write(batch(live, 4))
    assert (again.num_updates, again.num_inserts) == (len(live), 0)
    got = rows(hudi_rs_read(t.path), ["uuid", "ts"])
    assert got == sorted((f"k{i:04d}", 4) for i in live)
