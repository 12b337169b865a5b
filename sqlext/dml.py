"""DML over hudilite tables: INSERT [OVERWRITE], UPDATE, DELETE and MERGE INTO.

Each statement becomes one Spark DataFrame of rows in the table's schema and one engine
write (one commit): nothing is collected onto the driver. The target's current snapshot is
read through a session view, so conditions and expressions are plain Spark SQL.

* ``INSERT INTO`` maps the query's columns to the table by position (or by the column
  list), with Spark's store-assignment rules for types; static ``PARTITION (c='v')``
  values fill their columns. The operation is Hudi's (0.14 to 1.x,
  :mod:`~hudilite.sqlext.insert_rule`): an upsert on a table with a record key and an
  ordering field, else an insert that keeps duplicate keys, unless
  ``hoodie.spark.sql.insert.into.operation`` (or ``hoodie.datasource.write.operation``,
  or the deprecated ``hoodie.sql.insert.mode``) says otherwise;
  ``hoodie.datasource.insert.dup.policy=drop|fail`` then acts on an insert.
* ``INSERT OVERWRITE`` replaces the whole table, or with ``PARTITION (...)`` the
  partitions the new rows land in (Hudi's ``insert_overwrite``).
* ``UPDATE``/``DELETE`` select the affected rows of the snapshot and upsert/delete them.
* ``MERGE INTO`` left-joins the source to the target snapshot; per source row the first
  ``WHEN`` clause whose condition holds decides: update (columns it leaves out keep their
  stored values), delete, or insert (:mod:`~hudilite.sqlext.dml_merge`).

UPDATE, DELETE, MERGE INTO and an INSERT whose query reads the target compute their rows
from the target's snapshot, so their write carries that snapshot (taken when the statement
loads the table, before any view is read): it fails with a retryable ConflictError when a
commit the statement did not see changed the same file groups or removed rows in the
partitions it writes, instead of overwriting that commit with values computed before it
(snapshot isolation, see :mod:`hudilite.write.conflict`). With
``hoodie.hudilite.sql.conflict.retries`` = N (a session SET or a table property, 0 by default)
such a statement is run again from the start -- a fresh snapshot, its query read again -- up
to N times before the ConflictError, which names the other commit, reaches the caller.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    MapType,
    NullType,
    NumericType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudilite import config as cfg
from hudilite.auto_keys import is_keyless
from hudilite.errors import ConflictError, LockError, SchemaError
from hudilite.schema import RECORD_KEY_COL
from hudilite.spark.write_job import OVERWRITE_PARTITIONS_KEY
from hudilite.table.api import Table
from hudilite.write.conflict import ReadSnapshot

from .context import Handler, Outcome, SqlContext, write_outcome
from .ddl_common import partitions_for_spec
from .dml_common import (
    StatementRun,
    data_columns,
    find_column,
    is_foreign,
    load_target,
    quote,
    strip_meta,
)
from .dml_merge import merge_into
from .insert_rule import insert_into_rule
from .statements import (
    Delete,
    InsertInto,
    MergeInto,
    SqlWarning,
    TableName,
    Update,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hudilite.table.api import Operation
    from hudilite.tablestate.state import TableState


__all__ = ["HANDLERS", "INSERT_OPERATION_KEY"]

INSERT_OPERATION_KEY = cfg.INSERT_INTO_OPERATION.name
log = logging.getLogger(__name__)


def _rerun_on_conflict(handler: Callable[[SqlContext, Any, StatementRun], Outcome]) -> Handler:
    """``handler`` run again from the start when its write fails with ConflictError
    because a commit completed after the snapshot it read (see the module docstring);
    a LockError (the lock's wait ran out) is not re-run, nor is a blind INSERT."""

    def run(session: SqlContext, stmt: Any) -> Outcome:
        reruns = 0
        while True:
            attempt = StatementRun()
            try:
                return handler(session, stmt, attempt)
            except LockError:
                raise
            except ConflictError as exc:
                if not attempt.reads_target or reruns >= attempt.retries:
                    if reruns:
                        raise ConflictError(
                            f"{exc} (the statement ran {reruns + 1} times, each on a fresh "
                            f"snapshot: {cfg.SQL_CONFLICT_RETRIES.name}={attempt.retries})"
                        ) from exc
                    raise
                reruns += 1
                log.info("statement re-run %d of %d after: %s", reruns, attempt.retries, exc)

    return run


# ---------------------------------------------------------------------------------------
# store assignment (Spark's ANSI rules for INSERT)


def assignable(source: DataType, target: DataType) -> bool:
    """Whether Spark's ANSI store assignment lets a ``source`` value into a ``target``
    column: numbers into numbers (overflow fails at run time), any atomic value into a
    string, dates and timestamps into each other, NULL into anything, and nested types
    field by field (structs by position)."""
    if isinstance(source, NullType) or source == target:
        return True
    if isinstance(source, NumericType) and isinstance(target, NumericType):
        return True
    if isinstance(target, StringType):
        return not isinstance(source, ArrayType | MapType | StructType)
    datetimes = (DateType, TimestampType, TimestampNTZType)
    if isinstance(source, datetimes) and isinstance(target, datetimes):
        return True
    if isinstance(source, ArrayType) and isinstance(target, ArrayType):
        return assignable(source.elementType, target.elementType)
    if isinstance(source, MapType) and isinstance(target, MapType):
        return assignable(source.keyType, target.keyType) and assignable(
            source.valueType, target.valueType
        )
    if isinstance(source, StructType) and isinstance(target, StructType):
        return len(source.fields) == len(target.fields) and all(
            assignable(s.dataType, t.dataType)
            for s, t in zip(source.fields, target.fields, strict=True)
        )
    return False


def _assign(df: DataFrame, schema: StructType, display: str) -> DataFrame:
    """``df`` (columns named as the table's) cast to the table's types, or a SchemaError."""
    by_name = {f.name: f for f in df.schema.fields}
    cols = []
    for f in schema.fields:
        src = by_name.get(f.name)
        if src is not None and not assignable(src.dataType, f.dataType):
            raise SchemaError(
                f"cannot write to {display}: column {f.name!r} is "
                f"{f.dataType.simpleString()} but the query gives "
                f"{src.dataType.simpleString()}"
            )
        cols.append((f, src is not None))
    if not any(isinstance(f.dataType, ArrayType | MapType | StructType) for f, _ in cols):
        # One call for the whole projection: each Column built in Python costs a few py4j
        # round trips, about 15 ms of a one-row INSERT's 150 (atomic type names are SQL).
        return df.selectExpr(
            *(
                f"CAST({quote(f.name) if present else 'NULL'} AS {f.dataType.simpleString()}) "
                f"AS {quote(f.name)}"
                for f, present in cols
            )
        )
    return df.select(
        *(
            (F.col(quote(f.name)) if present else F.lit(None)).cast(f.dataType).alias(f.name)
            for f, present in cols
        )
    )


# ---------------------------------------------------------------------------------------
# INSERT


def _insert_operation(
    session: SqlContext, state: TableState, display: str
) -> tuple[Operation, dict[str, str]]:
    """INSERT INTO's operation and the write options that go with it, by Hudi's rule
    (:func:`~hudilite.sqlext.insert_rule.insert_into_rule`: an upsert on a table with a
    record key and an ordering field unless an operation is set). A ``drop``/``fail`` dup
    policy that an upsert does not apply is warned about, not silently dropped."""
    options = session.write_options()
    rule = insert_into_rule(state.options(options), state.config)
    if rule.ignored_policy is not None:
        warnings.warn(
            SqlWarning(
                f"INSERT INTO {display} runs as an upsert ({rule.reason}), so "
                f"{cfg.INSERT_DUP_POLICY.name}={rule.ignored_policy} does not apply: it "
                f"applies to inserts only. SET {INSERT_OPERATION_KEY} = insert to apply it"
            ),
            stacklevel=3,
        )
    options.update(rule.options)
    return rule.operation, options


def _insert(session: SqlContext, stmt: InsertInto, attempt: StatementRun) -> Outcome:
    if is_foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    display = session.display(stmt.table)
    tbl, state = load_target(session, stmt.table)  # one load for the schema, config, options
    attempt.configure(session, state)
    snap = ReadSnapshot.of(state.timeline)  # before the query reads anything
    schema = data_columns(state)
    config = state.config
    verb = "INSERT OVERWRITE" if stmt.overwrite else "INSERT INTO"
    partition_fields = {p.lower(): p for p in config.partition_fields}
    static: dict[str, Any] = {}
    for key, value in stmt.partition.items():
        field = partition_fields.get(key.lower())
        if field is None:
            raise SchemaError(
                f"{verb} {display}: {key!r} is not a partition column "
                f"(partition columns: {', '.join(config.partition_fields) or 'none'})"
            )
        if value is not None:
            static[field] = value
    session.views.reads.clear()
    df = session.spark.sql(session.views.rewrite(stmt.query))
    # INSERT ... SELECT from the target itself computes its rows from the snapshot: the
    # write is checked as UPDATE's is (a query reading other tables only is a blind write).
    reads_target = tbl.path in session.views.reads
    attempt.reads_target = reads_target
    if stmt.columns is None:
        df = strip_meta(df)
        names = [f.name for f in schema.fields if f.name not in static]
    else:
        names = [find_column(schema, c, verb, display) for c in stmt.columns]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SchemaError(f"{verb} {display}: column {sorted(dup)[0]!r} is listed twice")
        both = [n for n in names if n in static]
        if both:
            raise SchemaError(
                f"{verb} {display}: column {both[0]!r} has a static PARTITION value "
                "and is in the column list"
            )
        required = [*config.record_key_fields, *config.partition_fields]
        missing = [c for c in required if c not in names and c not in static]
        if missing:
            raise SchemaError(f"{verb} {display}: column {missing[0]!r} needs a value")
    if len(df.columns) != len(names):
        raise SchemaError(
            f"{verb} {display}: the query gives {len(df.columns)} column(s) but "
            f"{len(names)} are expected ({', '.join(names)})"
        )
    if stmt.columns is None:
        _warn_positional(df.columns, names, verb, display)
    df = df.toDF(*names)
    types = {f.name: f.dataType for f in schema.fields}
    for col, value in static.items():
        df = df.withColumn(col, F.lit(value).cast(types[col]))
    df = _assign(df, schema, display)
    op: Operation
    if stmt.overwrite:
        options = session.write_options()
        op = "insert_overwrite" if stmt.partition else "insert_overwrite_table"
        if static and len(static) == len(stmt.partition):
            # A fully static PARTITION (...) is replaced even if the query returns no rows.
            tz = session.spark.conf.get("spark.sql.session.timeZone", "UTC") or "UTC"
            _, path = partitions_for_spec(state, static, display, tz)
            if path is not None:
                options[OVERWRITE_PARTITIONS_KEY] = json.dumps([path])
    else:
        op, options = _insert_operation(session, state, display)
    result = tbl.write(df, op, options=options, read_snapshot=snap if reads_target else None)
    return write_outcome(session.spark, result)


def _warn_positional(source: list[str], target: list[str], verb: str, display: str) -> None:
    """A positional INSERT whose query names table columns at other positions (say the
    partition column, which PARTITIONED BY moved last) writes each value into the column
    at its position, as Spark does: warn naming the columns."""
    names = {t.lower() for t in target}
    moved = [
        (s, t)
        for s, t in zip(source, target, strict=True)
        if s.lower() != t.lower() and s.lower() in names
    ]
    if moved:
        shown = ", ".join(f"{s!r} -> {t!r}" for s, t in moved)
        warnings.warn(
            SqlWarning(
                f"{verb} {display} matches columns by position, not by name: query column "
                f"{shown}. List the columns (INSERT INTO t (c1, c2, ...) SELECT ...) or "
                f"select them in the table's order ({', '.join(target)})"
            ),
            stacklevel=2,
        )


# ---------------------------------------------------------------------------------------
# UPDATE and DELETE


def _protected(config: cfg.TableConfig) -> set[str]:
    return {c.lower() for c in (*config.record_key_fields, *config.partition_fields)}


def _stored_key(config: cfg.TableConfig) -> list[str]:
    """A keyless table's rows are updated and deleted by their stored key, as Hudi does for
    tables with generated keys (:mod:`hudilite.auto_keys`)."""
    return [quote(RECORD_KEY_COL)] if is_keyless(config) else []


def _update(session: SqlContext, stmt: Update, attempt: StatementRun) -> Outcome:
    if is_foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    display = session.display(stmt.table)
    tbl, state = load_target(session, stmt.table)
    attempt.configure(session, state)
    schema = data_columns(state)
    protected = _protected(state.config)
    assigned: dict[str, str] = {}
    for col, expr in stmt.assignments.items():
        name = find_column(schema, col, "UPDATE", display)
        if name.lower() in protected:
            raise SchemaError(f"UPDATE {display}: cannot update key or partition column {name!r}")
        assigned[name] = expr
    select = [
        f"CAST(({assigned[f.name]}) AS {f.dataType.simpleString()}) AS {quote(f.name)}"
        if f.name in assigned
        else quote(f.name)
        for f in schema.fields
    ] + _stored_key(state.config)
    snap = ReadSnapshot.of(state.timeline)
    return _write_selected(session, tbl, stmt.table, select, stmt.where, "upsert", snap)


def _delete(session: SqlContext, stmt: Delete, attempt: StatementRun) -> Outcome:
    if is_foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    tbl, state = load_target(session, stmt.table)
    attempt.configure(session, state)
    select = [quote(f.name) for f in data_columns(state).fields] + _stored_key(state.config)
    snap = ReadSnapshot.of(state.timeline)
    return _write_selected(session, tbl, stmt.table, select, stmt.where, "delete", snap)


def _write_selected(
    session: SqlContext,
    tbl: Table,
    name: TableName,
    select: list[str],
    where: str | None,
    operation: Operation,
    snap: ReadSnapshot,
) -> Outcome:
    """Select ``select`` from the table's snapshot rows matching ``where`` and write them
    back with ``operation`` (UPDATE: upsert; DELETE: delete), checked against the commits
    ``snap`` (taken before the read) did not see."""
    view = session.views.table_view(name)
    sql = f"SELECT {', '.join(select)} FROM {quote(view)} AS {quote(name.table)}"
    if where:
        sql += f" WHERE {where}"
    # Subqueries of the condition and of SET expressions may read hudilite tables.
    df = session.spark.sql(session.views.rewrite(sql))
    result = tbl.write(df, operation, options=session.write_options(), read_snapshot=snap)
    return write_outcome(session.spark, result)


HANDLERS: dict[type, Handler] = {
    InsertInto: _rerun_on_conflict(_insert),
    Update: _rerun_on_conflict(_update),
    Delete: _rerun_on_conflict(_delete),
    MergeInto: _rerun_on_conflict(merge_into),
}
