"""A streaming reader driver for the crash tests: ``format("hudilite")`` from a table into
a folder of Parquet files (Spark's file sink, exactly once through its metadata log),
``Trigger.AvailableNow``, one commit per micro-batch.

Usage: ``python -m tests.faults.stream_reader SPEC_JSON`` with the spec
``{"table": path, "out": dir, "checkpoint": dir}``. Prints ``{"done": true}`` at the end.
"""

from __future__ import annotations

import json
import os
import sys


def main(spec: dict) -> int:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from hudilite.spark.session import spark_session

    spark = spark_session(master="local[1]", shuffle_partitions=1, driver_memory="1g")
    query = (
        spark.readStream.format("hudilite")
        .option("hoodie.datasource.streaming.startOffset", "earliest")
        .option("hoodie.datasource.read.streaming.max.instants.per.batch", "1")
        .load(spec["table"])
        .writeStream.format("parquet")
        .option("path", spec["out"])
        .option("checkpointLocation", spec["checkpoint"])
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    print(json.dumps({"done": True}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
