"""Fixed cost of a write, counted: Spark jobs, stages, tasks and driver storage calls.

Wall-clock numbers need an idle machine; how many Spark jobs a write runs (and how
many storage calls the driver makes) does not depend on load, so this script counts
them for a set of small writes and reads on fresh tables, and breaks the jobs of each
``Table.write`` down by the phases ``WriteResult.extra["phases"]`` reports (``key``,
``start``, ``index``, ``assign``, ``write``, ``commit``; ``services`` is what runs after
the commit: inline compaction, clean and archive). Prints a Markdown table
(docs/dev/benchmark-diary.md, "Fixed cost per write (Spark jobs)").

    python benchmarks/write_job_counts.py            # AQE on, as hudilite.spark_session()
    python benchmarks/write_job_counts.py --aqe off  # as the test suite's session
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import GatewayCalls, SparkJobs

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("city", pa.string())]
)
CITIES = ["a", "b", "c", "d"]


def rows(start: int, count: int, ts: int) -> pa.Table:
    """``count`` rows with keys ``k<start>``..., spread over the four cities."""
    ids = range(start, start + count)
    return pa.table(
        {
            "id": [f"k{i:06d}" for i in ids],
            "ts": [ts] * count,
            "v": list(ids),
            "city": [CITIES[i % len(CITIES)] for i in ids],
        },
        schema=SCHEMA,
    )


class PhaseJobs:
    """Jobs per write phase: snapshots the job group's job count at every phase mark."""

    def __init__(self, counter: SparkJobs) -> None:
        self.counter = counter
        self.by_phase: dict[str, int] = {}
        self._seen = 0

    def snapshot(self) -> int:
        sc = self.counter.sc
        sc._jsc.sc().listenerBus().waitUntilEmpty()
        return len(sc.statusTracker().getJobIdsForGroup(self.counter.group))

    def mark(self, name: str) -> None:
        now = self.snapshot()
        self.by_phase[name] = self.by_phase.get(name, 0) + now - self._seen
        self._seen = now


def measure(spark: Any, fn: Callable[[], Any]) -> dict[str, Any]:
    """Run ``fn`` once under the counters; jobs per phase when it writes."""
    from hudilite.spark import write_job

    original = write_job.PhaseTimer.mark
    with GatewayCalls() as io, SparkJobs(spark) as jobs:
        phases = PhaseJobs(jobs)

        def mark(timer: Any, name: str) -> None:
            phases.mark(name)
            original(timer, name)

        setattr(write_job.PhaseTimer, "mark", mark)  # noqa: B010 - patched for the count
        try:
            fn()
        finally:
            setattr(write_job.PhaseTimer, "mark", original)  # noqa: B010
        total = phases.snapshot()
    if phases.by_phase:
        phases.by_phase["services"] = total - sum(phases.by_phase.values())
    return {
        "jobs": jobs.jobs,
        "stages": jobs.stages,
        "tasks": jobs.tasks,
        "io": io.total,
        "phases": {k: v for k, v in phases.by_phase.items() if v},
    }


def workloads(spark: Any, root: Path) -> list[tuple[str, Callable[[], Any]]]:
    """(name, call) pairs; each table is created (and seeded with one commit) up front."""
    import hudilite

    def table(name: str, *, table_type: Any = "cow", options: dict[str, str] | None = None) -> Any:
        t = hudilite.Table.create(
            spark,
            str(root / name),
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            partition_by=["city"],
            table_type=table_type,
            options=options or {},
        )
        t.write(rows(0, 1000, 1), operation="bulk_insert")
        return t

    cow = table("cow")
    cow10k = table("cow10k")
    mor = table("mor", table_type="mor")
    ins = table("ins")
    dele = table("del")
    bucket = table(
        "bucket",
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"},
    )
    empty = hudilite.Table.create(
        spark,
        str(root / "bulk"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["city"],
    )
    one, many = rows(5, 1, 2), rows(500, 10_000, 2)
    new_row = rows(2000, 1, 2)
    session = hudilite.connect(str(root / "wh"), spark=spark)
    session.sql(
        "CREATE TABLE trips (id STRING, ts BIGINT, v BIGINT, city STRING) USING hudilite "
        "PARTITIONED BY (city) TBLPROPERTIES ('primaryKey'='id', 'preCombineField'='ts')"
    )
    session.sql("INSERT INTO trips VALUES ('k0', 1, 0, 'a'), ('k1', 1, 1, 'b')")
    return [
        ("COW upsert, 1 row", lambda: cow.write(one)),
        ("COW upsert, 10,000 rows", lambda: cow10k.write(many)),
        ("MOR upsert, 1 row", lambda: mor.write(one)),
        ("insert, 1 new row", lambda: ins.write(new_row, operation="insert")),
        (
            "bulk_insert, 10,000 rows into an empty table",
            lambda: empty.write(many, operation="bulk_insert"),
        ),
        ("delete, 1 key", lambda: dele.write(one, operation="delete")),
        ("bucket-index upsert, 1 row", lambda: bucket.write(one)),
        ("SQL one-row INSERT", lambda: session.sql("INSERT INTO trips VALUES ('k9', 2, 9, 'c')")),
        (
            "SQL point SELECT (collect 1 row)",
            lambda: session.sql("SELECT * FROM trips WHERE id = 'k1'").collect(),
        ),
        ("Table.read() (plan only)", lambda: cow.read()),
        (
            "Table.read() scan (noop sink)",
            lambda: cow.read().write.format("noop").mode("overwrite").save(),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--aqe", choices=("on", "off"), default="on")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import hudilite

    spark = hudilite.spark_session(
        master="local[2]",
        shuffle_partitions=4,
        conf={"spark.sql.adaptive.enabled": "true" if args.aqe == "on" else "false"},
    )
    with tempfile.TemporaryDirectory() as tmp:
        results = [(name, measure(spark, fn)) for name, fn in workloads(spark, Path(tmp))]
    print(f"AQE {args.aqe}\n")
    print("| workload | jobs | stages | tasks | driver storage calls | jobs per phase |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r in results:
        phases = ", ".join(f"{k} {v}" for k, v in r["phases"].items()) or "-"
        print(f"| {name} | {r['jobs']} | {r['stages']} | {r['tasks']} | {r['io']} | {phases} |")


if __name__ == "__main__":
    main()
