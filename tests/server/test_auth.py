"""Users file, roles and the server side of SASL PLAIN, without Spark: the transport is
checked against thrift_sasl's client (the one PyHive uses) over a real socket pair."""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import thrift_sasl
from pyhive.sasl_compat import PureSASLClient
from thrift.transport import TSocket
from thrift.transport.TTransport import TTransportException

from hudilite.errors import HudiliteError
from hudilite.sqlext.statements import parse_statement
from hudilite.thriftserver.sasl_transport import SaslAuthError, SaslServerTransport
from hudilite.thriftserver.users import PermissionDenied, UserStore, check_allowed, statement_kind


def test_users_file_keeps_salted_hashes_only(tmp_path: Path) -> None:
    store = UserStore(tmp_path / "users.json")
    store.add("alice", "s3cret", "admin")
    store.add("bob", "s3cret", "reader")
    text = (tmp_path / "users.json").read_text()
    assert "s3cret" not in text
    entries = json.loads(text)["users"]
    assert entries["alice"]["salt"] != entries["bob"]["salt"]
    assert entries["alice"]["hash"] != entries["bob"]["hash"]
    assert entries["alice"]["kdf"] == "scrypt"
    assert (tmp_path / "users.json").stat().st_mode & 0o077 == 0
    assert store.verify("alice", "s3cret") is not None
    assert store.verify("alice", "s3cret").role == "admin"  # type: ignore[union-attr]
    assert store.verify("alice", "wrong") is None
    assert store.verify("nobody", "s3cret") is None
    assert [(u.name, u.role) for u in store.list()] == [("alice", "admin"), ("bob", "reader")]
    store.add("bob", "new", "writer")
    assert store.verify("bob", "s3cret") is None
    assert store.verify("bob", "new").role == "writer"  # type: ignore[union-attr]
    store.remove("bob")
    assert [u.name for u in store.list()] == ["alice"]
    with pytest.raises(HudiliteError, match="no user 'bob'"):
        store.remove("bob")
    with pytest.raises(HudiliteError, match="unknown role 'root'"):
        store.add("carol", "pw", "root")


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT * FROM t", "query"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "query"),
        ("SHOW TABLES", "query"),
        ("DESCRIBE t", "query"),
        ("EXPLAIN SELECT 1", "query"),
        ("SHOW FUNCTIONS", "query"),
        ("USE db", "session setting"),
        ("SET a.b = 1", "session setting"),
        ("INSERT INTO t VALUES (1)", "write"),
        ("UPDATE t SET a = 1", "write"),
        ("DELETE FROM t WHERE a = 1", "write"),
        ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "write"),
        ("CREATE TABLE t (a INT) USING hudi", "DDL"),
        ("DROP TABLE t", "DDL"),
        ("ALTER TABLE t ADD COLUMNS (b INT)", "DDL"),
        ("TRUNCATE TABLE t", "DDL"),
        ("CACHE TABLE x AS SELECT 1", "DDL"),
        ("CALL show_commits(table => 't')", "read-only CALL"),
        ("CALL system.help()", "read-only CALL"),
        ("CALL run_clean(table => 't')", "CALL"),
        ("CALL show_invalid_parquet(path => '/t')", "CALL"),  # may delete what it finds
        ("CALL no_such_procedure()", "CALL"),
        ("CREATE OR REPLACE VIEW v AS SELECT 1 AS a", "DDL"),
        ("DROP VIEW IF EXISTS v", "DDL"),
        ("SHOW VIEWS", "query"),
    ],
)
def test_statement_kinds(sql: str, kind: str) -> None:
    assert statement_kind(parse_statement(sql)) == kind


def test_roles_nest() -> None:
    insert = parse_statement("INSERT INTO t VALUES (1)")
    check_allowed("writer", insert)
    check_allowed("admin", insert)
    with pytest.raises(PermissionDenied) as err:
        check_allowed("reader", insert)
    assert str(err.value) == (
        "permission denied: role 'reader' may not run write statements (InsertInto); "
        "it needs role 'writer'"
    )
    check_allowed("reader", parse_statement("SELECT 1"))


def _serve_one(sock: socket.socket, accept: dict[str, str], out: dict[str, object]) -> None:
    trans = TSocket.TSocket()
    trans.setHandle(sock)
    server = SaslServerTransport(trans)
    try:
        out["user"] = server.negotiate(lambda u, p: u if accept.get(u) == p else None)
        out["data"] = server.read(100)
        server.write(b"pong:" + bytes(out["data"]))  # type: ignore[arg-type]
        server.flush()
    except SaslAuthError as exc:
        out["error"] = str(exc)
    finally:
        server.close()


def _client(sock: socket.socket, user: str, password: str) -> thrift_sasl.TSaslClientTransport:
    trans = TSocket.TSocket()
    trans.setHandle(sock)
    return thrift_sasl.TSaslClientTransport(
        lambda: PureSASLClient("localhost", username=user, password=password),
        "PLAIN",
        trans,
    )


def test_sasl_plain_against_thrift_sasl_client() -> None:
    a, b = socket.socketpair()
    out: dict[str, object] = {}
    t = threading.Thread(target=_serve_one, args=(a, {"alice": "pw"}, out))
    t.start()
    client = _client(b, "alice", "pw")
    client.open()
    client.write(b"ping")
    client.flush()
    assert client.read(9) == b"pong:ping"
    t.join(10)
    assert (out["user"], out["data"]) == ("alice", b"ping")


def test_sasl_refuses_a_wrong_password_and_bad_frames() -> None:
    a, b = socket.socketpair()
    out: dict[str, object] = {}
    t = threading.Thread(target=_serve_one, args=(a, {"alice": "pw"}, out))
    t.start()
    with pytest.raises(TTransportException, match="authentication failed for user 'alice'"):
        _client(b, "alice", "nope").open()
    t.join(10)
    assert out["error"] == "authentication failed for user 'alice'"
    # Another mechanism, then a non-SASL first message.
    for first, expected in (
        (struct.pack(">BI", 1, 6) + b"GSSAPI", "unsupported SASL mechanism 'GSSAPI'"),
        (b"\x80" + struct.pack(">I", 4) + b"abcd", "expected a SASL START message, got status 128"),
        (struct.pack(">BI", 1, 2**31), "SASL message of 2147483648 bytes is too long"),
    ):
        a, b = socket.socketpair()
        out = {}
        t = threading.Thread(target=_serve_one, args=(a, {}, out))
        t.start()
        b.sendall(first)
        status = b.recv(1)
        t.join(10)
        assert status in (b"\x03", b"\x04")
        assert str(out["error"]).startswith(expected)
        b.close()


def test_users_add_writes_atomically_0600_and_refuses_symlinks(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hudilite.cli.server_commands import users

    runner = CliRunner()
    path = tmp_path / "users.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    # A planted users.json.tmp (a symlink to the victim, or a world-writable file) is never
    # written to: the temporary file has a fresh random name, created exclusively.
    (tmp_path / "users.json.tmp").symlink_to(victim)
    old_umask = os.umask(0)
    try:
        done = runner.invoke(
            users,
            ["add", "--file", str(path), "--role", "reader", "--password-stdin", "bob"],
            input="pw\n",
        )
    finally:
        os.umask(old_umask)
    assert done.exit_code == 0, done.output
    assert victim.read_text() == "untouched\n"
    assert not path.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "users.json",
        "users.json.tmp",
        "victim.txt",
    ]
    assert UserStore(path).verify("bob", "pw") is not None
    # A users file that is a symlink is refused, its target left alone.
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    done = runner.invoke(
        users,
        ["add", "--file", str(link), "--role", "admin", "--password-stdin", "eve"],
        input="pw\n",
    )
    assert done.exit_code == 1
    assert done.output == (
        f"Error: users file {link} is a symbolic link: give the real file's path\n"
    )
    assert victim.read_text() == "untouched\n"


def test_users_add_with_a_piped_password_points_at_password_stdin(tmp_path: Path) -> None:
    """The real command, its password piped: one line naming --password-stdin, no file."""
    path = tmp_path / "users.json"
    command = [str(Path(sys.executable).parent / "hudilite"), "users", "add", "--file", str(path)]
    done = subprocess.run(
        [*command, "--role", "reader", "bob"],
        input="pw\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "Error: standard input is not a terminal: to pipe the password, add --password-stdin "
        "(echo PASSWORD | hudilite users add --file FILE --role reader --password-stdin bob)\n"
    )
    assert not path.exists()
    done = subprocess.run(
        [*command, "--role", "reader", "--password-stdin", "bob"],
        input="pw\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout == f"user bob (reader) saved in {path}\n"
    assert UserStore(path).verify("bob", "pw") is not None
