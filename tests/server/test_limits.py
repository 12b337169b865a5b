"""The server's limits through real clients: statement timeouts (the server's and the
client's ``queryTimeout``), login throttling with its audit log, the connection cap, and the
HTTP body limit applied before authentication."""

from __future__ import annotations

import base64
import http.client
import logging
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from TCLIService import ttypes as tt
from thrift.transport.TTransport import TTransportException

from hudilite.thriftserver.sessions import ServerSettings
from tests.server.clients import USERS, connect
from tests.server.conftest import password_server

pytestmark = pytest.mark.spark

RUNNING = (tt.TOperationState.PENDING_STATE, tt.TOperationState.RUNNING_STATE)
#: One task sleeping a minute unless its job is cancelled (alice is trusted with reflection).
SLEEPY = (
    "SELECT count(*) FROM range(0, 1, 1, 1) "
    "WHERE java_method('java.lang.Thread', 'sleep', 60000L) IS NULL"
)


def test_timeout_settings_parse() -> None:
    assert ServerSettings.from_conf({"hive.query.timeout.seconds": "5s"}).query_timeout == 5.0
    assert (
        ServerSettings.from_conf(
            {"hive.query.timeout.seconds": "5", "hudilite.thriftserver.query.timeout": "7"}
        ).query_timeout
        == 7.0
    )
    with pytest.raises(ValueError) as err:
        ServerSettings.from_conf({"hudilite.thriftserver.query.timeout": "soon"})
    assert str(err.value) == "hudilite.thriftserver.query.timeout must be seconds, got 'soon'"
    with pytest.raises(ValueError) as err:
        ServerSettings.from_conf({"hudilite.thriftserver.max.connections": "-1"})
    assert str(err.value) == "hudilite.thriftserver.max.connections must not be negative, got '-1'"


def test_statement_timeouts(spark: Any, users_file: Path, tmp_path: Path) -> None:
    settings = {"hudilite.thriftserver.query.timeout": "3"}
    with (
        password_server(spark, users_file, tmp_path / "wh", settings=settings) as srv,
        connect(srv) as conn,
    ):
        cur = conn.cursor()
        # The server's timeout, on a synchronous statement.
        started = time.monotonic()
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute(SLEEPY)
        status = err.value.args[0].status
        assert (status.sqlState, status.errorMessage) == (
            "HYT00",
            "the statement timed out after 3 s and was cancelled",
        )
        assert time.monotonic() - started < 30
        # The client's queryTimeout (shorter), asynchronous, through the raw Thrift call.
        resp = conn.client.ExecuteStatement(
            tt.TExecuteStatementReq(
                sessionHandle=conn._sessionHandle, statement=SLEEPY, runAsync=True, queryTimeout=1
            )
        )
        assert resp.status.statusCode == tt.TStatusCode.SUCCESS_STATUS, resp.status
        request = tt.TGetOperationStatusReq(operationHandle=resp.operationHandle)
        state = conn.client.GetOperationStatus(request)
        while state.operationState in RUNNING:
            time.sleep(0.05)
            state = conn.client.GetOperationStatus(request)
        assert (state.operationState, state.sqlState, state.errorMessage) == (
            tt.TOperationState.ERROR_STATE,
            "HYT00",
            "the statement timed out after 1 s and was cancelled",
        )
        # The session goes on; its Spark jobs were cancelled (the core is free again).
        tracker = spark.sparkContext.statusTracker()
        deadline = time.monotonic() + 20
        while tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.05)
        cur.execute("SELECT 42")
        assert cur.fetchall() == [(42,)]


def test_login_throttling_and_audit_log(
    spark: Any, users_file: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {
        "hudilite.thriftserver.login.max.failures": "3",
        "hudilite.thriftserver.login.lockout": "30",
    }
    caplog.set_level(logging.WARNING, logger="hudilite.thriftserver.audit")
    with password_server(spark, users_file, tmp_path / "wh", settings=settings) as srv:
        for _ in range(3):
            with pytest.raises(TTransportException) as err:
                hive.connect("127.0.0.1", srv.port, username="wendy", password="x", auth="CUSTOM")
            assert "authentication failed for user 'wendy'" in str(err.value)
        # Locked out, the right password too; another user is not.
        with pytest.raises(TTransportException) as err:
            connect(srv, "wendy")
        assert re.search(
            r"too many failed logins for user 'wendy' from 127\.0\.0\.1: try again in \d+ s",
            str(err.value),
        ), str(err.value)
        with connect(srv, "rita") as conn:
            cur = conn.cursor()
            cur.execute("SELECT current_user()")
            assert cur.fetchall() == [("rita",)]
    lines = [r.getMessage() for r in caplog.records if r.name == "hudilite.thriftserver.audit"]
    pattern = (
        r"failed login for user 'wendy' from 127\.0\.0\.1:\d+: wrong user or password "
        r"\({n} within 30 s\)"
    )
    assert len(lines) == 4, lines
    for n, line in enumerate(lines[:3], start=1):
        assert re.fullmatch(pattern.format(n=n), line), line
    assert re.fullmatch(
        r"failed login for user 'wendy' from 127\.0\.0\.1:\d+: locked out "
        r"\(3 failed logins within 30 s\)",
        lines[3],
    ), lines[3]


def test_connection_and_result_caps(spark: Any, users_file: Path, tmp_path: Path) -> None:
    settings = {
        "hudilite.thriftserver.max.connections": "2",
        "hudilite.thriftserver.max.result.rows": "5",
    }
    with password_server(spark, users_file, tmp_path / "wh", settings=settings) as srv:
        idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(2)]
        deadline = time.monotonic() + 10
        while len(srv._connections) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(srv._connections) == 2
        # A third connection is closed at once (the client sees the end of the stream).
        with pytest.raises(TTransportException):
            connect(srv, "rita")
        for sock in idle:
            sock.close()
        deadline = time.monotonic() + 10
        while srv._connections and time.monotonic() < deadline:
            time.sleep(0.02)
        with connect(srv, "rita") as conn:
            cur = conn.cursor()
            cur.execute("SELECT id FROM range(5)")
            assert cur.fetchall() == [(0,), (1,), (2,), (3,), (4,)]
            cur.execute("SELECT id FROM range(12)")
            with pytest.raises(hive_exc.OperationalError) as err:
                cur.fetchall()
            status = err.value.args[0].status
            assert (status.sqlState, status.errorMessage) == (
                "HY000",
                "the result has more than 5 rows, the server's limit "
                "(hudilite.thriftserver.max.result.rows): add a LIMIT or a narrower WHERE",
            )


def test_http_body_limit_applies_before_authentication(
    spark: Any, users_file: Path, tmp_path: Path
) -> None:
    settings = {"hudilite.thriftserver.login.max.failures": "2"}
    with password_server(
        spark, users_file, tmp_path / "wh", transport_mode="http", settings=settings
    ) as srv:
        for auth in (None, "wendy:wrong"):
            client = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            client.putrequest("POST", "/cliservice")
            client.putheader("Content-Type", "application/x-thrift")
            client.putheader("Content-Length", str(250 * 1024 * 1024))
            if auth is not None:
                token = base64.b64encode(auth.encode()).decode()
                client.putheader("Authorization", f"Basic {token}")
            client.endheaders()
            client.send(b"\0" * 1024)  # 1 KiB of the announced 250 MB, then nothing
            started = time.monotonic()
            reply = client.getresponse()
            assert reply.status == 401
            assert reply.getheader("Connection") == "close"
            text = reply.read().decode()
            expected = (
                "authentication required: send the user name and password (Authorization: Basic)"
                if auth is None
                else "authentication failed for user 'wendy'"
            )
            assert text == f"HTTP 401: {expected}\n"
            assert time.monotonic() - started < 5
            client.close()
        # Logins are throttled over HTTP too: wendy failed once above, once more locks her
        # out (her right password included), small bodies are read to answer the call.
        for password, expected in (
            ("wrong", "authentication failed for user 'wendy'"),
            (USERS["wendy"][0], "too many failed logins for user 'wendy' from 127.0.0.1"),
        ):
            token = base64.b64encode(f"wendy:{password}".encode()).decode()
            client = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            client.request("POST", "/cliservice", b"x", {"Authorization": f"Basic {token}"})
            reply = client.getresponse()
            assert reply.status == 401
            assert reply.read().decode().startswith(f"HTTP 401: {expected}")
            client.close()
        # A signed-in client still works over HTTP.
        conn = hive.connect(
            "127.0.0.1",
            srv.port,
            scheme="http",
            username="rita",
            password=USERS["rita"][0],
            auth="BASIC",
        )
        cur = conn.cursor()
        cur.execute("SELECT current_user()")
        assert cur.fetchall() == [("rita",)]
        conn.close()
