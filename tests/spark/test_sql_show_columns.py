"""``SHOW COLUMNS`` and ``SHOW TABLE EXTENDED`` (issue 27.4): Hue and BI tools issue them;
they answer as Spark does for hudilite tables, their ``_ro``/``_rt`` names and views, instead
of "table not found"."""

from __future__ import annotations

from typing import Any

import pytest

from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import TableNotFoundError
from hudilite.sqlext.statements import (
    ShowColumns,
    ShowTableExtended,
    SqlError,
    TableName,
    parse_statement,
)
from tests.helpers import sql_rows

META = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]


def test_parse() -> None:
    assert parse_statement("SHOW COLUMNS IN db.t") == ShowColumns(TableName("db", "t"))
    assert parse_statement("show columns from t in db") == ShowColumns(TableName("db", "t"))
    assert parse_statement("SHOW COLUMNS FROM t") == ShowColumns(TableName(None, "t"))
    assert parse_statement("SHOW TABLE EXTENDED IN db LIKE 't'") == ShowTableExtended("db", "t")
    assert parse_statement("SHOW TABLE EXTENDED LIKE 't*|u'") == ShowTableExtended(None, "t*|u")
    with pytest.raises(SqlError, match=r"conflicting namespaces: `b` != `a`\.$"):
        parse_statement("SHOW COLUMNS IN a.t IN b")
    with pytest.raises(
        SqlError, match=r"^SHOW TABLE EXTENDED \.\.\. PARTITION \(city = 'sf'\) is not"
    ):
        parse_statement("SHOW TABLE EXTENDED LIKE 't' PARTITION (city = 'sf')")


@pytest.fixture
def db(session: Any) -> Any:
    session.sql("CREATE DATABASE db")
    session.sql(
        "CREATE TABLE db.t (id INT, amount DOUBLE, city STRING) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', type = 'mor') PARTITIONED BY (city)"
    )
    session.sql("INSERT INTO db.t VALUES (1, 2.5, 'sf')")
    session.sql("CREATE VIEW db.v AS SELECT id, city FROM db.t")
    return session


def test_show_columns(db: Any) -> None:
    expected = [(c,) for c in [*META, "id", "amount", "city"]]
    assert db.sql("SHOW COLUMNS IN db.t").columns == ["col_name"]
    assert sql_rows(db, "SHOW COLUMNS IN db.t") == expected
    assert sql_rows(db, "SHOW COLUMNS FROM t IN db") == expected
    # The columns DESCRIBE lists and a query reads.
    assert [r[0] for r in sql_rows(db, "DESCRIBE db.t")][:8] == [c for (c,) in expected]
    assert db.sql("SELECT * FROM db.t").columns == [c for (c,) in expected]
    assert sql_rows(db, "SHOW COLUMNS IN db.v") == [("id",), ("city",)]
    db.spark.sql("CREATE OR REPLACE TEMP VIEW tv AS SELECT 1 AS x")
    assert sql_rows(db, "SHOW COLUMNS IN tv") == [("x",)]
    with pytest.raises(TableNotFoundError, match=r"^table db\.nope not found$"):
        db.sql("SHOW COLUMNS IN db.nope")


def test_show_table_extended(db: Any) -> None:
    df = db.sql("SHOW TABLE EXTENDED IN db LIKE 't'")
    assert df.columns == ["namespace", "tableName", "isTemporary", "information"]
    rows = [tuple(r) for r in df.collect()]
    location = db.catalog.get_table("db", "t").location
    schema = "".join(
        f" |-- {c}: {kind} (nullable = true)\n"
        for c, kind in [(m, "string") for m in META]
        + [("id", "integer"), ("amount", "double"), ("city", "string")]
    )
    assert rows == [
        (
            "db",
            "t",
            False,
            "Database: db\nTable: t\nType: MANAGED\nProvider: hudi\n"
            "Table Properties: [type=mor, primaryKey=id]\n"
            f"Location: {location}\nPartition Columns: [`city`]\nSchema: root\n{schema}",
        )
    ]
    everything = sql_rows(db, "SHOW TABLE EXTENDED IN db LIKE '*'")
    assert [r[:3] for r in everything] == [
        ("db", "t", False),
        ("db", "t_ro", False),
        ("db", "t_rt", False),
        ("db", "v", False),
    ]
    assert "Hudi Query Type: read_optimized\n" in everything[1][3]
    assert everything[3][3] == (
        "Database: db\nTable: v\nType: VIEW\nView Text: SELECT id, city FROM db.t\n"
        "Schema: root\n |-- id: integer (nullable = true)\n |-- city: string (nullable = true)\n"
    )
    db.sql("USE db")
    assert [r[1] for r in sql_rows(db, "SHOW TABLE EXTENDED LIKE 'v|t_rt'")] == ["t_rt", "v"]
    with pytest.raises(DatabaseNotFoundError, match="database nodb does not exist"):
        db.sql("SHOW TABLE EXTENDED IN nodb LIKE '*'")
