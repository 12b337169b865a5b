"""Table-level procedures: ``drop_partition``, ``truncate_table``, ``copy_to_table`` and
``copy_to_temp_view``.

``drop_partition`` and ``truncate_table`` (Hudi 1.0+) write Hudi's DELETE_PARTITION
``replacecommit`` through :meth:`hudilite.Table.delete_partitions` /
:meth:`~hudilite.Table.truncate`: no data file is rewritten, the partitions' file groups
are marked replaced and the cleaner removes them later, so every Hudi reader stops
seeing their rows at once and time travel keeps working until then. Hudi's whole-table
``truncate_table`` deletes and re-creates the table folder instead; a DELETE_PARTITION of
every partition keeps the history and is atomic. ``partition``/``partitions`` are
comma-separated partition paths as stored (``city=sf``, ``2024/01/31``).

``copy_to_table`` and ``copy_to_temp_view`` read the table like Hudi's Spark source
(``query_type`` snapshot, with ``as_of_instant``; incremental over
``(begin_instance_time, end_instance_time]``; read_optimized) through
:meth:`hudilite.Table.read`, so the rows stay in Spark; ``copy_to_table`` saves them with
``saveAsTable`` into Spark's catalog (not hudilite's), ``copy_to_temp_view`` registers a
Spark temporary view. Both return ``status`` 0.
"""

from __future__ import annotations

import time
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame

from hudilite.errors import HudiliteError
from hudilite.table.api import Table

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

_QUERY_TYPES = ("snapshot", "incremental", "read_optimized")


def _is_hudilite(ctx: ProcedureContext, name: str) -> bool:
    """Whether ``name`` is a table of hudilite's catalog (which would shadow a Spark
    table of that name in hudilite SQL)."""
    db, _, table = name.replace("`", "").rpartition(".")
    try:
        return ctx.catalog.table_exists((db or ctx.current_database).lower(), table.lower())
    except HudiliteError:  # not a valid hudilite name: cannot be one of its tables
        return False


def _partition_list(ctx: ProcedureContext, value: str | None, param: str) -> list[str]:
    parts = [p.strip().strip("/") for p in str(value or "").split(",")]
    parts = [p for p in parts if p]
    if not parts:
        raise ProcedureArgumentError(f"{ctx.procedure}: {param} names no partition: {value!r}")
    return parts


@procedure(
    "drop_partition",
    [
        Param("table", "string"),
        Param("partition", "string", required=True),
        Param("path", "string"),
    ],
    [Output("result")],
    "Deletes every row of the given partitions (a DELETE_PARTITION replacecommit).",
)
def drop_partition(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``Success`` once the partitions are dropped; an unknown partition is an error
    naming it and nothing is written."""
    tbl = ctx.table(args)
    partitions = _partition_list(ctx, args["partition"], "partition")
    tbl.delete_partitions(partitions, options=ctx.options)
    return [("Success",)]


@procedure(
    "truncate_table",
    [Param("table", "string"), Param("partitions", "string"), Param("path", "string")],
    [Output("result"), Output("time_cost", "long")],
    "Deletes every row of the table, or of the given partitions.",
)
def truncate_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row ``(SUCCESS, milliseconds)`` -- the row Hudi's code builds; Hudi's own
    procedure then drops it by mistake and returns no rows."""
    started = time.monotonic()
    tbl = ctx.table(args)
    if args["partitions"] is not None and str(args["partitions"]).strip():
        if not tbl.config.is_partitioned:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: TRUNCATE TABLE ... PARTITION is not supported for the "
                f"non-partitioned table {tbl.config.name}"
            )
        partitions = _partition_list(ctx, args["partitions"], "partitions")
        tbl.delete_partitions(partitions, options=ctx.options)
    else:
        tbl.truncate(options=ctx.options)
    return [("SUCCESS", int((time.monotonic() - started) * 1000))]


# ---------------------------------------------------------------------------------------
# copies


def _read(ctx: ProcedureContext, tbl: Table, args: dict[str, Any]) -> DataFrame:
    """The table read as ``query_type`` says (Hudi's ``spark.read.format("hudi")`` options)."""
    query_type = str(args["query_type"] or "snapshot").strip().lower()
    if query_type not in _QUERY_TYPES:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid query_type {args['query_type']!r}; use "
            f"{', '.join(_QUERY_TYPES)}"
        )
    begin = str(args["begin_instance_time"] or "").strip()
    end = str(args["end_instance_time"] or "").strip()
    as_of = str(args["as_of_instant"] or "").strip()
    if query_type == "incremental":
        if not begin:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: query_type 'incremental' needs begin_instance_time"
            )
        return tbl.read(query_type="incremental", start=begin, end=end or None)
    if begin or end:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: begin_instance_time/end_instance_time apply to query_type "
            f"'incremental' only, not {query_type!r}"
        )
    if query_type == "read_optimized":
        if as_of:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: as_of_instant applies to query_type 'snapshot' only"
            )
        return tbl.read(query_type="read_optimized")
    return tbl.read(as_of=as_of or None)


_READ_PARAMS = [
    Param("begin_instance_time", "string", default=""),
    Param("end_instance_time", "string", default=""),
    Param("as_of_instant", "string", default=""),
]


@procedure(
    "copy_to_table",
    [
        Param("table", "string"),
        Param("query_type", "string", default="snapshot"),
        Param("new_table", "string", required=True),
        *_READ_PARAMS,
        Param("save_mode", "string", default="overwrite"),
        Param("columns", "string", default=""),
        Param("path", "string"),
    ],
    [Output("status", "int")],
    "Copies the table (snapshot, incremental or read-optimized) into a Spark table.",
)
def copy_to_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Write the rows with ``saveAsTable(new_table)`` in Spark's catalog.

    Columns: the existing ``new_table``'s, else ``columns`` (comma-separated), else every
    column of the table including the ``_hoodie_*`` meta columns, as Hudi does.
    """
    save_mode = str(args["save_mode"] or "overwrite").strip().lower()
    if save_mode not in ("overwrite", "append"):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid save_mode {args['save_mode']!r}; use overwrite or append"
        )
    new_table = str(args["new_table"]).strip()
    if _is_hudilite(ctx, new_table):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: new_table {new_table!r} is a hudilite table; copy_to_table "
            "writes a Spark table, choose another name"
        )
    tbl = ctx.table(args)
    df = _read(ctx, tbl, args)
    if ctx.spark.catalog.tableExists(new_table):
        columns = ctx.spark.table(new_table).columns
    else:
        columns = [c.strip() for c in str(args["columns"] or "").split(",") if c.strip()]
        columns = columns or df.columns
    unknown = [c for c in columns if c not in df.columns]
    if unknown:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: column(s) {', '.join(unknown)} not in {tbl.config.name} "
            f"(columns: {', '.join(df.columns)})"
        )
    try:
        df.select(*[f"`{c}`" for c in columns]).write.mode(save_mode).saveAsTable(new_table)
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0]
        raise ProcedureError(f"{ctx.procedure}: cannot write {new_table}: {first}") from None
    return [(0,)]


@procedure(
    "copy_to_temp_view",
    [
        Param("table", "string"),
        Param("query_type", "string", default="snapshot"),
        Param("view_name", "string", required=True),
        *_READ_PARAMS,
        Param("replace", "boolean", default=False),
        Param("global", "boolean", default=False),
        Param("path", "string"),
    ],
    [Output("status", "int")],
    "Registers the table (snapshot, incremental or read-optimized) as a Spark temp view.",
)
def copy_to_temp_view(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A temporary view (``global`` → in ``global_temp``) of the rows as of now; an
    existing view is an error unless ``replace``."""
    tbl = ctx.table(args)
    df = _read(ctx, tbl, args)
    view = str(args["view_name"]).strip()
    try:
        if args["global"]:
            if args["replace"]:
                df.createOrReplaceGlobalTempView(view)
            else:
                df.createGlobalTempView(view)
        elif args["replace"]:
            df.createOrReplaceTempView(view)
        else:
            df.createTempView(view)
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0]
        raise ProcedureError(
            f"{ctx.procedure}: cannot create view {view!r}: {first} (use replace => true)"
        ) from None
    return [(0,)]
