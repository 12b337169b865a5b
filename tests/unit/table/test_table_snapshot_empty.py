"""``Table.snapshot()`` of a table with no commit yet (no Spark needed: creating a table and
reading it into Arrow run in this process)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite.errors import InstantNotFoundError
from hudilite.table.api import Table

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64()), ("p", pa.string())])


def test_snapshot_of_an_empty_table(tmp_path: Path) -> None:
    t = Table.create(None, str(tmp_path / "t"), SCHEMA, record_key="id", partition_by=["p"])  # type: ignore[arg-type]
    snap = t.snapshot()
    assert (snap.instant, snap.version, snap.as_of, snap.seen) == (None, None, None, frozenset())
    assert snap.schema == SCHEMA
    assert snap.timeline == ()
    assert snap.config.name == "t"
    got = snap.to_arrow(where="p = 'x' AND n > 1")
    assert got.num_rows == 0
    assert got.column_names[5:] == ["id", "n", "p"]
    assert repr(snap) == f"TableSnapshot({t.path!r}, instant=None)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.as_of = "1"  # type: ignore[misc]
    with pytest.raises(InstantNotFoundError) as info:
        t.snapshot(as_of="20200101000000000")
    assert str(info.value) == "cannot read as of 20200101000000000: the table has no commits"
