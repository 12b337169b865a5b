"""Turning failures inside Spark tasks back into hudilite's own errors.

An error raised in an executor reaches the driver as a Py4J/PySpark
exception whose text holds the Python traceback. A user who passed a null
key should see ``KeyGenerationError: ...``, not a JVM stack, so the last
hudilite error named in that text is re-raised as its own class.
"""

from __future__ import annotations

import contextlib
import re

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException, PythonException

from hudilite import errors

_ERROR_LINE = re.compile(r"hudilite\.errors\.(\w+): (.*)")


def hudilite_error_from(exc: BaseException) -> errors.HudiliteError | None:
    """The hudilite error a failed Spark job carried, if its message names one."""
    if isinstance(exc, errors.HudiliteError):
        return exc
    matches = _ERROR_LINE.findall(str(exc))
    if not matches:
        return None
    name, message = matches[-1]
    # Spark appends the SQL state to messages of raise_error(): not part of ours.
    message = re.sub(r"\s*SQLSTATE: \w+\s*$", "", message)
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.HudiliteError)):
        return None
    return cls(message.strip())


def first_line(exc: BaseException) -> str:
    """A one-line description of a (possibly very long) Spark failure."""
    text = str(exc).strip()
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line and not line.startswith(("at ", "File ", "^", "~")) and "Error" in line:
            return line[:500]
    return text.splitlines()[0][:500] if text else type(exc).__name__


# A data file Spark could not find or read: the path is the first URI/absolute path in
# the message that names a Parquet base file or a Hudi log file.
_DATA_PATH = re.compile(r"((?:[a-z][a-z0-9+.-]*:)?/[^\s'\"\]\[,]*?(?:\.parquet|\.log\.\d+_[\w-]+))")
_MISSING = ("PATH_NOT_FOUND", "FILE_NOT_EXIST", "FileNotFoundException", "does not exist")
_DAMAGED = (
    "FAILED_READ_FILE",
    "CANNOT_READ_FILE_FOOTER",
    "is not a Parquet file",
    "Could not read footer",
    "CorruptStatistics",
    "ParquetDecodingException",
)


def read_error_from(exc: BaseException) -> errors.HudiliteError | None:
    """The hudilite error for a failed Spark read: a hudilite error raised in a task, or
    a missing / unreadable data file (:class:`MissingFileError` / :class:`CorruptFileError`
    naming the file); None for anything else."""
    found = hudilite_error_from(exc)
    if found is not None:
        return found
    text = str(exc)
    path = _DATA_PATH.search(text)
    if path is None:
        return None
    if any(marker in text for marker in _MISSING):
        return errors.MissingFileError(f"data file {path.group(1)} is missing: {first_line(exc)}")
    if any(marker in text for marker in _DAMAGED):
        return errors.CorruptFileError(
            f"data file {path.group(1)} is unreadable: {first_line(exc)}"
        )
    return None


# The last line of a Python traceback: ``ValueError: ...``, ``hudilite.errors.X: ...``.
_PYTHON_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b.*")


def fold(text: str) -> str:
    """``text`` on one line: its non-blank lines stripped and joined by spaces."""
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())


def spark_headline(exc: BaseException) -> str | None:
    """One line for an error that came through Spark, for a terminal or a client's error
    dialog (the CLI and the Thrift server): the error a Python worker raised, Spark's
    headline without the plan or SQL excerpt, a Java exception's first line; ``None`` for
    other errors (and a Java exception whose text cannot be read)."""
    if isinstance(exc, PythonException):
        found = [ln.strip() for ln in exc.getMessage().splitlines() if _PYTHON_ERROR_LINE.match(ln)]
        if found:
            return found[-1]
    if isinstance(exc, PySparkException):
        lines = [ln.strip() for ln in exc.getMessage().splitlines() if ln.strip()]
        first = lines[0] if lines else type(exc).__name__
        # pyspark's captured Java exception keeps its cause converted the same way.
        cause = getattr(exc, "_cause", None)
        if first.endswith(_JAVA_WRAPPERS) and isinstance(cause, BaseException):
            return spark_headline(cause) or first
        return first
    if isinstance(exc, Py4JJavaError):
        with contextlib.suppress(Exception):
            java = exc.java_exception
            # A wrapper says nothing (a collect to Python waits on its job in another
            # thread): the cause it wraps does, e.g. spark.driver.maxResultSize's refusal.
            for _ in range(8):
                cause = java.getCause()
                if cause is None or not str(java.toString()).strip().endswith(_JAVA_WRAPPERS):
                    break
                java = cause
            lines = [ln.strip() for ln in str(java.toString()).splitlines()]
            return next(ln for ln in lines if ln)
    return None


#: How Java exceptions that only wrap their cause end their one-line text.
_JAVA_WRAPPERS = ("Exception thrown in awaitResult:",)


#: Errors of the user's input or environment, shown as they are (``ConfigError`` is a
#: ``ValueError``; file and permission errors are ``OSError``).
REPORTABLE: tuple[type[BaseException], ...] = (errors.HudiliteError, OSError, ValueError)


def one_line(exc: BaseException, reportable: tuple[type[BaseException], ...] = ()) -> str:
    """One line describing ``exc`` for a terminal or a client: the one formatter of the
    CLI and the Thrift server. Spark's headline (:func:`spark_headline`), else the text
    with newlines folded; an error outside :data:`REPORTABLE` and the caller's
    ``reportable`` kinds is named ``internal error: <type>: <text>``."""
    headline = spark_headline(exc)
    if headline is not None:
        return headline
    text = fold(str(exc))
    if isinstance(exc, (*REPORTABLE, *reportable)):
        return text or type(exc).__name__
    return f"internal error: {type(exc).__name__}" + (f": {text}" if text else "")
