"""Pieces of the dialect's syntax trees as Python values, for the translators.

Names and table references, literals (:func:`py_value`: their Python value; other
expressions as SQL text), option and property values, column definitions, key/value
properties and ``PARTITION (...)`` specs: what :mod:`.translate`, :mod:`.translate_ddl` and
:mod:`.translate_dml` share. :data:`Translators` is the type of their dispatch tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from .dialect import to_sql
from .statement_types import (
    Column,
    PyValue,
    SqlParseError,
    Statement,
    TableName,
    UnsupportedStatementError,
)

__all__ = [
    "Translators",
    "column_def",
    "column_path",
    "ident",
    "partition_spec",
    "properties",
    "py_value",
    "table_name",
    "text_value",
]

#: Expression type -> translator: the statement the node stands for, or None when hudilite
#: leaves it to Spark.
Translators = dict[type[exp.Expr], Callable[[Any], Statement | None]]


def ident(node: exp.Expr | None) -> str:
    """A name as written: a table's parts joined by dots, else the node's name."""
    if isinstance(node, exp.Table):
        return ".".join(p.name for p in node.parts)
    if node is None:
        raise SqlParseError("expected a name")
    return node.name


def table_name(node: exp.Expr | None) -> TableName:
    """A table reference (or the table of a column list) as a :class:`TableName`."""
    if isinstance(node, exp.Schema):
        node = node.this
    if not isinstance(node, exp.Table) or not node.name:
        raise UnsupportedStatementError(
            f"unsupported table reference: {to_sql(node) if node else None}"
        )
    return TableName(node.db or None, node.name)


def py_value(node: exp.Expr | None) -> PyValue:
    """A literal as its Python value; other expressions as SQL text."""
    if node is None or isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        inner = py_value(node.this)
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


def text_value(node: exp.Expr) -> str:
    """A property or option value as a string (strings unquoted, others as SQL)."""
    if isinstance(node, exp.Literal):
        return node.this
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return to_sql(node)


def column_def(node: exp.ColumnDef) -> Column:
    """A column definition: name, type as SQL, ``NOT NULL`` and ``COMMENT``."""
    kind = node.args.get("kind")
    nullable = True
    comment = None
    for c in node.args.get("constraints") or []:
        if isinstance(c.kind, exp.NotNullColumnConstraint):
            nullable = bool(c.kind.args.get("allow_null"))
        elif isinstance(c.kind, exp.CommentColumnConstraint):
            comment = text_value(c.kind.this)
    return Column(node.name, to_sql(kind) if kind else "", nullable, comment)


def properties(props: list[exp.Expr], out: dict[str, str]) -> list[exp.Expr]:
    """Copy key/value properties into ``out``; return the other properties."""
    rest: list[exp.Expr] = []
    for p in props:
        if isinstance(p, exp.OptionsProperty):
            properties(p.expressions, out)
        elif type(p) is exp.Property:
            key = p.this
            out[key.this if isinstance(key, exp.Literal) else to_sql(key)] = text_value(
                p.args["value"]
            )
        else:
            rest.append(p)
    return rest


def column_path(node: exp.Expr | None) -> str:
    """A column (or nested field) name as written: ``a`` or ``a.b``."""
    if isinstance(node, exp.Column | exp.Dot):
        return ".".join(p.name for p in node.parts)
    if node is None:
        raise SqlParseError("expected a column name")
    return node.name


def partition_spec(part: exp.Expr) -> dict[str, PyValue]:
    """``PARTITION (a = 1, b)`` as ``{"a": 1, "b": None}`` (None: a dynamic column)."""
    spec: dict[str, PyValue] = {}
    for e in part.expressions:
        if isinstance(e, exp.EQ):
            spec[e.this.name] = py_value(e.expression)
        else:
            spec[e.name] = None
    return spec
