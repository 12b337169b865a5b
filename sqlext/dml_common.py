"""What the DML handlers share: the target table, its columns, the source of a statement.

:mod:`.dml` (INSERT, UPDATE, DELETE) and :mod:`.dml_merge` (MERGE INTO) load their target
once (:func:`load_target`), name its columns as the table spells them (:func:`find_column`),
tell a hudilite table from a Spark one (:func:`is_foreign`: Spark runs the statement then),
quote names for the SQL they build (:func:`quote`) and keep, per run, what decides whether a
conflict re-runs the statement (:class:`StatementRun`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudilite import config as cfg
from hudilite.errors import SchemaError
from hudilite.schema import META_COLUMNS
from hudilite.spark.convert import spark_schema

from .context import SqlContext
from .statements import TableName

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from hudilite.table.api import Table
    from hudilite.tablestate.state import TableState

__all__ = [
    "StatementRun",
    "data_columns",
    "find_column",
    "is_foreign",
    "load_target",
    "quote",
    "strip_meta",
]


@dataclass
class StatementRun:
    """What one run of a statement learned that decides whether a conflict re-runs it:
    whether its write read the target (an INSERT's query may not), and how many re-runs
    ``hoodie.hudilite.sql.conflict.retries`` allows (session options over the table's)."""

    reads_target: bool = True
    retries: int = 0

    def configure(self, session: SqlContext, state: TableState) -> None:
        """Read the re-run limit for this statement on the table of ``state``."""
        opts = state.options(session.write_options())
        self.retries = max(0, int(opts.get(cfg.SQL_CONFLICT_RETRIES)))


def quote(name: str) -> str:
    """``name`` as a back-quoted Spark identifier."""
    return "`" + name.replace("`", "``") + "`"


def load_target(session: SqlContext, name: TableName) -> tuple[Table, TableState]:
    """A handle on the hudilite table ``name`` and its state, read once (``session.table``
    reads the state to check the table, and the statement reads it again right after); a
    missing table raises the same TableNotFoundError from the read."""
    tbl = session.handle(name)
    return tbl, tbl.state()


def data_columns(state: TableState) -> StructType:
    """The table's data columns (its schema without Hudi's meta columns) as Spark types."""
    return spark_schema(state.data_schema)


def find_column(schema: StructType, name: str, what: str, display: str) -> str:
    """The table's spelling of column ``name`` (case-insensitive) or a SchemaError."""
    for f in schema.fields:
        if f.name.lower() == name.lower():
            return f.name
    raise SchemaError(
        f"{what}: column {name!r} is not a column of {display} "
        f"({', '.join(f.name for f in schema.fields)})"
    )


def strip_meta(df: DataFrame) -> DataFrame:
    """Drop Hudi's meta columns leading a ``SELECT *`` from another Hudi table."""
    lead = [c for c in df.columns[: len(META_COLUMNS)] if c in META_COLUMNS]
    return df.drop(*lead) if len(lead) == len(META_COLUMNS) else df


def is_foreign(session: SqlContext, name: TableName) -> bool:
    """Whether ``name`` is a Spark table or view rather than a hudilite table."""
    if session.is_hudilite(name):
        return False
    if name.db is None and session.is_temp_view(name.table):
        return True
    qualified = f"{name.db}.{name.table}" if name.db else name.table
    return bool(session.spark.catalog.tableExists(qualified))
