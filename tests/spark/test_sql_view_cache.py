"""A session keeps a table's view while the table is unchanged (sqlext/queries.py
``ViewRegistry``): statements on an unchanged table do not read it again, and a commit by
any other writer (another Table handle, another SQL session, another process) is seen by
the next statement."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.sqlext.statements import TableName
from hudilite.table.api import Table


def make(session: Any) -> None:
    session.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, v DOUBLE, p STRING) USING hudi "
        "PARTITIONED BY (p) WITH ('primaryKey'='id', 'preCombineField'='ts')"
    )
    session.sql("INSERT INTO t VALUES ('a', 1, 1.0, 'x'), ('b', 1, 2.0, 'y')")


def rows(session: Any, sql: str = "SELECT id, v FROM t ORDER BY id") -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths of the tables read through ``Table.read`` (what a view registration does)."""
    seen: list[str] = []
    original = Table.read

    def counting(self: Table, **kw: Any) -> Any:
        seen.append(self.path)
        return original(self, **kw)

    monkeypatch.setattr(Table, "read", counting)
    return seen


def location(session: Any) -> str:
    return str(session.entry(TableName(None, "t")).location)


def test_unchanged_table_is_not_read_again(session: Any, reads: list[str]) -> None:
    make(session)
    assert rows(session) == [("a", 1.0), ("b", 2.0)]
    assert len(reads) == 1
    assert rows(session) == [("a", 1.0), ("b", 2.0)]
    assert rows(session, "SELECT count(*) FROM t WHERE v > 0") == [(2,)]
    assert len(reads) == 1  # the same timeline: the registered view is reused
    session.sql("UPDATE t SET v = 5.0 WHERE id = 'a'")  # selects from the same view
    assert len(reads) == 1
    assert rows(session) == [("a", 5.0), ("b", 2.0)]  # its own commit: read again
    assert len(reads) == 2
    # Properties are part of what a read depends on.
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('hoodie.parquet.small.file.limit' = '0')")
    assert rows(session) == [("a", 5.0), ("b", 2.0)]
    assert len(reads) == 3
    # With the cache off every statement reads again.
    session.views.cache_views = False
    assert rows(session) == [("a", 5.0), ("b", 2.0)]
    assert rows(session) == [("a", 5.0), ("b", 2.0)]
    assert len(reads) == 5


def test_another_writer_commit_is_seen_by_the_next_statement(spark: Any, session: Any) -> None:
    make(session)
    assert rows(session) == [("a", 1.0), ("b", 2.0)]
    # Another Table handle (no SQL session) commits between two statements.
    other = Table.load(spark, location(session))
    new = pa.table({"id": ["c"], "ts": [2], "v": [3.0], "p": ["x"]})
    other.write(new, operation="upsert")
    assert rows(session) == [("a", 1.0), ("b", 2.0), ("c", 3.0)]
    # Another SQL session on the same warehouse updates and deletes.
    second = hudilite.connect(str(session.catalog.warehouse), spark=spark)
    second.sql("UPDATE t SET v = 9.0 WHERE id = 'b'")
    assert rows(session) == [("a", 1.0), ("b", 9.0), ("c", 3.0)]
    second.sql("DELETE FROM t WHERE id = 'a'")
    # An UPDATE of this session reads the table as the other writer left it.
    session.sql("UPDATE t SET v = v + 1 WHERE id IN ('a', 'c')")
    assert rows(session) == [("b", 9.0), ("c", 4.0)]
    # A rollback of the latest commit by the other writer is seen too.
    other.rollback(other.timeline()[-1].requested_time)
    assert rows(session) == [("b", 9.0), ("c", 3.0)]
    # Time travel and a dropped internal view still work.
    first = other.timeline()[0].requested_time
    assert rows(session, f"SELECT id FROM t TIMESTAMP AS OF '{first}' ORDER BY id") == [
        ("a",),
        ("b",),
    ]
    for tv in spark.catalog.listTables():
        if tv.isTemporary:
            spark.catalog.dropTempView(tv.name)
    assert rows(session) == [("b", 9.0), ("c", 3.0)]


def test_a_recreated_table_of_the_same_name_is_read_afresh(session: Any) -> None:
    make(session)
    assert rows(session) == [("a", 1.0), ("b", 2.0)]
    session.sql("DROP TABLE t")
    make(session)
    session.sql("DELETE FROM t WHERE id = 'b'")
    assert rows(session) == [("a", 1.0)]


_WRITER = """
import sys, hudilite
s = hudilite.connect(sys.argv[1])
s.sql("INSERT INTO t VALUES ('z', 7, 7.0, 'y')")
s.sql("UPDATE t SET v = 8.0 WHERE id = 'a'")
"""


def test_a_commit_by_another_process_is_seen(session: Any, tmp_path: Path) -> None:
    make(session)
    assert rows(session) == [("a", 1.0), ("b", 2.0)]
    env = dict(os.environ)
    for key in ("HUDILITE_SPARK_LOG_LEVEL", "PYSPARK_GATEWAY_PORT"):
        env.pop(key, None)
    env["HUDILITE_SPARK_MASTER"] = "local[1]"
    done = subprocess.run(
        [sys.executable, "-c", _WRITER, str(session.catalog.warehouse)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(session) == [("a", 8.0), ("b", 2.0), ("z", 7.0)]
