"""HiveServer2's HTTP transport mode (``serve(transport_mode="http")``, ``--transport-mode
http``) against one in-process server (password auth, the three users of conftest): PyHive
over Thrift's ``THttpClient`` (a new HTTP connection for every call, so sessions must
outlive requests), Basic credentials refused with 401, roles, a session used with another
user's credentials, beeline with ``transportMode=http``, and HTTPS with a self-signed
certificate. Header and option parsing are checked without Spark."""

from __future__ import annotations

import base64
import http.client
import os
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest
from click.testing import CliRunner
from pyhive import exc as hive_exc
from pyhive import hive
from TCLIService import TCLIService
from TCLIService import ttypes as tt
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport.THttpClient import THttpClient

from hudilite.cli.server_commands import thriftserver
from hudilite.thriftserver import Server, serve
from hudilite.thriftserver.http_transport import (
    CredentialCache,
    check_transport_mode,
    normalize_http_path,
    parse_basic,
)
from tests.helpers import FAST_JVM_OPTIONS
from tests.server.clients import SESSION_OPTIONS, USERS
from tests.server.conftest import password_server

spark_test = pytest.mark.spark
SPARK_HOME = Path(pyspark.__file__).parent
BEELINE = SPARK_HOME / "bin" / "beeline"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# ---------------------------------------------------------------------- without Spark
def test_basic_header_and_options() -> None:
    assert parse_basic(None) is None
    assert parse_basic("  ") is None
    assert parse_basic(_basic("alice", "pw:with:colons")) == ("alice", "pw:with:colons")
    assert parse_basic("basic " + base64.b64encode("ünï:ç".encode()).decode()) == ("ünï", "ç")
    assert parse_basic(_basic("", "")) == ("", "")
    with pytest.raises(ValueError, match=r"^unsupported authorization scheme 'Negotiate'"):
        parse_basic("Negotiate abc")
    for bad in ("Basic !!!", "Basic " + base64.b64encode(b"no-colon").decode(), "Basic /w=="):
        with pytest.raises(ValueError, match=r"^malformed Basic credentials"):
            parse_basic(bad)
    assert normalize_http_path("cliservice") == "/cliservice"
    assert normalize_http_path("/a/b/") == "/a/b"
    for bad in ("", "/", "a b", "x?y"):
        with pytest.raises(ValueError, match=r"^bad HTTP path"):
            normalize_http_path(bad)
    assert check_transport_mode("HTTP") == "http"
    with pytest.raises(ValueError) as err:
        check_transport_mode("tcp")
    assert str(err.value) == "unknown transport mode 'tcp'; expected binary or http"


def test_credential_cache() -> None:
    calls: list[tuple[str, str]] = []
    version = [1]

    def check(user: str, password: str, peer: str) -> str | None:
        calls.append((user, password))
        return user if password == "pw" else None

    cache = CredentialCache(check, lambda: version[0], ttl=60)
    assert [cache("alice", "pw") for _ in range(3)] == ["alice"] * 3
    assert calls == [("alice", "pw")]  # checked once
    assert cache("alice", "nope") is None
    assert cache("alice", "nope") is None
    assert len(calls) == 3  # refusals are checked every time
    version[0] = 2  # the users file changed: checked again
    assert cache("alice", "pw") == "alice"
    assert len(calls) == 4
    expired = CredentialCache(check, lambda: 1, ttl=0)
    expired("bob", "pw")
    expired("bob", "pw")
    assert calls[-2:] == [("bob", "pw"), ("bob", "pw")]


def test_bad_transport_options_fail_before_spark_starts(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    with pytest.raises(ValueError, match=r"^unknown transport mode 'tcp'; expected binary or"):
        serve(wh, transport_mode="tcp")
    with pytest.raises(ValueError, match=r"^unknown transport mode 'tcp'"):
        serve(wh, conf={"hive.server2.transport.mode": "tcp"})
    with pytest.raises(ValueError) as err:
        serve(wh, transport_mode="binary", conf={"hive.server2.transport.mode": "http"})
    assert str(err.value) == (
        "transport_mode='binary' and conf hive.server2.transport.mode='http' disagree"
    )
    with pytest.raises(
        ValueError, match=r"^an HTTP path \('/cliservice'\) needs transport mode http, not binary$"
    ):
        serve(wh, http_path="cliservice")
    with pytest.raises(ValueError, match=r"^unknown transport mode 'tcp'"):
        serve(wh, transport_mode="tcp", conf={"hive.server2.transport.mode": "tcp"})
    with pytest.raises(ValueError, match=r"^bad HTTP path 'a b'"):
        serve(wh, transport_mode="http", http_path="a b")
    runner = CliRunner()
    args = ["--warehouse", str(wh), "--port", "0"]
    result = runner.invoke(thriftserver, [*args, "--transport-mode", "tcp"])
    assert result.exit_code == 2
    assert "Invalid value for '--transport-mode': 'tcp' is not one of" in result.output
    result = runner.invoke(thriftserver, [*args, "--http-path", "x"])
    assert result.exit_code == 2
    assert "--http-path needs --transport-mode http" in result.output
    result = runner.invoke(thriftserver, [*args, "--conf", "hive.server2.transport.mode=tcp"])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: unknown transport mode 'tcp'; expected binary or http"
    assert not wh.exists()


# ---------------------------------------------------------------------- one server
@pytest.fixture(scope="module")
def http_server(
    spark: Any, users_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The server in HTTP mode, password auth, on a free port."""
    warehouse = tmp_path_factory.mktemp("thrift-http-warehouse")
    with password_server(spark, users_file, warehouse, transport_mode="http") as srv:
        yield srv


def http_connect(server: Server, user: str = "alice", password: str | None = None) -> Any:
    """PyHive over HTTP, with its own http support (``scheme="http"``: a Basic header)."""
    return hive.connect(
        "127.0.0.1",
        server.port,
        scheme="http",
        username=user,
        password=USERS[user][0] if password is None else password,
        auth="BASIC",
    )


def raw_client(server: Server, user: str | None) -> tuple[THttpClient, TCLIService.Client]:
    """A bare TCLIService client over HTTP as ``user`` (None: no credentials)."""
    transport = THttpClient(f"http://127.0.0.1:{server.port}/cliservice")
    if user is not None:
        transport.setCustomHeaders({"Authorization": _basic(user, USERS[user][0])})
    return transport, TCLIService.Client(TBinaryProtocol(transport))


def _status(err: hive_exc.OperationalError) -> tt.TStatus:
    return err.args[0].status


@spark_test
def test_pyhive_over_http(http_server: Server) -> None:
    assert repr(http_server).endswith("transport_mode='http', http_path='/cliservice')")
    before = len(http_server.registry.sessions())
    with http_connect(http_server) as conn:
        # THttpClient opens a new HTTP connection for every call: the session (and USE,
        # which PyHive ran at connect) lives on in the server between them.
        assert len(http_server.registry.sessions()) == before + 1
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE ht (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )
        cur.execute("INSERT INTO ht VALUES (1, 'a'), (2, 'b')")
        cur.execute("SELECT id, v FROM ht ORDER BY id")
        assert cur.fetchall() == [(1, "a"), (2, "b")]
        cur.execute("SELECT id FROM range(10)", async_=True)  # runAsync, polled over HTTP
        while cur.poll().operationState in (
            tt.TOperationState.PENDING_STATE,
            tt.TOperationState.RUNNING_STATE,
        ):
            time.sleep(0.05)
        assert cur.fetchall() == [(i,) for i in range(10)]
    # CloseSession closed it; nothing else did (no connection end closes sessions here).
    assert len(http_server.registry.sessions()) == before


@spark_test
def test_credentials_are_checked_on_every_request(http_server: Server) -> None:
    # PyHive's THttpClient ignores the HTTP status and reads the body: the server's 401
    # carries a Thrift exception, so the user sees why.
    with pytest.raises(TApplicationException) as err:
        http_connect(http_server, password="wrong")
    assert str(err.value) == "HTTP 401: authentication failed for user 'alice'"
    with pytest.raises(TApplicationException) as err:
        http_connect(http_server, user="nobody", password="x")
    assert str(err.value) == "HTTP 401: authentication failed for user 'nobody'"
    transport, client = raw_client(http_server, None)
    with pytest.raises(TApplicationException) as err:
        client.OpenSession(tt.TOpenSessionReq(client_protocol=9, username="alice"))
    assert str(err.value) == (
        "HTTP 401: authentication required: send the user name and password (Authorization: Basic)"
    )
    assert transport.code == 401
    assert transport.headers["WWW-Authenticate"] == 'Basic realm="hudilite"'
    # What a plain HTTP client sees: 401 with the challenge, 404 elsewhere, 400 for junk.
    web = http.client.HTTPConnection("127.0.0.1", http_server.port, timeout=10)
    web.request("POST", "/cliservice", body=b"hello", headers={"Authorization": "Bearer x"})
    resp = web.getresponse()
    assert (resp.status, resp.getheader("WWW-Authenticate")) == (401, 'Basic realm="hudilite"')
    assert (
        resp.read()
        == b"HTTP 401: unsupported authorization scheme 'Bearer': this server takes Basic\n"
    )
    web.request("POST", "/other", body=b"x", headers={"Authorization": _basic("alice", "alice-pw")})
    resp = web.getresponse()
    assert (resp.status, resp.read()) == (404, b"HTTP 404: no Thrift service at /other\n")
    web.request(
        "POST",
        "/cliservice",
        body=b"not thrift",
        headers={"Authorization": _basic("alice", "alice-pw")},
    )
    resp = web.getresponse()
    assert resp.status == 400
    assert resp.read().startswith(b"HTTP 400: not a TCLIService call")
    web.close()


@spark_test
def test_reader_role_over_http(http_server: Server) -> None:
    with http_connect(http_server, "rita") as conn:
        cur = conn.cursor()
        cur.execute("SELECT id FROM range(3)")
        assert cur.fetchall() == [(0,), (1,), (2,)]
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("INSERT INTO roles_http VALUES (1)")
        assert _status(err.value).sqlState == "42501"
        assert _status(err.value).errorMessage == (
            "permission denied: role 'reader' may not run write statements (InsertInto); "
            "it needs role 'writer'"
        )


@spark_test
def test_a_session_belongs_to_its_user(http_server: Server) -> None:
    with http_connect(http_server, "alice") as conn:
        cur = conn.cursor()
        cur.execute("SELECT id FROM range(5)")
        handle = cur._operationHandle
        _, wendy = raw_client(http_server, "wendy")
        # wendy authenticates fine but may not use alice's session or operation.
        resp = wendy.ExecuteStatement(
            tt.TExecuteStatementReq(sessionHandle=conn.sessionHandle, statement="SELECT 1")
        )
        assert resp.status.statusCode == tt.TStatusCode.ERROR_STATUS
        assert resp.status.sqlState == "42501"
        assert resp.status.errorMessage.startswith("session ")
        assert resp.status.errorMessage.endswith(
            " belongs to another user: user 'wendy' may not use it"
        )
        fetch = wendy.FetchResults(
            tt.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10)
        )
        assert fetch.status.sqlState == "42501"
        assert fetch.status.errorMessage.startswith("operation ")
        closed = wendy.CloseSession(tt.TCloseSessionReq(sessionHandle=conn.sessionHandle))
        assert closed.status.sqlState == "42501"
        # alice's session and result are intact.
        assert cur.fetchall() == [(i,) for i in range(5)]
        _, alice = raw_client(http_server, "alice")
        resp = alice.ExecuteStatement(
            tt.TExecuteStatementReq(sessionHandle=conn.sessionHandle, statement="SELECT 1")
        )
        assert resp.status.statusCode == tt.TStatusCode.SUCCESS_STATUS


@spark_test
@pytest.mark.skipif(not BEELINE.exists(), reason="the pyspark wheel ships no beeline")
def test_beeline_over_http(http_server: Server) -> None:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_BEELINE_OPTS": FAST_JVM_OPTIONS}
    # One beeline (one JVM start): each statement is its own HTTP request; the Hive
    # variable set by the first is the session's for the second.
    done = subprocess.run(
        [
            str(BEELINE),
            "-u",
            f"jdbc:hive2://127.0.0.1:{http_server.port}/default;"
            "transportMode=http;httpPath=cliservice",
            "-n",
            "wendy",
            "-p",
            USERS["wendy"][0],
            "--silent=true",
            "--outputformat=csv2",
            "-e",
            "SET hivevar:lo=1; SELECT id, id * 10 AS tens FROM range(3) WHERE id >= ${lo}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("id,tens")
    assert lines[start : start + 3] == ["id,tens", "1,10", "2,20"]


# ---------------------------------------------------------------------- HTTPS
@spark_test
def test_https(
    spark: Any,
    users_file: Path,
    tls_files: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    cert, key = tls_files
    with serve(
        tmp_path / "wh",
        port=0,
        auth="password",
        users_file=users_file,
        conf={
            **SESSION_OPTIONS,
            "hive.server2.transport.mode": "http",
            "hudilite.thriftserver.idle.session.timeout": "2",
        },
        spark=spark,
        ssl_cert=cert,
        ssl_key=key,
        http_path="/sql/",
    ) as srv:
        assert repr(srv).endswith("http_path='/sql', tls=True)")
        context = ssl.create_default_context(cafile=str(cert))  # checks the host name too
        transport = THttpClient(f"https://127.0.0.1:{srv.port}/sql", ssl_context=context)
        transport.setCustomHeaders({"Authorization": _basic("alice", USERS["alice"][0])})
        conn = hive.connect(thrift_transport=transport, username="alice")
        cur = conn.cursor()
        cur.execute("SELECT id, id * 10 AS tens FROM range(3)")
        assert cur.fetchall() == [(0, 0), (1, 10), (2, 20)]
        # Plain HTTP to the HTTPS port gets no answer; the server serves on.
        plain = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            plain.request("POST", "/sql", body=b"x")
            plain.getresponse()
        cur.execute("SELECT 42 AS answer")
        assert cur.fetchall() == [(42,)]
        # Left open, the session ends with the idle-session timeout (2 s), not before.
        assert len(srv.registry.sessions()) == 1
        deadline = time.monotonic() + 30
        while srv.registry.sessions() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert srv.registry.sessions() == []
        with pytest.raises(hive_exc.OperationalError) as err:
            conn.cursor().execute("SELECT 1")
        assert "no such open session" in _status(err.value).errorMessage
        hive.connect(thrift_transport=transport, username="alice")
        assert len(srv.registry.sessions()) == 1
    # stop() closed the session that was still open, and the port.
    assert srv.registry.sessions() == []
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5).connect()
