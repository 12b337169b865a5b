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
from typing import TYPE_CHECKING

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

from hudilite.errors import SchemaError

if TYPE_CHECKING:
    pass

__all__ = ["column_sql", "parse_type", "quote_identifier", "sql_string", "type_sql"]

# --------------------------------------------------------------------------------------------
# Spark SQL type text -> DataType

_ATOMIC: dict[str, DataType] = {
    "BOOLEAN": BooleanType(),
    "BOOL": BooleanType(),
    "TINYINT": ByteType(),
    "BYTE": ByteType(),
    "SMALLINT": ShortType(),
    "SHORT": ShortType(),
    "INT": IntegerType(),
    "INTEGER": IntegerType(),
    "BIGINT": LongType(),
    "LONG": LongType(),
    "FLOAT": FloatType(),
    "REAL": FloatType(),
    "DOUBLE": DoubleType(),
    "STRING": StringType(),
    "TEXT": StringType(),
    "BINARY": BinaryType(),
    "DATE": DateType(),
    "TIMESTAMP": TimestampType(),
    "TIMESTAMP_LTZ": TimestampType(),
    "TIMESTAMPLTZ": TimestampType(),
    "TIMESTAMP_NTZ": TimestampNTZType(),
    "TIMESTAMPNTZ": TimestampNTZType(),
    "VOID": NullType(),
}
# Spark stores CHAR(n)/VARCHAR(n) columns of datasource tables as STRING.
_STRINGS = ("CHAR", "CHARACTER", "VARCHAR")
_DECIMALS = ("DECIMAL", "DEC", "NUMERIC")

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d+)|`(?P<quoted>(?:[^`]|``)*)`"
    r"|'(?P<sq>(?:[^'\\]|\\.)*)'|\"(?P<dq>(?:[^\"\\]|\\.)*)\"|(?P<sym>[<>(),:]))"
)


def _unescape(text: str) -> str:
    """Spark string literal escapes (``\\'``, ``\\\\``, ``\\n``...)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), text)


class _TypeParser:
    """Recursive descent over the tokens of one type's text."""

    def __init__(self, text: str, column: str) -> None:
        self.text = text
        self.column = column
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN_RE.match(stripped, pos)
            if m is None or m.end() == pos:
                self.fail(f"unexpected {stripped[pos:].strip()[:10]!r}")
            assert m is not None
            kind = m.lastgroup or "sym"
            value = m.group(kind)
            if kind == "quoted":
                value, kind = value.replace("``", "`"), "name"
            elif kind in ("sq", "dq"):
                value, kind = _unescape(value), "str"
            self.tokens.append((kind, value))
            pos = m.end()
        self.pos = 0

    def fail(self, why: str) -> None:
        raise SchemaError(f"column {self.column!r}: invalid data type {self.text!r}: {why}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.pos += 1
        return tok

    def expect(self, sym: str) -> None:
        kind, value = self.take()
        if kind != "sym" or value != sym:
            self.fail(f"expected {sym!r}, found {value or 'the end'!r}")

    def word(self, *words: str) -> bool:
        kind, value = self.peek()
        if kind == "name" and value.upper() in words:
            self.pos += 1
            return True
        return False

    def number(self) -> int:
        kind, value = self.take()
        if kind != "num":
            self.fail(f"expected a number, found {value or 'the end'!r}")
        return int(value)

    def parse(self) -> DataType:
        out = self.type_()
        if self.peek()[0] != "end":
            self.fail(f"unexpected {self.peek()[1]!r}")
        return out

    def type_(self) -> DataType:
        kind, value = self.take()
        if kind != "name":
            self.fail(f"expected a type name, found {value or 'the end'!r}")
        name = value.upper()
        if name == "ARRAY":
            self.expect("<")
            element = self.type_()
            self.expect(">")
            return ArrayType(element, True)
        if name == "MAP":
            self.expect("<")
            key = self.type_()
            self.expect(",")
            value_type = self.type_()
            self.expect(">")
            return MapType(key, value_type, True)
        if name == "STRUCT":
            return self.struct()
        if name in _DECIMALS:
            precision, scale = 10, 0
            if self.peek() == ("sym", "("):
                self.take()
                precision = self.number()
                if self.peek() == ("sym", ","):
                    self.take()
                    scale = self.number()
                self.expect(")")
            if not 0 < precision <= 38 or not 0 <= scale <= precision:
                self.fail(f"decimal precision {precision} and scale {scale} out of range")
            return DecimalType(precision, scale)
        if name in _STRINGS:
            if self.peek() == ("sym", "("):
                self.take()
                self.number()
                self.expect(")")
            return StringType()
        if name == "DOUBLE":
            self.word("PRECISION")
        if name in _ATOMIC:
            return _ATOMIC[name]
        if name == "INTERVAL":
            self.fail("interval types cannot be stored in a Hudi table")
        self.fail(f"unknown type {value!r}")
        raise AssertionError  # pragma: no cover - fail raises

    def struct(self) -> StructType:
        self.expect("<")
        fields: list[StructField] = []
        while self.peek() != ("sym", ">"):
            if fields:
                self.expect(",")
            kind, name = self.take()
            if kind != "name":
                self.fail(f"expected a field name, found {name or 'the end'!r}")
            if self.peek() == ("sym", ":"):
                self.take()
            data_type = self.type_()
            nullable = True
            metadata: dict[str, str] = {}
            while True:
                if self.word("NOT"):
                    if not self.word("NULL"):
                        self.fail("expected NULL after NOT")
                    nullable = False
                elif self.word("COMMENT"):
                    kind, text = self.take()
                    if kind != "str":
                        self.fail("expected a string after COMMENT")
                    metadata["comment"] = text
                else:
                    break
            fields.append(StructField(name, data_type, nullable, metadata or None))
        self.expect(">")
        return StructType(fields)


def parse_type(text: str, column: str = "?") -> DataType:
    """The Spark ``DataType`` of Spark SQL type text; :class:`SchemaError` naming ``column``
    when the text is not a type (or one a Hudi table cannot store, like INTERVAL)."""
    return _TypeParser(text, column).parse()


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
