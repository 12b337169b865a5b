"""Errors a newcomer meets (issue 27.3): a syntax error is said as Spark's parser says it,
at the token Spark names; Spark's errors about a statement that reads hudilite tables give
positions in the statement as written (not in the text with view names spliced in) and
keep their error class; no error starts with a blank line."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pyspark.errors import AnalysisException, ParseException

from hudilite.sqlext.statements import SqlParseError, parse_statement

# Statements Spark's parser refuses: hudilite's message must be Spark's, at Spark's place.
BAD_SQL = [
    "SELEC * FROM orders",
    "CREAT TABLE x (a INT)",
    "SELECT (a FROM t",
    "SELECT a FROM t t2 t3",
    "SELECT * FORM t",
    "DELETE FROM",
    "SELECT a,, b FROM t",
    "UPDATE t SET",
    "SELECT * FROM t WHERE a = ",
    "SELECT 'abc",
    "SELECT id\nFROM t\nWHERE (a = 1",
]


def _spark_parse_error(spark: Any, sql: str) -> tuple[str, int, int]:
    """Spark's own parser on ``sql``: its ``Syntax error at or near ...`` phrase, line and
    0-based position."""
    with pytest.raises(ParseException) as info:
        spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    text = str(info.value)
    m = re.search(r"(Syntax error at or near (?:end of input|'.*?'))(?=[.:] )", text)
    pos = re.search(r"\(line (\d+), pos (\d+)\)", text)
    assert m is not None and pos is not None, text
    return m.group(1), int(pos.group(1)), int(pos.group(2))


@pytest.mark.parametrize("sql", BAD_SQL)
def test_syntax_errors_say_what_spark_says_where_spark_says(spark: Any, sql: str) -> None:
    phrase, line, pos = _spark_parse_error(spark, sql)
    with pytest.raises(SqlParseError) as info:
        parse_statement(sql)
    assert info.value.description.split(":")[0] == phrase
    assert (info.value.line, info.value.column) == (line, pos + 1)
    assert "sqlglot" not in str(info.value) and "<class" not in str(info.value)


def test_merge_without_when_is_sparks_message(spark: Any) -> None:
    sql = "MERGE INTO t USING s ON t.id = s.id"
    with pytest.raises(ParseException, match="There must be at least one WHEN clause"):
        spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    with pytest.raises(SqlParseError) as info:
        parse_statement(sql)
    assert str(info.value) == (
        "SQL parse error at line 1, column 36: "
        "There must be at least one WHEN clause in a MERGE statement"
    )


@pytest.fixture
def orders(session: Any) -> Any:
    session.sql(
        "CREATE TABLE orders (id INT, amount DOUBLE, city STRING) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id') PARTITIONED BY (city)"
    )
    session.sql("INSERT INTO orders VALUES (1, 2.5, 'sf')")
    return session


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        ("SELECT nope FROM orders", "line 1 pos 7"),
        ("SELECT o.id FROM orders o JOIN orders p ON o.zz = p.id", "line 1 pos 43"),
        ("SELECT id\n  FROM default.orders\n  GROUP BY nope", "line 3 pos 11"),
    ],
)
def test_python_api_errors_point_into_the_statement(orders: Any, sql: str, where: str) -> None:
    with pytest.raises(AnalysisException) as info:
        orders.sql(sql)
    text = str(info.value)
    assert re.search(r"line \d+ pos \d+", text).group(0) == where  # type: ignore[union-attr]
    assert info.value.getCondition() == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    # Spark saw the view, but its message names the position of what the user wrote.
    column = int(where.split()[-1])
    line = sql.split("\n")[int(where.split()[1]) - 1]
    assert line[column:].startswith(("nope", "o.zz"))


def test_a_query_reaches_spark_as_written_but_the_view_names(orders: Any) -> None:
    sql = "SELECT  o.id  -- the key\nFROM orders o WHERE o.amount > 1"
    text = orders.views.rewrite(sql)
    view = text.split("FROM ")[1].split(" ")[0]
    assert view.startswith("`__hudilite_default__orders__snapshot__")
    assert text == sql.replace("FROM orders", f"FROM {view}")
    assert [tuple(r) for r in orders.sql(sql).collect()] == [(1,)]


def test_spark_parse_errors_have_no_leading_blank_line(orders: Any) -> None:
    with pytest.raises(ParseException) as info:
        orders.sql("VACUUM elsewhere")
    assert str(info.value).startswith(
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'VACUUM'. SQLSTATE: 42601 (line 1, pos 0)"
    )
    assert info.value.getCondition() == "PARSE_SYNTAX_ERROR"
