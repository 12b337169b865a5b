"""Table services and rollbacks killed mid-way (real processes, SIGKILL), then recovered.

The killed process runs the service through the engine alone (no Spark: the services
run their file work in-process too), so each scenario costs a Python start, not a JVM.
Recovery runs the service again in the test process; every reader must then equal the
oracle and no instant may stay pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.timeline.instant import ROLLBACK
from tests.faults.conftest import DRIVER_KILLS
from tests.faults.harness import (
    assert_readers_match,
    completed_times,
    copy_table,
    pending,
    recs,
    run_writer,
    state,
    wait_dead,
    write,
)

pytestmark = [pytest.mark.faults, pytest.mark.spark]

CLEAN = {"hoodie.cleaner.commits.retained": "1"}
CLUSTER = {"hoodie.clustering.plan.strategy.sort.columns": "v"}


def _service(path: Path, op: str, point: str, options: dict[str, str]) -> None:
    """Run ``op`` on ``path`` in a new process killed at ``point``."""
    out = run_writer(
        {"steps": [{"op": op, "path": str(path), "options": options, "fail_point": point}]}
    )
    assert out.killed, out.describe()


@pytest.mark.parametrize("point", ["clean_after_plan", "clean_mid_delete", "clean_before_complete"])
def test_clean_killed(spark, seeded, point: str) -> None:
    """Guarantee: a clean killed at any step never removes a live file; the next clean
    finishes the pending plan."""
    from hudilite.services.clean import clean

    path, oracle = seeded("cow6")
    _service(path, "clean", f"kill:{point}", CLEAN)
    assert_readers_match(spark, path, oracle, with_spark=False)
    result = clean(state(path), CLEAN)
    assert (result is not None and result.files_deleted) or result.resumed
    assert pending(path) == []
    assert_readers_match(spark, path, oracle)


@pytest.mark.parametrize(
    "point", ["before_file_write", "after_file_write", "before_complete", "after_complete"]
)
def test_compaction_killed(spark, seeded, point: str) -> None:
    """Guarantee: a compaction killed at any step changes no reader's rows; running the
    pending compaction again completes it."""
    from hudilite.services.compaction import compact

    path, oracle = seeded("mor8")
    before = completed_times(path)
    _service(path, "compact", f"kill:{point}", {})
    assert bool(completed_times(path) - before) == (point == "after_complete")
    assert_readers_match(spark, path, oracle, with_spark=False)
    wait_dead(path)
    compact(state(path), schedule=False)
    assert pending(path) == []
    assert_readers_match(spark, path, oracle, with_spark=False)
    # A later write still merges into the compacted slices.
    fresh = recs(range(0, 40, 4), 11, "later")
    write(spark, path, fresh)
    oracle.upsert(fresh)
    assert_readers_match(spark, path, oracle)


@pytest.mark.parametrize("point", ["before_file_write", "after_file_write", "before_commit"])
def test_clustering_killed(spark, seeded, point: str) -> None:
    """Guarantee: a clustering killed at any step changes no reader's rows; running the
    pending plan again completes it."""
    from hudilite.services.clustering import cluster

    path, oracle = seeded("cow6")
    _service(path, "cluster", f"kill:{point}", CLUSTER)
    assert_readers_match(spark, path, oracle, with_spark=False)
    wait_dead(path)
    assert cluster(state(path), CLUSTER, schedule=False)
    assert pending(path) == []
    assert_readers_match(spark, path, oracle)


@pytest.fixture(scope="module")
def dead_write(killed_writes: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of ``cow6`` with a write whose driver was SIGKILLed before its commit
    (data files written, instant inflight, heartbeat left behind): the first of the
    session's killed writes (``killed_writes`` in conftest.py)."""
    killed = killed_writes[DRIVER_KILLS[0]]
    assert DRIVER_KILLS[0] == ("cow6", "upsert", "kill:before_commit")
    assert killed.outcome.killed, killed.outcome.describe()
    path = copy_table(killed.path, tmp_path_factory.mktemp("dead") / "t")
    assert pending(path), "the dead write left no pending instant"
    wait_dead(path)
    return path


ROLLBACK_POINTS = [
    "rollback_after_plan",
    "rollback_mid_delete",
    "rollback_before_complete",
    "rollback_after_complete",
]


_ROLLBACK_RUNS: dict[str, Path] = {}


def _killed_rollback(spark: Any, seeded: Any, dead_write: Path, tmp_path: Path, point: str) -> Path:
    """Once per point: kill the rollback of the dead write at ``point``, check the readers
    right after the kill and after the next write (which finishes the rollback)."""
    if point not in _ROLLBACK_RUNS:
        _, oracle = seeded("cow6")
        path = copy_table(dead_write, tmp_path / "rb")
        _service(path, "rollback_failed", f"kill:{point}", {})
        assert_readers_match(spark, path, oracle, with_spark=False)
        # A rollback beats its own heartbeat: the next writer resumes it once that expired.
        wait_dead(path)
        fresh = recs([*range(5, 15), 80], 12, "next")
        write(spark, path, fresh)
        oracle.upsert(fresh)
        assert_readers_match(spark, path, oracle)
        _ROLLBACK_RUNS[point] = path
    return _ROLLBACK_RUNS[point]


@pytest.mark.parametrize("point", ROLLBACK_POINTS)
def test_rollback_killed(spark, seeded, dead_write: Path, tmp_path: Path, point: str) -> None:
    """Guarantee: a rollback of a dead write killed at any step hides the dead write's rows
    throughout, and the next write succeeds with every committed row intact."""
    _killed_rollback(spark, seeded, dead_write, tmp_path, point)


@pytest.mark.parametrize("point", ROLLBACK_POINTS)
def test_rollback_killed_is_finished_once(
    spark, seeded, dead_write: Path, tmp_path: Path, point: str
) -> None:
    """Guarantee: after a rollback killed at any step, the next write re-runs the pending
    rollback: nothing stays pending and the dead write has exactly one rollback instant."""
    path = _killed_rollback(spark, seeded, dead_write, tmp_path, point)
    assert pending(path) == []
    rollbacks = [i for i in state(path).timeline.instants if i.action == ROLLBACK]
    assert len(rollbacks) == 1, rollbacks
