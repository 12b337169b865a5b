"""``hudilite thriftserver`` as a real process: beeline (the Hive JDBC driver shipped in the
pyspark wheel) runs DDL, DML, a query and CALL; SIGTERM lets an in-flight write finish and
stops the server cleanly. (Wrong passwords: test_statements.py and test_auth.py.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest
from TCLIService import ttypes as tt

import hudilite
from hudilite.thriftserver import UserStore
from tests.helpers import FAST_JVM_OPTIONS
from tests.server.clients import SESSION_OPTIONS, connect

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).parent
BEELINE = SPARK_HOME / "bin" / "beeline"


@pytest.fixture(scope="module")
def server_process(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[Any, Path, int]]:
    """``hudilite thriftserver --auth password`` on a free port: (process, warehouse, port).

    The shared SparkSession (``test_sigterm_finishes_the_running_write`` reads the table
    with it) starts while the server does, when it is not running yet: two JVM start-ups
    at once."""
    root = tmp_path_factory.mktemp("thrift-cli")
    users = root / "users.json"
    UserStore(users).add("alice", "alice-pw", "admin")
    warehouse = root / "wh"
    cmd = [
        str(Path(sys.executable).parent / "hudilite"),
        "thriftserver",
        "--warehouse",
        str(warehouse),
        "--port",
        "0",
        "--auth",
        "password",
        "--users",
        str(users),
        "--conf",
        "spark.master=local[1]",
        # Cheaper settings for a short-lived test server (as the shared test session's):
        # one shuffle partition per core, no adaptive re-planning of these tiny writes.
        "--conf",
        "spark.sql.shuffle.partitions=1",
        "--conf",
        "spark.sql.adaptive.enabled=false",
        "--conf",
        "hudilite.thriftserver.shutdown.grace=60",
        *[a for k, v in SESSION_OPTIONS.items() for a in ("--conf", f"{k}={v}")],
    ]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    assert proc.stderr is not None
    try:
        request.getfixturevalue("spark")
    except BaseException:
        proc.kill()
        raise
    port = None
    deadline = time.monotonic() + 240
    while port is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            port = int(found.group(1))
    if port is None:
        proc.kill()
        pytest.fail(f"the server did not start: {proc.stderr.read()}")
    yield proc, warehouse, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _beeline(port: int, password: str, sql: str) -> subprocess.CompletedProcess[str]:
    # beeline's JVM takes its options from SPARK_BEELINE_OPTS, not SPARK_SUBMIT_OPTS:
    # performance flags only (tests/helpers.py).
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_BEELINE_OPTS": FAST_JVM_OPTIONS}
    return subprocess.run(
        [
            str(BEELINE),
            "-u",
            f"jdbc:hive2://127.0.0.1:{port}/default",
            "-n",
            "alice",
            "-p",
            password,
            "--silent=true",
            "--outputformat=csv2",
            "-e",
            sql,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


@pytest.mark.skipif(not BEELINE.exists(), reason="the pyspark wheel ships no beeline")
def test_beeline(server_process: tuple[Any, Path, int]) -> None:
    _proc, _wh, port = server_process
    done = _beeline(
        port,
        "alice-pw",
        "CREATE TABLE bt (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id');"
        "INSERT INTO bt VALUES (1, 'a'), (2, 'b');"
        "SELECT id, v FROM bt ORDER BY id;"
        "CALL show_commits(table => 'bt');",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("id,v")
    assert lines[start : start + 3] == ["id,v", "1,a", "2,b"]
    assert lines[start + 3].startswith("commit_time,state_transition_time,action,")
    assert lines[start + 4].split(",")[2] == "commit"


def test_sigterm_finishes_the_running_write(
    server_process: tuple[Any, Path, int], spark: Any
) -> None:
    proc, warehouse, port = server_process
    conn = connect(port)
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE st (id BIGINT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
    )
    cur.execute("INSERT INTO st SELECT id, CAST(id AS STRING) FROM range(5000)", async_=True)
    status = cur.poll()
    while status.operationState == tt.TOperationState.PENDING_STATE:
        time.sleep(0.02)
        status = cur.poll()
    # The statement runs (it has not failed before the signal: the message says why if so).
    assert status.operationState == tt.TOperationState.RUNNING_STATE, status.errorMessage
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 0
    assert proc.stderr is not None
    log = proc.stderr.read()
    assert "hudilite thriftserver stopped" in log
    table = hudilite.Table.load(spark, str(warehouse / "default.db" / "st"))
    assert [i.state.name for i in table.timeline()] == ["COMPLETED"], log
    assert table.read().count() == 5000
