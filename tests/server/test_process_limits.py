"""``hudilite thriftserver`` as a real process at the edge of its resources: out of file
descriptors (a low ``RLIMIT_NOFILE`` set on the running server) the accept loop goes on and
serves again once connections close; its Spark JVM exits on an out-of-memory error, and
when that JVM dies the process exits non-zero (status 70) so that a supervisor restarts it."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from thrift.transport.TTransport import TTransportException

from hudilite.thriftserver import UserStore
from tests.server.clients import connect

pytestmark = pytest.mark.spark


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _select_one(port: int, deadline: float) -> list[tuple[int]]:
    """``SELECT 1`` as alice, retried until ``deadline`` (the server frees descriptors as
    it notices the closed connections)."""
    while True:
        try:
            with connect(port) as conn:
                cur = conn.cursor()
                cur.execute("SELECT 1")
                return cur.fetchall()
        except (TTransportException, OSError, EOFError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_out_of_descriptors_then_jvm_death(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    UserStore(users).add("alice", "alice-pw", "admin")
    cmd = [
        str(Path(sys.executable).parent / "hudilite"),
        "thriftserver",
        *("--warehouse", str(tmp_path / "wh"), "--port", "0"),
        *("--auth", "password", "--users", str(users)),
        *("--conf", "spark.master=local[1]", "--conf", "spark.sql.shuffle.partitions=1"),
    ]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    assert proc.stderr is not None
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
        assert _select_one(port, time.monotonic() + 60) == [(1,)]
        # Leave the server a few descriptors only (its JVM is another process), then open
        # more idle connections than it can hold.
        in_use = len(os.listdir(f"/proc/{proc.pid}/fd"))
        _soft, hard = resource.prlimit(proc.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (in_use + 6, hard))
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
        time.sleep(2)
        assert proc.poll() is None
        # The connections it could not accept were closed for the clients (not left hanging).
        closed = 0
        for sock in idle:
            sock.settimeout(0.2)
            with contextlib.suppress(TimeoutError, OSError):
                closed += sock.recv(1) == b""
        assert closed >= 20
        for sock in idle:
            sock.close()
        assert _select_one(port, time.monotonic() + 60) == [(1,)]
        # The JVM dies (as under the OOM killer): the server exits 70, at once.
        jvms = [c for c in _children(proc.pid) if "java" in Path(f"/proc/{c}/comm").read_text()]
        assert len(jvms) == 1, jvms
        # An out-of-memory error would end the JVM the same way (not leave it half-working).
        cmdline = Path(f"/proc/{jvms[0]}/cmdline").read_bytes().split(b"\0")
        assert b"-XX:+ExitOnOutOfMemoryError" in cmdline
        os.kill(jvms[0], signal.SIGKILL)
        assert proc.wait(timeout=30) == 70
        log = proc.stderr.read()
        assert "out of file descriptors" in log
        assert (
            "hudilite thriftserver: the Spark JVM exited (code -9); exiting with status 70 so "
            "that a supervisor restarts the server"
        ) in log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
