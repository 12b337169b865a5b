"""The metadata-table guard: no hudilite action leaves Hudi's metadata table stale.

Hudi's readers (hudi-rs, Hudi on Spark and Flink, Trino, Athena) list a table's files through
the ``files`` partition of its metadata table (``.hoodie/metadata``) whenever
``hoodie.table.metadata.partitions`` names it: a file the metadata table does not list does not
exist for them. hudilite does not maintain the metadata table yet, so before it changes a table
that has one, it does what Hudi's own writer does when the metadata table is disabled
(``HoodieTableMetadataUtil.deleteMetadataTable``), under the table lock, in this order:

1. clear ``hoodie.table.metadata.partitions`` and ``hoodie.table.metadata.partitions.inflight``
   in ``hoodie.properties`` (Hudi writes them empty), so every reader lists files again;
2. delete ``.hoodie/metadata``;
3. clear the index definitions that lived in it (``hoodie.table.index.defs.path``, by default
   ``.hoodie/.index_defs/index.json``: record index, column and partition stats, secondary and
   expression indexes are all metadata-table partitions).

With ``hoodie.metadata.enable=true`` among the table's options (version 8 and 9 tables),
the guard keeps the metadata table instead (:func:`keeps_metadata_table`): hudilite keeps its
``files`` partition (:mod:`hudilite.metadata.sync`), so only the partitions it cannot keep are
dropped -- ``hoodie.properties`` first, then their folders and the index definitions -- a
missing files partition is built from a listing, and metadata deltacommits whose data instant
never completed are rolled back.

Each step is safe to stop after. Once step 1 is on disk no reader consults the metadata table,
whatever is left of it; the next action that takes the table lock finds the rest
(:func:`needs_guard` looks at all three) and finishes the job, so a crash between any two
steps leaves the table reading the same rows in every reader. A Hudi writer with
``hoodie.metadata.enable=true`` (its default) rebuilds the metadata table from a listing on its
next commit.

:func:`~hudilite.write.lock.table_lock` runs :func:`apply_guard` each time it is taken (not
when re-entered), because every action that changes a table's files or timeline -- writes,
table services, rollbacks, restores, archival, property changes and upgrades -- takes it
before it completes anything. Reads never take the lock, so they never change a table.
"""

from __future__ import annotations

import logging
import warnings

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import CorruptFileError, HudiliteWarning, TableNotFoundError
from hudilite.metadata import bloom_filters, column_stats, compact, partition_stats, sync
from hudilite.metadata import record_index as ri
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.timeline.timeline import Timeline

log = logging.getLogger(__name__)

#: The metadata table's base path, relative to the data table's (Hudi's fixed layout).
METADATA_TABLE_DIR = ".hoodie/metadata"
#: Where Hudi keeps index definitions unless ``hoodie.table.index.defs.path`` says otherwise.
DEFAULT_INDEX_DEFS = ".hoodie/.index_defs/index.json"
#: ``hoodie.properties`` keys that make readers trust the metadata table.
PARTITION_KEYS = properties_file.METADATA_PARTITION_KEYS
INDEX_DEFS_KEY = cfg.INDEX_DEFS_PATH.name

#: Fail points between the steps (crash-safety tests).
AFTER_PROPERTIES = "metadata_guard_after_properties"
AFTER_DELETE = "metadata_guard_after_delete"

#: Tables this process has warned about (the warning is given once per table).
_warned: set[str] = set()


class MetadataTableRemoved(HudiliteWarning):
    """hudilite removed a table's Hudi metadata table, which it does not maintain yet."""


class MetadataTableUnsupported(HudiliteWarning):
    """``hoodie.metadata.enable=true`` on a table version hudilite keeps no metadata table
    for."""


#: Tables this process has warned about for the option on an unsupported version.
_warned_version: set[str] = set()


def index_defs_path(props: dict[str, str]) -> str:
    """The table-relative path of the index definitions file named by ``props``."""
    rel = (props.get(INDEX_DEFS_KEY) or "").strip().lstrip("/")
    return rel or DEFAULT_INDEX_DEFS


def _lists_partitions(props: dict[str, str]) -> bool:
    return any((props.get(key) or "").strip() for key in PARTITION_KEYS)


def needs_guard(gw: FileSystemGateway, props: dict[str, str]) -> bool:
    """True when any trace of a metadata table is left: partitions listed in ``props``, the
    ``.hoodie/metadata`` folder, or an index definitions file."""
    return (
        _lists_partitions(props)
        or gw.exists(METADATA_TABLE_DIR)
        or gw.exists(index_defs_path(props))
    )


def apply_guard(gw: FileSystemGateway) -> bool:
    """Remove the table's metadata table (see the module docstring); the caller holds the table
    lock. Returns True when anything was removed. A folder without a table is left alone."""
    try:
        props = properties_file.load(gw)
    except (TableNotFoundError, CorruptFileError):
        # Table creation takes the lock before hoodie.properties exists, and a damaged config
        # is reported (by name) by the action's own load; the guard has nothing to say.
        return False
    options = {**props, **properties_file.read_write_defaults(gw)}  # read once per lock
    if keeps_metadata_table(gw, props, options):
        return _keep(gw, props, options)
    if not needs_guard(gw, props):
        return False
    _warn_once(gw, props)
    if _lists_partitions(props):
        # Step 1: readers stop trusting the metadata table (properties_file.store blanks the
        # keys, as Hudi's clearMetadataPartitions does).
        props = properties_file.store(gw, props)
    failpoints.check(None, AFTER_PROPERTIES)
    if gw.exists(METADATA_TABLE_DIR):
        gw.delete_dir(METADATA_TABLE_DIR)  # step 2
    failpoints.check(None, AFTER_DELETE)
    defs = index_defs_path(props)
    if gw.exists(defs):
        gw.delete_file(defs)  # step 3
    log.info("removed the metadata table of %s", gw.uri(""))
    return True


def keeps_metadata_table(
    gw: FileSystemGateway, props: dict[str, str], options: dict[str, str]
) -> bool:
    """True when hudilite keeps this table's metadata table: ``hoodie.metadata.enable`` is
    true in the table's ``options`` (``hoodie.properties`` under its stored write options)
    and the table is version 8 or 9. On another version the option is refused by name with a
    :class:`MetadataTableUnsupported` warning (once per table) and the table treated as off:
    an error would block the upgrade that makes the option work."""
    if not cfg.Options(options).get(cfg.METADATA_ENABLED):
        return False
    version = cfg.TableConfig.from_properties(props).table_version
    if version in mt.SUPPORTED_VERSIONS:
        return True
    if gw.uri("") not in _warned_version:
        _warned_version.add(gw.uri(""))
        warnings.warn(
            f"{cfg.METADATA_ENABLED.name}=true has no effect on {gw.uri('')}: hudilite keeps a "
            f"metadata table on table versions 8 and 9 only, this table is version {version} "
            "(upgrade it, or unset the option)",
            MetadataTableUnsupported,
            stacklevel=2,
        )
    return False


def _keep(gw: FileSystemGateway, props: dict[str, str], options: dict[str, str]) -> bool:
    """Keep the metadata table hudilite maintains (the caller holds the table lock): drop the
    partitions it cannot keep, properties first; rebuild the files partition from a listing
    when it is not listed (or Hudi cleaned, rolled back or log-compacted the metadata table
    itself, which hudilite does not read; its compactions are read); else roll back metadata
    deltacommits whose data instant never completed and compactions that never completed.
    Returns True when anything changed."""
    # A bad compaction trigger is refused before the metadata table is touched.
    compact.max_delta_commits(options)
    listed = sync.listed_partitions(props)
    pending = (props.get(PARTITION_KEYS[1]) or "").strip()
    keep_files = mt.FILES_PARTITION in listed
    stats_on = column_stats.enabled(options)
    part_stats_on = partition_stats.enabled(options)
    ri_on = ri.enabled(options)
    kept = [p for p in sorted(listed) if keep_files and _keeps(p, stats_on, part_stats_on, ri_on)]
    blooms_on = bloom_filters.enabled(options)
    if blooms_on and keep_files and bloom_filters.PARTITION in listed:
        kept = sorted([*kept, bloom_filters.PARTITION])
    elif bloom_filters.PARTITION in listed:
        bloom_filters.remove(gw)  # unlisted, then its folder and initialization instant
    changed = False
    if pending or sorted(listed) != kept:
        props = properties_file.store(gw, props, metadata_partitions=",".join(kept))
        changed = True
    failpoints.check(None, AFTER_PROPERTIES)
    for entry in gw.list_dir(METADATA_TABLE_DIR):
        if entry.is_dir and entry.name not in (".hoodie", *kept):
            gw.delete_dir(entry.path)  # record_index, secondary indexes, ...
            changed = True
    defs = index_defs_path(props)
    # the definitions of the partitions kept stay (column_stats', record_index'...)
    if gw.exists(defs) and not column_stats.keep_definitions(gw, defs, kept):
        gw.delete_file(defs)  # the definitions of the partitions just dropped
        changed = True
    if not keep_files or not gw.exists(mt.PROPERTIES) or sync.foreign_actions(gw):
        mt.initialize(gw)
        if stats_on:
            column_stats.initialize(gw)
        if part_stats_on:
            partition_stats.initialize(gw)
        if ri_on:
            ri.initialize(gw)
        if blooms_on:
            bloom_filters.initialize(gw)
        log.info("built the metadata table of %s from a listing", gw.uri(""))
        return True
    config = cfg.TableConfig.from_properties(props)
    if sync.roll_back_strays(gw, Timeline.load(gw, config)):
        changed = True
    if compact.roll_back_pending(gw):
        changed = True
    if stats_on and column_stats.PARTITION not in kept:
        column_stats.initialize(gw)  # turned on: built from the files partition
        changed = True
    if part_stats_on and partition_stats.PARTITION not in kept:
        partition_stats.initialize(gw)  # turned on: built from column_stats
        changed = True
    if ri_on and ri.PARTITION not in kept:
        ri.initialize(gw)  # turned on: built from the latest file slices
        changed = True
    if blooms_on and bloom_filters.PARTITION not in kept:
        bloom_filters.initialize(gw)  # turned on: built from the files partition's listing
        changed = True
    return changed


def _keeps(partition: str, stats_on: bool, part_stats_on: bool, ri_on: bool = False) -> bool:
    """Whether the guard keeps a listed metadata partition (files; column_stats,
    partition_stats and record_index while their options are on)."""
    return (
        partition == mt.FILES_PARTITION
        or (stats_on and partition == column_stats.PARTITION)
        or (part_stats_on and partition == partition_stats.PARTITION)
        or (ri_on and partition == ri.PARTITION)
    )


def _warn_once(gw: FileSystemGateway, props: dict[str, str]) -> None:
    uri = gw.uri("")
    if uri in _warned:
        return
    _warned.add(uri)
    name = props.get(cfg.TABLE_NAME.name) or uri
    warnings.warn(
        f"table {name} ({uri}) had a Hudi metadata table, which hudilite does not maintain "
        "yet: hudilite removed it (and its index definitions) so every reader lists the "
        "table's files; a Hudi writer rebuilds it on its next commit",
        MetadataTableRemoved,
        stacklevel=2,
    )
