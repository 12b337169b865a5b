"""A SparkSession configured the way hudilite needs it, local or on a cluster.

Any existing session works with hudilite; this helper only saves the usual
settings: Python workers on the driver's interpreter (else ``mapInArrow`` fails
to import pyarrow in the workers), Arrow enabled, UTC session time zone (Hudi
instant times and timestamps are UTC), the UI off, few shuffle partitions. With
``ship_package=True`` the hudilite package travels to the executors as a zip
(:mod:`hudilite.spark.shipping`), for clusters where it is not installed.

A session this helper starts is quiet: the JVM starts with ``log4j2-quiet.properties``
(passed as ``spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=...``), so Spark's
start-up warnings (hostname, native-hadoop library, the log4j banner) stay off standard
error, Spark logs errors only afterwards, and pyspark's loggers that print every captured
SQL error as a JSON line are disabled. ``log_level`` (or ``$HUDILITE_SPARK_LOG_LEVEL``)
``WARN``, ``INFO`` or ``DEBUG`` brings all of it back; ``OFF`` silences Spark entirely.

A JVM this helper launches maps its classes from a class-data-sharing archive, recorded in
the background the first time (:mod:`hudilite.spark.class_archive`; about half the JVM's
start-up; ``HUDILITE_JVM_ARCHIVE=off`` turns it off).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark import SparkContext
from pyspark.errors import AnalysisException
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from hudilite.spark import class_archive, datasource, shipping
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
    log_level: str | None = None,
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

    Settings it makes (each overridable through ``conf``): UTC session time zone, Arrow
    transfers, adaptive execution, dynamic partition overwrite, no UI, and pyspark's
    DataFrame call-site capture off (``spark.python.sql.dataFrameDebugging.enabled``: five
    JVM round trips per Column call, a fifth of a small write's time).

    ``log_level`` is Spark's log level once it runs (default ``$HUDILITE_SPARK_LOG_LEVEL``,
    else ``ERROR``); see the module doc for what stays quiet below ``WARN``.

    When a session is already active it is returned unchanged (apart from the
    session time zone, which hudilite needs in UTC, and the package being shipped when
    asked), so callers can hand in their own cluster session instead.
    """
    active = active_session()
    if active is not None:
        if ship_package:
            _ship(active)
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
        # pyspark (4.x) records the Python call site of every Column and DataFrame function
        # by default: five JVM round trips per call, a fifth of a small write's time (a
        # write builds dozens of expressions). It only adds the call site to the DataFrame
        # context of error messages; pass conf={DATAFRAME_DEBUGGING: "true"} to have it back.
        .config(DATAFRAME_DEBUGGING, "false")
        .config(
            "spark.driver.memory", driver_memory or os.environ.get("HUDILITE_DRIVER_MEMORY", "4g")
        )
        .config("spark.sql.warehouse.dir", os.path.abspath("spark-warehouse"))
    )
    settings = {k: str(v) for k, v in (conf or {}).items()}
    level = (log_level or os.environ.get(LOG_LEVEL_ENV) or "ERROR").upper()
    quiet = level not in VERBOSE_LEVELS
    if quiet and "PYSPARK_GATEWAY_PORT" not in os.environ:
        java_options = _with_quiet_log4j(settings.get(DRIVER_JAVA_OPTIONS))
        if java_options:
            settings[DRIVER_JAVA_OPTIONS] = java_options
    launches = "PYSPARK_GATEWAY_PORT" not in os.environ and not _jvm_running()
    if launches:
        # Classes mapped from an archive: about half the JVM's start (module doc).
        archive = class_archive.archive_options(settings.get(DRIVER_JAVA_OPTIONS))
        if archive:
            given = settings.get(DRIVER_JAVA_OPTIONS)
            settings[DRIVER_JAVA_OPTIONS] = f"{given} {archive}" if given else archive
    for key, value in settings.items():
        builder = builder.config(key, value)
    launching = quiet and launches
    with _jvm_stderr_filtered() if launching else contextlib.nullcontext():
        session = builder.getOrCreate()
    # spark.hadoop.fs.s3a.* settings describe the S3 endpoint for hudilite's gateways too
    # (hudilite reads and writes S3 through pyarrow, not through Hadoop's S3A connector).
    set_storage_options(storage_options_of(conf))
    session.sparkContext.setLogLevel(level)
    if quiet:
        quiet_pyspark_loggers()
    if ship_package:
        _ship(session)
    datasource.register(session)  # the builder set the zone (UTC unless conf says otherwise)
    return session


LOG_LEVEL_ENV = "HUDILITE_SPARK_LOG_LEVEL"
# Levels that ask for Spark's warnings (and so for its start-up messages).
VERBOSE_LEVELS = frozenset({"ALL", "TRACE", "DEBUG", "INFO", "WARN"})
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")
# pyspark's loggers that print each captured SQL error (already raised) as a JSON line.
PYSPARK_JSON_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def _with_quiet_log4j(java_options: str | None) -> str:
    """``java_options`` plus hudilite's quiet log4j2 configuration, unless a log4j
    configuration is already given there or in the environment (``SPARK_SUBMIT_OPTS``)."""
    given = " ".join(
        [
            java_options or "",
            os.environ.get("SPARK_SUBMIT_OPTS", ""),
            os.environ.get("JAVA_TOOL_OPTIONS", ""),
        ]
    )
    if "log4j2.configurationFile" in given or "log4j.configuration" in given:
        return java_options or ""
    option = f"-Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}"
    return f"{java_options} {option}" if java_options else option


# Lines the JVM itself prints at start (not through log4j): the launcher always adds the
# incubating jdk.incubator.vector module, and Java announces it on standard error.
JVM_NOISE = (b"WARNING: Using incubator modules:",)


def _jvm_running() -> bool:
    return getattr(SparkContext, "_gateway", None) is not None


@contextlib.contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """Start the JVM (inside this block) with its standard error going through a pipe that
    a daemon thread copies to this process's standard error, without :data:`JVM_NOISE`."""
    try:
        target = os.dup(2)
        read_fd, write_fd = os.pipe()
    except OSError:  # no usable standard error: nothing to keep clean
        yield
        return
    threading.Thread(
        target=_copy_lines, args=(read_fd, target), name="hudilite-jvm-stderr", daemon=True
    ).start()
    saved = os.dup(2)
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _copy_lines(read_fd: int, target: int) -> None:
    pending = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(read_fd, 65536):
            *lines, pending = (pending + chunk).split(b"\n")
            out = b"".join(ln + b"\n" for ln in lines if not ln.startswith(JVM_NOISE))
            if out:
                os.write(target, out)
        if pending and not pending.startswith(JVM_NOISE):
            os.write(target, pending)


def quiet_pyspark_loggers(quiet: bool = True) -> None:
    """Disable (or with ``quiet=False`` enable again) pyspark's JSON error loggers."""
    # PySparkLogger's own getLogger: a plain Logger of that name would break pyspark's calls
    for name in PYSPARK_JSON_LOGGERS:
        PySparkLogger.getLogger(name).disabled = quiet


def prepare_session(spark: SparkSession) -> SparkSession:
    """Set up a SparkSession hudilite did not build; returns it. The one place this is done
    (an active session, the SQL session's, each Thrift server session's): the session time
    zone UTC (Hudi's instants are UTC) and ``format("hudilite")`` registered for batch and
    streaming reads (:mod:`hudilite.spark.datasource`), which a session already seeing it
    (Spark shares it once a query of another session used it) keeps."""
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        datasource.register(spark)
    except AnalysisException as exc:
        if not (exc.getCondition() or "").startswith("DATA_SOURCE_ALREADY_EXISTS"):
            raise
    return spark


def active_session() -> SparkSession | None:
    """The active SparkSession, set up by :func:`prepare_session`, or None."""
    active = SparkSession.getActiveSession()
    return None if active is None else prepare_session(active)


def _ship(session: SparkSession) -> None:
    shipping.ship_package(session)
