"""What the fault-injection tests share: seed tables, the writer process, the three readers.

Every scenario copies a seed table (built once per run with the test process's Spark
session), breaks it with a real process (``tests/faults/writer.py``, SIGKILLed at a fail
point or by the test), recovers, then checks that hudilite's Spark reader, its Arrow reader
and hudi-rs all return exactly the rows of a dict oracle: committed rows never lost,
uncommitted rows never visible, no duplicate keys.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudilite import failpoints
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())]
)
COLS = ["id", "ts", "v", "p"]
#: A dead writer is recognised after 2 x 500 ms without a heartbeat.
HEARTBEAT = {
    "hoodie.client.heartbeat.interval_in_ms": "500",
    "hoodie.client.heartbeat.tolerable.misses": "2",
    # A SIGKILLed lock holder loses its lease after 5 x 200 ms; a live one is waited for.
    "hoodie.write.lock.heartbeat_interval_ms": "200",
    "hoodie.write.lock.wait_time_ms": "20000",
}
DEAD_AFTER_S = 1.2


def recs(keys: Iterable[int], ts: int, v: str, parts: Sequence[str] = ("p1", "p2")) -> list[dict]:
    """Records ``k<nn>`` with ordering value ``ts``, spread over ``parts`` by key."""
    return [{"id": f"k{k:03d}", "ts": ts, "v": v, "p": parts[k % len(parts)]} for k in keys]


def oracle_of(*batches: list[dict]) -> DictOracle:
    """The oracle after upserting ``batches`` in order."""
    o = DictOracle(["id"], "ts")
    for b in batches:
        o.upsert(b)
    return o


@dataclass
class Outcome:
    """A finished writer process: exit code (-9 after SIGKILL), step reports, stderr."""

    returncode: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL

    def describe(self) -> str:
        return f"rc={self.returncode} steps={self.steps}\n{self.stderr[-3000:]}"


#: The class-data-sharing archive of the driver JVMs (``tests/faults/jvm_archive.py``):
#: ``path`` and the ``builder`` process while it runs (see :func:`build_jvm_archive`).
_JVM_ARCHIVE: dict[str, Any] = {}


def build_jvm_archive(folder: Path) -> None:
    """Start building the drivers' class-data-sharing archive in ``folder``, in the
    background: the drivers started once it exists start about twice as fast."""
    if _JVM_ARCHIVE:
        return
    path = folder / "drivers.jsa"
    _JVM_ARCHIVE["path"] = path
    _JVM_ARCHIVE["log"] = log = folder / "builder.log"
    with log.open("w") as err:
        _JVM_ARCHIVE["builder"] = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.jvm_archive", str(path), str(folder / "work")],
            cwd=REPO_ROOT,
            env=writer_env(),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )


def jvm_archive_file(*, wait: bool = False) -> Path | None:
    """The built archive, else None (not asked for, still building -- unless ``wait`` --,
    or failed: the drivers then start without it, only slower)."""
    builder = _JVM_ARCHIVE.get("builder")
    if builder is not None:
        if builder.poll() is None and not wait:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            builder.wait(timeout=300)
        kill_group(builder)
        builder.wait()
        del _JVM_ARCHIVE["builder"]
        if builder.returncode != 0:
            err = _JVM_ARCHIVE["log"].read_text()[-2000:]
            warnings.warn(f"no JVM archive for the fault drivers:\n{err}", stacklevel=2)
            _JVM_ARCHIVE["path"] = None
    path = _JVM_ARCHIVE.get("path")
    return path if path is not None and path.is_file() else None


def drop_jvm_archive() -> None:
    """Stop a builder still running and delete the archive (end of the session: it is
    some 200 MB, and pytest keeps the last runs' temporary folders)."""
    builder = _JVM_ARCHIVE.pop("builder", None)
    if builder is not None:
        kill_group(builder)
        builder.wait()
    path = _JVM_ARCHIVE.get("path")
    if path is not None:
        path.unlink(missing_ok=True)
    _JVM_ARCHIVE.clear()


def writer_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop(failpoints.ENV_VAR, None)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["PYTHONPATH"] = str(REPO_ROOT)
    archive = jvm_archive_file()
    if archive is not None:
        # Classes mapped from the archive (spark-submit adds SPARK_SUBMIT_OPTS to the JVM).
        opts = env.get("SPARK_SUBMIT_OPTS", "")
        env["SPARK_SUBMIT_OPTS"] = f"{opts} -XX:SharedArchiveFile={archive}".strip()
    return env


def start_writer(spec: dict[str, Any]) -> subprocess.Popen[str]:
    """Start ``tests/faults/writer.py`` on ``spec`` in its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.faults.writer", json.dumps(spec)],
        cwd=REPO_ROOT,
        env=writer_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> Outcome:
    """Wait for a writer and collect its report (its process group is killed afterwards,
    so a SIGKILLed driver leaves no JVM behind)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_group(proc)
    steps = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return Outcome(proc.returncode, steps, err)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the writer's whole process group (driver, JVM, Python workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_writer(spec: dict[str, Any], timeout: float = 240) -> Outcome:
    """Run a writer to its end (or its kill point)."""
    return finish(start_writer(spec), timeout)


def copy_table(src: Path, dst: Path) -> Path:
    """A private copy of a seed table."""
    shutil.copytree(src, dst)
    return dst


def wait_dead(path: Path) -> None:
    """Sleep until the heartbeats a killed writer left in table ``path`` have expired:
    :data:`DEAD_AFTER_S` after the newest beat (the heartbeat file's modification time,
    what the writers look at; a copy of a table keeps it), no longer."""
    folder = path / ".hoodie" / ".heartbeat"
    beats = [f.stat().st_mtime for f in folder.iterdir()] if folder.is_dir() else []
    time.sleep(max(0.0, max(beats, default=0.0) + DEAD_AFTER_S - time.time()))


def state(path: Path) -> TableState:
    return TableState.load(FileSystemGateway(str(path)))


def completed_times(path: Path) -> set[str]:
    return {i.requested_time for i in state(path).timeline.completed()}


def pending(path: Path) -> list[str]:
    """``action/state@time`` of every pending instant."""
    return [f"{i.action}/{i.state.name}@{i.requested_time}" for i in state(path).timeline.pending()]


def reader_rows(spark: Any, path: Path, *, with_spark: bool = True) -> dict[str, list[tuple]]:
    """The rows of each reader (hudilite Spark, hudilite Arrow, hudi-rs)."""
    import hudilite

    table = hudilite.Table.load(spark, str(path))
    got = {
        "arrow": rows(table.to_arrow(), COLS),
        "hudi-rs": rows(hudi_rs_read(str(path)), COLS),
    }
    if with_spark:
        got["spark"] = spark_rows(table.read(), COLS)
    return got


def assert_readers_match(
    spark: Any, path: Path, oracle: DictOracle, *, with_spark: bool = True
) -> None:
    """Every reader returns exactly the oracle's rows (no loss, no ghost, no duplicate).

    ``with_spark=False`` skips the Spark reader (a Spark job): for the checks between a
    crash and the recovery, the final check always includes it.
    """
    expected = oracle.rows(COLS)
    got = reader_rows(spark, path, with_spark=with_spark)
    for name, actual in got.items():
        keys = [r[0] for r in actual]
        assert len(keys) == len(set(keys)), f"{name}: duplicate keys"
        assert actual == expected, f"{name} differs from the oracle"


def write(spark: Any, path: Path, records: list[dict], op: str = "upsert", **options: str) -> str:
    """A write in the test process (Spark); returns its instant."""
    import hudilite

    table = hudilite.Table.load(spark, str(path))
    data = pa.Table.from_pylist(records, schema=SCHEMA)
    return table.write(data, op, options={**HEARTBEAT, **options}).instant_time  # type: ignore[arg-type]
