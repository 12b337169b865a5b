"""Statements through the Thrift server with PyHive's DB-API: DDL, DML, MERGE, CALL, SET,
USE, queries, async execution, roles and errors."""

from __future__ import annotations

import threading
import time

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from TCLIService import ttypes as tt
from thrift.transport.TTransport import TTransportException

from hudilite.thriftserver import Server
from tests.server.clients import connect

pytestmark = pytest.mark.spark


def _status(err: hive_exc.OperationalError) -> tt.TStatus:
    return err.args[0].status


def test_statements_end_to_end(server: Server) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS sales")
        cur.execute("USE sales")
        cur.execute(
            "CREATE TABLE trips (id INT, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
            "TBLPROPERTIES ('primaryKey' = 'id', 'preCombineField' = 'ts')"
        )
        cur.execute("INSERT INTO trips VALUES (1, 1, 10.0, 'sf'), (2, 1, 20.0, 'nyc')")
        assert [d[0] for d in cur.description][:3] == ["instant", "operation", "num_affected_rows"]
        # A keyed table with an ordering field: INSERT INTO upserts (Hudi's rule).
        assert cur.fetchall()[0][1:4] == ("upsert", 2, 2)
        cur.execute(
            "MERGE INTO trips t USING (SELECT 2 AS id, 2L AS ts, 25.0 AS fare, 'nyc' AS city "
            "UNION ALL SELECT 3, 2L, 30.0, 'sf') s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )
        cur.execute("UPDATE trips SET fare = fare + 1, ts = 3 WHERE id = 1")
        cur.execute("DELETE FROM trips WHERE id = 3")
        cur.execute("SELECT id, ts, fare, city FROM trips ORDER BY id")
        assert cur.description == [
            ("id", "INT_TYPE", None, None, None, None, True),
            ("ts", "BIGINT_TYPE", None, None, None, None, True),
            ("fare", "DOUBLE_TYPE", None, None, None, None, True),
            ("city", "STRING_TYPE", None, None, None, None, True),
        ]
        assert cur.fetchall() == [(1, 3, 11.0, "sf"), (2, 2, 25.0, "nyc")]
        cur.execute("CALL show_commits(table => 'trips')")
        actions = sorted(row[2] for row in cur.fetchall())
        assert actions == ["commit"] * 4
        # SET is per session: a second connection does not see it.
        cur.execute("SET hoodie.datasource.insert.dup.policy = fail")
        assert cur.fetchall() == [("hoodie.datasource.insert.dup.policy", "fail")]
        cur.execute("SET hoodie.datasource.insert.dup.policy")
        assert cur.fetchall() == [("hoodie.datasource.insert.dup.policy", "fail")]
        with connect(server) as other:
            c2 = other.cursor()
            c2.execute("SET hoodie.datasource.insert.dup.policy")
            assert c2.fetchall() == [("hoodie.datasource.insert.dup.policy", "<undefined>")]
            c2.execute("SELECT count(*) FROM sales.trips")
            assert c2.fetchall() == [(2,)]


def test_open_session_database_and_settings(server: Server) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS other")
        cur.execute(
            "CREATE TABLE other.marker (id INT) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )
    conf = {"use:database": "other", "set:hiveconf:spark.sql.shuffle.partitions": "3"}
    with connect(server, configuration=conf, database="other") as conn:
        cur = conn.cursor()
        cur.execute("SHOW TABLES")
        assert cur.fetchall() == [("marker",)]
        cur.execute("SET spark.sql.shuffle.partitions")
        assert cur.fetchall() == [("spark.sql.shuffle.partitions", "3")]


def test_errors_carry_sqlstate_and_one_line(server: Server) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("SELECT 1 FROM\nWHERE")
        status = _status(err.value)
        assert status.sqlState == "42000"
        assert status.errorMessage.startswith("SQL parse error at line 2, column")
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("SELECT * FROM no_such_table")
        assert _status(err.value).sqlState == "42S02"
        assert _status(err.value).errorMessage == "table or view default.no_such_table not found"
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("SELECT 1/0 AS x, assert_true(false)")
        message = _status(err.value).errorMessage
        assert "\n" not in message and "Traceback" not in message and "at org." not in message


def test_async_execution_and_status(server: Server) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("SELECT id * 2 AS v FROM range(5) ORDER BY v", async_=True)
        states = []
        while True:
            state = cur.poll().operationState
            states.append(state)
            if state not in (tt.TOperationState.PENDING_STATE, tt.TOperationState.RUNNING_STATE):
                break
            time.sleep(0.05)
        assert states[-1] == tt.TOperationState.FINISHED_STATE
        assert cur.fetchall() == [(0,), (2,), (4,), (6,), (8,)]
        cur.execute("SELECT * FROM missing_async", async_=True)
        while cur.poll().operationState in (
            tt.TOperationState.PENDING_STATE,
            tt.TOperationState.RUNNING_STATE,
        ):
            time.sleep(0.05)
        status = cur.poll()
        assert status.operationState == tt.TOperationState.ERROR_STATE
        assert status.sqlState == "42S02"
        assert status.errorMessage == "table or view default.missing_async not found"


def test_roles(server: Server) -> None:
    with connect(server) as admin:
        cur = admin.cursor()
        cur.execute(
            "CREATE TABLE IF NOT EXISTS default.roles_t (id INT, v STRING) USING hudi "
            "TBLPROPERTIES ('primaryKey' = 'id')"
        )
    with connect(server, "rita") as reader:
        cur = reader.cursor()
        cur.execute("SELECT count(*) FROM roles_t")
        assert cur.fetchall() == [(0,)]
        cur.execute("SHOW TABLES")
        assert ("roles_t",) in cur.fetchall()
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("INSERT INTO roles_t VALUES (1, 'a')")
        assert _status(err.value).sqlState == "42501"
        assert _status(err.value).errorMessage == (
            "permission denied: role 'reader' may not run write statements (InsertInto); "
            "it needs role 'writer'"
        )
    with connect(server, "wendy") as writer:
        cur = writer.cursor()
        cur.execute("INSERT INTO roles_t VALUES (1, 'a')")
        for sql, kind in (
            ("DROP TABLE roles_t", "DDL statements (DropTable)"),
            ("CALL run_clean(table => 'roles_t')", "CALL statements (run_clean)"),
        ):
            with pytest.raises(hive_exc.OperationalError) as err:
                cur.execute(sql)
            assert _status(err.value).sqlState == "42501"
            assert _status(err.value).errorMessage == (
                f"permission denied: role 'writer' may not run {kind}; it needs role 'admin'"
            )
        cur.execute("SELECT id, v FROM roles_t")
        assert cur.fetchall() == [(1, "a")]


def test_wrong_password_is_refused(server: Server) -> None:
    with pytest.raises(TTransportException) as err:
        hive.connect("127.0.0.1", server.port, username="alice", password="nope", auth="CUSTOM")
    assert "authentication failed for user 'alice'" in str(err.value)
    with pytest.raises(TTransportException) as err:
        hive.connect("127.0.0.1", server.port, username="mallory", password="x", auth="CUSTOM")
    assert "authentication failed for user 'mallory'" in str(err.value)


def test_concurrent_connections_mix_queries_and_writes(server: Server) -> None:
    """20 connections at once, four of them writing one table: every query answers, every
    write commits or is refused by the conflict check, and the table holds exactly the
    committed rows."""
    writers, connections = 4, 20
    with connect(server) as conn:
        conn.cursor().execute(
            "CREATE TABLE conc (id INT, who STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )
    results: dict[int, object] = {}

    def client(i: int) -> None:
        try:
            with connect(server, "wendy") as c:
                cur = c.cursor()
                if i < writers:
                    cur.execute(f"INSERT INTO conc VALUES ({i}, 'writer{i}')")
                    results[i] = "written"
                else:
                    cur.execute(f"SELECT sum(id) + {i} FROM range(1000)")
                    results[i] = cur.fetchall()
        except hive_exc.OperationalError as exc:
            results[i] = exc.args[0].status

    threads = [threading.Thread(target=client, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    readers = range(writers, connections)
    assert {i: results[i] for i in readers} == {i: [(499500 + i,)] for i in readers}
    written = [i for i in range(writers) if results[i] == "written"]
    assert written  # the first writer to commit always wins
    for i in range(writers):
        if i not in written:  # the engine's conflict check refused this writer
            assert "conflict" in results[i].errorMessage.lower()  # type: ignore[attr-defined]
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("SELECT id, who FROM conc ORDER BY id")
        assert cur.fetchall() == [(i, f"writer{i}") for i in written]
