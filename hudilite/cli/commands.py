"""The ``hudilite`` command line (composition root: the top layer, it may import any other)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator

import click
import pyspark.errors
from pyspark.errors import PySparkException
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from hudilite.cli.demo import run_demo
from hudilite.cli.sql_output import FORMATS, ResultPrinter
from hudilite.errors import HudiliteError, HudiliteWarning
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
    "--warehouse",
    default=lambda: os.environ.get("HUDILITE_WAREHOUSE", "./hudilite-warehouse"),
    show_default="$HUDILITE_WAREHOUSE or ./hudilite-warehouse",
    help="Folder the demo table is created in.",
)
@click.option("--table-version", type=click.Choice(["6", "8"]), default="6", show_default=True)
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def demo(warehouse: str, table_version: str, debug: bool) -> None:
    """Create a trips table, upsert, delete, time-travel and print it."""
    try:
        run_demo(warehouse, table_version=6 if table_version == "6" else 8, echo=click.echo)
    except HudiliteError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


# --------------------------------------------------------------------------------------------
# hudilite sql

PROMPT = "hudilite> "
CONTINUE_PROMPT = "      -> "


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
    "--conf",
    "confs",
    multiple=True,
    metavar="KEY=VALUE",
    help="SET an option before the statements (spark.* keys configure Spark; repeatable).",
)
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def sql(
    warehouse: str | None,
    database: str,
    text: str | None,
    file: str | None,
    fmt: str,
    max_rows: int,
    confs: tuple[str, ...],
    debug: bool,
) -> None:
    """Run SQL on the tables of a warehouse.

    Statements come from -e, from -f FILE, from standard input when it is not a
    terminal, or else from an interactive prompt (statements end with ';'; exit,
    quit or Ctrl-D leaves). Each statement's rows are printed as it finishes; the
    first error stops a script with exit status 1.
    """
    if text is not None and file is not None:
        raise click.UsageError("give -e or -f, not both")
    settings = [_conf_item(item) for item in confs]
    printer = ResultPrinter(
        fmt,
        max_rows,
        out=lambda s: click.echo(s, nl=False),
        note=lambda s: click.echo(s, err=True),
    )
    with _quiet_pyspark_logs():
        try:
            if file is not None:
                text = _read_script(file)
            stdin = sys.stdin
            interactive = text is None and stdin.isatty()
            if text is None and not interactive:
                text = stdin.read()
            # fs.s3a.* settings must be in place before the catalog opens the warehouse.
            set_storage_options(dict(settings))
            session = _connect(warehouse, database, debug)
            for key, value in settings:
                try:
                    session.sql(f"SET {key}={value}")
                except Exception as exc:
                    raise _Failure(exc, f"--conf {key}={value}: ") from exc
            if text is None:
                _interactive(session, printer, debug)
            else:
                run_script_text(session, text, printer)
        except _Failure as failure:
            if not _reportable(failure.error):
                raise failure.error from None
            _report(failure.error, debug, failure.where)
            sys.exit(1)
        except Exception as exc:
            if not _reportable(exc):
                raise
            _report(exc, debug)
            sys.exit(1)


class _Failure(Exception):
    """``error`` raised where ``where`` says (``line 3, column 1: ``)."""

    def __init__(self, error: BaseException, where: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.where = where


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


def _connect(warehouse: str | None, database: str, debug: bool) -> Session:
    created = SparkSession.getActiveSession() is None
    quiet = created and not debug and not os.environ.get("HUDILITE_SPARK_LOG_LEVEL")
    with _quiet_jvm_start() if quiet else contextlib.nullcontext():
        session = connect(warehouse, database=database)
    if created:
        # The session is this command's own: keep Spark's log lines out of the output.
        level = os.environ.get("HUDILITE_SPARK_LOG_LEVEL") or ("ERROR" if debug else "OFF")
        session.spark.sparkContext.setLogLevel(level)
    return session


# Spark's console logging while the JVM starts: errors only, and no "Setting default log
# level" banner (it appears when the root level differs from WARN).
_LOG4J2_QUIET = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


@contextlib.contextmanager
def _quiet_jvm_start() -> Iterator[None]:
    """Start the JVM (if this block starts one) with a log4j2 configuration that keeps its
    start-up warnings off standard error. Does nothing when SPARK_SUBMIT_OPTS is set."""
    if "SPARK_SUBMIT_OPTS" in os.environ:
        yield
        return
    fd, path = tempfile.mkstemp(prefix="hudilite-log4j2-", suffix=".properties")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(_LOG4J2_QUIET)
        os.environ["SPARK_SUBMIT_OPTS"] = f"-Dlog4j2.configurationFile=file:{path}"
        yield
    finally:
        os.environ.pop("SPARK_SUBMIT_OPTS", None)
        with contextlib.suppress(OSError):
            os.unlink(path)


@contextlib.contextmanager
def _quiet_pyspark_logs() -> Iterator[None]:
    """Silence pyspark's loggers that print every captured SQL error as a JSON line."""
    loggers = [
        PySparkLogger.getLogger(name)
        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
    ]
    before = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, was in zip(loggers, before, strict=True):
            lg.disabled = was


def run_script_text(session: Session, text: str, printer: ResultPrinter) -> None:
    """Run the statements of ``text`` one by one, printing each result as it finishes.

    A failing statement raises :class:`_Failure` with the script position of the error
    (a parse error's own position, else where the statement starts).
    """
    for stmt_sql, line, column in split_script_positions(text):
        try:
            for result in session.iter_script(stmt_sql):
                printer.show(result.kind, result.df, result.write)
                for note in getattr(result, "warnings", ()):  # unknown option keys, ...
                    click.echo(f"warning: {note}", err=True)
        except Exception as exc:
            raise _Failure(exc, _where(exc, line, column)) from exc


def _where(exc: BaseException, line: int, column: int) -> str:
    """``line L, column C: `` in the script for ``exc`` raised by the statement starting at
    ``line``/``column`` (positions of a parse error are relative to the statement)."""
    if isinstance(exc, SqlParseError) and exc.line is not None:
        if exc.column is None:
            return f"line {exc.line + line - 1}: "
        col = exc.column + column - 1 if exc.line == 1 else exc.column
        return f"line {exc.line + line - 1}, column {col}: "
    return f"line {line}, column {column}: "


_SPARK_ERRORS = (
    "AnalysisException",
    "ArithmeticException",
    "ArrayIndexOutOfBoundsException",
    "DateTimeException",
    "IllegalArgumentException",
    "SparkRuntimeException",
    "UnsupportedOperationException",
)


def _reportable(exc: BaseException) -> bool:
    """Errors in the user's input, shown as one line: hudilite's, Spark's SQL errors
    (analysis, parse, runtime errors such as division by zero or a bad cast), file errors."""
    kinds = (HudiliteError, click.FileError, *(getattr(pyspark.errors, n) for n in _SPARK_ERRORS))
    return isinstance(exc, kinds)


def error_message(exc: BaseException) -> str:
    """One line for ``exc``: Spark's headline (without the plan or SQL excerpt), a parse
    error without the statement-relative position, anything else with newlines folded."""
    if isinstance(exc, click.FileError):
        return exc.format_message()
    if isinstance(exc, SqlParseError) and exc.line is not None:
        return f"SQL parse error: {_fold(exc.description)}"
    if isinstance(exc, PySparkException):
        lines = [ln.strip() for ln in exc.getMessage().splitlines() if ln.strip()]
        return lines[0] if lines else type(exc).__name__
    return _fold(str(exc)) or type(exc).__name__


def _fold(text: str) -> str:
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())


def _report(exc: BaseException, debug: bool, where: str = "") -> None:
    if debug:
        click.echo("".join(traceback.format_exception(exc)), err=True, nl=False)
    else:
        click.echo(f"error: {where}{error_message(exc)}", err=True)


def split_complete(text: str) -> tuple[str, str]:
    """``(complete, rest)``: the statements of ``text`` ended by ``;`` and the unfinished
    statement after them (text in an open quote or comment counts as unfinished)."""
    sentinel = "\x00end"
    pieces = split_script_positions(text + "\n" + sentinel)
    last, line, column = pieces[-1]
    if last == sentinel:
        return text, ""
    if not last.endswith(sentinel):  # an open block comment swallowed the sentinel
        return "", text
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    start += column - 1
    return text[:start], text[start:]


def _read_line(prompt: str) -> str:
    return input(prompt)


def _interactive(
    session: Session,
    printer: ResultPrinter,
    debug: bool,
    read_line: Callable[[str], str] = _read_line,
) -> None:
    """The prompt: run statements as their ``;`` arrives; errors are shown, not fatal."""
    # why lazy: optional module (not on every platform) that changes input() only for the prompt
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history for input())
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
            run_script_text(session, complete, printer)
        except _Failure as failure:
            _report(failure.error, debug or not _reportable(failure.error), failure.where)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
        except Exception as exc:
            _report(exc, debug or not _reportable(exc))


if __name__ == "__main__":  # pragma: no cover
    main()
