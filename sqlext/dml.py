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
  stored values), delete, or insert. Source rows with the same key are combined by the
  ordering field first; without one, two source rows matching one target row are an error.
  On a table without a record key (generated keys), as in Hudi, the ON condition may be any
  condition: a matched row carries the target row's ``_hoodie_record_key``, an inserted one
  gets a generated key.

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
from dataclasses import dataclass
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
from hudilite.schema import IS_DELETED_COL, META_COLUMNS, RECORD_KEY_COL
from hudilite.spark.convert import spark_schema
from hudilite.spark.write_job import OVERWRITE_PARTITIONS_KEY
from hudilite.table.api import Table
from hudilite.write.conflict import ReadSnapshot

from .context import Handler, Outcome, SqlContext, write_outcome
from .ddl_common import partitions_for_spec
from .dialect import key_expressions
from .insert_rule import insert_into_rule
from .statements import (
    Delete,
    InsertInto,
    MergeInto,
    SqlError,
    SqlWarning,
    TableName,
    Update,
    WhenMatched,
    WhenNotMatched,
    WhenNotMatchedBySource,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hudilite.table.api import Operation
    from hudilite.tablestate.state import TableState


__all__ = ["HANDLERS", "INSERT_OPERATION_KEY"]

INSERT_OPERATION_KEY = cfg.INSERT_INTO_OPERATION.name
_CLAUSE = "__hudilite_clause"
_MATCHED = "__hudilite_matched"
_FROM_SOURCE = "__hudilite_from_source"
_SEQ = "__hudilite_seq"
_RANK = "__hudilite_rank"
_TARGET_KEY = "__hudilite_target_key"
log = logging.getLogger(__name__)


@dataclass
class _Run:
    """What one run of a statement learned that decides whether a conflict re-runs it:
    whether its write read the target (an INSERT's query may not), and how many re-runs
    ``hoodie.hudilite.sql.conflict.retries`` allows (session options over the table's)."""

    reads_target: bool = True
    retries: int = 0

    def configure(self, session: SqlContext, state: TableState) -> None:
        """Read the re-run limit for this statement on the table of ``state``."""
        opts = state.options(session.write_options())
        self.retries = max(0, int(opts.get(cfg.SQL_CONFLICT_RETRIES)))


def _rerun_on_conflict(handler: Callable[[SqlContext, Any, _Run], Outcome]) -> Handler:
    """``handler`` run again from the start when its write fails with ConflictError
    because a commit completed after the snapshot it read (see the module docstring);
    a LockError (the lock's wait ran out) is not re-run, nor is a blind INSERT."""

    def run(session: SqlContext, stmt: Any) -> Outcome:
        reruns = 0
        while True:
            attempt = _Run()
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


def _q(name: str) -> str:
    """``name`` as a back-quoted Spark identifier."""
    return "`" + name.replace("`", "``") + "`"


def _target(session: SqlContext, name: TableName) -> tuple[Table, TableState]:
    """A handle on the hudilite table ``name`` and its state, read once (``session.table``
    reads the state to check the table, and the statement reads it again right after); a
    missing table raises the same TableNotFoundError from the read."""
    tbl = session.handle(name)
    return tbl, tbl.state()


def _columns(state: TableState) -> StructType:
    return spark_schema(state.data_schema)


def _find(schema: StructType, name: str, what: str, display: str) -> str:
    """The table's spelling of column ``name`` (case-insensitive) or a SchemaError."""
    for f in schema.fields:
        if f.name.lower() == name.lower():
            return f.name
    raise SchemaError(
        f"{what}: column {name!r} is not a column of {display} "
        f"({', '.join(f.name for f in schema.fields)})"
    )


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
                f"CAST({_q(f.name) if present else 'NULL'} AS {f.dataType.simpleString()}) "
                f"AS {_q(f.name)}"
                for f, present in cols
            )
        )
    return df.select(
        *(
            (F.col(_q(f.name)) if present else F.lit(None)).cast(f.dataType).alias(f.name)
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


def _strip_meta(df: DataFrame) -> DataFrame:
    """Drop Hudi's meta columns leading a ``SELECT *`` from another Hudi table."""
    lead = [c for c in df.columns[: len(META_COLUMNS)] if c in META_COLUMNS]
    return df.drop(*lead) if len(lead) == len(META_COLUMNS) else df


def _foreign(session: SqlContext, name: TableName) -> bool:
    """Whether ``name`` is a Spark table or view rather than a hudilite table."""
    if session.is_hudilite(name):
        return False
    if name.db is None and session.is_temp_view(name.table):
        return True
    qualified = f"{name.db}.{name.table}" if name.db else name.table
    return bool(session.spark.catalog.tableExists(qualified))


def _insert(session: SqlContext, stmt: InsertInto, attempt: _Run) -> Outcome:
    if _foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    display = session.display(stmt.table)
    tbl, state = _target(session, stmt.table)  # one load for the schema, config, options
    attempt.configure(session, state)
    snap = ReadSnapshot.of(state.timeline)  # before the query reads anything
    schema = _columns(state)
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
        df = _strip_meta(df)
        names = [f.name for f in schema.fields if f.name not in static]
    else:
        names = [_find(schema, c, verb, display) for c in stmt.columns]
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
    return [_q(RECORD_KEY_COL)] if is_keyless(config) else []


def _update(session: SqlContext, stmt: Update, attempt: _Run) -> Outcome:
    if _foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    display = session.display(stmt.table)
    tbl, state = _target(session, stmt.table)
    attempt.configure(session, state)
    schema = _columns(state)
    protected = _protected(state.config)
    assigned: dict[str, str] = {}
    for col, expr in stmt.assignments.items():
        name = _find(schema, col, "UPDATE", display)
        if name.lower() in protected:
            raise SchemaError(f"UPDATE {display}: cannot update key or partition column {name!r}")
        assigned[name] = expr
    select = [
        f"CAST(({assigned[f.name]}) AS {f.dataType.simpleString()}) AS {_q(f.name)}"
        if f.name in assigned
        else _q(f.name)
        for f in schema.fields
    ] + _stored_key(state.config)
    snap = ReadSnapshot.of(state.timeline)
    return _write_selected(session, tbl, stmt.table, select, stmt.where, "upsert", snap)


def _delete(session: SqlContext, stmt: Delete, attempt: _Run) -> Outcome:
    if _foreign(session, stmt.table):
        return session.run_in_spark(session.display(stmt.table))
    tbl, state = _target(session, stmt.table)
    attempt.configure(session, state)
    select = [_q(f.name) for f in _columns(state).fields] + _stored_key(state.config)
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
    sql = f"SELECT {', '.join(select)} FROM {_q(view)} AS {_q(name.table)}"
    if where:
        sql += f" WHERE {where}"
    # Subqueries of the condition and of SET expressions may read hudilite tables.
    df = session.spark.sql(session.views.rewrite(sql))
    result = tbl.write(df, operation, options=session.write_options(), read_snapshot=snap)
    return write_outcome(session.spark, result)


# ---------------------------------------------------------------------------------------
# MERGE INTO


def _merge(session: SqlContext, stmt: MergeInto, attempt: _Run) -> Outcome:
    if _foreign(session, stmt.target):
        return session.run_in_spark(session.display(stmt.target))
    display = session.display(stmt.target)
    tbl, state = _target(session, stmt.target)
    attempt.configure(session, state)
    snap = ReadSnapshot.of(state.timeline)  # before the source or the target is read
    schema = _columns(state)
    config = state.config
    t_alias = stmt.target_alias or stmt.target.table
    if isinstance(stmt.source, TableName):
        s_alias = stmt.source_alias or stmt.source.table
        source_sql = session.views.rewrite(
            "SELECT * FROM " + ".".join(_q(p) for p in (stmt.source.db, stmt.source.table) if p)
        )
    else:
        s_alias = stmt.source_alias or "source"
        source_sql = session.views.rewrite(stmt.source)
    source = session.spark.sql(source_sql)
    if isinstance(stmt.source, TableName) and session.is_hudilite(stmt.source):
        source = _strip_meta(source)
    source_cols = {c.lower(): c for c in source.columns}

    keys = key_expressions(stmt.on, t_alias, config.record_key_fields)
    if keys is None:
        pk = ", ".join(f"{t_alias}.{k} = {s_alias}.{k}" for k in config.record_key_fields)
        raise SqlError(
            f"MERGE INTO {display}: the ON condition must equate every primary key column "
            f"of the target with a source value (e.g. ON {pk}), got: {stmt.on}"
        )
    ordering = [f for f in config.ordering_fields if f.lower() in source_cols]
    source_view = session.views.register_frame(source, "merge_source")
    keyless = is_keyless(config)
    if ordering and len(ordering) == len(config.ordering_fields) and not keyless:
        # Combine source rows with the same key: the greatest ordering value wins, then
        # the later row (Hudi's precombine).
        part = ", ".join(keys[k] for k in config.record_key_fields)
        order = ", ".join(f"{_q(s_alias)}.{_q(source_cols[f.lower()])} DESC" for f in ordering)
        inner = (
            f"SELECT {_q(s_alias)}.*, monotonically_increasing_id() AS {_SEQ} "
            f"FROM {_q(source_view)} AS {_q(s_alias)}"
        )
        ranked = (
            f"SELECT {_q(s_alias)}.*, row_number() OVER (PARTITION BY {part} "
            f"ORDER BY {order}, {_SEQ} DESC) AS {_RANK} FROM ({inner}) AS {_q(s_alias)}"
        )
        combined = session.spark.sql(f"SELECT * FROM ({ranked}) WHERE {_RANK} = 1").drop(
            _RANK, _SEQ
        )
        source_view = session.views.register_frame(combined, "merge_source_combined")

    target_view = session.views.table_view(stmt.target)
    data_cols = ", ".join(_q(f.name) for f in schema.fields)
    if keyless:
        # Hudi's MERGE INTO a table without a record key (MergeIntoHoodieTableCommand,
        # "prepped"): the source is joined with the target on any condition, a matched
        # row carries the target row's _hoodie_record_key (an update or delete of that
        # record), an unmatched one none (an insert, its key generated).
        data_cols += f", {_q(RECORD_KEY_COL)} AS {_TARGET_KEY}"
    # WHEN NOT MATCHED BY SOURCE needs the target rows no source row matches: a full join,
    # with a marker telling source rows from none.
    by_source = any(isinstance(c, WhenNotMatchedBySource) for c in stmt.clauses)
    source_from = f"{_q(source_view)} AS {_q(s_alias)}"
    if by_source:
        source_from = f"(SELECT *, true AS {_FROM_SOURCE} FROM {_q(source_view)}) AS {_q(s_alias)}"
    joined_from = (
        f"FROM {source_from} {'FULL OUTER' if by_source else 'LEFT'} JOIN "
        f"(SELECT {data_cols}, true AS {_MATCHED} FROM {_q(target_view)}) AS {_q(t_alias)} "
        f"ON {stmt.on}"
    )
    matched = f"{_q(t_alias)}.{_MATCHED} IS NOT NULL"
    not_matched = f"NOT ({matched})"
    not_matched_by_source = "false"
    if by_source:
        from_source = f"{_q(s_alias)}.{_FROM_SOURCE}"
        matched = f"{matched} AND {from_source} IS NOT NULL"
        not_matched = f"{_q(t_alias)}.{_MATCHED} IS NULL"
        not_matched_by_source = f"{from_source} IS NULL"
    # Two source rows matching one target row: combined by the ordering field when the
    # source has it (a keyless table's rows are combined by the write, by their stored key).
    if not ordering or (keyless and len(ordering) < len(config.ordering_fields)):
        _check_single_match(session, display, joined_from, matched, t_alias, config)

    conditions: list[str] = []
    for clause in stmt.clauses:
        if isinstance(clause, WhenMatched):
            base = matched
        elif isinstance(clause, WhenNotMatchedBySource):
            base = not_matched_by_source
        else:
            base = not_matched
        conditions.append(f"({base}) AND ({clause.condition})" if clause.condition else base)

    def target_col(name: str) -> str:
        return f"{_q(t_alias)}.{_q(name)}"

    def source_col(name: str, what: str) -> str:
        src = source_cols.get(name.lower())
        if src is None:
            raise SchemaError(
                f"MERGE INTO {display}: {what} needs source column {name!r} "
                f"(source columns: {', '.join(source.columns)})"
            )
        return f"{_q(s_alias)}.{_q(src)}"

    per_clause: list[dict[str, str]] = []
    key_cols = {k.lower(): k for k in config.record_key_fields}
    for clause in stmt.clauses:
        exprs: dict[str, str] = {}
        if isinstance(clause, WhenMatched | WhenNotMatchedBySource) and clause.action == "delete":
            exprs = {f.name: target_col(f.name) for f in schema.fields}
        elif isinstance(clause, WhenNotMatchedBySource):
            exprs = {f.name: target_col(f.name) for f in schema.fields}
            for col, expr in (clause.assignments or {}).items():
                name = _find(schema, col, "MERGE INTO NOT MATCHED BY SOURCE UPDATE", display)
                if name.lower() in key_cols:
                    raise SchemaError(
                        f"MERGE INTO {display}: cannot update primary key column {name!r}"
                    )
                exprs[name] = f"({expr})"
        elif isinstance(clause, WhenMatched):
            if clause.assignments == "*":
                exprs = {f.name: source_col(f.name, "UPDATE SET *") for f in schema.fields}
            else:
                exprs = {f.name: target_col(f.name) for f in schema.fields}
                for col, expr in (clause.assignments or {}).items():
                    name = _find(schema, col, "MERGE INTO UPDATE", display)
                    if name.lower() in key_cols and expr != keys[key_cols[name.lower()]]:
                        raise SchemaError(
                            f"MERGE INTO {display}: cannot update primary key column {name!r} "
                            f"(only to its matched value {keys[key_cols[name.lower()]]})"
                        )
                    exprs[name] = f"({expr})"
        elif isinstance(clause, WhenNotMatched):
            if clause.columns == "*":
                exprs = {f.name: source_col(f.name, "INSERT *") for f in schema.fields}
            else:
                values = clause.values or []
                if len(values) != len(clause.columns):
                    raise SchemaError(
                        f"MERGE INTO {display}: INSERT lists {len(clause.columns)} column(s) "
                        f"but {len(values)} value(s)"
                    )
                given = {
                    _find(schema, c, "MERGE INTO INSERT", display): f"({v})"
                    for c, v in zip(clause.columns, values, strict=True)
                }
                for k in config.record_key_fields:
                    if k not in given:
                        raise SchemaError(
                            f"MERGE INTO {display}: INSERT must give primary key column {k!r}"
                        )
                exprs = {f.name: given.get(f.name, "NULL") for f in schema.fields}
        per_clause.append(exprs)

    def case(values: list[str]) -> str:
        whens = " ".join(
            f"WHEN {cond} THEN {value}" for cond, value in zip(conditions, values, strict=True)
        )
        return f"CASE {whens} END"

    selects = [
        f"CAST({case([e[f.name] for e in per_clause])} AS {f.dataType.simpleString()}) "
        f"AS {_q(f.name)}"
        for f in schema.fields
    ]
    deletes = [
        "true"
        if isinstance(c, WhenMatched | WhenNotMatchedBySource) and c.action == "delete"
        else "false"
        for c in stmt.clauses
    ]
    selects.append(f"{case(deletes)} AS {_q(IS_DELETED_COL)}")
    if keyless:
        selects.append(f"{_q(t_alias)}.{_TARGET_KEY} AS {_q(RECORD_KEY_COL)}")
    selects.append(f"{case([str(i) for i in range(len(stmt.clauses))])} AS {_CLAUSE}")
    if not stmt.clauses:
        raise SqlError(f"MERGE INTO {display}: no WHEN clause")
    # Subqueries in ON, WHEN conditions and values may read hudilite tables.
    df = session.spark.sql(session.views.rewrite(f"SELECT {', '.join(selects)} {joined_from}"))
    df = df.where(F.col(_CLAUSE).isNotNull()).drop(_CLAUSE)
    if "true" not in deletes:
        df = df.drop(IS_DELETED_COL)
    result = tbl.write(df, "upsert", options=session.write_options(), read_snapshot=snap)
    return write_outcome(session.spark, result)


def _check_single_match(
    session: SqlContext, display: str, joined_from: str, matched: str, t_alias: str, config: Any
) -> None:
    """Without an ordering field, two source rows matching one target row are an error."""
    fields = config.record_key_fields or (_TARGET_KEY,)  # a keyless table: the stored key
    keys = ", ".join(f"{_q(t_alias)}.{_q(k)}" for k in fields)
    dup = session.spark.sql(
        session.views.rewrite(
            f"SELECT {keys}, count(*) AS n {joined_from} WHERE {matched} "
            f"GROUP BY {keys} HAVING count(*) > 1 LIMIT 1"
        )
    ).collect()
    if dup:
        row = dup[0]
        names = config.record_key_fields or (RECORD_KEY_COL,)
        shown = ", ".join(f"{k}={row[i]!r}" for i, k in enumerate(names))
        raise SqlError(
            f"MERGE INTO {display}: {row['n']} source rows match the target row with "
            f"{shown}; combine them first or give the table an ordering field"
        )


HANDLERS: dict[type, Handler] = {
    InsertInto: _rerun_on_conflict(_insert),
    Update: _rerun_on_conflict(_update),
    Delete: _rerun_on_conflict(_delete),
    MergeInto: _rerun_on_conflict(_merge),
}
