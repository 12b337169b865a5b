"""The metadata requests: catalogs, schemas, tables, columns, types, functions, keys.

Each function returns a :data:`~hudilite.thriftserver.operations.RowSource` with the
columns ``java.sql.DatabaseMetaData`` documents for the matching JDBC call (and HiveServer2
returns), so JDBC tools (DBeaver, beeline's ``!tables``) read them by name. Databases are the
JDBC *schemas*; the catalog is empty (``""``), as in HiveServer2. Patterns use JDBC's ``%``
(any run) and ``_`` (one character), with ``\\`` escaping either; names compare
case-insensitively, since hudilite lower-cases them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T
from TCLIService import ttypes as tt

from hudilite.sqlext.spark_types import quote_identifier

from .operations import RowSource, static_rows
from .rowsets import ColumnSpec, jdbc_type, spec_of

if TYPE_CHECKING:
    from hudilite.sqlext.session import Session

__all__ = [
    "catalogs",
    "columns",
    "functions",
    "like",
    "primary_keys",
    "schemas",
    "table_types",
    "tables",
    "type_info",
]

_S, _I, _SI, _B = (
    tt.TTypeId.STRING_TYPE,
    tt.TTypeId.INT_TYPE,
    tt.TTypeId.SMALLINT_TYPE,
    tt.TTypeId.BOOLEAN_TYPE,
)
_HIVE_NAMES = {_S: "string", _I: "int", _SI: "smallint", _B: "boolean"}


def _cols(*spec: tuple[str, int]) -> list[ColumnSpec]:
    return [ColumnSpec(name, _HIVE_NAMES[t], t) for name, t in spec]


TABLE_TYPES = ("TABLE", "VIEW")


def like(pattern: str | None) -> re.Pattern[str]:
    """A JDBC search pattern as a case-insensitive regular expression (None or ``*``: any)."""
    if pattern is None or pattern in ("", "*"):
        return re.compile(".*", re.S)
    out, escaped = [], False
    for ch in pattern:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out) + r"\Z", re.S | re.I)


def catalogs() -> RowSource:
    """GetCatalogs: none (one unnamed catalog, as HiveServer2)."""
    return static_rows(_cols(("TABLE_CAT", _S)), [])


def schemas(session: Session, schema_pattern: str | None) -> RowSource:
    """GetSchemas: the warehouse's databases matching the pattern."""
    pat = like(schema_pattern)
    rows = [(db, "") for db in session.catalog.list_databases() if pat.match(db)]
    return static_rows(_cols(("TABLE_SCHEM", _S), ("TABLE_CATALOG", _S)), rows)


def table_types() -> RowSource:
    """GetTableTypes."""
    return static_rows(_cols(("TABLE_TYPE", _S)), [(t,) for t in TABLE_TYPES])


def _objects(session: Session, schema_pattern: str | None) -> Iterable[tuple[str, str, str]]:
    """``(database, name, TABLE|VIEW)`` for every table and view of matching databases;
    merge-on-read tables also as ``t_ro`` and ``t_rt`` (Hudi's Hive sync names them so)."""
    pat = like(schema_pattern)
    cat = session.catalog
    for db in cat.list_databases():
        if not pat.match(db):
            continue
        for name in cat.list_tables(db):
            yield db, name, "TABLE"
            try:
                is_mor = cat.table_config(db, name).is_mor
            except Exception:  # a table whose files are gone still lists, without _ro/_rt
                is_mor = False
            if is_mor:
                yield db, f"{name}_ro", "TABLE"
                yield db, f"{name}_rt", "TABLE"
        for name in cat.list_views(db):
            yield db, name, "VIEW"


def tables(
    session: Session,
    schema_pattern: str | None,
    table_pattern: str | None,
    types: list[str] | None,
) -> RowSource:
    """GetTables: TABLE_CAT, TABLE_SCHEM, TABLE_NAME, TABLE_TYPE, REMARKS and the JDBC 4
    columns HiveServer2 adds (all null)."""
    pat = like(table_pattern)
    wanted = {t.upper() for t in types} if types else set(TABLE_TYPES)
    rows = [
        ("", db, name, kind, "", None, None, None, None, None)
        for db, name, kind in sorted(_objects(session, schema_pattern))
        if pat.match(name) and kind in wanted
    ]
    cols = _cols(
        ("TABLE_CAT", _S),
        ("TABLE_SCHEM", _S),
        ("TABLE_NAME", _S),
        ("TABLE_TYPE", _S),
        ("REMARKS", _S),
        ("TYPE_CAT", _S),
        ("TYPE_SCHEM", _S),
        ("TYPE_NAME", _S),
        ("SELF_REFERENCING_COL_NAME", _S),
        ("REF_GENERATION", _S),
    )
    return static_rows(cols, rows)


_COLUMNS = _cols(
    ("TABLE_CAT", _S),
    ("TABLE_SCHEM", _S),
    ("TABLE_NAME", _S),
    ("COLUMN_NAME", _S),
    ("DATA_TYPE", _I),
    ("TYPE_NAME", _S),
    ("COLUMN_SIZE", _I),
    ("BUFFER_LENGTH", _SI),
    ("DECIMAL_DIGITS", _I),
    ("NUM_PREC_RADIX", _I),
    ("NULLABLE", _I),
    ("REMARKS", _S),
    ("COLUMN_DEF", _S),
    ("SQL_DATA_TYPE", _I),
    ("SQL_DATETIME_SUB", _I),
    ("CHAR_OCTET_LENGTH", _I),
    ("ORDINAL_POSITION", _I),
    ("IS_NULLABLE", _S),
    ("SCOPE_CATALOG", _S),
    ("SCOPE_SCHEMA", _S),
    ("SCOPE_TABLE", _S),
    ("SOURCE_DATA_TYPE", _SI),
    ("IS_AUTO_INCREMENT", _S),
)

# COLUMN_SIZE and DECIMAL_DIGITS per Spark type, as Spark's own server reports them.
_SIZES: dict[type, tuple[int | None, int | None]] = {
    T.BooleanType: (1, None),
    T.ByteType: (3, 0),
    T.ShortType: (5, 0),
    T.IntegerType: (10, 0),
    T.LongType: (19, 0),
    T.FloatType: (7, 7),
    T.DoubleType: (15, 15),
    T.DateType: (10, None),
    T.TimestampType: (29, 9),
    T.StringType: (2147483647, None),
    T.BinaryType: (2147483647, None),
}


def _size(dt: T.DataType) -> tuple[int | None, int | None, int | None]:
    if isinstance(dt, T.DecimalType):
        return dt.precision, dt.scale, 10
    size, digits = _SIZES.get(type(dt), (None, None))
    radix = 10 if isinstance(dt, T.NumericType) else None
    return size, digits, radix


def table_schema(session: Session, db: str, name: str) -> T.StructType:
    """The columns a query of ``db.name`` returns (tables, ``_ro``/``_rt``, views)."""
    qualified = f"{quote_identifier(db)}.{quote_identifier(name)}"
    schema = session.sql(f"SELECT * FROM {qualified}").schema
    # Column comments live in the catalog; DESCRIBE's rows carry them (a few rows of
    # metadata, not table data).
    try:
        described = session.sql(f"DESCRIBE {qualified}").collect()
    except Exception:  # _ro/_rt names and Spark-only tables: no hudilite DESCRIBE
        return schema
    comments = {r[0]: r[2] for r in described if r[0] and not r[0].startswith("#") and r[2]}
    return T.StructType(
        [
            T.StructField(f.name, f.dataType, f.nullable, {"comment": comments[f.name]})
            if f.name in comments
            else f
            for f in schema.fields
        ]
    )


def columns(
    session: Session,
    schema_pattern: str | None,
    table_pattern: str | None,
    column_pattern: str | None,
) -> RowSource:
    """GetColumns: one row per column of every matching table and view, in order."""
    tpat, cpat = like(table_pattern), like(column_pattern)
    rows: list[tuple[Any, ...]] = []
    for db, name, _kind in sorted(_objects(session, schema_pattern)):
        if not tpat.match(name):
            continue
        for pos, field in enumerate(table_schema(session, db, name).fields, start=1):
            if not cpat.match(field.name):
                continue
            spec = spec_of(field)
            size, digits, radix = _size(field.dataType)
            nullable = 1 if field.nullable else 0
            rows.append(
                (
                    "",
                    db,
                    name,
                    field.name,
                    jdbc_type(spec.type_id),
                    spec.hive_type.upper(),
                    size,
                    None,
                    digits,
                    radix,
                    nullable,
                    spec.comment or "",
                    None,
                    None,
                    None,
                    None,
                    pos,
                    "YES" if nullable else "NO",
                    None,
                    None,
                    None,
                    None,
                    "NO",
                )
            )
    return static_rows(_COLUMNS, rows)


def primary_keys(session: Session, schema: str | None, table: str | None) -> RowSource:
    """GetPrimaryKeys: a hudilite table's record key fields, in key order."""
    cols = _cols(
        ("TABLE_CAT", _S),
        ("TABLE_SCHEM", _S),
        ("TABLE_NAME", _S),
        ("COLUMN_NAME", _S),
        ("KEQ_SEQ", _I),
        ("PK_NAME", _S),
    )
    db = (schema or session.current_database).lower()
    rows: list[tuple[Any, ...]] = []
    if table and session.catalog.database_exists(db) and session.catalog.table_exists(db, table):
        name = table.lower()
        keys = session.catalog.table_config(db, name).record_key_fields
        rows = [("", db, name, k, i, f"{name}_pk") for i, k in enumerate(keys, start=1)]
    return static_rows(cols, rows)


def functions(session: Session, function_pattern: str | None) -> RowSource:
    """GetFunctions: Spark's functions matching the pattern."""
    pat = like(function_pattern)
    cols = _cols(
        ("FUNCTION_CAT", _S),
        ("FUNCTION_SCHEM", _S),
        ("FUNCTION_NAME", _S),
        ("REMARKS", _S),
        ("FUNCTION_TYPE", _I),
        ("SPECIFIC_NAME", _S),
    )
    # SHOW FUNCTIONS lists names only (catalog.listFunctions looks each one up: slow).
    listed = session.spark.sql("SHOW FUNCTIONS").collect()
    names = sorted({r[0] for r in listed if pat.match(r[0])})
    # FUNCTION_TYPE 1: functionNoTable (java.sql.DatabaseMetaData.functionNoTable).
    rows = [("", None, n, "", 1, n) for n in names]
    return static_rows(cols, rows)


# GetTypeInfo: (name, Thrift type id, precision, searchable, unsigned, numeric radix).
_TYPES = (
    ("VOID", tt.TTypeId.NULL_TYPE, None, 3, None, None),
    ("BOOLEAN", tt.TTypeId.BOOLEAN_TYPE, None, 3, None, None),
    ("TINYINT", tt.TTypeId.TINYINT_TYPE, 3, 3, False, 10),
    ("SMALLINT", tt.TTypeId.SMALLINT_TYPE, 5, 3, False, 10),
    ("INT", tt.TTypeId.INT_TYPE, 10, 3, False, 10),
    ("BIGINT", tt.TTypeId.BIGINT_TYPE, 19, 3, False, 10),
    ("FLOAT", tt.TTypeId.FLOAT_TYPE, 7, 3, False, 10),
    ("DOUBLE", tt.TTypeId.DOUBLE_TYPE, 15, 3, False, 10),
    ("STRING", tt.TTypeId.STRING_TYPE, None, 3, None, None),
    ("BINARY", tt.TTypeId.BINARY_TYPE, None, 3, None, None),
    ("DECIMAL", tt.TTypeId.DECIMAL_TYPE, 38, 3, False, 10),
    ("DATE", tt.TTypeId.DATE_TYPE, None, 3, None, None),
    ("TIMESTAMP", tt.TTypeId.TIMESTAMP_TYPE, None, 3, None, None),
    ("ARRAY", tt.TTypeId.ARRAY_TYPE, None, 0, None, None),
    ("MAP", tt.TTypeId.MAP_TYPE, None, 0, None, None),
    ("STRUCT", tt.TTypeId.STRUCT_TYPE, None, 0, None, None),
)


def type_info() -> RowSource:
    """GetTypeInfo: the 18 columns of ``DatabaseMetaData.getTypeInfo``."""
    cols = _cols(
        ("TYPE_NAME", _S),
        ("DATA_TYPE", _I),
        ("PRECISION", _I),
        ("LITERAL_PREFIX", _S),
        ("LITERAL_SUFFIX", _S),
        ("CREATE_PARAMS", _S),
        ("NULLABLE", _SI),
        ("CASE_SENSITIVE", _B),
        ("SEARCHABLE", _SI),
        ("UNSIGNED_ATTRIBUTE", _B),
        ("FIXED_PREC_SCALE", _B),
        ("AUTO_INCREMENT", _B),
        ("LOCAL_TYPE_NAME", _S),
        ("MINIMUM_SCALE", _SI),
        ("MAXIMUM_SCALE", _SI),
        ("SQL_DATA_TYPE", _I),
        ("SQL_DATETIME_SUB", _I),
        ("NUM_PREC_RADIX", _I),
    )
    rows = [
        (
            name,
            jdbc_type(type_id),
            precision,
            None,
            None,
            None,
            1,
            name == "STRING",
            searchable,
            unsigned,
            False,
            False,
            None,
            0,
            0,
            None,
            None,
            radix,
        )
        for name, type_id, precision, searchable, unsigned, radix in _TYPES
    ]
    return static_rows(cols, rows)
