"""Queries over hudilite tables: each table a query reads becomes a Spark temp view of its
current snapshot (or of a time-travel, read-optimized or incremental read) at the moment
the statement runs, and the query text is rewritten to read those views.

Names resolve as in Spark: a user's temporary view shadows a table; ``t_ro`` and ``t_rt``
name the read-optimized and snapshot views of a merge-on-read table ``t`` (as Hudi's
Hive sync registers them); Hudi's table-valued functions (``hudi_query``,
``hudi_table_changes``, ``hudi_filesystem_view``) are read by
:mod:`~hudilite.sqlext.table_functions`.

A persistent view of the warehouse catalog (``CREATE VIEW``) is expanded at each query: its
SQL is rewritten the same way (its unqualified names resolved in the database it was created
in), so it reads the current snapshot of its tables, and registered as a temp view that
selects the view's columns by name. Views over views expand recursively; a cycle is
refused (Spark's ``RECURSIVE_VIEW``).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from typing import TYPE_CHECKING

from hudilite.errors import HudiliteError, TableNotFoundError
from hudilite.table.api import Table
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import load_config

from . import spark_errors
from .context import Handler, Outcome, SqlContext
from .dialect import ParseError, TokenError
from .spark_types import quote_identifier
from .statements import (
    Delete,
    Explain,
    InsertInto,
    MergeInto,
    Query,
    SparkStatement,
    TableName,
    UnsupportedStatementError,
    Update,
    parse_statement,
    syntax_error,
)
from .table_functions import register_function
from .table_refs import Rewritten, TableReference, UnsupportedSyntaxError, rewrite_query

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


__all__ = ["HANDLERS", "VIEW_PREFIX", "ViewRegistry", "backquoted"]

VIEW_PREFIX = "__hudilite_"


#: What a table view was read at: the table's location, ``hoodie.properties``, its stored
#: write defaults and the names in its timeline folder.
Fingerprint = tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], frozenset[str]]


class _Registered:
    """The table views registered on one SparkSession (temp views belong to the
    SparkSession, and the hudilite sessions on it share the view names of a warehouse):
    view -> fingerprint, and a lock that makes check, read and registration one step."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.views: dict[str, Fingerprint] = {}


_REGISTERED: weakref.WeakKeyDictionary[SparkSession, _Registered] = weakref.WeakKeyDictionary()
_REGISTERED_LOCK = threading.Lock()


def fingerprint(tbl: Table) -> Fingerprint:
    """What decides a read of ``tbl``: a fresh listing of its timeline folder (every
    instant file: a commit, clean, rollback or archival by any process changes it) and its
    properties. A table view read at the same fingerprint reads the same files."""
    config = load_config(tbl.gw)
    names = frozenset(e.name for e in tbl.gw.list_dir(config.timeline_dir))
    defaults = properties_file.read_write_defaults(tbl.gw)
    return (tbl.path, tuple(sorted(config.props.items())), tuple(sorted(defaults.items())), names)


class ViewRegistry:
    """The temp views a session registers for hudilite tables, refreshed per statement.

    A table's view is read again only when the table changed: its :func:`fingerprint`
    (one listing of the timeline folder and the properties files, a few milliseconds) is
    compared with the one it was read at, so a commit by any writer or process is seen by
    the next statement, and statements on an unchanged table skip the read (planning the
    snapshot and Spark's analysis of the file scan, about 50 ms)."""

    #: False re-reads every view at every statement (for measurements).
    cache_views = True

    def __init__(self, session: SqlContext) -> None:
        self.session = session
        self._warehouse = _digest(str(session.catalog.warehouse))[:8]
        # Views of current snapshots, by view name: refreshed when a user view may read them.
        self._snapshots: dict[str, tuple[TableName, str]] = {}
        # Registered expansions of persistent views: temp view name -> (db, view).
        self._persistent: dict[str, tuple[str, str]] = {}
        # The persistent views being expanded (outermost first), to catch cycles.
        self._expanding: list[tuple[str, str]] = []
        self._refreshing = False
        # Locations of the hudilite tables whose views were resolved since it was last
        # cleared: an INSERT clears it before rewriting its query, to see whether the query
        # reads the target (its write then carries the target's snapshot).
        self.reads: set[str] = set()

    def rewrite(self, sql: str) -> str:
        """``sql`` reading fresh views of the hudilite tables it names."""
        return self._rewritten(sql).text

    def run(self, sql: str) -> DataFrame:
        """``spark.sql`` of :meth:`rewrite`'s text, Spark's errors pointing into ``sql``
        (:func:`~hudilite.sqlext.spark_errors.tidy`): for a statement handed to Spark."""
        rewritten = self._rewritten(sql)
        try:
            return self.session.spark.sql(rewritten.text)
        except Exception as e:
            spark_errors.tidy(e, sql, rewritten)
            raise

    def _rewritten(self, sql: str) -> Rewritten:
        out, user_views = self._rewrite(sql)
        if not self._refreshing and any(self.session.is_temp_view(v) for v in user_views):
            # A user's view may read hudilite views registered by earlier statements
            # (Spark re-resolves temp views by name): bring them up to date.
            self.refresh()
        return out

    def view_sql(
        self, sql: str, context_database: str, creating: tuple[str, str]
    ) -> tuple[str, list[str]]:
        """A persistent view's query rewritten as :meth:`rewrite` does, its unqualified names
        in ``context_database``, and the user temp views it reads (a persistent view may
        not). A reference to ``creating`` (the view being created) is a recursive view."""
        saved = self.session.current_database
        self.session.current_database = context_database
        self._expanding.append(creating)
        try:
            out, user_views = self._rewrite(sql)
        finally:
            self._expanding.pop()
            self.session.current_database = saved
        return out.text, [v for v in user_views if self.session.is_temp_view(v)]

    def _rewrite(self, sql: str) -> tuple[Rewritten, list[str]]:
        user_views: list[str] = []

        def resolve(ref: TableReference) -> str | None:
            view = self._resolve(ref)
            if view is None and ref.function is None and ref.db is None:
                user_views.append(ref.name)
            return view

        try:
            out = rewrite_query(sql, resolve)
        except UnsupportedSyntaxError as e:
            raise UnsupportedStatementError(str(e)) from None
        except (ParseError, TokenError) as e:
            raise syntax_error(sql, e) from None
        return out, user_views

    def refresh(self) -> None:
        """Re-register every snapshot view this session made with the tables' current state,
        and every persistent view it expanded."""
        self._refreshing = True
        try:
            for view, (name, query_type) in list(self._snapshots.items()):
                if self.session.is_hudilite(name):
                    self._register_read(view, self.session.table(name), query_type, None)
                else:
                    self._snapshots.pop(view, None)
            for view, (db, view_name) in list(self._persistent.items()):
                if self.session.catalog.view_exists(db, view_name):
                    self.persistent_view(db, view_name)
                else:
                    self._persistent.pop(view, None)
        finally:
            self._refreshing = False

    def persistent_view(self, db: str, name: str) -> str:
        """Register the expansion of persistent view ``db.name`` (its query over the current
        snapshots of its tables, with the view's column names) and return its name."""
        if (db, name) in self._expanding:
            start = self._expanding.index((db, name))
            cycle = " -> ".join(backquoted(*v) for v in [*self._expanding[start:], (db, name)])
            raise UnsupportedStatementError(
                f"[RECURSIVE_VIEW] Recursive view {backquoted(db, name)} detected (cycle: {cycle})."
            )
        entry = self.session.catalog.get_view(db, name)
        saved = self.session.current_database
        self.session.current_database = entry.context_database
        self._expanding.append((db, name))
        try:
            inner = self._rewrite(entry.sql)[0].text
        finally:
            self._expanding.pop()
            self.session.current_database = saved
        # The view's columns, picked by name from what its query returns now (the query of
        # ``SELECT *`` over a table that gained a column returns more).
        picks = ", ".join(
            f"{quote_identifier(q)} AS {quote_identifier(c.name)}"
            for q, c in zip(entry.query_columns, entry.columns, strict=True)
        )
        view = f"{VIEW_PREFIX}{db}__{name}__view__{self._warehouse}"
        # A newline before ")": the view's text as written may end in a -- comment.
        self._register(view, self.session.spark.sql(f"SELECT {picks} FROM ({inner}\n) AS __v"))
        self._persistent[view] = (db, name)
        return view

    def table_view(
        self, name: TableName, *, query_type: str = "snapshot", as_of: str | None = None
    ) -> str:
        """Register a view of ``name`` (snapshot, read-optimized or as of an instant)."""
        db, table = self.session.qualify(name)
        # The fingerprint (or the read) reads the table's state next.
        tbl = self.session.handle(name)
        self.reads.add(tbl.path)
        suffix = query_type if as_of is None else "asof_" + _digest(as_of)
        # Sessions on other warehouses may share this SparkSession (and its temp views).
        view = f"{VIEW_PREFIX}{db}__{table}__{suffix}__{self._warehouse}"
        self._register_read(view, tbl, query_type, as_of)
        if as_of is None:
            self._snapshots[view] = (TableName(db, table), query_type)
        return view

    def register_frame(self, df: DataFrame, label: str) -> str:
        """Register ``df`` under a fresh view name derived from ``label``."""
        view = f"{VIEW_PREFIX}{label}"
        self._register(view, df)
        return view

    def _register_read(self, view: str, tbl: Table, query_type: str, as_of: str | None) -> None:
        """Register ``view`` as a read of ``tbl``, unless it holds one of the same state."""
        registered = self._registered()
        with registered.lock:
            mark = fingerprint(tbl) if self.cache_views else None
            if mark is not None and registered.views.get(view) == mark and self._exists(view):
                return
            # The fingerprint is taken before the read: a commit landing in between is read
            # now or, with a fingerprint that no longer matches, at the next statement.
            df = tbl.read(query_type=query_type, as_of=as_of)  # type: ignore[arg-type]
            registered.views.pop(view, None)
            df.createOrReplaceTempView(view)
            if mark is not None:
                registered.views[view] = mark

    def _exists(self, view: str) -> bool:
        # A temp view can be dropped behind the registry's back (DROP TABLE drops its
        # views, callers may drop every temp view): one catalog lookup.
        return bool(self.session.spark.catalog.tableExists("`" + view.replace("`", "``") + "`"))

    def _registered(self) -> _Registered:
        with _REGISTERED_LOCK:
            return _REGISTERED.setdefault(self.session.spark, _Registered())

    def _register(self, view: str, df: DataFrame) -> None:
        registered = self._registered()
        with registered.lock:
            registered.views.pop(view, None)
            df.createOrReplaceTempView(view)

    def _resolve(self, ref: TableReference) -> str | None:
        if ref.db is None and ref.name.startswith(VIEW_PREFIX):
            return None  # a view hudilite registered (DML builds queries over them)
        if ref.function is not None:
            return register_function(self.session, self, ref.function, ref.args)
        name = TableName(ref.db, ref.name)
        if self.session.is_hudilite(name):
            return self.table_view(name, as_of=ref.as_of)
        base, _, suffix = ref.name.rpartition("_")
        if base and suffix.lower() in ("ro", "rt"):
            base_name = TableName(ref.db, base)
            if self.session.is_hudilite(base_name) and self.session.table(base_name).config.is_mor:
                query_type = "read_optimized" if suffix.lower() == "ro" else "snapshot"
                return self.table_view(base_name, query_type=query_type, as_of=ref.as_of)
        if ref.db is None and self.session.is_temp_view(ref.name):
            if ref.as_of is not None:
                raise UnsupportedStatementError(
                    f"TIMESTAMP AS OF needs a hudilite table; {ref.name} is a temporary view"
                )
            return None  # a temporary view shadows a persistent view, as in Spark
        view = self._persistent_view_of(name)
        if view is not None:
            if ref.as_of is not None:
                raise UnsupportedStatementError(
                    f"TIMESTAMP AS OF needs a hudilite table; {view[0]}.{view[1]} is a view"
                )
            return self.persistent_view(*view)
        if _is_file_reference(ref):
            return None  # Spark's SQL on files: parquet.`/path`
        if not self.session.spark.catalog.tableExists(sql_name(name)):
            db, table = self.session.qualify(name)
            raise TableNotFoundError(f"table or view {db}.{table} not found")
        return None

    def _persistent_view_of(self, name: TableName) -> tuple[str, str] | None:
        """``(db, view)`` when ``name`` is a persistent view (temp views checked before)."""
        db, table = self.session.qualify(name)
        try:
            found = self.session.catalog.view_exists(db, table)
        except HudiliteError:  # not a catalog name (a path, an invalid name)
            return None
        return (db, table) if found else None


# Data sources Spark reads directly by path in a query (``SELECT * FROM parquet.`/path` ``).
_FILE_SOURCES = frozenset(
    ("parquet", "orc", "json", "csv", "text", "avro", "binaryfile", "xml", "delta", "hudi")
)


def _is_file_reference(ref: TableReference) -> bool:
    """Whether ``ref`` is Spark's ``<source>.`<path>` `` (a query over files, not a table)."""
    if ref.db is None:
        return False
    return ref.db.lower() in _FILE_SOURCES or any(c in ref.name for c in "/:\\")


def backquoted(*parts: str) -> str:
    """```db`.`v``` as Spark's error messages name objects."""
    return ".".join(f"`{p}`" for p in parts)


def sql_name(name: TableName) -> str:
    """``name`` as Spark SQL text, each part back-quoted when needed."""
    return ".".join(quote_identifier(p) for p in (name.db, name.table) if p)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _query(session: SqlContext, stmt: Query) -> Outcome:
    # The text as written: a query reading no hudilite table reaches Spark byte for byte.
    return Outcome(session.views.run(stmt.text or stmt.sql))


def _explain(session: SqlContext, stmt: Explain) -> Outcome:
    """``EXPLAIN [mode] <statement>``: Spark's plan of the statement as it runs, its
    hudilite tables read as views. DML on a hudilite table has no single Spark plan (it is
    a hudilite write: one commit), so it is refused by name."""
    inner = parse_statement(stmt.sql)
    prefix = "EXPLAIN " + (f"{stmt.mode} " if stmt.mode else "")
    target: TableName | None = None
    if isinstance(inner, InsertInto | Update | Delete):
        target = inner.table
    elif isinstance(inner, MergeInto):
        target = inner.target
    elif isinstance(inner, SparkStatement):
        target = inner.target
        if inner.opaque:
            named = [TableName(*_split(n)) for n in inner.names]
            target = next((n for n in named if session.is_hudilite(n)), target)
    elif not isinstance(inner, Query):
        raise UnsupportedStatementError(
            f"EXPLAIN {type(inner).__name__} is not supported: hudilite runs it itself, "
            "without a Spark plan; EXPLAIN takes queries and Spark's own statements"
        )
    if target is not None and session.is_hudilite(target):
        verb = stmt.sql.split()[0].upper()
        raise UnsupportedStatementError(
            f"EXPLAIN {verb} is not supported on hudilite table "
            f"{session.display(target)}: hudilite runs it as its own write (one commit), "
            "not as one Spark plan; EXPLAIN the query that selects the rows instead"
        )
    if isinstance(inner, SparkStatement) and inner.opaque:
        return Outcome(session.spark.sql(prefix + stmt.sql))
    return Outcome(session.spark.sql(prefix + session.views.rewrite(stmt.sql)))


def _split(name: str) -> tuple[str | None, str]:
    parts = name.split(".")
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


HANDLERS: dict[type, Handler] = {Query: _query, Explain: _explain}
