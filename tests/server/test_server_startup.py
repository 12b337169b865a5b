"""The Thrift server's start-up (issue 27.7): a busy port is reported before Spark starts, in
one line naming ``host:port`` (a real ``hudilite thriftserver`` process); the server runs one
statement through a session of its own before it listens (the warm-up), so the first
client does not pay for Spark's first query."""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.server.clients import connect
from tests.server.conftest import password_server

HUDILITE = str(Path(sys.executable).parent / "hudilite")


def test_busy_port_is_refused_before_spark_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # No Java at all: had the server started Spark before checking the port, it would
        # fail on the missing JVM (pyspark's "Java gateway process exited") instead.
        env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
        started = time.monotonic()
        done = subprocess.run(
            [HUDILITE, "thriftserver", "--port", str(port), "--warehouse", str(tmp_path / "wh")],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        elapsed = time.monotonic() - started
    assert done.returncode == 1
    assert done.stderr == (
        f"Error: cannot listen on 127.0.0.1:{port}: address already in use (another process "
        "listens there: stop it or pick another --port)\n"
    )
    assert done.stdout == ""
    assert not (tmp_path / "wh").exists()  # nothing was created either
    # The command's Python imports only (~2 s of CPU); Spark's start is 10-30 s more.
    assert elapsed < 30, elapsed


def test_check_port_names_the_address() -> None:
    from hudilite.thriftserver.server import check_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            check_port("127.0.0.1", port)
        except OSError as exc:
            assert str(exc) == (
                f"cannot listen on 127.0.0.1:{port}: address already in use (another "
                "process listens there: stop it or pick another --port)"
            )
            assert exc.errno == errno.EADDRINUSE
        else:
            raise AssertionError("a busy port passed the check")
    check_port("127.0.0.1", port)  # free again
    check_port("127.0.0.1", 0)  # any free port


@pytest.mark.spark
def test_warm_up_runs_a_statement_before_listening(
    spark: Any,
    users_file: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hudilite.thriftserver import server as server_module

    caplog.set_level(logging.INFO, logger=server_module.__name__)
    # A statement whose effect shows that it ran, through a session on the warehouse.
    monkeypatch.setattr(server_module, "WARM_UP_SQL", "CREATE DATABASE warmed")
    with password_server(spark, users_file, tmp_path / "wh") as srv:
        assert srv.registry.sessions() == [] and srv.registry.operation_count() == 0
        with connect(srv, "rita") as conn:
            cur = conn.cursor()
            cur.execute("SHOW DATABASES")
            assert sorted(cur.fetchall()) == [("default",), ("warmed",)]
    logs = [r.getMessage() for r in caplog.records if r.name == server_module.__name__]
    assert len([m for m in logs if re.fullmatch(r"warm-up took \d+\.\d s", m)]) == 1, logs
    caplog.clear()
    # Off: nothing runs. A failing warm-up is logged and the server serves anyway.
    off = {"hudilite.thriftserver.warm.up": "false"}
    with (
        password_server(spark, users_file, tmp_path / "wh2", settings=off) as srv,
        connect(srv, "rita") as conn,
    ):
        cur = conn.cursor()
        cur.execute("SHOW DATABASES")
        assert cur.fetchall() == [("default",)]
    monkeypatch.setattr(server_module, "WARM_UP_SQL", "SELECT * FROM no_such_table")
    with password_server(spark, users_file, tmp_path / "wh3") as srv, connect(srv, "rita") as conn:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith(
        "warm-up: SELECT * FROM no_such_table failed: "
    ), warnings
    assert "no_such_table" in warnings[0].removeprefix("warm-up: SELECT * FROM no_such_table")
