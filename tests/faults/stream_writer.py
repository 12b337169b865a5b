"""A streaming driver for the crash tests: a folder of JSON files into a hudilite table
through :meth:`hudilite.Table.write_stream` (``Trigger.AvailableNow``, one file per
micro-batch).

Usage: ``python -m tests.faults.stream_writer SPEC_JSON`` with the spec
``{"table": path, "landing": dir, "checkpoint": dir, "operation": op, "options": {...}}``.
Prints ``{"done": true}`` when the query has consumed every file. A fail point armed
through ``HUDILITE_FAIL_POINT`` (e.g. ``kill:after_complete``) kills it mid-run.
"""

from __future__ import annotations

import json
import os
import sys


def main(spec: dict) -> int:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import hudilite
    from hudilite.spark.session import spark_session

    spark = spark_session(master="local[1]", shuffle_partitions=1, driver_memory="1g")
    table = hudilite.Table.load(spark, spec["table"])
    source = (
        spark.readStream.schema("id STRING, ts BIGINT, v STRING, p STRING")
        .option("maxFilesPerTrigger", 1)
        .json(spec["landing"])
    )
    query = table.write_stream(
        source,
        checkpoint_location=spec["checkpoint"],
        operation=spec.get("operation", "upsert"),
        trigger={"availableNow": True},
        options=spec.get("options") or {},
    )
    query.awaitTermination()
    print(json.dumps({"done": True}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
