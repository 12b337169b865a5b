"""MERGE INTO over hudilite tables: one Spark DataFrame of the merged rows, one upsert.

The source (a table or a query) is left-joined to the target's snapshot on the ``ON``
condition (a full join when a ``WHEN NOT MATCHED BY SOURCE`` clause needs the target rows no
source row matches); per row, the first ``WHEN`` clause whose condition holds decides:
update (columns it leaves out keep their stored values), delete, or insert. The ``ON``
condition must equate every record key column of the target with a source value, and
source rows with the same key are combined by the ordering field first (Hudi's
precombine); without one, two source rows matching one target row are an error. On a
table without a record key (generated keys), as in Hudi, the ``ON`` condition may be any
condition: a matched row carries the target row's ``_hoodie_record_key``, an inserted one
gets a generated key.

:func:`merge_into` runs the steps in order: read the source, check the keys, combine the
source rows, join, check single matches, then one ``CASE`` per column over the clauses'
conditions (:func:`_merged_columns`); its write carries the snapshot it read (see
:mod:`.dml`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from hudilite.auto_keys import is_keyless
from hudilite.errors import SchemaError
from hudilite.schema import IS_DELETED_COL, RECORD_KEY_COL
from hudilite.write.conflict import ReadSnapshot

from .context import Outcome, SqlContext, write_outcome
from .dialect import key_expressions
from .dml_common import (
    StatementRun,
    data_columns,
    find_column,
    is_foreign,
    load_target,
    quote,
    strip_meta,
)
from .statements import (
    MergeInto,
    SqlError,
    TableName,
    WhenMatched,
    WhenNotMatched,
    WhenNotMatchedBySource,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from hudilite import config as cfg

__all__ = ["merge_into"]

_CLAUSE = "__hudilite_clause"
_MATCHED = "__hudilite_matched"
_FROM_SOURCE = "__hudilite_from_source"
_SEQ = "__hudilite_seq"
_RANK = "__hudilite_rank"
_TARGET_KEY = "__hudilite_target_key"

_Clause = WhenMatched | WhenNotMatched | WhenNotMatchedBySource


@dataclass(frozen=True)
class _Scope:
    """What the steps of one MERGE share: the target (its name as shown, data columns,
    config, alias), the source's alias and columns (lower-case name -> as written; all of
    them, for error messages) and ``keys``, the source expression each record key column
    is matched with."""

    display: str
    schema: StructType
    config: cfg.TableConfig
    t_alias: str
    s_alias: str
    source_cols: dict[str, str]
    source_names: list[str]
    keys: dict[str, str]

    def target_col(self, name: str) -> str:
        """Target column ``name`` in the joined rows."""
        return f"{quote(self.t_alias)}.{quote(name)}"

    def source_col(self, name: str, what: str) -> str:
        """The source column named as target column ``name`` (case-insensitive), or a
        SchemaError naming the clause (``what``) that needs it."""
        src = self.source_cols.get(name.lower())
        if src is None:
            raise SchemaError(
                f"MERGE INTO {self.display}: {what} needs source column {name!r} "
                f"(source columns: {', '.join(self.source_names)})"
            )
        return f"{quote(self.s_alias)}.{quote(src)}"


@dataclass(frozen=True)
class _Join:
    """The ``FROM`` clause joining source and target, and the condition that tells each
    kind of ``WHEN`` clause its rows."""

    from_sql: str
    matched: str
    not_matched: str
    not_matched_by_source: str


def merge_into(session: SqlContext, stmt: MergeInto, attempt: StatementRun) -> Outcome:
    """Run ``MERGE INTO`` (a Spark table's goes to Spark): one upsert of the rows the first
    matching ``WHEN`` clause of each joined row makes, checked against the snapshot taken
    before the source or the target is read."""
    if is_foreign(session, stmt.target):
        return session.run_in_spark(session.display(stmt.target))
    display = session.display(stmt.target)
    tbl, state = load_target(session, stmt.target)
    attempt.configure(session, state)
    snap = ReadSnapshot.of(state.timeline)  # before the source or the target is read
    schema = data_columns(state)
    config = state.config
    t_alias = stmt.target_alias or stmt.target.table
    source, s_alias = _read_source(session, stmt)
    source_cols = {c.lower(): c for c in source.columns}
    keys = _matched_keys(stmt, display, t_alias, s_alias, config)
    scope = _Scope(
        display, schema, config, t_alias, s_alias, source_cols, list(source.columns), keys
    )
    source_view, ordering = _combine_source(session, source, scope)
    join = _join(session, stmt, scope, source_view)
    keyless = is_keyless(config)
    # Two source rows matching one target row: combined by the ordering field when the
    # source has it (a keyless table's rows are combined by the write, by their stored key).
    if not ordering or (keyless and len(ordering) < len(config.ordering_fields)):
        _check_single_match(session, display, join.from_sql, join.matched, t_alias, config)
    conditions = _clause_conditions(stmt.clauses, join)
    per_clause = [_clause_values(clause, scope) for clause in stmt.clauses]
    selects, deletes = _merged_columns(stmt.clauses, conditions, per_clause, scope)
    if not stmt.clauses:
        raise SqlError(f"MERGE INTO {display}: no WHEN clause")
    # Subqueries in ON, WHEN conditions and values may read hudilite tables.
    df = session.spark.sql(session.views.rewrite(f"SELECT {', '.join(selects)} {join.from_sql}"))
    df = df.where(F.col(_CLAUSE).isNotNull()).drop(_CLAUSE)
    if "true" not in deletes:
        df = df.drop(IS_DELETED_COL)
    result = tbl.write(df, "upsert", options=session.write_options(), read_snapshot=snap)
    return write_outcome(session.spark, result)


def _read_source(session: SqlContext, stmt: MergeInto) -> tuple[DataFrame, str]:
    """The source rows and their alias: a table (a hudilite one without its meta columns)
    or a query, read through the session's views."""
    if isinstance(stmt.source, TableName):
        s_alias = stmt.source_alias or stmt.source.table
        source_sql = session.views.rewrite(
            "SELECT * FROM " + ".".join(quote(p) for p in (stmt.source.db, stmt.source.table) if p)
        )
    else:
        s_alias = stmt.source_alias or "source"
        source_sql = session.views.rewrite(stmt.source)
    source = session.spark.sql(source_sql)
    if isinstance(stmt.source, TableName) and session.is_hudilite(stmt.source):
        source = strip_meta(source)
    return source, s_alias


def _matched_keys(
    stmt: MergeInto, display: str, t_alias: str, s_alias: str, config: cfg.TableConfig
) -> dict[str, str]:
    """The source expression the ``ON`` condition equates with each record key column, or
    a SqlError when it leaves one out."""
    keys = key_expressions(stmt.on, t_alias, config.record_key_fields)
    if keys is None:
        pk = ", ".join(f"{t_alias}.{k} = {s_alias}.{k}" for k in config.record_key_fields)
        raise SqlError(
            f"MERGE INTO {display}: the ON condition must equate every primary key column "
            f"of the target with a source value (e.g. ON {pk}), got: {stmt.on}"
        )
    return keys


def _combine_source(session: SqlContext, source: DataFrame, scope: _Scope) -> tuple[str, list[str]]:
    """The source as a session view, and the table's ordering fields it has. With all of
    them (on a keyed table), source rows with the same key are combined first: the
    greatest ordering value wins, then the later row (Hudi's precombine)."""
    config, s_alias, source_cols = scope.config, scope.s_alias, scope.source_cols
    ordering = [f for f in config.ordering_fields if f.lower() in source_cols]
    source_view = session.views.register_frame(source, "merge_source")
    if ordering and len(ordering) == len(config.ordering_fields) and not is_keyless(config):
        part = ", ".join(scope.keys[k] for k in config.record_key_fields)
        order = ", ".join(
            f"{quote(s_alias)}.{quote(source_cols[f.lower()])} DESC" for f in ordering
        )
        inner = (
            f"SELECT {quote(s_alias)}.*, monotonically_increasing_id() AS {_SEQ} "
            f"FROM {quote(source_view)} AS {quote(s_alias)}"
        )
        ranked = (
            f"SELECT {quote(s_alias)}.*, row_number() OVER (PARTITION BY {part} "
            f"ORDER BY {order}, {_SEQ} DESC) AS {_RANK} FROM ({inner}) AS {quote(s_alias)}"
        )
        combined = session.spark.sql(f"SELECT * FROM ({ranked}) WHERE {_RANK} = 1").drop(
            _RANK, _SEQ
        )
        source_view = session.views.register_frame(combined, "merge_source_combined")
    return source_view, ordering


def _join(session: SqlContext, stmt: MergeInto, scope: _Scope, source_view: str) -> _Join:
    """Source left-joined to the target's snapshot (a full join when a ``WHEN NOT MATCHED
    BY SOURCE`` clause needs the target rows no source row matches, with a marker telling
    source rows from none)."""
    t_alias, s_alias = scope.t_alias, scope.s_alias
    target_view = session.views.table_view(stmt.target)
    data_cols = ", ".join(quote(f.name) for f in scope.schema.fields)
    if is_keyless(scope.config):
        # Hudi's MERGE INTO a table without a record key (MergeIntoHoodieTableCommand,
        # "prepped"): the source is joined with the target on any condition, a matched
        # row carries the target row's _hoodie_record_key (an update or delete of that
        # record), an unmatched one none (an insert, its key generated).
        data_cols += f", {quote(RECORD_KEY_COL)} AS {_TARGET_KEY}"
    by_source = any(isinstance(c, WhenNotMatchedBySource) for c in stmt.clauses)
    source_from = f"{quote(source_view)} AS {quote(s_alias)}"
    if by_source:
        source_from = (
            f"(SELECT *, true AS {_FROM_SOURCE} FROM {quote(source_view)}) AS {quote(s_alias)}"
        )
    joined_from = (
        f"FROM {source_from} {'FULL OUTER' if by_source else 'LEFT'} JOIN "
        f"(SELECT {data_cols}, true AS {_MATCHED} FROM {quote(target_view)}) "
        f"AS {quote(t_alias)} ON {stmt.on}"
    )
    matched = f"{quote(t_alias)}.{_MATCHED} IS NOT NULL"
    not_matched = f"NOT ({matched})"
    not_matched_by_source = "false"
    if by_source:
        from_source = f"{quote(s_alias)}.{_FROM_SOURCE}"
        matched = f"{matched} AND {from_source} IS NOT NULL"
        not_matched = f"{quote(t_alias)}.{_MATCHED} IS NULL"
        not_matched_by_source = f"{from_source} IS NULL"
    return _Join(joined_from, matched, not_matched, not_matched_by_source)


def _check_single_match(
    session: SqlContext, display: str, joined_from: str, matched: str, t_alias: str, config: Any
) -> None:
    """Without an ordering field, two source rows matching one target row are an error."""
    fields = config.record_key_fields or (_TARGET_KEY,)  # a keyless table: the stored key
    keys = ", ".join(f"{quote(t_alias)}.{quote(k)}" for k in fields)
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


def _clause_conditions(clauses: list[_Clause], join: _Join) -> list[str]:
    """Per ``WHEN`` clause, the condition a joined row must meet for it: its kind's
    (matched, not matched, not matched by source) and its own ``AND`` condition."""
    conditions: list[str] = []
    for clause in clauses:
        if isinstance(clause, WhenMatched):
            base = join.matched
        elif isinstance(clause, WhenNotMatchedBySource):
            base = join.not_matched_by_source
        else:
            base = join.not_matched
        conditions.append(f"({base}) AND ({clause.condition})" if clause.condition else base)
    return conditions


def _clause_values(clause: _Clause, scope: _Scope) -> dict[str, str]:
    """Per target column, the value ``clause`` gives it (SQL over the joined rows)."""
    schema = scope.schema
    if isinstance(clause, WhenMatched | WhenNotMatchedBySource) and clause.action == "delete":
        return {f.name: scope.target_col(f.name) for f in schema.fields}
    if isinstance(clause, WhenNotMatchedBySource):
        return _by_source_update(clause, scope)
    if isinstance(clause, WhenMatched):
        assignments = clause.assignments
        if assignments == "*":
            return {f.name: scope.source_col(f.name, "UPDATE SET *") for f in schema.fields}
        return _matched_update(assignments or {}, scope)
    if isinstance(clause, WhenNotMatched):
        if clause.columns == "*":
            return {f.name: scope.source_col(f.name, "INSERT *") for f in schema.fields}
        return _insert_values(clause, scope)
    return {}


def _by_source_update(clause: WhenNotMatchedBySource, scope: _Scope) -> dict[str, str]:
    """``WHEN NOT MATCHED BY SOURCE THEN UPDATE SET``: the target's values, the assigned
    columns changed (never a record key column)."""
    display, schema = scope.display, scope.schema
    key_cols = {k.lower(): k for k in scope.config.record_key_fields}
    exprs = {f.name: scope.target_col(f.name) for f in schema.fields}
    for col, expr in (clause.assignments or {}).items():
        name = find_column(schema, col, "MERGE INTO NOT MATCHED BY SOURCE UPDATE", display)
        if name.lower() in key_cols:
            raise SchemaError(f"MERGE INTO {display}: cannot update primary key column {name!r}")
        exprs[name] = f"({expr})"
    return exprs


def _matched_update(assignments: dict[str, str], scope: _Scope) -> dict[str, str]:
    """``WHEN MATCHED THEN UPDATE SET col = expr, ...`` (``assignments``): the target's
    values, the assigned columns changed (a record key column only to the value it is
    matched with)."""
    display, schema, keys = scope.display, scope.schema, scope.keys
    key_cols = {k.lower(): k for k in scope.config.record_key_fields}
    exprs = {f.name: scope.target_col(f.name) for f in schema.fields}
    for col, expr in assignments.items():
        name = find_column(schema, col, "MERGE INTO UPDATE", display)
        if name.lower() in key_cols and expr != keys[key_cols[name.lower()]]:
            raise SchemaError(
                f"MERGE INTO {display}: cannot update primary key column {name!r} "
                f"(only to its matched value {keys[key_cols[name.lower()]]})"
            )
        exprs[name] = f"({expr})"
    return exprs


def _insert_values(clause: WhenNotMatched, scope: _Scope) -> dict[str, str]:
    """``WHEN NOT MATCHED THEN INSERT (cols) VALUES (...)``: the listed columns' values
    (every record key column among them), NULL for the others."""
    display, schema = scope.display, scope.schema
    columns = clause.columns
    values = clause.values or []
    if len(values) != len(columns):
        raise SchemaError(
            f"MERGE INTO {display}: INSERT lists {len(columns)} column(s) "
            f"but {len(values)} value(s)"
        )
    given = {
        find_column(schema, c, "MERGE INTO INSERT", display): f"({v})"
        for c, v in zip(columns, values, strict=True)
    }
    for k in scope.config.record_key_fields:
        if k not in given:
            raise SchemaError(f"MERGE INTO {display}: INSERT must give primary key column {k!r}")
    return {f.name: given.get(f.name, "NULL") for f in schema.fields}


def _merged_columns(
    clauses: list[_Clause], conditions: list[str], per_clause: list[dict[str, str]], scope: _Scope
) -> tuple[list[str], list[str]]:
    """The merged row's columns as SQL: per target column a ``CASE`` over the clauses'
    conditions, cast to the column's type, then the delete flag, (on a keyless table) the
    matched record's key and which clause applied (NULL: none, the row is dropped). Also
    returns each clause's delete flag (``"true"``/``"false"``)."""

    def case(values: list[str]) -> str:
        whens = " ".join(
            f"WHEN {cond} THEN {value}" for cond, value in zip(conditions, values, strict=True)
        )
        return f"CASE {whens} END"

    selects = [
        f"CAST({case([e[f.name] for e in per_clause])} AS {f.dataType.simpleString()}) "
        f"AS {quote(f.name)}"
        for f in scope.schema.fields
    ]
    deletes = [
        "true"
        if isinstance(c, WhenMatched | WhenNotMatchedBySource) and c.action == "delete"
        else "false"
        for c in clauses
    ]
    selects.append(f"{case(deletes)} AS {quote(IS_DELETED_COL)}")
    if is_keyless(scope.config):
        selects.append(f"{quote(scope.t_alias)}.{_TARGET_KEY} AS {quote(RECORD_KEY_COL)}")
    selects.append(f"{case([str(i) for i in range(len(clauses))])} AS {_CLAUSE}")
    return selects, deletes
