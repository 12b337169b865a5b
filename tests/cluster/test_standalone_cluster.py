"""hudilite on a real Spark standalone cluster whose executors do not have hudilite installed.

A master and a worker start from the pyspark wheel on 127.0.0.1 (``standalone.py``); each
driver runs in its own process (this pytest process may hold the shared local session,
and one Python process holds one SparkContext):

- ``scenario.py`` ships hudilite with ``spark_session(ship_package=True)`` to two
  executors that run an interpreter without it, writes, reads, compacts, clusters and
  runs SQL, asserting exact rows at every step; then hudi-rs reads the same tables here.
- ``submit_app.py`` runs under the wheel's ``spark-submit --py-files`` with no hudilite
  on the driver either, as the README shows.

The two drivers run at the same time (``submitted`` starts the second as soon as the
cluster is up), each app on executors of its own (two cores each, the scenario's in two
one-core executors): the worker offers four cores. When the module ends, no master,
worker, executor or Python worker is left running.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import scenario, submit_app
from tests.cluster.standalone import (
    SPARK_HOME,
    cluster_env,
    executor_python,
    standalone_cluster,
    stop_group,
)
from tests.helpers import FAST_JVM_OPTIONS, hudi_rs_read

pytestmark = pytest.mark.spark

STEPS = ["session", "executors", "cow", "clustering", "mor", "compaction", "sql"]


def _processes_under(*paths: Path) -> list[str]:
    """Command lines of live processes whose command line or working folder is under a path."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if any(str(p) in cmd or cwd.startswith(str(p)) for p in paths):
            found.append(f"{proc.name}: {cmd[:200]}")
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """(master URL, cluster folder, executor python); everything is stopped at the end."""
    base = tmp_path_factory.mktemp("standalone")
    python = executor_python(base / "executor-venv")
    # Four cores: two apps at once (two drivers, see `submitted`), two cores each.
    with standalone_cluster(base / "cluster", cores=4) as url:
        yield url, base / "cluster", python
    deadline = time.monotonic() + 15  # Python daemons exit once their executor is gone
    while (left := _processes_under(base)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, left


def _start_driver(
    args: list[str], cwd: Path, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    """Start a driver in its own process group (its JVM and Python workers go with it on
    failure), its output going to ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(
            args,
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _finish(driver: subprocess.Popen[bytes], log: Path, cluster_dir: Path) -> str:
    """Wait for a driver of :func:`_start_driver`; return its output; fail with the logs."""
    try:
        driver.wait(timeout=900)
    finally:
        stop_group(driver)
    out = log.read_text(errors="replace")
    if driver.returncode != 0:
        logs = []
        for log in sorted([*cluster_dir.glob("*.log"), *cluster_dir.glob("worker/*/*/stderr")]):
            logs.append(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}")
        pytest.fail(f"driver exited with {driver.returncode}:\n{out[-6000:]}\n" + "\n".join(logs))
    return out


def test_executor_python_has_the_dependencies_but_not_hudilite(cluster, tmp_path):
    python = cluster[2]
    deps = subprocess.run(
        [python, "-c", "import pyarrow, fastavro, pandas, sqlglot, pyspark"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert deps.returncode == 0, deps.stderr
    own = subprocess.run(
        [python, "-c", "import hudilite"], capture_output=True, text=True, cwd=tmp_path
    )
    assert own.returncode == 1
    assert "ModuleNotFoundError: No module named 'hudilite'" in own.stderr


def test_writes_reads_services_and_sql_with_a_shipped_package(cluster, submitted, tmp_path):
    url, cluster_dir, python = cluster
    script = str(Path(scenario.__file__).resolve())
    env = cluster_env(cluster_dir)
    args = [sys.executable, script, url, python, str(tmp_path), FAST_JVM_OPTIONS]
    log = tmp_path / "driver.log"
    out = _finish(_start_driver(args, tmp_path, env, log), log, cluster_dir)
    assert re.findall(r"^STEP (\w+) ok", out, re.MULTILINE) == STEPS, out

    # The independent reader sees the rows the cluster wrote.
    cols = scenario.COLS
    assert scenario.table_rows(hudi_rs_read(str(tmp_path / "cow")), cols) == scenario.expected_cow()
    assert scenario.table_rows(hudi_rs_read(str(tmp_path / "mor")), cols) == scenario.expected_mor()
    orders = hudi_rs_read(str(tmp_path / "warehouse" / "default.db" / "orders"))
    assert scenario.table_rows(orders, scenario.SQL_COLS) == scenario.expected_sql()


@pytest.fixture(scope="module")
def submitted(
    cluster: tuple[str, Path, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The README's ``spark-submit --py-files`` recipe, started as soon as the cluster is up
    so that it runs while the scenario's driver does: (driver process, its folder)."""
    url, cluster_dir, python = cluster
    work = tmp_path_factory.mktemp("submit")
    # The README's recipe: write the zip, hand it to the wheel's spark-submit.
    made = subprocess.run(
        [sys.executable, "-m", "hudilite.spark.shipping", str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    zipped = made.stdout.strip()
    # No PYSPARK_PYTHON: spark.pyspark.python alone picks the driver's and executors' python.
    env = cluster_env(cluster_dir)
    driver = _start_driver(
        [
            str(SPARK_HOME / "bin" / "spark-submit"),
            "--master", url,
            "--py-files", zipped,
            "--driver-memory", "1g",
            "--conf", "spark.executor.memory=512m",
            # One executor JVM (two cores): a JVM fewer to start than the scenario's two.
            "--conf", "spark.executor.cores=2",
            "--conf", "spark.cores.max=2",
            "--conf", "spark.driver.host=127.0.0.1",
            "--conf", "spark.ui.enabled=false",
            "--conf", f"spark.pyspark.python={python}",
            # Performance flags only (tests/helpers.py), not part of the recipe.
            "--conf", f"spark.driver.extraJavaOptions={FAST_JVM_OPTIONS}",
            "--conf", f"spark.executor.extraJavaOptions={FAST_JVM_OPTIONS}",
            str(Path(submit_app.__file__).resolve()), url, str(work / "submitted"),
        ],
        work,
        env,
        work / "driver.log",
    )  # fmt: skip
    try:
        yield driver, work
    finally:
        stop_group(driver)


def test_spark_submit_with_py_files_and_no_hudilite_on_the_driver(cluster, submitted):
    cluster_dir = cluster[1]
    driver, work = submitted
    out = _finish(driver, work / "driver.log", cluster_dir)
    assert "SUBMIT ok" in out, out
    got = scenario.table_rows(hudi_rs_read(str(work / "submitted")), ["id", "ts", "v"])
    assert got == submit_app.expected()
