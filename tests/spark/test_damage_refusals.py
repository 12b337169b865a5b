"""Writes and table services refuse to build on damaged files (issue 26).

A missing latest base file made reads fail, but the next INSERT packed into the file
group's previous version: the committed UPDATE was reverted and later reads succeeded
without a word. Every write (driver-side and Spark, insert and upsert, copy-on-write and
merge-on-read) and compaction or clustering must refuse, naming the missing file, and leave
the timeline without a new completed commit; with the file put back the table reads as
committed.
"""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import MissingFileError
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string())])
COLS = ["id", "ts", "p"]
SPARK = {"hoodie.hudilite.write.local.max.rows": "0"}


def batch(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r, strict=True)) for r in recs], SCHEMA)


def completed(t: hudilite.Table) -> list[tuple[str, str]]:
    """The completed writes and services (the refused write's own instant is rolled back:
    the check runs on the slices the transaction loads)."""
    return [
        (i.requested_time, i.action)
        for i in t.timeline()
        if i.state.name == "COMPLETED" and i.action != "rollback"
    ]


def newest_base(folder: str) -> str:
    names = [f for f in os.listdir(folder) if f.endswith(".parquet")]
    return max(names, key=lambda f: f.rsplit("_", 1)[1])


@pytest.fixture(params=["cow", "mor"])
def damaged(request, spark, tmp_path):
    """A table whose update's base file (COW) or compacted base file (MOR) is gone:
    ``(table, removed file's absolute path, kept copy, the committed rows)``."""
    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key="id", ordering_field="ts",
        partition_by=["p"], table_type=request.param,
    )  # fmt: skip
    t.write(batch(("a", 1, "x"), ("b", 1, "x")))
    t.write(batch(("a", 2, "x")))  # COW: a new base file version; MOR: a log
    if request.param == "mor":
        t.compact()  # the update now lives in the compacted base file only
    folder = os.path.join(t.path, "p=x")
    path = os.path.join(folder, newest_base(folder))
    kept = str(tmp_path / "kept.parquet")
    shutil.copy(path, kept)
    os.remove(path)
    return t, path, kept, [("a", 2, "x"), ("b", 1, "x")]


@pytest.mark.parametrize("where", ["driver", "spark"])
@pytest.mark.parametrize(
    "operation, records",
    [("insert", [("c", 1, "x")]), ("upsert", [("a", 3, "x")]), ("upsert", [("d", 1, "x")])],
    ids=["insert", "update", "upsert-insert"],
)
def test_writes_refuse_a_slice_with_a_missing_base_file(damaged, where, operation, records):
    t, path, kept, committed = damaged
    before = completed(t)
    options = SPARK if where == "spark" else {}
    with pytest.raises(MissingFileError) as err:
        t.write(batch(*records), operation, options=options)
    message = str(err.value)
    assert message.startswith(f"base file {path} (written by commit "), message
    assert "is missing" in message and "cannot build on its file group" in message
    assert completed(t) == before
    # Put back, the file is the table again: the committed update was not reverted.
    shutil.copy(kept, path)
    assert spark_rows(t.read(), COLS) == committed
    assert rows(hudi_rs_read(t.path), COLS) == committed


def test_compaction_and_clustering_refuse_a_missing_base_file(damaged):
    t, path, kept, committed = damaged
    if t.state().config.is_mor:  # a log on the slice: something to compact
        shutil.copy(kept, path)
        t.write(batch(("b", 5, "x")))
        os.remove(path)
    before = completed(t)
    with pytest.raises(MissingFileError, match=f"base file {path} "):
        t.compact() if t.state().config.is_mor else t.cluster()
    assert completed(t) == before
