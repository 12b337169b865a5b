"""Translators of DDL and catalog statements: syntax trees -> statements.

``CREATE TABLE|VIEW|DATABASE`` (a ``PRIMARY KEY`` clause becomes the record key option),
``ALTER TABLE|VIEW``, ``DROP``, ``TRUNCATE``, ``SHOW ...``, ``DESCRIBE [HISTORY]`` and the
index statements, listed in :data:`DDL_TRANSLATORS` for :func:`~.translate.translate`. A
translator returns None for a form hudilite does not interpret: Spark runs it.
"""

from __future__ import annotations

from sqlglot import exp

from .dialect import HudiHistory, HudiIndex, HudiShow, HudiUnsetProperties, to_sql
from .statement_types import (
    AlterTableAddColumns,
    AlterTableChangeColumns,
    AlterTableDropPartition,
    AlterTableRename,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    AlterViewAs,
    Call,
    CreateDatabase,
    CreateTable,
    CreateView,
    Describe,
    DescribeHistory,
    DropDatabase,
    DropTable,
    DropView,
    IndexStatement,
    PyValue,
    ShowColumns,
    ShowCreateTable,
    ShowDatabases,
    ShowPartitions,
    ShowTableExtended,
    ShowTables,
    ShowTblProperties,
    ShowViews,
    SqlError,
    SqlParseError,
    Statement,
    TableName,
    TruncateTable,
    UnsupportedStatementError,
    ViewColumnSpec,
)
from .translate_values import (
    Translators,
    column_def,
    column_path,
    ident,
    partition_spec,
    properties,
    py_value,
    table_name,
    text_value,
)

__all__ = ["DDL_TRANSLATORS"]


def _create(node: exp.Create) -> Statement | None:
    kind = str(node.args.get("kind") or "").upper()
    props_node = node.args.get("properties")
    props = list(props_node.expressions) if props_node else []
    if kind in ("DATABASE", "SCHEMA"):
        location = None
        for p in props:
            if isinstance(p, exp.LocationProperty):
                location = text_value(p.this)
            else:
                return None
        return CreateDatabase(ident(node.this), bool(node.args.get("exists")), location)
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
        columns = [column_def(c) for c in defs]
        keys = _primary_key(defs, constraints)
    options: dict[str, str] = {}
    using = None
    partitioned_by: list[str] = []
    location = None
    for p in properties(props, options):
        if isinstance(p, exp.FileFormatProperty):
            using = text_value(p.this).lower()
        elif isinstance(p, exp.PartitionedByProperty):
            part = p.this
            cols = part.expressions if isinstance(part, exp.Schema | exp.Tuple) else [part]
            partitioned_by.extend(c.name for c in cols)
        elif isinstance(p, exp.LocationProperty):
            location = text_value(p.this)
        else:
            return None
    if keys:
        if using is not None and using not in ("hudi", "hudilite"):
            return None  # another provider's key: Spark's to take or refuse
        _key_option(options, keys)
    query = node.expression
    return CreateTable(
        name=table_name(target),
        if_not_exists=bool(node.args.get("exists")),
        columns=columns,
        using=using,
        options=options,
        partitioned_by=partitioned_by,
        location=location,
        as_select=to_sql(query) if query is not None else None,
    )


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
                col = column_def(c)
                if not col.nullable:
                    return None
                columns.append(ViewColumnSpec(col.name, col.comment))
            else:
                return None
    options: dict[str, str] = {}
    comment = None
    for p in properties(props, options):
        if isinstance(p, exp.SchemaCommentProperty):
            comment = text_value(p.this)
        else:
            return None  # TEMPORARY, GLOBAL, ...: Spark's
    return CreateView(
        name=table_name(target),
        query=to_sql(query),
        columns=columns,
        comment=comment,
        properties=options,
        replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
    )


def _alter(node: exp.Alter) -> Statement | None:
    kind = str(node.args.get("kind") or "").upper()
    actions = node.args.get("actions") or []
    if kind == "VIEW" and len(actions) == 1 and isinstance(actions[0], exp.Query):
        return AlterViewAs(table_name(node.this), to_sql(actions[0]))
    if kind != "TABLE":
        return None
    if len(actions) != 1:
        return None
    name = table_name(node.this)
    action = actions[0]
    if isinstance(action, exp.Schema):
        cols = [column_def(c) for c in action.expressions if isinstance(c, exp.ColumnDef)]
        return AlterTableAddColumns(name, cols) if len(cols) == len(action.expressions) else None
    if isinstance(action, exp.AlterRename):
        return AlterTableRename(name, table_name(action.this))
    if isinstance(action, exp.AlterSet):
        props: dict[str, str] = {}
        for p in action.expressions:
            if not isinstance(p, exp.Properties) or properties(p.expressions, props):
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
            dropped.extend(column_path(p) for p in parts)
        return AlterTableChangeColumns(name, "drop", dropped)
    if isinstance(action, exp.RenameColumn):
        new = action.args.get("to")
        return AlterTableChangeColumns(
            name, "rename", [column_path(action.this)], new_name=column_path(new)
        )
    if isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
        renamed = action.args.get("rename_to")
        column = column_path(action.this)
        if renamed is not None and column_path(renamed).lower() != column.lower():
            return AlterTableChangeColumns(
                name,
                "rename",
                [column],
                new_name=column_path(renamed),
                new_type=to_sql(action.args["dtype"]),
            )
        return AlterTableChangeColumns(
            name, "type", [column], new_type=to_sql(action.args["dtype"])
        )
    if isinstance(action, exp.DropPartition) and len(action.expressions) == 1:
        return AlterTableDropPartition(
            name, partition_spec(action.expressions[0]), bool(action.args.get("exists"))
        )
    return None


def _drop(node: exp.Drop) -> Statement | None:
    kind = str(node.args.get("kind")).upper()
    tables = node.args.get("tables") or []
    if len(tables) != 1:
        return None
    if kind in ("DATABASE", "SCHEMA"):
        db = tables[0].name or tables[0].db
        return DropDatabase(db, bool(node.args.get("exists")), bool(node.args.get("cascade")))
    if kind == "VIEW" and not node.args.get("materialized"):
        return DropView(table_name(tables[0]), bool(node.args.get("exists")))
    if kind != "TABLE":
        return None
    return DropTable(
        table_name(tables[0]), bool(node.args.get("exists")), bool(node.args.get("purge"))
    )


def _truncate(node: exp.TruncateTable) -> Statement | None:
    tables = node.expressions
    return TruncateTable(table_name(tables[0])) if len(tables) == 1 else None


def _show(node: HudiShow) -> Statement | None:
    kind = node.name
    target = node.args.get("target")
    if kind == "DATABASES":
        return ShowDatabases()
    like = node.args.get("like")
    pattern = like.this if like is not None else None
    if kind == "TABLES":
        return ShowTables(ident(target) if target is not None else None, pattern)
    if kind == "TABLE EXTENDED":
        if node.args.get("partition") is not None:
            raise UnsupportedStatementError(
                f"SHOW TABLE EXTENDED ... {node.args['partition'].name} is not supported: "
                "SHOW PARTITIONS t lists a table's partitions"
            )
        return ShowTableExtended(ident(target) if target is not None else None, pattern or "*")
    if kind == "VIEWS":
        return ShowViews(ident(target) if target is not None else None, pattern)
    if kind == "COLUMNS":
        name = table_name(target)  # an exp.Table (it raises otherwise)
        apart = target.args.get("catalog") if target is not None else None
        if apart is not None and name.db is not None and apart.name.lower() != name.db.lower():
            # Spark's SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE.
            raise SqlError(
                "[SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE] SHOW COLUMNS with conflicting "
                f"namespaces: `{apart.name.lower()}` != `{name.db.lower()}`."
            )
        return ShowColumns(TableName(apart.name if apart is not None else name.db, name.table))
    if kind == "CREATE TABLE":
        return ShowCreateTable(table_name(target))
    if kind == "PARTITIONS":
        return ShowPartitions(table_name(target))
    if kind == "TBLPROPERTIES":
        key = node.args.get("key")
        return ShowTblProperties(table_name(target), key.name if key is not None else None)
    if kind == "COMPACTION":
        named: dict[str, PyValue] = {"table": ident(target)}
        limit = node.args.get("limit")
        if limit is not None:
            named["limit"] = py_value(limit)
        return Call("show_compaction", [], named)
    if kind == "INDEXES":
        return IndexStatement("SHOW INDEXES", None, table_name(target))
    return None


def _describe(node: exp.Describe) -> Statement | None:
    style = str(node.args.get("style") or "").upper()
    kind = str(node.args.get("kind") or "").upper()
    if not isinstance(node.this, exp.Table) or style not in ("", "EXTENDED", "FORMATTED"):
        return None
    if kind not in ("", "TABLE"):  # DESCRIBE FUNCTION f, DESCRIBE DATABASE d: Spark's
        return None
    return Describe(table_name(node.this), extended=bool(style))


def _history(node: HudiHistory) -> Statement:
    limit = node.args.get("limit")
    value = py_value(limit) if limit is not None else None
    if value is not None and not isinstance(value, int):
        raise SqlParseError(f"DESCRIBE HISTORY ... LIMIT takes a whole number, got {value!r}")
    return DescribeHistory(table_name(node.this), value)


def _index(node: HudiIndex) -> Statement:
    return IndexStatement(node.name, node.args["name"].name, table_name(node.args["target"]))


#: The DDL and catalog statements' translators (merged into :data:`~.translate.TRANSLATORS`).
DDL_TRANSLATORS: Translators = {
    exp.Create: _create,
    HudiShow: _show,
    HudiHistory: _history,
    HudiIndex: _index,
    exp.Describe: _describe,
    exp.Alter: _alter,
    exp.TruncateTable: _truncate,
    exp.Drop: _drop,
}
