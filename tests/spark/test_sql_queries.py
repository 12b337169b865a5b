"""SQL queries over hudilite tables: snapshots at query time, joins with Spark views, CTEs,
``t_ro``/``t_rt``, ``TIMESTAMP AS OF``, ``hudi_table_changes`` and pass-through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.sqlext.statements import SqlParseError, TableName, UnsupportedStatementError
from tests.helpers import sql_rows


def make(session: Any, kind: str = "cow", name: str = "trips") -> None:
    session.sql(
        f"CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        f"PARTITIONED BY (city) WITH ('primaryKey'='uuid', 'preCombineField'='ts', "
        f"'type'='{kind}')"
    )


def test_join_cte_subquery_and_aggregate(session: Any) -> None:
    make(session)
    session.sql(
        "INSERT INTO trips VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'ny'), ('c', 1, 30.0, 'sf')"
    )
    session.spark.createDataFrame(
        [("a", "alice"), ("c", "carol")], "uuid string, rider string"
    ).createOrReplaceTempView("riders")
    assert sql_rows(
        session,
        "SELECT t.uuid, r.rider FROM trips t JOIN riders r USING (uuid) ORDER BY uuid",
    ) == [("a", "alice"), ("c", "carol")]
    assert sql_rows(
        session,
        "WITH sf AS (SELECT * FROM trips WHERE city = 'sf') "
        "SELECT count(*), sum(fare) FROM sf WHERE uuid IN (SELECT uuid FROM riders)",
    ) == [(2, 40.0)]
    assert sql_rows(
        session, "SELECT city, max(fare) FROM default.trips GROUP BY city ORDER BY city"
    ) == [("ny", 20.0), ("sf", 30.0)]
    # Hudi's meta columns come first in SELECT *, as in Hudi's Spark SQL.
    cols = session.sql("SELECT * FROM trips").columns
    assert cols[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    assert cols[5:] == ["uuid", "ts", "fare", "city"]


def test_each_query_sees_the_latest_commit(session: Any) -> None:
    make(session)
    session.sql("INSERT INTO trips VALUES ('a', 1, 10.0, 'sf')")
    session.sql("CREATE TEMP VIEW sf_trips AS SELECT uuid, fare FROM trips WHERE city = 'sf'")
    assert sql_rows(session, "SELECT count(*) FROM trips") == [(1,)]
    session.sql("INSERT INTO trips VALUES ('b', 1, 20.0, 'sf')")
    assert sql_rows(session, "SELECT count(*) FROM trips") == [(2,)]
    # A user's temp view over a hudilite table follows new commits too.
    assert sql_rows(session, "SELECT uuid FROM sf_trips ORDER BY uuid") == [("a",), ("b",)]


def test_temp_view_shadows_table_and_unknown_table_errors(session: Any) -> None:
    make(session)
    session.sql("INSERT INTO trips VALUES ('a', 1, 10.0, 'sf')")
    session.spark.createDataFrame([(42,)], "x int").createOrReplaceTempView("trips")
    assert sql_rows(session, "SELECT * FROM trips") == [(42,)]
    assert sql_rows(session, "SELECT uuid FROM default.trips") == [("a",)]
    with pytest.raises(
        hudilite.TableNotFoundError, match=r"^table or view default\.nope not found$"
    ):
        session.sql("SELECT * FROM nope")


def test_read_optimized_and_realtime_views_of_mor(session: Any) -> None:
    make(session, "mor")
    session.sql("INSERT INTO trips VALUES ('a', 1, 10.0, 'sf')")
    session.sql("UPDATE trips SET fare = 11.0 WHERE uuid = 'a'")
    assert sql_rows(session, "SELECT fare FROM trips_ro") == [(10.0,)]
    assert sql_rows(session, "SELECT fare FROM trips_rt") == [(11.0,)]
    assert sql_rows(session, "SELECT fare FROM trips") == [(11.0,)]
    make(session, "cow", "plain")
    with pytest.raises(hudilite.TableNotFoundError, match="plain_ro not found"):
        session.sql("SELECT * FROM plain_ro")


def test_time_travel_and_incremental_reads(session: Any) -> None:
    make(session, "mor")
    session.sql("INSERT INTO trips VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'ny')")
    tbl = session.table(TableName(None, "trips"))
    first = tbl.timeline()[-1].requested_time
    session.sql("UPDATE trips SET fare = 12.0 WHERE uuid = 'a'")
    second = tbl.timeline()[-1].requested_time
    session.sql("INSERT INTO trips VALUES ('c', 1, 30.0, 'la')")
    assert sql_rows(
        session, f"SELECT uuid, fare FROM trips TIMESTAMP AS OF '{first}' ORDER BY uuid"
    ) == [("a", 10.0), ("b", 20.0)]
    assert sql_rows(
        session, f"SELECT uuid, fare FROM trips TIMESTAMP AS OF '{second}' ORDER BY uuid"
    ) == [("a", 12.0), ("b", 20.0)]
    assert sql_rows(
        session,
        f"SELECT uuid, fare FROM hudi_table_changes('trips', 'latest_state', '{first}') "
        "ORDER BY uuid",
    ) == [("a", 12.0), ("c", 30.0)]
    assert sql_rows(
        session,
        f"SELECT uuid FROM hudi_table_changes('default.trips', 'latest_state', '{first}', "
        f"'{second}')",
    ) == [("a",)]
    assert sql_rows(
        session,
        "SELECT count(*) FROM hudi_table_changes('trips', 'latest_state', 'earliest')",
    ) == [(3,)]
    with pytest.raises(UnsupportedStatementError, match="query type 'cdc' is not supported"):
        session.sql(f"SELECT * FROM hudi_table_changes('trips', 'cdc', '{first}')")
    with pytest.raises(UnsupportedStatementError, match="VERSION AS OF 3: a Hudi table has no"):
        session.sql("SELECT * FROM trips VERSION AS OF 3")


def test_other_statements_pass_to_spark_unless_they_change_a_hudilite_table(
    session: Any,
) -> None:
    make(session)
    assert sql_rows(session, "SELECT upper('x')") == [("X",)]
    session.sql("CREATE TEMP VIEW nums AS SELECT id FROM range(3)")
    assert sql_rows(session, "SELECT sum(id) FROM nums") == [(3,)]
    session.sql("DROP VIEW nums")
    with pytest.raises(
        UnsupportedStatementError,
        match=r"^unsupported statement on hudilite table default\.trips: ALTER TABLE trips$",
    ):
        session.sql("ALTER TABLE trips SET LOCATION '/elsewhere'")
    with pytest.raises(
        UnsupportedStatementError,
        match=r"^ANALYZE TABLE is not supported on hudilite table default\.trips: .*statistics",
    ):
        session.sql("ANALYZE TABLE trips COMPUTE STATISTICS")


def test_run_script_with_comments_set_and_errors(session: Any) -> None:
    script = """
    -- a job
    SET hoodie.spark.sql.insert.into.operation = upsert;
    CREATE TABLE t1 (id INT, v STRING) USING hudilite WITH ('primaryKey' = 'id');
    /* two rows; semicolon in a string: ';' */
    INSERT INTO t1 VALUES (1, 'a;'), (2, 'b');
    SELECT * FROM t1
    """
    results = session.run_script(script)
    assert [r.kind for r in results] == ["SetOption", "CreateTable", "InsertInto", "Query"]
    assert [r.line for r in results] == [3, 4, 6, 7]
    assert [tuple(r)[5:] for r in results[-1].df.orderBy("id").collect()] == [(1, "a;"), (2, "b")]
    with pytest.raises(SqlParseError) as info:
        session.run_script("SELECT 1;\n\nSELECT * FROM t1 WHERE")
    assert info.value.line == 3


def test_sessions_on_two_warehouses_share_spark_without_mixing_tables(
    session: Any, spark: Any, tmp_path: Path
) -> None:
    other = hudilite.connect(str(tmp_path / "other_wh"), spark=spark)
    for s, value in ((session, "mine"), (other, "theirs")):
        s.sql("CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        s.sql(f"INSERT INTO t VALUES (1, '{value}')")
    session.sql("CREATE TEMP VIEW mine_v AS SELECT v FROM t")
    assert sql_rows(other, "SELECT v FROM t") == [("theirs",)]
    assert sql_rows(session, "SELECT v FROM mine_v") == [("mine",)]
