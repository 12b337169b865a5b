"""SQL parsing: golden statement files, script splitting, Hudi's own scripts, parse errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudilite.errors import HudiliteError
from hudilite.sqlext import (
    Call,
    CreateTable,
    InsertInto,
    Query,
    ResetOption,
    SparkStatement,
    SqlParseError,
    TableName,
    TruncateTable,
    parse_statement,
    parse_statements,
    split_script,
    split_script_positions,
    statement_to_dict,
)
from hudilite.sqlext.dialect import parse_script, to_sql
from tests.conftest import FIXTURES

GOLDEN = Path(__file__).parent / "sql_golden"
GOLDEN_SQL = sorted(GOLDEN.glob("*.sql"))


# ---------------------------------------------------------------------------- golden files


def test_golden_files_are_paired() -> None:
    assert len(GOLDEN_SQL) >= 40
    assert {p.stem for p in GOLDEN.glob("*.json")} == {p.stem for p in GOLDEN_SQL}


@pytest.mark.parametrize("sql_path", GOLDEN_SQL, ids=[p.stem for p in GOLDEN_SQL])
def test_golden(sql_path: Path) -> None:
    (text,) = split_script(sql_path.read_text())
    expected = json.loads(sql_path.with_suffix(".json").read_text())
    got = statement_to_dict(parse_statement(text))
    # Round-trip through JSON so tuples/lists and key types compare like the file.
    assert json.loads(json.dumps(got)) == expected


def test_query_text_reparses_to_itself() -> None:
    for sql_path in GOLDEN_SQL:
        stmt = parse_statement(split_script(sql_path.read_text())[0])
        if isinstance(stmt, Query):
            assert parse_statement(stmt.sql) == stmt


# ---------------------------------------------------------------------------- split_script

LICENSE = """/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 *   http://www.apache.org/licenses/LICENSE-2.0;
 */
"""


def test_split_script_comments_and_strings() -> None:
    script = (
        LICENSE
        + "-- a comment; with a semicolon\n"
        + "CREATE TABLE t (a STRING) USING hudi;\n\n"
        + "INSERT INTO t VALUES ('x;y'), (\"q;\"), ('it''s; fine'), ('back\\'slash;');\n"
        + "/* block; comment */ SELECT `we;ird` FROM t -- trailing; comment\n"
        + ";;\n-- only a comment at the end\n"
    )
    assert split_script(script) == [
        "CREATE TABLE t (a STRING) USING hudi",
        "INSERT INTO t VALUES ('x;y'), (\"q;\"), ('it''s; fine'), ('back\\'slash;')",
        "SELECT `we;ird` FROM t -- trailing; comment",
    ]


def test_split_script_without_final_semicolon_and_empty() -> None:
    assert split_script("SELECT 1;\nSELECT 2") == ["SELECT 1", "SELECT 2"]
    assert split_script("") == []
    assert split_script("  -- nothing\n/* here */ ; ") == []


def test_split_script_keeps_comment_markers_inside_strings() -> None:
    assert split_script("SELECT '--x' ; SELECT '/*' ; SELECT 2") == [
        "SELECT '--x'",
        "SELECT '/*'",
        "SELECT 2",
    ]


def test_split_script_positions() -> None:
    script = "/* header\n */\nSELECT 1;  SELECT 2;\n-- c\n   UPDATE t\nSET a = 1"
    assert split_script_positions(script) == [
        ("SELECT 1", 3, 1),
        ("SELECT 2", 3, 12),
        ("UPDATE t\nSET a = 1", 5, 4),
    ]


def test_script_parse_errors_are_positioned_in_the_script() -> None:
    script = LICENSE + "SELECT 1;\nSELECT 2; SELEC 3;\nUPDATE t\n  SET = 1;"
    with pytest.raises(SqlParseError) as info:
        parse_statements(script)
    assert str(info.value) == (
        "SQL parse error at line 7, column 11: Syntax error at or near 'SELEC'"
    )
    script = "SELECT 1;\nUPDATE t\n  SET = 1;"
    with pytest.raises(SqlParseError) as info:
        parse_statements(script)
    assert (info.value.line, info.value.column) == (3, 7)  # the '=' of SET = 1
    assert [type(s).__name__ for s in parse_statements("USE d; SHOW TABLES;")] == [
        "UseDatabase",
        "ShowTables",
    ]


# ---------------------------------------------------------------------------- Hudi's scripts

FIXTURE_SQL = sorted(FIXTURES.rglob("*.sql")) if FIXTURES.is_dir() else []

EXPECTED_KINDS = {
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.sql": ["CreateTable", "InsertInto", "Update"],
    "quickstart_trips_table/mor/avro/v6_trips_8i3d.sql": ["CreateTable", "InsertInto", "Delete"],
    "sample_table/cow/v6_empty.sql": ["CreateTable"],
    "sample_table/cow/v9_txns_simple_nometa.sql": [
        *["CreateTable", "InsertInto", "Update", "Delete", "Update", "Delete", "Update"],
        *["InsertInto", "InsertInto", "InsertInto", "InsertInto", "Call", "InsertInto"],
    ],
    "sample_table/mor/avro/v9_txns_simple_nometa.sql": [
        *["CreateTable", "InsertInto", "Update", "Delete", "Update", "Delete", "Update"],
        *["InsertInto", "InsertInto", "InsertInto", "InsertInto", "Call", "Call", "Call"],
        "InsertInto",
    ],
}
# Hudi 1.1's scripts with the metadata table on end by creating two secondary indexes.
_META_TAIL = ["InsertInto", "SetOption", "IndexStatement", "IndexStatement"]
_META_HEAD = ["CreateTable", "InsertInto", "Update", "Delete", "Update", "Delete", "Update"]
for _kind, _calls in (("cow", ["Call"]), ("mor/avro", ["Call", "Call", "Call"])):
    for _name, _inserts in (("simple", 4), ("complex", 4), ("nonpart", 3)):
        EXPECTED_KINDS[f"sample_table/{_kind}/v9_txns_{_name}_meta.sql"] = [
            *_META_HEAD,
            *["InsertInto"] * _inserts,
            *_calls,
            *_META_TAIL,
        ]
TWO_INSERTS = ["CreateTable", "InsertInto", "InsertInto"]


@pytest.mark.parametrize(
    "sql_path", FIXTURE_SQL, ids=[str(p.relative_to(FIXTURES)) for p in FIXTURE_SQL]
)
def test_hudi_fixture_scripts_parse(sql_path: Path) -> None:
    stmts = [parse_statement(s) for s in split_script(sql_path.read_text())]
    rel = str(sql_path.relative_to(FIXTURES))
    assert [type(s).__name__ for s in stmts] == EXPECTED_KINDS.get(rel, TWO_INSERTS)
    create = stmts[0]
    assert isinstance(create, CreateTable)
    assert create.using == "hudi"
    assert create.options["type"] in ("cow", "mor")
    assert "primaryKey" in create.options
    assert create.columns
    for s in stmts[1:]:
        if isinstance(s, InsertInto | Call):
            assert isinstance(s, Call) or s.table == create.name


def test_hudi_fixture_overwrite_and_call() -> None:
    path = FIXTURES / "sample_table/mor/avro/v9_txns_simple_nometa.sql"
    if not path.exists():
        pytest.skip("../shared/fixtures is absent")
    stmts = [parse_statement(s) for s in split_script(path.read_text())]
    overwrites = [s for s in stmts if isinstance(s, InsertInto) and s.overwrite]
    assert [o.partition for o in overwrites] == [{"region": "eu"}]
    table = "v9_txns_mor_simple_nometa"
    assert [s for s in stmts if isinstance(s, Call)] == [
        Call("run_compaction", [], {"op": "schedule", "table": table}),
        Call("run_compaction", [], {"op": "run", "table": table}),
        Call("run_clustering", [], {"table": table}),
    ]


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("sql", "message", "line", "column"),
    [
        # Spark's wording, at the token Spark's parser names (its 0-based pos + 1).
        ("SELEC 1", "SQL parse error at line 1, column 1: Syntax error at or near 'SELEC'", 1, 1),
        (
            "SELEC * FROM orders",
            "SQL parse error at line 1, column 1: Syntax error at or near 'SELEC'",
            1,
            1,
        ),
        (
            "SELECT * FROM orders WHERE",
            "SQL parse error at line 1, column 27: Syntax error at or near end of input",
            1,
            27,
        ),
        (
            "MERGE INTO t USING s ON t.id = s.id",
            "SQL parse error at line 1, column 36: "
            "There must be at least one WHEN clause in a MERGE statement",
            1,
            36,
        ),
        (
            "SELECT a\nFROM\n  WHERE b = 1",
            "SQL parse error at line 3, column 3: "
            "Syntax error at or near 'WHERE': expected table name",
            3,
            3,
        ),
        (
            "SHOW PARTITIONS",
            "SQL parse error at line 1, column 16: "
            "Syntax error at or near end of input: expected table name",
            1,
            16,
        ),
        (
            "CALL",
            "SQL parse error at line 1, column 5: "
            "Syntax error at or near end of input: expected a procedure name after CALL",
            1,
            5,
        ),
        (
            "CALL f(1",
            "SQL parse error at line 1, column 9: Syntax error at or near end of input: "
            "expected ')'",
            1,
            9,
        ),
        (
            "RUN COMPACTION trips",
            "SQL parse error at line 1, column 16: "
            "Syntax error at or near 'trips': expected ON after RUN COMPACTION",
            1,
            16,
        ),
        (
            "INSERT INTO t\nVALUES (1, 2",
            "SQL parse error at line 2, column 13: Syntax error at or near end of input: "
            "expected ')'",
            2,
            13,
        ),
        (
            "SELECT (a FROM t",
            "SQL parse error at line 1, column 11: Syntax error at or near 'FROM': expected ')'",
            1,
            11,
        ),
        (
            "SELECT a FROM t t2 t3",
            "SQL parse error at line 1, column 20: Syntax error at or near 't3'",
            1,
            20,
        ),
        (
            # sqlglot dropped the empty item and ran SELECT a, b.
            "SELECT a,, b FROM t",
            "SQL parse error at line 1, column 10: "
            "Syntax error at or near ',': expected an item after the separator",
            1,
            10,
        ),
        (
            # sqlglot read it as an UPDATE changing nothing.
            "UPDATE t SET",
            "SQL parse error at line 1, column 13: "
            "Syntax error at or near end of input: expected col = value after UPDATE ... SET",
            1,
            13,
        ),
        (
            "SELECT 'abc",
            "SQL parse error at line 1, column 8: "
            "Syntax error at or near ''': the quoted text is not closed",
            1,
            8,
        ),
        (
            "SELECT 1 /* note",
            "SQL parse error at line 1, column 10: "
            "Syntax error at or near '/': the comment is not closed (append */)",
            1,
            10,
        ),
    ],
)
def test_parse_error_messages(sql: str, message: str, line: int, column: int) -> None:
    with pytest.raises(SqlParseError) as info:
        parse_statement(sql)
    assert str(info.value) == message
    assert (info.value.line, info.value.column) == (line, column)
    assert isinstance(info.value, HudiliteError)
    assert isinstance(info.value, ValueError)


def test_several_statements_and_an_empty_one() -> None:
    with pytest.raises(SqlParseError, match="expected one SQL statement, got several"):
        parse_statement("SELECT 1; SELECT 2")
    with pytest.raises(SqlParseError, match=r"^SQL parse error: empty SQL statement$"):
        parse_statement("  ")


@pytest.mark.parametrize(
    ("sql", "target", "words", "opaque"),
    [
        ("GRANT SELECT ON t TO bob", None, "GRANT SELECT ON", False),
        ("SHOW GRANTS", None, "SHOW GRANTS", True),
        ("VACUUM trips", None, "VACUUM trips", True),
        # Persistent views are hudilite's (sql_golden/create_view.sql); temporary ones Spark's.
        ("ALTER VIEW v RENAME TO w", TableName(None, "v"), "ALTER VIEW v", False),
        ("CREATE TEMP VIEW v AS SELECT 1", TableName(None, "v"), "CREATE TEMP VIEW", False),
        ("ALTER TABLE t ADD PARTITION (c=1)", TableName(None, "t"), "ALTER TABLE t", False),
        ("REFRESH TABLE t", TableName(None, "t"), "REFRESH TABLE t", False),
        ("MSCK REPAIR TABLE t", None, "MSCK REPAIR TABLE", True),
    ],
)
def test_other_statements_are_left_to_spark(
    sql: str, target: TableName | None, words: str, opaque: bool
) -> None:
    stmt = parse_statement(sql)
    assert isinstance(stmt, SparkStatement)
    assert (stmt.sql, stmt.target, stmt.words, stmt.opaque) == (sql, target, words, opaque)
    if opaque:
        assert sql.split()[-1] in stmt.names


def test_a_misspelt_statement_is_a_parse_error_not_a_pass_through() -> None:
    with pytest.raises(SqlParseError, match="line 1, column 1: Syntax error at or near 'SELEC'"):
        parse_statement("SELEC uuid FROM trips")
    with pytest.raises(SqlParseError) as info:
        parse_statement("SELEC uuid")
    assert str(info.value) == "SQL parse error at line 1, column 1: Syntax error at or near 'SELEC'"
    assert isinstance(parse_statement("RESET"), ResetOption)


# ---------------------------------------------------------------------------- dialect


def test_call_is_not_a_keyword_elsewhere() -> None:
    assert parse_statement("SELECT call FROM t") == Query("SELECT call FROM t")
    assert parse_statement("SELECT run, schedule FROM t") == Query("SELECT run, schedule FROM t")


def test_dialect_generates_hudi_statements() -> None:
    for sql in (
        "CALL system.show_commits(table => 't', limit => 10)",
        "SHOW TABLES IN db",
        "SHOW COMPACTION ON db.t LIMIT 3",
        "SHOW CREATE TABLE t",
    ):
        (node,) = parse_script(sql)
        assert to_sql(node) == sql


def test_time_travel_forms_are_kept() -> None:
    stmt = parse_statement("SELECT * FROM t FOR SYSTEM_TIME AS OF '2024-01-01' AS x")
    assert stmt == Query("SELECT * FROM t TIMESTAMP AS OF '2024-01-01' AS x")
    stmt = parse_statement("SELECT * FROM db.t VERSION AS OF 20240101")
    assert isinstance(stmt, Query)
    assert "AS OF 20240101" in stmt.sql


def test_table_name_parts() -> None:
    stmt = parse_statement("TRUNCATE TABLE `my db`.`t-1`")
    assert statement_to_dict(stmt) == {
        "kind": "TruncateTable",
        "name": {"db": "my db", "table": "t-1"},
    }
    assert isinstance(stmt, TruncateTable)
    assert stmt.name == TableName("my db", "t-1")
