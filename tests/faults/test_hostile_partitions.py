"""Hostile partition values (issue 9 item 4): refused with a clear error or stored safely;
never a file outside the table or in its metadata folder, never a poisoned table."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite.errors import HudiliteError
from tests.faults.harness import SCHEMA, assert_readers_match, oracle_of, recs

pytestmark = [pytest.mark.faults, pytest.mark.spark]

HOSTILE = ["..", "../../outside", ".hoodie", "a\\b", "a/../../b"]


def _files(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
def test_hostile_partition_values(spark, tmp_path: Path, hive: bool) -> None:
    """Guarantee: each hostile value is refused with a HudiliteError (nothing written) or
    stored so that every reader returns it; no file lands outside the table or in
    ``.hoodie`` except timeline files; later writes and reads still work."""
    import hudilite

    root = tmp_path / "box"
    t = hudilite.Table.create(
        spark,
        str(root / "a" / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower()},
    )
    first = recs(range(3), 1, "ok", ("ok",))
    t.write(pa.Table.from_pylist(first, schema=SCHEMA))
    oracle = oracle_of(first)
    before = _files(root)
    for i, value in enumerate(HOSTILE):
        rec = [{"id": f"h{i}", "ts": 2, "v": "hostile", "p": value}]
        try:
            t.write(pa.Table.from_pylist(rec, schema=SCHEMA))
        except HudiliteError as exc:
            assert "'p'" in str(exc) or value in str(exc), exc
        else:
            oracle.upsert(rec)
    stray = [
        f
        for f in _files(root) - before
        if not f.startswith(os.path.join("a", "t", ""))
        or (f.startswith(os.path.join("a", "t", ".hoodie", "")) and f.endswith(".parquet"))
    ]
    assert stray == []
    later = recs(range(3, 6), 3, "later", ("ok",))
    t.write(pa.Table.from_pylist(later, schema=SCHEMA))
    oracle.upsert(later)
    assert_readers_match(spark, root / "a" / "t", oracle)
