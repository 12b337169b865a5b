"""Repair procedures: ``repair_add_partition_meta`` and ``show_invalid_parquet``.

``repair_add_partition_meta(table, dry_run)`` finds partition folders without
``.hoodie_partition_metadata`` -- readers (hudilite's view, Hudi's file-system listing)
only treat folders holding that file as partitions, so their data is invisible -- and,
unless ``dry_run``, writes it as Hudi's ``HoodiePartitionMetadata`` does (text form,
``commitTime`` = the latest completed commit, ``partitionDepth``). Hudi only looks three
levels down (``yyyy/mm/dd`` layouts); here a partition folder is any non-hidden folder
holding a partition metadata file or Hudi data files, at any depth. Rows:
``(partition_path, metadata_is_present Yes|No, action Repaired|None)``, sorted.

``show_invalid_parquet(path, parallelism, limit, needDelete, partitions, instants)``
checks the footer of every ``.parquet`` file in the table's partitions in Spark tasks
(``parallelism`` of them at most) and reports the files that are not valid Parquet, as
full URIs; with ``needDelete`` it deletes them, and a file deleted is not reported (as
Hudi). ``partitions`` keeps partitions starting with one of the comma-separated prefixes;
``instants`` keeps files whose name carries one of those commit times. Hudi reports only
footers failing with "is not a Parquet file" (bad magic, too short); any file whose
footer cannot be read is reported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow.parquet as pq

from hudilite.filegroup.slices import join_path
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import (
    BaseFileName,
    is_partition_metadata_name,
    parse_data_file_name,
    partition_depth,
    write_partition_metadata,
)

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

#: Non-hidden folders that never hold table data (as the file-system view skips them).
_SKIPPED_DIRS = frozenset({"_temporary", "__MACOSX"})


def partition_folders(gw: FileSystemGateway) -> dict[str, bool]:
    """Partition folder → whether it has partition metadata.

    A folder counts when it holds partition metadata or Hudi data files; hidden folders
    (``.hoodie``, ``.spark-staging``) and Spark's ``_temporary`` are never partitions.
    """
    out: dict[str, bool] = {}
    stack = [""]
    while stack:
        folder = stack.pop()
        has_meta = has_data = False
        for entry in gw.list_dir(folder):
            if entry.is_dir:
                if not entry.name.startswith(".") and entry.name not in _SKIPPED_DIRS:
                    stack.append(join_path(folder, entry.name))
            elif is_partition_metadata_name(entry.name):
                has_meta = True
            elif parse_data_file_name(entry.name) is not None:
                has_data = True
        if has_meta or has_data:
            out[folder] = has_meta
    return out


@procedure(
    "repair_add_partition_meta",
    [Param("table", "string"), Param("dry_run", "boolean", default=True), Param("path", "string")],
    [Output("partition_path"), Output("metadata_is_present"), Output("action")],
    "Adds missing .hoodie_partition_metadata files to partition folders (dry run by default).",
)
def repair_add_partition_meta(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per partition folder; ``Repaired`` where the metadata file was written."""
    state = ctx.table(args).state()
    folders = partition_folders(state.gw)
    last = state.timeline.last_commit()
    rows = []
    for partition, present in sorted(folders.items()):
        action = "None"
        if not present and not args["dry_run"]:
            if last is None:
                raise ProcedureError(
                    f"{ctx.procedure}: cannot repair {partition!r}: {state.config.name} has no "
                    "completed commit to record in its partition metadata"
                )
            write_partition_metadata(
                state.gw, partition, last.requested_time, partition_depth(partition)
            )
            action = "Repaired"
        rows.append((partition, "Yes" if present else "No", action))
    return rows


def _check_files(
    gw: FileSystemGateway, delete: bool, paths: Iterable[str]
) -> Iterator[tuple[str, bool]]:
    """Executor side: ``(path, deleted)`` for every path whose Parquet footer is unreadable."""
    for rel in paths:
        try:
            with gw.open_input_file(rel) as f:
                pq.ParquetFile(f).metadata  # noqa: B018 - reading the footer is the check
            continue
        except Exception:  # any unreadable footer (bad magic, truncated, empty) counts
            pass
        deleted = False
        if delete:
            try:
                deleted = gw.delete_file(rel)
            except OSError:
                deleted = False
        yield rel, deleted


@procedure(
    "show_invalid_parquet",
    [
        Param("path", "string"),
        Param("parallelism", "integer", default=100),
        Param("limit", "integer", default=100),
        Param("needDelete", "boolean", default=False),
        Param("partitions", "string", default=""),
        Param("instants", "string", default=""),
        Param("need_delete", "boolean", default=False),
        Param("table", "string"),
    ],
    [Output("path")],
    "Lists (and optionally deletes) the .parquet files of the table that are not valid Parquet.",
)
def show_invalid_parquet(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Full URIs of the invalid Parquet files, at most ``limit``."""
    if args["parallelism"] < 1:
        raise ProcedureArgumentError(f"{ctx.procedure}: parallelism must be at least 1")
    # path first: Hudi's only way to name the table.
    lookup = {"path": args["path"]} if args["path"] else {"table": args["table"]}
    state = ctx.table(lookup).state()
    gw = state.gw
    prefixes = [p.strip().strip("/") for p in str(args["partitions"] or "").split(",")]
    prefixes = [p for p in prefixes if p]
    instants = {t.strip() for t in str(args["instants"] or "").split(",") if t.strip()}
    paths: list[str] = []
    for partition in state.view.partitions():
        if prefixes and not any(partition.startswith(p) for p in prefixes):
            continue
        for entry in gw.list_dir(partition):
            if entry.is_dir or not entry.name.endswith(".parquet"):
                continue
            if instants:
                name = BaseFileName.parse(entry.name)
                if name is None or name.instant_time not in instants:
                    continue
            paths.append(join_path(partition, entry.name))
    if not paths:
        return []
    delete = bool(args["needDelete"] or args["need_delete"])
    rdd = ctx.spark.sparkContext.parallelize(paths, min(len(paths), args["parallelism"]))
    # Only paths come back to the driver, never file contents.
    found = rdd.mapPartitions(lambda it: _check_files(gw, delete, it)).collect()
    rows = [(gw.uri(rel),) for rel, deleted in sorted(found) if not deleted]
    limit = args["limit"]
    return rows[:limit] if limit is not None and limit >= 0 else rows
