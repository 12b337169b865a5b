"""The streaming crash loop: a driver hosting four streaming writes and a streaming read is
SIGKILLed 10 times and restarted from its checkpoints; every event ends up exactly once.

One driver process (``tests/faults/stream_writer.py``, one JVM, so each kill costs one
restart) streams a folder of JSON files (what landed since the last run, one micro-batch
per query and run) into four tables -- copy-on-write and merge-on-read,
``upsert`` and ``insert``, table versions 6 and 8 -- and reads the merge-on-read insert
table with ``format("hudilite")`` into Spark's Parquet file sink. The merge-on-read tables
compact asynchronously beside their streams (a plan every 2 delta commits). Before each
run one more JSON file lands. Kills land:

* inside a commit (``kill:before_complete``: the instant is written up to its completion);
* between a commit and Spark's checkpoint (``kill:after_complete``: Spark replays the batch
  on restart and the sink must skip it);
* inside an async compaction, after its files are written, before its commit (a fail
  point given to the compactions only; the driver forces a plan once its writers are done);
* at random moments after the run's first commit (seeded, so a failure replays).

``insert`` keeps duplicate keys, so a batch written twice shows as duplicate rows: the
insert tables must equal every input row exactly once, the upsert tables the upsert oracle,
for hudilite's Spark and Arrow readers and for hudi-rs; the reader's output must hold every
row the insert table committed, once.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite import failpoints
from tests.faults.harness import (
    COLS,
    HEARTBEAT,
    REPO_ROOT,
    SCHEMA,
    Outcome,
    completed_times,
    finish,
    jvm_archive_file,
    kill_group,
    oracle_of,
    reader_rows,
    recs,
    writer_env,
)
from tests.helpers import rows, spark_rows

pytestmark = [pytest.mark.faults, pytest.mark.spark]

KILLS = 10
MAX_RUNS = 16
SEED = 13
#: name -> (table type, table version, operation)
TABLES = {
    "cow_upsert": ("cow", 8, "upsert"),
    "cow_insert": ("cow", 6, "insert"),
    "mor_upsert": ("mor", 6, "upsert"),
    "mor_insert": ("mor", 8, "insert"),
}
OPTIONS = {
    **HEARTBEAT,
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.compact.inline.max.delta.commits": "2",
    # New keys go to new file groups, so updates of merge-on-read tables go to log files
    # (the compactions' input) rather than into rewritten small base files.
    "hoodie.parquet.small.file.limit": "0",
}
#: The fail-point kills, by run number; the other runs are killed at random moments.
FAIL_POINT_RUNS = {0: "kill:before_complete", 1: "kill:after_complete"}
COMPACTION_KILL_RUN = 3


def _file(i: int) -> list[dict]:
    """Landing file ``i``: six keys, half of them the previous file's (updates)."""
    return recs(range(i * 3, i * 3 + 6), i + 1, f"f{i}", parts=("p",))


def _start(spec: dict[str, Any], fail_point: str | None = None) -> subprocess.Popen[str]:
    env = writer_env()
    if fail_point:
        env[failpoints.ENV_VAR] = fail_point
    return subprocess.Popen(
        [sys.executable, "-m", "tests.faults.stream_writer", json.dumps(spec)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _commits(paths: list[Path]) -> int:
    return sum(len(completed_times(p)) for p in paths)


def _kill_at_random(proc: subprocess.Popen[str], paths: list[Path], rng: random.Random) -> Outcome:
    """SIGKILL the driver a random moment (0-2 s) after its run's first commit."""
    before = _commits(paths)
    deadline = time.monotonic() + 240
    try:
        while _commits(paths) == before and proc.poll() is None:
            assert time.monotonic() < deadline, "no commit after the restart"
            time.sleep(0.1)
        time.sleep(rng.uniform(0, 2.0))
    finally:
        kill_group(proc)
    return finish(proc)


def _took(out: Outcome, started: float) -> str:
    """How long a run took, and when it reached its marks (session up, writers done...)."""
    marks = ", ".join(f"{m['mark']} {m['t'] - started:.1f}" for m in out.steps if "mark" in m)
    return f"{time.time() - started:.1f} s ({marks})"


def _assert_exactly_once(
    spark: Any, path: Path, expected: list[tuple], *, with_spark: bool = True
) -> None:
    """Every reader of the table (hudilite Arrow, hudi-rs, and Spark unless ``with_spark``
    is false) returns ``expected`` exactly (a multiset: nothing lost, nothing uncommitted,
    nothing twice)."""
    for reader, got in reader_rows(spark, path, with_spark=with_spark).items():
        assert got == expected, f"{path.name}: {reader} differs from the oracle"


def test_stream_driver_killed_ten_times_keeps_every_event_once(
    spark: Any, jvm_archive: None, tmp_path: Path
) -> None:
    """Guarantee: a streaming driver (four writes, async compaction, a streaming read)
    SIGKILLed 10 times, inside commits, between commit and checkpoint, inside a compaction
    and at random, leaves every table equal to its input taken exactly once (hudi-rs too)
    and the streaming read's output holding every committed row once."""
    paths = {name: tmp_path / name for name in TABLES}
    for name, (kind, version, _) in TABLES.items():
        hudilite.Table.create(
            spark,
            str(paths[name]),
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            table_type=kind,
            table_version=version,
            options=OPTIONS,
        )
    landing = tmp_path / "landing"
    landing.mkdir()
    files: list[list[dict]] = []

    def land() -> None:
        batch = _file(len(files))
        (landing / f"part-{len(files):03d}.json").write_text(
            "\n".join(json.dumps(r) for r in batch)
        )
        files.append(batch)

    land()
    spec = {
        "landing": str(landing),
        "options": OPTIONS,
        "queries": [
            {"table": str(paths[n]), "checkpoint": str(tmp_path / f"chk-{n}"), "operation": op}
            for n, (_, _, op) in TABLES.items()
        ],
        "reader": {
            "table": str(paths["mor_insert"]),
            "out": str(tmp_path / "out"),
            "checkpoint": str(tmp_path / "chk-reader"),
        },
    }
    rng = random.Random(SEED)
    jvm_archive_file(wait=True)  # eleven driver starts: worth the wait (a full run has it)
    t0 = time.monotonic()
    outcomes: list[str] = []
    run = 0
    while outcomes.count("killed") < KILLS:
        assert run < MAX_RUNS, f"only {outcomes.count('killed')} kills in {run} runs: {outcomes}"
        land()
        t_run = time.time()
        if run == COMPACTION_KILL_RUN:
            out = finish(_start({**spec, "compaction_fail_point": "kill:before_commit"}))
        elif run in FAIL_POINT_RUNS:
            out = finish(_start(spec, FAIL_POINT_RUNS[run]))
        else:
            out = _kill_at_random(_start(spec), list(paths.values()), rng)
        assert out.killed or out.returncode == 0, out.describe()
        if run in FAIL_POINT_RUNS or run == COMPACTION_KILL_RUN:
            assert out.killed, f"run {run}: the fail point was not reached\n{out.describe()}"
        outcomes.append("killed" if out.killed else "finished")
        print(f"run {run}: {outcomes[-1]} at {time.monotonic() - t0:.0f} s, {_took(out, t_run)}")
        run += 1

    t_run = time.time()
    last = finish(_start(spec))
    print(f"last run: {_took(last, t_run)}")
    t_run = time.time()
    assert last.returncode == 0 and {"done": True} in last.steps, last.describe()

    every_row = rows(pa.Table.from_pylist([r for f in files for r in f], schema=SCHEMA), COLS)
    upserted = oracle_of(*files).rows(COLS)
    for name, (kind, _, op) in TABLES.items():
        # Spark's reader of copy-on-write tables is the Arrow reader's plan read by Spark's
        # Parquet reader; merge-on-read slices take the other path: read those with Spark.
        expected = every_row if op == "insert" else upserted
        _assert_exactly_once(spark, paths[name], expected, with_spark=kind == "mor")
    assert spark_rows(spark.read.parquet(spec["reader"]["out"]), COLS) == every_row
    mor = hudilite.Table.load(spark, str(paths["mor_upsert"])).timeline()
    assert any(i.action == "commit" for i in mor), "no compaction completed"
    print(f"checks: {time.time() - t_run:.1f} s")
