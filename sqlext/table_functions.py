"""Hudi's SQL table-valued functions, read into Spark temp views for a query's ``FROM``.

Each takes a table name (``'t'``, ``'db.t'``) or a table path (any argument with ``/`` or
``:``) first, as in Hudi's Spark SQL (``TableValuedFunctions`` and the option parsers in
``org.apache.spark.sql.catalyst.plans.logical``):

* ``hudi_query(t, 'snapshot' | 'read_optimized')``: the table as a snapshot or
  read-optimized query (base files only on merge-on-read; on copy-on-write the same as a
  snapshot). Hudi takes no further argument in these modes. Hudi's ``hudi_query`` refuses
  ``'incremental'``; hudilite accepts ``hudi_query(t, 'incremental', start[, end])`` as
  ``hudi_table_changes(t, 'latest_state', start[, end])`` (a superset: no Hudi query
  changes meaning).
* ``hudi_table_changes(t, 'latest_state' | 'cdc', start[, end])``: the records committed in
  ``(start, end]`` (``'earliest'``: from the first commit); ``'cdc'`` gives Hudi's change
  rows (``op``, ``ts_ms``, ``before``, ``after``) and, as in Hudi, needs a table created
  with ``hoodie.table.cdc.enabled=true``.
* ``hudi_filesystem_view(t[, 'partition glob'])``: Hudi's ``FileSystemRelation``, one row
  per file slice of the file groups whose files the glob ``<base>/<glob>/*`` lists
  (without a glob: the files directly under the base path, a non-partitioned table's).
  Hudi builds the view on the write timeline with pending instants (it does not filter
  completed ones), so the files of a write in progress show up too.
* ``hudi_metadata(t)``: the table's metadata table as Hudi's data source reads it, one row
  per merged ``HoodieMetadataRecord`` (:mod:`~hudilite.sqlext.table_function_metadata`).

Any other function is left to Spark (``range(3)``, ``explode(...)``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, NamedTuple

from hudilite.procedures.fsview import display_path, filtered_view, glob_regex
from hudilite.procedures.registry import ProcedureArgumentError
from hudilite.table.api import Table

from .context import SqlContext, TableViews
from .statements import SqlParseError, TableName, UnsupportedStatementError
from .table_function_metadata import metadata_rows, metadata_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


__all__ = ["FILESYSTEM_VIEW_COLUMNS", "TABLE_FUNCTIONS", "register_function"]

# Hudi's incremental queries accept 'earliest' for "from the first commit".
_EARLIEST = "19700101000000000"

#: The functions whose first argument names a table (or a path): the Thrift sandbox checks
#: their paths.
TABLE_FUNCTIONS = frozenset(
    ("hudi_query", "hudi_table_changes", "hudi_filesystem_view", "hudi_metadata")
)

#: ``hudi_filesystem_view``'s columns, names and Spark types as Hudi's ``FileSystemRelation``.
FILESYSTEM_VIEW_COLUMNS = (
    ("File_ID", "string"),
    ("Partition_Path", "string"),
    ("Base_Instant_Time", "string"),
    ("Base_File_Path", "string"),
    ("Base_File_Size", "bigint"),
    ("Log_File_Count", "bigint"),
    ("Log_File_Size", "bigint"),
    ("Log_File_Scheduled", "bigint"),
    ("Log_File_Unscheduled", "bigint"),
)

_CDC_ENABLED = "hoodie.table.cdc.enabled"


def register_function(
    session: SqlContext, views: TableViews, function: str, args: tuple[Any, ...]
) -> str | None:
    """The temp view a Hudi table function reads in ``session``, registered on ``views``;
    ``None`` for a function that is not Hudi's (Spark resolves it)."""
    if function == "hudi_query":
        return _hudi_query(_Ctx(session, views), args)
    if function == "hudi_table_changes":
        return _table_changes(_Ctx(session, views), args)
    if function == "hudi_filesystem_view":
        return _filesystem_view(_Ctx(session, views), args)
    if function == "hudi_metadata":
        return _metadata(_Ctx(session, views), args)
    return None


class _Ctx(NamedTuple):
    """The session a function runs in and the views it registers on."""

    session: SqlContext
    views: TableViews


def _texts(function: str, args: tuple[Any, ...], usage: str, low: int, high: int) -> list[str]:
    """The arguments as strings (Hudi evaluates each to its string form), their count in
    ``[low, high]``; a NULL argument is refused by position."""
    if not low <= len(args) <= high:
        raise SqlParseError(f"{function} expects arguments ({usage}), got {len(args)} argument(s)")
    for i, arg in enumerate(args, 1):
        if arg is None:
            raise SqlParseError(f"{function} argument {i} is NULL; expected ({usage})")
    return [str(a) for a in args]


def _is_path(target: str) -> bool:
    return "/" in target or ":" in target


def _name(target: str) -> TableName:
    parts = target.split(".")
    if len(parts) > 2 or not all(parts):
        raise SqlParseError(f"invalid table name {target!r}: expected 'table' or 'db.table'")
    return TableName(parts[0] if len(parts) == 2 else None, parts[-1])


def _table(ctx: _Ctx, target: str) -> Table:
    """The table a function's first argument names; its location joins the statement's
    reads (an INSERT reading its own target carries the target's snapshot)."""
    tbl = (
        Table.load(ctx.session.spark, target)
        if _is_path(target)
        else ctx.session.table(_name(target))
    )
    ctx.views.reads.add(tbl.path)
    return tbl


def _frame(ctx: _Ctx, df: DataFrame, label: str, key: str) -> str:
    return ctx.views.register_frame(df, f"{label}_{hashlib.sha1(key.encode()).hexdigest()[:12]}")


def _instants(start: str, end: str | None) -> tuple[str, str | None]:
    return (_EARLIEST if start.lower() == "earliest" else start), end


def _hudi_query(ctx: _Ctx, args: tuple[Any, ...]) -> str:
    usage = "table_name or table_path, query_type[, start_instant[, end_instant]]"
    target, mode, *rest = _texts("hudi_query", args, usage, 2, 4)
    if mode in ("snapshot", "read_optimized"):
        if rest:
            extra = ", ".join(repr(r) for r in rest)
            raise SqlParseError(
                f"hudi_query: no additional args are expected in `{mode}` mode, got {extra}"
            )
        if not _is_path(target):
            return ctx.views.table_view(_name(target), query_type=mode)
        tbl = _table(ctx, target)
        return _frame(ctx, tbl.read(query_type=mode), f"query_{mode}", tbl.path)  # type: ignore[arg-type]
    if mode == "incremental":
        if not rest:
            raise SqlParseError(
                "hudi_query in `incremental` mode needs a start instant: "
                "hudi_query(table, 'incremental', start_instant[, end_instant])"
            )
        begin, end = _instants(rest[0], rest[1] if len(rest) > 1 else None)
        tbl = _table(ctx, target)
        df = tbl.read(query_type="incremental", start=begin, end=end)
        return _frame(ctx, df, "changes", f"{tbl.path}|{begin}|{end}")
    raise UnsupportedStatementError(
        f"'hudi_query' doesn't support `{mode}`; use 'snapshot', 'read_optimized' or 'incremental'"
    )


def _table_changes(ctx: _Ctx, args: tuple[Any, ...]) -> str:
    usage = "table_name or table_path, incremental_format, start_instant, [end_instant]"
    target, fmt, start, *rest = _texts("hudi_table_changes", args, usage, 3, 4)
    begin, end = _instants(start, rest[0] if rest else None)
    kind = fmt.lower()
    if kind not in ("latest_state", "cdc"):
        raise UnsupportedStatementError(
            f"hudi_table_changes query type {fmt!r} is not supported; use 'latest_state' or 'cdc'"
        )
    tbl = _table(ctx, target)
    if kind == "latest_state":
        df = tbl.read(query_type="incremental", start=begin, end=end)
        return _frame(ctx, df, "changes", f"{tbl.path}|{begin}|{end}")
    if str(tbl.state().config.props.get(_CDC_ENABLED, "false")).lower() != "true":
        raise UnsupportedStatementError(
            f"hudi_table_changes query type 'cdc' is not supported on {target}: "
            f"the table was not created with {_CDC_ENABLED}=true (as in Hudi, a cdc query "
            "needs it); use 'latest_state'"
        )
    reader = (
        ctx.session.spark.read.format("hudilite")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.query.incremental.format", "cdc")
        .option("hoodie.datasource.read.begin.instanttime", begin)
    )
    if end is not None:
        reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    return _frame(ctx, reader.load(tbl.path), "cdc", f"{tbl.path}|{begin}|{end}")


def _filesystem_view(ctx: _Ctx, args: tuple[Any, ...]) -> str:
    usage = "table_name or table_path[, partition_glob]"
    target, *rest = _texts("hudi_filesystem_view", args, usage, 1, 2)
    tbl = _table(ctx, target)
    state = tbl.state()
    # Hudi lists `<base>/<glob>/*`: the files of the directories the glob names.
    glob = rest[0].strip().strip("/") if rest else ""
    try:
        wanted = glob_regex(glob)
    except ProcedureArgumentError as e:
        raise SqlParseError(f"hudi_filesystem_view: {e}") from None
    # Hudi's view is built on the write timeline as is, pending instants included.
    view = filtered_view(state, "", False, True, False)
    partitions = [p for p in view.partitions() if wanted.fullmatch(p)]
    rows = []
    for group in view.file_groups(partitions):
        for piece in group.slices:
            base, logs = piece.base_file, piece.log_files
            # Hudi splits the log bytes by whether the instant in a log's name is the
            # slice's base instant ("scheduled": every log of a version-6 table) or not.
            scheduled = sum(f.size for f in logs if f.name.base_instant == piece.base_instant)
            total = sum(f.size for f in logs)
            rows.append(
                (
                    group.file_id,
                    group.partition,
                    piece.base_instant,
                    display_path(state.gw, base.path) if base is not None else "",
                    base.size if base is not None else -1,
                    len(logs),
                    total,
                    scheduled,
                    total - scheduled,
                )
            )
    schema = ", ".join(f"{name} {kind}" for name, kind in FILESYSTEM_VIEW_COLUMNS)
    df = ctx.session.spark.createDataFrame(rows, schema)
    return _frame(ctx, df, "fsview", f"{tbl.path}|{glob}")


def _metadata(ctx: _Ctx, args: tuple[Any, ...]) -> str:
    (target,) = _texts("hudi_metadata", args, "table_name or table_path", 1, 1)
    tbl = _table(ctx, target)
    rows = metadata_rows(tbl.state(), target)
    df = ctx.session.spark.createDataFrame(rows, metadata_schema())
    return _frame(ctx, df, "metadata", tbl.path)
