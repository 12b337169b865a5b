"""A driver process for the fault-injection tests: run steps on tables, report each one.

Usage: ``python -m tests.faults.writer SPEC_JSON`` where the spec is::

    {"spark": bool, "master": "local[1]", "keep_going": bool, "steps": [step, ...]}

and a step is ``{"op": ..., "path": ..., "rows": [...], "options": {...}, "fail_point":
"kill:<point>", "barrier": [dir, me, other]}``. Operations: ``upsert``, ``insert``,
``bulk_insert``, ``delete`` (need ``spark``), and without Spark: ``compact``, ``cluster``,
``clean``, ``rollback_failed`` (lazy rollback of dead writes), ``sleep``.

``fail_point`` is set as ``HUDILITE_FAIL_POINT`` in this process for the step (driver-side
points); executor-side points go in ``options`` (``hudilite.internal.fail.point``), as
Spark's Python workers do not see environment changes made after the JVM started.
``barrier`` makes two writer processes start the step together (each creates
``<dir>/<me>`` and waits for ``<dir>/<other>``).

Each step prints one JSON line: ``{"step": i, "op": ..., "ok": bool, "instants": [...],
"error": "<class>: <message>"}``. A kill point ends the process with SIGKILL mid-step.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudilite import failpoints
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from tests.helpers import FAST_JVM_OPTIONS

SPARK_OPS = ("upsert", "insert", "bulk_insert", "delete")


def _wait_barrier(barrier: list[str]) -> None:
    folder, me, other = barrier
    Path(folder, me).touch()
    deadline = time.monotonic() + 120
    while not Path(folder, other).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"barrier: {other} never arrived")
        time.sleep(0.01)


def _spark(spec: dict[str, Any]) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from hudilite.spark.session import spark_session

    return spark_session(
        master=spec.get("master", "local[1]"),
        shuffle_partitions=2,
        driver_memory="1g",
        conf={
            "spark.task.maxFailures": spec.get("max_failures", 1),
            # As the test session: adaptive execution only adds jobs on tiny tables.
            "spark.sql.adaptive.enabled": "false",
            "spark.driver.extraJavaOptions": FAST_JVM_OPTIONS,
        },
    )


def _run_step(spark: Any, step: dict[str, Any]) -> list[str]:
    """Run one step; returns the instants it completed."""
    op = step["op"]
    opts = step.get("options") or {}
    if op == "sleep":
        time.sleep(float(step["seconds"]))
        return []
    state = TableState.load(FileSystemGateway(step["path"]))
    if op in SPARK_OPS:
        import hudilite

        data = pa.Table.from_pylist(step["rows"], schema=state.data_schema)
        table = hudilite.Table.load(spark, step["path"])
        return [table.write(data, op, options=opts).instant_time]
    if op == "compact":
        from hudilite.services.compaction import compact

        return [r.instant_time for r in compact(state, opts, force=True)]
    if op == "cluster":
        from hudilite.services.clustering import cluster

        return [r.instant_time for r in cluster(state, opts)]
    if op == "clean":
        from hudilite.services.clean import clean

        result = clean(state, opts)
        return [] if result is None else [*result.resumed, result.instant_time]
    if op == "rollback_failed":
        from hudilite.config import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES
        from hudilite.write.rollback import rollback_failed_writes

        o = state.options(opts)
        done = rollback_failed_writes(
            state.gw,
            state.config,
            heartbeat_interval_ms=int(o.get(HEARTBEAT_INTERVAL_MS)),
            tolerable_misses=int(o.get(HEARTBEAT_TOLERABLE_MISSES)),
        )
        return [r.rollback_instant for r in done]
    raise ValueError(f"unknown op {op!r}")


def main(spec: dict[str, Any]) -> int:
    """Run the spec's steps; the exit code is 0 when every step succeeded."""
    spark = _spark(spec) if spec.get("spark") else None
    failed = False
    for i, step in enumerate(spec["steps"]):
        if step.get("barrier"):
            _wait_barrier(step["barrier"])
        os.environ.pop(failpoints.ENV_VAR, None)
        if step.get("fail_point"):
            os.environ[failpoints.ENV_VAR] = step["fail_point"]
        out: dict[str, Any] = {"step": i, "op": step["op"]}
        try:
            out.update(ok=True, instants=_run_step(spark, step))
        except Exception as exc:  # reported to the test, which decides what it means
            failed = True
            out.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:2000]}")
        print(json.dumps(out), flush=True)
        if failed and not spec.get("keep_going"):
            break
    if spark is not None:
        spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
