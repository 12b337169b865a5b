"""Errors as a JDBC client sees them: beeline (the Hive 2.3 JDBC driver shipped in the pyspark
wheel) against an in-process server, one statement per error class the server returns.

Beeline runs statements asynchronously: a statement refused before it runs (a syntax error,
a role or sandbox refusal) is answered by ``ExecuteStatement`` itself, whose ``TStatus`` the
driver turns into an exception through its ``infoMessages`` (an empty list made it throw
``IndexOutOfBoundsException`` with SQLSTATE 08S01); a statement failing while it runs
(missing table, lock conflict, timeout) is reported by ``GetOperationStatus``. Both must
print the server's message and SQLSTATE.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pyspark
import pytest
from TCLIService import ttypes as tt

from hudilite.storage.fs import FileSystemGateway
from hudilite.thriftserver.errors import error_status
from hudilite.thriftserver.users import PermissionDenied
from hudilite.write.lock import table_lock
from tests.helpers import FAST_JVM_OPTIONS
from tests.server.clients import USERS, connect
from tests.server.conftest import password_server

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).parent
BEELINE = SPARK_HOME / "bin" / "beeline"

SLEEPY = (
    "SELECT count(*) FROM range(0, 1, 1, 1) "
    "WHERE java_method('java.lang.Thread', 'sleep', 60000L) IS NULL"
)


def _beeline(
    port: int, user: str, statements: list[str], script: Path, settings: str = ""
) -> list[str]:
    """Run ``statements`` through beeline as ``user`` from the file ``script`` (``--force``
    goes on after an error only in a file, not with ``-e``); the error lines it prints, in
    order. ``settings``: the URL's ``?k=v;...`` (sent as ``set:hiveconf:`` at OpenSession)."""
    script.write_text("".join(f"{sql};\n" for sql in statements))
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_BEELINE_OPTS": FAST_JVM_OPTIONS}
    done = subprocess.run(
        [
            str(BEELINE),
            *("-u", f"jdbc:hive2://127.0.0.1:{port}/default{settings}"),
            *("-n", user, "-p", USERS[user][0]),
            "--silent=true",
            "--force=true",
            "--outputformat=csv2",
            *("-f", str(script)),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    return errors


def test_info_messages_parse_as_the_hive_driver_reads_them() -> None:
    """The fields the Hive JDBC driver reads (``HiveSQLException(TStatus)`` then ``toCause``):
    a first line ``*<class>:<message>:<frames>:<last frame index>`` and no frame lines for
    a count of 0 and an index of -1."""
    status = error_status(PermissionDenied("permission denied: no: really"))
    assert status.statusCode == tt.TStatusCode.ERROR_STATUS
    assert (status.sqlState, status.errorCode) == ("42501", 0)
    assert status.errorMessage == "permission denied: no: really"
    assert status.infoMessages == [
        "*org.apache.hive.service.cli.HiveSQLException:permission denied: no: really:0:-1"
    ]
    first = status.infoMessages[0]
    # The driver's own parse: class up to the first colon, message up to the last two.
    i1, i3 = first.index(":"), first.rindex(":")
    i2 = first[:i3].rindex(":")
    assert first[1:i1] == "org.apache.hive.service.cli.HiveSQLException"
    assert first[i1 + 1 : i2] == status.errorMessage
    assert (int(first[i2 + 1 : i3]), int(first[i3 + 1 :])) == (0, -1)


@pytest.mark.skipif(not BEELINE.exists(), reason="the pyspark wheel ships no beeline")
def test_beeline_prints_every_error_class(spark: Any, users_file: Path, tmp_path: Path) -> None:
    settings = {"hudilite.thriftserver.query.timeout": "8"}
    warehouse = tmp_path / "wh"
    # SET answers with a DataFrame made in Python: its first one starts a Python worker,
    # which on a loaded machine takes longer than the timeout below. Start it now.
    spark.createDataFrame([("k", "v")], "key string, value string").collect()
    with password_server(spark, users_file, warehouse, settings=settings) as srv:
        with connect(srv) as conn:
            conn.cursor().execute(
                "CREATE TABLE je (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
            )
        reader = _beeline(
            srv.port,
            "rita",
            [
                "SELEC * FROM je",
                "INSERT INTO je VALUES (1, 'a')",
                "SELECT * FROM je_missing",
                "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
            ],
            tmp_path / "reader.sql",
        )
        assert reader == [
            "Error: SQL parse error at line 1, column 1: Syntax error at or near 'SELEC' "
            "(state=42000,code=0)",
            "Error: permission denied: role 'reader' may not run write statements "
            "(InsertInto); it needs role 'writer' (state=42501,code=0)",
            "Error: table or view default.je_missing not found (state=42S02,code=0)",
            "Error: permission denied: reflect() (Java reflection) is not allowed on this "
            "server (state=42501,code=0)",
        ]
        # The table's lock held by another writer of the server process, while a write
        # waits at most 0.5 s for it, once; then a statement past the server's 8 s timeout.
        gw = FileSystemGateway(str(warehouse / "default.db" / "je"))
        with table_lock(gw):
            admin = _beeline(
                srv.port,
                "alice",
                [
                    "SET hoodie.write.lock.wait_time_ms=500",
                    "INSERT INTO je VALUES (1, 'a')",
                    SLEEPY,
                ],
                tmp_path / "admin.sql",
            )
    assert len(admin) == 2, admin
    assert re.fullmatch(
        r"Error: table file:\S+/default\.db/je is locked by .+; gave up after waiting 0\.\d s "
        r"\(held in this process; see hoodie\.write\.lock\.wait_time_ms\) "
        r"\(state=40001,code=0\)",
        admin[0],
    ), admin[0]
    assert admin[1] == (
        "Error: the statement timed out after 8 s and was cancelled (state=HYT00,code=0)"
    )
