"""What SQL clients' generated statements parse to: ``PRIMARY KEY`` in CREATE TABLE's column
list (SQLAlchemy's ``create_all`` writes it for a model's key) is the table's record key, as
Hudi's ``primaryKey`` option; ``DESCRIBE FUNCTION``/``DATABASE`` (BI tools' metadata probes)
are not a table's DESCRIBE."""

from __future__ import annotations

import pytest

from hudilite.sqlext import (
    CreateTable,
    Describe,
    SparkStatement,
    SqlParseError,
    TableName,
    parse_statement,
)


def _options(sql: str) -> dict[str, str]:
    stmt = parse_statement(sql)
    assert isinstance(stmt, CreateTable), stmt
    return stmt.options


def test_primary_key_clause_is_the_record_key() -> None:
    # What SQLAlchemy's HiveDialect compiles for Table("events", Column("id", primary_key=True)).
    sqlalchemy_ddl = (
        "CREATE TABLE `events` (\n\t`id` INT NOT NULL, \n\t`what` STRING, \n\tPRIMARY KEY (`id`)\n)"
    )
    stmt = parse_statement(sqlalchemy_ddl)
    assert isinstance(stmt, CreateTable)
    assert [(c.name, c.nullable) for c in stmt.columns or []] == [("id", False), ("what", True)]
    assert (stmt.using, stmt.options) == (None, {"primaryKey": "id"})
    assert _options("CREATE TABLE e (a INT, b INT, v STRING, PRIMARY KEY (a, b)) USING hudi") == {
        "primaryKey": "a,b"
    }
    assert _options("CREATE TABLE e (id INT PRIMARY KEY, v STRING) USING hudi") == {
        "primaryKey": "id"
    }
    # The same key given twice is fine; TBLPROPERTIES keep their spelling.
    assert _options(
        "CREATE TABLE e (a INT, PRIMARY KEY (a)) USING hudi TBLPROPERTIES (primaryKey = 'A')"
    ) == {"primaryKey": "A"}


def test_primary_key_clause_disagreeing_with_the_key_option() -> None:
    with pytest.raises(SqlParseError) as err:
        parse_statement(
            "CREATE TABLE e (a INT, b INT, PRIMARY KEY (a)) USING hudi "
            "TBLPROPERTIES (primaryKey = 'b')"
        )
    assert str(err.value) == (
        "SQL parse error: PRIMARY KEY (a) and primaryKey = 'b' name different record key "
        "columns: give the key once"
    )


def test_primary_key_of_another_provider_is_spark_s() -> None:
    sql = "CREATE TABLE p (a INT, PRIMARY KEY (a)) USING parquet"
    assert isinstance(parse_statement(sql), SparkStatement)


def test_describe_function_and_database_are_not_a_table() -> None:
    for sql in (
        "DESCRIBE FUNCTION abs",
        "DESC FUNCTION EXTENDED abs",
        "DESCRIBE DATABASE default",
        "DESCRIBE SCHEMA EXTENDED default",
    ):
        stmt = parse_statement(sql)
        assert isinstance(stmt, SparkStatement), (sql, stmt)
        assert stmt.sql == sql
    assert parse_statement("DESCRIBE TABLE db.t") == Describe(TableName("db", "t"), False)
    assert parse_statement("DESC EXTENDED t") == Describe(TableName(None, "t"), True)
