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
import re
import shutil

import pytest

import hudilite
from hudilite.errors import CorruptFileError, MissingFileError
from hudilite.spark.task_errors import hudilite_error_from
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_P

COLS = ID_TS_P.columns
SPARK = {"hoodie.hudilite.write.local.max.rows": "0"}


batch = ID_TS_P.batch


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
    t = ID_TS_P.create(spark, str(tmp_path / "t"), table_type=request.param)
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
    t, path, kept, _ = damaged
    if t.state().config.is_mor:  # a log on the slice: something to compact
        shutil.copy(kept, path)
        t.write(batch(("b", 5, "x")))
        os.remove(path)
    before = completed(t)
    with pytest.raises(MissingFileError, match=f"base file {path} "):
        t.compact() if t.state().config.is_mor else t.cluster()
    assert completed(t) == before


def log_files(folder: str) -> list[str]:
    return sorted(f for f in os.listdir(folder) if ".log." in f)


def test_a_corrupt_committed_log_block_fails_reads_and_compaction(spark, tmp_path):
    # 40 flipped bytes in a committed delta commit's log were skipped: the update vanished
    # from reads and compaction made the loss permanent.
    t = ID_TS_P.create(spark, str(tmp_path / "t"), table_type="mor")
    t.write(batch(("a", 1, "x"), ("b", 1, "x")))
    t.write(batch(("a", 2, "x")))
    folder = os.path.join(t.path, "p=x")
    (log,) = log_files(folder)
    path = os.path.join(folder, log)
    with open(path, "rb") as fh:
        intact = fh.read()
    damaged = bytearray(intact)
    damaged[200:240] = bytes(b ^ 0xFF for b in damaged[200:240])
    with open(path, "wb") as fh:
        fh.write(bytes(damaged))
    before = completed(t)
    pattern = rf"log file {path} has a corrupt block at bytes \d+-\d+, inside bytes 0-{len(intact)}"
    with pytest.raises(CorruptFileError, match=pattern):
        t.to_arrow()
    # Spark reads the slice in a task when the DataFrame is computed: the task's error.
    with pytest.raises(Exception) as err:
        t.read().collect()
    carried = hudilite_error_from(err.value)
    assert isinstance(carried, CorruptFileError) and re.match(pattern, str(carried))
    with pytest.raises(CorruptFileError, match=pattern):
        t.compact()
    assert completed(t) == before
    # Restored, the update is there and compaction keeps it.
    with open(path, "wb") as fh:
        fh.write(intact)
    t.compact()
    assert spark_rows(t.read(), COLS) == [("a", 2, "x"), ("b", 1, "x")]
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 2, "x"), ("b", 1, "x")]


def test_a_torn_tail_no_commit_recorded_is_skipped(spark, tmp_path):
    # The bytes of a failed append (past what the completed commits recorded) are skipped,
    # as Hudi's reader skips them: reads and compaction go on with the committed blocks.
    t = ID_TS_P.create(spark, str(tmp_path / "t"), table_type="mor")
    t.write(batch(("a", 1, "x")))
    t.write(batch(("a", 2, "x")))
    folder = os.path.join(t.path, "p=x")
    (log,) = log_files(folder)
    with open(os.path.join(folder, log), "ab") as fh:
        fh.write(b"#HUDI#" + b"\x00\x00\x00\x00\x00\x01\x00\x00" + b"torn" * 10)
    assert spark_rows(t.read(), COLS) == [("a", 2, "x")]
    assert rows(t.to_arrow(), COLS) == [("a", 2, "x")]
    t.compact()
    assert spark_rows(t.read(), COLS) == [("a", 2, "x")]
