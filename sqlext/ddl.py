"""DDL over the warehouse catalog: CREATE DATABASE, DROP DATABASE|TABLE,
ALTER TABLE (ADD COLUMNS, SET TBLPROPERTIES, RENAME TO, DROP PARTITION) and TRUNCATE TABLE,
behaving as Spark SQL with Hudi does. The SHOW and DESCRIBE statements live in
:mod:`ddl_show`, CREATE TABLE in :mod:`ddl_create`; this module's :data:`HANDLERS` holds
all of them.

``DROP TABLE`` deletes a managed table's data (an external one keeps it unless
``PURGE``) and the session's views of it. ``ALTER TABLE a RENAME TO b`` renames the entry
and ``hoodie.table.name``; the data folder of a managed table stays where it is (no
copy on object stores, no moving a folder under a concurrent reader), so a new managed
table named ``a`` cannot be created until the old folder is gone -- the catalog names the
folder in that error. Tables cannot move between databases.

``ALTER TABLE t DROP PARTITION (c='v', ...)`` renders the spec with the table's key
generator (hive style, several fields in order, URL-encoding) and commits Hudi's
DELETE_PARTITION; a spec naming some of the partition columns drops every live
partition matching it. ``TRUNCATE TABLE`` is a DELETE_PARTITION of every partition (time
travel keeps working). Both return the write's metrics.

``CREATE DATABASE ... LOCATION`` is refused: the catalog keeps every database's managed
tables under ``<warehouse>/<db>.db``.
"""

from __future__ import annotations

import re
from typing import Any

from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import (
    PartitionNotFoundError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)
from hudilite.services.schema_evolution import SAFE_PROMOTIONS, change_column_type
from hudilite.spark.convert import spark_schema
from hudilite.table.api import Table

from . import ddl_show
from .context import Handler, Outcome, SqlContext, write_outcome
from .ddl_common import (
    COLUMNS_KEY,
    INTERNAL_PREFIX,
    ColumnNote,
    columns_schema,
    decode_column_notes,
    encode_column_notes,
    notes_of,
    parse_type,
    partitions_for_spec,
    quote_identifier,
    resolve_column,
    spec_text,
    sql_string,
)
from .ddl_create import HUDI_PROVIDERS, column_text, create_options, create_table
from .ddl_show import hudilite_table, spark_fallback, sql_name
from .queries import VIEW_PREFIX
from .statements import (
    AlterTableAddColumns,
    AlterTableChangeColumns,
    AlterTableDropPartition,
    AlterTableRename,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    CreateDatabase,
    CreateTable,
    DropDatabase,
    DropTable,
    IndexStatement,
    SqlError,
    TableName,
    TruncateTable,
    UnsupportedStatementError,
)

__all__ = ["HANDLERS", "HUDI_PROVIDERS", "create_options"]

# --------------------------------------------------------------------------------------------
# CREATE DATABASE, DROP TABLE


def _create_database(session: SqlContext, stmt: CreateDatabase) -> Outcome:
    session.catalog.create_database(
        stmt.name, if_not_exists=stmt.if_not_exists, location=stmt.location
    )
    return Outcome()


def _drop_database(session: SqlContext, stmt: DropDatabase) -> Outcome:
    """``DROP DATABASE [IF EXISTS] db [CASCADE]``: with CASCADE its tables go too (managed
    tables with their data); a non-empty database without CASCADE is an error."""
    db = stmt.name.lower()
    tables = session.catalog.list_tables(db) if session.catalog.database_exists(db) else []
    session.catalog.drop_database(db, stmt.cascade, if_exists=stmt.if_exists)
    for table in tables:
        _drop_views(session, db, table)
    if session.current_database == db:
        session.current_database = "default"
    return Outcome()


def _drop_views(session: SqlContext, db: str, table: str) -> None:
    """Drop the views this session registered for ``db.table``."""
    prefix = f"{VIEW_PREFIX}{db}__{table}__"
    # A name pattern lets Spark skip the other views (listing them all costs a Py4J object
    # each); Spark patterns only know `*` and `|`, so other names take the full listing.
    pattern = f"{prefix}*" if re.fullmatch(r"\w+", prefix) else None
    for t in session.spark.catalog.listTables(pattern=pattern):
        if t.isTemporary and t.name.startswith(prefix):
            session.spark.catalog.dropTempView(t.name)


def _drop_table(session: SqlContext, stmt: DropTable) -> Outcome:
    db, name = session.qualify(stmt.name)
    if not session.is_hudilite(stmt.name):
        sql = (
            f"DROP TABLE {'IF EXISTS ' if stmt.if_exists else ''}{sql_name(stmt.name)}"
            f"{' PURGE' if stmt.purge else ''}"
        )
        try:
            done = spark_fallback(session, stmt.name, sql)
        except (TableNotFoundError, DatabaseNotFoundError):
            if stmt.if_exists:
                return Outcome()
            raise
        if done is not None:
            return done
    try:
        session.catalog.drop_table(db, name, purge=stmt.purge, if_exists=stmt.if_exists)
    except DatabaseNotFoundError:
        if stmt.if_exists:
            return Outcome()
        raise TableNotFoundError(
            f"table {db}.{name} not found: database {db} does not exist"
        ) from None
    except TableNotFoundError:
        raise TableNotFoundError(f"table {db}.{name} not found") from None
    _drop_views(session, db, name)
    return Outcome()


# --------------------------------------------------------------------------------------------
# ALTER TABLE, TRUNCATE


def _table(session: SqlContext, name: TableName, sql: str) -> tuple[Outcome | None, Any]:
    """``(spark outcome, None)`` for a Spark table or view, else ``(None, (entry, Table))``."""
    done, found = hudilite_table(session, name, sql)
    if done is not None:
        return done, None
    entry, _ = found
    return None, (entry, Table.load(session.spark, entry.location))


def _add_columns(session: SqlContext, stmt: AlterTableAddColumns) -> Outcome:
    cols = ", ".join(column_text(c) for c in stmt.columns)
    done, found = _table(
        session, stmt.name, f"ALTER TABLE {sql_name(stmt.name)} ADD COLUMNS ({cols})"
    )
    if done is not None:
        return done
    entry, table = found
    display = entry.qualified_name
    new = columns_schema(stmt.columns, display)
    for f in new.fields:
        if not f.nullable:
            raise SchemaError(
                f"cannot add column {f.name!r} to {display} as NOT NULL: the rows already "
                "stored have no value for it"
            )
    existing = {f.name.lower() for f in table.schema}
    for f in new.fields:
        if f.name.lower() in existing:
            raise SchemaError(f"column {f.name!r} already exists in {display}")
    result = table.add_columns(new, options=session.write_options())
    added = notes_of(new)
    if added:
        notes: dict[str, ColumnNote] = dict(decode_column_notes(entry.properties))
        notes.update(added)
        session.catalog.update_properties(
            entry.database, entry.name, {COLUMNS_KEY: encode_column_notes(notes)}
        )
    return Outcome(write=result)


def _set_properties(session: SqlContext, stmt: AlterTableSetProperties) -> Outcome:
    body = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in stmt.properties.items())
    sql = f"ALTER TABLE {sql_name(stmt.name)} SET TBLPROPERTIES ({body})"
    done, found = _table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, table = found
    internal = [k for k in stmt.properties if k.startswith(INTERNAL_PREFIX)]
    if internal:
        raise SqlError(f"table property {internal[0]!r} is reserved for hudilite")
    table.set_properties(stmt.properties)  # refuses fixed keys before writing anything
    session.catalog.update_properties(entry.database, entry.name, stmt.properties)
    return Outcome()


def _unset_properties(session: SqlContext, stmt: AlterTableUnsetProperties) -> Outcome:
    keys = ", ".join(sql_string(k) for k in stmt.keys)
    exists = "IF EXISTS " if stmt.if_exists else ""
    sql = f"ALTER TABLE {sql_name(stmt.name)} UNSET TBLPROPERTIES {exists}({keys})"
    done, found = _table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, table = found
    if not stmt.if_exists:
        present = {k.lower() for k in table.properties()} | {k.lower() for k in entry.properties}
        missing = [k for k in stmt.keys if k.lower() not in present]
        if missing:
            raise SqlError(
                f"cannot unset table property {missing[0]!r} of {entry.qualified_name}: "
                "it is not set (use UNSET TBLPROPERTIES IF EXISTS)"
            )
    table.unset_properties(stmt.keys)  # refuses fixed keys before writing anything
    session.catalog.update_properties(entry.database, entry.name, dict.fromkeys(stmt.keys))
    return Outcome()


def _rename(session: SqlContext, stmt: AlterTableRename) -> Outcome:
    new = stmt.new_name
    sql = f"ALTER TABLE {sql_name(stmt.name)} RENAME TO {sql_name(new)}"
    done, found = _table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, table = found
    new_db = (new.db or entry.database).lower()
    new_name = new.table.lower()
    if new_db != entry.database:
        raise SqlError(
            f"cannot rename {entry.qualified_name} to {new_db}.{new_name}: a table cannot "
            "move to another database"
        )
    if new_name == entry.name:
        return Outcome()
    if session.catalog.table_exists(new_db, new_name):
        raise TableExistsError(f"table {new_db}.{new_name} already exists")
    session.catalog.rename_table(entry.database, entry.name, new_name)
    try:
        table.rename(new_name)
    except BaseException:
        session.catalog.rename_table(entry.database, new_name, entry.name)
        raise
    _drop_views(session, entry.database, entry.name)
    return Outcome()


SCHEMA_ON_READ_KEY = "hoodie.schema.on.read.enable"

# Hudi's type promotions on write (schema evolution without schema on read): a column may
# only widen, so every value already stored reads back unchanged.
_PROMOTIONS: dict[str, set[str]] = {
    "tinyint": {"smallint", "int", "bigint", "float", "double", "string", "decimal"},
    "smallint": {"int", "bigint", "float", "double", "string", "decimal"},
    "int": {"bigint", "float", "double", "string", "decimal"},
    "bigint": {"float", "double", "string", "decimal"},
    "float": {"double", "string", "decimal"},
    "double": {"string", "decimal"},
    "binary": {"string"},
    "string": {"binary"},
    "date": {"string"},
    "decimal": {"decimal", "string"},
}


# Spark type -> the Avro primitive a Hudi schema stores it as.
_AVRO_TYPES = {"int": "int", "bigint": "long", "float": "float", "double": "double"}


def _type_family(type_text: str) -> str:
    return type_text.split("(", 1)[0].strip().lower()


def _change_columns(session: SqlContext, stmt: AlterTableChangeColumns) -> Outcome:
    """``ALTER TABLE ... DROP COLUMN(S) / RENAME COLUMN / ALTER|CHANGE COLUMN ... TYPE``.

    Hudi allows dropping and renaming columns only with schema on read
    (``hoodie.schema.on.read.enable=true``: an internal schema with column ids, so old
    files map to new names), which hudilite does not implement; both are refused naming
    the rule. A type change to the column's own type is a no-op; int -> bigint, int ->
    double and float -> double commit the promoted schema (ALTER_SCHEMA, nothing rewritten:
    readers widen the old files' values); a narrowing change is refused by Hudi's rule
    (only widening promotions), other widenings because Spark's Parquet reader cannot
    read the old files as the new type.
    """
    name = sql_name(stmt.name)
    cols = ", ".join(quote_identifier(c) for c in stmt.columns)
    if stmt.action == "drop":
        sql = f"ALTER TABLE {name} DROP COLUMNS ({cols})"
    elif stmt.action == "rename":
        sql = f"ALTER TABLE {name} RENAME COLUMN {cols} TO {quote_identifier(stmt.new_name or '')}"
    else:
        sql = f"ALTER TABLE {name} ALTER COLUMN {cols} TYPE {stmt.new_type}"
    done, found = _table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, table = found
    display = entry.qualified_name
    state = table.state()
    schema = spark_schema(state.data_schema)
    names = schema.fieldNames()
    resolved = [resolve_column(c, names, "column", display) for c in stmt.columns]
    config = state.config
    fixed = {
        c.lower(): role
        for role, fields in (
            ("record key", config.record_key_fields),
            ("partition", config.partition_field_names),
            ("ordering", config.ordering_fields),
        )
        for c in fields
    }
    for c in resolved:
        if c.lower() in fixed:
            raise SchemaError(
                f"cannot change column {c!r} of {display}: it is the table's {fixed[c.lower()]} "
                "field, fixed when the table was created"
            )
    if stmt.action in ("drop", "rename"):
        verb = "DROP COLUMN" if stmt.action == "drop" else "RENAME COLUMN"
        enabled = any(
            k.lower() == SCHEMA_ON_READ_KEY and v.strip().lower() == "true"
            for k, v in {**state.options().raw, **session.write_options()}.items()
        )
        rule = (
            f"Hudi allows {verb} only with schema on read ({SCHEMA_ON_READ_KEY}=true), "
            "whose internal schema maps old files to the new columns"
        )
        if enabled:
            rule = f"{SCHEMA_ON_READ_KEY}=true asks for schema on read"
        raise UnsupportedStatementError(
            f"ALTER TABLE {display} {verb} {', '.join(resolved)} is not supported: {rule}, "
            "and hudilite does not implement schema on read (rewrite the table with "
            "CREATE TABLE ... AS SELECT to change its columns)"
        )
    field = next(f for f in schema.fields if f.name == resolved[0])
    old = field.dataType.simpleString()
    new = parse_type(stmt.new_type or "", resolved[0]).simpleString()
    if new == old:
        return Outcome()
    if _type_family(new) not in _PROMOTIONS.get(_type_family(old), set()):
        raise SchemaError(
            f"cannot change column {resolved[0]!r} of {display} from {old} to {new}: Hudi's "
            "schema evolution allows only widening type promotions (int -> bigint -> float "
            "-> double, numbers -> string, binary <-> string, wider decimals), so that every "
            "stored value reads back unchanged"
        )
    promotion = (_AVRO_TYPES.get(old), _AVRO_TYPES.get(new))
    if promotion in SAFE_PROMOTIONS:
        result = change_column_type(state, resolved[0], str(promotion[1]), session.write_options())
        return Outcome(write=result)
    raise UnsupportedStatementError(
        f"ALTER TABLE {display} ALTER COLUMN {resolved[0]} TYPE {new} is not supported yet: "
        f"Hudi allows promoting {old} to {new}, but Spark's Parquet reader does not read "
        f"files written with {old} as {new} (hudilite promotes int -> bigint, int -> double "
        f"and float -> double; rewrite the table with CREATE TABLE ... AS SELECT "
        f"CAST({resolved[0]} AS {new}) ...)"
    )


def _drop_partition(session: SqlContext, stmt: AlterTableDropPartition) -> Outcome:
    sql = (
        f"ALTER TABLE {sql_name(stmt.name)} DROP {'IF EXISTS ' if stmt.if_exists else ''}"
        f"PARTITION {spec_text(stmt.spec)}"
    )
    done, found = _table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, table = found
    display = entry.qualified_name
    state = table.state()
    if not state.config.is_partitioned:
        raise SqlError(
            f"ALTER TABLE DROP PARTITION is not allowed on a table that is not partitioned: "
            f"{display}"
        )
    tz = session.spark.conf.get("spark.sql.session.timeZone", "UTC") or "UTC"
    paths, rendered = partitions_for_spec(state, stmt.spec, display, tz)
    if not paths:
        if stmt.if_exists:
            return Outcome()
        shown = f" (path {rendered!r})" if rendered is not None else ""
        raise PartitionNotFoundError(
            f"partition {spec_text(stmt.spec)}{shown} not found in table {display}"
        )
    result = table.delete_partitions(paths, options=session.write_options())
    return write_outcome(session.spark, result)


def _truncate(session: SqlContext, stmt: TruncateTable) -> Outcome:
    done, found = _table(session, stmt.name, f"TRUNCATE TABLE {sql_name(stmt.name)}")
    if done is not None:
        return done
    _, table = found
    return write_outcome(session.spark, table.truncate(options=session.write_options()))


def _index_statement(session: SqlContext, stmt: IndexStatement) -> Outcome:
    """Hudi 1.x's indexes live in the metadata table, which hudilite does not write yet."""
    on = sql_name(stmt.table)
    what = f"{stmt.statement} {stmt.index} ON {on}" if stmt.index else f"{stmt.statement} FROM {on}"
    raise UnsupportedStatementError(
        f"{stmt.statement} is not supported yet: hudilite does not build Hudi 1.x indexes "
        f"over the metadata table ({what}); the writer's index is chosen with "
        "hoodie.index.type"
    )


HANDLERS: dict[type, Handler] = {
    CreateTable: create_table,
    IndexStatement: _index_statement,
    CreateDatabase: _create_database,
    DropDatabase: _drop_database,
    DropTable: _drop_table,
    AlterTableAddColumns: _add_columns,
    AlterTableSetProperties: _set_properties,
    AlterTableUnsetProperties: _unset_properties,
    AlterTableRename: _rename,
    AlterTableDropPartition: _drop_partition,
    AlterTableChangeColumns: _change_columns,
    TruncateTable: _truncate,
    **ddl_show.HANDLERS,
}
