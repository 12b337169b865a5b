"""Spark SQL type text <-> Spark ``DataType`` objects, and Spark SQL quoting.

Nothing here needs a JVM: types are ``pyspark.sql.types`` objects (plain Python).

* :func:`parse_type` reads a Spark SQL type (``DECIMAL(10, 5)``, ``ARRAY<STRUCT<a: STRING>>``,
  ``MAP<STRING, INT>``, ``BIGINT``/``LONG``, ``SHORT``, ``BYTE``, ``VARCHAR(3)``...) into a
  Spark ``DataType``; :func:`type_sql` renders one back the way Spark's ``DataType.sql``
  does (``simpleString()`` is Spark's ``DESCRIBE`` spelling).
* :func:`quote_identifier` and :func:`sql_string` quote names and strings as Spark does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NoReturn

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from sqlglot import exp

from hudilite.errors import SchemaError

from .dialect import ParseError, TokenError, parse_data_type

__all__ = ["column_sql", "parse_type", "quote_identifier", "sql_string", "type_sql"]

# --------------------------------------------------------------------------------------------
# Spark SQL type text -> DataType

_T = exp.DType
# sqlglot's type (as the hudilite dialect reads Spark's names) -> Spark's.
_ATOMIC: dict[exp.DType, DataType] = {
    _T.BOOLEAN: BooleanType(),
    _T.TINYINT: ByteType(),
    _T.SMALLINT: ShortType(),
    _T.INT: IntegerType(),
    _T.BIGINT: LongType(),
    _T.FLOAT: FloatType(),
    _T.DOUBLE: DoubleType(),
    _T.TEXT: StringType(),
    # Spark stores CHAR(n)/VARCHAR(n) columns of datasource tables as STRING.
    _T.CHAR: StringType(),
    _T.VARCHAR: StringType(),
    _T.BINARY: BinaryType(),
    _T.DATE: DateType(),
    # Spark's TIMESTAMP is TIMESTAMP_LTZ (sqlglot reads it as TIMESTAMPTZ).
    _T.TIMESTAMPTZ: TimestampType(),
    _T.TIMESTAMPLTZ: TimestampType(),
    _T.TIMESTAMP: TimestampType(),
    _T.TIMESTAMPNTZ: TimestampNTZType(),
    _T.NULL: NullType(),
}
_EXPECTING = re.compile(r"Expecting (\S+)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse_error(e: ParseError | TokenError, text: str) -> str:
    """Why sqlglot's type parser refused ``text``, in this module's words."""
    err = e.errors[0] if isinstance(e, ParseError) and e.errors else {}
    description = str(err.get("description") or e).split("\n")[0]
    found = str(err.get("highlight") or "")
    col = err.get("col")
    after = text[col:].lstrip() if isinstance(col, int) else ""
    at_end = isinstance(col, int) and not after
    expecting = _EXPECTING.fullmatch(description)
    if found.upper() == "NOT" and not after.upper().startswith("NULL"):
        return "expected NULL after NOT"
    if expecting:
        return f"expected {expecting.group(1)!r}, found {'the end' if at_end else found!r}"
    if description.startswith("Invalid expression") and found:
        first = isinstance(col, int) and text[:col].strip().upper() == found.upper()
        if first and _NAME.fullmatch(found):
            return f"unknown type {found!r}"
        return f"unexpected {found!r}"
    return description


class _Converter:
    """sqlglot ``DataType`` -> Spark ``DataType``, failing with the column and text."""

    def __init__(self, text: str, column: str) -> None:
        self.text = text
        self.column = column

    def fail(self, why: str) -> NoReturn:
        raise SchemaError(f"column {self.column!r}: invalid data type {self.text!r}: {why}")

    def number(self, param: exp.Expr) -> int:
        value = param.this if isinstance(param, exp.DataTypeParam) else param
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            return int(value.this)
        return self.fail(f"expected a number, found {value.sql()!r}")

    def convert(self, node: exp.DataType) -> DataType:
        kind = node.this
        params = node.expressions
        if kind == _T.ARRAY:
            if len(params) != 1:
                self.fail("expected '>', found ','" if params else "expected a type name")
            return ArrayType(self.convert(params[0]), True)
        if kind == _T.MAP:
            if len(params) != 2:
                self.fail(
                    "expected ',', found '>'" if len(params) < 2 else "expected '>', found ','"
                )
            return MapType(self.convert(params[0]), self.convert(params[1]), True)
        if kind == _T.STRUCT:
            return StructType([self.field(p) for p in params])
        if kind == _T.DECIMAL:
            if len(params) > 2:
                self.fail("expected ')'")
            precision = self.number(params[0]) if params else 10
            scale = self.number(params[1]) if len(params) > 1 else 0
            if not 0 < precision <= 38 or not 0 <= scale <= precision:
                self.fail(f"decimal precision {precision} and scale {scale} out of range")
            return DecimalType(precision, scale)
        if kind == _T.INTERVAL or isinstance(kind, exp.Interval):
            self.fail("interval types cannot be stored in a Hudi table")
        if kind in (_T.CHAR, _T.VARCHAR):
            for p in params:
                self.number(p)
        elif params:
            self.fail(f"unexpected {params[0].sql()!r}")
        atomic = _ATOMIC.get(kind) if isinstance(kind, exp.DType) else None
        if atomic is None:
            name = kind.value if isinstance(kind, exp.DType) else str(kind)
            self.fail(f"unknown type {name!r}")
        return atomic

    def field(self, node: exp.Expr) -> StructField:
        kind = node.args.get("kind")
        if not isinstance(node, exp.ColumnDef) or not isinstance(kind, exp.DataType):
            return self.fail(f"expected 'name: type', found {node.sql()!r}")
        nullable = True
        metadata: dict[str, str] = {}
        for c in node.args.get("constraints") or []:
            if isinstance(c.kind, exp.NotNullColumnConstraint):
                nullable = bool(c.kind.args.get("allow_null"))
            elif isinstance(c.kind, exp.CommentColumnConstraint) and isinstance(
                c.kind.this, exp.Literal
            ):
                metadata["comment"] = c.kind.this.this
            else:
                self.fail(f"unexpected {c.sql()!r}")
        return StructField(node.name, self.convert(kind), nullable, metadata or None)


def parse_type(text: str, column: str = "?") -> DataType:
    """The Spark ``DataType`` of Spark SQL type text, read by sqlglot's type parser (through
    the hudilite dialect); :class:`SchemaError` naming ``column`` when the text is not a
    type (or one a Hudi table cannot store, like INTERVAL)."""
    converter = _Converter(text, column)
    if not text.strip():
        converter.fail("expected a type name, found 'the end'")
    try:
        node = parse_data_type(text)
    except (ParseError, TokenError) as e:
        converter.fail(_parse_error(e, text))
    return converter.convert(node)


# --------------------------------------------------------------------------------------------
# DataType -> Spark SQL text

_SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote_identifier(name: str) -> str:
    """``name`` back-quoted when Spark would need it (Spark's ``quoteIfNeeded``)."""
    return name if _SAFE_NAME.fullmatch(name) else "`" + name.replace("`", "``") + "`"


def sql_string(text: str) -> str:
    """A single-quoted Spark SQL string literal (backslash escapes, as Spark renders them)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def type_sql(data_type: DataType) -> str:
    """Spark's ``DataType.sql``: ``BIGINT``, ``DECIMAL(10,5)``, ``ARRAY<STRUCT<a: STRING>>``."""
    if isinstance(data_type, ArrayType):
        return f"ARRAY<{type_sql(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"MAP<{type_sql(data_type.keyType)}, {type_sql(data_type.valueType)}>"
    if isinstance(data_type, StructType):
        return "STRUCT<" + ", ".join(_field_sql(f, ": ") for f in data_type.fields) + ">"
    if isinstance(data_type, DecimalType):
        return f"DECIMAL({data_type.precision},{data_type.scale})"
    names = {
        ByteType: "TINYINT",
        ShortType: "SMALLINT",
        IntegerType: "INT",
        LongType: "BIGINT",
        NullType: "VOID",
        TimestampNTZType: "TIMESTAMP_NTZ",
    }
    for cls, name in names.items():
        if isinstance(data_type, cls):
            return name
    return data_type.typeName().upper()


def _field_sql(f: StructField, sep: str = " ") -> str:
    out = f"{quote_identifier(f.name)}{sep}{type_sql(f.dataType)}"
    if not f.nullable:
        out += " NOT NULL"
    comment = (f.metadata or {}).get("comment")
    if comment is not None:
        out += f" COMMENT {sql_string(str(comment))}"
    return out


def column_sql(f: StructField) -> str:
    """One column definition of a CREATE TABLE: ``name TYPE [NOT NULL] [COMMENT '...']``."""
    return _field_sql(f)


@lru_cache(maxsize=16)
def simple_struct(ddl: str) -> StructType:
    """The ``StructType`` of a DDL list of ``name string`` / ``name long`` columns (nullable),
    built in Python without the JVM's DDL parser."""
    types = {"string": StringType(), "long": LongType()}
    fields = [f.strip().split(" ") for f in ddl.split(",")]
    return StructType([StructField(name, types[kind], True) for name, kind in fields])
