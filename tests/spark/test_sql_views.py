"""Persistent views end to end: kept in the warehouse catalog (a second session sees them),
read the current snapshot of their tables, views over views and across databases, MOR
``t_ro``/``t_rt``, SHOW VIEWS / SHOW TABLES / DESCRIBE / SHOW CREATE TABLE output, and the
refusals with Spark's messages."""

from __future__ import annotations

from typing import Any

import pytest

import hudilite
from hudilite.errors import TableExistsError, TableNotFoundError
from hudilite.sqlext.statements import SqlError, UnsupportedStatementError
from tests.helpers import sql_rows


def make_trips(session: Any, kind: str = "cow", name: str = "trips") -> None:
    session.sql(
        f"CREATE TABLE {name} (uuid STRING, city STRING, ts BIGINT, fare DOUBLE) USING hudi "
        f"PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', "
        f"type = '{kind}')"
    )
    session.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'nyc')")


def test_view_reads_the_current_snapshot_from_any_session(session: Any, spark: Any) -> None:
    make_trips(session)
    session.sql(
        "CREATE VIEW fares (id COMMENT 'trip id', fare) COMMENT 'fares by trip' "
        "AS SELECT uuid, fare FROM trips WHERE fare > 5"
    )
    assert sql_rows(session, "SELECT * FROM fares ORDER BY id") == [("a", 10.0), ("b", 20.0)]
    other = hudilite.connect(session.catalog.warehouse, spark=spark)
    assert sql_rows(other, "SHOW VIEWS") == [("default", "fares", False)]
    # A view over the view, from another database.
    other.sql("CREATE DATABASE reports")
    other.sql("USE reports")
    other.sql("CREATE VIEW big AS SELECT id FROM default.fares WHERE fare > 15")
    assert sql_rows(session, "SELECT * FROM reports.big") == [("b",)]
    session.sql("INSERT INTO trips VALUES ('c', 1, 30.0, 'sf'), ('d', 1, 4.0, 'sf')")
    # A later write shows through both views: they read the table's current snapshot.
    assert sql_rows(session, "SELECT id, fare FROM fares ORDER BY id") == [
        ("a", 10.0),
        ("b", 20.0),
        ("c", 30.0),
    ]
    assert sql_rows(other, "SELECT * FROM big ORDER BY id") == [("b",), ("c",)]


def test_show_describe_and_show_create(session: Any) -> None:
    make_trips(session, kind="mor")
    session.sql(
        "CREATE VIEW fares (id COMMENT 'trip id', fare) COMMENT 'fares by trip' "
        "AS SELECT uuid, fare FROM trips WHERE fare > 5"
    )
    session.sql("CREATE TEMPORARY VIEW tmp AS SELECT 1 AS one")
    assert sql_rows(session, "SHOW TABLES") == [
        ("default", "fares", False),
        ("default", "trips", False),
        ("default", "trips_ro", False),
        ("default", "trips_rt", False),
        ("", "tmp", True),
    ]
    assert sql_rows(session, "SHOW TABLES LIKE 'trips_r*|f*'") == [
        ("default", "fares", False),
        ("default", "trips_ro", False),
        ("default", "trips_rt", False),
    ]
    assert session.sql("SHOW VIEWS").columns == ["namespace", "viewName", "isTemporary"]
    assert sql_rows(session, "SHOW VIEWS") == [("default", "fares", False), ("", "tmp", True)]
    assert sql_rows(session, "SHOW VIEWS IN default LIKE 'fa*'") == [("default", "fares", False)]
    assert sql_rows(session, "DESCRIBE fares") == [
        ("id", "string", "trip id"),
        ("fare", "double", None),
    ]
    extended = sql_rows(session, "DESCRIBE EXTENDED fares")
    created = extended[6]
    assert created[0] == "Created Time" and created[1].endswith("Z")
    assert extended[:6] + extended[7:] == [
        ("id", "string", "trip id"),
        ("fare", "double", None),
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Database", "default", ""),
        ("Table", "fares", ""),
        ("Type", "VIEW", ""),
        ("Comment", "fares by trip", ""),
        ("View Text", "SELECT uuid, fare FROM trips WHERE fare > 5", ""),
        ("View Original Text", "SELECT uuid, fare FROM trips WHERE fare > 5", ""),
        ("View Catalog and Namespace", "default", ""),
        ("View Query Output Columns", "[`uuid`, `fare`]", ""),
    ]
    assert sql_rows(session, "SHOW CREATE TABLE fares") == [
        (
            "CREATE VIEW default.fares (\n"
            "  id COMMENT 'trip id',\n"
            "  fare)\n"
            "COMMENT 'fares by trip'\n"
            "AS SELECT uuid, fare FROM trips WHERE fare > 5",
        )
    ]
    # MOR read-optimized / real-time names, as Hudi's Hive sync registers them.
    session.sql("UPDATE trips SET fare = 99.0, ts = 2 WHERE uuid = 'a'")
    assert sql_rows(session, "SELECT uuid, fare FROM trips_ro ORDER BY uuid") == [
        ("a", 10.0),
        ("b", 20.0),
    ]
    assert sql_rows(session, "SELECT uuid, fare FROM trips_rt ORDER BY uuid") == [
        ("a", 99.0),
        ("b", 20.0),
    ]
    session.sql("CREATE OR REPLACE VIEW fares AS SELECT uuid, fare FROM trips_ro")
    assert sql_rows(session, "SELECT * FROM fares ORDER BY uuid") == [("a", 10.0), ("b", 20.0)]
    session.sql("ALTER VIEW fares AS SELECT uuid FROM trips_rt WHERE fare > 50")
    assert sql_rows(session, "SELECT * FROM fares") == [("a",)]
    assert sql_rows(session, "DESCRIBE fares") == [("uuid", "string", None)]


def test_refusals_name_the_object(session: Any) -> None:
    make_trips(session)
    session.sql("CREATE VIEW v AS SELECT uuid FROM trips")
    with pytest.raises(TableNotFoundError, match=r"^table or view default\.missing not found$"):
        session.sql("CREATE VIEW w AS SELECT * FROM missing")
    with pytest.raises(SqlError) as e:
        session.sql("DROP TABLE v")
    assert str(e.value) == (
        "[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP TABLE requires a EXTERNAL or "
        "MANAGED. But default.v is a VIEW. Use DROP VIEW instead."
    )
    with pytest.raises(SqlError) as e:
        session.sql("DROP VIEW trips")
    assert str(e.value) == (
        "[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP VIEW requires a VIEW. But "
        "default.trips is a MANAGED. Use DROP TABLE instead."
    )
    with pytest.raises(TableExistsError) as e:
        session.sql("CREATE VIEW trips AS SELECT 1")
    assert str(e.value) == (
        "[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view `default`.`trips` "
        "because it already exists."
    )
    with pytest.raises(SqlError) as e:
        session.sql("CREATE OR REPLACE VIEW trips AS SELECT 1")
    assert str(e.value) == (
        "[EXPECT_VIEW_NOT_TABLE.NO_ALTERNATIVE] The table `default`.`trips` does not "
        "support CREATE OR REPLACE VIEW."
    )
    with pytest.raises(TableExistsError, match=r"^cannot create table default\.v: a view"):
        session.sql("CREATE TABLE v (id STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    with pytest.raises(UnsupportedStatementError) as e:
        session.sql("CREATE OR REPLACE VIEW v AS SELECT * FROM v")
    assert str(e.value) == (
        "[RECURSIVE_VIEW] Recursive view `default`.`v` detected "
        "(cycle: `default`.`v` -> `default`.`v`)."
    )
    session.sql("CREATE TEMPORARY VIEW tv AS SELECT 1 AS z")
    with pytest.raises(UnsupportedStatementError, match=r"^\[INVALID_TEMP_OBJ_REFERENCE\] "):
        session.sql("CREATE VIEW w AS SELECT * FROM tv")
    with pytest.raises(SqlError) as e:
        session.sql("CREATE VIEW w (a, b) AS SELECT uuid FROM trips")
    assert str(e.value) == (
        "[CREATE_VIEW_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS] Cannot create view "
        "`default`.`w`, the reason is not enough data columns: View columns: `a`, `b`. "
        "Data columns: `uuid`."
    )
    with pytest.raises(SqlError) as e:
        session.sql("INSERT INTO v VALUES ('z')")
    assert str(e.value) == (
        "[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] 'INSERT' expects a table but `default`.`v` "
        "is a view."
    )
    with pytest.raises(SqlError, match=r"^\[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE\] 'SHOW PART"):
        session.sql("SHOW PARTITIONS v")
    with pytest.raises(TableNotFoundError, match=r"^view default\.nope not found$"):
        session.sql("DROP VIEW nope")
    session.sql("DROP VIEW IF EXISTS nope")
    # Nothing half-written: only v is in the catalog.
    assert session.catalog.list_views("default") == ["v"]


def test_temporary_view_shadows_persistent_one(session: Any) -> None:
    make_trips(session)
    session.sql("CREATE VIEW v AS SELECT uuid FROM trips")
    # A temporary view over the persistent one sees later writes too.
    session.sql("CREATE TEMPORARY VIEW over_v AS SELECT * FROM v")
    assert sql_rows(session, "SELECT * FROM over_v ORDER BY uuid") == [("a",), ("b",)]
    session.sql("INSERT INTO trips VALUES ('e', 1, 5.0, 'sf')")
    assert sql_rows(session, "SELECT * FROM over_v ORDER BY uuid") == [("a",), ("b",), ("e",)]
    session.sql("DROP VIEW over_v")
    session.sql("CREATE TEMPORARY VIEW v AS SELECT 'temp' AS uuid")
    assert sql_rows(session, "SELECT * FROM v") == [("temp",)]
    assert sql_rows(session, "SELECT * FROM default.v ORDER BY uuid") == [("a",), ("b",), ("e",)]
    session.sql("DROP VIEW v")  # the temporary one, as in Spark
    assert sql_rows(session, "SELECT * FROM v ORDER BY uuid") == [("a",), ("b",), ("e",)]
    session.sql("DROP VIEW v")
    assert sql_rows(session, "SHOW VIEWS") == []
    with pytest.raises(TableNotFoundError, match=r"^table or view default\.v not found$"):
        session.sql("SELECT * FROM v")
