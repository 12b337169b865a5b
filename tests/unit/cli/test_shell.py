"""The interactive shell of ``hudilite sql`` without a JVM: completion over a real
warehouse catalog, history kept across runs, statements across lines, the progress line,
and the timing line the prompt prints."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from hudilite.catalog import Catalog, ViewColumn, ViewEntry
from hudilite.cli import commands as cli
from hudilite.cli import shell
from hudilite.cli.sql_output import ResultPrinter
from hudilite.config import TableConfig
from hudilite.schema import arrow_to_avro_schema
from hudilite.storage.fs import FileSystemGateway


def _hudi_table(path: Path) -> None:
    """A Hudi table folder holding only ``hoodie.properties`` (its create schema)."""
    schema = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("fare", pa.float64())])
    avro = arrow_to_avro_schema(schema, "trips_record", "hoodie.trips")
    config = TableConfig.new(
        "trips",
        record_key_fields=["uuid"],
        create_schema=avro if isinstance(avro, str) else json.dumps(avro),
    )
    FileSystemGateway(str(path)).write_bytes(".hoodie/hoodie.properties", config.render().encode())


@pytest.fixture
def completer(tmp_path: Path) -> shell.SqlCompleter:
    catalog = Catalog(str(tmp_path / "wh"))
    _hudi_table(tmp_path / "trips")
    catalog.register_table("default", "trips", str(tmp_path / "trips"))
    catalog.create_database("sales")
    catalog.create_view(
        ViewEntry(
            name="top_fares",
            database="sales",
            sql="SELECT uuid, fare FROM default.trips",
            columns=(ViewColumn("uuid", "string"), ViewColumn("fare", "double")),
            query_columns=("uuid", "fare"),
            context_database="default",
        )
    )
    temp = SimpleNamespace(name="tmp_rows", isTemporary=True)
    spark = SimpleNamespace(catalog=SimpleNamespace(listTables=lambda: [temp]))
    session = SimpleNamespace(catalog=catalog, current_database="default", spark=spark)
    return shell.SqlCompleter(shell.SessionSource(session))  # type: ignore[arg-type]


def test_completes_tables_procedures_columns_and_keywords(completer: shell.SqlCompleter) -> None:
    assert completer.candidates("SELECT * FROM tr") == ("tr", ["trips"])
    assert completer.candidates("SELECT * FROM t") == ("t", ["tmp_rows", "trips"])
    assert completer.candidates("CALL show_c") == (
        "show_c",
        [
            "show_clean_plans",
            "show_cleans",
            "show_cleans_metadata",
            "show_clustering",
            "show_commit_extra_metadata",
            "show_commit_files",
            "show_commit_partitions",
            "show_commit_write_stats",
            "show_commits",
            "show_commits_metadata",
            "show_compaction",
        ],
    )
    assert completer.candidates("SELECT trips.") == (
        "",
        [
            "_hoodie_commit_time",
            "_hoodie_commit_seqno",
            "_hoodie_record_key",
            "_hoodie_partition_path",
            "_hoodie_file_name",
            "uuid",
            "ts",
            "fare",
        ],
    )
    assert completer.candidates("SELECT t.f") == ("f", [])  # no table aliased t yet
    assert completer.candidates("SELECT t.f FROM trips t WHERE t.f") == ("f", ["fare"])
    assert completer.candidates("SELECT * FROM sales.") == ("", ["top_fares"])
    assert completer.candidates("SELECT sales.top_fares.u") == ("u", ["uuid"])
    # Keywords follow the case typed; columns of the tables named come first.
    assert completer.candidates("SELECT fa FROM trips WHERE F")[1][:2] == ["fare", "FALSE"]
    assert completer.candidates("SELECT fa FROM trips WHERE f")[1][:2] == ["fare", "false"]
    assert completer.candidates("sel") == ("sel", ["select"])
    assert completer.candidates("SHOW VIE") == ("VIE", ["VIEW", "VIEWS"])


@pytest.fixture
def pipe() -> Iterator[Any]:
    with create_pipe_input() as inp:
        yield inp


def test_history_persists_across_runs(tmp_path: Path, pipe: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv(shell.HISTORY_ENV, str(tmp_path / "h" / "history"))
    assert shell.history_path() == tmp_path / "h" / "history"
    reader = shell.LineReader(input=pipe, output=DummyOutput())
    pipe.send_text("SELECT\n  1;\n")
    assert reader(shell.PROMPT) == "SELECT\n  1;"  # Enter went on until the ';'
    pipe.send_text("SHOW TABLES;\n")
    assert reader(shell.PROMPT) == "SHOW TABLES;"
    assert (tmp_path / "h" / "history").exists()
    again = shell.LineReader(input=pipe, output=DummyOutput())
    # Up arrow recalls the previous run's statements, newest first.
    pipe.send_text("\x1b[A\x1b[A\n")
    assert again(shell.PROMPT) == "SELECT\n  1;"


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("", True),
        ("quit", True),
        ("exit;", True),
        ("SELECT 1", False),
        ("SELECT 1;", True),
        ("SELECT ';'", False),
        ("SELECT 1 -- ;", False),
        ("SELECT 1; /* open", False),
        ("SELECT 1;\nSELECT 2", False),
        ("SELECT\n1; SELECT 2;", True),
    ],
)
def test_statement_complete(text: str, complete: bool) -> None:
    assert shell.statement_complete(text) is complete


class _Session:
    """Runs nothing: each statement yields one result without rows."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def iter_script(self, sql: str) -> Iterator[Any]:
        self.ran.append(sql)
        yield SimpleNamespace(sql=sql, kind="UseDatabase", df=None, write=None, warnings=())


def test_prompt_runs_multi_line_statements_and_times_them(monkeypatch: Any) -> None:
    clock = iter(range(100))
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock) * 0.25)
    statements = iter(["USE a;", "USE\nb; USE c;", "exit"])
    out: list[str] = []
    session = _Session()
    cli._interactive(
        session,  # type: ignore[arg-type]
        ResultPrinter("table", out=out.append),
        False,
        lambda prompt: next(statements),
        timing=True,
    )
    assert session.ran == ["USE a", "USE\nb", "USE c"]
    assert "".join(out) == (
        "USE DATABASE\nTime taken: 0.25 seconds\n"
        "USE DATABASE\nTime taken: 0.25 seconds\n"
        "\nUSE DATABASE\nTime taken: 0.25 seconds\n"
    )


def test_progress_line() -> None:
    assert shell.progress_line([]) == ""
    one = shell.progress_line([(3, 5, 2, 20)], width=40)
    assert one == "[Stage 3:" + "====>" + " " * 13 + "(5 + 2) / 20]"
    assert len(one) == 40
    two = shell.progress_line([(1, 0, 2, 4), (2, 4, 0, 4)], width=60)
    assert two == "[Stage 1:>" + " " * 8 + "(0 + 2) / 4][Stage 2:" + "=" * 9 + "(4 + 0) / 4]"


def test_progress_draws_then_clears(tmp_path: Path) -> None:
    info = SimpleNamespace(numCompletedTasks=1, numActiveTasks=1, numTasks=2)
    tracker = SimpleNamespace(getActiveStageIds=lambda: [7], getStageInfo=lambda i: info)
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    written: list[str] = []
    out = SimpleNamespace(write=written.append, flush=lambda: None)
    progress = shell.StageProgress(spark, out, interval=0.01, delay=0.0)  # type: ignore[arg-type]
    with progress.running():
        for _ in range(200):
            if written:
                break
            __import__("time").sleep(0.01)
    assert written[0].startswith("\r[Stage 7:") and written[0].endswith("(1 + 1) / 2]")
    assert written[-1] == "\r" + " " * (len(written[0]) - 1) + "\r"


def _cursor_after(text: str) -> tuple[str, int]:
    """A terminal line after ``text``: what it shows and the cursor's column."""
    screen: list[str] = []
    col = 0
    for ch in text:
        if ch == "\r":
            col = 0
            continue
        if col < len(screen):
            screen[col] = ch
        else:
            screen.append(ch)
        col += 1
    return "".join(screen).rstrip(), col


def test_progress_leaves_the_cursor_where_the_line_ends() -> None:
    # Stages run, then none are active (the job finished, the result not yet printed): the
    # line shrinks to nothing and the cursor must go back to column 0 (it stayed at 80, and
    # the result grid began there).
    stages = [[(7, 1, 1, 2)], [(8, 0, 1, 9)], []]
    calls = iter(range(1000))
    info = {7: (1, 1, 2), 8: (0, 1, 9)}

    def active() -> list[int]:
        n = next(calls)
        return [s[0] for s in stages[min(n, 2)]]

    tracker = SimpleNamespace(
        getActiveStageIds=active,
        getStageInfo=lambda i: SimpleNamespace(
            numCompletedTasks=info[i][0], numActiveTasks=info[i][1], numTasks=info[i][2]
        ),
    )
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    written: list[str] = []
    out = SimpleNamespace(write=written.append, flush=lambda: None)
    progress = shell.StageProgress(spark, out, interval=0.001, delay=0.0)  # type: ignore[arg-type]
    stop = threading.Event()
    thread = threading.Thread(target=progress._run, args=(stop,))
    thread.start()
    for _ in range(500):
        if progress._drawn == 0 and len(written) >= 3:
            break
        time.sleep(0.002)
    stop.set()
    thread.join()
    shown, col = _cursor_after("".join(written))
    assert (shown, col) == ("", 0)


def test_unwritable_history_keeps_the_prompt_working(tmp_path: Path, pipe: Any) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    reader = shell.LineReader(history=blocker / "history", input=pipe, output=DummyOutput())
    pipe.send_text("SELECT 1;\n")
    assert reader(shell.PROMPT) == "SELECT 1;"
