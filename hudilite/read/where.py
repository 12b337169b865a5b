"""A read's SQL predicate (``where=``) evaluated in Arrow, without Spark.

``Table.to_arrow(where=...)`` reads in this process, so its predicate cannot go through
Spark's analyzer. :class:`Predicate` parses it with sqlglot (Spark's dialect) and turns it
into a ``pyarrow.compute`` expression, which serves twice:

* **pruning** (:meth:`Predicate.partitions`): when the predicate names partition columns
  only, it is evaluated on one row per partition (the values parsed from the partition
  path, cast to the columns' types), and the partitions it rejects are never listed or
  read -- what ``Table.read(where=)`` does with a small Spark job;
* **filtering** (:attr:`Predicate.expression`): the rows read are filtered by it.

The SQL kept to what a filter on columns needs: column names (case-insensitive, as in
Spark), string, number (exact for decimal columns), boolean, NULL and ``DATE '...'``
literals, boolean columns as conditions,
``= <> != < <= > >=``, ``AND OR NOT``,
``IN (...)``, ``IS [NOT] NULL``, ``BETWEEN``. Comparisons follow SQL's three-valued logic
(a NULL operand makes the row fail, negated or not). Anything else -- functions,
arithmetic, subqueries -- is refused with a :class:`ConfigError` naming it, as is a column
the table does not have, a literal that is no value of its column's type, and a number
or boolean compared with a string column (Spark would compare them as numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import ParseError

from hudilite.errors import ConfigError

_COMPARISONS: dict[type[exp.Expr], Callable[[Any, Any], Any]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
}
PARTITION_COLUMN = "_hl_partition"


def _null_bool() -> Any:
    """A NULL boolean expression. Built on use: ``pc.scalar`` imports pandas (about a second),
    and this module is loaded by every ``hudilite`` command (``Table`` imports it)."""
    return pc.scalar(pa.scalar(None, pa.bool_()))


@dataclass(frozen=True)
class Predicate:
    """A parsed ``where``: ``expression`` (Arrow) and the table ``columns`` it names."""

    sql: str
    expression: pc.Expression
    columns: frozenset[str]

    @classmethod
    def parse(cls, where: str, schema: pa.Schema) -> Predicate:
        """Parse ``where`` against ``schema`` (the columns a read returns); a malformed or
        unsupported predicate raises :class:`ConfigError` naming the offending part."""
        try:
            tree = sqlglot.parse_one(where, read="spark")
        except ParseError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(f"where {where!r} is not a SQL predicate: {first}") from exc
        builder = _Builder(where, schema)
        expression = builder.boolean(tree)
        return cls(where, expression, frozenset(builder.columns))

    @classmethod
    def parse_or_none(cls, where: str | None, schema: pa.Schema) -> Predicate | None:
        """:meth:`parse`, or None when there is no ``where`` or it is not SQL this module
        takes (a read that hands it to Spark SQL instead)."""
        if not where:
            return None
        try:
            return cls.parse(where, schema)
        except ConfigError:
            return None

    def partitions(
        self,
        partitions: Sequence[str],
        values: Callable[[str], Mapping[str, str | None]],
        fields: Sequence[str],
        schema: pa.Schema,
    ) -> list[str] | None:
        """The ``partitions`` (relative paths) whose values satisfy the predicate, or None
        when it names a column that is not one of the partition ``fields`` (every partition
        may then hold matching rows). ``values(p)``: field -> value string parsed from the
        path; a value that is no value of its column's type (Hudi's default partition
        name, for one) counts as NULL, as Spark's cast makes it."""
        if not fields or not self.columns <= set(fields):
            return None
        parsed = [values(p) for p in partitions]
        data: dict[str, pa.Array] = {PARTITION_COLUMN: pa.array(list(partitions), pa.string())}
        for f in fields:
            data[f] = pa.array([_cast(v.get(f), schema.field(f).type) for v in parsed])
        table = pa.table(data)
        return table.filter(self.expression)[PARTITION_COLUMN].to_pylist()


def _cast(value: str | None, type_: pa.DataType) -> Any:
    if value is None:
        return pa.scalar(None, type_)
    try:
        return pa.scalar(value).cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.scalar(None, type_)


class _Builder:
    """sqlglot tree -> pyarrow.compute expression, collecting the columns it names."""

    def __init__(self, where: str, schema: pa.Schema) -> None:
        self.where = where
        self.schema = schema
        self.by_lower = {name.lower(): name for name in schema.names}
        self.columns: set[str] = set()

    def refuse(self, node: exp.Expr, why: str) -> ConfigError:
        return ConfigError(f"where {self.where!r}: {why}: {node.sql(dialect='spark')}")

    def boolean(self, node: exp.Expr) -> pc.Expression:
        """A node that is a condition."""
        if isinstance(node, exp.Paren):
            return self.boolean(node.this)
        if isinstance(node, exp.And):
            return self.boolean(node.this) & self.boolean(node.expression)
        if isinstance(node, exp.Or):
            return self.boolean(node.this) | self.boolean(node.expression)
        if isinstance(node, exp.Not):
            return ~self.boolean(node.this)
        if type(node) in _COMPARISONS:
            left, right = self.operands(node.this, node.expression)
            return _COMPARISONS[type(node)](left, right)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return self.column(node.this).is_null()
        if isinstance(node, exp.In) and node.expressions and not node.args.get("query"):
            col = self.column(node.this)
            kind = self.schema.field(self.column_name(node.this)).type
            values = pa.array([self.literal(v, kind) for v in node.expressions], kind)
            # SQL: NULL IN (...) is NULL (so NOT IN drops it too); Arrow's isin says false.
            return pc.if_else(col.is_valid(), col.isin(values), _null_bool())
        if isinstance(node, exp.Between):
            col = node.this
            low = self.operands(col, node.args["low"])
            high = self.operands(col, node.args["high"])
            return (low[0] >= low[1]) & (high[0] <= high[1])
        if isinstance(node, exp.Boolean):
            return pc.scalar(bool(node.this))
        if isinstance(node, exp.Column) and pa.types.is_boolean(
            self.schema.field(self.column_name(node)).type
        ):
            return self.column(node)  # a boolean column is a condition, as in Spark
        raise self.refuse(node, "unsupported in a read without Spark (to_arrow)")

    def operands(self, a: exp.Expr, b: exp.Expr) -> tuple[Any, Any]:
        """Two sides of a comparison: columns, or literals cast to the other column's type."""
        if isinstance(a, exp.Column) and isinstance(b, exp.Column):
            return self.column(a), self.column(b)
        if isinstance(a, exp.Column):
            kind = self.schema.field(self.column_name(a)).type
            return self.column(a), pc.scalar(self.literal(b, kind))
        if isinstance(b, exp.Column):
            kind = self.schema.field(self.column_name(b)).type
            return pc.scalar(self.literal(a, kind)), self.column(b)
        for side in (a, b):
            if not isinstance(side, exp.Literal | exp.Neg | exp.Boolean | exp.Null):
                raise self.refuse(side, "unsupported in a read without Spark (to_arrow)")
        raise self.refuse(a.parent or a, "a comparison needs a column on one side")

    def column_name(self, node: exp.Expr) -> str:
        if not isinstance(node, exp.Column):
            raise self.refuse(node, "expected a column")
        name = self.by_lower.get(node.name.lower())
        if name is None:
            raise ConfigError(
                f"where {self.where!r} names {node.name!r}, not a column of the table "
                f"({', '.join(self.schema.names)})"
            )
        return name

    def column(self, node: exp.Expr) -> pc.Expression:
        name = self.column_name(node)
        self.columns.add(name)
        return pc.field(name)

    def literal(self, node: exp.Expr, kind: pa.DataType) -> pa.Scalar:
        """A literal as a value of ``kind`` (its column's type)."""
        value: Any
        if pa.types.is_decimal(kind) and _is_number(node):
            # 5000.00 is exact in SQL: through a float it could miss the column's value
            negative = isinstance(node, exp.Neg)
            text = str((node.this if negative else node).this)
            value = -Decimal(text) if negative else Decimal(text)
        elif isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
            value = -_number(node.this.this)
        elif (
            isinstance(node, exp.Cast)
            and isinstance(node.this, exp.Literal)
            and node.this.is_string
            and node.to.this == exp.DataType.Type.DATE
        ):
            value = node.this.this  # DATE '2024-01-16' (a TIMESTAMP's zone is Spark's session's)
        elif isinstance(node, exp.Literal):
            value = node.this if node.is_string else _number(node.this)
        elif isinstance(node, exp.Boolean):
            value = bool(node.this)
        elif isinstance(node, exp.Null):
            return pa.scalar(None, kind)
        else:
            raise self.refuse(node, "expected a literal or a column")
        if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) and not isinstance(
            value, str
        ):
            # Spark would compare as numbers ('01' = 1 holds there); a silent string
            # comparison could drop rows (and prune partitions) Spark keeps.
            raise self.refuse(node, f"compared with a string column, quote it ('{node.sql()}')")
        try:
            return pa.scalar(value).cast(kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise self.refuse(node, f"not a value of type {kind}") from exc


def _is_number(node: exp.Expr) -> bool:
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and not inner.is_string


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)
