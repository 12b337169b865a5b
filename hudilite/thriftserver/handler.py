"""The TCLIService calls: one :class:`Handler` per client connection.

Every call answers with a ``TStatus``: ``SUCCESS_STATUS``, or ``ERROR_STATUS`` with a
SQLSTATE and one line (:mod:`.errors`); an exception never escapes to Thrift (which would
drop the connection). A connection remembers the sessions it opened, so a client that
disconnects frees them and their operations (:meth:`Handler.disconnect`). Over HTTP
(:mod:`.http_transport`) a handler serves one request and sessions outlive it. A call on a
session or operation another user opened is refused (SQLSTATE ``42501``) whenever the
handler's user is known.
"""

from __future__ import annotations

import functools
import re
import select
import socket
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pyspark
from pyspark.sql import functions as F
from TCLIService import TCLIService
from TCLIService import ttypes as tt

from hudilite.sqlext.session import StatementResult
from hudilite.sqlext.statements import (
    Call,
    Describe,
    SetOption,
    SparkStatement,
    SqlParseError,
    Statement,
    iter_parsed_script,
    split_script_positions,
)

from . import metadata
from .errors import (
    NOT_FOUND,
    NOT_SUPPORTED,
    ClientError,
    NotSupported,
    client_message,
    error_status,
    ok_status,
    sqlstate_of,
)
from .operations import Operation, RowSource, frame_rows, static_rows
from .rowsets import COLUMNAR_FROM, ColumnSpec, row_set, table_schema
from .sessions import HiveSession, SessionRegistry
from .users import check_allowed
from .variables import SPARK_SUBSTITUTE, Assignment, Step, plan_script

__all__ = ["Handler"]

OpType = tt.TOperationType
#: Largest batch one FetchResults returns, whatever the client asks.
MAX_FETCH_ROWS = 100_000


def _responds(resp: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turn any exception of a call into ``resp(status=ERROR_STATUS ...)``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def call(self: Handler, req: Any) -> Any:
            try:
                return fn(self, req)
            except Exception as exc:
                return resp(status=error_status(exc))

        return call

    return wrap


def _server_version() -> str:
    try:
        own = version("hudilite")
    except PackageNotFoundError:  # running from a source tree
        own = "dev"
    return f"{own} (Spark {pyspark.__version__})"


class Handler(TCLIService.Iface):
    """TCLIService for one connection (or one HTTP request), authenticated as ``user`` with
    ``role`` (``None``: the user OpenSession names, unchecked, as with ``nosasl``).
    ``sock``: the client's TCP socket, watched for a hang-up during a synchronous
    statement."""

    def __init__(
        self,
        registry: SessionRegistry,
        user: str | None,
        role: str,
        *,
        peer: str = "",
        sock: socket.socket | None = None,
    ) -> None:
        self.registry = registry
        self.user = user
        self.role = role
        self.peer = peer
        self.sock = sock
        self.session_keys: set[bytes] = set()

    def disconnect(self) -> None:
        """The client went away: close every session it opened."""
        for key in list(self.session_keys):
            self.registry.close(key)
        self.session_keys.clear()

    # ------------------------------------------------------------------ sessions
    @_responds(tt.TOpenSessionResp)
    def OpenSession(self, req: tt.TOpenSessionReq) -> tt.TOpenSessionResp:
        """A new session, its protocol negotiated down to V10 at most."""
        user = self.user or req.username or "anonymous"
        session = self.registry.open(
            user, self.role, req.client_protocol or 0, dict(req.configuration or {})
        )
        self.session_keys.add(session.key)
        _hudi_by_default(session)
        return tt.TOpenSessionResp(
            status=ok_status(),
            serverProtocolVersion=session.protocol,
            sessionHandle=session.handle,
            configuration={},
        )

    @_responds(tt.TCloseSessionResp)
    def CloseSession(self, req: tt.TCloseSessionReq) -> tt.TCloseSessionResp:
        """Close the session and its operations."""
        session = self.registry.get(req.sessionHandle, self.user)
        self.registry.close(session.key)
        self.session_keys.discard(session.key)
        return tt.TCloseSessionResp(status=ok_status())

    @_responds(tt.TGetInfoResp)
    def GetInfo(self, req: tt.TGetInfoReq) -> tt.TGetInfoResp:
        """Server name, DBMS name and version, limits."""
        self.registry.get(req.sessionHandle, self.user)
        info = tt.TGetInfoType
        strings = {
            info.CLI_SERVER_NAME: "hudilite",
            info.CLI_DBMS_NAME: "hudilite",
            info.CLI_DBMS_VER: _server_version(),
            info.CLI_IDENTIFIER_QUOTE_CHAR: "`",
            info.CLI_SEARCH_PATTERN_ESCAPE: "\\",
        }
        lengths = {
            info.CLI_MAX_COLUMN_NAME_LEN: 128,
            info.CLI_MAX_SCHEMA_NAME_LEN: 128,
            info.CLI_MAX_TABLE_NAME_LEN: 128,
        }
        if req.infoType in strings:
            value = tt.TGetInfoValue(stringValue=strings[req.infoType])
        elif req.infoType in lengths:
            value = tt.TGetInfoValue(lenValue=lengths[req.infoType])
        else:
            name = tt.TGetInfoType._VALUES_TO_NAMES.get(req.infoType, str(req.infoType))
            raise NotSupported(f"GetInfo {name}")
        return tt.TGetInfoResp(status=ok_status(), infoValue=value)

    # ------------------------------------------------------------------ statements
    def _check_roles(self, session: HiveSession, steps: list[Step]) -> None:
        """Refuse the whole text before anything runs when one statement needs a higher
        role or holds a construct the sandbox refuses (:mod:`.sandbox`); parse errors are
        raised as the session would, positions in the text."""
        for step in steps:
            if step.assignment is not None:  # SET hivevar: a session setting
                continue
            # The sandbox first, even on a text the front end cannot parse (a construct it
            # does not know is refused, not reported as a syntax error), and before the
            # role: its refusal names the construct, not only the statement kind.
            for sql, _line, _column in split_script_positions(step.sql):
                session.sandbox.check_statement(sql)
            for _sql, stmt in _parsed(step):
                _refuse_describe_query(stmt)
                if isinstance(stmt, Call):
                    session.sandbox.check_call(stmt.procedure, stmt.args, stmt.named_args)
                if isinstance(stmt, SetOption):
                    session.sandbox.check_setting(stmt.key, showing=stmt.value is None)
                if session.role != "admin":
                    check_allowed(session.role, stmt)

    def _statement_rows(self, session: HiveSession, steps: list[Step]) -> RowSource | None:
        last: StatementResult | Assignment | None = None
        with session.lock:
            for step in steps:
                if step.assignment is not None:
                    last = _assign(session, step.assignment)
                    continue
                results = _run_step(session, step)
                if results:
                    last = results[-1]
        if last is None:
            raise SqlParseError("empty SQL statement")
        if isinstance(last, Assignment):
            name, value = last.name, last.value
            return static_rows(_KEY_VALUE, [(f"hivevar:{name}", value)])
        if last.df is None:
            return static_rows([ColumnSpec("result", "string", tt.TTypeId.STRING_TYPE)], [])
        df = last.df
        if last.kind == "ShowTables" and self.registry.settings.show_tables == "hive":
            df = df.select(F.col("tableName").alias("tab_name"))
        return frame_rows(df)

    @_responds(tt.TExecuteStatementResp)
    def ExecuteStatement(self, req: tt.TExecuteStatementReq) -> tt.TExecuteStatementResp:
        """Run a statement (or script), Hive variables substituted (:mod:`.variables`):
        inline, or on a thread with ``runAsync``; as the session's user (``current_user()``),
        within the server's and the client's ``queryTimeout`` (the shorter one)."""
        session = self.registry.get(req.sessionHandle, self.user)
        text = req.statement or ""
        steps = plan_script(text, session.variables, lambda key: _setting(session, key))
        self._check_roles(session, steps)
        op = Operation(
            session.sql.spark,
            OpType.EXECUTE_STATEMENT,
            lambda: self._statement_rows(session, steps),
            text,
            user=session.user,
            timeout=_timeout(self.registry.settings.query_timeout, req.queryTimeout or 0),
            result_limit=self.registry.settings.max_result_rows,
        )
        self.registry.add(session, op)
        if req.runAsync:
            op.run(True)
        else:
            self._run_watched(op)
        if not req.runAsync and op.state in (
            tt.TOperationState.ERROR_STATE,
            tt.TOperationState.CANCELED_STATE,
        ):
            self.registry.close_operation(op.handle)
            raise ClientError(op.error or "the statement failed", op.sqlstate or "HY000")
        return tt.TExecuteStatementResp(status=ok_status(), operationHandle=op.handle)

    def _run_watched(self, op: Operation) -> None:
        """Run ``op`` inline; if the client hangs up meanwhile, cancel it (a synchronous
        statement would otherwise run on for nobody)."""
        if self.sock is None:
            op.run(False)
            return
        done = threading.Event()
        watcher = threading.Thread(
            target=_cancel_on_hangup, args=(self.sock, op, done), name="hangup-watch", daemon=True
        )
        watcher.start()
        try:
            op.run(False)
        finally:
            done.set()

    def _metadata(self, req: Any, op_type: int, work: Callable[[HiveSession], RowSource]) -> Any:
        session = self.registry.get(req.sessionHandle, self.user)
        name = tt.TOperationType._VALUES_TO_NAMES.get(op_type, "metadata")
        op = Operation(session.sql.spark, op_type, lambda: work(session), name, user=session.user)
        self.registry.add(session, op)
        op.run(False)
        if op.state == tt.TOperationState.ERROR_STATE:
            self.registry.close_operation(op.handle)
            raise ClientError(op.error or f"{name} failed", op.sqlstate or "HY000")
        return op.handle

    @_responds(tt.TGetTypeInfoResp)
    def GetTypeInfo(self, req: tt.TGetTypeInfoReq) -> tt.TGetTypeInfoResp:
        """The SQL types."""
        handle = self._metadata(req, OpType.GET_TYPE_INFO, lambda s: metadata.type_info())
        return tt.TGetTypeInfoResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetCatalogsResp)
    def GetCatalogs(self, req: tt.TGetCatalogsReq) -> tt.TGetCatalogsResp:
        """No catalogs (one unnamed one)."""
        handle = self._metadata(req, OpType.GET_CATALOGS, lambda s: metadata.catalogs())
        return tt.TGetCatalogsResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetSchemasResp)
    def GetSchemas(self, req: tt.TGetSchemasReq) -> tt.TGetSchemasResp:
        """The databases."""
        handle = self._metadata(
            req, OpType.GET_SCHEMAS, lambda s: metadata.schemas(s.sql, req.schemaName)
        )
        return tt.TGetSchemasResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetTablesResp)
    def GetTables(self, req: tt.TGetTablesReq) -> tt.TGetTablesResp:
        """Tables and views matching the patterns and types."""
        handle = self._metadata(
            req,
            OpType.GET_TABLES,
            lambda s: metadata.tables(s.sql, req.schemaName, req.tableName, req.tableTypes),
        )
        return tt.TGetTablesResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetTableTypesResp)
    def GetTableTypes(self, req: tt.TGetTableTypesReq) -> tt.TGetTableTypesResp:
        """TABLE and VIEW."""
        handle = self._metadata(req, OpType.GET_TABLE_TYPES, lambda s: metadata.table_types())
        return tt.TGetTableTypesResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetColumnsResp)
    def GetColumns(self, req: tt.TGetColumnsReq) -> tt.TGetColumnsResp:
        """Columns of matching tables and views."""
        handle = self._metadata(
            req,
            OpType.GET_COLUMNS,
            lambda s: metadata.columns(s.sql, req.schemaName, req.tableName, req.columnName),
        )
        return tt.TGetColumnsResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetFunctionsResp)
    def GetFunctions(self, req: tt.TGetFunctionsReq) -> tt.TGetFunctionsResp:
        """Spark's functions."""
        handle = self._metadata(
            req, OpType.GET_FUNCTIONS, lambda s: metadata.functions(s.sql, req.functionName)
        )
        return tt.TGetFunctionsResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetPrimaryKeysResp)
    def GetPrimaryKeys(self, req: tt.TGetPrimaryKeysReq) -> tt.TGetPrimaryKeysResp:
        """The record key of a hudilite table."""
        handle = self._metadata(
            req,
            OpType.UNKNOWN,
            lambda s: metadata.primary_keys(s.sql, req.schemaName, req.tableName),
        )
        return tt.TGetPrimaryKeysResp(status=ok_status(), operationHandle=handle)

    @_responds(tt.TGetCrossReferenceResp)
    def GetCrossReference(self, req: tt.TGetCrossReferenceReq) -> tt.TGetCrossReferenceResp:
        """Foreign keys: hudilite tables have none."""
        raise NotSupported("GetCrossReference (foreign keys)")

    # ------------------------------------------------------------------ operations
    @_responds(tt.TGetOperationStatusResp)
    def GetOperationStatus(self, req: tt.TGetOperationStatusReq) -> tt.TGetOperationStatusResp:
        """The operation's state; its SQLSTATE and message when it failed."""
        op = self.registry.operation(req.operationHandle, self.user)
        return tt.TGetOperationStatusResp(
            status=ok_status(),
            operationState=op.state,
            sqlState=op.sqlstate,
            errorCode=0 if op.error else None,
            errorMessage=op.error,
            operationStarted=int(op.started * 1000),
            operationCompleted=int(op.completed * 1000) if op.completed else None,
            hasResultSet=True,
        )

    @_responds(tt.TCancelOperationResp)
    def CancelOperation(self, req: tt.TCancelOperationReq) -> tt.TCancelOperationResp:
        """Cancel the operation's Spark jobs."""
        self.registry.operation(req.operationHandle, self.user).cancel()
        return tt.TCancelOperationResp(status=ok_status())

    @_responds(tt.TCloseOperationResp)
    def CloseOperation(self, req: tt.TCloseOperationReq) -> tt.TCloseOperationResp:
        """Close the operation (cancelling it if it still runs)."""
        self.registry.close_operation(req.operationHandle, self.user)
        return tt.TCloseOperationResp(status=ok_status())

    @_responds(tt.TGetResultSetMetadataResp)
    def GetResultSetMetadata(
        self, req: tt.TGetResultSetMetadataReq
    ) -> tt.TGetResultSetMetadataResp:
        """The result's columns with Hive type names."""
        op = self.registry.operation(req.operationHandle, self.user)
        if op.state == tt.TOperationState.ERROR_STATE:
            raise ClientError(op.error or "the operation failed", op.sqlstate or "HY000")
        if op.state != tt.TOperationState.FINISHED_STATE:
            raise ClientError("the operation has not finished: poll GetOperationStatus")
        return tt.TGetResultSetMetadataResp(status=ok_status(), schema=table_schema(op.columns))

    @_responds(tt.TFetchResultsResp)
    def FetchResults(self, req: tt.TFetchResultsReq) -> tt.TFetchResultsResp:
        """The next batch of rows (FETCH_NEXT) or the first (FETCH_FIRST); fetch type 1
        (operation logs) is always empty."""
        op = self.registry.operation(req.operationHandle, self.user)
        session = self.registry.session_of(op)
        protocol = session.protocol if session else COLUMNAR_FROM
        if req.fetchType == 1:
            logs = [ColumnSpec("log", "string", tt.TTypeId.STRING_TYPE)]
            return tt.TFetchResultsResp(
                status=ok_status(), hasMoreRows=False, results=row_set(logs, [], 0, protocol)
            )
        orientation = req.orientation or tt.TFetchOrientation.FETCH_NEXT
        if orientation not in (tt.TFetchOrientation.FETCH_NEXT, tt.TFetchOrientation.FETCH_FIRST):
            name = tt.TFetchOrientation._VALUES_TO_NAMES.get(orientation, str(orientation))
            raise NotSupported(f"fetch orientation {name}")
        wanted = min(max(req.maxRows or 1000, 1), MAX_FETCH_ROWS)
        start, rows = op.fetch(wanted, orientation == tt.TFetchOrientation.FETCH_FIRST)
        return tt.TFetchResultsResp(
            status=ok_status(),
            hasMoreRows=len(rows) == wanted,
            results=row_set(op.columns, rows, start, protocol),
        )

    # ------------------------------------------------------------------ not offered
    @_responds(tt.TGetDelegationTokenResp)
    def GetDelegationToken(self, req: Any) -> Any:
        """Not supported (no Kerberos)."""
        raise NotSupported("GetDelegationToken")

    @_responds(tt.TCancelDelegationTokenResp)
    def CancelDelegationToken(self, req: Any) -> Any:
        """Not supported (no Kerberos)."""
        raise NotSupported("CancelDelegationToken")

    @_responds(tt.TRenewDelegationTokenResp)
    def RenewDelegationToken(self, req: Any) -> Any:
        """Not supported (no Kerberos)."""
        raise NotSupported("RenewDelegationToken")

    @_responds(tt.TGetLogResp)
    def GetLog(self, req: Any) -> Any:
        """Not supported (operation logs come through FetchResults, always empty)."""
        raise NotSupported("GetLog")


_KEY_VALUE = [
    ColumnSpec("key", "string", tt.TTypeId.STRING_TYPE),
    ColumnSpec("value", "string", tt.TTypeId.STRING_TYPE),
]


#: Spark's setting for the provider of a CREATE TABLE without USING.
_DEFAULT_SOURCE = "spark.sql.sources.default"


def _hudi_by_default(session: HiveSession) -> None:
    """A ``CREATE TABLE`` without ``USING`` (what SQLAlchemy's ``create_all`` and pandas'
    ``to_sql`` send) makes a Hudi table of the warehouse, unless the server was started with
    another ``spark.sql.sources.default``: Spark's own default (parquet) would put it in
    Spark's catalog, outside the warehouse and its database. Clients may not change it (a
    server-wide setting, :mod:`.sandbox`)."""
    spark = session.sql.spark
    if not spark.sparkContext.getConf().contains(_DEFAULT_SOURCE):
        spark.conf.set(_DEFAULT_SOURCE, "hudi")


def _timeout(server: float, client: int) -> float:
    """The statement timeout in seconds: the shorter of the server's and the client's
    (0: none)."""
    limits = [t for t in (server, float(client)) if t > 0]
    return min(limits) if limits else 0.0


def _setting(session: HiveSession, key: str) -> str | None:
    """A session setting for ``${hiveconf:key}``: a hudilite option, else Spark's conf."""
    value = session.sql.option_value(key)
    if value is not None:
        return value
    try:
        return session.sql.spark.conf.get(key)
    except Exception:  # not set and no default (Spark raises NoSuchElementException)
        return None


def _assign(session: HiveSession, assignment: Assignment) -> Assignment:
    """Run ``SET hivevar:name[=value]``: what it shows (``<undefined>``, as Spark's SET)."""
    if assignment.value is not None:
        session.variables[assignment.name] = assignment.value
        return assignment
    return Assignment(assignment.name, session.variables.get(assignment.name, "<undefined>"))


def _parsed(step: Step) -> list[tuple[str, Statement]]:
    """The statements of ``step`` (a substituted value may hold several): their text and
    their parse."""
    try:
        return [(sql, stmt) for sql, _, _, stmt in iter_parsed_script(step.sql)]
    except SqlParseError as exc:
        raise exc.at(step.line, step.column) from None


def _run_step(session: HiveSession, step: Step) -> list[StatementResult]:
    """Run the statements of ``step``; after each one, Spark's own variable substitution
    is turned off again (a ``RESET`` or ``SET`` may have turned it on: it would expand
    ``${env:...}`` and empty unknown references)."""
    conf = session.sql.spark.conf
    results = []
    try:
        for result in session.sql.iter_script(step.sql):
            conf.set(SPARK_SUBSTITUTE, "false")
            results.append(result)
    except SqlParseError as exc:
        raise exc.at(step.line, step.column) from None
    except Exception as exc:
        described = _described_name(step)
        if described is None or sqlstate_of(exc) != NOT_FOUND:
            raise
        # PyHive's SQLAlchemy dialect answers has_table with DESCRIBE <name> and knows a
        # missing table only by Hive's words (any other error propagates out of
        # inspect().has_table, DataFrame.to_sql and create_all(checkfirst=True)).
        raise ClientError(
            f"{client_message(exc)} (in Hive's words: SemanticException [Error 10001]: "
            f"Table not found {described})",
            NOT_FOUND,
        ) from exc
    return results


#: What may follow DESCRIBE [QUERY] in Spark to describe a query's result columns.
_QUERY_START = re.compile(
    r"(?is)\s*DESC(?:RIBE)?\s+(?:QUERY\s+)?(?:\(|(?:SELECT|WITH|VALUES|FROM)\b)"
)


def _refuse_describe_query(stmt: Statement) -> None:
    """Refuse ``DESCRIBE <query>``, which Spark answers with the query's columns: PyHive's
    ``has_table`` sends ``DESCRIBE <its argument>`` and pandas' ``read_sql`` asks it of the
    whole query first, so an answer made pandas read a table named ``SELECT ...``."""
    # words: the statement's first words without a leading comment
    if isinstance(stmt, SparkStatement) and (
        _QUERY_START.match(stmt.words) or _QUERY_START.match(stmt.sql)
    ):
        raise ClientError(
            "DESCRIBE of a query is not supported: DESCRIBE names a table or view "
            "(pandas: use read_sql_query for a query)",
            NOT_SUPPORTED,
        )


def _described_name(step: Step) -> str | None:
    """The table name as written when ``step`` is one ``DESCRIBE <table>``, else None."""
    try:
        parsed = _parsed(step)
    except SqlParseError:
        return None
    if len(parsed) != 1 or not isinstance(parsed[0][1], Describe):
        return None
    name = parsed[0][1].name
    return f"{name.db}.{name.table}" if name.db else name.table


def _cancel_on_hangup(sock: socket.socket, op: Operation, done: threading.Event) -> None:
    """Cancel ``op`` when ``sock`` reaches end of file before ``done`` is set."""
    while not done.wait(0.5):
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            gone = bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            gone = True
        if gone:
            op.cancel()
            return
