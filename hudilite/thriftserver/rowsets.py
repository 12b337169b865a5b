"""Result schemas and row sets in HiveServer2's Thrift shapes.

A result column is a :class:`ColumnSpec` (name, Hive type name, ``TTypeId``, comment). Spark
schemas map to Hive's type names the way Spark's own Thrift server maps them
(``SparkExecuteStatementOperation``); values of types Hive sends as text (timestamps, dates,
decimals, intervals) are rendered by Spark itself (``CAST(... AS STRING)`` in the session
time zone) and complex values as JSON (``to_json``), so the driver only moves plain Python
values into Thrift columns.

Row sets are columnar (``TColumn`` per column, a null bitmap with bit ``i % 8`` of byte
``i // 8`` set for a null row) from protocol V6 on, row-based (``TRow`` of ``TColumnValue``)
before, as ``TCLIService.thrift`` specifies. A statement's rows arrive from Spark as Arrow
record batches when the shown columns all have an Arrow type here
(:func:`display_arrow_schema`), and reach :func:`row_set` as a :class:`ColumnBatch`: one
Python list per column (``to_pylist``) and the null bitmaps computed from Arrow's, so no
per-value Python loop runs unless a column has nulls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from TCLIService import ttypes as tt

__all__ = [
    "ColumnBatch",
    "ColumnSpec",
    "column_batch",
    "columns_of",
    "display_arrow_schema",
    "display_frame",
    "jdbc_type",
    "row_set",
    "table_schema",
]

TTypeId = tt.TTypeId
#: First protocol version with columnar row sets (and binary as binary).
COLUMNAR_FROM = tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6


@dataclass(frozen=True)
class ColumnSpec:
    """One result column: its name, Hive type text (``decimal(10,2)``), Thrift type id,
    comment, and for decimals precision and scale."""

    name: str
    hive_type: str
    type_id: int
    comment: str | None = None
    precision: int | None = None
    scale: int | None = None


_SIMPLE: dict[type, tuple[str, int]] = {
    T.BooleanType: ("boolean", TTypeId.BOOLEAN_TYPE),
    T.ByteType: ("tinyint", TTypeId.TINYINT_TYPE),
    T.ShortType: ("smallint", TTypeId.SMALLINT_TYPE),
    T.IntegerType: ("int", TTypeId.INT_TYPE),
    T.LongType: ("bigint", TTypeId.BIGINT_TYPE),
    T.FloatType: ("float", TTypeId.FLOAT_TYPE),
    T.DoubleType: ("double", TTypeId.DOUBLE_TYPE),
    T.StringType: ("string", TTypeId.STRING_TYPE),
    T.VarcharType: ("string", TTypeId.STRING_TYPE),
    T.CharType: ("string", TTypeId.STRING_TYPE),
    T.BinaryType: ("binary", TTypeId.BINARY_TYPE),
    T.DateType: ("date", TTypeId.DATE_TYPE),
    T.TimestampType: ("timestamp", TTypeId.TIMESTAMP_TYPE),
    T.TimestampNTZType: ("timestamp", TTypeId.TIMESTAMP_TYPE),
    T.NullType: ("void", TTypeId.NULL_TYPE),
    T.ArrayType: ("array", TTypeId.ARRAY_TYPE),
    T.MapType: ("map", TTypeId.MAP_TYPE),
    T.StructType: ("struct", TTypeId.STRUCT_TYPE),
    T.YearMonthIntervalType: ("interval_year_month", TTypeId.INTERVAL_YEAR_MONTH_TYPE),
    T.DayTimeIntervalType: ("interval_day_time", TTypeId.INTERVAL_DAY_TIME_TYPE),
}

#: java.sql.Types codes per Thrift type (GetColumns' DATA_TYPE, GetTypeInfo).
_JDBC_TYPES = {
    TTypeId.BOOLEAN_TYPE: 16,
    TTypeId.TINYINT_TYPE: -6,
    TTypeId.SMALLINT_TYPE: 5,
    TTypeId.INT_TYPE: 4,
    TTypeId.BIGINT_TYPE: -5,
    TTypeId.FLOAT_TYPE: 6,
    TTypeId.DOUBLE_TYPE: 8,
    TTypeId.STRING_TYPE: 12,
    TTypeId.TIMESTAMP_TYPE: 93,
    TTypeId.BINARY_TYPE: -2,
    TTypeId.DECIMAL_TYPE: 3,
    TTypeId.DATE_TYPE: 91,
    TTypeId.NULL_TYPE: 0,
    TTypeId.ARRAY_TYPE: 2003,
    TTypeId.MAP_TYPE: 2000,
    TTypeId.STRUCT_TYPE: 2002,
    TTypeId.INTERVAL_YEAR_MONTH_TYPE: 1111,
    TTypeId.INTERVAL_DAY_TIME_TYPE: 1111,
}


def jdbc_type(type_id: int) -> int:
    """The ``java.sql.Types`` code of a Thrift type id (``OTHER``, 1111, when none fits)."""
    return _JDBC_TYPES.get(type_id, 1111)


def spec_of(field: T.StructField) -> ColumnSpec:
    """The :class:`ColumnSpec` of a Spark field (complex types keep Spark's type text)."""
    dt = field.dataType
    comment = field.metadata.get("comment") if field.metadata else None
    if isinstance(dt, T.DecimalType):
        return ColumnSpec(
            field.name,
            f"decimal({dt.precision},{dt.scale})",
            TTypeId.DECIMAL_TYPE,
            comment,
            dt.precision,
            dt.scale,
        )
    name, type_id = _SIMPLE.get(type(dt), ("string", TTypeId.STRING_TYPE))
    if type_id in (TTypeId.ARRAY_TYPE, TTypeId.MAP_TYPE, TTypeId.STRUCT_TYPE):
        name = dt.simpleString()
    return ColumnSpec(field.name, name, type_id, comment)


def columns_of(schema: T.StructType) -> list[ColumnSpec]:
    """The result columns of a Spark schema."""
    return [spec_of(f) for f in schema.fields]


_AS_TEXT = (
    T.TimestampType
    | T.TimestampNTZType
    | T.DateType
    | T.DecimalType
    | T.YearMonthIntervalType
    | T.DayTimeIntervalType
    | T.NullType
)
_AS_JSON = T.ArrayType | T.MapType | T.StructType


def display_frame(df: DataFrame) -> DataFrame:
    """``df`` with every column the driver cannot send as it is turned into text by Spark:
    timestamps, dates, decimals and intervals cast to strings (Spark's rendering, in the
    session time zone), complex values as JSON. Names are kept, duplicates included; ``df``
    itself when no column needs turning."""
    fields = df.schema.fields
    if not any(isinstance(f.dataType, _AS_TEXT | _AS_JSON) for f in fields):
        return df
    positional = df.toDF(*[f"_c{i}" for i in range(len(fields))])
    exprs: list[Column] = []
    for i, f in enumerate(fields):
        col = F.col(f"_c{i}")
        if isinstance(f.dataType, _AS_JSON):
            col = F.to_json(col)
        elif isinstance(f.dataType, _AS_TEXT):
            col = col.cast("string")
        exprs.append(col.alias(f.name))
    return positional.select(*exprs)


# Arrow type of each Spark type a shown column may have (Spark's ArrowUtils mapping); strings
# and binaries are the large types under spark.sql.execution.arrow.useLargeVarTypes.
_ARROW_TYPES: dict[type, pa.DataType] = {
    T.BooleanType: pa.bool_(),
    T.ByteType: pa.int8(),
    T.ShortType: pa.int16(),
    T.IntegerType: pa.int32(),
    T.LongType: pa.int64(),
    T.FloatType: pa.float32(),
    T.DoubleType: pa.float64(),
}


def display_arrow_schema(schema: T.StructType, large_var_types: bool) -> pa.Schema | None:
    """The Arrow schema Spark gives the record batches of a :func:`display_frame` with
    ``schema``; None when a column's type has no mapping here (the rows then come as
    Python rows). ``large_var_types``: Spark's ``spark.sql.execution.arrow.useLargeVarTypes``."""
    if not schema.fields:
        return None
    fields = []
    for f in schema.fields:
        kind = type(f.dataType)
        if kind is T.StringType:
            at = pa.large_string() if large_var_types else pa.string()
        elif kind is T.BinaryType:
            at = pa.large_binary() if large_var_types else pa.binary()
        elif kind in _ARROW_TYPES:
            at = _ARROW_TYPES[kind]
        else:
            return None
        fields.append(pa.field(f.name, at, nullable=f.nullable))
    return pa.schema(fields)


class ColumnBatch(Sequence[tuple[Any, ...]]):
    """Rows held by column: ``columns[j][i]`` is row ``i``'s value of column ``j`` (None for
    a null); ``nulls[j]`` is column ``j``'s Hive null bitmap, or None when it has no nulls.
    Reads as a sequence of row tuples too (row-based row sets)."""

    __slots__ = ("_length", "columns", "nulls")

    def __init__(self, columns: list[list[Any]], nulls: list[bytes | None], length: int) -> None:
        self.columns = columns
        self.nulls = nulls
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...
    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        return tuple(c[index] for c in self.columns)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self.columns, strict=True)


def column_batch(table: pa.Table) -> ColumnBatch:
    """``table`` (rows of a :func:`display_frame`) as a :class:`ColumnBatch`."""
    columns: list[list[Any]] = []
    nulls: list[bytes | None] = []
    for col in table.columns:
        columns.append(col.to_pylist())
        nulls.append(
            # Hive's bit order is Arrow's (bit i % 8 of byte i // 8), the meaning inverted.
            np.packbits(np.asarray(col.is_null()), bitorder="little").tobytes()
            if col.null_count
            else None
        )
    return ColumnBatch(columns, nulls, table.num_rows)


def table_schema(columns: Sequence[ColumnSpec]) -> tt.TTableSchema:
    """``TTableSchema`` for GetResultSetMetadata."""
    descs = []
    for i, c in enumerate(columns):
        qualifiers = None
        if c.type_id == TTypeId.DECIMAL_TYPE and c.precision is not None:
            qualifiers = tt.TTypeQualifiers(
                qualifiers={
                    "precision": tt.TTypeQualifierValue(i32Value=c.precision),
                    "scale": tt.TTypeQualifierValue(i32Value=c.scale or 0),
                }
            )
        entry = tt.TTypeEntry(
            primitiveEntry=tt.TPrimitiveTypeEntry(type=c.type_id, typeQualifiers=qualifiers)
        )
        descs.append(
            tt.TColumnDesc(
                columnName=c.name,
                typeDesc=tt.TTypeDesc(types=[entry]),
                position=i + 1,
                comment=c.comment or "",
            )
        )
    return tt.TTableSchema(columns=descs)


# Thrift column kind per type id: (TColumn field, column class, value for a null).
_KINDS: dict[int, tuple[str, Any, Any]] = {
    TTypeId.BOOLEAN_TYPE: ("boolVal", tt.TBoolColumn, False),
    TTypeId.TINYINT_TYPE: ("byteVal", tt.TByteColumn, 0),
    TTypeId.SMALLINT_TYPE: ("i16Val", tt.TI16Column, 0),
    TTypeId.INT_TYPE: ("i32Val", tt.TI32Column, 0),
    TTypeId.BIGINT_TYPE: ("i64Val", tt.TI64Column, 0),
    TTypeId.FLOAT_TYPE: ("doubleVal", tt.TDoubleColumn, 0.0),
    TTypeId.DOUBLE_TYPE: ("doubleVal", tt.TDoubleColumn, 0.0),
    TTypeId.BINARY_TYPE: ("binaryVal", tt.TBinaryColumn, b""),
}
_STRING_KIND = ("stringVal", tt.TStringColumn, "")

# Row-based values: TColumnValue field and value class per column kind.
_VALUE_KINDS: dict[str, tuple[str, Any]] = {
    "boolVal": ("boolVal", tt.TBoolValue),
    "byteVal": ("byteVal", tt.TByteValue),
    "i16Val": ("i16Val", tt.TI16Value),
    "i32Val": ("i32Val", tt.TI32Value),
    "i64Val": ("i64Val", tt.TI64Value),
    "doubleVal": ("doubleVal", tt.TDoubleValue),
    "stringVal": ("stringVal", tt.TStringValue),
}


def _null_bitmap(values: Sequence[Any]) -> bytes:
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is None:
            bits[i >> 3] |= 1 << (i & 7)
    return bytes(bits)


def _column(spec: ColumnSpec, values: list[Any], columnar_binary: bool) -> tt.TColumn:
    field, cls, null = _KINDS.get(spec.type_id, _STRING_KIND)
    if field == "binaryVal" and not columnar_binary:
        field, cls, null = _STRING_KIND
    if field == "stringVal":
        vals = [null if v is None else v if isinstance(v, str) else _text(v) for v in values]
    elif field == "binaryVal":
        vals = [null if v is None else bytes(v) for v in values]
    elif field == "doubleVal":
        vals = [null if v is None else float(v) for v in values]
    else:
        vals = [null if v is None else v for v in values]
    return tt.TColumn(**{field: cls(values=vals, nulls=_null_bitmap(values))})


# Python type of each column kind's values as Arrow's to_pylist gives them for the Arrow
# type display_arrow_schema maps the kind's Spark types to.
_PY_TYPES = {
    "boolVal": bool,
    "byteVal": int,
    "i16Val": int,
    "i32Val": int,
    "i64Val": int,
    "doubleVal": float,
    "stringVal": str,
    "binaryVal": bytes,
}


def _arrow_column(spec: ColumnSpec, values: list[Any], nulls: bytes | None) -> tt.TColumn:
    """A column of a :class:`ColumnBatch` (``nulls`` None: no nulls). Its values have
    their kind's Python type (a shown column's Arrow type is the one its Spark type maps to,
    and the kind follows the same Spark type), so only nulls are replaced, and only when
    there are; a column whose values are not of that type takes :func:`_column`'s path."""
    field, cls, null = _KINDS.get(spec.type_id, _STRING_KIND)
    sample = next((v for v in values if v is not None), None)
    if sample is not None and type(sample) is not _PY_TYPES[field]:
        return _column(spec, values, True)  # not of the kind's type: the general path
    if nulls is None:
        return tt.TColumn(**{field: cls(values=values, nulls=bytes((len(values) + 7) // 8))})
    vals = [null if v is None else v for v in values]
    return tt.TColumn(**{field: cls(values=vals, nulls=nulls)})


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def row_set(
    columns: Sequence[ColumnSpec], rows: Sequence[Sequence[Any]], offset: int, protocol: int
) -> tt.TRowSet:
    """``rows`` (tuples in ``columns`` order) as a ``TRowSet`` for ``protocol``."""
    if protocol >= COLUMNAR_FROM and isinstance(rows, ColumnBatch):
        cols = [
            _arrow_column(c, v, n)
            for c, v, n in zip(columns, rows.columns, rows.nulls, strict=True)
        ]
        return tt.TRowSet(startRowOffset=offset, rows=[], columns=cols)
    if protocol >= COLUMNAR_FROM:
        by_column = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
        cols = [_column(c, list(v), True) for c, v in zip(columns, by_column, strict=True)]
        return tt.TRowSet(startRowOffset=offset, rows=[], columns=cols)
    out = []
    for row in rows:
        values = []
        for spec, v in zip(columns, row, strict=True):
            field = _KINDS.get(spec.type_id, _STRING_KIND)[0]
            if field == "binaryVal":
                field = "stringVal"  # before V6 binary travels as a string
            name, cls = _VALUE_KINDS[field]
            if v is not None and field == "stringVal" and not isinstance(v, str):
                v = _text(v)
            elif v is not None and field == "doubleVal":
                v = float(v)
            values.append(tt.TColumnValue(**{name: cls(value=v)}))
        out.append(tt.TRow(colVals=values))
    return tt.TRowSet(startRowOffset=offset, rows=out)
