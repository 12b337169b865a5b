"""SQL scripts -> typed statements: :func:`split_script` cuts a script into statements,
:func:`parse_statement` parses one with the hudilite dialect and translates it
(:mod:`~hudilite.sqlext.translate`) into one of the dataclasses of
:mod:`~hudilite.sqlext.statement_types`, which this module re-exports.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from .dialect import MERGE_WITHOUT_WHEN, ParseError, TokenError, parse_script, view_query_text
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
    ShowColumns,
    ShowCreateTable,
    ShowDatabases,
    ShowPartitions,
    ShowTableExtended,
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
    "iter_parsed_script",
    "parse_statement",
    "parse_statements",
    "split_script",
    "split_script_positions",
    "statement_to_dict",
    "syntax_error",
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
    except (ParseError, TokenError) as e:
        raise syntax_error(sql, e) from None
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


# --------------------------------------------------------------------------------------------
# syntax errors, said as Spark says them

# The words a Spark (or hudilite) statement starts with; anything else is a syntax error
# at the first word, wherever sqlglot's expression parser gave up (``SELEC * FROM t``).
_STATEMENT_WORDS = frozenset(
    [
        "ADD",
        "ALTER",
        "ANALYZE",
        "BEGIN",
        "CACHE",
        "CALL",
        "CLEAR",
        "COMMENT",
        "CREATE",
        "DECLARE",
        "DELETE",
        "DESC",
        "DESCRIBE",
        "DROP",
        "EXECUTE",
        "EXPLAIN",
        "FROM",
        "GRANT",
        "INSERT",
        "LIST",
        "LOAD",
        "MAP",
        "MERGE",
        "MSCK",
        "REDUCE",
        "REFRESH",
        "REPAIR",
        "REPLACE",
        "RESET",
        "REVOKE",
        "RUN",
        "SCHEDULE",
        "SELECT",
        "SET",
        "SHOW",
        "TABLE",
        "TRUNCATE",
        "UNCACHE",
        "UPDATE",
        "USE",
        "VALUES",
        "WITH",
    ]
)
_WORD_RE = re.compile(r"[A-Za-z_]\w*|\S")


def syntax_error(sql: str, exc: Exception) -> SqlParseError:
    """Spark's wording for a syntax error in ``sql``: ``Syntax error at or near 'x'`` (or
    ``end of input``) at the token where the statement stops making sense, with what was
    expected when the parser knows; an unknown first word is the error itself."""
    start = _skip_comments(sql, 0, len(sql))
    first = _WORD_RE.match(sql, start)
    if first is not None and first.group().upper() not in _STATEMENT_WORDS | {"("}:
        return _error_at(sql, start, f"Syntax error at or near '{first.group()}'")
    if isinstance(exc, TokenError):
        offset, what = _unclosed(sql)
        if offset is None:
            return SqlParseError(f"Syntax error: {exc}")
        return _error_at(sql, offset, f"Syntax error at or near '{sql[offset]}': {what}")
    err = exc.errors[0] if isinstance(exc, ParseError) and exc.errors else {}
    description = str(err.get("description") or str(exc).split("\n")[0])
    offset = err.get("offset")
    if offset is None:
        return SqlParseError(description, err.get("line"), err.get("col"))
    if description == MERGE_WITHOUT_WHEN:
        return _error_at(sql, offset, description)
    near = err.get("near")
    message = "Syntax error at or near " + ("end of input" if near is None else f"'{near}'")
    hint = _hint(description)
    return _error_at(sql, offset, f"{message}: {hint}" if hint else message)


def _hint(description: str) -> str:
    """What the parser expected, from its message (``Expected ON after RUN COMPACTION``,
    ``Expecting )``); empty for sqlglot's internal ones (``Required keyword: 'this' missing
    for <class ...>``, ``Invalid expression / Unexpected token``)."""
    if description.startswith("Expecting "):
        return f"expected '{description.removeprefix('Expecting ')}'"
    if not description.startswith("Expected "):
        return ""
    hint = description.split(" but got ", 1)[0]
    return hint[0].lower() + hint[1:]


def _error_at(sql: str, offset: int, message: str) -> SqlParseError:
    line = sql.count("\n", 0, offset) + 1
    return SqlParseError(message, line, offset - (sql.rfind("\n", 0, offset) + 1) + 1)


def _unclosed(sql: str) -> tuple[int | None, str]:
    """Where ``sql`` opens a string, quoted name or comment it never closes."""
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            j = i + 1
            while j < n and sql[j] != c:
                j += 2 if sql[j] == "\\" and c != "`" else 1
            if j >= n:
                return i, "the quoted text is not closed"
            i = j + 1
        elif sql.startswith("--", i):
            nl = sql.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            if close < 0:
                return i, "the comment is not closed (append */)"
            i = close + 2
        else:
            i += 1
    return None, ""
