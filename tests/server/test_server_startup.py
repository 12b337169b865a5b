"""``hudilite thriftserver`` start-up as a real process: a busy port is reported before Spark
starts (issue 27.7), in one line naming ``host:port``."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

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
