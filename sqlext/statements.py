"""Typed SQL statements and their translation from the hudilite dialect's syntax trees.

:func:`split_script` cuts a script into statements; :func:`parse_statement` turns one
statement into one of the plain dataclasses below. SQL fragments a later stage evaluates
(queries, expressions, conditions) are kept as SQL text in Spark's dialect.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlglot import exp

from hudilite.errors import HudiliteError

from .dialect import (
    HudiCall,
    HudiShow,
    ParseError,
    TokenError,
    parse_script,
    to_sql,
)

__all__ = [
    "AlterTableAddColumns",
    "AlterTableDropPartition",
    "AlterTableRename",
    "AlterTableSetProperties",
    "AlterTableUnsetProperties",
    "Call",
    "Column",
    "CreateDatabase",
    "CreateTable",
    "Delete",
    "Describe",
    "DropDatabase",
    "DropTable",
    "InsertInto",
    "MergeInto",
    "Query",
    "SetOption",
    "ShowCreateTable",
    "ShowDatabases",
    "ShowPartitions",
    "ShowTables",
    "SparkStatement",
    "SqlError",
    "SqlParseError",
    "Statement",
    "TableName",
    "TruncateTable",
    "UnsupportedStatementError",
    "Update",
    "UseDatabase",
    "WhenMatched",
    "WhenNotMatched",
    "parse_statement",
    "parse_statements",
    "split_script",
    "split_script_positions",
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


class UnsupportedStatementError(SqlError):
    """A syntactically valid statement hudilite does not support."""


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
class SetOption:
    key: str
    value: str


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
class MergeInto:
    """``MERGE INTO``: ``source`` is a :class:`TableName` or the SQL text of a query."""

    target: TableName
    target_alias: str | None
    source: TableName | str
    source_alias: str | None
    on: str
    clauses: list[WhenMatched | WhenNotMatched] = field(default_factory=list)


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
    """Any query (SELECT, WITH, VALUES, ...), as Spark SQL text."""

    sql: str


Statement = (
    CreateTable
    | CreateDatabase
    | DropDatabase
    | UseDatabase
    | ShowDatabases
    | ShowTables
    | Describe
    | ShowCreateTable
    | ShowPartitions
    | AlterTableAddColumns
    | AlterTableSetProperties
    | AlterTableUnsetProperties
    | AlterTableRename
    | AlterTableDropPartition
    | TruncateTable
    | DropTable
    | SetOption
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
    if isinstance(stmt, MergeInto):
        out["clauses"] = [{"kind": type(c).__name__, **dataclasses.asdict(c)} for c in stmt.clauses]
    return out


# --------------------------------------------------------------------------------------------
# splitting


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
    unset = _UNSET_RE.match(sql)
    if unset:
        # sqlglot keeps this form as an opaque command; it is small enough to read here.
        keys = [k.strip().strip("'\"`") for k in unset.group(3).split(",") if k.strip()]
        parts = unset.group(1).replace("`", "").split(".")
        name = TableName(parts[-2] if len(parts) > 1 else None, parts[-1])
        return AlterTableUnsetProperties(name, keys, bool(unset.group(2)))
    setting = _SET_RE.match(sql)
    if setting:
        # Spark takes everything after '=' as the value, keywords included (``=insert``).
        key, value = setting.group(1).strip("`"), setting.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        return SetOption(key, value)
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
    stmt = _translate(node)
    if stmt is None:
        return _spark_statement(sql, node)
    return stmt


_QUOTED_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NAME_RE = re.compile(r"`[^`]+`|[A-Za-z_][\w]*")


def _names(sql: str) -> list[str]:
    """Every identifier-like word in ``sql`` outside quoted strings."""
    return [w.strip("`") for w in _NAME_RE.findall(_QUOTED_RE.sub(" ", sql))]


# Statement kinds Spark runs that hudilite leaves to it (sqlglot's node types).
_SPARK_STATEMENTS = (
    exp.Command,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Cache,
    exp.Uncache,
    exp.Analyze,
    exp.Describe,
    exp.Refresh,
    exp.Grant,
    exp.Revoke,
    exp.LoadData,
    exp.Comment,
    exp.Insert,
    exp.Set,
    exp.Use,
)
# Bare words that are whole Spark statements but parse as a column name.
_SPARK_WORDS = {"RESET", "REFRESH"}


def _spark_statement(sql: str, node: exp.Expr) -> SparkStatement:
    """A statement left to Spark, with the table it would change when that is known."""
    words = " ".join(sql.split()[:3])
    if not isinstance(node, _SPARK_STATEMENTS) and sql.split()[0].upper() not in _SPARK_WORDS:
        # e.g. ``SELEC x`` parses as the expression ``SELEC AS x``: not a statement.
        raise SqlParseError(f"{sql.split()[0]!r} does not start a SQL statement", 1, 1)
    if isinstance(node, exp.Command):
        return SparkStatement(sql, None, words, opaque=True, names=_names(sql))
    target = None
    this = node.args.get("this")
    if isinstance(this, exp.Schema):
        this = this.this
    if isinstance(node, exp.Drop | exp.Analyze):
        tables = node.args.get("tables") or []
        this = tables[0] if tables else this
    if isinstance(this, exp.Table) and isinstance(this.this, exp.Identifier):
        target = TableName(this.db or None, this.name)
    return SparkStatement(sql, target, words)


def parse_statements(text: str) -> list[Statement]:
    """Split a script and parse every statement; error positions are relative to ``text``."""
    out: list[Statement] = []
    for sql, line, column in split_script_positions(text):
        try:
            out.append(parse_statement(sql))
        except SqlParseError as e:
            if e.line is None:
                raise
            col = e.column if e.line > 1 or e.column is None else e.column + column - 1
            raise SqlParseError(e.description, e.line + line - 1, col) from None
    return out


_UNSET_RE = re.compile(
    r"^\s*ALTER\s+TABLE\s+((?:`[^`]+`|\w+)(?:\.(?:`[^`]+`|\w+))?)\s+UNSET\s+TBLPROPERTIES\s*"
    r"(IF\s+EXISTS\s*)?\((.*)\)\s*$",
    re.I | re.S,
)
_SET_RE = re.compile(r"^\s*SET\s+(`[^`]+`|[A-Za-z_][\w.\-]*)\s*=\s*(.*?)\s*$", re.I | re.S)
_TOKEN_RE = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+.*?>")


def _token_text(m: re.Match[str]) -> str:
    return "end of input" if m.group(1) == "SENTINEL" else repr(m.group(2))


def _translate(node: exp.Expr) -> Statement | None:
    if isinstance(node, exp.Command):
        return None
    if isinstance(node, exp.Query | exp.Values):
        return Query(to_sql(node))
    if isinstance(node, exp.Create):
        return _create(node)
    if isinstance(node, exp.Use):
        return UseDatabase(_ident(node.this))
    if isinstance(node, HudiShow):
        return _show(node)
    if isinstance(node, HudiCall):
        return _call(node)
    if isinstance(node, exp.Describe):
        style = str(node.args.get("style") or "").upper()
        if not isinstance(node.this, exp.Table) or style not in ("", "EXTENDED", "FORMATTED"):
            return None
        return Describe(_table(node.this), extended=bool(style))
    if isinstance(node, exp.Alter):
        return _alter(node)
    if isinstance(node, exp.TruncateTable):
        tables = node.expressions
        return TruncateTable(_table(tables[0])) if len(tables) == 1 else None
    if isinstance(node, exp.Drop) and str(node.args.get("kind")).upper() in ("DATABASE", "SCHEMA"):
        tables = node.args.get("tables") or []
        if len(tables) != 1:
            return None
        db = tables[0].name or tables[0].db
        return DropDatabase(db, bool(node.args.get("exists")), bool(node.args.get("cascade")))
    if isinstance(node, exp.Drop):
        tables = node.args.get("tables") or []
        if str(node.args.get("kind")).upper() != "TABLE" or len(tables) != 1:
            return None
        return DropTable(
            _table(tables[0]), bool(node.args.get("exists")), bool(node.args.get("purge"))
        )
    if isinstance(node, exp.Set):
        return _set(node)
    if isinstance(node, exp.Insert):
        return _insert(node)
    if isinstance(node, exp.Update):
        return _update(node)
    if isinstance(node, exp.Delete):
        where = node.args.get("where")
        return Delete(_table(node.this), to_sql(where.this) if where else None)
    if isinstance(node, exp.Merge):
        return _merge(node)
    return None


def _ident(node: exp.Expr | None) -> str:
    if isinstance(node, exp.Table):
        return ".".join(p.name for p in node.parts)
    if node is None:
        raise SqlParseError("expected a name")
    return node.name


def _table(node: exp.Expr | None) -> TableName:
    if isinstance(node, exp.Schema):
        node = node.this
    if not isinstance(node, exp.Table) or not node.name:
        raise UnsupportedStatementError(
            f"unsupported table reference: {to_sql(node) if node else None}"
        )
    return TableName(node.db or None, node.name)


def _value(node: exp.Expr | None) -> PyValue:
    """A literal as its Python value; other expressions as SQL text."""
    if node is None or isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        inner = _value(node.this)
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return text
    return to_sql(node)


def _text(node: exp.Expr) -> str:
    """A property or option value as a string (strings unquoted, others as SQL)."""
    if isinstance(node, exp.Literal):
        return node.this
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return to_sql(node)


def _column(node: exp.ColumnDef) -> Column:
    kind = node.args.get("kind")
    nullable = True
    comment = None
    for c in node.args.get("constraints") or []:
        if isinstance(c.kind, exp.NotNullColumnConstraint):
            nullable = bool(c.kind.args.get("allow_null"))
        elif isinstance(c.kind, exp.CommentColumnConstraint):
            comment = _text(c.kind.this)
    return Column(node.name, to_sql(kind) if kind else "", nullable, comment)


def _properties(props: list[exp.Expr], out: dict[str, str]) -> list[exp.Expr]:
    """Copy key/value properties into ``out``; return the other properties."""
    rest: list[exp.Expr] = []
    for p in props:
        if isinstance(p, exp.OptionsProperty):
            _properties(p.expressions, out)
        elif type(p) is exp.Property:
            key = p.this
            out[key.this if isinstance(key, exp.Literal) else to_sql(key)] = _text(p.args["value"])
        else:
            rest.append(p)
    return rest


def _create(node: exp.Create) -> Statement | None:
    kind = str(node.args.get("kind") or "").upper()
    props_node = node.args.get("properties")
    props = list(props_node.expressions) if props_node else []
    if kind in ("DATABASE", "SCHEMA"):
        location = None
        for p in props:
            if isinstance(p, exp.LocationProperty):
                location = _text(p.this)
            else:
                return None
        return CreateDatabase(_ident(node.this), bool(node.args.get("exists")), location)
    if kind != "TABLE" or node.args.get("replace"):
        return None
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [_column(c) for c in target.expressions if isinstance(c, exp.ColumnDef)]
        if len(columns) != len(target.expressions):
            return None
    options: dict[str, str] = {}
    using = None
    partitioned_by: list[str] = []
    location = None
    for p in _properties(props, options):
        if isinstance(p, exp.FileFormatProperty):
            using = _text(p.this).lower()
        elif isinstance(p, exp.PartitionedByProperty):
            part = p.this
            cols = part.expressions if isinstance(part, exp.Schema | exp.Tuple) else [part]
            partitioned_by.extend(c.name for c in cols)
        elif isinstance(p, exp.LocationProperty):
            location = _text(p.this)
        else:
            return None
    query = node.expression
    return CreateTable(
        name=_table(target),
        if_not_exists=bool(node.args.get("exists")),
        columns=columns,
        using=using,
        options=options,
        partitioned_by=partitioned_by,
        location=location,
        as_select=to_sql(query) if query is not None else None,
    )


def _show(node: HudiShow) -> Statement | None:
    kind = node.name
    target = node.args.get("target")
    if kind == "DATABASES":
        return ShowDatabases()
    if kind == "TABLES":
        return ShowTables(_ident(target) if target is not None else None)
    if kind == "CREATE TABLE":
        return ShowCreateTable(_table(target))
    if kind == "PARTITIONS":
        return ShowPartitions(_table(target))
    if kind == "COMPACTION":
        named: dict[str, PyValue] = {"table": _ident(target)}
        limit = node.args.get("limit")
        if limit is not None:
            named["limit"] = _value(limit)
        return Call("show_compaction", [], named)
    return None


def _call(node: HudiCall) -> Call:
    name = node.this
    parts = [p.name for p in name.parts] if isinstance(name, exp.Table) else [name.name]
    if len(parts) > 1 and parts[-2].lower() == "system":
        parts = parts[-1:]
    args: list[PyValue] = []
    named: dict[str, PyValue] = {}
    for a in node.expressions:
        if isinstance(a, exp.Kwarg):
            named[a.this.name] = _value(a.expression)
        elif named:
            raise SqlParseError("positional argument after named arguments in CALL")
        else:
            args.append(_value(a))
    return Call(".".join(parts), args, named)


def _alter(node: exp.Alter) -> Statement | None:
    if str(node.args.get("kind") or "").upper() != "TABLE":
        return None
    actions = node.args.get("actions") or []
    if len(actions) != 1:
        return None
    name = _table(node.this)
    action = actions[0]
    if isinstance(action, exp.Schema):
        cols = [_column(c) for c in action.expressions if isinstance(c, exp.ColumnDef)]
        return AlterTableAddColumns(name, cols) if len(cols) == len(action.expressions) else None
    if isinstance(action, exp.AlterRename):
        return AlterTableRename(name, _table(action.this))
    if isinstance(action, exp.AlterSet):
        props: dict[str, str] = {}
        for p in action.expressions:
            if not isinstance(p, exp.Properties) or _properties(p.expressions, props):
                return None
        return AlterTableSetProperties(name, props) if props else None
    if isinstance(action, exp.DropPartition) and len(action.expressions) == 1:
        return AlterTableDropPartition(
            name, _partition_spec(action.expressions[0]), bool(action.args.get("exists"))
        )
    return None


def _partition_spec(part: exp.Expr) -> dict[str, PyValue]:
    spec: dict[str, PyValue] = {}
    for e in part.expressions:
        if isinstance(e, exp.EQ):
            spec[e.this.name] = _value(e.expression)
        else:
            spec[e.name] = None
    return spec


def _set(node: exp.Set) -> Statement | None:
    items = node.expressions
    if node.args.get("unset") or len(items) != 1:
        return None
    item = items[0]
    eq = item.this if isinstance(item, exp.SetItem) else None
    if not isinstance(eq, exp.EQ) or item.args.get("kind"):
        return None
    left = eq.this
    key = ".".join(p.name for p in left.parts) if isinstance(left, exp.Column) else _text(left)
    return SetOption(key, _text(eq.expression))


def _insert(node: exp.Insert) -> Statement | None:
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table) or node.expression is None:
        return None
    part = target.args.get("partition")
    spec = _partition_spec(part) if part is not None else {}
    return InsertInto(
        table=_table(target),
        columns=columns,
        overwrite=bool(node.args.get("overwrite")),
        partition=spec,
        query=to_sql(node.expression),
    )


def _assignments(items: list[exp.Expr]) -> dict[str, str]:
    out: dict[str, str] = {}
    for a in items:
        if not isinstance(a, exp.EQ):
            raise UnsupportedStatementError(f"unsupported assignment: {to_sql(a)}")
        key = a.this
        out[key.name if isinstance(key, exp.Column) else to_sql(key)] = to_sql(a.expression)
    return out


def _update(node: exp.Update) -> Statement | None:
    if node.args.get("from_") or node.args.get("joins"):
        return None
    where = node.args.get("where")
    return Update(
        _table(node.this), _assignments(node.expressions), to_sql(where.this) if where else None
    )


def _merge(node: exp.Merge) -> Statement | None:
    target = node.this
    source = node.args["using"]
    target_alias = target.alias or None
    source_alias = source.alias or None
    src: TableName | str
    if isinstance(source, exp.Table):
        src = _table(source)
    else:
        inner = source.this if isinstance(source, exp.Subquery) else source
        src = to_sql(inner)
    clauses: list[WhenMatched | WhenNotMatched] = []
    whens = node.args.get("whens")
    for w in whens.expressions if whens else []:
        cond = w.args.get("condition")
        cond_sql = to_sql(cond) if cond is not None else None
        then = w.args.get("then")
        if w.args.get("matched"):
            if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
                clauses.append(WhenMatched(cond_sql, "delete", None))
            elif isinstance(then, exp.Update):
                items = then.expressions
                if len(items) == 1 and isinstance(items[0], exp.Star):
                    clauses.append(WhenMatched(cond_sql, "update", "*"))
                else:
                    clauses.append(WhenMatched(cond_sql, "update", _assignments(items)))
            else:
                return None
        else:
            if w.args.get("source") or not isinstance(then, exp.Insert):
                return None
            cols = then.this
            if isinstance(cols, exp.Star):
                clauses.append(WhenNotMatched(cond_sql, "*", None))
            else:
                values = then.expression
                names = [c.name for c in cols.expressions] if cols is not None else []
                vals = [to_sql(v) for v in values.expressions] if values is not None else []
                clauses.append(WhenNotMatched(cond_sql, names, vals))
    return MergeInto(
        target=_table(target),
        target_alias=target_alias,
        source=src,
        source_alias=source_alias,
        on=to_sql(node.args["on"]),
        clauses=clauses,
    )
