"""Memory at the Thrift server's edge (issue 26), with a real ``hudilite thriftserver`` on a
small driver heap and real clients: the per-result byte cap and Spark's per-job result cap
fail only the statement at fault; a query that exhausts the JVM's heap ends the server at
once with status 70 (for a supervisor to restart it) and every client's connection with it,
nothing left hanging."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from thrift.transport.TTransport import TTransportException

from hudilite.thriftserver.limits import parse_bytes
from hudilite.thriftserver.sessions import ServerSettings
from tests.helpers import FAST_JVM_OPTIONS

#: 1000 strings of 1 MiB gathered into one aggregate buffer: twice the 512 MiB heap.
HEAP_EATER = (
    "SELECT length(concat_ws('', collect_list(repeat('x', 1048576)))) FROM range(0, 1000, 1, 1)"
)


def test_result_bytes_setting_parses() -> None:
    assert parse_bytes("1048576") == 1 << 20
    assert parse_bytes("100k") == 100 << 10
    assert parse_bytes(" 64MB ") == 64 << 20
    assert parse_bytes("2g") == 2 << 30
    assert ServerSettings.from_conf({}).max_result_bytes == 0
    key = "hudilite.thriftserver.max.result.bytes"
    assert ServerSettings.from_conf({key: "1m"}).max_result_bytes == 1 << 20
    for bad in ("", "1.5g", "-1", "ten", "5x"):
        with pytest.raises(ValueError) as err:
            ServerSettings.from_conf({key: bad})
        assert str(err.value) == f"{key} must be a size in bytes (64m, 1g, ...), got {bad!r}"


def _error_of(cur: hive.Cursor, sql: str) -> tuple[str, str]:
    with pytest.raises(hive_exc.OperationalError) as err:
        cur.execute(sql)
        cur.fetchall()
    status = err.value.args[0].status
    return status.sqlState, status.errorMessage


@pytest.mark.spark
def test_result_caps_then_out_of_memory(tmp_path: Path) -> None:
    cmd = [
        str(Path(sys.executable).parent / "hudilite"),
        "thriftserver",
        *("--warehouse", str(tmp_path / "wh"), "--port", "0"),
        *("--conf", "spark.master=local[1]", "--conf", "spark.sql.shuffle.partitions=1"),
        *("--conf", "spark.driver.memory=512m", "--conf", "spark.driver.maxResultSize=1m"),
        *("--conf", f"spark.driver.extraJavaOptions={FAST_JVM_OPTIONS}"),
        *("--conf", "hudilite.thriftserver.max.result.bytes=100k"),
    ]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None and proc.stdout is not None
    try:
        port = None
        deadline = time.monotonic() + 240
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            port = int(found.group(1)) if found else None
        assert port is not None, f"the server did not start: {proc.stderr.read()}"
        other = hive.connect("127.0.0.1", port, username="other")
        other_cur = other.cursor()
        other_cur.execute("SELECT 1")
        assert other_cur.fetchall() == [(1,)]
        conn = hive.connect("127.0.0.1", port, username="greedy")
        cur = conn.cursor()
        # The server's byte cap: 1000 bytes a row, 100 rows fit in 100 KiB, 200 do not.
        cur.execute("SELECT repeat('x', 1000) AS s FROM range(100)")
        assert len(cur.fetchall()) == 100
        assert _error_of(cur, "SELECT repeat('x', 1000) AS s FROM range(200)") == (
            "HY000",
            "the result is larger than 102400 bytes, the server's limit "
            "(hudilite.thriftserver.max.result.bytes): add a LIMIT, select fewer columns or "
            "a narrower WHERE",
        )
        # Spark's cap on what one job sends the driver (4 tasks of ~1 MiB each).
        _state, message = _error_of(cur, "SELECT repeat('x', 1048576) FROM range(0, 4, 1, 4)")
        assert re.search(
            r"Total size of serialized results of \d+ tasks \([\d.]+ [KM]iB\) is bigger than "
            r"spark\.driver\.maxResultSize \(1024\.0 KiB\)",
            message,
        ), message
        # Both failed the statement only: the server goes on.
        cur.execute("SELECT 2")
        assert cur.fetchall() == [(2,)]
        # A query that exhausts the heap: the JVM exits, then the server, non-zero.
        started = time.monotonic()
        with pytest.raises((hive_exc.OperationalError, TTransportException, OSError, EOFError)):
            cur.execute(HEAP_EATER)
            cur.fetchall()
        assert proc.wait(timeout=60) == 70
        assert time.monotonic() - started < 60
        # The other client's connection ended with it (an error at once, no hang).
        with pytest.raises((TTransportException, OSError, EOFError)):
            other_cur.execute("SELECT 1")
        log = proc.stderr.read()
        assert (
            "hudilite thriftserver: the Spark JVM exited (code 3); exiting with status 70 so "
            "that a supervisor restarts the server"
        ) in log, log
        # HotSpot's own line for -XX:+ExitOnOutOfMemoryError (on its standard output).
        assert "Terminating due to java.lang.OutOfMemoryError: Java heap space" in (
            proc.stdout.read()
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
