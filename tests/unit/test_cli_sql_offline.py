"""``hudilite sql`` against a stand-in session (no JVM): inputs, error lines, exit codes,
the interactive prompt. The real session is exercised in tests/spark/test_cli_sql.py."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from hudilite.cli import commands as cli
from hudilite.errors import TableNotFoundError
from hudilite.cli.sql_output import ResultPrinter
from hudilite.sqlext.statements import parse_statement, split_script_positions


class FakeSession:
    """Parses each statement for real; ``boom`` names a missing table; ``crash`` is a bug."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.set: list[str] = []

    def sql(self, text: str) -> None:
        self.set.append(text)

    def iter_script(self, text: str) -> Iterator[SimpleNamespace]:
        for sql, line, column in split_script_positions(text):
            stmt = parse_statement(sql)
            if "boom" in sql:
                raise TableNotFoundError("table default.boom not found")
            if "crash" in sql:
                raise RuntimeError("a bug")
            self.ran.append(sql)
            yield SimpleNamespace(
                sql=sql, line=line, column=column, kind=type(stmt).__name__, df=None, write=None
            )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSession:
    session = FakeSession()
    monkeypatch.setattr(cli, "_connect", lambda warehouse, database, debug: session)
    return session


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli.main, ["sql", *args], input=input)


def test_statements_print_confirmations_in_order(fake):
    r = run("-e", "CREATE DATABASE d; USE d;\nDROP TABLE t")
    assert r.exit_code == 0, r.output
    assert r.stdout == "CREATE DATABASE\n\nUSE DATABASE\n\nDROP TABLE\n"
    assert r.stderr == ""
    assert fake.ran == ["CREATE DATABASE d", "USE d", "DROP TABLE t"]


def test_csv_and_json_print_nothing_for_statements_without_rows(fake):
    assert run("-e", "USE d", "--format", "csv").stdout == ""
    assert run("-e", "USE d", "--format", "json").stdout == ""


def test_parse_error_is_one_line_with_script_position(fake):
    script = "USE a;\n-- a comment\nSELECT * FORM t WHERE;\nUSE b;"
    r = run("-e", script)
    assert r.exit_code == 1
    assert r.stdout == "USE DATABASE\n"
    assert r.stderr == (
        "error: line 3, column 15: SQL parse error: Invalid expression / Unexpected token\n"
    )
    assert fake.ran == ["USE a"]


def test_parse_error_column_counts_from_statement_start_on_its_first_line(fake):
    r = run("-e", "USE a; SELECT 1 +* 2")
    assert r.exit_code == 1
    assert r.stderr.startswith("error: line 1, column 20: SQL parse error")
    r = run("-e", "USE a;\n  SELECT 1,\n  FROM")
    assert r.stderr.startswith("error: line 3, column ")


def test_tokenizer_error_gets_statement_start(fake):
    r = run("-e", "USE a;\n   SELECT 'open")
    assert r.exit_code == 1
    assert r.stderr.startswith("error: line 2, column 4: SQL parse error: ")
    assert r.stderr.count("\n") == 1


def test_hudilite_error_at_statement_start_then_exit_1(fake):
    r = run("-e", "USE a;\n\n  SELECT * FROM boom;\nUSE c")
    assert r.exit_code == 1
    assert r.stdout == "USE DATABASE\n"
    assert r.stderr == "error: line 3, column 3: table default.boom not found\n"
    assert fake.ran == ["USE a"]


def test_debug_prints_the_traceback(fake):
    r = run("-e", "SELECT * FROM boom", "--debug")
    assert r.exit_code == 1
    assert r.stderr.startswith("Traceback (most recent call last):")
    assert "TableNotFoundError: table default.boom not found" in r.stderr
    assert "error:" not in r.stderr


def test_other_exceptions_are_not_swallowed(fake):
    r = run("-e", "SELECT crash")
    assert r.exit_code == 1
    assert isinstance(r.exception, RuntimeError)


def test_file_script_and_file_errors(fake, tmp_path):
    script = tmp_path / "s.sql"
    script.write_text("-- setup\nUSE a; /* ; */ USE b;\n")
    r = run("-f", str(script))
    assert r.exit_code == 0, r.output
    assert fake.ran == ["USE a", "USE b"]

    missing = tmp_path / "missing.sql"
    r = run("-f", str(missing))
    assert r.exit_code == 1
    assert r.stderr == f"error: Could not open file {str(missing)!r}: No such file or directory\n"
    r = run("-f", str(tmp_path))
    assert r.exit_code == 1
    assert r.stderr.startswith("error: Could not open file")

    assert run("-f", str(script), "-e", "USE a").exit_code == 2


def test_stdin_script(fake):
    r = run(input="USE a;\nUSE b;\n")
    assert r.exit_code == 0, r.output
    assert fake.ran == ["USE a", "USE b"]


def test_conf_items_are_set_before_the_script(fake):
    r = run("--conf", "spark.sql.shuffle.partitions=3", "--conf", "hoodie.x = y", "-e", "USE a")
    assert r.exit_code == 0, r.output
    assert fake.set == ["SET spark.sql.shuffle.partitions=3", "SET hoodie.x=y"]
    assert run("--conf", "novalue", "-e", "USE a").exit_code == 2


@pytest.mark.parametrize(
    ("text", "complete", "rest"),
    [
        ("", "", ""),
        ("SELECT 1\n", "", "SELECT 1\n"),
        ("SELECT 1;\n", "SELECT 1;\n", ""),
        ("SELECT 1; SELECT\n", "SELECT 1; ", "SELECT\n"),
        ("SELECT 1;\nSELECT 'a;\n", "SELECT 1;\n", "SELECT 'a;\n"),
        ("SELECT 1; -- done;\n", "SELECT 1; -- done;\n", ""),
        ("SELECT 1; /* open;\n", "", "SELECT 1; /* open;\n"),
        ("-- only a comment\n", "-- only a comment\n", ""),
    ],
)
def test_split_complete(text, complete, rest):
    assert cli.split_complete(text) == (complete, rest)


def test_interactive_prompt(capsys):
    fake = FakeSession()
    lines = iter(["", "USE", "  a;", "USE b; USE", "c;", "SELECT 1 +* 2;", "SELECT crash;", "quit"])
    prompts: list[str] = []

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        return next(lines)

    out: list[str] = []
    printer = ResultPrinter("table", out=out.append)
    cli._interactive(fake, printer, False, read_line)  # type: ignore[arg-type]
    assert fake.ran == ["USE\n  a", "USE b", "USE\nc"]
    assert prompts == [
        cli.PROMPT,
        cli.PROMPT,
        cli.CONTINUE_PROMPT,
        cli.PROMPT,
        cli.CONTINUE_PROMPT,
        cli.PROMPT,
        cli.PROMPT,
        cli.PROMPT,
    ]
    assert "".join(out) == "USE DATABASE\n" * 3
    err = capsys.readouterr().err
    assert "error: line 1, column 13: SQL parse error" in err
    assert "RuntimeError: a bug" in err  # a bug shows its traceback but the prompt goes on


def test_interactive_eof_leaves(capsys):
    fake = FakeSession()

    def read_line(prompt: str) -> str:
        raise EOFError

    cli._interactive(fake, ResultPrinter(out=print), False, read_line)  # type: ignore[arg-type]
    assert fake.ran == []
