"""A real Spark standalone cluster on 127.0.0.1, started from the pyspark wheel.

``spark-class`` (``<site-packages>/pyspark/bin/spark-class``, with ``SPARK_HOME`` the
pyspark package folder) runs a ``Master`` and one ``Worker``; the worker launches the
executors as their own JVMs, each with its own Python workers. Every process lives in a
process group that :func:`standalone_cluster` kills on exit, whatever happened inside.

:func:`executor_python` builds the interpreter the executors run: a virtual environment
whose site-packages holds every package of the driver's environment except hudilite, so
an executor can import pyarrow, fastavro, pandas and sqlglot but not hudilite unless the
driver ships it.
"""

from __future__ import annotations

import os
import re
import signal
import site
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pyspark

from tests.helpers import FAST_JVM_OPTIONS

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
HOST = "127.0.0.1"
#: Installed names of hudilite in a site-packages folder (regular or editable install).
_HUDILITE_ENTRIES = re.compile(r"^(hudilite|__editable__[._]+hudilite)", re.IGNORECASE)


def executor_python(dest: Path) -> str:
    """Create a venv at ``dest`` with the driver's packages but not hudilite; return its python.

    The packages are symlinked from the driver's site-packages (no download, a second),
    leaving out ``hudilite*`` and its editable-install hooks.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    target = dest / "lib" / version / "site-packages"
    for source in site.getsitepackages():
        if not Path(source).is_dir():
            continue
        for entry in Path(source).iterdir():
            if _HUDILITE_ENTRIES.match(entry.name) or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    return str(dest / "bin" / "python")


def cluster_env(work: Path) -> dict[str, str]:
    """The environment of the master, worker (and so executors) and driver: all on 127.0.0.1."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "SPARK_CONF_DIR", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    conf_dir = work / "conf"  # empty: Spark's defaults, nothing from the machine
    conf_dir.mkdir(parents=True, exist_ok=True)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOCAL_IP=HOST,
        SPARK_LOCAL_HOSTNAME="localhost",
        SPARK_DAEMON_MEMORY="512m",
        # The master and the worker: performance flags only (tests/helpers.py).
        SPARK_DAEMON_JAVA_OPTS=FAST_JVM_OPTIONS,
        SPARK_LOG_DIR=str(work / "logs"),
        SPARK_PID_DIR=str(work / "pids"),
        # The master's REST submission server would take the fixed port 6066.
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
    )
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        # A new session: the process and everything it starts (executors, Python workers)
        # share one process group, killed as a whole on exit.
        return subprocess.Popen(
            [str(SPARK_CLASS), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )


def _wait_for(proc: subprocess.Popen[bytes], log: Path, pattern: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        found = regex.search(text)
        if found:
            return found.group(found.lastindex or 0)
        if proc.poll() is not None or time.monotonic() > deadline:
            state = f"exited with {proc.returncode}" if proc.poll() is not None else "timed out"
            raise RuntimeError(f"{log.name}: {state} before /{pattern}/:\n{text[-3000:]}")
        time.sleep(0.2)


def stop_group(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM the process group of ``proc`` (started with ``start_new_session``), then
    SIGKILL whatever is left of it."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Children (executor JVMs, Python daemons) may outlive the leader: kill the group.
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextmanager
def standalone_cluster(
    work: Path, *, cores: int = 2, memory: str = "2g", timeout: float = 60.0
) -> Iterator[str]:
    """Run a master and one worker (``cores``, ``memory``) on 127.0.0.1; yield the master URL.

    Web UIs bind to a free port (``--webui-port 0``); logs go to ``work/*.log``.
    """
    work.mkdir(parents=True, exist_ok=True)
    env = cluster_env(work)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        # The master's port is chosen here so that the worker starts at the same time
        # (it retries until the master listens): JVM start-ups are the slow part.
        url = f"spark://{HOST}:{_free_port()}"
        master_log, worker_log = work / "master.log", work / "worker.log"
        master = _start(
            [
                "org.apache.spark.deploy.master.Master",
                "--host", HOST, "--port", url.rsplit(":", 1)[1], "--webui-port", "0",
            ],
            master_log,
            env,
        )  # fmt: skip
        procs.append(master)
        worker = _start(
            [
                "org.apache.spark.deploy.worker.Worker", url,
                "--host", HOST, "--cores", str(cores), "--memory", memory,
                "--webui-port", "0", "--work-dir", str(work / "worker"),
            ],
            worker_log,
            env,
        )  # fmt: skip
        procs.append(worker)
        _wait_for(master, master_log, r"Starting Spark master at (spark://\S+)", timeout)
        _wait_for(worker, worker_log, r"Successfully registered with master", timeout)
        yield url
    finally:
        for proc in reversed(procs):
            stop_group(proc)
