"""A local SparkSession configured the way hudilite needs it.

Any existing session works with hudilite; this helper only saves the usual
settings: Python workers on the driver's interpreter (else ``mapInArrow`` fails
to import pyarrow in the workers), Arrow enabled, UTC session time zone (Hudi
instant times and timestamps are UTC), the UI off, few shuffle partitions.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

from hudilite.storage.fs import set_storage_options, storage_options_of


def spark_session(
    *,
    master: str | None = None,
    app_name: str = "hudilite",
    shuffle_partitions: int | None = None,
    driver_memory: str | None = None,
    conf: dict[str, Any] | None = None,
) -> SparkSession:
    """Return a SparkSession for hudilite, creating a local one when none is active.

    When a session is already active it is returned unchanged (apart from the
    session time zone, which hudilite needs in UTC), so callers can hand in their
    own cluster session instead.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        active.conf.set("spark.sql.session.timeZone", "UTC")
        return active
    # Workers must run the same interpreter as the driver, with pyarrow importable.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    cores = os.cpu_count() or 2
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or os.environ.get("HUDILITE_SPARK_MASTER", f"local[{cores}]"))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions or max(4, cores * 2)))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "65536")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config(
            "spark.driver.memory", driver_memory or os.environ.get("HUDILITE_DRIVER_MEMORY", "4g")
        )
        .config("spark.sql.warehouse.dir", os.path.abspath("spark-warehouse"))
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, str(value))
    session = builder.getOrCreate()
    # spark.hadoop.fs.s3a.* settings describe the S3 endpoint for hudilite's gateways too
    # (hudilite reads and writes S3 through pyarrow, not through Hadoop's S3A connector).
    set_storage_options(storage_options_of(conf))
    session.sparkContext.setLogLevel(os.environ.get("HUDILITE_SPARK_LOG_LEVEL", "ERROR"))
    return session
