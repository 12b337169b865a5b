"""Output formats of ``hudilite sql`` on plain Python rows (no JVM)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from pyspark.sql import Row

from hudilite.cli.sql_output import (
    ResultPrinter,
    ResultRows,
    cell_text,
    confirmation,
    format_csv,
    format_json_lines,
    format_result,
    format_table,
    json_value,
    statement_tag,
)
from hudilite.write.result import WriteResult

SIMPLE = ResultRows(
    ["id", "name", "score", "ok"],
    [(1, "alice", Decimal("1.50"), True), (22, None, None, False)],
)

NESTED = ResultRows(
    ["s", "a", "m", "b", "ts", "d", "f"],
    [
        (
            Row(x=1, y='a"b'),
            [1, None, 3],
            {"k": None, "j": [1]},
            b"\x01\xff",
            dt.datetime(2024, 1, 2, 3, 4, 5, 500000),
            dt.date(2024, 1, 2),
            float("nan"),
        )
    ],
)


def test_table_grid_header_footer_nulls_and_number_alignment():
    assert format_table(SIMPLE) == (
        "+----+-------+-------+-------+\n"
        "| id | name  | score | ok    |\n"
        "+----+-------+-------+-------+\n"
        "|  1 | alice |  1.50 | true  |\n"
        "| 22 | NULL  |  NULL | false |\n"
        "+----+-------+-------+-------+\n"
        "(2 rows)\n"
    )


def test_table_nested_values_binary_timestamps():
    assert format_table(NESTED) == (
        "+--------------------+------------+--------------------+---------"
        "+-----------------------+------------+-----+\n"
        "| s                  | a          | m                  | b       "
        "| ts                    | d          | f   |\n"
        "+--------------------+------------+--------------------+---------"
        "+-----------------------+------------+-----+\n"
        '| {"x":1,"y":"a\\"b"} | [1,null,3] | {"k":null,"j":[1]} | [01 FF] '
        "| 2024-01-02 03:04:05.5 | 2024-01-02 | NaN |\n"
        "+--------------------+------------+--------------------+---------"
        "+-----------------------+------------+-----+\n"
        "(1 row)\n"
    )


def test_table_empty_result_and_no_columns():
    assert format_table(ResultRows(["a"], [])) == "+---+\n| a |\n+---+\n+---+\n(0 rows)\n"
    assert format_table(ResultRows([], [(), ()])) == "(2 rows)\n"


def test_table_truncated_wide_characters_and_multi_line_cells():
    """A cell with line breaks spans grid lines (tabs expanded), as SHOW CREATE TABLE and
    CALL help need."""
    result = ResultRows(["名前", "x"], [("東京", "a\r\nb\tc")], truncated=True)
    assert format_table(result) == (
        "+------+-------+\n"
        "| 名前 | x     |\n"
        "+------+-------+\n"
        "| 東京 | a     |\n"
        "|      | b   c |\n"
        "+------+-------+\n"
        "(showing first 1 row)\n"
    )
    many = ResultRows(["n"], [(i,) for i in range(3)], truncated=True)
    assert format_table(many).endswith("+---+\n(showing first 3 rows)\n")


def test_csv_rfc4180():
    assert format_csv(SIMPLE) == "id,name,score,ok\r\n1,alice,1.50,true\r\n22,,,false\r\n"
    assert format_csv(NESTED) == (
        "s,a,m,b,ts,d,f\r\n"
        '"{""x"":1,""y"":""a\\""b""}","[1,null,3]","{""k"":null,""j"":[1]}",Af8=,'
        "2024-01-02 03:04:05.5,2024-01-02,NaN\r\n"
    )
    quoted = ResultRows(["a,b", "c"], [('x "y"', "line1\nline2")])
    assert format_csv(quoted) == '"a,b",c\r\n"x ""y""","line1\nline2"\r\n'
    assert format_csv(ResultRows(["a", "b"], [])) == "a,b\r\n"


def test_json_lines():
    assert format_json_lines(SIMPLE) == (
        '{"id":1,"name":"alice","score":"1.50","ok":true}\n'
        '{"id":22,"name":null,"score":null,"ok":false}\n'
    )
    assert format_json_lines(NESTED) == (
        '{"s":{"x":1,"y":"a\\"b"},"a":[1,null,3],"m":{"k":null,"j":[1]},"b":"Af8=",'
        '"ts":"2024-01-02 03:04:05.5","d":"2024-01-02","f":"NaN"}\n'
    )
    assert format_json_lines(ResultRows(["a"], [])) == ""
    for line in format_json_lines(NESTED).splitlines():
        json.loads(line)  # strict JSON: no NaN literals


def test_json_keeps_repeated_column_names_and_unicode():
    assert format_json_lines(ResultRows(["a", "a"], [(1, "é")])) == '{"a":1,"a":"é"}\n'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "NULL"),
        (True, "true"),
        (3, "3"),
        (2.5, "2.5"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (Decimal("0E-10"), "0.0000000000"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 120), "2024-01-02 03:04:05.00012"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "2024-01-02 03:04:05+00:00"),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (bytearray(b"\x00\x10"), "[00 10]"),
        ([Row(a=None), Row(a="x")], '[{"a":null},{"a":"x"}]'),
        ({1: "one"}, '{1:"one"}'),
        ([], "[]"),
    ],
)
def test_cell_text(value, text):
    assert cell_text(value) == text


def test_json_value_types():
    assert json_value(Decimal("12.340")) == "12.340"
    assert json_value({1: dt.date(2024, 1, 1)}) == {"1": "2024-01-01"}
    assert json_value(Row(a=[b"hi"])) == {"a": ["aGk="]}
    assert json_value(float("inf")) == "Infinity"
    assert json_value(dt.timedelta(days=1, seconds=7200)) == "1 day, 2:00:00"


def test_format_result_dispatch():
    assert format_result(SIMPLE, "csv") == format_csv(SIMPLE)
    with pytest.raises(ValueError, match="unknown output format"):
        format_result(SIMPLE, "xml")


def test_statement_tag_and_confirmation():
    assert statement_tag("CreateTable") == "CREATE TABLE"
    assert statement_tag("AlterTableAddColumns") == "ALTER TABLE ADD COLUMNS"
    assert confirmation("UseDatabase") == "USE DATABASE"
    assert confirmation("SparkStatement") == "OK"
    w = WriteResult("20260101120000000", "insert", num_inserts=2, files_written=1)
    assert confirmation("InsertInto", w) == (
        "INSERT INTO: insert @ 20260101120000000: 2 inserted, 0 updated, 0 deleted, "
        "1 file(s) written"
    )


def _printer(fmt: str) -> tuple[ResultPrinter, list[str], list[str]]:
    out: list[str] = []
    notes: list[str] = []
    return ResultPrinter(fmt, 2, out=out.append, note=notes.append), out, notes


def test_printer_separates_results_in_table_format():
    p, out, notes = _printer("table")
    p.show("CreateTable", None)
    p.show_rows(ResultRows(["a"], [(1,)]))
    p.reset()
    p.show("DropTable", None)
    assert "".join(out) == (
        "CREATE TABLE\n\n+---+\n| a |\n+---+\n| 1 |\n+---+\n(1 row)\nDROP TABLE\n"
    )
    assert notes == []


def test_printer_csv_and_json_print_nothing_without_rows_and_note_truncation():
    p, out, notes = _printer("csv")
    p.show("CreateTable", None)
    p.show_rows(ResultRows(["a"], [(1,), (2,)], truncated=True))
    p.show_rows(ResultRows(["b"], [(3,)]))
    assert "".join(out) == "a\r\n1\r\n2\r\n\r\nb\r\n3\r\n"
    assert notes == ["(showing first 2 rows)"]

    p, out, notes = _printer("json")
    p.show("CreateTable", None)
    p.show_rows(ResultRows(["a"], []))
    p.show_rows(ResultRows(["a"], [(1,)]))
    p.show_rows(ResultRows(["b"], [(2,)]))
    assert "".join(out) == '{"a":1}\n{"b":2}\n'
    assert notes == []


def test_printer_rejects_unknown_format():
    with pytest.raises(ValueError, match="unknown output format"):
        ResultPrinter("xml", out=print)
