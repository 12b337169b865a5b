"""Repairs of the table's own files: ``repair_overwrite_hoodie_props`` and
``repair_migrate_partition_meta``, with Hudi's parameters and output columns
(``RepairOverwriteHoodiePropsProcedure``, ``RepairMigratePartitionMetaProcedure`` in
``hudi-spark-datasource/hudi-spark/.../command/procedures/``).

``repair_overwrite_hoodie_props(table, new_props_file_path)`` replaces
``.hoodie/hoodie.properties`` with the properties file at ``new_props_file_path`` (any
path or URI the storage layer reads) and returns one row per key of the old or new file,
sorted: ``(property, old_value, new_value)``, ``null`` (the text) where a file lacks the
key. As in Hudi the new file must name the table (``hoodie.table.name``) and the checksum
is stamped on write, so the new values are those read back. Beyond Hudi, a file hudilite
could not load as a table config (an unknown table type, no table version...) is refused
naming the file, and nothing is written; the checksum is always recomputed (Hudi keeps a
supplied one, and a wrong one makes the table unreadable). The write happens under the
table lock with the backup-then-replace of :mod:`hudilite.tablestate.properties_file`; a
table keeping its metadata table keeps the ``files`` partition listed, and the
metadata-table guard then settles whatever the new properties imply.

``repair_migrate_partition_meta(table, dry_run)`` moves each partition's metadata from the
text file ``.hoodie_partition_metadata`` to Hudi's base-file form
``.hoodie_partition_metadata.parquet`` (a Parquet file without rows whose footer holds
``commitTime`` and ``partitionDepth``, as Hudi's ``ParquetUtils.writeMetaFile``). Rows:
``(partition_path, text_metafile_present, base_metafile_present, action)`` per partition
folder (one holding partition metadata in either form), sorted; presence as ``true``/
``false`` text; action ``MIGRATE`` (dry run, a text file to migrate), ``NONE`` (dry run,
nothing to do) or ``MIGRATED``. A migration writes the Parquet file where missing
(``commitTime`` = the latest completed commit, as Hudi), deletes the text file and sets
``hoodie.partition.metafile.use.base.format=true``. Hudi sets that property in a dry run
too; here a dry run writes nothing.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite import config as cfg
from hudilite.errors import HudiliteError
from hudilite.filegroup.slices import join_path
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.properties import read_table_properties
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import PARTITION_METADATA_FILE, partition_depth
from hudilite.tablestate import properties_file
from hudilite.write.lock import table_lock
from hudilite.write.metadata_guard import apply_guard

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)
from .repair import partition_folders

#: Hudi's ``HoodieTableConfig.PARTITION_METAFILE_USE_BASE_FORMAT``.
USE_BASE_FORMAT_KEY = cfg.PARTITION_METAFILE_USE_BASE_FORMAT.name
#: The base-file form of the partition metadata (Parquet tables).
BASE_METAFILE = PARTITION_METADATA_FILE + ".parquet"


def _read_props_file(proc: str, path: str) -> dict[str, str]:
    """The properties at ``path`` (a local path or URI), or an error naming it."""
    folder, name = posixpath.split(path.rstrip("/"))
    if not name:
        raise ProcedureArgumentError(f"{proc}: new_props_file_path {path!r} names no file")
    try:
        data = FileSystemGateway(folder or ".").read_bytes(name)
    except (FileNotFoundError, IsADirectoryError):
        raise ProcedureArgumentError(
            f"{proc}: new_props_file_path {path!r} does not exist"
        ) from None
    return properties_file.decode(data)


@procedure(
    "repair_overwrite_hoodie_props",
    [
        Param("table", "string"),
        Param("new_props_file_path", "string", required=True),
        Param("path", "string"),
    ],
    [Output("property"), Output("old_value"), Output("new_value")],
    "Replaces hoodie.properties with the given properties file; lists old and new values.",
)
def repair_overwrite_hoodie_props(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row ``(property, old_value, new_value)`` per key of the old or new
    ``hoodie.properties``, sorted by key, ``null`` where a file lacks the key; the new
    values are the file as stored (checksum stamped)."""
    gw = ctx.table(args).gw
    source = str(args["new_props_file_path"])
    new = _read_props_file(ctx.procedure, source)
    if not new.get("hoodie.table.name"):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {source} lacks hoodie.table.name (the table's name is required)"
        )
    try:
        cfg.TableConfig.from_properties(
            {**new, properties_file.CHECKSUM_KEY: properties_file.checksum(new)}
        )
    except HudiliteError as exc:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {source} is not a table config hudilite can load: {exc}"
        ) from None
    with table_lock(gw):
        old = read_table_properties(gw)
        stored = store_keeping_files(gw, old, new)
    return [(k, old.get(k, "null"), stored.get(k, "null")) for k in sorted({*old, *stored})]


def store_keeping_files(
    gw: FileSystemGateway, old: Mapping[str, str], new: Mapping[str, str]
) -> dict[str, str]:
    """Store ``new`` as ``hoodie.properties`` (the caller holds the table lock), the
    metadata table's files partition still listed when ``old`` listed it (the store
    blanks the metadata partitions otherwise, which would make readers list files until
    the next writer's guard lists it again); then the guard settles what ``new`` implies
    for the metadata table (a version it cannot keep). Returns the file as stored."""
    keep_files = mt.FILES_PARTITION in sync.listed_partitions(old)
    properties_file.store(gw, new, metadata_partitions=mt.FILES_PARTITION if keep_files else "")
    apply_guard(gw)
    return properties_file.load(gw)


def base_metafile_bytes(commit_time: str, depth: int) -> bytes:
    """Hudi's Parquet partition metadata: no rows, schema ``dummy { optional int64
    dummyint }``, the properties in the footer, uncompressed."""
    sink = io.BytesIO()
    # No ARROW:schema entry: the footer holds exactly the two properties, as Hudi's.
    writer = pq.ParquetWriter(
        sink, pa.schema([pa.field("dummyint", pa.int64())]), compression="NONE", store_schema=False
    )
    writer.add_key_value_metadata({"commitTime": commit_time, "partitionDepth": str(depth)})
    writer.close()
    return sink.getvalue()


@procedure(
    "repair_migrate_partition_meta",
    [Param("table", "string"), Param("dry_run", "boolean", default=True), Param("path", "string")],
    [
        Output("partition_path"),
        Output("text_metafile_present"),
        Output("base_metafile_present"),
        Output("action"),
    ],
    "Migrates .hoodie_partition_metadata text files to the Parquet form (dry run by default).",
)
def repair_migrate_partition_meta(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row per partition folder, sorted: ``(partition_path, text_metafile_present,
    base_metafile_present, action)`` with presence as ``true``/``false`` before the call and
    action ``MIGRATE``/``NONE`` (dry run) or ``MIGRATED``."""
    table = ctx.table(args)
    gw = table.gw
    if args["dry_run"]:
        return [
            (p, _flag(text), _flag(base), "MIGRATE" if text else "NONE")
            for p, text, base in _partitions(gw)
        ]
    with table_lock(gw):
        state = table.state()
        last = state.timeline.last_commit()
        rows = []
        for partition, text, base in _partitions(gw):
            if not base:
                if last is None:
                    raise ProcedureError(
                        f"{ctx.procedure}: cannot migrate {partition!r}: {state.config.name} "
                        "has no completed commit to record in its partition metadata"
                    )
                data = base_metafile_bytes(last.requested_time, partition_depth(partition))
                gw.create_exclusive(join_path(partition, BASE_METAFILE), data)
            rows.append((partition, _flag(text), _flag(base), "MIGRATED"))
            # After the Parquet file exists: a partition always keeps one of the two.
            gw.delete_file(join_path(partition, PARTITION_METADATA_FILE))
        props = read_table_properties(gw)
        store_keeping_files(gw, props, {**props, USE_BASE_FORMAT_KEY: "true"})
    return rows


def _flag(present: bool) -> str:
    return "true" if present else "false"


def _partitions(gw: FileSystemGateway) -> list[tuple[str, bool, bool]]:
    """``(partition, text file present, Parquet file present)`` of every folder holding
    partition metadata, sorted (Hudi's partition listing without the metadata table)."""
    out = []
    for partition, has_meta in sorted(partition_folders(gw).items()):
        if not has_meta:
            continue
        text = gw.exists(join_path(partition, PARTITION_METADATA_FILE))
        base = gw.exists(join_path(partition, BASE_METAFILE))
        out.append((partition, text, base))
    return out
