"""Spark retries a task that failed after writing its file (``fail_once`` fail point).

The writer runs on ``local[1,4]`` (task retries on); the first attempt of every write
task raises after its data file is written, the retry succeeds. The commit must name
only the retry's files, and no file of the failed attempt may stay behind: hudi-rs
rejects a table with two files of one instant in one file group.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import (
    assert_readers_match,
    completed_times,
    pending,
    recs,
    run_writer,
    state,
)

pytestmark = [pytest.mark.faults, pytest.mark.spark]


def _files_of(path: Path, instant: str) -> set[str]:
    """Data files on disk written by ``instant`` (base files and v8 log files)."""
    out = set()
    for f in path.rglob("*"):
        if ".hoodie" in f.parts or not f.is_file() or f.name.startswith(".hoodie_partition"):
            continue
        if instant in f.name:
            out.add(str(f.relative_to(path)))
    return out


def test_retried_tasks_leave_only_committed_files(spark, seeded) -> None:
    """Guarantee: with task retries, each committed write keeps exactly the files its
    commit names; every reader (hudi-rs included) equals the oracle."""
    tables = {seed: seeded(seed) for seed in ("cow6", "mor8")}
    before = {seed: completed_times(p) for seed, (p, _) in tables.items()}
    batch = recs([*range(0, 40, 2), *range(50, 60)], 15, "retried")
    steps = [
        {
            "op": "upsert",
            "path": str(path),
            "rows": batch,
            "options": {"hudilite.internal.fail.point": "fail_once:after_file_write"},
        }
        for path, _ in tables.values()
    ]
    out = run_writer({"spark": True, "master": "local[1,4]", "max_failures": 4, "steps": steps})
    assert [s["ok"] for s in out.steps] == [True, True], out.describe()
    for seed, (path, oracle) in tables.items():
        (instant,) = completed_times(path) - before[seed]
        st = state(path)
        done = next(i for i in st.timeline.completed() if i.requested_time == instant)
        named = {s.path for s in st.timeline.commit_metadata(done).write_stats()}
        assert _files_of(path, instant) == named, seed
        oracle.upsert(batch)
        assert_readers_match(spark, path, oracle)
        assert pending(path) == []
