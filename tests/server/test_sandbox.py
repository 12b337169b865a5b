"""The statement sandbox through a real server and PyHive: what readers, writers and an
untrusted admin may not run (OS commands, Java reflection, paths outside the warehouse,
server-wide and test-only settings), however the construct is hidden (comments, CTEs,
subqueries, EXPLAIN, EXECUTE IMMEDIATE, views), and ``current_user()``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive import exc as hive_exc
from TCLIService import ttypes as tt

from hudilite.thriftserver import Server
from hudilite.thriftserver.sandbox import FAIL_POINTS_ENV
from tests.server.clients import connect
from tests.server.conftest import password_server

pytestmark = pytest.mark.spark

RUNNING = (tt.TOperationState.PENDING_STATE, tt.TOperationState.RUNNING_STATE)
OS_COMMAND = (
    "permission denied: TRANSFORM ... USING 'cat' (an OS command) is not allowed on this server"
)


def _reflection(name: str, view: str | None = None) -> str:
    where = f" (in view {view})" if view else ""
    return f"permission denied: {name}() (Java reflection){where} is not allowed on this server"


def _outside(what: str, warehouse: str, role: str) -> str:
    return (
        f"permission denied: {what} names a path outside the warehouse {warehouse}; role "
        f"{role!r} may read and write paths only inside it"
    )


def _refused(cur: Any, sql: str) -> tuple[str, str]:
    """(SQLSTATE, message) of a statement the server refuses."""
    with pytest.raises(hive_exc.OperationalError) as err:
        cur.execute(sql)
    status = err.value.args[0].status
    return status.sqlState, status.errorMessage


@pytest.fixture(scope="module")
def shared(server: Server) -> Iterator[tuple[Server, str]]:
    """The shared server with a table and views an admin made (alice is trusted there):
    ``sbx_env`` calls ``java_method``, ``sbx_outer`` reads it, ``sbx_ok`` is harmless."""
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE IF NOT EXISTS sbx_t (id INT, v STRING) USING hudi "
            "TBLPROPERTIES (primaryKey = 'id')"
        )
        cur.execute("INSERT INTO sbx_t VALUES (1, 'a'), (2, 'b')")
        cur.execute(
            "CREATE OR REPLACE VIEW sbx_env AS "
            "SELECT java_method('java.lang.System', 'getenv', 'HOME') AS home"
        )
        cur.execute("CREATE OR REPLACE VIEW sbx_outer AS SELECT home FROM sbx_env")
        cur.execute("CREATE OR REPLACE VIEW sbx_ok AS SELECT id FROM sbx_t")
    yield server, server.registry.policy.warehouse


def test_readers_and_writers_get_no_commands_reflection_or_outside_paths(
    shared: tuple[Server, str], users_file: Path
) -> None:
    server, wh = shared
    table = f"{wh}/default.db/sbx_t"
    for user, role in (("rita", "reader"), ("wendy", "writer")):
        with connect(server, user) as conn:
            cur = conn.cursor()
            getenv = "java_method('java.lang.System', 'getenv', 'HOME')"
            cases = {
                "SELECT TRANSFORM(id) USING 'cat' AS (x) FROM sbx_t": OS_COMMAND,
                "FROM sbx_t SELECT TRANSFORM(id, v) USING 'cat'": OS_COMMAND,
                f"SELECT {getenv}": _reflection("java_method"),
                "SELECT reflect('java.lang.System', 'getProperty', 'user.name')": _reflection(
                    "reflect"
                ),
                # Hidden: comments around the call, a back-quoted name, a CTE, a subquery,
                # a set operation, EXPLAIN, an expression of a write.
                "SELECT /* reflect */ 1 AS a, `java_method` /* x */ "
                "('java.lang.System', 'getenv', 'HOME') -- trailing\n": _reflection("java_method"),
                "WITH x AS (SELECT try_reflect('java.lang.System', 'getenv', 'HOME') AS e) "
                "SELECT * FROM x": _reflection("try_reflect"),
                f"SELECT id FROM sbx_t WHERE v IN (SELECT {getenv})": _reflection("java_method"),
                f"SELECT v FROM sbx_t UNION ALL SELECT {getenv}": _reflection("java_method"),
                f"EXPLAIN SELECT {getenv}": _reflection("java_method"),
                "EXPLAIN EXTENDED SELECT TRANSFORM(id) USING 'cat' FROM sbx_t": OS_COMMAND,
                f"INSERT INTO sbx_t SELECT 3, {getenv}": _reflection("java_method"),
                "SELECT IDENTIFIER('java_' || 'method')('java.lang.System', 'getenv', 'HOME')": (
                    "permission denied: IDENTIFIER(...)(...) (a function named at run time) is "
                    "not allowed on this server"
                ),
                "EXECUTE IMMEDIATE 'SELECT ' || 'reflect(1, 2)'": (
                    "permission denied: EXECUTE IMMEDIATE (SQL built at run time) is not "
                    "allowed on this server"
                ),
                # A view an admin made runs with the reader's rights, views over views too.
                "SELECT * FROM sbx_env": _reflection("java_method", "sbx_env"),
                "SELECT home FROM default.sbx_outer": _reflection("java_method", "default.sbx_env"),
                # Paths outside the warehouse (the users file, /etc), however spelled.
                "SELECT * FROM text.`/etc/passwd`": _outside("text.`/etc/passwd`", wh, role),
                f"SELECT * FROM `text`.`file://{users_file}`": _outside(
                    f"text.`file://{users_file}`", wh, role
                ),
                f"SELECT * FROM csv.`{wh}/../{users_file.parent.name}`": _outside(
                    f"csv.`{wh}/../{users_file.parent.name}`", wh, role
                ),
                f"SELECT * FROM parquet.`{wh}/*`": _outside(f"parquet.`{wh}/*`", wh, role),
                "SELECT * FROM hudi_table_changes('/tmp', 'latest_state', 'earliest')": (
                    _outside("hudi_table_changes('/tmp')", wh, role)
                ),
            }
            for sql, message in cases.items():
                assert _refused(cur, sql) == ("42501", message), sql
            # What stays allowed: Spark's transform() of arrays, a harmless view, a table
            # function over a table inside the warehouse (by path and by name).
            cur.execute("SELECT transform(array(1, 2), x -> x * 10) AS a")
            assert cur.fetchall() == [("[10,20]",)]
            cur.execute("SELECT id FROM sbx_ok ORDER BY id")
            assert cur.fetchall()[:2] == [(1,), (2,)]
            for target in (table, "sbx_t"):
                cur.execute(
                    f"SELECT id, v FROM hudi_table_changes('{target}', 'latest_state', "
                    "'earliest') ORDER BY id"
                )
                assert cur.fetchall()[:2] == [(1, "a"), (2, "b")]


def test_settings_stay_in_the_session(shared: tuple[Server, str]) -> None:
    server, _wh = shared
    wide = (
        "permission denied: SET {key} would change a server-wide setting; set it when the "
        "server starts (--conf)"
    )
    with connect(server, "rita") as conn:
        cur = conn.cursor()
        for key in (
            "fs.s3a.endpoint",
            "spark.hadoop.fs.s3a.secret.key",
            "spark.sql.catalog.evil",
            "spark.sql.variable.substitute",
        ):
            assert _refused(cur, f"SET {key}=x") == ("42501", wide.format(key=key)), key
        assert _refused(cur, "SET spark.sql.session.timeZone=PST") == (
            "42501",
            "permission denied: role 'reader' may not set spark.sql.session.timeZone (not a "
            "session setting it may change; see docs/bi-tools.md)",
        )
        cur.execute("SET spark.sql.shuffle.partitions=3")
        cur.execute("SET hoodie.datasource.write.operation=upsert")
        cur.execute("SET spark.sql.shuffle.partitions")
        assert cur.fetchall() == [("spark.sql.shuffle.partitions", "3")]
    with connect(server, "wendy") as conn:
        cur = conn.cursor()
        assert _refused(cur, "SET hudilite.internal.fail.point=kill:before_commit") == (
            "42501",
            "permission denied: hudilite.internal.* settings (fail points) are off on this server",
        )
    # A refused setting in the session's configuration refuses the session.
    with pytest.raises(hive_exc.OperationalError) as err:
        connect(server, "rita", configuration={"set:hiveconf:fs.s3a.endpoint": "http://x"})
    status = err.value.args[0].status
    assert (status.sqlState, status.errorMessage) == (
        "42501",
        wide.format(key="fs.s3a.endpoint"),
    )


def test_current_user_is_the_signed_in_user(shared: tuple[Server, str]) -> None:
    server, _wh = shared
    for user in ("rita", "wendy", "alice"):
        with connect(server, user) as conn:
            cur = conn.cursor()
            cur.execute("SELECT current_user(), session_user(), user()")
            assert cur.fetchall() == [(user, user, user)]
            cur.execute("SELECT current_user() AS u", async_=True)
            while cur.poll().operationState in RUNNING:
                time.sleep(0.02)
            assert cur.fetchall() == [(user,)]


def test_untrusted_admin_and_fail_points(
    spark: Any, users_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("line one\nline two\n")
    untrusted = password_server(spark, users_file, tmp_path / "wh", trusted_admin=False)
    with untrusted as srv, connect(srv) as conn:
        cur = conn.cursor()
        assert _refused(cur, "SELECT TRANSFORM(id) USING 'cat' FROM range(1)") == (
            "42501",
            OS_COMMAND,
        )
        # A view holding a forbidden construct is refused when it is created.
        assert _refused(
            cur,
            "CREATE VIEW bad AS SELECT reflect('java.lang.System', 'getenv', 'HOME') AS h",
        ) == ("42501", _reflection("reflect"))
        for sql, what in (
            ("ADD JAR /tmp/x.jar", "ADD JAR (code loaded into the server)"),
            (
                "CREATE TEMPORARY FUNCTION f AS 'java.lang.System'",
                "CREATE FUNCTION (a Java class loaded into the server)",
            ),
        ):
            assert _refused(cur, sql) == (
                "42501",
                f"permission denied: {what} is not allowed on this server",
            )
        for key in ("fs.s3a.access.key", "spark.sql.parser.escapedStringLiterals"):
            assert _refused(cur, f"SET {key}=true") == (
                "42501",
                f"permission denied: SET {key} would change a server-wide setting; "
                "set it when the server starts (--conf)",
            )
        # What the docs give admins: paths outside the warehouse.
        cur.execute(f"SELECT value FROM text.`{outside}`")
        assert cur.fetchall() == [("line one",), ("line two",)]
        cur.execute("SHOW VIEWS")
        assert cur.fetchall() == []
    # A server started for tests (the environment variable) lets fail points be set.
    monkeypatch.setenv(FAIL_POINTS_ENV, "1")
    with password_server(spark, users_file, tmp_path / "wh2") as srv:
        with connect(srv, "alice") as conn:
            conn.cursor().execute(
                "CREATE TABLE fp (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
            )
        with connect(srv, "wendy") as conn:
            cur = conn.cursor()
            cur.execute("SET hudilite.internal.fail.point=before_commit")
            assert _refused(cur, "INSERT INTO fp VALUES (1, 'a')") == (
                "HY000",
                "simulated failure at 'before_commit'",
            )
