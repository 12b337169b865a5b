"""Persistent views: ``CREATE [OR REPLACE] VIEW``, ``ALTER VIEW ... AS``, ``DROP VIEW``,
``SHOW VIEWS``, and ``DESCRIBE`` / ``SHOW CREATE TABLE`` / ``DROP TABLE`` when they name a
view, with the rows and error messages of Spark SQL.

A view lives in the warehouse catalog (:meth:`~hudilite.catalog.Catalog.create_view`): its
query as written, the database its unqualified names resolve in, its columns (names, Spark
types, comments) and the query's output columns. Every process and server connection on the
warehouse sees it; a query on it reads the current snapshot of its tables
(:meth:`~hudilite.sqlext.queries.ViewRegistry.persistent_view` expands it per statement).

Creating a view resolves its query once, as Spark does: a missing table is named, a temp
view in it is refused (``INVALID_TEMP_OBJ_REFERENCE``), a cycle through other views is
refused (``RECURSIVE_VIEW``), a column list must match the query's columns, and tables and
views share one namespace per database. Temporary views (``CREATE TEMPORARY VIEW``) are
Spark's own and shadow a persistent view of the same name, as in Spark.

The render functions are pure (no JVM) and unit-tested.
"""

from __future__ import annotations

from dataclasses import replace

from hudilite.catalog import DatabaseNotFoundError, ViewColumn, ViewEntry
from hudilite.errors import TableExistsError, TableNotFoundError

from . import ddl
from .context import Handler, Outcome, SqlContext
from .ddl_show import DESCRIBE_SCHEMA, like_matcher, user_temp_views
from .queries import backquoted
from .spark_types import quote_identifier, sql_string
from .statements import (
    AlterViewAs,
    CreateView,
    Describe,
    DropTable,
    DropView,
    ShowCreateTable,
    ShowViews,
    SqlError,
    TableName,
    UnsupportedStatementError,
)

__all__ = [
    "HANDLERS",
    "describe_view_rows",
    "persistent_view",
    "render_create_view",
]

SHOW_VIEWS_SCHEMA = "namespace string, viewName string, isTemporary boolean"

# --------------------------------------------------------------------------------------------
# pure rendering


def describe_view_rows(entry: ViewEntry, extended: bool) -> list[tuple[str, str, str | None]]:
    """DESCRIBE's rows for a view: its columns; EXTENDED adds Spark's detailed section."""
    rows: list[tuple[str, str, str | None]] = [
        (c.name, c.data_type, c.comment) for c in entry.columns
    ]
    if not extended:
        return rows
    rows += [
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Database", entry.database, ""),
        ("Table", entry.name, ""),
        ("Created Time", entry.created_at, ""),
        ("Type", "VIEW", ""),
    ]
    if entry.comment is not None:
        rows.append(("Comment", entry.comment, ""))
    rows += [
        ("View Text", entry.sql, ""),
        ("View Original Text", entry.sql, ""),
        ("View Catalog and Namespace", entry.context_database, ""),
        ("View Query Output Columns", f"[{', '.join(f'`{c}`' for c in entry.query_columns)}]", ""),
    ]
    if entry.properties:
        props = ", ".join(f"{k}={v}" for k, v in sorted(entry.properties.items()))
        rows.append(("Table Properties", f"[{props}]", ""))
    return rows


def render_create_view(entry: ViewEntry) -> str:
    """SHOW CREATE TABLE's text for a view, laid out as Spark prints it."""
    cols = ",\n".join(
        f"  {quote_identifier(c.name)}"
        + (f" COMMENT {sql_string(c.comment)}" if c.comment is not None else "")
        for c in entry.columns
    )
    name = f"{quote_identifier(entry.database)}.{quote_identifier(entry.name)}"
    lines = [f"CREATE VIEW {name} (\n{cols})"]
    if entry.comment is not None:
        lines.append(f"COMMENT {sql_string(entry.comment)}")
    if entry.properties:
        props = ",\n".join(
            f"  {sql_string(k)} = {sql_string(v)}" for k, v in entry.properties.items()
        )
        lines.append(f"TBLPROPERTIES (\n{props})")
    lines.append(f"AS {entry.sql}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# shared


def persistent_view(session: SqlContext, name: TableName) -> ViewEntry | None:
    """The catalog entry when ``name`` is a persistent view (not shadowed by a temp view)."""
    if name.db is None and session.is_temp_view(name.table):
        return None
    db, view = session.qualify(name)
    try:
        if not session.catalog.view_exists(db, view):
            return None
        return session.catalog.get_view(db, view)
    except (TableNotFoundError, DatabaseNotFoundError):
        return None


def _kind(session: SqlContext, db: str, name: str) -> str:
    """Spark's word for a catalog table: MANAGED or EXTERNAL."""
    return "EXTERNAL" if session.catalog.get_table(db, name).external else "MANAGED"


def _resolve_columns(
    session: SqlContext, stmt: CreateView | AlterViewAs, db: str, name: str
) -> tuple[tuple[ViewColumn, ...], tuple[str, ...]]:
    """Run the view's query through the SQL front end's table resolution (analysis only,
    no job) and return the view's columns and the query's output column names."""
    rewritten, temp_views = session.views.view_sql(stmt.query, session.current_database, (db, name))
    if temp_views:
        tv = temp_views[0]
        raise UnsupportedStatementError(
            f"[INVALID_TEMP_OBJ_REFERENCE] Cannot create the persistent object "
            f"{backquoted(db, name)} of the type VIEW because it references to the temporary "
            f"object `{tv}` of the type VIEW. Please make the temporary object `{tv}` "
            f"persistent, or make the persistent object {backquoted(db, name)} temporary."
        )
    fields = list(session.spark.sql(rewritten).schema.fields)
    query_names = [f.name for f in fields]
    seen: set[str] = set()
    for n in query_names:
        if n.lower() in seen:
            raise SqlError(
                f"[COLUMN_ALREADY_EXISTS] The column `{n.lower()}` already exists. Choose "
                f"another name or rename the existing column (view {db}.{name}); give the "
                "query's columns distinct aliases"
            )
        seen.add(n.lower())
    declared = stmt.columns if isinstance(stmt, CreateView) else None
    if declared is not None and len(declared) != len(fields):
        reason = "not enough" if len(declared) > len(fields) else "too many"
        mismatch = "NOT_ENOUGH_DATA_COLUMNS" if reason == "not enough" else "TOO_MANY_DATA_COLUMNS"
        raise SqlError(
            f"[CREATE_VIEW_COLUMN_ARITY_MISMATCH.{mismatch}] Cannot create view "
            f"{backquoted(db, name)}, the reason is {reason} data columns: View columns: "
            f"{', '.join(f'`{c.name}`' for c in declared)}. Data columns: "
            f"{', '.join(f'`{n}`' for n in query_names)}."
        )
    columns = tuple(
        ViewColumn(
            declared[i].name if declared else f.name,
            f.dataType.simpleString(),
            declared[i].comment if declared else None,
        )
        for i, f in enumerate(fields)
    )
    return columns, tuple(query_names)


# --------------------------------------------------------------------------------------------
# handlers


def _create_view(session: SqlContext, stmt: CreateView) -> Outcome:
    db, name = session.qualify(stmt.name)
    if not session.catalog.database_exists(db):
        raise DatabaseNotFoundError(f"database {db} does not exist")
    if session.catalog.table_exists(db, name):
        if stmt.replace:
            raise SqlError(
                f"[EXPECT_VIEW_NOT_TABLE.NO_ALTERNATIVE] The table {backquoted(db, name)} "
                "does not support CREATE OR REPLACE VIEW."
            )
        if stmt.if_not_exists:
            return Outcome()
        raise TableExistsError(
            f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view "
            f"{backquoted(db, name)} because it already exists."
        )
    if session.catalog.view_exists(db, name) and not stmt.replace:
        if stmt.if_not_exists:
            return Outcome()
        raise TableExistsError(
            f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view "
            f"{backquoted(db, name)} because it already exists."
        )
    columns, query_columns = _resolve_columns(session, stmt, db, name)
    entry = ViewEntry(
        name=name,
        database=db,
        sql=stmt.query,
        columns=columns,
        query_columns=query_columns,
        context_database=session.current_database,
        comment=stmt.comment,
        properties=dict(stmt.properties),
    )
    session.catalog.create_view(entry, replace=stmt.replace, if_not_exists=stmt.if_not_exists)
    return Outcome()


def _alter_view(session: SqlContext, stmt: AlterViewAs) -> Outcome:
    """``ALTER VIEW v AS <query>``: the new query's columns; comment and properties stay."""
    if stmt.name.db is None and session.is_temp_view(stmt.name.table):
        return session.run_in_spark(stmt.name.table)
    db, name = session.qualify(stmt.name)
    if session.catalog.table_exists(db, name):
        raise SqlError(
            f"[EXPECT_VIEW_NOT_TABLE.NO_ALTERNATIVE] The table {backquoted(db, name)} does "
            "not support ALTER VIEW ... AS."
        )
    try:
        old = session.catalog.get_view(db, name)
    except TableNotFoundError:
        raise TableNotFoundError(f"view {db}.{name} not found") from None
    columns, query_columns = _resolve_columns(session, stmt, db, name)
    new = replace(
        old,
        sql=stmt.query,
        columns=columns,
        query_columns=query_columns,
        context_database=session.current_database,
    )
    session.catalog.create_view(new, replace=True)
    return Outcome()


def _drop_view(session: SqlContext, stmt: DropView) -> Outcome:
    if stmt.name.db is None and session.is_temp_view(stmt.name.table):
        return Outcome(session.spark.sql(f"DROP VIEW {quote_identifier(stmt.name.table)}"))
    db, name = session.qualify(stmt.name)
    if session.is_hudilite(stmt.name):
        raise SqlError(
            "[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP VIEW requires a VIEW. But "
            f"{db}.{name} is a {_kind(session, db, name)}. Use DROP TABLE instead."
        )
    try:
        session.catalog.drop_view(db, name, if_exists=stmt.if_exists)
    except (TableNotFoundError, DatabaseNotFoundError):
        raise TableNotFoundError(f"view {db}.{name} not found") from None
    return Outcome()


def _drop_table(session: SqlContext, stmt: DropTable) -> Outcome:
    view = persistent_view(session, stmt.name)
    if view is not None:
        raise SqlError(
            "[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP TABLE requires a EXTERNAL or "
            f"MANAGED. But {view.qualified_name} is a VIEW. Use DROP VIEW instead."
        )
    return ddl.HANDLERS[DropTable](session, stmt)


def _show_views(session: SqlContext, stmt: ShowViews) -> Outcome:
    db = (stmt.db or session.current_database).lower()
    if not session.catalog.database_exists(db):
        raise DatabaseNotFoundError(f"database {db} does not exist")
    match = like_matcher(stmt.like)
    rows = [(db, v, False) for v in session.catalog.list_views(db) if match.match(v)]
    rows += [("", v, True) for v in user_temp_views(session) if match.match(v)]
    return Outcome(session.spark.createDataFrame(rows, SHOW_VIEWS_SCHEMA))


def _describe(session: SqlContext, stmt: Describe) -> Outcome:
    view = persistent_view(session, stmt.name)
    if view is None:
        return ddl.HANDLERS[Describe](session, stmt)
    rows = describe_view_rows(view, stmt.extended)
    return Outcome(session.spark.createDataFrame(rows, DESCRIBE_SCHEMA))


def _show_create_table(session: SqlContext, stmt: ShowCreateTable) -> Outcome:
    view = persistent_view(session, stmt.name)
    if view is None:
        return ddl.HANDLERS[ShowCreateTable](session, stmt)
    text = render_create_view(view)
    return Outcome(session.spark.createDataFrame([(text,)], "createtab_stmt string"))


HANDLERS: dict[type, Handler] = {
    CreateView: _create_view,
    AlterViewAs: _alter_view,
    DropView: _drop_view,
    ShowViews: _show_views,
    DropTable: _drop_table,
    Describe: _describe,
    ShowCreateTable: _show_create_table,
}
