"""A SparkSession configured the way hudilite needs it, local or on a cluster.

Any existing session works with hudilite; this helper only saves the usual
settings: Python workers on the driver's interpreter (else ``mapInArrow`` fails
to import pyarrow in the workers), Arrow enabled, UTC session time zone (Hudi
instant times and timestamps are UTC), the UI off, few shuffle partitions. With
``ship_package=True`` the hudilite package travels to the executors as a zip
(:mod:`hudilite.spark.shipping`), for clusters where it is not installed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

from hudilite.spark import shipping
from hudilite.storage.fs import set_storage_options, storage_options_of


def spark_session(
    *,
    master: str | None = None,
    app_name: str = "hudilite",
    shuffle_partitions: int | None = None,
    driver_memory: str | None = None,
    conf: dict[str, Any] | None = None,
    ship_package: bool = False,
    python: str | None = None,
) -> SparkSession:
    """Return a SparkSession for hudilite, creating one when none is active.

    ``master`` defaults to ``$HUDILITE_SPARK_MASTER``, else the ``--master`` of
    ``spark-submit`` when the script runs under it, else ``local[<cores>]``; a cluster URL
    such as ``spark://host:7077`` works the same way (executor sizes go in ``conf``).
    ``python`` is the interpreter of the Python workers (default ``$PYSPARK_PYTHON``, which
    ``spark-submit`` sets from ``spark.pyspark.python``, else the driver's own,
    ``sys.executable``); it needs pyarrow, fastavro, pandas and sqlglot. With
    ``ship_package`` the executors import hudilite from a zip of the driver's copy, so it
    need not be installed there (the same as ``spark-submit --py-files``).

    When a session is already active it is returned unchanged (apart from the
    session time zone, which hudilite needs in UTC, and the package being shipped when
    asked), so callers can hand in their own cluster session instead.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        active.conf.set("spark.sql.session.timeZone", "UTC")
        if ship_package:
            _ship(active)
        _register(active)
        return active
    # Workers must run an interpreter with pyarrow importable, by default the driver's.
    # pyspark takes the workers' interpreter from the environment (Python data sources
    # ignore the conf), so both are set, to the same interpreter.
    python = python or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    cores = os.cpu_count() or 2
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("HUDILITE_SPARK_MASTER")
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Not under spark-submit (which starts the JVM and passes its port): run locally.
        master = f"local[{cores}]"
    if master is not None:
        builder = builder.master(master)
    builder = (
        builder.config("spark.pyspark.python", python)
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
    if ship_package:
        _ship(session)
    _register(session)
    return session


def _register(session: SparkSession) -> None:
    """``format("hudilite")`` for batch and streaming reads (:mod:`hudilite.spark.datasource`)."""
    from hudilite.spark.datasource import register

    register(session)


def _ship(session: SparkSession) -> None:
    shipping.ship_package(session)
