"""The statement handlers' interface: what they get (:class:`SqlContext`, the session as
handlers see it) and what they return (:class:`Outcome`).

The handler modules (``ddl``, ``ddl_create``, ``ddl_show``, ``dml``, ``queries``) take a
:class:`SqlContext`, not the :class:`~hudilite.sqlext.session.Session` that dispatches to
them, so imports point one way: ``session`` -> handlers -> ``context``/``statements``.
:class:`~hudilite.sqlext.session.Session` satisfies the protocol structurally (mypy checks
it where the session registers its handlers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .statement_types import TableName

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hudilite.catalog import Catalog
    from hudilite.catalog.warehouse import TableEntry
    from hudilite.table.api import Table
    from hudilite.write.result import WriteResult

__all__ = [
    "METRICS_SCHEMA",
    "Handler",
    "Outcome",
    "SqlContext",
    "StatementResult",
    "TableViews",
    "metrics_frame",
    "write_outcome",
]

METRICS_SCHEMA = (
    "instant string, operation string, num_affected_rows long, num_inserted_rows long, "
    "num_updated_rows long, num_deleted_rows long, num_files_written long"
)


@dataclass
class Outcome:
    """What a statement handler returns: rows to show and the write it made, if any."""

    df: DataFrame | None = None
    write: WriteResult | None = None


@dataclass
class StatementResult:
    """One executed statement of a script: where it starts, its kind, rows and write."""

    sql: str
    line: int
    column: int
    kind: str
    df: DataFrame | None
    write: WriteResult | None
    #: Warnings the statement raised (unknown or unsupported option keys, ...), for the
    #: CLI to print as ``warning:`` lines; they are also re-issued as Python warnings.
    warnings: tuple[str, ...] = ()


def metrics_frame(spark: SparkSession, result: WriteResult) -> DataFrame:
    """One row with the write's instant and counts (the numbers in its commit metadata)."""
    row = (
        result.instant_time,
        result.operation,
        result.num_inserts + result.num_updates + result.num_deletes,
        result.num_inserts,
        result.num_updates,
        result.num_deletes,
        result.files_written,
    )
    # why lazy: spark_types imports pyspark, which this module leaves to its callers
    from .spark_types import simple_struct

    # A StructType built in Python: a DDL string is parsed by the JVM at every call (a
    # Py4J round trip, about half of this frame's cost).
    return spark.createDataFrame([row], simple_struct(METRICS_SCHEMA))


def write_outcome(spark: SparkSession, result: WriteResult) -> Outcome:
    """The outcome of a statement that made one write."""
    return Outcome(metrics_frame(spark, result), result)


class TableViews(Protocol):
    """The temp views a session registers so Spark SQL can read hudilite tables."""

    #: Locations of the hudilite tables whose views were resolved since it was cleared.
    reads: set[str]

    def rewrite(self, sql: str) -> str:
        """``sql`` reading fresh views of the hudilite tables it names."""
        ...

    def run(self, sql: str) -> DataFrame:
        """``spark.sql`` of ``sql`` rewritten, Spark's error positions pointing into ``sql``."""
        ...

    def refresh(self) -> None:
        """Re-register the session's snapshot views with the tables' current state."""
        ...

    def table_view(
        self, name: TableName, *, query_type: str = "snapshot", as_of: str | None = None
    ) -> str:
        """Register a view of ``name`` and return the view's name."""
        ...

    def register_frame(self, df: DataFrame, label: str) -> str:
        """Register ``df`` under a view name derived from ``label``."""
        ...

    def view_sql(
        self, sql: str, context_database: str, creating: tuple[str, str]
    ) -> tuple[str, list[str]]:
        """A persistent view's query, rewritten, and the user temp views it reads."""
        ...

    def persistent_view(self, db: str, name: str) -> str:
        """Register the expansion of persistent view ``db.name`` and return its name."""
        ...


class SqlContext(Protocol):
    """The session state and name resolution statement handlers use."""

    current_database: str
    options: dict[str, str]

    @property
    def spark(self) -> SparkSession:
        """The SparkSession statements run in."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The warehouse catalog."""
        ...

    @property
    def views(self) -> TableViews:
        """The session's views of hudilite tables."""
        ...

    def qualify(self, name: TableName) -> tuple[str, str]:
        """``(database, table)`` for ``name``, lower-cased."""
        ...

    def display(self, name: TableName) -> str:
        """``db.table`` for messages."""
        ...

    def is_hudilite(self, name: TableName) -> bool:
        """Whether ``name`` is a table of this warehouse (not shadowed by a temp view)."""
        ...

    def is_temp_view(self, name: str) -> bool:
        """Whether Spark has a user temporary view called ``name``."""
        ...

    def entry(self, name: TableName) -> TableEntry:
        """The catalog entry of ``name``."""
        ...

    def table(self, name: TableName) -> Table:
        """A :class:`hudilite.Table` handle on ``name``."""
        ...

    def handle(self, name: TableName) -> Table:
        """A handle on ``name`` without :meth:`Table.load`'s checking read: for callers
        that read the table's state next (that read raises the same TableNotFoundError)."""
        ...

    def run_in_spark(self, what: str) -> Outcome:
        """Hand the running statement to Spark."""
        ...

    def use(self, database: str) -> None:
        """Make ``database`` the current one."""
        ...

    def set_option(self, key: str, value: str) -> None:
        """``SET key=value``."""
        ...

    def write_options(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The session's non-Spark options, then ``extra``."""
        ...


#: A statement handler: runs one statement of its kind in a session.
Handler = Callable[[SqlContext, Any], Outcome]
