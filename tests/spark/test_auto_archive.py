"""Archival runs after commits, as Hudi's ``hoodie.archive.automatic`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudilite.table import Table
from tests.helpers import hudi_rs_read

SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("v", pa.string())])

# The subject is the automatic services: run with Hudi's defaults (tests/spark/conftest.py).
pytestmark = pytest.mark.services


@pytest.mark.parametrize("version", [6, 8])
def test_commits_beyond_keep_max_are_archived_after_a_write(
    spark: Any, tmp_path: Path, version: int
) -> None:
    opts = {
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
        "hoodie.cleaner.commits.retained": "1",
    }
    t = Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key="id", ordering_field="ts",
        table_version=version, options=opts,
    )  # fmt: skip
    results = []
    for i in range(5):
        rows = pa.Table.from_pylist([{"id": i, "ts": i, "v": f"v{i}"}], SCHEMA)
        results.append(t.write(rows))
    archived = {i.requested_time for i in t.archived_timeline()}
    assert results[0].instant_time in archived
    assert any("archive" in r.extra for r in results)
    assert results[-1].instant_time not in archived
    expected = [(i, f"v{i}") for i in range(5)]
    got = hudi_rs_read(t.path)
    assert sorted(zip(got["id"].to_pylist(), got["v"].to_pylist(), strict=True)) == expected
    mine = t.to_arrow()
    assert sorted(zip(mine["id"].to_pylist(), mine["v"].to_pylist(), strict=True)) == expected
    t.write(
        pa.Table.from_pylist([{"id": 9, "ts": 9, "v": "x"}], SCHEMA),
        options={"hoodie.archive.automatic": "false"},
    )
