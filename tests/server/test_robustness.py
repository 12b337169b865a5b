"""The Thrift server under stress: cancel, disconnects, garbage bytes, a large result fetched
in batches, NOSASL and idle timeouts, a stop while a statement runs."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from TCLIService import ttypes as tt

import hudilite
from hudilite.thriftserver import Server, serve
from tests.server.clients import USERS, connect
from tests.server.conftest import password_server

pytestmark = pytest.mark.spark

RUNNING = (tt.TOperationState.PENDING_STATE, tt.TOperationState.RUNNING_STATE)
#: Two tasks (one per core of the test session) that sleep two minutes each unless their job
#: is cancelled: Thread.sleep ends at once on the task kill's interrupt.
SLOW_QUERY = (
    "SELECT count(*) FROM range(0, 2, 1, 2) "
    "WHERE java_method('java.lang.Thread', 'sleep', 120000L) IS NULL"
)


def _eventually(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_cancel_stops_a_long_query(server: Server, spark: Any) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute(SLOW_QUERY, async_=True)
        tracker = spark.sparkContext.statusTracker()
        _eventually(lambda: cur.poll().operationState == tt.TOperationState.RUNNING_STATE)
        _eventually(lambda: len(tracker.getActiveJobsIds()) > 0)
        cur.cancel()
        assert cur.poll().operationState == tt.TOperationState.CANCELED_STATE
        _eventually(lambda: not tracker.getActiveJobsIds())
        # The session still works, and the cancelled tasks freed the cores at once (they
        # would sleep two minutes otherwise).
        started = time.monotonic()
        cur.execute("SELECT 42")
        assert cur.fetchall() == [(42,)]
        assert time.monotonic() - started < 60


def test_disconnect_mid_fetch_frees_session_and_operation(server: Server) -> None:
    before_ops, before_sessions = server.registry.operation_count(), len(server.registry.sessions())
    conn = connect(server)
    cur = conn.cursor()
    cur.arraysize = 100
    cur.execute("SELECT id FROM range(100000)")
    assert cur.fetchmany(5) == [(0,), (1,), (2,), (3,), (4,)]
    assert server.registry.operation_count() == before_ops + 1
    # Gone without CloseOperation or CloseSession.
    conn._transport.close()
    _eventually(
        lambda: (
            server.registry.operation_count() == before_ops
            and len(server.registry.sessions()) == before_sessions
        )
    )


def test_disconnect_mid_statement_cancels_it(server: Server, spark: Any) -> None:
    before_ops, before_sessions = server.registry.operation_count(), len(server.registry.sessions())
    conn = connect(server)
    cur = conn.cursor()
    errors: list[BaseException] = []

    def run() -> None:  # a synchronous statement: the client blocks until it ends
        try:
            cur.execute(SLOW_QUERY)
        except Exception as exc:
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    tracker = spark.sparkContext.statusTracker()
    _eventually(lambda: len(tracker.getActiveJobsIds()) > 0)
    conn._transport._trans.handle.shutdown(socket.SHUT_RDWR)  # the client hangs up
    _eventually(lambda: not tracker.getActiveJobsIds())
    _eventually(
        lambda: (
            server.registry.operation_count() == before_ops
            and len(server.registry.sessions()) == before_sessions
        )
    )
    t.join(30)
    assert errors  # the blocked client saw its connection end


def test_garbage_bytes_do_not_hurt_the_server(server: Server) -> None:
    for junk in (
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        struct.pack(">BI", 1, 5) + b"PLAIN" + struct.pack(">BI", 2, 3) + b"a\0b",
        struct.pack(">BI", 1, 2**31),  # a SASL message claiming 2 GiB
        bytes(range(256)) * 8,
    ):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            reply = b""
            # The server may close (even reset) the connection before all of it is read.
            with contextlib.suppress(OSError):
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
            with contextlib.suppress(OSError):
                while chunk := s.recv(4096):
                    reply += chunk
        # At most a SASL refusal (BAD or ERROR), then the connection is closed.
        assert reply == b"" or reply[0] in (3, 4)
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("SELECT 'still up'")
        assert cur.fetchall() == [("still up",)]


def test_large_result_streams_in_batches(server: Server, spark: Any) -> None:
    with connect(server) as conn:
        client = conn.client
        run = client.ExecuteStatement(
            tt.TExecuteStatementReq(
                sessionHandle=conn.sessionHandle,
                statement="SELECT id, CAST(id % 7 AS STRING) AS s FROM range(0, 1000000, 1, 4)",
            )
        )
        assert run.status.statusCode == tt.TStatusCode.SUCCESS_STATUS
        total, id_sum, batches, offsets = 0, 0, 0, []
        while True:
            resp = client.FetchResults(
                tt.TFetchResultsReq(
                    operationHandle=run.operationHandle, orientation=0, maxRows=20000
                )
            )
            ids = resp.results.columns[0].i64Val.values
            strs = resp.results.columns[1].stringVal.values
            if not ids:
                break
            assert len(ids) <= 20000 and len(strs) == len(ids)
            assert strs[0] == str(ids[0] % 7)
            offsets.append(resp.results.startRowOffset)
            batches += 1
            total += len(ids)
            id_sum += sum(ids)
        assert (total, id_sum, batches) == (1_000_000, sum(range(1_000_000)), 50)
        assert offsets == list(range(0, 1_000_000, 20000))
        # Every partition's job ran in the operation's job group (CancelOperation reaches it).
        group = f"hudilite-thrift-{uuid.UUID(bytes=run.operationHandle.operationId.guid)}"
        assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(group)) == 4
        # FETCH_FIRST starts over.
        first = client.FetchResults(
            tt.TFetchResultsReq(operationHandle=run.operationHandle, orientation=4, maxRows=3)
        )
        assert first.results.columns[0].i64Val.values == [0, 1, 2]


def test_nosasl_and_idle_timeouts(spark: Any, tmp_path: Any) -> None:
    conf = {
        "hudilite.thriftserver.idle.session.timeout": "1",
        "hudilite.thriftserver.idle.operation.timeout": "0.5",
    }
    with serve(tmp_path / "wh", port=0, auth="nosasl", conf=conf, spark=spark) as srv:
        conn = hive.connect("127.0.0.1", srv.port, username="bob", auth="NOSASL")
        cur = conn.cursor()
        cur.execute("SELECT 1 AS one")
        assert cur.fetchall() == [(1,)]
        cur.execute("SELECT 2")  # finished, never fetched: the operation times out first
        _eventually(lambda: srv.registry.operation_count() == 0, timeout=10)
        _eventually(lambda: not srv.registry.sessions(), timeout=10)
        with pytest.raises(hive_exc.OperationalError) as err:
            conn.cursor().execute("SELECT 3")
        assert err.value.args[0].status.errorMessage.startswith("invalid session handle")
        conn._transport.close()  # CloseSession would fail too: the session is gone


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_stop_serves_the_running_statement_through_the_grace(
    spark: Any, users_file: Path, tmp_path: Path, transport: str
) -> None:
    """A stop waits for the running INSERT while its client polls it (a poll used to end the
    connection, which closed the session and cancelled the write the grace was for; over
    HTTP, where every call is a new connection, polls were refused); new sessions and
    statements are refused meanwhile; the client sees the write finish, and it commits."""
    with password_server(spark, users_file, tmp_path / "wh", transport_mode=transport) as srv:
        if transport == "http":
            conn = hive.connect(
                "127.0.0.1",
                srv.port,
                scheme="http",
                username="alice",
                password=USERS["alice"][0],
                auth="BASIC",
            )
        else:
            conn = connect(srv)
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE g (id BIGINT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )
        # Each of the two source tasks sleeps 3 s: the INSERT runs through what follows.
        cur.execute(
            "INSERT INTO g SELECT id, CAST(id AS STRING) AS v FROM range(0, 2, 1, 2) "
            "WHERE java_method('java.lang.Thread', 'sleep', 3000L) IS NOT NULL",
            async_=True,
        )
        _eventually(lambda: cur.poll().operationState == tt.TOperationState.RUNNING_STATE)
        stopper = threading.Thread(target=srv.stop, kwargs={"grace": 120})
        stopper.start()
        _eventually(lambda: srv.registry.stopping)
        assert cur.poll().operationState == tt.TOperationState.RUNNING_STATE
        with pytest.raises(hive_exc.OperationalError) as err:
            conn.cursor().execute("SELECT 1")
        status = err.value.args[0].status
        assert (status.errorMessage, status.sqlState) == (
            "the server is shutting down: no new statements",
            "08004",
        )
        opened = conn.client.OpenSession(tt.TOpenSessionReq(client_protocol=9, username="alice"))
        assert (opened.status.errorMessage, opened.status.sqlState) == (
            "the server is shutting down: no new sessions",
            "08004",
        )
        # Its sessions close soon after the statement ends: the last poll tells the outcome.
        states: list[int] = []
        _eventually(
            lambda: states.append(cur.poll().operationState) or states[-1] not in RUNNING,
            timeout=120,
        )
        assert states[-1] == tt.TOperationState.FINISHED_STATE
        stopper.join(60)
        assert not stopper.is_alive()
    table = hudilite.Table.load(spark, str(tmp_path / "wh" / "default.db" / "g"))
    assert [i.state.name for i in table.timeline()] == ["COMPLETED"]
    assert sorted(r.id for r in table.read().collect()) == [0, 1]
