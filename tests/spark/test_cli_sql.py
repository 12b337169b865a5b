"""``hudilite sql`` end to end: the command drives a real SQL session on the shared
SparkSession (``connect`` picks up the active session) with a temporary warehouse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hudilite.cli import main

QUERY = (
    "SELECT 1 AS id, 'a' AS name, DATE'2024-01-02' AS d, "
    "TIMESTAMP'2024-01-02 03:04:05.5' AS ts, CAST(1.5 AS DECIMAL(5, 2)) AS amount, "
    "CAST(0.1 AS FLOAT) AS f, ARRAY(1, 2) AS arr, NAMED_STRUCT('k', 'v') AS st "
    "UNION ALL SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL ORDER BY id"
)

CREATE = (
    "CREATE TABLE trips (id INT, ts BIGINT, name STRING, fare DOUBLE) USING hudi\n"
    "TBLPROPERTIES ('primaryKey' = 'id', 'preCombineField' = 'ts')"
)


@pytest.fixture
def warehouse(spark, tmp_path: Path) -> str:
    """An empty warehouse folder; the ``spark`` fixture makes the shared session active."""
    return str(tmp_path / "warehouse")


def run(warehouse: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, ["sql", "--warehouse", warehouse, *args], input=input)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_table_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY))
    assert r.stderr == ""
    assert r.stdout == (
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        "| id | name | d          | ts                    | amount | f    | arr   | st        |\n"
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        '|  1 | a    | 2024-01-02 | 2024-01-02 03:04:05.5 |   1.50 |  0.1 | [1,2] | {"k":"v"} |\n'
        "|  2 | NULL | NULL       | NULL                  |   NULL | NULL | NULL  | NULL      |\n"
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        "(2 rows)\n"
    )


def test_csv_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY, "--format", "csv"))
    assert r.stdout_bytes.decode() == (
        "id,name,d,ts,amount,f,arr,st\r\n"
        '1,a,2024-01-02,2024-01-02 03:04:05.5,1.50,0.1,"[1,2]","{""k"":""v""}"\r\n'
        "2,,,,,,,\r\n"
    )


def test_json_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY, "--format", "json"))
    assert r.stdout == (
        '{"id":1,"name":"a","d":"2024-01-02","ts":"2024-01-02 03:04:05.5","amount":"1.50",'
        '"f":0.1,"arr":[1,2],"st":{"k":"v"}}\n'
        '{"id":2,"name":null,"d":null,"ts":null,"amount":null,"f":null,"arr":null,"st":null}\n'
    )


def test_statement_without_columns_prints_a_confirmation(warehouse):
    r = ok(
        run(warehouse, "-e", "CREATE TEMPORARY VIEW cli_v AS SELECT 1 AS a; SELECT * FROM cli_v")
    )
    assert r.stdout == "OK\n\n+---+\n| a |\n+---+\n| 1 |\n+---+\n(1 row)\n"
    assert ok(run(warehouse, "-e", "DROP VIEW cli_v", "--format", "json")).stdout == ""


def test_max_rows(warehouse):
    r = ok(run(warehouse, "-e", "SELECT id FROM range(5) ORDER BY id", "--max-rows", "2"))
    assert r.stdout == "+----+\n| id |\n+----+\n|  0 |\n|  1 |\n+----+\n(showing first 2 rows)\n"
    r = ok(run(warehouse, "-e", "SELECT id FROM range(5)", "--max-rows", "2", "--format", "csv"))
    assert r.stdout_bytes == b"id\r\n0\r\n1\r\n"
    assert r.stderr == "(showing first 2 rows)\n"
    r = ok(run(warehouse, "-e", "SELECT id FROM range(3)", "--max-rows", "0", "--format", "json"))
    assert r.stdout == '{"id":0}\n{"id":1}\n{"id":2}\n'


def test_stdin_script(warehouse):
    r = ok(run(warehouse, input="SELECT 1 AS one;\nSELECT 'x' AS two;\n"))
    assert r.stdout == (
        "+-----+\n| one |\n+-----+\n|   1 |\n+-----+\n(1 row)\n\n"
        "+-----+\n| two |\n+-----+\n| x   |\n+-----+\n(1 row)\n"
    )


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_file_script_then_a_second_invocation_sees_the_tables(warehouse, tmp_path):
    script = tmp_path / "setup.sql"
    script.write_text(
        "-- a trips table\n"
        f"{CREATE};\n"
        "/* two rows; one more later */\n"
        "INSERT INTO trips VALUES (1, 10, 'a', 1.5), (2, 10, 'b', 2.5);\n"
        "INSERT INTO trips VALUES (2, 20, 'b2', 3.5); -- an upsert by id\n"
        "SELECT id, name, fare FROM trips ORDER BY id;\n"
    )
    r = ok(run(warehouse, "-f", str(script), "--format", "json"))
    lines = _json_lines(r.stdout)
    metrics = [row for row in lines if "num_inserted_rows" in row]
    assert [(m["num_inserted_rows"], m["num_updated_rows"]) for m in metrics] == [(2, 0), (0, 1)]
    assert [row for row in lines if "num_inserted_rows" not in row][-2:] == [
        {"id": 1, "name": "a", "fare": 1.5},
        {"id": 2, "name": "b2", "fare": 3.5},
    ]

    r = ok(run(warehouse, "-e", "SELECT id, name FROM trips ORDER BY id; SHOW TABLES"))
    first, second = r.stdout.split("\n\n")
    assert first == (
        "+----+------+\n| id | name |\n+----+------+\n|  1 | a    |\n|  2 | b2   |\n"
        "+----+------+\n(2 rows)"
    )
    assert re.search(r"^\| .*\btrips\b.* \|$", second, re.M), second
    assert second.endswith("(1 row)\n")


def test_table_format_of_ddl_and_dml(warehouse):
    r = ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    out = r.stdout
    assert "num_inserted_rows" in out, out
    assert re.search(r"^\| \d{17} ", out, re.M), out  # the instant of the insert
    assert out.endswith("(1 row)\n")


def test_parse_error_names_script_line_and_column(warehouse):
    r = run(warehouse, "-e", "SELECT 1 AS one;\n-- a comment\nSELECT * FORM t WHERE;\nSELECT 2;")
    assert r.exit_code == 1
    assert r.stdout == "+-----+\n| one |\n+-----+\n|   1 |\n+-----+\n(1 row)\n"
    assert r.stderr == (
        "error: line 3, column 15: SQL parse error: Invalid expression / Unexpected token\n"
    )


def test_unknown_table_is_one_line_without_traceback(warehouse):
    r = run(warehouse, "-e", "SELECT 1;\n  SELECT * FROM nope")
    assert r.exit_code == 1
    assert r.stderr.startswith("error: line 2, column 3: ")
    assert "nope" in r.stderr
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.output


def test_spark_errors_are_one_line(warehouse):
    r = run(warehouse, "-e", "SELECT 10 DIV (id - 1) FROM range(3)")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr.startswith("error: line 1, column 1: [DIVIDE_BY_ZERO] Division by zero.")
    assert r.stderr.count("\n") == 1


def test_debug_shows_the_traceback(warehouse):
    r = run(warehouse, "-e", "SELECT * FROM nope", "--debug")
    assert r.exit_code == 1
    assert r.stderr.startswith("Traceback (most recent call last):")
    assert "nope" in r.stderr


def test_conf_sets_options_before_the_script(warehouse, spark):
    key = "spark.hudilite.test.cli_conf"
    try:
        ok(run(warehouse, "--conf", f"{key}=yes", "-e", "SELECT 1"))
        assert spark.conf.get(key) == "yes"
    finally:
        spark.conf.unset(key)


def test_missing_script_file(warehouse, tmp_path):
    r = run(warehouse, "-f", str(tmp_path / "none.sql"))
    assert r.exit_code == 1
    assert r.stderr.startswith("error: Could not open file")
    assert r.stderr.count("\n") == 1


def test_insert_through_a_copied_warehouse_writes_the_copy(warehouse, tmp_path):
    import shutil

    ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    copy = str(tmp_path / "copy")
    shutil.copytree(warehouse, copy)
    ok(run(copy, "-e", "INSERT INTO trips VALUES (2, 10, 'b', 2.5)"))
    query = ["-e", "SELECT id FROM trips ORDER BY id", "--format", "csv"]
    assert ok(run(warehouse, *query)).stdout_bytes == b"id\r\n1\r\n"
    assert ok(run(copy, *query)).stdout_bytes == b"id\r\n1\r\n2\r\n"
