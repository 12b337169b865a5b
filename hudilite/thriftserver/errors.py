"""Errors as clients see them: a ``TStatus`` with a SQLSTATE and one clear line.

SQLSTATEs: ``42000`` syntax errors (with line and column), ``42S02`` a table, view or
database that does not exist, ``42501`` a statement the user's role may not run, ``40001``
a write that met a concurrent one (a lock held too long, a conflicting commit: retry it),
``HYC00`` an operation this server does not support, ``HY008`` a cancelled operation,
``08004`` a new session or statement refused because the server is stopping, ``HYT00`` a
statement that ran past its timeout, and ``HY000`` anything else. The message is the error's
own first line (Spark's headline without its plan, the error a Python worker raised, a Java
exception's first line); a Python or Java stack trace never reaches a client.
"""

from __future__ import annotations

from pyspark.errors import AnalysisException, ParseException
from TCLIService import ttypes as tt

from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import ConflictError, HudiliteError, TableNotFoundError
from hudilite.spark.task_errors import one_line
from hudilite.sqlext.statements import SqlParseError

from .users import PermissionDenied

__all__ = [
    "ClientError",
    "NotSupported",
    "client_message",
    "error_status",
    "info_messages",
    "ok_status",
    "sqlstate_of",
]

SYNTAX, NOT_FOUND, DENIED, NOT_SUPPORTED, CANCELLED, SHUTTING_DOWN, TIMED_OUT, GENERAL = (
    "42000",
    "42S02",
    "42501",
    "HYC00",
    "HY008",
    "08004",
    "HYT00",
    "HY000",
)
#: A write that met a concurrent one: SQL's "serialization failure", which clients retry.
CONFLICT = "40001"

# Spark's error classes meaning "no such table, view or schema".
_NOT_FOUND_CLASSES = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "VIEW_NOT_FOUND")


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
    if isinstance(exc, ConflictError):
        return CONFLICT
    if isinstance(exc, AnalysisException):
        cls = exc.getCondition() or ""
        if cls.startswith(_NOT_FOUND_CLASSES):
            return NOT_FOUND
        if cls.startswith("PARSE_SYNTAX_ERROR"):
            return SYNTAX
    return GENERAL


def client_message(exc: BaseException) -> str:
    """One line describing ``exc`` for a client (:func:`one_line`, as the CLI's)."""
    return one_line(exc)


def ok_status() -> tt.TStatus:
    """``SUCCESS_STATUS``."""
    return tt.TStatus(statusCode=tt.TStatusCode.SUCCESS_STATUS)


#: The exception class the Hive JDBC driver rebuilds from ``infoMessages`` (Spark's server
#: sends its own ``HiveSQLException`` there too).
_JDBC_EXCEPTION = "org.apache.hive.service.cli.HiveSQLException"


def info_messages(message: str) -> list[str]:
    """``infoMessages`` for an error: the Hive JDBC driver (``HiveSQLException(TStatus)``)
    rebuilds the server's exception from them and fails on an empty list
    (``IndexOutOfBoundsException``, reported as the connection error 08S01). Spark's server
    sends its Java stack flattened as ``*<class>:<message>:<frames>:<last frame>`` and one
    line per frame; here the one exception with no frames (``0:-1``): a client needs the
    message, not the server's stack."""
    return [f"*{_JDBC_EXCEPTION}:{message}:0:-1"]


def error_status(exc: BaseException) -> tt.TStatus:
    """``ERROR_STATUS`` with the SQLSTATE and message of ``exc``."""
    message = client_message(exc)
    return tt.TStatus(
        statusCode=tt.TStatusCode.ERROR_STATUS,
        sqlState=sqlstate_of(exc),
        errorCode=0,
        errorMessage=message,
        infoMessages=info_messages(message),
    )
