"""SQL scripts -> typed statements: :func:`split_script` cuts a script into statements,
:func:`parse_statement` parses one with the hudilite dialect and translates it
(:mod:`~hudilite.sqlext.translate`) into one of the dataclasses of
:mod:`~hudilite.sqlext.statement_types`, which this module re-exports.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from .dialect import ParseError, TokenError, parse_script, view_query_text
from .statement_types import (
    AlterTableAddColumns,
    AlterTableChangeColumns,
    AlterTableDropPartition,
    AlterTableRename,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    AlterViewAs,
    Call,
    Column,
    CreateDatabase,
    CreateTable,
    CreateView,
    Delete,
    Describe,
    DescribeHistory,
    DropDatabase,
    DropTable,
    DropView,
    Explain,
    IndexStatement,
    InsertInto,
    MergeInto,
    PyValue,
    Query,
    ResetOption,
    SetOption,
    ShowCreateTable,
    ShowDatabases,
    ShowPartitions,
    ShowTables,
    ShowTblProperties,
    ShowViews,
    SparkStatement,
    SqlError,
    SqlParseError,
    SqlWarning,
    Statement,
    TableName,
    TruncateTable,
    UnsupportedStatementError,
    Update,
    UseDatabase,
    ViewColumnSpec,
    WhenMatched,
    WhenNotMatched,
    WhenNotMatchedBySource,
    statement_to_dict,
)
from .translate import spark_statement, translate

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
    "ShowCreateTable",
    "ShowDatabases",
    "ShowPartitions",
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
    "iter_parsed_script",
    "parse_statement",
    "parse_statements",
    "split_script",
    "split_script_positions",
    "statement_to_dict",
]


def split_script(text: str) -> list[str]:
    """Cut ``text`` into statements at top-level semicolons.

    Semicolons inside quotes (``'``, ``"``, backticks) and comments (``--``, ``/* */``) do
    not split; comments before a statement are dropped, and so are empty statements.
    """
    return [sql for sql, _, _ in split_script_positions(text)]


def split_script_positions(text: str) -> list[tuple[str, int, int]]:
    """Like :func:`split_script`, with the 1-based line and column where each statement starts."""
    chunks: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" and c != "`" else 1
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == ";":
            chunks.append((start, i))
            i += 1
            start = i
        else:
            i += 1
    chunks.append((start, n))
    out = []
    for begin, end in chunks:
        body_start = _skip_comments(text, begin, end)
        body = text[body_start:end].rstrip()
        if body:
            line = text.count("\n", 0, body_start) + 1
            column = body_start - (text.rfind("\n", 0, body_start) + 1) + 1
            out.append((body, line, column))
    return out


def _skip_comments(text: str, i: int, end: int) -> int:
    """Index of the first character in ``text[i:end]`` outside whitespace and comments."""
    while i < end:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl + 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2, end)
            i = end if close < 0 else close + 2
        else:
            break
    return min(i, end)


# --------------------------------------------------------------------------------------------
# parsing


def parse_statement(sql: str) -> Statement:
    """Parse one SQL statement into its dataclass.

    Raises :class:`SqlParseError` (with ``line``/``column``) on a syntax error and
    :class:`UnsupportedStatementError` for a statement hudilite does not handle.
    """
    try:
        nodes = parse_script(sql)
    except ParseError as e:
        err = e.errors[0] if e.errors else {}
        line, col = err.get("line"), err.get("col")
        desc = _TOKEN_RE.sub(_token_text, err.get("description") or str(e).split("\n")[0])
        raise SqlParseError(desc, line, col) from None
    except TokenError as e:
        raise SqlParseError(str(e)) from None
    if not nodes:
        raise SqlParseError("empty SQL statement")
    if len(nodes) > 1:
        raise SqlParseError("expected one SQL statement, got several (use split_script)")
    node = nodes[0]
    stmt = translate(node)
    if isinstance(stmt, Query):
        return dataclasses.replace(stmt, text=sql)
    if isinstance(stmt, CreateView | AlterViewAs):
        # The catalog keeps a view's query as written (SHOW CREATE TABLE shows it).
        return dataclasses.replace(stmt, query=view_query_text(sql) or stmt.query)
    return spark_statement(sql, node) if stmt is None else stmt


def iter_parsed_script(text: str) -> Iterator[tuple[str, int, int, Statement]]:
    """Each statement of ``text`` as ``(sql, line, column, parsed)``, parsed only when it is
    reached (a script runs the statements before a syntax error); a parse error's line and
    column are relative to ``text``."""
    for sql, line, column in split_script_positions(text):
        try:
            stmt = parse_statement(sql)
        except SqlParseError as e:
            if e.line is None:
                raise
            raise e.at(line, column) from None
        yield sql, line, column, stmt


def parse_statements(text: str) -> list[Statement]:
    """Split a script and parse every statement; error positions are relative to ``text``."""
    return [stmt for _, _, _, stmt in iter_parsed_script(text)]


# sqlglot's messages name tokens by their repr; say what the user wrote instead.
_TOKEN_RE = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+.*?>")


def _token_text(m: re.Match[str]) -> str:
    return "end of input" if m.group(1) == "SENTINEL" else repr(m.group(2))
