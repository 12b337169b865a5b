"""Errors as clients see them: a ``TStatus`` with a SQLSTATE and one clear line.

SQLSTATEs: ``42000`` syntax errors (with line and column), ``42S02`` a table, view or
database that does not exist, ``42501`` a statement the user's role may not run, ``HYC00``
an operation this server does not support, ``HY008`` a cancelled operation and ``HY000``
anything else. The message is the error's own first line (Spark's headline without its
plan, the error a Python worker raised, a Java exception's first line); a Python or Java
stack trace never reaches a client.
"""

from __future__ import annotations

import contextlib
import re

from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException, ParseException, PySparkException, PythonException
from TCLIService import ttypes as tt

from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import HudiliteError, TableNotFoundError
from hudilite.sqlext.statements import SqlParseError

from .users import PermissionDenied

__all__ = [
    "ClientError",
    "NotSupported",
    "client_message",
    "error_status",
    "ok_status",
    "sqlstate_of",
]

SYNTAX, NOT_FOUND, DENIED, NOT_SUPPORTED, CANCELLED, GENERAL = (
    "42000",
    "42S02",
    "42501",
    "HYC00",
    "HY008",
    "HY000",
)

# Spark's error classes meaning "no such table, view or schema".
_NOT_FOUND_CLASSES = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "VIEW_NOT_FOUND")
# The last line of a Python traceback a worker sent back.
_PYTHON_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b.*")


class ClientError(HudiliteError):
    """An error in a client's request (a bad handle, a closed session), with its SQLSTATE."""

    def __init__(self, message: str, sqlstate: str = GENERAL) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class NotSupported(ClientError):
    """An operation this server does not offer."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is not supported by the hudilite Thrift server", NOT_SUPPORTED)


def sqlstate_of(exc: BaseException) -> str:
    """The SQLSTATE a client gets for ``exc``."""
    if isinstance(exc, ClientError):
        return exc.sqlstate
    if isinstance(exc, PermissionDenied):
        return DENIED
    if isinstance(exc, SqlParseError | ParseException):
        return SYNTAX
    if isinstance(exc, TableNotFoundError | DatabaseNotFoundError):
        return NOT_FOUND
    if isinstance(exc, AnalysisException):
        cls = exc.getCondition() or ""
        if cls.startswith(_NOT_FOUND_CLASSES):
            return NOT_FOUND
        if cls.startswith("PARSE_SYNTAX_ERROR"):
            return SYNTAX
    return GENERAL


def _fold(text: str) -> str:
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())


def client_message(exc: BaseException) -> str:
    """One line describing ``exc`` for a client."""
    if isinstance(exc, PythonException):
        found = [ln.strip() for ln in exc.getMessage().splitlines() if _PYTHON_ERROR_LINE.match(ln)]
        if found:
            return found[-1]
    if isinstance(exc, PySparkException):
        lines = [ln.strip() for ln in exc.getMessage().splitlines() if ln.strip()]
        return lines[0] if lines else type(exc).__name__
    if isinstance(exc, Py4JJavaError):
        with contextlib.suppress(Exception):
            lines = [ln.strip() for ln in str(exc.java_exception.toString()).splitlines()]
            return next(ln for ln in lines if ln)
    text = _fold(str(exc))
    if isinstance(exc, HudiliteError | OSError | ValueError):
        return text or type(exc).__name__
    return f"internal error: {type(exc).__name__}" + (f": {text}" if text else "")


def ok_status() -> tt.TStatus:
    """``SUCCESS_STATUS``."""
    return tt.TStatus(statusCode=tt.TStatusCode.SUCCESS_STATUS)


def error_status(exc: BaseException) -> tt.TStatus:
    """``ERROR_STATUS`` with the SQLSTATE and message of ``exc``."""
    return tt.TStatus(
        statusCode=tt.TStatusCode.ERROR_STATUS,
        sqlState=sqlstate_of(exc),
        errorCode=0,
        errorMessage=client_message(exc),
        infoMessages=[],
    )
