"""Statements that describe the warehouse: SHOW DATABASES|TABLES|PARTITIONS|CREATE TABLE and
DESCRIBE [EXTENDED], with the rows Spark SQL (with Hudi) returns.

* ``SHOW DATABASES`` -- column ``namespace``: the warehouse's databases.
* ``SHOW TABLES [IN db] [LIKE 'p']`` -- ``namespace, tableName, isTemporary``: the
  hudilite tables of the database with ``t_ro``/``t_rt`` for merge-on-read tables and the
  persistent views, sorted, then the session's temporary views (namespace ``""``), as Spark
  lists them; the views hudilite registers for queries are not listed.
* ``DESCRIBE [EXTENDED] t`` -- ``col_name, data_type, comment``: Hudi's meta columns first
  (Hudi's catalog schema holds them), then the data columns with Spark's type names
  (``bigint``, ``decimal(10,5)``, ``array<struct<a:string>>``) as a query reads them, then
  ``# Partition Information``; EXTENDED adds ``# Detailed Table Information``.
* ``SHOW CREATE TABLE t`` -- ``createtab_stmt``: a CREATE TABLE that recreates an equivalent
  table (the key, ordering and type options rendered from the table itself, the other
  options as they were given; ``LOCATION`` only for external tables, as Spark does).
* ``SHOW PARTITIONS t`` -- ``partition``: every partition path with live file groups,
  as stored (``city=sf`` for hive-style tables).
* ``SHOW TBLPROPERTIES t [(key)]`` -- ``key, value``: the options SHOW CREATE TABLE renders,
  then ``hoodie.properties`` and the table's write defaults, sorted by key; with a key,
  its value or Spark's "does not have property" text.
* ``DESCRIBE HISTORY t [LIMIT n]`` -- the timeline as rows, newest first, as Delta's
  history lists versions: ``version`` (the instant time, what ``TIMESTAMP AS OF`` and
  ``VERSION AS OF`` take), ``completion_time``, ``action``, ``operation`` (the commit's
  operation type, e.g. ``UPSERT``, or the action), ``state`` and ``operationMetrics``.

The render functions are pure (no JVM) and unit-tested; the handlers read the catalog
entry and the table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.types import StructField, StructType

from hudilite import config as cfg
from hudilite.catalog import DatabaseNotFoundError
from hudilite.errors import HudiliteError
from hudilite.procedures.commits import transition_time
from hudilite.spark.convert import spark_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState

from .context import Handler, Outcome, SqlContext
from .ddl_common import (
    CONSUMED_KEYS,
    META_AND_OPERATION,
    column_sql,
    decode_column_notes,
    live_partitions,
    quote_identifier,
    sql_string,
    visible_properties,
    with_notes,
)
from .queries import VIEW_PREFIX
from .spark_types import parse_type
from .statements import (
    Describe,
    DescribeHistory,
    ShowColumns,
    ShowCreateTable,
    ShowDatabases,
    ShowPartitions,
    ShowTableExtended,
    ShowTables,
    ShowTblProperties,
    SqlError,
    TableName,
)

if TYPE_CHECKING:
    from hudilite.catalog.warehouse import TableEntry


__all__ = [
    "DESCRIBE_SCHEMA",
    "HANDLERS",
    "DescribeDetail",
    "create_table_properties",
    "describe_rows",
    "render_create_table",
    "spark_fallback",
]

DESCRIBE_SCHEMA = "col_name string, data_type string, comment string"
DescribeRow = tuple[str, str, str | None]

# --------------------------------------------------------------------------------------------
# pure rendering


@dataclass(frozen=True)
class DescribeDetail:
    """The ``# Detailed Table Information`` of DESCRIBE EXTENDED."""

    database: str
    table: str
    external: bool
    location: str
    table_type: str
    table_version: int
    record_key: Sequence[str]
    ordering: Sequence[str]
    properties: Mapping[str, str]


def describe_rows(
    schema: StructType,
    partition_fields: Sequence[str],
    detail: DescribeDetail | None = None,
) -> list[DescribeRow]:
    """DESCRIBE's rows: every column of ``schema`` (``simpleString`` types, comments from
    field metadata), Spark's partition section when ``partition_fields``, and the detailed
    section when ``detail`` (DESCRIBE EXTENDED)."""

    def comment(f: StructField) -> str | None:
        value = (f.metadata or {}).get("comment")
        return None if value is None else str(value)

    rows: list[DescribeRow] = [(f.name, f.dataType.simpleString(), comment(f)) for f in schema]
    if partition_fields:
        by_name = {f.name.lower(): f for f in schema}
        rows.append(("# Partition Information", "", ""))
        rows.append(("# col_name", "data_type", "comment"))
        for p in partition_fields:
            f = by_name.get(p.lower())
            rows.append(
                (p, f.dataType.simpleString() if f else "string", comment(f) if f else None)
            )
    if detail is not None:
        props = ", ".join(f"{k}={v}" for k, v in sorted(detail.properties.items()))
        rows += [
            ("", "", ""),
            ("# Detailed Table Information", "", ""),
            ("Database", detail.database, ""),
            ("Table", detail.table, ""),
            ("Type", "EXTERNAL" if detail.external else "MANAGED", ""),
            ("Provider", "hudi", ""),
            ("Location", detail.location, ""),
            ("Table Type", detail.table_type, ""),
            ("Table Version", str(detail.table_version), ""),
            ("Primary Key", ",".join(detail.record_key), ""),
            ("Ordering Fields", ",".join(detail.ordering), ""),
            ("Table Properties", f"[{props}]", ""),
        ]
    return rows


def create_table_properties(config: cfg.TableConfig, recorded: Mapping[str, str]) -> dict[str, str]:
    """The TBLPROPERTIES of SHOW CREATE TABLE.

    The table's own config decides the key, type and layout options (``type``,
    ``primaryKey``, ``preCombineField``, ``hoodie.write.table.version`` when not 6,
    hive style/URL encoding/key generator/merge semantics when they differ from what a
    SQL CREATE TABLE picks by default); then the options recorded at create time (and
    ``SET TBLPROPERTIES``) as given, except other spellings of the keys above.
    """
    out: dict[str, str] = {"type": "mor" if config.is_mor else "cow"}
    if config.record_key_fields:  # none: a keyless table (generated keys) has no primaryKey
        out["primaryKey"] = ",".join(config.record_key_fields)
    if config.ordering_fields:
        out["preCombineField"] = ",".join(config.ordering_fields)
    if config.table_version != 6:
        out[cfg.TABLE_VERSION.name] = str(config.table_version)
    parts = config.partition_field_names
    if parts and not config.hive_style:
        out[cfg.HIVE_STYLE.name] = "false"
    if config.url_encode:
        out[cfg.URL_ENCODE.name] = "true"
    if config.keygen_type != cfg.infer_keygen_type(config.record_key_fields, parts):
        out[cfg.KEYGEN_TYPE.name] = config.keygen_type
        if any(":" in p for p in config.partition_fields):
            out[cfg.PARTITION_FIELDS.name] = ",".join(config.partition_fields)
    for k, v in config.props.items():
        if k.startswith("hoodie.keygen."):
            out[k] = v
    default_mode = cfg.EVENT_TIME_ORDERING if config.ordering_fields else cfg.COMMIT_TIME_ORDERING
    if config.table_version >= 8 and config.merge_mode != default_mode:
        out["recordMergeMode"] = config.merge_mode
    if config.table_version < 9:
        payload = config.payload_class or cfg.payload_for_merge_mode(config.merge_mode)
        if payload and payload != cfg.payload_for_merge_mode(default_mode):
            out["payloadClass"] = payload
    elif config.props.get(cfg.LEGACY_PAYLOAD_CLASS.name) or config.payload_class:
        # Creating a v9 table with the payload records the same merge mode, partial update
        # mode, merge properties and legacy payload class (Hudi 1.1's migration).
        out["payloadClass"] = (
            config.props.get(cfg.LEGACY_PAYLOAD_CLASS.name) or config.payload_class or ""
        )

    def same_key(a: str, b: str) -> bool:
        ka, kb = cfg.find_key(a), cfg.find_key(b)
        return a.lower() == b.lower() or (ka is not None and ka is kb)

    for k, v in visible_properties(recorded).items():
        known = cfg.find_key(k)
        if known is not None and known in CONSUMED_KEYS:
            continue
        if any(same_key(k, present) for present in out):
            continue
        out[k] = v
    return out


def render_create_table(
    qualified_name: str,
    schema: StructType,
    partition_fields: Sequence[str],
    location: str | None,
    properties: Mapping[str, str],
) -> str:
    """SHOW CREATE TABLE's text, laid out as Spark prints it."""
    cols = ",\n".join(f"  {column_sql(f)}" for f in schema)
    lines = [f"CREATE TABLE {qualified_name} (\n{cols})", "USING hudi"]
    if partition_fields:
        lines.append(f"PARTITIONED BY ({', '.join(quote_identifier(p) for p in partition_fields)})")
    if location is not None:
        lines.append(f"LOCATION {sql_string(location)}")
    if properties:
        props = ",\n".join(f"  {sql_string(k)} = {sql_string(v)}" for k, v in properties.items())
        lines.append(f"TBLPROPERTIES (\n{props})")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# shared by the handlers


def spark_fallback(session: SqlContext, name: TableName, sql: str) -> Outcome | None:
    """Run ``sql`` in Spark when ``name`` is not a hudilite table but a Spark temporary view
    or table; None when ``name`` is a hudilite table. :class:`TableNotFoundError` naming
    ``db.t`` when it is neither."""
    if session.is_hudilite(name):
        return None
    if name.db is None and session.is_temp_view(name.table):
        return Outcome(session.spark.sql(sql))
    db, table = session.qualify(name)
    try:
        is_view = session.catalog.database_exists(db) and session.catalog.view_exists(db, table)
    except HudiliteError:  # not a catalog name
        is_view = False
    if is_view:
        verb = " ".join(sql.split()[:2]).upper()
        raise SqlError(
            f"[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] '{verb}' expects a table but "
            f"`{db}`.`{table}` is a view."
        )
    qualified = f"{name.db}.{name.table}" if name.db else name.table
    try:
        exists = session.spark.catalog.tableExists(qualified)
    except Exception:  # an unknown database: not found either
        exists = False
    if exists and not name.table.startswith(VIEW_PREFIX):
        return Outcome(session.spark.sql(sql))
    session.entry(name)  # raises TableNotFoundError naming db.t
    return None


def sql_name(name: TableName) -> str:
    """``name`` as SQL text."""
    parts = [name.db, name.table] if name.db else [name.table]
    return ".".join(quote_identifier(p) for p in parts)


def hudilite_table(session: SqlContext, name: TableName, sql: str) -> tuple[Outcome | None, Any]:
    """``(spark outcome, None)`` for a Spark table or view, else ``(None, (entry, state))``."""
    done = spark_fallback(session, name, sql)
    if done is not None:
        return done, None
    entry = session.entry(name)
    return None, (entry, TableState.load(FileSystemGateway(entry.location)))


def table_columns(entry: TableEntry, state: TableState, *, meta: bool) -> StructType:
    """The table's columns as Spark types (as a query reads them) with the catalog's notes."""
    arrow = state.storage_schema if meta else state.data_schema
    schema = spark_schema(arrow)
    return with_notes(schema, decode_column_notes(entry.properties))


# --------------------------------------------------------------------------------------------
# handlers


def _show_databases(session: SqlContext, stmt: ShowDatabases) -> Outcome:
    rows = [(db,) for db in session.catalog.list_databases()]
    return Outcome(session.spark.createDataFrame(rows, "namespace string"))


def like_matcher(pattern: str | None) -> re.Pattern[str]:
    """Spark's ``SHOW TABLES|VIEWS LIKE`` pattern: ``*`` any characters, ``|`` between
    alternatives, case-insensitive; None matches everything."""
    if pattern is None:
        return re.compile(".*", re.S)
    alternatives = [
        ".*".join(re.escape(p) for p in alt.strip().split("*")) for alt in pattern.split("|")
    ]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.I | re.S)


def user_temp_views(session: SqlContext) -> list[str]:
    """The session's temporary views, sorted (not those hudilite registers for queries)."""
    return sorted(
        t.name
        for t in session.spark.catalog.listTables()
        if t.isTemporary and not t.name.startswith(VIEW_PREFIX)
    )


def catalog_relations(session: SqlContext, db: str) -> list[str]:
    """What SHOW TABLES lists of a database, sorted: its tables, ``t_ro`` and ``t_rt`` for
    each merge-on-read table ``t`` (as Hudi's Hive sync registers them), and its views."""
    names = []
    for t in session.catalog.list_tables(db):
        names.append(t)
        try:
            mor = session.catalog.table_config(db, t).is_mor
        except HudiliteError:  # a damaged or vanished table still lists under its name
            mor = False
        if mor:
            names += [f"{t}_ro", f"{t}_rt"]
    return sorted(names + session.catalog.list_views(db))


_SHOW_TABLES_SCHEMA = "namespace string, tableName string, isTemporary boolean"


def _show_tables(session: SqlContext, stmt: ShowTables) -> Outcome:
    rows = _table_rows(session, stmt.db, stmt.like)
    return Outcome(session.spark.createDataFrame(rows, _SHOW_TABLES_SCHEMA))


def _show_table_extended(session: SqlContext, stmt: ShowTableExtended) -> Outcome:
    # Hue and BI tools list a database's tables with it.
    rows = [
        (*row, relation_information(session, *row))
        for row in _table_rows(session, stmt.db, stmt.like)
    ]
    schema = _SHOW_TABLES_SCHEMA + ", information string"
    return Outcome(session.spark.createDataFrame(rows, schema))


def _table_rows(
    session: SqlContext, db_name: str | None, like: str | None
) -> list[tuple[str, str, bool]]:
    db = (db_name or session.current_database).lower()
    if not session.catalog.database_exists(db):
        raise DatabaseNotFoundError(f"database {db} does not exist")
    match = like_matcher(like)
    rows = [(db, t, False) for t in catalog_relations(session, db) if match.match(t)]
    return rows + [("", v, True) for v in user_temp_views(session) if match.match(v)]


def relation_information(session: SqlContext, db: str, name: str, temporary: bool) -> str:
    """``SHOW TABLE EXTENDED``'s ``information`` of a relation: Spark's ``Key: value``
    lines, ending with the schema tree."""
    if temporary:
        schema = session.spark.table(quote_identifier(name)).schema
        return f"Table: {name}\nType: VIEW\nSchema: {schema.treeString()}"
    lines = [f"Database: {db}", f"Table: {name}"]
    if session.catalog.view_exists(db, name):
        view = session.catalog.get_view(db, name)
        fields = [StructField(c.name, parse_type(c.data_type, c.name)) for c in view.columns]
        lines += ["Type: VIEW", f"View Text: {view.sql}", "Schema: "]
        return "\n".join(lines) + StructType(fields).treeString()
    table, query_type = name, ""
    if not session.catalog.table_exists(db, name) and name[-3:] in ("_ro", "_rt"):
        table, query_type = name[:-3], name[-2:]  # the views of a merge-on-read table
    entry = session.catalog.get_table(db, table)
    state = TableState.load(FileSystemGateway(entry.location))
    config = state.config
    props = ", ".join(
        f"{k}={v}" for k, v in create_table_properties(config, entry.properties).items()
    )
    lines += [
        f"Type: {'EXTERNAL' if entry.external else 'MANAGED'}",
        "Provider: hudi",
        f"Table Properties: [{props}]",
        f"Location: {entry.location}",
    ]
    if query_type:
        lines.append(f"Hudi Query Type: {'read_optimized' if query_type == 'ro' else 'snapshot'}")
    if config.partition_field_names:
        names = ", ".join(f"`{p}`" for p in config.partition_field_names)
        lines.append(f"Partition Columns: [{names}]")
    lines.append("Schema: ")
    return "\n".join(lines) + table_columns(entry, state, meta=True).treeString()


def _show_columns(session: SqlContext, stmt: ShowColumns) -> Outcome:
    db, table = session.qualify(stmt.name)
    if session.catalog.database_exists(db) and session.catalog.view_exists(db, table):
        rows = [(c.name,) for c in session.catalog.get_view(db, table).columns]
        return Outcome(session.spark.createDataFrame(rows, "col_name string"))
    done, found = hudilite_table(session, stmt.name, f"SHOW COLUMNS IN {sql_name(stmt.name)}")
    if done is not None:
        return done
    entry, state = found
    rows = [(f.name,) for f in table_columns(entry, state, meta=True).fields]
    return Outcome(session.spark.createDataFrame(rows, "col_name string"))


def _describe(session: SqlContext, stmt: Describe) -> Outcome:
    sql = f"DESCRIBE {'EXTENDED ' if stmt.extended else ''}{sql_name(stmt.name)}"
    done, found = hudilite_table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, state = found
    config = state.config
    detail = None
    if stmt.extended:
        detail = DescribeDetail(
            database=entry.database,
            table=entry.name,
            external=entry.external,
            location=entry.location,
            table_type=config.table_type,
            table_version=config.table_version,
            record_key=config.record_key_fields,
            ordering=config.ordering_fields,
            properties=visible_properties(entry.properties),
        )
    rows = describe_rows(
        table_columns(entry, state, meta=True), config.partition_field_names, detail
    )
    return Outcome(session.spark.createDataFrame(rows, DESCRIBE_SCHEMA))


def _show_create_table(session: SqlContext, stmt: ShowCreateTable) -> Outcome:
    done, found = hudilite_table(session, stmt.name, f"SHOW CREATE TABLE {sql_name(stmt.name)}")
    if done is not None:
        return done
    entry, state = found
    config = state.config
    schema = StructType(
        [f for f in table_columns(entry, state, meta=False) if f.name not in META_AND_OPERATION]
    )
    text = render_create_table(
        f"{quote_identifier(entry.database)}.{quote_identifier(entry.name)}",
        schema,
        config.partition_field_names,
        entry.location if entry.external else None,
        create_table_properties(config, entry.properties),
    )
    return Outcome(session.spark.createDataFrame([(text,)], "createtab_stmt string"))


def _show_partitions(session: SqlContext, stmt: ShowPartitions) -> Outcome:
    done, found = hudilite_table(session, stmt.name, f"SHOW PARTITIONS {sql_name(stmt.name)}")
    if done is not None:
        return done
    entry, state = found
    if not state.config.is_partitioned:
        raise SqlError(
            "SHOW PARTITIONS is not allowed on a table that is not partitioned: "
            f"{entry.qualified_name}"
        )
    rows = [(p,) for p in live_partitions(state)]
    return Outcome(session.spark.createDataFrame(rows, "partition string"))


def _show_tblproperties(session: SqlContext, stmt: ShowTblProperties) -> Outcome:
    key = f" ({sql_string(stmt.key)})" if stmt.key is not None else ""
    sql = f"SHOW TBLPROPERTIES {sql_name(stmt.name)}{key}"
    done, found = hudilite_table(session, stmt.name, sql)
    if done is not None:
        return done
    entry, state = found
    props = dict(create_table_properties(state.config, entry.properties))
    for k, v in state.options().raw.items():
        props.setdefault(k, v)
    if stmt.key is None:
        rows = sorted(props.items())
    elif stmt.key in props:
        rows = [(stmt.key, props[stmt.key])]
    else:
        folded = {k.lower(): v for k, v in props.items()}
        value = folded.get(
            stmt.key.lower(),
            f"Table {entry.qualified_name} does not have property: {stmt.key}",
        )
        rows = [(stmt.key, value)]
    return Outcome(session.spark.createDataFrame(rows, "key string, value string"))


HISTORY_SCHEMA = (
    "version string, completion_time string, action string, operation string, "
    "state string, operationMetrics map<string,string>"
)


def history_rows(state: TableState, limit: int | None = None) -> list[tuple[Any, ...]]:
    """``DESCRIBE HISTORY``'s rows: every instant of the active timeline, newest first."""
    instants = sorted(state.timeline.instants, key=lambda i: i.requested_time, reverse=True)
    rows: list[tuple[Any, ...]] = []
    for inst in instants[:limit] if limit is not None else instants:
        operation = inst.action.upper()
        metrics: dict[str, str] = {}
        if inst.is_completed and inst.action in _WRITE_ACTIONS:
            meta = state.timeline.commit_metadata(inst)
            operation = meta.operation_type
            stats = meta.write_stats()
            metrics = {
                "numFiles": str(len(stats)),
                "numPartitions": str(len(meta.partition_to_write_stats)),
                "numOutputRows": str(sum(st.num_writes for st in stats)),
                "numInsertedRows": str(sum(st.num_inserts for st in stats)),
                "numUpdatedRows": str(sum(st.num_update_writes for st in stats)),
                "numDeletedRows": str(sum(st.num_deletes for st in stats)),
                "numOutputBytes": str(sum(st.total_write_bytes for st in stats)),
            }
        when = transition_time(state, inst) if inst.is_completed else None
        rows.append((inst.requested_time, when, inst.action, operation, inst.state.name, metrics))
    return rows


_WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def _describe_history(session: SqlContext, stmt: DescribeHistory) -> Outcome:
    if stmt.limit is not None and stmt.limit < 0:
        raise SqlError(f"DESCRIBE HISTORY ... LIMIT must not be negative, got {stmt.limit}")
    limit = f" LIMIT {stmt.limit}" if stmt.limit is not None else ""
    done, found = hudilite_table(
        session, stmt.name, f"DESCRIBE HISTORY {sql_name(stmt.name)}{limit}"
    )
    if done is not None:
        return done
    _, state = found
    return Outcome(session.spark.createDataFrame(history_rows(state, stmt.limit), HISTORY_SCHEMA))


HANDLERS: dict[type, Handler] = {
    ShowColumns: _show_columns,
    ShowDatabases: _show_databases,
    ShowTables: _show_tables,
    ShowTableExtended: _show_table_extended,
    Describe: _describe,
    ShowCreateTable: _show_create_table,
    ShowPartitions: _show_partitions,
    ShowTblProperties: _show_tblproperties,
    DescribeHistory: _describe_history,
}
