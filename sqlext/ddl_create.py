"""CREATE TABLE [AS SELECT] over the warehouse catalog, behaving as Spark SQL with Hudi does.

``CREATE TABLE ... USING hudi`` (or ``hudilite``):

* options (``TBLPROPERTIES``, ``OPTIONS`` or ``WITH``) are Hudi's: ``primaryKey``,
  ``preCombineField``, ``type`` (``cow``/``mor``), ``hoodie.write.table.version`` (6 or 8)
  and their aliases become the table's key, ordering field, type and version; every other
  option goes to :meth:`hudilite.Table.create` unchanged (table properties to
  ``hoodie.properties``, write options to the table's write defaults). Session options
  (``SET hoodie.write.table.version = 8``) that describe a table apply unless the
  statement sets them (:func:`create_options`). The catalog entry keeps the options as
  given (SHOW CREATE TABLE renders them) and the columns' comments and ``NOT NULL``
  flags, which the Hudi schema cannot hold.
* partition columns move to the end of the schema in ``PARTITIONED BY`` order, as Spark
  lays out datasource tables (Hudi's own SQL scripts rely on it).
* without ``LOCATION`` the table is managed (``<warehouse>/<db>.db/<table>``); with one it
  is external. ``LOCATION`` over an existing Hudi table (hudilite's or Hudi's) without
  columns registers that table: schema and options come from the table, and given
  options that contradict it are an error.
* ``AS SELECT`` (CTAS): the columns are the query's (Hudi's meta columns dropped) and its
  rows are written with ``bulk_insert``, as Hudi's CTAS does. The query may read
  hudilite tables. A CTAS that fails leaves no table and no folder behind.
* another provider (``USING parquet|delta|iceberg|...``; none: Spark's
  ``spark.sql.sources.default``) goes to Spark, re-rendered from the parsed statement.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import (
    HudiliteError,
    SchemaError,
    TableExistsError,
)
from hudilite.schema import to_storage_schema
from hudilite.spark.convert import spark_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.table.api import Table
from hudilite.tablestate.state import PROPERTIES_FILE, TableState

from .context import Outcome, SqlContext, write_outcome
from .ddl_common import (
    COLUMNS_KEY,
    CONSUMED_KEYS,
    META_AND_OPERATION,
    check_option_conflicts,
    columns_schema,
    encode_column_notes,
    notes_of,
    quote_identifier,
    reorder_partitions,
    sql_string,
    table_spec,
)
from .ddl_show import sql_name
from .statements import (
    Column,
    CreateTable,
    SqlError,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hudilite.write.result import WriteResult


__all__ = ["HUDI_PROVIDERS", "column_text", "create_options", "create_table"]

HUDI_PROVIDERS = ("hudi", "hudilite")
# Spark's file sources take their settings as OPTIONS; other providers as TBLPROPERTIES.
_FILE_SOURCES = ("parquet", "orc", "csv", "json", "text", "avro", "binaryfile")


# --------------------------------------------------------------------------------------------
# CREATE TABLE


def create_table(session: SqlContext, stmt: CreateTable) -> Outcome:
    provider = stmt.using
    if provider is None:
        provider = session.spark.conf.get("spark.sql.sources.default", "parquet") or "parquet"
    if provider.lower() not in HUDI_PROVIDERS:
        return _create_spark_table(session, stmt, provider)
    db, name = session.qualify(stmt.name)
    display = f"{db}.{name}"
    catalog = session.catalog
    if not catalog.database_exists(db):
        raise DatabaseNotFoundError(f"cannot create table {display}: database {db} does not exist")
    if catalog.table_exists(db, name):
        if stmt.if_not_exists:
            return Outcome()
        raise TableExistsError(f"table {display} already exists")
    if stmt.columns is not None and stmt.as_select is not None:
        raise SqlError(
            f"CREATE TABLE {display} ... AS SELECT takes its columns from the query; "
            "remove the column list"
        )
    check_option_conflicts(stmt.options, display)
    location = _absolute(stmt.location) if stmt.location is not None else None
    if location is not None and FileSystemGateway(location).exists(PROPERTIES_FILE):
        if stmt.as_select is not None:
            raise TableExistsError(
                f"cannot create table {display} AS SELECT: a Hudi table already exists at "
                f"{location}"
            )
        return _register(session, stmt, db, name, location)
    if location is not None:
        found = _foreign_data(location)
        if found is not None:
            raise TableExistsError(
                f"cannot create table {display} at {location}: the folder holds data "
                f"({found}) but no Hudi table (no {PROPERTIES_FILE}); a new Hudi table there "
                "would hide those files. Use an empty folder, or read the files as they are "
                "(SELECT * FROM parquet.`<folder>`)"
            )
    if stmt.columns is None and stmt.as_select is None:
        where = f"there is no Hudi table at {location}" if location else "no LOCATION was given"
        raise SqlError(f"CREATE TABLE {display} needs columns or AS SELECT ({where} to register)")

    df: DataFrame | None = None
    if stmt.as_select is not None:
        df = session.spark.sql(session.views.rewrite(stmt.as_select))
        drop = [c for c in df.columns if c in META_AND_OPERATION]
        if drop:
            df = df.drop(*drop)
        schema: StructType = df.schema
    else:
        assert stmt.columns is not None
        schema = columns_schema(stmt.columns, display)
    names = schema.fieldNames()
    options = create_options(session.options, stmt.options)
    spec = table_spec(options, stmt.partitioned_by, names, display)
    order = reorder_partitions(names, spec.partition_by)
    if df is not None:
        df = df.select(*[_col(c) for c in order])
        schema = df.schema
    else:
        by_name = {f.name: f for f in schema.fields}
        schema = StructType([by_name[c] for c in order])

    properties = dict(options)
    notes = notes_of(schema) if df is None else {}
    if notes:
        properties[COLUMNS_KEY] = encode_column_notes(notes)
    results: list[WriteResult] = []

    def create(loc: str) -> None:
        before = _children(loc)
        try:
            table = Table.create(
                session.spark,
                loc,
                schema,
                record_key=spec.record_key,
                ordering_field=spec.ordering_field,
                partition_by=spec.partition_by,
                table_type=spec.table_type,  # type: ignore[arg-type]
                table_version=spec.table_version,  # type: ignore[arg-type]
                name=name,
                database=db,
                options=spec.options,
            )
            if df is not None:
                results.append(table.write(df, "bulk_insert", options=session.write_options()))
        except BaseException:
            _remove_new(loc, before)
            raise

    catalog.create_table(
        db,
        name,
        create,
        location=location,
        properties=properties,
        if_not_exists=stmt.if_not_exists,
    )
    if results:
        return write_outcome(session.spark, results[0])
    return Outcome()


def create_options(
    session_options: Mapping[str, str], statement_options: Mapping[str, str]
) -> dict[str, str]:
    """The options a CREATE TABLE applies: the statement's, over the session's (``SET``)
    keys that describe a table -- table version and type, record key and ordering fields,
    Hudi table properties -- as Hudi merges ``hoodie.*`` session configs into a new table.
    Partitioning comes from the statement only."""
    from_session: dict[str, str] = {}
    for k, v in session_options.items():
        known = cfg.find_key(k)
        if known is cfg.PARTITION_FIELDS:
            continue
        if (known is not None and known in CONSUMED_KEYS) or cfg.is_table_property(
            known.name if known is not None else k
        ):
            from_session[k] = v
    return cfg.Options(from_session).with_overrides(statement_options).raw


def _col(name: str) -> Any:
    return F.col("`" + name.replace("`", "``") + "`")


def _absolute(location: str) -> str:
    """A local path made absolute (as the catalog stores it); URIs unchanged."""
    if "://" in location or location.startswith("file:"):
        return location.rstrip("/") or location
    return os.path.abspath(os.path.expanduser(location))


# Files that are table data in some format (Spark's file sources, Hudi's base files).
_DATA_SUFFIXES = (".parquet", ".orc", ".avro", ".json", ".jsonl", ".csv", ".tsv", ".xml")
# Folders that make a folder a table of another format (or a damaged Hudi table).
_TABLE_DIRS = (".hoodie", "_delta_log")


def _foreign_data(location: str, limit: int = 5000) -> str | None:
    """The first data file (or table folder) found under ``location``, relative to it;
    None when it holds none (missing, empty, or only other files)."""
    gw = FileSystemGateway(location)
    pending = [""]
    seen = 0
    while pending and seen < limit:
        for entry in gw.list_dir(pending.pop(0)):
            seen += 1
            if entry.is_dir:
                if entry.name in _TABLE_DIRS:
                    return entry.path + "/"
                pending.append(entry.path)
                continue
            base = entry.name.lower()
            for ext in (".gz", ".bz2", ".snappy", ".zst", ".lz4", ".deflate"):
                base = base.removesuffix(ext)
            if base.endswith(_DATA_SUFFIXES):
                return entry.path
    return None


def _children(location: str) -> set[str] | None:
    """Names directly under ``location`` (None when it does not exist)."""
    gw = FileSystemGateway(location)
    if not gw.exists(""):
        return None
    return {e.name for e in gw.list_dir("")}


def _remove_new(location: str, before: set[str] | None) -> None:
    """Delete what a failed CREATE made at ``location``: the whole folder when it did not
    exist (or was empty) before, else only the entries that are new."""
    gw = FileSystemGateway(location)
    for entry in gw.list_dir(""):
        if before and entry.name in before:
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir:
                gw.delete_dir(entry.path)
            else:
                gw.delete_file(entry.path)
    if not before and gw.is_local:
        with contextlib.suppress(OSError):
            os.rmdir(gw.abs_path(""))


def _register(session: SqlContext, stmt: CreateTable, db: str, name: str, location: str) -> Outcome:
    """``CREATE TABLE t USING hudi LOCATION '<existing table>'``: add it to the catalog."""
    display = f"{db}.{name}"
    state = TableState.load(FileSystemGateway(location))
    config = state.config
    _check_matches(stmt, config, display, location)
    properties = dict(stmt.options)
    if stmt.columns:
        declared = columns_schema(stmt.columns, display)
        actual = spark_schema(state.data_schema)
        _check_columns(declared, actual, display, location)
        notes = notes_of(declared)
        if notes:
            properties[COLUMNS_KEY] = encode_column_notes(notes)
    session.catalog.register_table(
        db,
        name,
        location,
        external=True,
        properties=properties,
        if_not_exists=stmt.if_not_exists,
    )
    return Outcome()


def _check_matches(stmt: CreateTable, config: cfg.TableConfig, display: str, loc: str) -> None:
    """Refuse options of a registering CREATE TABLE that contradict the table on disk."""
    opts = cfg.Options(stmt.options)

    def fields(values: Any) -> tuple[str, ...]:
        return tuple(str(v).strip().lower() for v in values or ())

    checks: list[tuple[cfg.ConfigKey, Any, Any, str]] = [
        (cfg.RECORDKEY_FIELDS, fields, config.record_key_fields, "record key fields"),
        (cfg.ORDERING_FIELDS, fields, config.ordering_fields, "ordering fields"),
        (cfg.TABLE_TYPE, str, config.table_type, "table type"),
        (cfg.TABLE_VERSION, int, config.table_version, "table version"),
    ]
    for key, norm, actual, what in checks:
        if not opts.is_set(key):
            continue
        given = opts.get(key)
        if norm(given) != norm(actual):
            raise SqlError(
                f"cannot register {display}: option {_spelling(stmt.options, key)} = "
                f"{opts.get_raw(key)!r} contradicts the Hudi table at {loc} "
                f"(its {what}: {_text(actual)})"
            )
    if stmt.partitioned_by and fields(stmt.partitioned_by) != fields(config.partition_field_names):
        raise SqlError(
            f"cannot register {display}: PARTITIONED BY ({', '.join(stmt.partitioned_by)}) "
            f"contradicts the Hudi table at {loc} (partitioned by "
            f"{_text(config.partition_field_names) or 'nothing'})"
        )


def _spelling(options: Mapping[str, str], key: cfg.ConfigKey) -> str:
    for k in options:
        if cfg.find_key(k) is key:
            return k
    return key.name


def _text(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


def _check_columns(declared: StructType, actual: StructType, display: str, loc: str) -> None:
    """Columns given when registering must be the table's (names case-insensitive, types
    as stored)."""

    def storage(schema: StructType) -> dict[str, pa.DataType]:
        arrow = to_storage_schema(to_arrow_schema(schema, timezone="UTC"))
        return {f.name.lower(): f.type for f in arrow}

    want, have = storage(declared), storage(actual)
    if set(want) != set(have):
        raise SchemaError(
            f"cannot register {display}: the columns given ({', '.join(declared.fieldNames())})"
            f" are not those of the Hudi table at {loc} ({', '.join(actual.fieldNames())})"
        )
    for col, t in want.items():
        if t != have[col]:
            raise SchemaError(
                f"cannot register {display}: column {col!r} is {t} here but {have[col]} in "
                f"the Hudi table at {loc}"
            )


def _create_spark_table(session: SqlContext, stmt: CreateTable, provider: str) -> Outcome:
    """A CREATE TABLE of another provider, re-rendered for Spark."""
    db, name = session.qualify(stmt.name)
    try:
        exists = session.catalog.table_exists(db, name)
    except HudiliteError:  # an invalid or unknown name: Spark decides
        exists = False
    if exists:
        raise TableExistsError(
            f"cannot create {provider} table {db}.{name}: a hudilite table of that name exists"
        )
    parts = ["CREATE TABLE"]
    if stmt.if_not_exists:
        parts.append("IF NOT EXISTS")
    parts.append(sql_name(stmt.name))
    if stmt.columns is not None:
        parts.append("(" + ", ".join(column_text(c) for c in stmt.columns) + ")")
    if stmt.using is not None:
        parts.append(f"USING {stmt.using}")
    if stmt.partitioned_by:
        parts.append(
            "PARTITIONED BY (" + ", ".join(quote_identifier(p) for p in stmt.partitioned_by) + ")"
        )
    if stmt.location is not None:
        parts.append(f"LOCATION {sql_string(stmt.location)}")
    if stmt.options:
        kind = "OPTIONS" if provider.lower() in _FILE_SOURCES else "TBLPROPERTIES"
        body = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in stmt.options.items())
        parts.append(f"{kind} ({body})")
    if stmt.as_select is not None:
        parts.append("AS " + session.views.rewrite(stmt.as_select))
    return Outcome(session.spark.sql(" ".join(parts)))


def column_text(c: Column) -> str:
    out = f"{quote_identifier(c.name)} {c.type}"
    if not c.nullable:
        out += " NOT NULL"
    if c.comment is not None:
        out += f" COMMENT {sql_string(c.comment)}"
    return out
