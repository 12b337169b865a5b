"""A streaming driver for the crash loop: one JVM hosting several queries from one folder
of JSON files into hudilite tables (:meth:`hudilite.Table.write_stream`,
``Trigger.AvailableNow``: the files landed since the last run in one micro-batch), plus a
``format("hudilite")`` reader of one table into Spark's Parquet file sink.

Usage: ``python -m tests.faults.stream_writer SPEC_JSON`` with the spec::

    {"landing": dir, "options": {...},
     "queries": [{"table": path, "checkpoint": dir, "operation": op}, ...],
     "reader": {"table": path, "out": dir, "checkpoint": dir},      # optional
     "compaction_fail_point": "kill:before_commit"}                  # optional

Prints ``{"started": true}`` once every query runs, ``{"writers_done": true}`` when the
writers consumed every file and their async compactions finished, and ``{"done": true}``
when the reader has delivered every commit. A fail point armed through
``HUDILITE_FAIL_POINT`` kills it mid-run; ``compaction_fail_point`` arms one only for the
async compactions (their options) and forces a plan on each merge-on-read table once the
writers are done, so a kill lands inside a compaction.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

SOURCE_DDL = "id STRING, ts BIGINT, v STRING, p STRING"


def _arm_compactions(spec_point: str) -> None:
    """Give every async compaction of this process the fail point ``spec_point``."""
    from hudilite import failpoints
    from hudilite.spark import async_compaction

    real = async_compaction.execute_compaction_spark

    def armed(spark: Any, state: Any, instant_time: str, options: Any = None) -> Any:
        return real(
            spark, state, instant_time, {**(options or {}), failpoints.FAIL_POINT_KEY: spec_point}
        )

    async_compaction.execute_compaction_spark = armed  # type: ignore[assignment]


def _reader(spark: Any, spec: dict, **trigger: Any) -> Any:
    return (
        spark.readStream.format("hudilite")
        .option("hoodie.datasource.streaming.startOffset", "earliest")
        .option("hoodie.datasource.read.streaming.max.instants.per.batch", "2")
        .load(spec["table"])
        .writeStream.format("parquet")
        .option("path", spec["out"])
        .option("checkpointLocation", spec["checkpoint"])
        .trigger(**trigger)
        .start()
    )


def _mark(name: str) -> None:
    """Report that the run reached ``name`` (the test prints where each run's time went)."""
    print(json.dumps({"mark": name, "t": time.time()}), flush=True)


def main(spec: dict) -> int:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import hudilite
    from hudilite.spark.session import spark_session
    from hudilite.spark.streaming import compactor_of

    if spec.get("compaction_fail_point"):
        _arm_compactions(spec["compaction_fail_point"])
    spark = spark_session(
        master="local[2]",
        shuffle_partitions=1,
        driver_memory="1g",
        conf={"spark.sql.adaptive.enabled": "false", "spark.default.parallelism": "2"},
    )
    _mark("session")
    writers = []
    for q in spec["queries"]:
        source = spark.readStream.schema(SOURCE_DDL).json(spec["landing"])
        writers.append(
            hudilite.Table.load(spark, q["table"]).write_stream(
                source,
                checkpoint_location=q["checkpoint"],
                operation=q["operation"],
                trigger={"availableNow": True},
                options=spec.get("options") or {},
            )
        )
    reader = (
        _reader(spark, spec["reader"], processingTime="1 second") if spec.get("reader") else None
    )
    print(json.dumps({"started": True}), flush=True)
    for q, query in zip(spec["queries"], writers, strict=True):
        query.awaitTermination()
        compactor = compactor_of(query)
        if compactor is None:
            continue
        if spec.get("compaction_fail_point"):  # make sure a compaction runs (and dies)
            hudilite.Table.load(spark, q["table"]).schedule_compaction(
                force=True, options=spec.get("options")
            )
        compactor.stop(finish_pending=True)
    _mark("writers_done")
    print(json.dumps({"writers_done": True}), flush=True)
    if reader is not None:
        reader.stop()
        _reader(spark, spec["reader"], availableNow=True).awaitTermination()
    _mark("reader_done")
    print(json.dumps({"done": True}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
