"""The SQL session: ``hudilite.connect()`` and the statement dispatcher.

A :class:`Session` owns a SparkSession, the warehouse :class:`~hudilite.catalog.Catalog`,
the current database and the options ``SET`` gave. :meth:`Session.sql` runs one
statement, :meth:`Session.run_script` a script. Each statement kind has one handler
(``ddl``, ``dml``, ``queries`` modules); statements hudilite does not interpret go to Spark
unchanged unless they would change a hudilite table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession

from hudilite import config as cfg
from hudilite.catalog import Catalog, DatabaseNotFoundError
from hudilite.config.checks import check_options, collect_warnings
from hudilite.errors import ConfigError, HudiliteError, TableNotFoundError
from hudilite.procedures import run_procedure
from hudilite.spark.session import spark_session
from hudilite.spark.task_errors import read_error_from
from hudilite.storage.fs import (
    FileSystemGateway,
    is_storage_option,
    set_storage_options,
    storage_options_of,
)
from hudilite.table.api import Table

from . import ddl, ddl_views, dml, queries, spark_errors
from .context import Outcome, StatementResult
from .statements import (
    Call,
    ResetOption,
    SetOption,
    SparkStatement,
    SqlError,
    SqlParseError,
    Statement,
    TableName,
    UnsupportedStatementError,
    UseDatabase,
    iter_parsed_script,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hudilite.catalog.warehouse import TableEntry

__all__ = ["Outcome", "Session", "StatementResult", "connect"]


def connect(
    warehouse: str | None = None,
    *,
    spark: SparkSession | None = None,
    database: str = "default",
    options: Mapping[str, str] | None = None,
) -> Session:
    """Open a SQL session on ``warehouse`` (default ``$HUDILITE_WAREHOUSE`` or
    ``./hudilite-warehouse``); ``spark`` defaults to the active session or a new local one.
    The ``default`` database is created on first use."""
    if spark is None:
        spark = spark_session()  # the active session, set up for hudilite, or a new one
    # Connection settings (fs.s3a.*) reach the warehouse, the catalog's tables and, being
    # process-wide defaults (Session.set_option), every gateway the SQL layer makes.
    catalog = Catalog(warehouse, storage_options=storage_options_of(options))
    if not catalog.database_exists("default"):
        catalog.create_database("default", if_not_exists=True)
    session = Session(spark, catalog, options=options)
    if database != "default":
        session.use(database)
    return session


class Session:
    """Runs hudilite SQL against a warehouse; see :func:`connect`."""

    def __init__(
        self,
        spark: SparkSession,
        catalog: Catalog,
        *,
        options: Mapping[str, str] | None = None,
    ) -> None:
        self.spark = spark
        self.catalog = catalog
        self.current_database = "default"
        self.options: dict[str, str] = {}
        # The text of the statement running now, for statements handed to Spark as written.
        self.current_sql: str | None = None
        self.views = queries.ViewRegistry(self)
        for k, v in (options or {}).items():
            self.set_option(k, str(v))
        # What RESET goes back to (as Spark's RESET returns to the session's start-up conf).
        self._initial_options = dict(self.options)

    def __repr__(self) -> str:
        return f"Session(warehouse={self.catalog.warehouse!r}, database={self.current_database!r})"

    # ------------------------------------------------------------------ running SQL
    def sql(self, text: str) -> DataFrame:
        """Run ``text`` and return its rows as a DataFrame.

        A query returns its (lazy) result; DDL an empty or informational frame; DML
        one row of metrics. ``text`` may hold several statements: all run, the last
        one's rows are returned.
        """
        results = self.run_script(text)
        if not results:
            raise SqlParseError("empty SQL statement")
        last = results[-1]
        return last.df if last.df is not None else self.spark.createDataFrame([], "ok string")

    def run_script(self, text: str) -> list[StatementResult]:
        """Run every statement of ``text`` in order; stops at the first error."""
        return list(self.iter_script(text))

    def iter_script(self, text: str) -> Iterator[StatementResult]:
        """Run the statements of ``text`` one by one, yielding each result as it finishes.

        An error raises at the failing statement (statements before it stay committed)
        with ``statement_line``/``statement_column`` set on the exception; a parse
        error's line and column are relative to ``text``.
        """
        for sql, line, column, stmt in iter_parsed_script(text):
            self.current_sql = sql
            try:
                # Warnings (unknown option keys, ...) are kept for the CLI's warning lines.
                with collect_warnings() as notes:
                    outcome = self.execute(stmt)
            except Exception as e:
                # Callers (the CLI) report where the failing statement starts.
                e.statement_line = line  # type: ignore[attr-defined]
                e.statement_column = column  # type: ignore[attr-defined]
                raise
            yield StatementResult(
                sql, line, column, type(stmt).__name__, outcome.df, outcome.write, tuple(notes)
            )

    def execute(self, stmt: Statement) -> Outcome:
        """Run one parsed statement."""
        handler = _HANDLERS.get(type(stmt))
        if handler is None:  # pragma: no cover - every Statement kind has a handler
            raise UnsupportedStatementError(f"unsupported statement: {type(stmt).__name__}")
        try:
            return handler(self, stmt)
        except HudiliteError:
            raise
        except Exception as exc:
            spark_errors.tidy(exc)  # Spark's parse errors start with a blank line
            # A Spark failure reading a table's files (gone, unreadable) or carrying a
            # hudilite error from a task: report it as the hudilite error naming the file.
            mapped = read_error_from(exc)
            if mapped is None:
                raise
            raise mapped from exc

    # ------------------------------------------------------------------ names and tables
    def qualify(self, name: TableName) -> tuple[str, str]:
        """``(database, table)`` for ``name``, lower-cased, in the current database by default."""
        return (name.db or self.current_database).lower(), name.table.lower()

    def display(self, name: TableName) -> str:
        """``db.table`` as a user would write it, for messages."""
        db, table = self.qualify(name)
        return f"{db}.{table}"

    def is_hudilite(self, name: TableName) -> bool:
        """Whether ``name`` is a table of this warehouse (and not shadowed by a temp view)."""
        db, table = self.qualify(name)
        if name.db is None and self.is_temp_view(table):
            return False
        try:
            return self.catalog.table_exists(db, table)
        except (DatabaseNotFoundError, HudiliteError):
            return False

    def is_temp_view(self, name: str) -> bool:
        """Whether Spark has a user temporary view called ``name``."""
        if name.startswith(queries.VIEW_PREFIX):
            return False
        # One catalog lookup, not a listing: listTables() builds an object per table and
        # view over Py4J (a tenth of a second with a few dozen views), on every statement.
        quoted = "`" + name.replace("`", "``") + "`"
        if not self.spark.catalog.tableExists(quoted):
            return False
        return bool(self.spark.catalog.getTable(quoted).isTemporary)

    def entry(self, name: TableName) -> TableEntry:
        """The catalog entry of ``name``; :class:`TableNotFoundError` naming it if absent."""
        db, table = self.qualify(name)
        try:
            return self.catalog.get_table(db, table)
        except DatabaseNotFoundError:
            raise TableNotFoundError(
                f"table {db}.{table} not found: database {db} does not exist"
            ) from None
        except TableNotFoundError:
            if self.catalog.view_exists(db, table):
                # INSERT/UPDATE/DELETE/MERGE name a view: Spark's message.
                verb = (self.current_sql or "this statement").split()[0].upper()
                raise SqlError(
                    f"[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] '{verb}' expects a table but "
                    f"`{db}`.`{table}` is a view."
                ) from None
            raise TableNotFoundError(f"table {db}.{table} not found") from None

    def table(self, name: TableName) -> Table:
        """A :class:`hudilite.Table` handle on ``name``."""
        return Table.load(self.spark, self.entry(name).location)

    def handle(self, name: TableName) -> Table:
        """A handle on ``name`` without :meth:`Table.load`'s checking read: for callers
        that read the table's state next (that read raises the same TableNotFoundError)."""
        return Table(self.spark, FileSystemGateway(self.entry(name).location))

    # ------------------------------------------------------------------ state
    def run_in_spark(self, what: str) -> Outcome:
        """Hand the running statement to Spark (its hudilite tables read as views), for
        statements whose target is not a hudilite table."""
        if self.current_sql is None:
            raise UnsupportedStatementError(f"{what} is not a hudilite table")
        return Outcome(self.views.run(self.current_sql))

    def use(self, database: str) -> None:
        """Make ``database`` the current one (it must exist)."""
        db = database.lower()
        if not self.catalog.database_exists(db):
            raise DatabaseNotFoundError(f"database {db} does not exist")
        self.current_database = db

    def set_option(self, key: str, value: str) -> None:
        """``SET key=value``: ``spark.*`` keys go to Spark's conf; others are write and
        read options of this session (Hudi keys, their aliases, hudilite keys).

        A key hudilite knows is checked with its parser first: a bad value raises
        :class:`~hudilite.errors.ConfigError` naming the key and the value, and the
        session keeps its previous value.
        """
        known = cfg.find_key(key)
        if known is not None:
            try:
                known.parse(value)
            except (ValueError, TypeError) as exc:
                canonical = "" if known.name.lower() == key.lower() else f" ({known.name})"
                raise ConfigError(
                    f"invalid value {value!r} for option {key}{canonical}: {exc}"
                ) from None
        # An unknown, unsupported or deprecated key warns (strict mode: raises).
        check_options({key: value}, context=self.options, stacklevel=4)
        if is_storage_option(key):
            # Filesystem connection settings are process-wide, not table options: they
            # must never end up in hoodie.properties.
            set_storage_options({key: value})
        elif key.startswith("spark."):
            self.spark.conf.set(key, value)
        else:
            self.options[key] = value

    def write_options(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The session's non-Spark options, then ``extra``."""
        return {**self.options, **(extra or {})}

    def _spellings(self, key: str) -> list[str]:
        """The keys of :attr:`options` that set ``key`` (any case, any alias of it)."""
        known = cfg.find_key(key)
        names = {n.lower() for n in known.all_names()} if known else {key.lower()}
        return [k for k in self.options if k.lower() in names]

    def option_value(self, key: str) -> str | None:
        """The value ``SET key`` shows for a hudilite option, None when it is not set."""
        spelled = self._spellings(key)
        exact = [k for k in spelled if k.lower() == key.lower()]
        return self.options[(exact or spelled)[0]] if spelled else None

    def reset_options(self, key: str | None = None) -> None:
        """``RESET [key]``: the session's hudilite options (or ``key``, every spelling of it)
        go back to those given to :func:`connect` (none by default), so later writes no
        longer use what ``SET`` gave."""
        if key is None:
            self.options = dict(self._initial_options)
            return
        for k in self._spellings(key):
            del self.options[k]
        known = cfg.find_key(key)
        names = {n.lower() for n in known.all_names()} if known else {key.lower()}
        for k, v in self._initial_options.items():
            if k.lower() in names:
                self.options[k] = v


# ---------------------------------------------------------------------------------------
# small handlers; the big ones live in ddl, dml and queries


def _use(session: Session, stmt: UseDatabase) -> Outcome:
    session.use(stmt.name)
    return Outcome()


def _set(session: Session, stmt: SetOption) -> Outcome:
    if stmt.value is None:
        # ``SET key``: a hudilite option's value, else Spark's answer (``<undefined>``).
        value = session.option_value(stmt.key)
        if value is None:
            return Outcome(session.spark.sql(f"SET {stmt.key}"))
        return Outcome(
            session.spark.createDataFrame([(stmt.key, value)], "key string, value string")
        )
    session.set_option(stmt.key, stmt.value)
    return Outcome(
        session.spark.createDataFrame([(stmt.key, stmt.value)], "key string, value string")
    )


def _reset(session: Session, stmt: ResetOption) -> Outcome:
    session.reset_options(stmt.key)
    return Outcome(session.spark.sql("RESET" if stmt.key is None else f"RESET {stmt.key}"))


def _call(session: Session, stmt: Call) -> Outcome:
    return Outcome(run_procedure(session, stmt.procedure, stmt.args, stmt.named_args))


# Why hudilite refuses some of Spark's statements on its tables (by first word).
_REFUSALS = {
    "ANALYZE": (
        "hudilite tables are read through temporary views of their snapshot, which hold no "
        "catalog statistics; Spark sizes its plans from the files themselves (Hudi keeps "
        "column statistics in its metadata table, which hudilite does not write)"
    ),
}


def _spark(session: Session, stmt: SparkStatement) -> Outcome:
    view = ddl_views.persistent_view(session, stmt.target) if stmt.target is not None else None
    # CREATE TEMPORARY VIEW v may shadow a persistent view v, as in Spark.
    if view is not None and not stmt.words.upper().startswith("CREATE"):
        raise UnsupportedStatementError(
            f"unsupported statement on view {view.qualified_name}: {stmt.words} (a view "
            "takes CREATE OR REPLACE VIEW, ALTER VIEW ... AS, DROP VIEW, DESCRIBE and queries)"
        )
    if stmt.target is not None and session.is_hudilite(stmt.target):
        first = stmt.words.split()[0].upper() if stmt.words else ""
        reason = _REFUSALS.get(first)
        if reason is not None:
            raise UnsupportedStatementError(
                f"{' '.join(stmt.words.split()[:2]).upper()} is not supported on hudilite "
                f"table {session.display(stmt.target)}: {reason}"
            )
        raise UnsupportedStatementError(
            f"unsupported statement on hudilite table {session.display(stmt.target)}: {stmt.words}"
        )
    if stmt.opaque:
        for name in stmt.names:
            parts = name.split(".")
            candidate = TableName(parts[0] if len(parts) > 1 else None, parts[-1])
            if session.is_hudilite(candidate):
                raise UnsupportedStatementError(
                    f"unsupported statement on hudilite table {session.display(candidate)}: "
                    f"{stmt.words}"
                )
        return Outcome(session.spark.sql(stmt.sql))
    return Outcome(session.views.run(stmt.sql))


_HANDLERS: dict[type, Callable[[Session, Any], Outcome]] = {
    UseDatabase: _use,
    SetOption: _set,
    ResetOption: _reset,
    Call: _call,
    SparkStatement: _spark,
    **queries.HANDLERS,
    **dml.HANDLERS,
    **ddl.HANDLERS,
    **ddl_views.HANDLERS,
}
