"""Syntax trees of the hudilite dialect -> the typed statements of :mod:`statement_types`.

:func:`translate` looks the tree's expression type up in :data:`TRANSLATORS` (the way
sqlglot's own dialects map expression types to parsers and generators); a translator
returns the statement, or None when hudilite does not interpret that form, and the
statement then goes to Spark as a :class:`SparkStatement` (:func:`spark_statement`).

The translators of DDL and catalog statements are in :mod:`.translate_ddl`, those of DML in
:mod:`.translate_dml`, what they share in :mod:`.translate_values`; this module holds the
session and query statements' (``SET``, ``RESET``, ``USE``, ``CALL``, ``EXPLAIN``, queries).
"""

from __future__ import annotations

import re

from sqlglot import exp

from .dialect import HudiCall, HudiExplain, HudiReset, to_sql
from .statement_types import (
    Call,
    Explain,
    PyValue,
    Query,
    ResetOption,
    SetOption,
    SparkStatement,
    SqlParseError,
    Statement,
    TableName,
    UseDatabase,
)
from .translate_ddl import DDL_TRANSLATORS
from .translate_dml import DML_TRANSLATORS
from .translate_values import Translators, ident, py_value, text_value

__all__ = ["TRANSLATORS", "spark_statement", "translate"]


def _query(node: exp.Expr) -> Statement:
    return Query(to_sql(node))


def _use(node: exp.Use) -> Statement:
    return UseDatabase(ident(node.this))


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
    key = ".".join(p.name for p in left.parts) if isinstance(left, exp.Column) else text_value(left)
    return SetOption(key, text_value(eq.expression))


def _reset(node: HudiReset) -> Statement:
    key = node.this
    return ResetOption(key.name.strip("`") if key is not None else None)


def _call(node: HudiCall) -> Call:
    name = node.this
    parts = [p.name for p in name.parts] if isinstance(name, exp.Table) else [name.name]
    if len(parts) > 1 and parts[-2].lower() == "system":
        parts = parts[-1:]
    args: list[PyValue] = []
    named: dict[str, PyValue] = {}
    for a in node.expressions:
        if isinstance(a, exp.Kwarg):
            named[a.this.name] = py_value(a.expression)
        elif named:
            raise SqlParseError("positional argument after named arguments in CALL")
        else:
            args.append(py_value(a))
    return Call(".".join(parts), args, named)


def _explain(node: HudiExplain) -> Statement:
    mode = node.this
    return Explain(mode.name if mode is not None else None, node.expression.name)


def _left_to_spark(node: exp.Expr) -> None:
    """Forms hudilite does not interpret (``exp.Command`` is sqlglot's opaque text of a
    statement it could not parse; :func:`spark_statement` checks its names)."""
    return None


#: Expression type -> translator; a type not listed here (or a translator's None) leaves the
#: statement to Spark. Subclasses find their base class's entry (``exp.Select`` -> ``exp.Query``).
TRANSLATORS: Translators = {
    exp.Command: _left_to_spark,
    HudiReset: _reset,
    exp.Query: _query,
    exp.Values: _query,
    exp.Use: _use,
    HudiExplain: _explain,
    HudiCall: _call,
    exp.Set: _set,
    **DDL_TRANSLATORS,
    **DML_TRANSLATORS,
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
