"""Metadata-table procedures with Hudi's names, parameters and output columns:
``create_metadata_table``, ``init_metadata_table``, ``delete_metadata_table``,
``show_metadata_table_partitions``, ``show_metadata_table_files``,
``show_metadata_table_stats`` and ``validate_metadata_table_files``
(``show_metadata_table_column_stats`` is in :mod:`.metadata_column_stats`).

Parameters follow Hudi's procedures of the same names (``CreateMetadataTableProcedure`` ...
``ValidateMetadataTableFilesProcedure`` in ``hudi-spark-datasource``'s ``command/procedures``;
the ``show_*`` ones as on Hudi's master, with ``path``, ``limit`` and ``filter``); where Hudi
has no ``path`` it follows Hudi's parameters, so ``table`` is optional. A table that does not
list the ``files`` partition in ``hoodie.table.metadata.partitions`` has no metadata table for
the readers: Hudi's "Metadata Table not enabled/initialized", naming the table. hudilite keeps
a metadata table on table versions 8 and 9; on another version these procedures refuse by
name.

Turning the metadata table on and off is what ``create``/``init`` and ``delete`` do, under the
table lock: hudilite keeps a metadata table only while ``hoodie.metadata.enable`` is true for
the table (the metadata-table guard removes it otherwise, and builds it when it is missing),
so ``create_metadata_table`` and ``init_metadata_table`` store ``hoodie.metadata.enable=true``
with the table's options and build the ``files`` partition from a storage listing (the guard's
build, which lists it in ``hoodie.table.metadata.partitions`` last), and
``delete_metadata_table`` stores ``false``, then clears ``hoodie.table.metadata.partitions`` (so
no reader trusts it any longer), deletes ``.hoodie/metadata`` and the index definitions that
lived in it -- Hudi's ``deleteMetadataTable`` order.

``show_metadata_table_stats`` reports what Hudi's ``HoodieMetadataMetrics.getStats`` computes
(Hudi returns it only with ``hoodie.metadata.metrics.enable``, and no rows otherwise): for each
partition the table lists, the base and log files of the latest file slice of every file group
(their sizes and counts), then ``partitionCount``, the data partitions of the files partition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.properties import set_properties
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.timeline import Timeline
from hudilite.write import metadata_guard
from hudilite.write.lock import table_lock

from .cleaning import filtered
from .registry import Output, Param, ProcedureContext, ProcedureError, procedure

_RESULT = [Output("result")]


# ---------------------------------------------------------------------------------------
# reading the metadata table


@dataclass(frozen=True)
class FileSlice:
    """The latest file slice of one file group of a metadata partition: its base file and its
    log files as ``(table-relative path, size)``."""

    file_id: str
    base: tuple[str, int] | None
    logs: tuple[tuple[str, int], ...]


def latest_slices(
    gw: FileSystemGateway,
    partition: str,
    timeline: mt.MetadataTimeline,
    data_timeline: Timeline | None = None,
) -> list[FileSlice]:
    """The latest file slice of each file group of metadata partition ``partition``, sliced
    by completion time as Hudi 1.x does (and :func:`hudilite.metadata.table.current_slice` for
    the files partition): the latest base file written by a completed compaction or
    deltacommit (an initialization), then the logs of completed deltacommits that completed
    after it. Given ``data_timeline``, logs whose data instant did not complete are left out
    (the initialization instants excepted)."""
    written = {**timeline.deltacommits, **timeline.compactions}
    bases: dict[str, list[tuple[str, str, int]]] = {}
    logs: dict[str, list[tuple[str, int, str, int]]] = {}
    for entry in gw.list_dir(join(mt.METADATA_DIR, partition)):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName) and parsed.instant_time in written:
            bases.setdefault(parsed.file_id, []).append(
                (parsed.instant_time, entry.path, entry.size)
            )
        elif isinstance(parsed, LogFileName) and parsed.base_instant in timeline.deltacommits:
            time_ = parsed.base_instant
            if (
                data_timeline is not None
                and not time_.startswith(mt.INIT_INSTANT[:14])
                and not data_timeline.is_completed_or_archived(time_)
            ):
                continue
            logs.setdefault(parsed.file_id, []).append(
                (time_, parsed.version, entry.path, entry.size)
            )
    out = []
    for file_id in sorted(set(bases) | set(logs)):
        base = max(bases.get(file_id, []), default=None)
        kept = tuple(
            (path, size)
            for t, _, path, size in sorted(logs.get(file_id, []))
            if base is None or timeline.deltacommits[t] > base[0]
        )
        out.append(FileSlice(file_id, (base[1], base[2]) if base else None, kept))
    return out


def table_state(ctx: ProcedureContext, args: dict[str, Any]) -> TableState:
    """The table named by ``table`` or ``path``, as of now."""
    return ctx.table(args).state()


def _check_version(ctx: ProcedureContext, state: TableState) -> None:
    try:
        mt.check_supported(state.config)
    except ConfigError as exc:
        raise ProcedureError(f"{ctx.procedure}: {exc}") from None


def require_files_partition(ctx: ProcedureContext, state: TableState) -> None:
    """Hudi's "Metadata Table not enabled/initialized" unless the table lists the files
    partition (on a version hudilite reads it on); refused when the metadata timeline holds
    actions hudilite's reader does not follow."""
    _check_version(ctx, state)
    if mt.FILES_PARTITION not in sync.listed_partitions(state.config.props):
        raise ProcedureError(
            f"{ctx.procedure}: Metadata Table not enabled/initialized for table "
            f"{state.config.name} at {state.gw.uri('')} (hoodie.table.metadata.partitions "
            "does not list files; create_metadata_table builds it)"
        )
    others = mt.load_timeline(state.gw).others
    if others:
        # Hudi's rollback or log compaction of the metadata table: hudilite's reader does not
        # follow them (reads list storage then), so it cannot say what the table lists.
        raise ProcedureError(
            f"{ctx.procedure}: the metadata timeline of {state.config.name} holds actions "
            f"hudilite does not read ({', '.join(sorted(others))})"
        )


def metadata_listing(state: TableState) -> dict[str, dict[str, int]]:
    """Data partition -> {file name: size} as the files partition lists them (deltacommits of
    data instants that did not complete left out, as Hudi's reader does)."""
    return mt.listing_of(mt.read_files_partition(state.gw, state.timeline))


# ---------------------------------------------------------------------------------------
# create, init, delete


def _metadata_dir_entries(gw: FileSystemGateway) -> list[str]:
    return [e.name for e in gw.list_dir(mt.METADATA_DIR)] if gw.is_dir(mt.METADATA_DIR) else []


def _build(state: TableState) -> None:
    """Store ``hoodie.metadata.enable=true`` and let the guard build what is missing (the
    caller holds the table lock)."""
    set_properties(state, {cfg.METADATA_ENABLED.name: "true"})
    metadata_guard.apply_guard(state.gw)


@procedure(
    "create_metadata_table",
    [Param("table", "string"), Param("path", "string")],
    _RESULT,
    "Turns the metadata table on: builds its files partition from a listing.",
)
def create_metadata_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row: where the metadata table was created and how long it took. The metadata
    folder must be empty or absent (Hudi's check); ``hoodie.metadata.enable`` is stored true,
    so every later action keeps the metadata table current."""
    state = table_state(ctx, args)
    _check_version(ctx, state)
    gw, where = state.gw, state.gw.uri(mt.METADATA_DIR)
    not_empty = ProcedureError(f"{ctx.procedure}: Metadata directory ({where}) not empty.")
    if _metadata_dir_entries(gw):
        raise not_empty
    started = time.monotonic()
    with table_lock(gw):
        if _metadata_dir_entries(gw):
            raise not_empty  # another writer built it meanwhile
        _build(TableState.load(gw))
    took = time.monotonic() - started
    return [(f"Created Metadata Table in {where} (duration={took:.3f}secs)",)]


@procedure(
    "init_metadata_table",
    [
        Param("table", "string"),
        Param("read_only", "boolean", default=False),
        Param("path", "string"),
    ],
    _RESULT,
    "Opens the metadata table, or (read_only false) initializes what it lacks.",
)
def init_metadata_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row: the metadata table was opened (``read_only``) or initialized, and how long
    it took. The metadata folder must exist (Hudi's check). Initializing stores
    ``hoodie.metadata.enable=true``, builds a missing files partition from a listing and
    rolls back metadata deltacommits whose data instant never completed."""
    state = table_state(ctx, args)
    _check_version(ctx, state)
    gw, where = state.gw, state.gw.uri(mt.METADATA_DIR)
    if not gw.is_dir(mt.METADATA_DIR):
        raise ProcedureError(f"{ctx.procedure}: Metadata directory ({where}) does not exist.")
    started = time.monotonic()
    if not args["read_only"]:
        with table_lock(gw):
            _build(TableState.load(gw))
    took = time.monotonic() - started
    action = "Opened" if args["read_only"] else "Initialized"
    return [(f"{action} Metadata Table in {where} (duration={took:.3f}sec)",)]


def _delete(state: TableState) -> str | None:
    """Turn the metadata table off (see the module docstring); returns its path, or None
    when there was none. The caller holds the table lock."""
    gw = state.gw
    set_properties(state, {cfg.METADATA_ENABLED.name: "false"})
    props = properties_file.load(gw)
    if any((props.get(k) or "").strip() for k in properties_file.METADATA_PARTITION_KEYS):
        props = properties_file.store(gw, props)  # blanks the partition keys
    existed = gw.exists(mt.METADATA_DIR)
    if existed:
        gw.delete_dir(mt.METADATA_DIR)
    defs = metadata_guard.index_defs_path(props)
    if gw.exists(defs):
        gw.delete_file(defs)
    return gw.uri(mt.METADATA_DIR) if existed else None


@procedure(
    "delete_metadata_table",
    [Param("table", "string"), Param("path", "string")],
    _RESULT,
    "Turns the metadata table off and deletes it (table may list several tables).",
)
def delete_metadata_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row naming the metadata tables deleted (``null`` for a table that had none, as
    Hudi prints it). ``table`` may be a comma-separated list, as in Hudi. Each table's
    ``hoodie.metadata.enable`` is stored false, so no later action rebuilds it."""
    names = [n.strip() for n in str(args["table"] or "").split(",") if n.strip()]
    targets = [{"table": n} for n in names] or [{"path": args["path"]}]
    deleted = []
    for target in targets:
        state = table_state(ctx, target)
        with table_lock(state.gw):
            deleted.append(_delete(TableState.load(state.gw)) or "null")
    return [(f"Deleted Metadata Table at '{','.join(deleted)}'",)]


# ---------------------------------------------------------------------------------------
# show and validate


@procedure(
    "show_metadata_table_partitions",
    [Param("table", "string"), Param("path", "string"), Param("filter", "string", default="")],
    [Output("partition")],
    "Lists the data partitions the metadata table's files partition holds.",
    read_only=True,
)
def show_metadata_table_partitions(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per data partition the files partition lists, sorted (``""`` for a
    non-partitioned table), kept by ``filter``."""
    state = table_state(ctx, args)
    require_files_partition(ctx, state)
    rows = [(p,) for p in sorted(metadata_listing(state))]
    return filtered(ctx, rows, None, args["filter"])


@procedure(
    "show_metadata_table_files",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("partition", "string", default=""),
        Param("limit", "integer", default=100),
        Param("filter", "string", default=""),
    ],
    [Output("file_path")],
    "Lists the data files of one partition as the metadata table's files partition holds them.",
    read_only=True,
)
def show_metadata_table_files(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per base or log file of ``partition`` (its name), sorted, the first
    ``limit``, kept by ``filter``. A partitioned table needs ``partition``; a partition the
    files partition does not list is an error (Hudi lists nothing)."""
    state = table_state(ctx, args)
    require_files_partition(ctx, state)
    partition = str(args["partition"] or "").strip().strip("/")
    listing = metadata_listing(state)
    if partition not in listing:
        if not partition:
            raise ProcedureError(
                f"{ctx.procedure}: table {state.config.name} is partitioned; give the "
                "partition (partition => ...)"
            )
        raise ProcedureError(
            f"{ctx.procedure}: the metadata table lists no partition {partition!r} "
            f"({len(listing)} partitions; show_metadata_table_partitions lists them)"
        )
    rows = [(name,) for name in sorted(listing[partition])]
    return filtered(ctx, rows, args["limit"], args["filter"])


STAT_KEYS = (
    "totalBaseFileSizeInBytes",
    "totalLogFileSizeInBytes",
    "baseFileCount",
    "logFileCount",
)


@procedure(
    "show_metadata_table_stats",
    [Param("table", "string"), Param("path", "string"), Param("filter", "string", default="")],
    [Output("stat_key"), Output("stat_value")],
    "Shows the metadata table's size: base and log files of each partition's latest slices.",
    read_only=True,
)
def show_metadata_table_stats(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """Four rows per metadata partition the table lists, by name
    (``<partition>.totalBaseFileSizeInBytes``, ``.totalLogFileSizeInBytes``,
    ``.baseFileCount``, ``.logFileCount`` over the latest slice of each file group), then
    ``partitionCount`` (the data partitions), kept by ``filter``."""
    state = table_state(ctx, args)
    require_files_partition(ctx, state)
    timeline = mt.load_timeline(state.gw)
    rows: list[tuple[Any, ...]] = []
    for partition in sorted(sync.listed_partitions(state.config.props)):
        slices = latest_slices(state.gw, partition, timeline)
        values = (
            sum(s.base[1] for s in slices if s.base),
            sum(size for s in slices for _, size in s.logs),
            sum(1 for s in slices if s.base),
            sum(len(s.logs) for s in slices),
        )
        rows += [(f"{partition}.{k}", str(v)) for k, v in zip(STAT_KEYS, values, strict=True)]
    rows.append(("partitionCount", str(len(metadata_listing(state)))))
    return filtered(ctx, rows, None, args["filter"])


def _storage_files(gw: FileSystemGateway, partition: str) -> dict[str, int]:
    """Data files (base and log files, by name) of a partition folder with their sizes, as
    Hudi's file-system listing finds them (pending writes' files included)."""
    if not gw.is_dir(partition):
        return {}
    return {
        e.name: int(e.size)
        for e in gw.list_dir(partition)
        if not e.is_dir and parse_data_file_name(e.name) is not None
    }


@procedure(
    "validate_metadata_table_files",
    [
        Param("table", "string"),
        Param("verbose", "boolean", default=False),
        Param("path", "string"),
    ],
    [
        Output("partition"),
        Output("file_name"),
        Output("is_present_in_fs", "boolean"),
        Output("is_present_in_metadata", "boolean"),
        Output("fs_size", "bigint"),
        Output("metadata_size", "bigint"),
    ],
    "Compares the metadata table's file listing with a storage listing.",
    read_only=True,
)
def validate_metadata_table_files(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row per file whose presence or size differs between storage and the files
    partition (every file with ``verbose``), by partition and name; sizes are 0 where the
    file is absent. Partitions are those either side lists; storage's files are every base
    and log file in the folder, pending writes' included, as Hudi lists them."""
    state = table_state(ctx, args)
    require_files_partition(ctx, state)
    listing = metadata_listing(state)
    fs_partitions = FileSystemView(state.gw, state.config, state.timeline).partitions()
    rows = []
    for partition in sorted(set(fs_partitions) | set(listing)):
        on_fs = _storage_files(state.gw, partition)
        listed = listing.get(partition, {})
        for name in sorted(set(on_fs) | set(listed)):
            fs_size, md_size = on_fs.get(name, 0), listed.get(name, 0)
            same = (name in on_fs) == (name in listed) and fs_size == md_size
            if args["verbose"] or not same:
                rows.append((partition, name, name in on_fs, name in listed, fs_size, md_size))
    return rows
