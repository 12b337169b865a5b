"""The hudilite dialect parses SET, RESET and UNSET TBLPROPERTIES itself (never as sqlglot's
opaque ``exp.Command``), and statement translation is a table keyed by expression type."""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    NullType,
    StructField,
    StructType,
    TimestampType,
)
from sqlglot import exp

from hudilite.sqlext import (
    AlterTableUnsetProperties,
    CreateTable,
    Query,
    ResetOption,
    SetOption,
    SparkStatement,
    SqlParseError,
    TableName,
    parse_statement,
)
from hudilite.sqlext.ddl_common import columns_schema, parse_type
from hudilite.sqlext.dialect import HudiReset, HudiUnsetProperties, parse_script, to_sql
from hudilite.sqlext.translate import TRANSLATORS, translate


@pytest.mark.parametrize(
    ("sql", "key", "value"),
    [
        ("SET a.b = some text with spaces", "a.b", "some text with spaces"),
        ("SET hoodie.x=insert", "hoodie.x", "insert"),
        ("set `odd-key` = 'quoted; text'", "odd-key", "quoted; text"),
        ("SET k = ''", "k", ""),
        ("SET spark.sql.x-y = a = b", "spark.sql.x-y", "a = b"),
    ],
)
def test_set_value_is_the_rest_of_the_statement(sql: str, key: str, value: str) -> None:
    (node,) = parse_script(sql)
    assert isinstance(node, exp.Set)
    assert parse_statement(sql) == SetOption(key, value)


def test_set_in_a_script_stops_at_the_semicolon() -> None:
    nodes = parse_script("SET a = x y; SET b = 'z'")
    assert [to_sql(n) for n in nodes] == ["SET a = 'x y'", "SET b = 'z'"]


def test_other_set_forms_go_to_spark() -> None:
    for sql in ("SET", "SET -v"):
        stmt = parse_statement(sql)
        assert isinstance(stmt, SparkStatement)
        assert stmt.sql == sql
    # SET key shows one option: the session answers for hudilite's options, Spark for others.
    assert parse_statement("SET a.b") == SetOption("a.b", None)


def test_reset() -> None:
    (node,) = parse_script("RESET")
    assert isinstance(node, HudiReset) and node.this is None
    (node,) = parse_script("RESET spark.sql.shuffle.partitions")
    assert isinstance(node, HudiReset)
    assert to_sql(node) == "RESET spark.sql.shuffle.partitions"
    # RESET clears hudilite's options too, so the session handles it (then Spark's RESET).
    assert parse_statement("RESET spark.sql.shuffle.partitions") == ResetOption(
        "spark.sql.shuffle.partitions"
    )
    assert parse_statement("RESET") == ResetOption(None)
    assert parse_statement("SELECT reset FROM t") == Query("SELECT reset FROM t")


def test_unset_tblproperties() -> None:
    sql = "ALTER TABLE `db`.t UNSET TBLPROPERTIES IF EXISTS (`a`, 'b.c', d.e)"
    (node,) = parse_script(sql)
    assert isinstance(node, exp.Alter)
    (action,) = node.args["actions"]
    assert isinstance(action, HudiUnsetProperties)
    assert to_sql(node) == "ALTER TABLE `db`.t UNSET TBLPROPERTIES IF EXISTS ('a', 'b.c', 'd.e')"
    assert parse_statement(sql) == AlterTableUnsetProperties(
        TableName("db", "t"), ["a", "b.c", "d.e"], True
    )
    assert parse_statement("alter table t unset tblproperties ('k')") == (
        AlterTableUnsetProperties(TableName(None, "t"), ["k"], False)
    )


def test_unset_errors_are_parse_errors() -> None:
    with pytest.raises(SqlParseError, match="near 'x': expected TBLPROPERTIES after UNSET"):
        parse_statement("ALTER TABLE t UNSET x")
    with pytest.raises(SqlParseError, match="expected a property key"):
        parse_statement("ALTER TABLE t UNSET TBLPROPERTIES ()")


def test_translation_is_keyed_by_expression_type() -> None:
    # Subclasses use their base class's translator: every query kind is a Query.
    assert exp.Query in TRANSLATORS and exp.Select not in TRANSLATORS
    for sql in ("SELECT 1", "SELECT 1 UNION SELECT 2", "VALUES (1)"):
        (node,) = parse_script(sql)
        assert translate(node) == Query(to_sql(node))
    # sqlglot's opaque Command is never translated into a hudilite statement.
    assert translate(exp.Command(this="VACUUM", expression=" t")) is None


def test_types_are_read_by_sqlglots_type_parser_with_sparks_names() -> None:
    assert parse_type("STRUCT<a: VOID, b: ARRAY<STRUCT<>>>") == StructType(
        [
            StructField("a", NullType()),
            StructField("b", ArrayType(StructType([]), True)),
        ]
    )
    stmt = parse_statement("CREATE TABLE t (a STRUCT<>, b VOID, c TIMESTAMP, d INT) USING hudi")
    assert isinstance(stmt, CreateTable) and stmt.columns is not None
    assert columns_schema(stmt.columns, "default.t") == StructType(
        [
            StructField("a", StructType([])),
            StructField("b", NullType()),
            StructField("c", TimestampType()),
            StructField("d", IntegerType()),
        ]
    )
    # VOID and STRUCT<> are types only where a type must be: these stay column names.
    assert parse_statement("SELECT void, struct <> 1 FROM t") == Query(
        "SELECT void, struct <> 1 FROM t"
    )
    assert parse_statement("SELECT CAST(NULL AS VOID)") == Query("SELECT CAST(NULL AS VOID)")
