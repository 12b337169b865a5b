"""Streaming drivers are SIGKILLed mid-run and restarted from their checkpoints.

Ingestion: the query streams a folder of JSON files (one file per micro-batch) into a merge-on-read
table with ``insert``, which does not look existing keys up: a replayed batch that was
written twice would leave duplicate keys. Kill 1 lands just after the first batch's
commit completed, before Spark records the batch in its checkpoint (Spark replays it on
restart and the sink must skip it); kill 2 lands at whatever moment the driver has
reached once a further commit exists. After the last run every reader (hudilite Spark
and Arrow, hudi-rs) returns each input row exactly once.

Reading: a ``format("hudilite")`` stream (one commit per micro-batch) into Spark's file
sink is killed once its first batch is out and restarted; the output holds every committed
row once.
"""

from __future__ import annotations

import json
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
    assert_readers_match,
    completed_times,
    finish,
    kill_group,
    oracle_of,
    recs,
    writer_env,
)
from tests.helpers import spark_rows

pytestmark = [pytest.mark.faults, pytest.mark.spark]

FILES = 5
PER_FILE = 4


def _start(spec: dict[str, Any], fail_point: str | None = None) -> subprocess.Popen[str]:
    return _start_module("tests.faults.stream_writer", spec, fail_point)


def _start_module(
    module: str, spec: dict[str, Any], fail_point: str | None = None
) -> subprocess.Popen[str]:
    env = writer_env()
    if fail_point:
        env[failpoints.ENV_VAR] = fail_point
    return subprocess.Popen(
        [sys.executable, "-m", module, json.dumps(spec)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_streaming_driver_killed_and_restarted_writes_each_row_once(
    spark: Any, tmp_path: Path
) -> None:
    table = tmp_path / "t"
    options = {**HEARTBEAT, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    hudilite.Table.create(
        spark,
        str(table),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type="mor",
        table_version=8,
        options=options,
    )
    landing = tmp_path / "landing"
    landing.mkdir()
    batches = [recs(range(i * PER_FILE, (i + 1) * PER_FILE), i, f"f{i}") for i in range(FILES)]
    for i, batch in enumerate(batches):
        (landing / f"part-{i:03d}.json").write_text("\n".join(json.dumps(r) for r in batch))
    spec = {
        "table": str(table),
        "landing": str(landing),
        "checkpoint": str(tmp_path / "chk"),
        "operation": "insert",
        "options": options,
    }

    # Kill 1: right after the first batch's commit completed (Spark has not checkpointed it).
    out = finish(_start(spec, "kill:after_complete"))
    assert out.killed, out.describe()
    assert len(completed_times(table)) == 1

    # Kill 2: at whatever point the restarted driver is once another commit exists.
    proc = _start(spec)
    deadline = time.monotonic() + 240
    try:
        while len(completed_times(table)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "no progress after the restart"
            time.sleep(0.2)
    finally:
        kill_group(proc)
    out = finish(proc)
    assert out.killed or out.returncode == 0, out.describe()

    # The last run consumes the rest.
    out = finish(_start(spec))
    assert out.returncode == 0 and {"done": True} in out.steps, out.describe()
    assert_readers_match(spark, table, oracle_of(*batches))


def test_streaming_reader_killed_and_restarted_delivers_each_commit_once(
    spark: Any, tmp_path: Path
) -> None:
    """A stream out of a table (one commit per micro-batch, into Spark's exactly-once file
    sink) is SIGKILLed once its first batch is out and restarted from its checkpoint: the
    output holds every committed row once."""
    table = tmp_path / "t"
    options = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    t = hudilite.Table.create(
        spark,
        str(table),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["p"],
        table_type="mor",
        table_version=8,
        options=options,
    )
    batches = [recs(range(i * PER_FILE, (i + 1) * PER_FILE), i, f"c{i}") for i in range(4)]
    for batch in batches:
        t.write(pa.Table.from_pylist(batch, schema=SCHEMA), "insert")
    out = tmp_path / "out"
    spec = {"table": str(table), "out": str(out), "checkpoint": str(tmp_path / "chk")}

    proc = _start_module("tests.faults.stream_reader", spec)
    deadline = time.monotonic() + 240
    try:
        while not (out / "_spark_metadata" / "0").exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "no batch delivered"
            time.sleep(0.2)
    finally:
        kill_group(proc)
    first = finish(proc)
    assert first.killed or first.returncode == 0, first.describe()

    last = finish(_start_module("tests.faults.stream_reader", spec))
    assert last.returncode == 0 and {"done": True} in last.steps, last.describe()
    got = spark_rows(spark.read.parquet(str(out)), COLS)
    assert got == oracle_of(*batches).rows(COLS)
