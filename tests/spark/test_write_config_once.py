"""A write resolves its options once (issue 28, options resolved once).

Every write through ``Table.write`` (what ``hudilite.save`` and SQL writes call) resolves
its index settings exactly once, and Hudi's record size estimate
(commit metadata read) at most once, only when it packs inserts: spies on the two
resolvers count the calls per write, on the executors' path and the driver-side one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.write import write_config
from tests.helpers import hudi_rs_read, rows

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
SPARK = {"hoodie.hudilite.write.local.max.rows": "0"}


def batch(ids: range, ts: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"k{i}" for i in ids],
            "ts": [ts] * len(ids),
            "city": ["a" if i % 2 else "b" for i in ids],
        },
        schema=SCHEMA,
    )


def test_each_write_resolves_its_options_once(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: dict[str, int] = {"index": 0, "size": 0}
    index_settings, avg_record_size = write_config.index_settings, write_config.avg_record_size

    def count_index(opts: Any) -> Any:
        calls["index"] += 1
        return index_settings(opts)

    def count_size(state: Any, sizes: Any) -> int:
        calls["size"] += 1
        return avg_record_size(state, sizes)

    monkeypatch.setattr(write_config, "index_settings", count_index)
    monkeypatch.setattr(write_config, "avg_record_size", count_size)

    def counted(fn: Any) -> tuple[int, int]:
        calls.update(index=0, size=0)
        fn()
        return calls["index"], calls["size"]

    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key="id", ordering_field="ts",
        partition_by=["city"],
    )  # fmt: skip
    # A bulk insert packs nothing: no estimate.
    assert counted(lambda: t.write(batch(range(4), 1), "bulk_insert", options=SPARK)) == (1, 0)
    # Upserts with new keys pack them into the small files: one estimate each.
    assert counted(lambda: t.write(batch(range(2, 6), 2), options=SPARK)) == (1, 1)
    assert counted(lambda: t.write(batch(range(5, 8), 3))) == (1, 1)  # driver-side
    # A delete inserts nothing.
    assert counted(lambda: t.write(batch(range(0, 1), 4), "delete", options=SPARK)) == (1, 0)
    expected = sorted(
        [(f"k{i}", 2 if i in (2, 3, 4) else 3, "a" if i % 2 else "b") for i in range(2, 8)]
        + [("k1", 1, "a")]
    )
    assert rows(t.to_arrow(), ["id", "ts", "city"]) == expected
    assert rows(hudi_rs_read(t.path), ["id", "ts", "city"]) == expected
