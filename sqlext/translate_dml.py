"""Translators of DML statements: syntax trees -> statements.

``INSERT [OVERWRITE]`` (column list, static ``PARTITION`` values), ``UPDATE``, ``DELETE`` and
``MERGE INTO`` (its ``WHEN [NOT] MATCHED [BY SOURCE]`` clauses in order), listed in
:data:`DML_TRANSLATORS` for :func:`~.translate.translate`. Conditions, expressions and
queries stay SQL text (Spark evaluates them); a translator returns None for a form
hudilite does not interpret (``UPDATE ... FROM``, a MERGE action it has no clause for), and
Spark runs it.
"""

from __future__ import annotations

from sqlglot import exp

from .dialect import to_sql
from .statement_types import (
    Delete,
    InsertInto,
    MergeInto,
    Statement,
    TableName,
    UnsupportedStatementError,
    Update,
    WhenMatched,
    WhenNotMatched,
    WhenNotMatchedBySource,
)
from .translate_values import Translators, partition_spec, table_name

__all__ = ["DML_TRANSLATORS"]


def _insert(node: exp.Insert) -> Statement | None:
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table) or node.expression is None:
        return None
    part = target.args.get("partition")
    spec = partition_spec(part) if part is not None else {}
    return InsertInto(
        table=table_name(target),
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
        table_name(node.this), _assignments(node.expressions), to_sql(where.this) if where else None
    )


def _delete(node: exp.Delete) -> Statement:
    where = node.args.get("where")
    return Delete(table_name(node.this), to_sql(where.this) if where else None)


def _merge(node: exp.Merge) -> Statement | None:
    target = node.this
    source = node.args["using"]
    target_alias = target.alias or None
    source_alias = source.alias or None
    src: TableName | str
    if isinstance(source, exp.Table):
        src = table_name(source)
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
        target=table_name(target),
        target_alias=target_alias,
        source=src,
        source_alias=source_alias,
        on=to_sql(node.args["on"]),
        clauses=clauses,
    )


#: The DML statements' translators (merged into :data:`~.translate.TRANSLATORS`).
DML_TRANSLATORS: Translators = {
    exp.Insert: _insert,
    exp.Update: _update,
    exp.Delete: _delete,
    exp.Merge: _merge,
}
