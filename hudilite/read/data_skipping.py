"""Data skipping: the file slices a predicate cannot match, proved by column statistics.

Given a read's file slices and its :class:`~hudilite.read.where.Predicate`, :func:`skip_slices`
keeps a slice unless the metadata table's ``column_stats`` (Hudi's, or hudilite's:
:mod:`hudilite.metadata.column_stats`) prove that no row of it satisfies the predicate. Hudi's
rules (``DataSkippingUtils``, ``HoodieFileIndex``) hold:

* a slice is kept when its base file or any of its log files may match, and when any of its
  files has no statistics for a column the predicate names (a file the index does not
  cover; a log file is covered by its own record, so updates in logs are seen);
* per file and column: ``c = v`` may hold when ``min <= v <= max``; ``c < v`` when
  ``min < v``; ``c > v`` when ``max > v`` (likewise ``<=``, ``>=``); ``c != v`` unless
  ``min = max = v``; ``IN`` as an OR of equalities; ``c IS NULL`` when ``nullCount > 0``;
  ``c IS NOT NULL`` when ``valueCount > nullCount``. A NULL operand makes a comparison NULL,
  which never holds (SQL's three-valued logic), so nulls never make a comparison match;
* ``AND``/``OR``/``NOT`` combine two bounds per expression -- whether it may be TRUE and
  whether it may be FALSE for some row -- so ``NOT`` is exact (``NOT e`` holds where ``e`` is
  FALSE). Anything else (column-to-column comparisons, a floating-point column, where NaN
  compares above every number) may be both.

Only the files of the plan are looked up; statistics come from the metadata table of the
same timeline the plan reads (deltacommits of pending data instants are ignored). A read of
the latest state also skips whole partitions by ``partition_stats`` when the table keeps it
(:mod:`hudilite.metadata.partition_stats`: bounds over each partition's latest slices, so
not for time travel), with the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import expressions as exp

from hudilite.filegroup.slices import FileSlice
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import listing
from hudilite.metadata import partition_stats as ps
from hudilite.read.where import Predicate, _Builder
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.timeline import Timeline

#: Stats of one file: column -> record (absent: no statistics).
FileStats = Mapping[str, csr.ColumnStats]


@dataclass(frozen=True)
class Maybe:
    """Whether an expression may be TRUE, and may be FALSE, for some row of a file."""

    true: bool
    false: bool


_BOTH = Maybe(True, True)
_FLIPS: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.LT: exp.GT,
    exp.GT: exp.LT,
    exp.LTE: exp.GTE,
    exp.GTE: exp.LTE,
}
_NEGATIONS: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.EQ: exp.NEQ,
    exp.NEQ: exp.EQ,
    exp.LT: exp.GTE,
    exp.GTE: exp.LT,
    exp.GT: exp.LTE,
    exp.LTE: exp.GT,
}


class _Evaluator:
    """A parsed predicate evaluated on one file's statistics."""

    def __init__(self, predicate: Predicate, schema: pa.Schema) -> None:
        self.tree = sqlglot.parse_one(predicate.sql, read="spark")
        self.builder = _Builder(predicate.sql, schema)
        self.schema = schema

    def evaluate(self, stats: FileStats) -> Maybe:
        return self.node(self.tree, stats)

    def node(self, node: exp.Expr, stats: FileStats) -> Maybe:
        if isinstance(node, exp.Paren):
            return self.node(node.this, stats)
        if isinstance(node, exp.And):
            a, b = self.node(node.this, stats), self.node(node.expression, stats)
            return Maybe(a.true and b.true, a.false or b.false)
        if isinstance(node, exp.Or):
            a, b = self.node(node.this, stats), self.node(node.expression, stats)
            return Maybe(a.true or b.true, a.false and b.false)
        if isinstance(node, exp.Not):
            inner = self.node(node.this, stats)
            return Maybe(inner.false, inner.true)
        if isinstance(node, exp.Boolean):
            return Maybe(bool(node.this), not bool(node.this))
        if isinstance(node, exp.Column):  # a boolean column: ``c = TRUE``
            return self.comparison(exp.EQ, node, exp.true(), stats)
        if type(node) in _NEGATIONS:
            return self.comparison(type(node), node.this, node.expression, stats)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            s = self.stats_of(node.this, stats)
            if s is None:
                return _BOTH
            return Maybe(s.null_count > 0, s.value_count > s.null_count)
        if isinstance(node, exp.Between):
            low = self.comparison(exp.GTE, node.this, node.args["low"], stats)
            high = self.comparison(exp.LTE, node.this, node.args["high"], stats)
            return Maybe(low.true and high.true, low.false or high.false)
        if isinstance(node, exp.In) and node.expressions and not node.args.get("query"):
            parts = [self.comparison(exp.EQ, node.this, v, stats) for v in node.expressions]
            # may be FALSE only if some value differs from every listed one
            return Maybe(any(p.true for p in parts), all(p.false for p in parts))
        return _BOTH

    def stats_of(self, column: exp.Expr, stats: FileStats) -> csr.ColumnStats | None:
        if not isinstance(column, exp.Column):
            return None
        return stats.get(self.builder.column_name(column))

    def comparison(
        self, op: type[exp.Expr], left: exp.Expr, right: exp.Expr, stats: FileStats
    ) -> Maybe:
        if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
            left, right = right, left
            op = _FLIPS.get(op, op)
        if not isinstance(left, exp.Column) or isinstance(right, exp.Column):
            return _BOTH
        s = self.stats_of(left, stats)
        if s is None:
            return _BOTH
        kind = self.schema.field(self.builder.column_name(left)).type
        if pa.types.is_floating(kind):
            return _BOTH  # NaN is above every number and absent from the bounds
        literal = self.builder.literal(right, kind)
        if not literal.is_valid:
            return Maybe(False, False)  # c op NULL is NULL for every row
        value = _comparable(literal, kind)
        if s.value_count <= s.null_count:
            return Maybe(False, False)  # only nulls: every comparison is NULL
        low, high = s.value(s.min), s.value(s.max)
        if low is None or high is None:
            return _BOTH
        try:
            return Maybe(_may(op, low, high, value), _may(_NEGATIONS[op], low, high, value))
        except TypeError:
            return _BOTH  # statistics of another type than the column's (schema evolution)


def _may(op: type[exp.Expr], low: Any, high: Any, v: Any) -> bool:
    """Whether some value in ``[low, high]`` satisfies ``value op v``."""
    if op is exp.EQ:
        return bool(low <= v <= high)
    if op is exp.NEQ:
        return not (low == v == high)
    if op is exp.LT:
        return bool(low < v)
    if op is exp.LTE:
        return bool(low <= v)
    if op is exp.GT:
        return bool(high > v)
    return bool(high >= v)  # GTE


def _comparable(literal: pa.Scalar, kind: pa.DataType) -> Any:
    """A literal in the domain of the statistics: dates as days, timestamps as integers of
    their unit, decimals as :class:`~decimal.Decimal`, the rest as Python values."""
    if pa.types.is_date32(kind):
        return int(literal.cast(pa.int32()).as_py())
    if pa.types.is_timestamp(kind):
        return int(literal.cast(pa.int64()).as_py())
    return literal.as_py()


def slice_files(file_slice: FileSlice) -> list[str]:
    """The names of a slice's files (base file and log files)."""
    names = [file_slice.base_file.path.rsplit("/", 1)[-1]] if file_slice.base_file else []
    return names + [log.path.rsplit("/", 1)[-1] for log in file_slice.log_files]


def skip_slices(
    slices: Sequence[FileSlice],
    predicate: Predicate,
    schema: pa.Schema,
    stats: Mapping[tuple[str, str], FileStats],
    *,
    read_optimized: bool = False,
    partitions: Mapping[str, FileStats] | None = None,
) -> list[FileSlice]:
    """The ``slices`` that may hold a row satisfying ``predicate`` (see the module docstring).
    ``stats``: (partition, file name) -> the file's statistics; ``read_optimized``: only base
    files are read, so only they count; ``partitions``: partition -> its aggregate statistics
    (partition_stats), which may rule out all of a partition's slices."""
    evaluator = _Evaluator(predicate, schema)
    columns = predicate.columns
    ruled_out = {
        p
        for p, found in (partitions or {}).items()
        if columns <= set(found) and not evaluator.evaluate(found).true
    }
    kept = []
    for file_slice in slices:
        if file_slice.partition in ruled_out:
            continue
        names = slice_files(file_slice)
        if read_optimized:
            names = names[:1] if file_slice.base_file else []
        partition = file_slice.partition
        may = not names
        for name in names:
            found = stats.get((partition, name)) or {}
            if not columns <= set(found) or evaluator.evaluate(found).true:
                may = True
                break
        if may:
            kept.append(file_slice)
    return kept


@dataclass(frozen=True)
class TableStats:
    """The statistics a read skips by: per file, and (latest reads) per partition."""

    files: dict[tuple[str, str], dict[str, csr.ColumnStats]]
    partitions: dict[str, dict[str, csr.ColumnStats]] | None = None


def table_stats(
    gw: FileSystemGateway,
    props: Mapping[str, str],
    timeline: Timeline,
    slices: Sequence[FileSlice],
    columns: Iterable[str],
    *,
    latest: bool = False,
) -> TableStats | None:
    """The column statistics of the slices' files from the table's column_stats partition
    (and, for a read of the latest state, its partitions' from partition_stats), or None
    when the table keeps none a read may use."""
    if not cs.listed(props):
        return None
    metadata = listing.usable(gw, props)
    if metadata is None:
        return None
    cols = list(columns)
    files = [(s.partition, n) for s in slices for n in slice_files(s)]
    keys = frozenset(csr.stats_key(p, n, c) for p, n in files for c in cols)
    records = cs.read_partition(gw, timeline, metadata, keys=keys)  # only the plan's records
    by_partition = None
    if latest and ps.listed(props):
        partitions = {s.partition for s in slices}
        wanted = frozenset(ps.partition_key(p, c) for p in partitions for c in cols)
        part_records = ps.read_partition(gw, timeline, metadata, wanted)
        by_partition = ps.by_partition(part_records, partitions, cols)
    return TableStats(cs.stats_by_file(records, files, cols), by_partition)


# ------------------------------------------------------------- filters Spark hands a source

_SPARK_FILTER_OPS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


def _sql_literal(value: Any) -> str | None:
    """A Python value of a Spark filter as a SQL literal :class:`Predicate` takes, or None
    (timestamps are left out: their literal's zone would be Spark's session's)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, date) and not isinstance(value, datetime):
        return f"DATE '{value.isoformat()}'"
    return None


def _sql_of(f: Any) -> str | None:
    kind = type(f).__name__
    if kind == "Not":
        inner = _sql_of(f.child)
        return None if inner is None else f"NOT ({inner})"
    attribute = getattr(f, "attribute", None)
    if not isinstance(attribute, tuple) or len(attribute) != 1:
        return None  # a nested field: no statistics
    column = "`" + str(attribute[0]).replace("`", "``") + "`"
    if kind == "IsNull":
        return f"{column} IS NULL"
    if kind == "IsNotNull":
        return f"{column} IS NOT NULL"
    if kind == "In":
        values = [_sql_literal(v) for v in f.value]
        if not values or any(v is None for v in values):
            return None
        return f"{column} IN ({', '.join(v for v in values if v is not None)})"
    if kind in _SPARK_FILTER_OPS:
        literal = _sql_literal(f.value)
        return None if literal is None else f"{column} {_SPARK_FILTER_OPS[kind]} {literal}"
    return None


def filters_sql(filters: Iterable[Any]) -> str | None:
    """The AND of the filters Spark pushes to a Python data source (``pyspark.sql.
    datasource.Filter``) that this module can skip by, as SQL; None when there is none.
    The others are left out: the AND of a subset holds wherever all of them do, so a file
    skipped by it holds no row Spark would keep."""
    parts = [p for p in (_sql_of(f) for f in filters) if p is not None]
    return " AND ".join(f"({p})" for p in parts) if parts else None
