"""Spark retries a task that failed after writing its file (``fail_once`` fail point).

One writer process runs on ``local[1,4]`` (task retries on; the test session's
``local[2]`` never retries a task, and one process holds one SparkContext); the first
attempt of every write task raises after its data file is written, the retry succeeds.
It writes to copies of the seed tables and to two new tables (copy-on-write and
merge-on-read: a bulk insert, then an upsert). The commits must name only the retries'
files, and no file of a failed attempt may stay behind (Hudi's finalizeWrite): hudi-rs
rejects a table with two files of one instant in one file group, and shows a leftover
bulk-insert file group's rows twice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.tablestate.state import TableState
from hudilite.write.finalize import committed_paths
from tests.faults.conftest import SEED_BATCHES
from tests.faults.harness import (
    COLS,
    SCHEMA,
    Outcome,
    assert_readers_match,
    completed_times,
    copy_table,
    oracle_of,
    pending,
    recs,
    run_writer,
    state,
)

pytestmark = [pytest.mark.faults, pytest.mark.spark]

FAIL_ONCE = {
    "hudilite.internal.fail.point": "fail_once:after_file_write",
    # Small writes run in the driver (no task to retry): these are Spark writes.
    "hoodie.hudilite.write.local.max.rows": "0",
}
#: The seed tables' retried upsert.
BATCH = recs([*range(0, 40, 2), *range(50, 60)], 15, "retried")
#: The new tables' bulk insert and upsert (updates in both partitions and a new key).
FIRST = [{"id": f"k{i}", "ts": 1, "v": "v1", "p": "p1" if i % 2 else "p2"} for i in range(6)]
SECOND = [
    {"id": "k0", "ts": 2, "v": "v2", "p": "p2"},
    {"id": "k1", "ts": 2, "v": "v2", "p": "p1"},
    {"id": "n1", "ts": 1, "v": "new", "p": "p1"},
]
SEEDS = ("cow6", "mor8")
NEW = ("cow", "mor")


@pytest.fixture(scope="module")
def retried(
    spark: Any, seeds: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Path], Outcome]:
    """Run the writer once: an upsert on a copy of each seed table, then a bulk insert and
    an upsert on each new table, every write with ``fail_once:after_file_write``."""
    root = tmp_path_factory.mktemp("retried")
    paths = {seed: copy_table(seeds[seed], root / seed) for seed in SEEDS}
    steps = [
        {"op": "upsert", "path": str(paths[s]), "rows": BATCH, "options": FAIL_ONCE} for s in SEEDS
    ]
    for table_type in NEW:
        # Created here (no Spark job): the writer process only writes.
        paths[table_type] = root / table_type
        hudilite.Table.create(
            spark,
            str(paths[table_type]),
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            partition_by=["p"],
            table_type=table_type,  # type: ignore[arg-type]
        )
        for op, rows in (("bulk_insert", FIRST), ("upsert", SECOND)):
            steps.append(
                {"op": op, "path": str(paths[table_type]), "rows": rows, "options": FAIL_ONCE}
            )
    out = run_writer({"spark": True, "master": "local[1,4]", "max_failures": 4, "steps": steps})
    assert [s["ok"] for s in out.steps] == [True] * 6, out.describe()
    # Every write's tasks failed once after writing a file: the retries really happened.
    assert out.stderr.count("simulated failure at 'after_file_write'") >= 6, out.describe()
    return paths, out


def _files_of(path: Path, instant: str) -> set[str]:
    """Data files on disk written by ``instant`` (base files and v8 log files)."""
    out = set()
    for f in path.rglob("*"):
        if ".hoodie" in f.parts or not f.is_file() or f.name.startswith(".hoodie_partition"):
            continue
        if instant in f.name:
            out.add(str(f.relative_to(path)))
    return out


def test_retried_tasks_leave_only_committed_files(spark, seeds, retried) -> None:
    """Guarantee: with task retries, each committed write keeps exactly the files its
    commit names; every reader (hudi-rs included) equals the oracle."""
    paths, _ = retried
    for seed in SEEDS:
        path = paths[seed]
        (instant,) = completed_times(path) - completed_times(seeds[seed])
        st = state(path)
        done = next(i for i in st.timeline.completed() if i.requested_time == instant)
        named = {s.path for s in st.timeline.commit_metadata(done).write_stats()}
        assert _files_of(path, instant) == named, seed
        oracle = oracle_of(*(b for _, b in SEED_BATCHES), BATCH)
        assert_readers_match(spark, path, oracle)
        assert pending(path) == []


def _data_files(path: Path) -> set[str]:
    """Every base and log file under the table (outside ``.hoodie``)."""
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".hoodie")]
        for f in files:
            if BaseFileName.parse(f) is not None or LogFileName.parse(f) is not None:
                out.add(os.path.relpath(os.path.join(root, f), path))
    return out


def _named_by_commits(path: Path) -> set[str]:
    st = TableState.load(FileSystemGateway(str(path)))
    named: set[str] = set()
    for instant in st.timeline.commits():
        named |= committed_paths(st.timeline.commit_metadata(instant).write_stats())
    return named


@pytest.mark.parametrize("table_type", NEW)
def test_retried_bulk_insert_and_upsert_leave_no_files_behind(spark, retried, table_type) -> None:
    """Guarantee: a bulk insert and an upsert whose every task failed once after writing
    its file leave no file that no commit names, no markers, and every reader (hudi-rs
    included) shows each key once with its newest row (merge-on-read: the updates' log
    files were retried as well)."""
    paths, _ = retried
    path = paths[table_type]
    # No file that no commit names survived (before the fix: one per failed attempt).
    files = _data_files(path)
    assert files == _named_by_commits(path)
    temp = path / ".hoodie" / ".temp"
    assert not temp.is_dir() or list(temp.iterdir()) == []  # markers dropped at commit
    # hudi-rs lists the partitions: a leftover base file made it refuse the table,
    # a leftover bulk-insert file group showed its rows twice.
    oracle = oracle_of(FIRST, SECOND)
    assert oracle.rows(COLS) == [
        ("k0", 2, "v2", "p2"),
        ("k1", 2, "v2", "p1"),
        ("k2", 1, "v1", "p2"),
        ("k3", 1, "v1", "p1"),
        ("k4", 1, "v1", "p2"),
        ("k5", 1, "v1", "p1"),
        ("n1", 1, "new", "p1"),
    ]
    assert_readers_match(spark, path, oracle)
    if table_type == "mor":  # the updates went to log files, retried as well
        assert any(".log." in f for f in files)
