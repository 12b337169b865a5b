"""The SQL surface a spark-sql user expects (issue 12): subqueries over hudilite tables in
DML, statements hudilite does not own reaching Spark as written, SET validation and RESET,
CREATE TABLE over foreign data or with contradicting options, positional INSERT warnings,
EXPLAIN, MERGE ... NOT MATCHED BY SOURCE, DESCRIBE HISTORY, VERSION AS OF, column changes,
SHOW TBLPROPERTIES and ANALYZE TABLE."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hudilite.errors import ConfigError, SchemaError, TableExistsError
from hudilite.sqlext.statements import (
    SqlError,
    SqlWarning,
    TableName,
    UnsupportedStatementError,
)
from tests.helpers import hudi_rs_read, sql_rows


def make(session: Any, name: str, rows: str | None = None, extra: str = "") -> None:
    session.sql(
        f"CREATE TABLE {name} (id INT, v STRING, ts BIGINT) USING hudi "
        f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts'{extra})"
    )
    if rows:
        session.sql(f"INSERT INTO {name} VALUES {rows}")


# ------------------------------------------------------------------ 1. subqueries in DML


def test_dml_subqueries_read_hudilite_tables(session: Any) -> None:
    make(session, "a", "(1, 'x', 1), (2, 'y', 1), (3, 'w', 1)")
    make(session, "b", "(1, 'z', 5), (3, 'q', 7)")
    session.sql("UPDATE a SET v = 'u' WHERE id IN (SELECT id FROM b WHERE ts = 5)")
    session.sql("UPDATE a SET ts = (SELECT max(ts) FROM b) WHERE id = 2")
    session.sql("DELETE FROM a WHERE id IN (SELECT id FROM b WHERE v = 'q')")
    assert sql_rows(session, "SELECT id, v, ts FROM a ORDER BY id") == [(1, "u", 1), (2, "y", 7)]
    session.sql(
        "MERGE INTO a USING (SELECT 1 AS id, 'm' AS v, 9L AS ts) s ON a.id = s.id "
        "WHEN MATCHED AND s.id IN (SELECT id FROM b) THEN UPDATE SET v = (SELECT max(v) FROM b) "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    assert sql_rows(session, "SELECT id, v, ts FROM a ORDER BY id") == [(1, "z", 1), (2, "y", 7)]


# ------------------------------------------------------------------ 2. Spark's own statements


def test_statements_hudilite_does_not_own_reach_spark_as_written(
    session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plain pq"
    session.spark.createDataFrame([(1, "p"), (9, "n")], "id int, w string").write.parquet(
        str(folder)
    )
    sql = f"SELECT  id,w /* as written */ FROM parquet.`{folder}`   ORDER BY id"
    assert session.views.rewrite(sql) == sql  # touches no hudilite table: the text itself
    seen: list[str] = []

    class Spy:
        def __init__(self, real: Any) -> None:
            self.real = real

        def sql(self, text: str, *args: Any, **kwargs: Any) -> Any:
            seen.append(text)
            return self.real.sql(text, *args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    monkeypatch.setattr(session, "spark", Spy(session.spark))
    assert sql_rows(session, sql) == [(1, "p"), (9, "n")]
    assert seen == [sql]  # Spark got the statement byte for byte
    monkeypatch.undo()
    make(session, "a", "(1, 'x', 1)")
    joined = f"SELECT p.w, a.v FROM parquet.`{folder}` p JOIN a ON p.id = a.id"
    assert f"parquet.`{folder}`" in session.views.rewrite(joined)
    assert sql_rows(session, joined) == [("p", "x")]


# ------------------------------------------------------------------ 4. SET and RESET


def test_set_validates_known_keys_and_reset_clears_write_options(session: Any) -> None:
    with pytest.raises(ConfigError, match=r"'abc' for option hoodie\.parquet\.max\.file\.size"):
        session.sql("SET hoodie.parquet.max.file.size = abc")
    assert "hoodie.parquet.max.file.size" not in session.write_options()
    with pytest.raises(ConfigError, match=r"type.*'bogus'"):
        session.sql("SET type = bogus")
    session.sql("SET hoodie.parquet.max.file.size = 1048576")
    session.sql("SET hoodie.spark.sql.insert.into.operation = bulk_insert")
    assert sql_rows(session, "SET hoodie.spark.sql.insert.into.operation") == [
        ("hoodie.spark.sql.insert.into.operation", "bulk_insert")
    ]
    make(session, "a")
    assert session.sql("INSERT INTO a VALUES (1, 'x', 1)").collect()[0].operation == "bulk_insert"

    session.sql("RESET hoodie.spark.sql.insert.into.operation")
    assert sql_rows(session, "SET hoodie.spark.sql.insert.into.operation") == [
        ("hoodie.spark.sql.insert.into.operation", "<undefined>")
    ]
    assert session.write_options() == {"hoodie.parquet.max.file.size": "1048576"}
    assert session.sql("INSERT INTO a VALUES (2, 'y', 1)").collect()[0].operation != ("bulk_insert")
    session.sql("RESET")
    assert session.write_options() == {}
    assert sql_rows(session, "SET hoodie.parquet.max.file.size") == [
        ("hoodie.parquet.max.file.size", "<undefined>")
    ]


# ------------------------------------------------------------------ 5. CREATE TABLE refusals


def test_create_table_refuses_foreign_data_and_contradicting_options(
    session: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    session.spark.createDataFrame([(1,)], "id int").write.parquet(str(folder))
    before = sorted(os.listdir(folder))
    with pytest.raises(TableExistsError, match=f"{folder}: the folder holds data .*no Hudi table"):
        session.sql(
            f"CREATE TABLE t (id INT) USING hudi LOCATION '{folder}' "
            "TBLPROPERTIES (primaryKey = 'id')"
        )
    assert sorted(os.listdir(folder)) == before
    assert sql_rows(session, "SHOW TABLES") == []
    with pytest.raises(SqlError, match=r"hoodie\.table\.type = 'MERGE_ON_READ' and type = 'cow'"):
        session.sql(
            "CREATE TABLE t (id INT) USING hudi TBLPROPERTIES "
            "('hoodie.table.type' = 'MERGE_ON_READ', type = 'cow', primaryKey = 'id')"
        )
    assert sql_rows(session, "SHOW TABLES") == []
    assert session.catalog.list_tables("default") == []


# ------------------------------------------------------------------ 6. positional INSERT


def test_positional_insert_warns_when_names_disagree(session: Any) -> None:
    session.sql(
        "CREATE TABLE t (id INT, ts BIGINT, grp STRING, payload STRING) USING hudi "
        "PARTITIONED BY (grp) TBLPROPERTIES (primaryKey = 'id')"
    )
    session.spark.createDataFrame(
        [(1, 1, "g1", "text")], "id int, ts bigint, grp string, payload string"
    ).createOrReplaceTempView("src")
    with pytest.warns(SqlWarning, match=r"'grp' -> 'payload', 'payload' -> 'grp'"):
        session.sql("INSERT INTO t SELECT * FROM src")
    # The table keeps Spark's order (partition column last); the values went by position.
    assert session.sql("SELECT * FROM t").columns[5:] == ["id", "ts", "payload", "grp"]


# ------------------------------------------------------------------ 3. statements by name


def test_explain_history_version_properties_and_refusals(session: Any) -> None:
    session.sql(
        "CREATE TABLE a (id INT, v STRING, ts BIGINT, n INT) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')"
    )
    session.sql("INSERT INTO a VALUES (1, 'x', 1, 10)")
    session.sql("INSERT INTO a VALUES (2, 'y', 1, 20)")

    # EXPLAIN (any mode) plans the rewritten query; hudilite DML is refused by name.
    (plan,) = session.sql("EXPLAIN EXTENDED SELECT v FROM a WHERE id = 1").collect()[0]
    assert "== Parsed Logical Plan ==" in plan and "__hudilite_default__a__" in plan
    assert "Project" in session.sql("EXPLAIN SELECT upper('q')").collect()[0][0]
    with pytest.raises(UnsupportedStatementError, match=r"^EXPLAIN UPDATE is not supported on "):
        session.sql("EXPLAIN UPDATE a SET v = 'z'")

    # DESCRIBE HISTORY: the timeline, newest first; VERSION AS OF takes its instants.
    history = sql_rows(session, "DESCRIBE HISTORY a")
    instants = [i.requested_time for i in session.table(TableName(None, "a")).timeline()]
    assert [r[0] for r in history] == sorted(instants, reverse=True)
    newest = history[0]
    assert (newest[2], newest[4]) == ("commit", "COMPLETED")
    assert newest[3] in ("INSERT", "UPSERT")
    assert newest[5]["numInsertedRows"] == "1"
    assert len(sql_rows(session, "DESCRIBE HISTORY a LIMIT 1")) == 1
    first = history[-1][0]
    assert sql_rows(session, f"SELECT id FROM a VERSION AS OF '{first}'") == [(1,)]
    assert sql_rows(session, f"SELECT id FROM a VERSION AS OF {first}") == [(1,)]
    with pytest.raises(UnsupportedStatementError, match=r"VERSION AS OF 1: a Hudi table has no"):
        session.sql("SELECT * FROM a VERSION AS OF 1")

    # SHOW TBLPROPERTIES [(key)]
    props = dict(sql_rows(session, "SHOW TBLPROPERTIES a"))
    assert props["primaryKey"] == "id" and props["type"] == "cow"
    assert props["hoodie.table.name"] == "a"
    assert sql_rows(session, "SHOW TBLPROPERTIES a (primaryKey)") == [("primaryKey", "id")]
    assert sql_rows(session, "SHOW TBLPROPERTIES a ('nope')") == [
        ("nope", "Table default.a does not have property: nope")
    ]

    # ANALYZE TABLE and column changes Hudi allows only with schema on read: refused.
    with pytest.raises(UnsupportedStatementError, match=r"ANALYZE TABLE is not supported.*statist"):
        session.sql("ANALYZE TABLE a COMPUTE STATISTICS")
    for sql in ("ALTER TABLE a DROP COLUMN v", "ALTER TABLE a RENAME COLUMN v TO w"):
        with pytest.raises(
            UnsupportedStatementError, match=r"hoodie\.schema\.on\.read\.enable=true"
        ):
            session.sql(sql)
    with pytest.raises(SchemaError, match=r"'ts' of default\.a: it is the table's ordering field"):
        session.sql("ALTER TABLE a ALTER COLUMN ts TYPE INT")
    with pytest.raises(SchemaError, match="from string to int: Hudi's schema evolution"):
        session.sql("ALTER TABLE a ALTER COLUMN v TYPE INT")
    with pytest.raises(UnsupportedStatementError, match="allows promoting int to string"):
        session.sql("ALTER TABLE a CHANGE COLUMN n n STRING")
    session.sql("ALTER TABLE a ALTER COLUMN n TYPE INT")  # its own type: nothing to do
    assert len(sql_rows(session, "DESCRIBE HISTORY a")) == len(history)
    assert sql_rows(session, "SELECT id, v, n FROM a ORDER BY id") == [(1, "x", 10), (2, "y", 20)]


def test_merge_when_not_matched_by_source(session: Any) -> None:
    make(session, "t", "(1, 'a', 1), (2, 'b', 1), (3, 'c', 1)")
    session.spark.createDataFrame(
        [(1, "a2", 2), (4, "d", 1)], "id int, v string, ts bigint"
    ).createOrReplaceTempView("updates")
    result = session.sql(
        "MERGE INTO t USING updates s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED BY SOURCE AND t.id = 2 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = concat(t.v, '-orphan') "
        "WHEN NOT MATCHED THEN INSERT *"
    ).collect()[0]
    assert (result.num_inserted_rows, result.num_updated_rows, result.num_deleted_rows) == (
        1,
        2,
        1,
    )
    assert sql_rows(session, "SELECT id, v, ts FROM t ORDER BY id") == [
        (1, "a2", 2),
        (3, "c-orphan", 1),
        (4, "d", 1),
    ]


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_alter_column_type_promotes_with_a_commit(session: Any, kind: str) -> None:
    session.sql(
        "CREATE TABLE p (id INT, n INT, f FLOAT, ts BIGINT) USING hudi "
        f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{kind}')"
    )
    session.sql("INSERT INTO p VALUES (1, 10, 1.5, 1), (2, 20, 2.5, 1)")
    session.sql("ALTER TABLE p ALTER COLUMN n TYPE BIGINT")
    session.sql("ALTER TABLE p CHANGE COLUMN f f DOUBLE")
    types = {r[0]: r[1] for r in sql_rows(session, "DESCRIBE p")}
    assert (types["n"], types["f"]) == ("bigint", "double")
    history = sql_rows(session, "DESCRIBE HISTORY p")
    assert [r[3] for r in history[:2]] == ["ALTER_SCHEMA", "ALTER_SCHEMA"]
    # Files written before keep int/float; every read widens them.
    assert sql_rows(session, "SELECT id, n, f FROM p ORDER BY id") == [(1, 10, 1.5), (2, 20, 2.5)]
    session.sql("INSERT INTO p VALUES (3, 5000000000, 3.25, 1)")
    session.sql("UPDATE p SET n = n + 1 WHERE id = 1")  # merges an old file with new rows
    assert sql_rows(session, "SELECT id, n, f FROM p ORDER BY id") == [
        (1, 11, 1.5),
        (2, 20, 2.5),
        (3, 5000000000, 3.25),
    ]
    # hudi-rs reads the old int files and the new long ones as the promoted schema too.
    table = hudi_rs_read(session.entry(TableName(None, "p")).location)
    assert str(table.schema.field("n").type) == "int64"
    ids, ns = table.column("id").to_pylist(), table.column("n").to_pylist()
    assert sorted(zip(ids, ns, strict=True)) == [
        (1, 11),
        (2, 20),
        (3, 5000000000),
    ]
