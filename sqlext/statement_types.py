"""The typed SQL statements hudilite runs, and its SQL errors.

Each statement is a plain dataclass (:data:`Statement` is their union);
:mod:`~hudilite.sqlext.translate` builds them from the dialect's syntax trees. SQL fragments a
later stage evaluates (queries, expressions, conditions) are kept as SQL text in Spark's
dialect.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from hudilite.errors import HudiliteError, HudiliteWarning

__all__ = [
    "AlterTableAddColumns",
    "AlterTableChangeColumns",
    "AlterTableDropPartition",
    "AlterTableRename",
    "AlterTableSetProperties",
    "AlterTableUnsetProperties",
    "AlterViewAs",
    "Call",
    "Column",
    "CreateDatabase",
    "CreateTable",
    "CreateView",
    "Delete",
    "Describe",
    "DescribeHistory",
    "DropDatabase",
    "DropTable",
    "DropView",
    "Explain",
    "IndexStatement",
    "InsertInto",
    "MergeInto",
    "PyValue",
    "Query",
    "ResetOption",
    "SetOption",
    "ShowColumns",
    "ShowCreateTable",
    "ShowDatabases",
    "ShowPartitions",
    "ShowTableExtended",
    "ShowTables",
    "ShowTblProperties",
    "ShowViews",
    "SparkStatement",
    "SqlError",
    "SqlParseError",
    "SqlWarning",
    "Statement",
    "TableName",
    "TruncateTable",
    "UnsupportedStatementError",
    "Update",
    "UseDatabase",
    "ViewColumnSpec",
    "WhenMatched",
    "WhenNotMatched",
    "WhenNotMatchedBySource",
    "statement_to_dict",
]

PyValue = str | int | float | bool | None


class SqlError(HudiliteError, ValueError):
    """A SQL statement hudilite cannot accept."""


class SqlParseError(SqlError):
    """A SQL statement has a syntax error at ``line``/``column`` (1-based, when known)."""

    def __init__(self, description: str, line: int | None = None, column: int | None = None):
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"SQL parse error{where}: {description}")
        self.description = description
        self.line = line
        self.column = column

    def at(self, line: int, column: int) -> SqlParseError:
        """This error (positioned in its statement) positioned in a text where that
        statement starts at ``line``/``column``; itself when it has no position."""
        if self.line is None:
            return self
        col = self.column if self.line > 1 or self.column is None else self.column + column - 1
        return SqlParseError(self.description, self.line + line - 1, col)


class UnsupportedStatementError(SqlError):
    """A syntactically valid statement hudilite does not support."""


class SqlWarning(HudiliteWarning):
    """A statement that runs but probably does not do what was meant (e.g. a positional
    INSERT whose query columns are the table's in another order)."""


# --------------------------------------------------------------------------------------------
# statement dataclasses


@dataclass(frozen=True)
class TableName:
    """A table reference: ``table`` in database ``db`` (None: the current database)."""

    db: str | None
    table: str


@dataclass(frozen=True)
class Column:
    """A column definition; ``type`` is the Spark SQL type string (``BIGINT``, ``STRUCT<...>``)."""

    name: str
    type: str
    nullable: bool = True
    comment: str | None = None


@dataclass(frozen=True)
class CreateTable:
    name: TableName
    if_not_exists: bool
    columns: list[Column] | None
    using: str | None
    options: dict[str, str]
    partitioned_by: list[str]
    location: str | None
    as_select: str | None


@dataclass(frozen=True)
class CreateDatabase:
    name: str
    if_not_exists: bool
    location: str | None = None


@dataclass(frozen=True)
class DropDatabase:
    name: str
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class UseDatabase:
    name: str


@dataclass(frozen=True)
class ShowDatabases:
    pass


@dataclass(frozen=True)
class ShowTables:
    db: str | None
    like: str | None = None


@dataclass(frozen=True)
class ShowTableExtended:
    """``SHOW TABLE EXTENDED [IN db] LIKE 'pattern'``: SHOW TABLES' rows, each with its
    ``information`` (Spark's ``Key: value`` lines)."""

    db: str | None
    like: str


@dataclass(frozen=True)
class ShowColumns:
    """``SHOW COLUMNS (IN|FROM) t [(IN|FROM) db]``: the names of a table's columns."""

    name: TableName


@dataclass(frozen=True)
class ShowViews:
    """``SHOW VIEWS [IN db] [LIKE 'pattern']``."""

    db: str | None
    like: str | None = None


@dataclass(frozen=True)
class ViewColumnSpec:
    """A column of ``CREATE VIEW v (name [COMMENT '...'], ...)``."""

    name: str
    comment: str | None = None


@dataclass(frozen=True)
class CreateView:
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(cols)] [COMMENT c] [TBLPROPERTIES
    (...)] AS <query>`` (a persistent view; temporary views go to Spark). ``query`` is the
    query as written."""

    name: TableName
    query: str
    columns: list[ViewColumnSpec] | None = None
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterViewAs:
    """``ALTER VIEW v AS <query>``: a new query for an existing view."""

    name: TableName
    query: str


@dataclass(frozen=True)
class DropView:
    name: TableName
    if_exists: bool


@dataclass(frozen=True)
class Describe:
    name: TableName
    extended: bool


@dataclass(frozen=True)
class ShowCreateTable:
    name: TableName


@dataclass(frozen=True)
class ShowPartitions:
    name: TableName


@dataclass(frozen=True)
class ShowTblProperties:
    """``SHOW TBLPROPERTIES t [(key)]``."""

    name: TableName
    key: str | None = None


@dataclass(frozen=True)
class DescribeHistory:
    """``DESCRIBE HISTORY t [LIMIT n]``: the table's timeline, newest first."""

    name: TableName
    limit: int | None = None


@dataclass(frozen=True)
class Explain:
    """``EXPLAIN [mode] <statement>``: ``sql`` is the statement as written."""

    mode: str | None
    sql: str


@dataclass(frozen=True)
class AlterTableAddColumns:
    name: TableName
    columns: list[Column]


@dataclass(frozen=True)
class AlterTableSetProperties:
    name: TableName
    properties: dict[str, str]


@dataclass(frozen=True)
class AlterTableUnsetProperties:
    name: TableName
    keys: list[str]
    if_exists: bool = False


@dataclass(frozen=True)
class AlterTableRename:
    name: TableName
    new_name: TableName


@dataclass(frozen=True)
class AlterTableChangeColumns:
    """``ALTER TABLE t DROP COLUMN[S] ...`` (``action`` ``drop``), ``RENAME COLUMN a TO b``
    (``rename``, ``new_name``) or ``ALTER|CHANGE COLUMN a [a] [TYPE] T`` (``type``,
    ``new_type`` the Spark type text)."""

    name: TableName
    action: Literal["drop", "rename", "type"]
    columns: list[str]
    new_name: str | None = None
    new_type: str | None = None


@dataclass(frozen=True)
class AlterTableDropPartition:
    name: TableName
    spec: dict[str, PyValue]
    if_exists: bool = False


@dataclass(frozen=True)
class TruncateTable:
    name: TableName


@dataclass(frozen=True)
class DropTable:
    name: TableName
    if_exists: bool
    purge: bool


@dataclass(frozen=True)
class IndexStatement:
    """Hudi 1.x ``CREATE INDEX`` / ``DROP INDEX`` / ``SHOW INDEXES`` (not supported yet):
    ``statement`` is the verb (``CREATE INDEX``, ...), ``index`` the index name (None for
    SHOW), ``table`` the table it is on."""

    statement: str
    index: str | None
    table: TableName


@dataclass(frozen=True)
class SetOption:
    """``SET key = value``; ``SET key`` (show the value) has ``value`` None."""

    key: str
    value: str | None


@dataclass(frozen=True)
class ResetOption:
    """``RESET [key]``: ``key`` None resets every option."""

    key: str | None


@dataclass(frozen=True)
class InsertInto:
    """``INSERT INTO|OVERWRITE``; ``partition`` maps a column to its static value or None."""

    table: TableName
    columns: list[str] | None
    overwrite: bool
    partition: dict[str, PyValue]
    query: str


@dataclass(frozen=True)
class Update:
    table: TableName
    assignments: dict[str, str]
    where: str | None


@dataclass(frozen=True)
class Delete:
    table: TableName
    where: str | None


@dataclass(frozen=True)
class WhenMatched:
    condition: str | None
    action: Literal["update", "delete"]
    assignments: dict[str, str] | Literal["*"] | None


@dataclass(frozen=True)
class WhenNotMatched:
    condition: str | None
    columns: list[str] | Literal["*"]
    values: list[str] | None


@dataclass(frozen=True)
class WhenNotMatchedBySource:
    """``WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET ... | DELETE``: target rows
    no source row matches."""

    condition: str | None
    action: Literal["update", "delete"]
    assignments: dict[str, str] | None


@dataclass(frozen=True)
class MergeInto:
    """``MERGE INTO``: ``source`` is a :class:`TableName` or the SQL text of a query."""

    target: TableName
    target_alias: str | None
    source: TableName | str
    source_alias: str | None
    on: str
    clauses: list[WhenMatched | WhenNotMatched | WhenNotMatchedBySource] = field(
        default_factory=list
    )


@dataclass(frozen=True)
class Call:
    """``CALL procedure(args)``; the ``system.`` prefix is stripped from ``procedure``."""

    procedure: str
    args: list[PyValue]
    named_args: dict[str, PyValue]


@dataclass
class SparkStatement:
    """A statement hudilite does not interpret itself; it goes to Spark unless it touches a
    hudilite table.

    ``target`` is the table it creates, alters or drops (None for none or unknown);
    ``names`` every identifier in it when sqlglot could only keep it as opaque text
    (``opaque``); ``words`` its first words, for messages.
    """

    sql: str
    target: TableName | None
    words: str
    opaque: bool = False
    names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Query:
    """Any query (SELECT, WITH, VALUES, ...), as Spark SQL text; ``text`` is the statement
    as written (what Spark gets when the query reads no hudilite table)."""

    sql: str
    text: str | None = field(default=None, compare=False, repr=False)


Statement = (
    CreateTable
    | CreateDatabase
    | DropDatabase
    | UseDatabase
    | ShowDatabases
    | ShowColumns
    | ShowTableExtended
    | ShowTables
    | ShowViews
    | CreateView
    | AlterViewAs
    | DropView
    | Describe
    | ShowCreateTable
    | ShowPartitions
    | AlterTableAddColumns
    | AlterTableSetProperties
    | AlterTableUnsetProperties
    | AlterTableRename
    | AlterTableDropPartition
    | AlterTableChangeColumns
    | ShowTblProperties
    | DescribeHistory
    | Explain
    | TruncateTable
    | DropTable
    | IndexStatement
    | SetOption
    | ResetOption
    | InsertInto
    | Update
    | Delete
    | MergeInto
    | Call
    | Query
    | SparkStatement
)


def statement_to_dict(stmt: Statement) -> dict[str, Any]:
    """``stmt`` as a JSON-ready dict; statements and MERGE clauses carry their class name
    under ``"kind"``."""
    out: dict[str, Any] = {"kind": type(stmt).__name__, **dataclasses.asdict(stmt)}
    if isinstance(stmt, Query):
        out.pop("text", None)  # the input itself
    if isinstance(stmt, MergeInto):
        out["clauses"] = [{"kind": type(c).__name__, **dataclasses.asdict(c)} for c in stmt.clauses]
    return out
