"""The background recorder of the Spark JVM's class-data-sharing archive:
``python -m hudilite.spark.class_recorder PATH`` (started by
:func:`hudilite.spark.class_archive.archive_options`, which took the lock).

It starts a local Spark JVM with ``-XX:ArchiveClassesAtExit``, runs what a first statement
runs (a query collected to Python, an Arrow collect), stops it and waits for the JVM to
write the archive, renamed into place as ``PATH`` (:func:`.class_archive.finish_dump`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyspark import SparkContext

from hudilite.spark.class_archive import (
    QUIET_CDS,
    abandon_recording,
    begin_recording,
    finish_dump,
)
from hudilite.spark.session import spark_session

__all__ = ["record"]


def record(path: Path) -> int:
    """Record the archive ``path``; 0 when it is in place."""
    temporary = begin_recording(path)
    jvm = None
    try:
        options = f"-XX:ArchiveClassesAtExit={temporary} {QUIET_CDS}"
        spark = spark_session(
            master="local[1]", conf={"spark.driver.extraJavaOptions": options}, log_level="OFF"
        )
        jvm = getattr(SparkContext._gateway, "proc", None)
        spark.sql("SELECT 1 AS x").collect()
        spark.range(3).toArrow()
        spark.stop()
    finally:
        if jvm is not None:
            finish_dump(jvm)
        else:
            abandon_recording()
    return 0 if path.is_file() else 1


if __name__ == "__main__":
    sys.exit(record(Path(sys.argv[1])))
