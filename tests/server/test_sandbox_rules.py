"""The sandbox's rules without a server (no JVM): the decisions test_sandbox.py checks
through PyHive, on more spellings, and the cases that need a file system layout (a symbolic
link inside the warehouse pointing out of it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.thriftserver.sandbox import Policy, Sandbox, server_wide, session_key_allowed
from hudilite.thriftserver.users import PermissionDenied


def _verdict(sandbox: Sandbox, sql: str) -> str:
    try:
        sandbox.check_statement(sql)
    except PermissionDenied as exc:
        return str(exc)
    return "allowed"


def test_hidden_constructs_are_found(tmp_path: Path) -> None:
    # (database, name) -> (stored SQL, its context database): other.w reads other.v, whose
    # name is unqualified in w's SQL; default has a harmless v of the same name.
    views = {
        ("other", "v"): ("SELECT reflect('a', 'b') AS x", "other"),
        ("other", "w"): ("SELECT x FROM v", "other"),
        ("default", "v"): ("SELECT 1 AS x", "default"),
        ("default", "ok"): ("SELECT 1 AS a", "default"),
    }
    reader = Sandbox(
        "reader", Policy(str(tmp_path)), lambda db, name: views.get((db or "default", name))
    )
    reflection = "permission denied: {}() (Java reflection){} is not allowed on this server"
    cases = {
        "SELECT java_method /* a */ ('a', 'b')": reflection.format("java_method", ""),
        "SELECT JAVA_METHOD('a', 'b')": reflection.format("java_method", ""),
        "SELECT 1 FROM (SELECT 1) WHERE EXISTS (SELECT try_reflect('a', 'b'))": (
            reflection.format("try_reflect", "")
        ),
        "EXPLAIN FORMATTED EXPLAIN SELECT reflect('a', 'b')": reflection.format("reflect", ""),
        "CACHE TABLE c AS SELECT reflect('a', 'b')": reflection.format("reflect", ""),
        "SELECT * FROM other.w": reflection.format("reflect", " (in view other.v)"),
        "SELECT * FROM v": "allowed",
        "SELECT * FROM t MAP a USING 'sh'": (
            "permission denied: TRANSFORM ... USING 'sh' (an OS command) is not allowed on "
            "this server"
        ),
        "ADD ARCHIVE /tmp/x.zip": (
            "permission denied: ADD ARCHIVE (code loaded into the server) is not allowed on "
            "this server"
        ),
        # Allowed: the words in strings, comments and column names, Spark's transform().
        "SELECT 'reflect(1)' AS s -- java_method('a')": "allowed",
        "SELECT t.reflect, transform(array(1), x -> x) FROM t": "allowed",
        "SELECT a FROM ok": "allowed",
        "WITH v AS (SELECT 1 AS a) SELECT * FROM v": "allowed",  # the CTE, not the view
    }
    for sql, expected in cases.items():
        assert _verdict(reader, sql) == expected, sql


def test_paths_resolve_before_the_warehouse_check(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    (wh / "default.db" / "t").mkdir(parents=True)
    (wh / "escape").symlink_to(tmp_path)
    writer = Sandbox("writer", Policy.for_server(str(wh), admin_trusted=False))
    admin = Sandbox("admin", Policy.for_server(str(wh), admin_trusted=False))
    inside = wh / "default.db" / "t"
    assert _verdict(writer, f"SELECT * FROM parquet.`{inside}`") == "allowed"
    assert _verdict(writer, f"SELECT * FROM parquet.`file:{inside}`") == "allowed"
    for path in (f"{wh}/escape", f"{wh}/default.db/../../x", f"{wh}/default.db/{{t,..}}", "t2"):
        assert _verdict(writer, f"INSERT INTO parquet.`{path}` SELECT 1") == (
            f"permission denied: parquet.`{path}` names a path outside the warehouse {wh}; "
            "role 'writer' may read and write paths only inside it"
        ), path
    assert _verdict(admin, f"SELECT * FROM parquet.`{wh}/escape`") == "allowed"
    assert _verdict(writer, "SELECT * FROM s3a.`s3a://bucket/other`").startswith(
        "permission denied: s3a.`s3a://bucket/other` names a path outside"
    )


@pytest.mark.parametrize(
    ("key", "wide", "session"),
    [
        ("fs.s3a.endpoint", True, False),
        ("spark.hadoop.fs.s3a.secret.key", True, False),
        ("FS.S3A.ACCESS.KEY", True, False),
        ("spark.sql.catalog.x.url", True, False),
        ("spark.sql.legacy.setopsPrecedence.enabled", True, False),
        ("spark.sql.legacy.timeParserPolicy", False, True),
        ("spark.sql.shuffle.partitions", False, True),
        ("spark.sql.session.timeZone", False, False),
        ("hoodie.datasource.write.operation", False, True),
        ("hoodie.write.lock.filesystem.path", False, False),
        ("hudilite.internal.fail.point", False, False),
        ("no.such.key", False, False),
    ],
)
def test_setting_classes(key: str, wide: bool, session: bool) -> None:
    assert (server_wide(key), session_key_allowed(key)) == (wide, session)
