"""A writer's driver or executor dies during a write; the next write recovers.

Kill points (``hudilite.failpoints``) through the write: in the executors before and
after a data file is written, on the driver before the commit, inside the commit lock
before the completed instant is written, and just after it (heartbeat and markers not
yet removed). The killed driver processes all run at once, first (``killed_writes`` in
conftest.py); each test then recovers its own copy of the table left behind: it writes
again (lazy rollback of the dead write) and every reader must equal the oracle: the dead
write's rows are visible if and only if its instant completed.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import DRIVER_KILLS, SEED_BATCHES
from tests.faults.harness import (
    assert_readers_match,
    completed_times,
    copy_table,
    finish,
    oracle_of,
    pending,
    recs,
    run_writer,
    start_writer,
    wait_dead,
    write,
)

pytestmark = [pytest.mark.faults, pytest.mark.spark]


def _apply(oracle: Any, op: str, records: list[dict]) -> None:
    if op == "delete":
        oracle.delete((r["id"],) for r in records)
    else:
        oracle.upsert(records)


@pytest.mark.parametrize(("seed", "op", "point"), DRIVER_KILLS, ids=lambda x: str(x))
def test_driver_killed_during_write(
    spark, killed_writes, tmp_path: Path, seed: str, op: str, point: str
) -> None:
    """Guarantee: a write whose driver dies is all-or-nothing; the next write recovers."""
    killed = killed_writes[(seed, op, point)]  # the writer ran in the session fixture
    assert killed.outcome.killed, killed.outcome.describe()
    path = copy_table(killed.path, tmp_path / seed)
    oracle = oracle_of(*(batch for _, batch in SEED_BATCHES))
    records = killed.records
    new = completed_times(path) - killed.before
    # The kill point decides whether the write committed.
    assert bool(new) == (point == "kill:after_complete"), (new, pending(path))
    if new:
        _apply(oracle, op, records)
    assert_readers_match(spark, path, oracle, with_spark=False)  # dead files ignored
    wait_dead(path)
    fresh = recs([*range(15, 25), 100], 10, "next")
    write(spark, path, fresh)
    oracle.upsert(fresh)
    assert_readers_match(spark, path, oracle)
    assert pending(path) == []


def test_executor_killed_before_and_after_file_write(spark, seeded) -> None:
    """Guarantee: a Python worker SIGKILLed before or after writing its file fails the
    write cleanly (the driver rolls it back); the next write on the same driver commits.
    One driver process runs all the steps on a copy-on-write and a merge-on-read table."""
    steps = []
    tables = {}
    for seed in ("cow6", "mor8"):
        path, oracle = seeded(seed)
        tables[seed] = (path, oracle)
        for point in ("kill:before_file_write", "kill:after_file_write"):
            steps.append(
                {
                    "op": "upsert",
                    "path": str(path),
                    "rows": recs(range(5, 45), 7, point),
                    "options": {
                        "hudilite.internal.fail.point": point,
                        # A Spark write (small writes run in the driver, where the point
                        # would kill the driver, not a Python worker).
                        "hoodie.hudilite.write.local.max.rows": "0",
                    },
                }
            )
        steps.append({"op": "upsert", "path": str(path), "rows": recs(range(30, 50), 8, "ok")})
    out = run_writer({"spark": True, "keep_going": True, "steps": steps}, timeout=900)
    assert [s["ok"] for s in out.steps] == [False, False, True] * 2, out.describe()
    for s in out.steps:
        if not s["ok"]:
            assert "WriteError" in s["error"], s
    for path, oracle in tables.values():
        oracle.upsert(recs(range(30, 50), 8, "ok"))
        assert_readers_match(spark, path, oracle)
        assert pending(path) == []


def test_driver_killed_when_first_data_file_appears(spark, seeded) -> None:
    """Guarantee: SIGKILL of the whole writer (driver, JVM, workers) at the moment its first
    data file lands, chosen by the test, loses nothing and shows nothing of that write."""
    path, oracle = seeded("cow6")
    before_files = {p for p in Path(path).rglob("*.parquet")}
    before = completed_times(path)
    records = recs(range(0, 80), 9, "dead")
    proc = start_writer(
        {"spark": True, "steps": [{"op": "upsert", "path": str(path), "rows": records}]}
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if {p for p in Path(path).rglob("*.parquet")} - before_files:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    out = finish(proc)
    new = completed_times(path) - before
    if new:  # the commit won the race against the kill: then its rows must all be there
        oracle.upsert(records)
    else:
        assert out.killed, out.describe()
    assert_readers_match(spark, path, oracle)
    wait_dead(path)
    fresh = recs(range(40, 45), 10, "next")
    write(spark, path, fresh)
    oracle.upsert(fresh)
    assert_readers_match(spark, path, oracle)
    assert pending(path) == []
