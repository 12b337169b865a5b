"""What a commit leaves on disk and what every reader sees: retried tasks, pending compactions.

Retried tasks: the shared SparkSession (``local[2]``) never retries a task, and a second
SparkSession cannot live in the same process, so the retry scenario runs in a
subprocess with master ``local[1,2]`` (one thread, a task may fail once). Every write
task fails once right after writing its file (fail point ``after_file_write`` with
``fail_once:``) and Spark's retry succeeds; the commit must delete the first
attempts' files (Hudi's finalizeWrite).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import ConflictError
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.table.state import TableState
from hudilite.write.finalize import committed_paths
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows, spark_rows

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())]
)
COLS = ["id", "ts", "v", "p"]
FIRST = [(f"k{i}", 1, "v1", "p1" if i % 2 else "p2") for i in range(6)]
SECOND = [("k0", 2, "v2", "p2"), ("k1", 2, "v2", "p1"), ("n1", 1, "new", "p1")]
EXPECTED = sorted(
    {r[0]: r for r in [*FIRST, *SECOND]}.values(),
    key=repr,
)


def batch(recs: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r, strict=True)) for r in recs], SCHEMA)


def retried_writes(root: str) -> None:
    """Subprocess body: on a copy-on-write and a merge-on-read table, a bulk insert then an
    upsert whose every task fails once after writing its file (Spark retries it)."""
    from hudilite.failpoints import FAIL_POINT_KEY
    from hudilite.spark.session import spark_session

    spark = spark_session(master="local[1,2]", shuffle_partitions=2)
    fail_once = {FAIL_POINT_KEY: "fail_once:after_file_write"}
    for table_type in ("cow", "mor"):
        t = hudilite.Table.create(
            spark,
            f"{root}/{table_type}",
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            partition_by=["p"],
            table_type=table_type,  # type: ignore[arg-type]
        )
        t.write(batch(FIRST), "bulk_insert", options=fail_once)
        t.write(batch(SECOND), "upsert", options=fail_once)
    spark.stop()


def data_files(path: str) -> set[str]:
    """Every base and log file under the table (outside ``.hoodie``)."""
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".hoodie")]
        for f in files:
            if BaseFileName.parse(f) is not None or LogFileName.parse(f) is not None:
                out.add(os.path.relpath(os.path.join(root, f), path))
    return out


def named_by_commits(path: str) -> set[str]:
    state = TableState.load(FileSystemGateway(path))
    named: set[str] = set()
    for instant in state.timeline.commits():
        named |= committed_paths(state.timeline.commit_metadata(instant).write_stats())
    return named


@pytest.fixture(scope="module")
def retried(tmp_path_factory) -> Path:
    """Tables written by tasks that each failed once (in a ``local[1,2]`` subprocess)."""
    root = tmp_path_factory.mktemp("retried")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.test_commit_integrity", str(root)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    # Every task failed once after writing its file: the retries really happened.
    assert done.stderr.count("simulated failure at 'after_file_write'") >= 4
    return root


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_retried_tasks_leave_no_files_behind(spark, retried, table_type):
    path = str(retried / table_type)
    # No file that no commit names survived (before the fix: one per failed attempt).
    files = data_files(path)
    assert files == named_by_commits(path)
    temp = os.path.join(path, ".hoodie", ".temp")
    assert not os.path.isdir(temp) or os.listdir(temp) == []  # markers dropped at commit
    t = hudilite.Table.load(spark, path)
    assert spark_rows(t.read(), COLS) == EXPECTED
    assert rows(t.to_arrow(), COLS) == EXPECTED
    # hudi-rs lists the partitions: a leftover base file made it refuse the table,
    # a leftover bulk-insert file group showed its rows twice.
    assert rows(hudi_rs_read(path), COLS) == EXPECTED
    if table_type == "mor":  # the updates went to log files, retried as well
        assert any(".log." in f for f in files)


def test_concurrent_upserts_of_the_same_new_keys_commit_once(spark, tmp_path, monkeypatch):
    """Writer A has written its files; before it commits, writer B upserts the same 1,000
    new keys and commits. A must fail: the file-group check alone let both commit."""
    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key="id", ordering_field="ts", partition_by=["p"]
    )
    t.write(batch([("seed", 1, "s", "p2")]))  # (p1 has no small file both could pick)
    keys = [f"n{i:04d}" for i in range(1000)]
    a_rows = [(k, 1, "a", "p1") for k in keys]
    b_rows = [(k, 1, "b", "p1") for k in keys]
    commit = WriteTransaction.commit
    b_results = []

    b_started = []

    def commit_after_b(txn, metadata):
        if not b_started:  # A's commit: B runs its whole write (and commit) first
            b_started.append(True)
            b_results.append(t.write(batch(b_rows)))
        return commit(txn, metadata)

    monkeypatch.setattr(WriteTransaction, "commit", commit_after_b)
    with pytest.raises(ConflictError, match=r"inserted 1000 of the same new keys: p=p1/n0000, "):
        t.write(batch(a_rows))
    monkeypatch.undo()
    assert b_results[0].num_inserts == 1000
    expected = sorted([("seed", 1, "s", "p2"), *b_rows], key=repr)
    assert spark_rows(t.read(), COLS) == expected
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected
    assert [i.state.name for i in t.timeline() if i.action == "commit"] == ["COMPLETED"] * 2


def test_v6_logs_written_while_a_compaction_is_pending_are_read(spark, tmp_path):
    """Version 6: while compaction T is pending, new logs name T's slice (the compaction
    reads only the logs in its plan). Hudi's snapshot read (``getLatestMergedFileSlices
    BeforeOrOn`` -> ``fetchMergedFileSlice``) merges the previous slice with T's logs, so
    the late write is visible at once; hudilite's readers follow that rule."""
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type="mor",
        table_version=6,
    )
    t.write(batch([("a", 1, "v1", "p1"), ("b", 1, "v1", "p1")]))
    t.write(batch([("a", 2, "v2", "p1")]))
    planned = t.schedule_compaction(force=True)
    assert planned is not None
    late = t.write(batch([("b", 3, "late", "p1"), ("c", 3, "late", "p1")]))
    names = [LogFileName.parse(f.rsplit("/", 1)[-1]) for f in data_files(t.path)]
    assert any(n is not None and n.base_instant == planned.instant_time for n in names)
    expected = [("a", 2, "v2", "p1"), ("b", 3, "late", "p1"), ("c", 3, "late", "p1")]
    assert spark_rows(t.read(), COLS) == expected
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(t.to_arrow(as_of=late.instant_time), COLS) == expected
    # hudi-rs 0.5 gap (it deviates from Hudi Java here): it drops version-6 log files
    # whose base instant is a pending compaction, so it misses the late update of b (a log
    # in T's slice) while it shows the late insert of c (a new base file). Hudi Java (and
    # hudilite) show both.
    hudi_rs_gap = [("a", 2, "v2", "p1"), ("b", 1, "v1", "p1"), ("c", 3, "late", "p1")]
    assert rows(hudi_rs_read(t.path), COLS) == hudi_rs_gap
    t.compact(instant_time=planned.instant_time)
    assert spark_rows(t.read(), COLS) == expected
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected  # all readers agree again


if __name__ == "__main__":
    retried_writes(sys.argv[1])
