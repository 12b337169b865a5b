"""Syntax trees of the hudilite dialect -> the typed statements of :mod:`statement_types`.

:func:`translate` looks the tree's expression type up in :data:`TRANSLATORS` (the way
sqlglot's own dialects map expression types to parsers and generators); a translator
returns the statement, or None when hudilite does not interpret that form, and the
statement then goes to Spark as a :class:`SparkStatement` (:func:`spark_statement`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from .dialect import (
    HudiCall,
    HudiExplain,
    HudiHistory,
    HudiIndex,
    HudiReset,
    HudiShow,
    HudiUnsetProperties,
    to_sql,
)
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
)

__all__ = ["TRANSLATORS", "spark_statement", "translate"]


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


def _primary_key(defs: list[exp.ColumnDef], constraints: list[exp.PrimaryKey]) -> list[str]:
    """The columns of ``PRIMARY KEY (a, b)`` in a column list or ``a INT PRIMARY KEY`` (what
    SQLAlchemy's ``create_all`` writes for a model's key), in order."""
    keys = [e.name for pk in constraints for e in pk.expressions]
    for c in defs:
        if any(
            isinstance(k.kind, exp.PrimaryKeyColumnConstraint)
            for k in c.args.get("constraints") or []
        ):
            keys.append(c.name)
    return keys


def _key_option(options: dict[str, str], keys: list[str]) -> None:
    """Make a ``PRIMARY KEY`` clause the table's record key (Hudi's ``primaryKey`` option);
    a key option that names other columns is an error."""
    names = {k.lower(): k for k in options}
    given_key = names.get("primarykey") or names.get("hoodie.datasource.write.recordkey.field")
    if given_key is None:
        options["primaryKey"] = ",".join(keys)
        return
    given = [k.strip() for k in options[given_key].split(",")]
    if [k.lower() for k in given] != [k.lower() for k in keys]:
        raise SqlParseError(
            f"PRIMARY KEY ({', '.join(keys)}) and {given_key} = {options[given_key]!r} name "
            "different record key columns: give the key once"
        )


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
    if kind == "VIEW":
        return _create_view(node, props)
    if kind != "TABLE" or node.args.get("replace"):
        return None
    target = node.this
    columns = None
    keys: list[str] = []
    if isinstance(target, exp.Schema):
        defs = [c for c in target.expressions if isinstance(c, exp.ColumnDef)]
        constraints = [c for c in target.expressions if isinstance(c, exp.PrimaryKey)]
        if len(defs) + len(constraints) != len(target.expressions):
            return None
        columns = [_column(c) for c in defs]
        keys = _primary_key(defs, constraints)
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
    if keys:
        if using is not None and using not in ("hudi", "hudilite"):
            return None  # another provider's key: Spark's to take or refuse
        _key_option(options, keys)
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


def _create_view(node: exp.Create, props: list[exp.Expr]) -> Statement | None:
    """A persistent ``CREATE VIEW``; temporary and global temporary views stay Spark's."""
    target = node.this
    query = node.expression
    if query is None:
        return None
    columns = None
    if isinstance(target, exp.Schema):
        columns = []
        for c in target.expressions:
            if isinstance(c, exp.Identifier):
                columns.append(ViewColumnSpec(c.name))
            elif isinstance(c, exp.ColumnDef) and c.args.get("kind") is None:
                col = _column(c)
                if not col.nullable:
                    return None
                columns.append(ViewColumnSpec(col.name, col.comment))
            else:
                return None
    options: dict[str, str] = {}
    comment = None
    for p in _properties(props, options):
        if isinstance(p, exp.SchemaCommentProperty):
            comment = _text(p.this)
        else:
            return None  # TEMPORARY, GLOBAL, ...: Spark's
    return CreateView(
        name=_table(target),
        query=to_sql(query),
        columns=columns,
        comment=comment,
        properties=options,
        replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
    )


def _show(node: HudiShow) -> Statement | None:
    kind = node.name
    target = node.args.get("target")
    if kind == "DATABASES":
        return ShowDatabases()
    like = node.args.get("like")
    pattern = like.this if like is not None else None
    if kind == "TABLES":
        return ShowTables(_ident(target) if target is not None else None, pattern)
    if kind == "TABLE EXTENDED":
        if node.args.get("partition") is not None:
            raise UnsupportedStatementError(
                f"SHOW TABLE EXTENDED ... {node.args['partition'].name} is not supported: "
                "SHOW PARTITIONS t lists a table's partitions"
            )
        return ShowTableExtended(_ident(target) if target is not None else None, pattern or "*")
    if kind == "VIEWS":
        return ShowViews(_ident(target) if target is not None else None, pattern)
    if kind == "COLUMNS":
        name = _table(target)  # an exp.Table (it raises otherwise)
        apart = target.args.get("catalog") if target is not None else None
        if apart is not None and name.db is not None and apart.name.lower() != name.db.lower():
            # Spark's SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE.
            raise SqlError(
                "[SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE] SHOW COLUMNS with conflicting "
                f"namespaces: `{apart.name.lower()}` != `{name.db.lower()}`."
            )
        return ShowColumns(TableName(apart.name if apart is not None else name.db, name.table))
    if kind == "CREATE TABLE":
        return ShowCreateTable(_table(target))
    if kind == "PARTITIONS":
        return ShowPartitions(_table(target))
    if kind == "TBLPROPERTIES":
        key = node.args.get("key")
        return ShowTblProperties(_table(target), key.name if key is not None else None)
    if kind == "COMPACTION":
        named: dict[str, PyValue] = {"table": _ident(target)}
        limit = node.args.get("limit")
        if limit is not None:
            named["limit"] = _value(limit)
        return Call("show_compaction", [], named)
    if kind == "INDEXES":
        return IndexStatement("SHOW INDEXES", None, _table(target))
    return None


def _index(node: HudiIndex) -> Statement:
    return IndexStatement(node.name, node.args["name"].name, _table(node.args["target"]))


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
    kind = str(node.args.get("kind") or "").upper()
    actions = node.args.get("actions") or []
    if kind == "VIEW" and len(actions) == 1 and isinstance(actions[0], exp.Query):
        return AlterViewAs(_table(node.this), to_sql(actions[0]))
    if kind != "TABLE":
        return None
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
    if isinstance(action, HudiUnsetProperties):
        keys = [k.name for k in action.expressions]
        return AlterTableUnsetProperties(name, keys, bool(action.args.get("exists")))
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() in (
        "COLUMN",
        "COLUMNS",
    ):
        dropped: list[str] = []
        for item in action.args.get("tables") or []:
            parts = item.expressions if isinstance(item, exp.Schema) else [item]
            dropped.extend(_column_path(p) for p in parts)
        return AlterTableChangeColumns(name, "drop", dropped)
    if isinstance(action, exp.RenameColumn):
        new = action.args.get("to")
        return AlterTableChangeColumns(
            name, "rename", [_column_path(action.this)], new_name=_column_path(new)
        )
    if isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
        renamed = action.args.get("rename_to")
        column = _column_path(action.this)
        if renamed is not None and _column_path(renamed).lower() != column.lower():
            return AlterTableChangeColumns(
                name,
                "rename",
                [column],
                new_name=_column_path(renamed),
                new_type=to_sql(action.args["dtype"]),
            )
        return AlterTableChangeColumns(
            name, "type", [column], new_type=to_sql(action.args["dtype"])
        )
    if isinstance(action, exp.DropPartition) and len(action.expressions) == 1:
        return AlterTableDropPartition(
            name, _partition_spec(action.expressions[0]), bool(action.args.get("exists"))
        )
    return None


def _column_path(node: exp.Expr | None) -> str:
    """A column (or nested field) name as written: ``a`` or ``a.b``."""
    if isinstance(node, exp.Column | exp.Dot):
        return ".".join(p.name for p in node.parts)
    if node is None:
        raise SqlParseError("expected a column name")
    return node.name


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
    if isinstance(eq, exp.Var) and not item.args.get("kind"):
        return SetOption(eq.name, None)  # SET key: show its value
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
    clauses: list[WhenMatched | WhenNotMatched | WhenNotMatchedBySource] = []
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
        elif w.args.get("source"):
            if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
                clauses.append(WhenNotMatchedBySource(cond_sql, "delete", None))
            elif isinstance(then, exp.Update) and not (
                len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star)
            ):
                clauses.append(
                    WhenNotMatchedBySource(cond_sql, "update", _assignments(then.expressions))
                )
            else:
                raise UnsupportedStatementError(
                    "WHEN NOT MATCHED BY SOURCE takes UPDATE SET col = expr, ... or DELETE "
                    f"(there is no source row to take values from), got: {to_sql(then)}"
                )
        else:
            if not isinstance(then, exp.Insert):
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


def _query(node: exp.Expr) -> Statement:
    return Query(to_sql(node))


def _use(node: exp.Use) -> Statement:
    return UseDatabase(_ident(node.this))


def _describe(node: exp.Describe) -> Statement | None:
    style = str(node.args.get("style") or "").upper()
    kind = str(node.args.get("kind") or "").upper()
    if not isinstance(node.this, exp.Table) or style not in ("", "EXTENDED", "FORMATTED"):
        return None
    if kind not in ("", "TABLE"):  # DESCRIBE FUNCTION f, DESCRIBE DATABASE d: Spark's
        return None
    return Describe(_table(node.this), extended=bool(style))


def _history(node: HudiHistory) -> Statement:
    limit = node.args.get("limit")
    value = _value(limit) if limit is not None else None
    if value is not None and not isinstance(value, int):
        raise SqlParseError(f"DESCRIBE HISTORY ... LIMIT takes a whole number, got {value!r}")
    return DescribeHistory(_table(node.this), value)


def _explain(node: HudiExplain) -> Statement:
    mode = node.this
    return Explain(mode.name if mode is not None else None, node.expression.name)


def _truncate(node: exp.TruncateTable) -> Statement | None:
    tables = node.expressions
    return TruncateTable(_table(tables[0])) if len(tables) == 1 else None


def _drop(node: exp.Drop) -> Statement | None:
    kind = str(node.args.get("kind")).upper()
    tables = node.args.get("tables") or []
    if len(tables) != 1:
        return None
    if kind in ("DATABASE", "SCHEMA"):
        db = tables[0].name or tables[0].db
        return DropDatabase(db, bool(node.args.get("exists")), bool(node.args.get("cascade")))
    if kind == "VIEW" and not node.args.get("materialized"):
        return DropView(_table(tables[0]), bool(node.args.get("exists")))
    if kind != "TABLE":
        return None
    return DropTable(_table(tables[0]), bool(node.args.get("exists")), bool(node.args.get("purge")))


def _delete(node: exp.Delete) -> Statement:
    where = node.args.get("where")
    return Delete(_table(node.this), to_sql(where.this) if where else None)


def _reset(node: HudiReset) -> Statement:
    key = node.this
    return ResetOption(key.name.strip("`") if key is not None else None)


def _left_to_spark(node: exp.Expr) -> None:
    """Forms hudilite does not interpret (``exp.Command`` is sqlglot's opaque text of a
    statement it could not parse; :func:`spark_statement` checks its names)."""
    return None


#: Expression type -> translator; a type not listed here (or a translator's None) leaves the
#: statement to Spark. Subclasses find their base class's entry (``exp.Select`` -> ``exp.Query``).
TRANSLATORS: dict[type[exp.Expr], Callable[[Any], Statement | None]] = {
    exp.Command: _left_to_spark,
    HudiReset: _reset,
    exp.Query: _query,
    exp.Values: _query,
    exp.Create: _create,
    exp.Use: _use,
    HudiShow: _show,
    HudiHistory: _history,
    HudiExplain: _explain,
    HudiCall: _call,
    HudiIndex: _index,
    exp.Describe: _describe,
    exp.Alter: _alter,
    exp.TruncateTable: _truncate,
    exp.Drop: _drop,
    exp.Set: _set,
    exp.Insert: _insert,
    exp.Update: _update,
    exp.Delete: _delete,
    exp.Merge: _merge,
}


def translate(node: exp.Expr) -> Statement | None:
    """The statement ``node`` stands for, or None when hudilite leaves it to Spark."""
    for cls in type(node).__mro__:
        translator = TRANSLATORS.get(cls)
        if translator is not None:
            return translator(node)
    return None


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
    HudiReset,
)
# Bare words that are whole Spark statements but parse as a column name.
_SPARK_WORDS = {"REFRESH"}


def spark_statement(sql: str, node: exp.Expr) -> SparkStatement:
    """A statement left to Spark, with the table it would change when that is known."""
    words = " ".join(sql.split()[:3])
    if not isinstance(node, _SPARK_STATEMENTS) and sql.split()[0].upper() not in _SPARK_WORDS:
        # e.g. ``SELEC x`` parses as the expression ``SELEC AS x``: not a statement.
        raise SqlParseError(f"Syntax error at or near '{sql.split()[0]}'", 1, 1)
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
