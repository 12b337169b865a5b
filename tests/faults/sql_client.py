"""A SQL client process for the race tests: run statements on a warehouse, report each one.

Usage: ``python -m tests.faults.sql_client SPEC_JSON`` where the spec is::

    {"warehouse": path, "fail_point": "delay:<point>" | null, "steps": [step, ...]}

and a step is ``{"sql": "<statement>", "barrier": [dir, me, other]}`` or, for a
read-modify-write through the Python API, ``{"increment": {"path": <table path>, "where":
<predicate>}, "barrier": ...}``: ``Table.snapshot()``, ``Table.read()``, ``n + 1`` on the
matching rows, ``Table.write(..., read_snapshot=snapshot)``. ``fail_point`` is armed for the
whole process (``HUDILITE_FAIL_POINT``: driver-side points only). ``barrier`` starts the
step together with the other client (see ``tests/faults/writer.py``).

Each step prints one JSON line: ``{"step": i, "ok": bool, "error": "<class>: <message>"}``;
a failed step does not stop the client.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from hudilite import failpoints
from tests.faults.writer import _spark, _wait_barrier


def _increment(spark: Any, spec: dict[str, str]) -> None:
    from pyspark.sql import functions as F

    import hudilite

    table = hudilite.Table.load(spark, spec["path"])
    snapshot = table.snapshot()
    data = [f.name for f in table.schema]
    rows = table.read().where(spec["where"])
    changed = rows.select(*[(F.col("n") + 1).alias("n") if c == "n" else F.col(c) for c in data])
    table.write(changed, "upsert", read_snapshot=snapshot)


def main(spec: dict[str, Any]) -> int:
    """Run the spec's steps; the exit code is 0 (failures are reported, not raised)."""
    if spec.get("fail_point"):
        os.environ[failpoints.ENV_VAR] = spec["fail_point"]
    spark = _spark({})
    import hudilite

    session = hudilite.connect(spec["warehouse"], spark=spark)
    for i, step in enumerate(spec["steps"]):
        if step.get("barrier"):
            _wait_barrier(step["barrier"])
        out: dict[str, Any] = {"step": i}
        try:
            if "sql" in step:
                session.sql(step["sql"])
            else:
                _increment(spark, step["increment"])
            out["ok"] = True
        except Exception as exc:  # reported to the test, which decides what it means
            out.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:2000]}")
        print(json.dumps(out), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
