"""The ``hudilite`` command line (composition root: the top layer, it may import any other)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NoReturn

import click
from pyspark.logger import PySparkLogger

from hudilite.cli.demo import run_demo
from hudilite.cli.server_commands import thriftserver, users
from hudilite.cli.shell import (
    CONTINUE_PROMPT,
    PROMPT,
    SessionSource,
    StageProgress,
    make_reader,
    split_complete,
)
from hudilite.cli.sql_output import FORMATS, ResultPrinter, statement_label
from hudilite.errors import HudiliteWarning
from hudilite.spark.session import (
    LOG_LEVEL_ENV,
    PYSPARK_JSON_LOGGERS,
    VERBOSE_LEVELS,
    active_session,
    spark_session,
)
from hudilite.spark.task_errors import fold, one_line
from hudilite.sqlext.session import Session, connect
from hudilite.sqlext.statements import SqlParseError, split_script_positions
from hudilite.storage.fs import set_storage_options


@click.group()
@click.version_option(package_name="hudilite")
def main() -> None:
    """hudilite: Apache Hudi tables for PySpark."""
    # Statements' warnings (unknown option keys, ...) print as "warning:" lines instead.
    warnings.filterwarnings("ignore", category=HudiliteWarning)


@main.command()
@click.option(
    "--dir",
    "--warehouse",
    "directory",
    default="./hudilite-demo",
    show_default=True,
    metavar="DIR",
    help="Folder the demo table DIR/trips is created in (its own, not the SQL warehouse).",
)
@click.option("--table-version", type=click.Choice(["6", "8"]), default="6", show_default=True)
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def demo(directory: str, table_version: str, debug: bool) -> None:
    """Create a trips table, upsert, delete, time-travel and print it.

    A second run replaces DIR/trips only if an earlier demo made it; anything else
    there stops the demo (nothing is removed).
    """
    try:
        run_demo(directory, table_version=6 if table_version == "6" else 8, echo=click.echo)
    except KeyboardInterrupt:
        click.echo("error: interrupted (Ctrl-C)", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if debug:
            raise
        _report(exc, debug)
        sys.exit(1)


# --------------------------------------------------------------------------------------------
# hudilite sql

# Exit status after Ctrl-C, as shells report a process ended by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130
LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")


@dataclass(frozen=True)
class SparkStart:
    """How ``hudilite sql`` starts its SparkSession (when none is active yet)."""

    master: str | None = None
    driver_memory: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    log_level: str = "OFF"


@main.command()
@click.option(
    "--warehouse",
    default=None,
    metavar="DIR",
    help="Warehouse folder.  [default: $HUDILITE_WAREHOUSE or ./hudilite-warehouse]",
)
@click.option("--database", default="default", show_default=True, help="Database to start in.")
@click.option(
    "-e", "--execute", "text", metavar="SQL", help="Run these statements (separated by ';')."
)
@click.option("-f", "--file", "file", metavar="FILE", help="Run the statements in FILE.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option(
    "--max-rows",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Rows shown per result (0: all).",
)
@click.option(
    "--master",
    default=None,
    metavar="URL",
    help="Spark master: local[4], spark://host:7077, ...  "
    "[default: $HUDILITE_SPARK_MASTER or local[<cores>]]",
)
@click.option(
    "--driver-memory",
    default=None,
    metavar="SIZE",
    help="Memory of the driver JVM, e.g. 8g.  [default: $HUDILITE_DRIVER_MEMORY or 4g]",
)
@click.option(
    "--executor-memory", default=None, metavar="SIZE", help="Memory per executor (clusters)."
)
@click.option(
    "--conf",
    "confs",
    multiple=True,
    metavar="KEY=VALUE",
    help="A spark.* setting, applied when the Spark session starts (static ones such as "
    "spark.driver.memory too), or an option SET before the statements (hoodie.*, "
    "fs.s3a.*, ...). Repeatable.",
)
@click.option(
    "--timing/--no-timing",
    default=None,
    help="Print 'Time taken: ... seconds' after each statement (on standard error for csv "
    "and json).  [default: on for -f FILE and the prompt in table format]",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default=None,
    help="Spark's log level.  [default: $HUDILITE_SPARK_LOG_LEVEL or OFF]",
)
@click.option(
    "--verbose", is_flag=True, help="Show Spark's start-up messages and warnings (level WARN)."
)
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def sql(
    warehouse: str | None,
    database: str,
    text: str | None,
    file: str | None,
    fmt: str,
    max_rows: int,
    master: str | None,
    driver_memory: str | None,
    executor_memory: str | None,
    confs: tuple[str, ...],
    timing: bool | None,
    log_level: str | None,
    verbose: bool,
    debug: bool,
) -> None:
    """Run SQL on the tables of a warehouse.

    Statements come from -e, from -f FILE, from standard input when it is not a
    terminal, or else from an interactive prompt (statements end with ';'; exit,
    quit or Ctrl-D leaves). Each statement's rows are printed as it finishes; with
    -f each result is headed by its statement's line. Every error is one line on
    standard error and stops a script with exit status 1; Ctrl-C cancels the running
    statement (a write in progress is rolled back) and exits with status 130.
    """
    if text is not None and file is not None:
        raise click.UsageError("give -e or -f, not both")
    settings = [_conf_item(item) for item in confs]
    spark_conf = {k: v for k, v in settings if k.startswith("spark.")}
    if executor_memory:
        spark_conf.setdefault("spark.executor.memory", executor_memory)
    level = (
        log_level
        or ("WARN" if verbose else None)
        or os.environ.get(LOG_LEVEL_ENV)
        or ("ERROR" if debug else "OFF")
    ).upper()
    start = SparkStart(master, driver_memory, spark_conf, level)
    # Called before each piece of output (the prompt's progress line clears itself).
    before_output: list[Callable[[], None]] = []

    def out(text: str) -> None:
        for hook in before_output:
            hook()
        click.echo(text, nl=False)

    printer = ResultPrinter(fmt, max_rows, out=out, note=lambda s: click.echo(s, err=True))
    session: Session | None = None
    with _quiet_logs(level):
        try:
            if file is not None:
                text = _read_script(file)
            stdin = sys.stdin
            interactive = text is None and stdin.isatty()
            if text is None and not interactive:
                text = stdin.read()
            if timing is None:
                timing = (file is not None or interactive) and fmt == "table"
            # fs.s3a.* settings must be in place before the catalog opens the warehouse.
            set_storage_options(dict(settings))
            session = _connect(warehouse, database, start)
            for key, value in settings:
                if key.startswith("spark."):
                    continue  # given to the session when it started (see _connect)
                try:
                    session.sql(f"SET {key}={value}")
                except Exception as exc:
                    raise _Failure(exc, f"--conf {key}={value}: ") from exc
            guard = CtrlC(session)
            with guard.installed():
                if text is None:
                    progress = None
                    if sys.stderr.isatty():  # Spark's stage progress, at the prompt only
                        progress = StageProgress(session.spark, sys.stderr)
                        before_output.append(progress.clear)
                    _interactive(
                        session, printer, debug, timing=timing, guard=guard, progress=progress
                    )
                else:
                    run_script_text(
                        session,
                        text,
                        printer,
                        labels=file is not None,
                        timing=bool(timing),
                        guard=guard,
                    )
        except _Failure as failure:
            _fail(failure.error, debug, failure.where)
        except KeyboardInterrupt as exc:
            _interrupted(session, exc, debug)
        except Exception as exc:
            _fail(exc, debug)


class _Failure(Exception):
    """``error`` raised where ``where`` says (``line 3, column 1: ``)."""

    def __init__(self, error: BaseException, where: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.where = where


class _Interrupted(KeyboardInterrupt):
    """Ctrl-C while the statement at ``where`` ran (``finished``: it still completed)."""

    def __init__(self, where: str, finished: bool = False) -> None:
        super().__init__(where)
        self.where = where
        self.message = INTERRUPTED_AFTER if finished else INTERRUPTED


def _conf_item(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="'--conf'")
    return key.strip(), value.strip()


def _read_script(path: str) -> str:
    try:
        with click.open_file(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise click.FileError(path, hint=exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise click.FileError(path, hint=f"not UTF-8 text ({exc.reason})") from exc


def _connect(warehouse: str | None, database: str, start: SparkStart) -> Session:
    """The SQL session: on a new SparkSession built with ``start`` (static Spark settings
    such as ``spark.driver.memory`` only take effect there), or on the active one, whose
    ``spark.*`` settings from ``--conf`` are then SET."""
    active = active_session()
    if active is None:
        spark = spark_session(
            master=start.master,
            driver_memory=start.driver_memory,
            conf=start.conf,
            log_level=start.log_level,
        )
        return connect(warehouse, spark=spark, database=database)
    session = connect(warehouse, spark=active, database=database)
    for key, value in start.conf.items():
        try:
            session.sql(f"SET {key}={value}")
        except Exception as exc:
            raise _Failure(exc, f"--conf {key}={value}: ") from exc
    return session


@contextlib.contextmanager
def _quiet_logs(level: str) -> Iterator[None]:
    """Below ``WARN``: pyspark's loggers that print every captured SQL error as a JSON line,
    and py4j's connection messages when Ctrl-C interrupts a call, stay silent (the command
    reports each error itself, in one line)."""
    if level in VERBOSE_LEVELS:
        yield
        return
    loggers: list[logging.Logger] = [PySparkLogger.getLogger(n) for n in PYSPARK_JSON_LOGGERS]
    loggers.append(logging.getLogger("py4j"))
    before = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, was in zip(loggers, before, strict=True):
            lg.disabled = was


def run_script_text(
    session: Session,
    text: str,
    printer: ResultPrinter,
    *,
    labels: bool = False,
    timing: bool = False,
    guard: CtrlC | None = None,
) -> None:
    """Run the statements of ``text`` one by one, printing each result as it finishes
    (headed by its statement with ``labels``, followed by the time it took with
    ``timing``; see :class:`ResultPrinter` for the formats that show them).

    A failing statement raises :class:`_Failure` with the script position of the error
    (a parse error's own position, else where the statement starts); Ctrl-C raises
    :class:`_Interrupted` with the position of the statement it stopped.
    """
    guard = guard or CtrlC(None)
    for stmt_sql, line, column in split_script_positions(text):
        where = f"line {line}, column {column}: "
        started = time.perf_counter()
        try:
            with guard.statement():
                for result in session.iter_script(stmt_sql):
                    if labels:
                        printer.label(statement_label(result.sql, line))
                    rows = printer.show(result.kind, result.df, result.write)
                    for note in getattr(result, "warnings", ()):  # unknown option keys, ...
                        click.echo(f"warning: {note}", err=True)
                    if timing:
                        printer.timing(time.perf_counter() - started, rows)
                    started = time.perf_counter()
        except KeyboardInterrupt:
            raise _Interrupted(where) from None
        except Exception as exc:
            if guard.cancelled:  # it failed because Ctrl-C cancelled its Spark jobs
                raise _Interrupted(where) from exc
            raise _Failure(exc, _where(exc, line, column)) from exc
        if guard.cancelled:  # Ctrl-C came after its last Spark job: stop the script here
            raise _Interrupted(where, finished=True)


#: How often a cancelled statement's new Spark jobs are cancelled until it ends.
CANCEL_POLL_S = 0.1


class CtrlC:
    """Ctrl-C while ``hudilite sql`` runs a statement: the first press cancels the
    session's Spark jobs from another thread (a py4j call of the main thread is never cut
    in half), so the statement fails the ordinary way and a write rolls itself back; the
    caller reports it as interrupted. A second press, or one while no statement runs,
    raises :class:`KeyboardInterrupt` at once (pyspark's own handler does that on the first,
    cancelling from inside the interrupted py4j call, which breaks its connection). Jobs
    the statement starts after the press are cancelled too, until it ends."""

    def __init__(self, session: Session | None) -> None:
        self.session = session
        self.running = False
        self.cancelled = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Take over SIGINT while the block runs (only the main thread may)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _on_sigint(self, signum: int, frame: object) -> None:
        if not self.running or self.cancelled:
            raise KeyboardInterrupt
        self.cancelled = True
        threading.Thread(target=self._cancel_until_done, daemon=True).start()

    def _cancel_until_done(self) -> None:
        # Cancelling reaches only jobs already running: a press while the statement is
        # still planning (or between two of its jobs) would cancel nothing and let it run
        # on, so the statement's jobs are cancelled until it ends.
        while self.running:
            _cancel(self.session)
            time.sleep(CANCEL_POLL_S)

    @contextlib.contextmanager
    def statement(self) -> Iterator[None]:
        self.running, self.cancelled = True, False
        try:
            yield
        finally:
            self.running = False


def _where(exc: BaseException, line: int, column: int) -> str:
    """``line L, column C: `` in the script for ``exc`` raised by the statement starting at
    ``line``/``column`` (positions of a parse error are relative to the statement)."""
    if isinstance(exc, SqlParseError) and exc.line is not None:
        placed = exc.at(line, column)
        if placed.column is None:
            return f"line {placed.line}: "
        return f"line {placed.line}, column {placed.column}: "
    return f"line {line}, column {column}: "


def error_message(exc: BaseException) -> str:
    """One line for ``exc``: Spark's headline (without the plan or SQL excerpt), the error
    a Python worker raised, a Java exception's first line, a parse error without the
    statement-relative position, anything else with newlines folded (and its type named
    when it is not an error of the input)."""
    if isinstance(exc, click.FileError):
        return exc.format_message()
    if isinstance(exc, SqlParseError) and exc.line is not None:
        return f"SQL parse error: {fold(exc.description)}"
    return one_line(exc)  # as the Thrift server's (Spark's errors are all headlines)


def _report(exc: BaseException, debug: bool, where: str = "") -> None:
    if debug:
        click.echo("".join(traceback.format_exception(exc)), err=True, nl=False)
    else:
        click.echo(f"error: {where}{error_message(exc)}", err=True)


def _fail(exc: BaseException, debug: bool, where: str = "") -> NoReturn:
    _report(exc, debug, where)
    sys.exit(1)


def _cancel(session: Session | None) -> None:
    """Cancel the session's running Spark jobs (pyspark's own Ctrl-C handler does too)."""
    if session is not None:
        with contextlib.suppress(Exception):
            session.spark.sparkContext.cancelAllJobs()


def _interrupted(session: Session | None, exc: KeyboardInterrupt, debug: bool) -> NoReturn:
    _cancel(session)
    if debug:
        click.echo("".join(traceback.format_exc()), err=True, nl=False)
    click.echo(_interrupted_line(exc), err=True)
    sys.exit(EXIT_INTERRUPTED)


def _interrupted_line(exc: KeyboardInterrupt) -> str:
    return f"error: {getattr(exc, 'where', '')}{getattr(exc, 'message', INTERRUPTED)}"


INTERRUPTED = (
    "interrupted (Ctrl-C): the statement was cancelled; a write it had not committed was "
    "rolled back"
)
INTERRUPTED_AFTER = (
    "interrupted (Ctrl-C) as the statement finished (it completed); the statements after it "
    "did not run"
)


def _interactive(
    session: Session,
    printer: ResultPrinter,
    debug: bool,
    read_line: Callable[[str], str] | None = None,
    *,
    timing: bool = False,
    guard: CtrlC | None = None,
    progress: StageProgress | None = None,
) -> None:
    """The prompt: run statements as their ``;`` arrives; errors (and Ctrl-C while a
    statement runs) are shown in one line, not fatal. ``read_line`` defaults to the
    shell's reader (prompt-toolkit with history and completion on a terminal, see
    :mod:`hudilite.cli.shell`); ``progress`` draws Spark's stage progress while a
    statement runs."""
    if read_line is None:
        read_line = make_reader(SessionSource(session))
    if read_line is input:
        # why lazy: optional module (not on every platform) that changes input() only here
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing for input())
    running = progress.running if progress is not None else contextlib.nullcontext
    buffer = ""
    while True:
        try:
            line = read_line(CONTINUE_PROMPT if buffer.strip() else PROMPT)
        except EOFError:
            click.echo("")
            return
        except KeyboardInterrupt:
            click.echo("")
            buffer = ""
            continue
        if not buffer.strip() and line.strip().rstrip(";").strip().lower() in ("exit", "quit"):
            return
        complete, buffer = split_complete(buffer + line + "\n")
        if not complete.strip():
            continue
        printer.reset()
        try:
            with running():
                run_script_text(session, complete, printer, timing=timing, guard=guard)
        except _Failure as failure:
            _report(failure.error, debug, failure.where)
        except KeyboardInterrupt as exc:
            _cancel(session)
            click.echo(_interrupted_line(exc), err=True)
        except Exception as exc:
            _report(exc, debug)


# The HiveServer2-compatible server and its users file (hudilite/cli/server_commands.py).
main.add_command(thriftserver)
main.add_command(users)


if __name__ == "__main__":  # pragma: no cover
    main()
