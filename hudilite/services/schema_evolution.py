"""Schema evolution: adding columns, as Hudi's ``ALTER TABLE ... ADD COLUMNS`` does, and
promoting a column's type (:func:`change_column_type`: int -> long, int -> double,
float -> double, the widenings every reader applies to files written before).

Hudi keeps no separate schema file for a table without the (optional) schema-on-read
history: readers take the schema recorded in the latest commit's
``extraMetadata.schema``, and ``hoodie.table.create.schema`` before the first commit.
``AlterHoodieTableAddColumnsCommand`` therefore changes the schema by committing an
*empty* write -- ``commit`` on copy-on-write, ``deltacommit`` on merge-on-read, no write
stats -- whose metadata carries the new schema and ``operationType = ALTER_SCHEMA``.
Nothing is rewritten: files written before the change lack the new columns and every
reader returns null for them (Spark's Parquet reader and ``pyarrow.dataset`` with the
full schema, :func:`hudilite.read.file_group_reader.read_file_slice` conforms base files
and log blocks the same way; writes merge old rows into the new schema).

The rules Hudi (and Spark's ``ALTER TABLE ADD COLUMNS``) applies:

* new columns are nullable -- old rows have no value for them -- and go after the data
  columns, before the partition columns that end the schema (Hudi's ``dataSchema ++
  colsToAdd ++ partitionSchema``; a new table puts its partition columns last, so
  ``INSERT INTO copy SELECT * FROM t`` and ``SHOW CREATE TABLE`` keep one order);
* a column name may not already exist, compared case-insensitively as Spark resolves
  names, nor be one of Hudi's meta columns;
* the Avro schema keeps the existing fields exactly as recorded and inserts ``["null", T]``
  fields with ``"default": null``.

hudilite also writes the new schema to ``hoodie.table.create.schema`` after the commit,
so a reader that only looks at the table config sees the columns too, and lists the new
columns in the table's write defaults under ``hoodie.hudilite.optional.columns``: writes
that omit them store nulls (other columns stay required unless Hudi's
``hoodie.write.set.null.for.missing.columns`` is on), so producers that predate the
change keep working. A write that
started before the change and commits after it would record the old schema and hide the
new columns; :class:`hudilite.write.transaction.WriteTransaction` makes it a conflict.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from hudilite import config as cfg
from hudilite.errors import SchemaError
from hudilite.schema import (
    META_COLUMNS,
    OPERATION_COL,
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    to_storage_schema,
)
from hudilite.services._common import OptionsLike, resolve_options, table_schema_json
from hudilite.services.properties import update_table_properties
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.write.result import WriteResult
from hudilite.write.transaction import (
    ALTER_SCHEMA,
    WriteTransaction,
    commit_metadata,
    inflight_content,
)

OPERATION = "add_columns"
#: ``extraMetadata`` entry naming the columns a schema change added.
ADDED_COLUMNS_KEY = "hudilite.added.columns"
CREATE_SCHEMA_KEY = "hoodie.table.create.schema"


def required_columns(
    state: TableState, *, set_null_for_missing: bool, optional_columns: Iterable[str]
) -> list[str] | None:
    """The data columns a write must carry, or None for all of them.

    Optional: ``optional_columns`` (``hoodie.hudilite.optional.columns``: those added by
    :func:`add_columns`), or every column with ``set_null_for_missing``
    (``hoodie.write.set.null.for.missing.columns``); the record key and partition fields are
    always required (they locate the record). A write passes its resolved
    :class:`~hudilite.write.write_config.WriteConfig` fields.
    """
    names = state.data_schema.names
    if set_null_for_missing:
        optional = {n.lower() for n in names}
    else:
        optional = {n.lower() for n in optional_columns}
    locating = (*state.config.record_key_fields, *state.config.partition_field_names)
    optional -= {n.lower() for n in locating}
    if not optional:
        return None
    return [n for n in names if n.lower() not in optional]


def _fields(columns: pa.Schema | Sequence[pa.Field]) -> list[pa.Field]:
    if isinstance(columns, pa.Schema):
        return list(columns)
    if isinstance(columns, pa.Field):
        return [columns]
    fields = list(columns)
    for f in fields:
        if not isinstance(f, pa.Field):
            raise SchemaError(
                f"columns to add must be pyarrow fields (or a schema), got {type(f).__name__}"
            )
    return fields


def check_new_columns(current: pa.Schema, columns: pa.Schema | Sequence[pa.Field]) -> pa.Schema:
    """The columns to append to ``current`` (data columns), as stored; raises
    :class:`SchemaError` naming the column for an empty request, an existing name
    (case-insensitive), a meta column, a duplicate, a non-nullable field or a type
    hudilite cannot store."""
    fields = _fields(columns)
    if not fields:
        raise SchemaError("add_columns needs at least one column")
    taken = {f.name.lower(): f.name for f in current}
    reserved = {c.lower() for c in (*META_COLUMNS, OPERATION_COL)}
    seen: dict[str, str] = {}
    for f in fields:
        low = f.name.lower()
        if low in reserved:
            raise SchemaError(f"column {f.name!r} is a Hudi meta column and cannot be added")
        if low in taken:
            raise SchemaError(
                f"column {f.name!r} already exists in the table schema (as {taken[low]!r})"
            )
        if low in seen:
            raise SchemaError(f"column {f.name!r} is listed twice (also as {seen[low]!r})")
        seen[low] = f.name
        if not f.nullable:
            # Rows already stored have no value for it: Hudi only adds nullable columns.
            raise SchemaError(f"column {f.name!r} must be nullable to be added to a table")
    return to_storage_schema(pa.schema(fields))


def _record_names(avro: dict[str, Any]) -> tuple[str, str]:
    """(record name, namespace) of a top-level Avro record, full names split."""
    name = str(avro.get("name") or "record")
    namespace = str(avro.get("namespace") or "")
    if "." in name:
        namespace, name = name.rsplit(".", 1)
    return name, namespace


def evolve_avro_schema(
    schema_json: str, added: pa.Schema, partition_fields: Sequence[str] = ()
) -> str:
    """``schema_json`` (an Avro record of the data columns) with ``added`` as nullable
    fields after the data columns and before the partition columns that end the record
    (as Hudi's ``AlterHoodieTableAddColumnsCommand`` builds ``dataSchema ++ colsToAdd ++
    partitionSchema``, and as a new table orders them); the existing fields are kept as
    they are."""
    try:
        avro = json.loads(schema_json)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"the table's Avro schema is not valid JSON: {exc}") from exc
    name, namespace = _record_names(avro)
    # Nested records of the new fields are named within the table's record, as Hudi names
    # them (namespace = the record's full name).
    rendered = arrow_to_avro_schema(added, name, namespace)
    fields = list(avro.get("fields", []))
    partitions = {p.lower() for p in partition_fields}
    at = len(fields)
    while at > 0 and str(fields[at - 1].get("name", "")).lower() in partitions:
        at -= 1
    evolved = dict(avro)
    evolved["fields"] = [*fields[:at], *rendered["fields"], *fields[at:]]
    text = json.dumps(evolved, separators=(",", ":"))
    avro_to_arrow_schema(text)  # the result must read back (raises SchemaError otherwise)
    return text


def _evolve(state: TableState, columns: pa.Schema | Sequence[pa.Field]) -> tuple[pa.Schema, str]:
    """The columns to add and the evolved Avro schema (JSON) of the table now."""
    added = check_new_columns(state.data_schema, columns)
    partitions = state.config.partition_field_names
    return added, evolve_avro_schema(table_schema_json(state), added, partitions)


def add_columns(
    state: TableState,
    columns: pa.Schema | Sequence[pa.Field],
    options: OptionsLike = None,
) -> WriteResult:
    """Append nullable ``columns`` to the table schema with an ALTER_SCHEMA commit.

    Returns the commit's :class:`WriteResult` (no files written;
    ``extra["added_columns"]`` the column names and ``extra["schema"]`` the new Avro
    schema). Invalid columns raise :class:`SchemaError` before anything is written.
    """
    started = time.monotonic()
    opts = resolve_options(state, options)
    _evolve(state, columns)  # invalid columns fail before the timeline changes
    action = DELTA_COMMIT if state.config.is_mor else COMMIT
    with WriteTransaction(
        state.gw,
        state.config,
        action,
        heartbeat_interval_ms=int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)),
        tolerable_misses=int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES)),
        lock_options=opts,
    ) as txn:
        # The schema to extend is the one committed now (a concurrent change counts).
        state = TableState.load(state.gw)
        added, schema = _evolve(state, columns)
        txn.start_inflight(inflight_content(state.config, [], ALTER_SCHEMA))
        metadata = commit_metadata(
            state.config,
            schema,
            [],
            ALTER_SCHEMA,
            extra={ADDED_COLUMNS_KEY: ",".join(added.names)},
        )
        completed = txn.commit(metadata)
    # After the commit, which is what readers follow: if this update fails the table is
    # still right, only the create schema lags.
    stored = TableState.load(state.gw).options().get(cfg.OPTIONAL_COLUMNS) or ()
    optional = [*stored, *added.names]
    update_table_properties(
        state.gw,
        {CREATE_SCHEMA_KEY: schema},
        write_defaults={cfg.OPTIONAL_COLUMNS.name: ",".join(dict.fromkeys(optional))},
    )
    return WriteResult(
        instant_time=completed.requested_time,
        operation=OPERATION,
        rolled_back=tuple(r.rolled_back_instant for r in txn.rolled_back),
        completion_time=completed.completion_time,
        duration_s=time.monotonic() - started,
        extra={"added_columns": tuple(added.names), "schema": schema},
    )


# --------------------------------------------------------------------------------------------
# type promotion (ALTER TABLE ... ALTER COLUMN c TYPE t)

RETYPE_OPERATION = "change_column_type"
#: ``extraMetadata`` entry naming the column a type change promoted (``col:old->new``).
RETYPED_COLUMN_KEY = "hudilite.retyped.column"
#: Promotions of Hudi's schema evolution on write (a widening type) that every hudilite
#: reader applies to files written before the change: Spark's Parquet reader (INT32 read
#: as bigint or double, FLOAT as double) and the Arrow readers (a safe cast). Other
#: widenings Hudi allows (bigint -> double, numbers -> string) are not read back by Spark's
#: Parquet reader, so they are refused.
SAFE_PROMOTIONS: frozenset[tuple[str, str]] = frozenset(
    {("int", "long"), ("int", "double"), ("float", "double")}
)


def retype_avro_schema(schema_json: str, column: str, new_type: str) -> tuple[str, str, str]:
    """``schema_json`` with top-level ``column`` (case-insensitive) promoted to the Avro
    primitive ``new_type``; returns ``(schema, column as stored, old type)``. Raises
    :class:`SchemaError` for a column that is missing, not a primitive, or a promotion
    outside :data:`SAFE_PROMOTIONS`."""
    try:
        avro = json.loads(schema_json)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"the table's Avro schema is not valid JSON: {exc}") from exc
    fields = list(avro.get("fields", []))
    for i, f in enumerate(fields):
        if str(f.get("name", "")).lower() != column.lower():
            continue
        kind = f.get("type")
        branches = kind if isinstance(kind, list) else [kind]
        values = [b for b in branches if b != "null"]
        if len(values) != 1 or not isinstance(values[0], str):
            raise SchemaError(f"column {f['name']!r} is not of a primitive type: {kind}")
        old = values[0]
        if (old, new_type) not in SAFE_PROMOTIONS:
            allowed = ", ".join(f"{a} -> {b}" for a, b in sorted(SAFE_PROMOTIONS))
            raise SchemaError(
                f"cannot promote column {f['name']!r} from {old} to {new_type}: the "
                f"promotions hudilite applies are {allowed}"
            )
        changed = dict(f)
        changed["type"] = (
            [new_type if b == old else b for b in branches] if isinstance(kind, list) else new_type
        )
        fields[i] = changed
        evolved = dict(avro)
        evolved["fields"] = fields
        text = json.dumps(evolved, separators=(",", ":"))
        avro_to_arrow_schema(text)  # the result must read back (raises SchemaError otherwise)
        return text, str(f["name"]), old
    raise SchemaError(f"column {column!r} is not a column of the table")


def change_column_type(
    state: TableState,
    column: str,
    new_type: str,
    options: OptionsLike = None,
) -> WriteResult:
    """Promote ``column`` to the Avro primitive ``new_type`` (``long`` or ``double``) with
    an ALTER_SCHEMA commit, as Hudi's schema evolution on write does: nothing is
    rewritten, files written before keep the old type and readers widen their values.
    Record key, partition and ordering fields keep their types (they are refused)."""
    started = time.monotonic()
    opts = resolve_options(state, options)
    config = state.config
    fixed = {c.lower() for c in (*config.record_key_fields, *config.partition_field_names)}
    fixed |= {c.lower() for c in config.ordering_fields}
    if column.lower() in fixed:
        raise SchemaError(f"column {column!r} is a key, partition or ordering field")
    retype_avro_schema(table_schema_json(state), column, new_type)  # fails before writing
    action = DELTA_COMMIT if config.is_mor else COMMIT
    with WriteTransaction(
        state.gw,
        config,
        action,
        heartbeat_interval_ms=int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)),
        tolerable_misses=int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES)),
        lock_options=opts,
    ) as txn:
        state = TableState.load(state.gw)
        schema, name, old = retype_avro_schema(table_schema_json(state), column, new_type)
        txn.start_inflight(inflight_content(state.config, [], ALTER_SCHEMA))
        metadata = commit_metadata(
            state.config,
            schema,
            [],
            ALTER_SCHEMA,
            extra={RETYPED_COLUMN_KEY: f"{name}:{old}->{new_type}"},
        )
        completed = txn.commit(metadata)
    update_table_properties(state.gw, {CREATE_SCHEMA_KEY: schema})
    return WriteResult(
        instant_time=completed.requested_time,
        operation=RETYPE_OPERATION,
        rolled_back=tuple(r.rolled_back_instant for r in txn.rolled_back),
        completion_time=completed.completion_time,
        duration_s=time.monotonic() - started,
        extra={"column": name, "from": old, "to": new_type, "schema": schema},
    )
