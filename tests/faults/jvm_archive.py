"""Build a class-data-sharing archive for the fault tests' driver JVMs.

Usage: ``python -m tests.faults.jvm_archive ARCHIVE WORK_DIR``.

Every scenario of tests/faults starts fresh driver JVMs (about twenty per run: the killed
writes, the racing writers, the streaming driver's ten restarts...) and most of a short
driver's life is its start-up: loading and verifying some ten thousand Spark classes.
This process runs a driver like theirs (``tests/faults/writer.py``'s session) through a
write, a streaming write and a read with ``-XX:ArchiveClassesAtExit``, so its JVM dumps
the classes it loaded when it exits; the drivers started with ``-XX:SharedArchiveFile``
(:func:`tests.faults.harness.writer_env`) map them instead (about half the start-up).
The archive changes how fast classes load, nothing of what runs: a JVM that cannot use
it (another JDK, another class path) loads its classes as usual.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pyarrow as pa


def main(archive: str, work: str) -> int:
    opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
    # -Xlog:disable: the dump lists every class it skips (signed jars...) on stdout.
    os.environ["SPARK_SUBMIT_OPTS"] = f"{opts} -XX:ArchiveClassesAtExit={archive} -Xlog:disable"
    from pyspark import SparkContext

    import hudilite
    from tests.faults.harness import SCHEMA
    from tests.faults.stream_writer import SOURCE_DDL
    from tests.faults.writer import _spark

    spark = _spark({"spark": True})
    root = Path(work)
    rows = [{"id": f"k{i}", "ts": 1, "v": "a", "p": "p1"} for i in range(4)]
    table = hudilite.Table.create(
        spark, str(root / "mor"), SCHEMA, record_key="id", ordering_field="ts", table_type="mor"
    )
    table.write(pa.Table.from_pylist(rows, schema=SCHEMA), "upsert")  # type: ignore[arg-type]
    table.read().collect()
    landing = root / "landing"
    landing.mkdir()
    (landing / "f.json").write_text("\n".join(json.dumps(r) for r in rows))
    hudilite.Table.load(spark, str(root / "mor")).write_stream(
        spark.readStream.schema(SOURCE_DDL).json(str(landing)),
        checkpoint_location=str(root / "chk"),
        trigger={"availableNow": True},
    ).awaitTermination()
    jvm = SparkContext._gateway.proc  # type: ignore[union-attr]
    spark.stop()
    # The JVM exits (and writes the archive) when its standard input closes.
    jvm.stdin.close()
    jvm.wait(timeout=300)
    return 0 if Path(archive).is_file() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
