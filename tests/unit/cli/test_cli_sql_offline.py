"""``hudilite sql`` against a stand-in session (no JVM): inputs, error lines, exit codes,
the interactive prompt. The real session is exercised in tests/spark/test_cli_sql.py."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from hudilite.cli import commands as cli
from hudilite.cli.sql_output import ResultPrinter
from hudilite.errors import TableNotFoundError
from hudilite.sqlext.statements import parse_statement, split_script_positions


class FakeSession:
    """Parses each statement for real; ``boom`` names a missing table; ``crash`` is a bug."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.set: list[str] = []
        self.cancelled = 0
        self.spark = SimpleNamespace(sparkContext=SimpleNamespace(cancelAllJobs=self._cancel))

    def _cancel(self) -> None:
        self.cancelled += 1

    def sql(self, text: str) -> None:
        self.set.append(text)

    def iter_script(self, text: str) -> Iterator[SimpleNamespace]:
        for sql, line, column in split_script_positions(text):
            stmt = parse_statement(sql)
            if "boom" in sql:
                raise TableNotFoundError("table default.boom not found")
            if "crash" in sql:
                raise RuntimeError("a bug")
            if "readonly" in sql:
                raise PermissionError(13, "Permission denied", "/wh/_catalog/default/tables")
            if "ctrlc" in sql:
                raise KeyboardInterrupt
            if "late" in sql:  # Ctrl-C after the statement's last Spark job
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)
            if "sigint" in sql:  # Ctrl-C while a Spark job runs: the job fails as cancelled
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)  # the cancelling thread
                raise RuntimeError("Job 3 cancelled")
            self.ran.append(sql)
            yield SimpleNamespace(
                sql=sql,
                line=line,
                column=column,
                kind=type(stmt).__name__,
                df=None,
                write=None,
                warnings=(),
            )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSession:
    session = FakeSession()
    session.start = None

    def fake_connect(warehouse, database, start):
        session.start = start
        return session

    monkeypatch.setattr(cli, "_connect", fake_connect)
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
    assert r.stderr == ("error: line 3, column 15: SQL parse error: Syntax error at or near 't'\n")
    assert fake.ran == ["USE a"]


def test_parse_error_column_counts_from_statement_start_on_its_first_line(fake):
    r = run("-e", "USE a; SELECT 1 +* 2")
    assert r.exit_code == 1
    assert r.stderr.startswith("error: line 1, column 20: SQL parse error")
    r = run("-e", "USE a;\n  SELECT 1,\n  FROM")
    assert r.stderr.startswith("error: line 3, column ")


def test_tokenizer_error_names_the_open_quote(fake):
    r = run("-e", "USE a;\n   SELECT 'open")
    assert r.exit_code == 1
    assert r.stderr == (
        "error: line 2, column 11: SQL parse error: "
        "Syntax error at or near ''': the quoted text is not closed\n"
    )
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


def test_other_exceptions_are_one_line_too(fake):
    r = run("-e", "SELECT crash")
    assert r.exit_code == 1
    assert r.stderr == "error: line 1, column 1: internal error: RuntimeError: a bug\n"
    r = run("-e", "SELECT crash", "--debug")
    assert r.exit_code == 1
    assert "Traceback" in r.stderr and "RuntimeError: a bug" in r.stderr


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
    assert fake.set == ["SET hoodie.x=y"]  # spark.* keys go to the session's start
    assert fake.start.conf == {"spark.sql.shuffle.partitions": "3"}
    assert run("--conf", "novalue", "-e", "USE a").exit_code == 2


def test_static_spark_settings_reach_the_session_start(fake, monkeypatch):
    monkeypatch.delenv("HUDILITE_SPARK_LOG_LEVEL", raising=False)
    r = run(
        "--master", "local[1]",
        "--driver-memory", "2g",
        "--executor-memory", "3g",
        "--conf", "spark.driver.maxResultSize=1g",
        "-e", "USE a",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert fake.set == []
    assert fake.start == cli.SparkStart(
        master="local[1]",
        driver_memory="2g",
        conf={"spark.driver.maxResultSize": "1g", "spark.executor.memory": "3g"},
        log_level="OFF",
    )
    assert run("--verbose", "-e", "USE a").exit_code == 0
    assert fake.start.log_level == "WARN"
    assert run("--log-level", "info", "-e", "USE a").exit_code == 0
    assert fake.start.log_level == "INFO"


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


# ---- hudilite demo: its own folder, removes only what it made ------------------------------


def test_demo_default_folder_is_its_own(monkeypatch, tmp_path):
    from hudilite.cli import demo as demo_mod

    monkeypatch.setenv("HUDILITE_WAREHOUSE", str(tmp_path / "wh"))
    seen: list[str] = []
    monkeypatch.setattr(demo_mod, "run_demo", lambda d, **kw: seen.append(d))
    monkeypatch.setattr(cli, "run_demo", lambda d, **kw: seen.append(d), raising=False)
    r = CliRunner().invoke(cli.main, ["demo"])
    assert r.exit_code == 0, r.output
    assert seen == ["./hudilite-demo"]


def test_demo_refuses_a_table_it_did_not_create(tmp_path):
    user_table = tmp_path / "trips"
    (user_table / ".hoodie").mkdir(parents=True)
    (user_table / "data.parquet").write_bytes(b"user data")
    r = CliRunner().invoke(cli.main, ["demo", "--dir", str(tmp_path)])
    assert r.exit_code == 1
    assert r.stderr == (
        f"error: {user_table} exists and was not created by hudilite demo; "
        "choose another --dir or remove it yourself\n"
    )
    assert (user_table / "data.parquet").read_bytes() == b"user data"


def test_demo_replaces_only_its_own_table(tmp_path):
    from hudilite.cli.demo import prepare

    path = prepare(str(tmp_path / "d"))
    assert path == str(tmp_path / "d" / "trips")
    (tmp_path / "d" / "trips").mkdir()
    (tmp_path / "d" / "trips" / "old").write_text("x")
    (tmp_path / "d" / "mine").write_text("kept")
    assert prepare(str(tmp_path / "d")) == path
    assert not (tmp_path / "d" / "trips").exists()
    assert (tmp_path / "d" / "mine").read_text() == "kept"


# ---- every error is one line; Ctrl-C; labels and timing ------------------------------------


def test_permission_error_is_one_line(fake):
    r = run("-e", "USE a;\nCREATE TABLE readonly (id INT)")
    assert r.exit_code == 1
    assert r.stderr == (
        "error: line 2, column 1: [Errno 13] Permission denied: '/wh/_catalog/default/tables'\n"
    )


def test_ctrl_c_cancels_and_exits_130(fake):
    r = run("-e", "USE a;\nSELECT ctrlc;\nUSE b")
    assert r.exit_code == cli.EXIT_INTERRUPTED == 130
    assert r.stderr == f"error: line 2, column 1: {cli.INTERRUPTED}\n"
    assert fake.ran == ["USE a"]
    assert fake.cancelled == 1


def test_ctrl_c_at_the_prompt_goes_on(capsys):
    fake = FakeSession()
    lines = iter(["SELECT ctrlc;", "USE a;", "quit"])
    out: list[str] = []
    cli._interactive(fake, ResultPrinter(out=out.append), False, lambda p: next(lines))  # type: ignore[arg-type]
    assert fake.ran == ["USE a"] and fake.cancelled == 1
    assert capsys.readouterr().err == f"error: line 1, column 1: {cli.INTERRUPTED}\n"


def test_file_scripts_label_results_and_time_them(fake, tmp_path, monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock) * 0.5)
    script = tmp_path / "s.sql"
    script.write_text("USE a;\n\nCREATE TABLE t (id INT) USING hudi\n  TBLPROPERTIES (x = 1);\n")
    r = run("-f", str(script))
    assert r.exit_code == 0, r.output
    assert r.stdout == (
        "-- line 1: USE a\nUSE DATABASE\nTime taken: 0.50 seconds\n\n"
        "-- line 3: CREATE TABLE t (id INT) USING hudi ...\nCREATE TABLE\n"
        "Time taken: 0.50 seconds\n"
    )
    assert r.stderr == ""
    # csv and json keep standard output to the rows; -e prints no timing unless asked
    assert run("-f", str(script), "--format", "json").stdout == ""
    assert run("-e", "USE a").stdout == "USE DATABASE\n"
    r = run("-e", "USE a", "--format", "csv", "--timing")
    assert (r.stdout, r.stderr) == ("", "Time taken: 0.50 seconds\n")


def test_error_messages_of_spark_and_worker_errors():
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PythonException

    worker = PythonException(
        "\n  An exception was thrown from the Python worker. Please see the stack trace below."
        '\nTraceback (most recent call last):\n  File "x.py", line 1, in f\n'
        "PermissionError: [Errno 13] Permission denied: '/wh/t/p/f.parquet'\n"
    )
    assert cli.error_message(worker) == (
        "PermissionError: [Errno 13] Permission denied: '/wh/t/p/f.parquet'"
    )
    java = SimpleNamespace(toString=lambda: "java.io.IOException: Mkdirs failed\n\tat x.y")
    err = Py4JJavaError.__new__(Py4JJavaError)
    err.java_exception = java
    assert cli.error_message(err) == "java.io.IOException: Mkdirs failed"


def test_first_ctrl_c_cancels_the_spark_jobs_from_another_thread(fake):
    before = signal.getsignal(signal.SIGINT)
    r = run("-e", "USE a;\nSELECT sigint;\nUSE b")
    assert r.exit_code == 130
    assert r.stderr == f"error: line 2, column 1: {cli.INTERRUPTED}\n"
    assert fake.ran == ["USE a"]
    assert fake.cancelled >= 1
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back


def test_the_command_starts_without_importing_pandas():
    """Start-up time (docs/benchmarks.md): pandas (about a second to import) is not needed
    before a statement asks for it, so importing the command must not load it."""
    import subprocess
    import sys

    code = "import sys, hudilite.cli.commands; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False\n", out.stderr


def test_ctrl_c_as_a_statement_finishes_stops_the_script_after_it(fake):
    r = run("-e", "USE a;\nUSE late;\nUSE b")
    assert r.exit_code == 130
    assert r.stderr == f"error: line 2, column 1: {cli.INTERRUPTED_AFTER}\n"
    assert fake.ran == ["USE a", "USE late"]
