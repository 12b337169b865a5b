"""``repair_orphan_files``: find (and move aside) data files no commit references, with
Hudi's parameters and output columns (``RepairOrphanFilesProcedure`` in
``hudi-spark-datasource/hudi-spark/.../command/procedures/``, detection as
``org.apache.hudi.table.repair.RepairUtils``).

Parameters: ``table``/``path``, ``partition`` (one partition; default every folder holding
partition metadata), ``dry_run`` (default true), ``backup_path`` (required when not a dry
run), ``archived_start_ts``/``archived_end_ts`` (only files whose name carries an instant
in that range, inclusive), ``max_orphans`` (more candidates than that is an error, as in
Hudi). Rows ``(partition, file_name, instant_time, backup_path, status)``: ``IDENTIFIED``
(dry run), ``BACKED_UP`` with the file's new full path, ``BACKUP_FAILED``, and
``SKIPPED_PRESENT_IN_MDT`` for candidates the metadata table's files partition still lists
(never moved); sorted by partition and file name, the skipped rows last.

A base or log file is tagged with the instant in its name (``FSUtils.getCommitTime``). Files
of a pending instant are never candidates; files of an instant on the timeline that is not
a write, or a completed write that recorded no files, neither (Hudi: no details to judge
by). Files of a completed write (active or archived) are orphans when no completed write
lists them; files of an instant found nowhere are orphans. Two departures keep live data
safe: a file counts as referenced when *any* completed write lists it, not only the
instant in its name (a version-6 log file names its slice's base instant, not the
deltacommit that wrote it, so Hudi's per-instant check would move live log files), and an
instant older than the active timeline that the archive does not hold is not judged.

Moving happens under the table lock, against a timeline loaded after the partition listing
(a writer puts its instant on the timeline before writing files, so a file listed is never
mistaken for one of an unknown instant): each orphan is copied to
``<backup_path>/<table name>/<partition>/<file>`` (never over an existing file) and then
deleted. Orphans are referenced by no commit and, checked above, not listed by the metadata
table, so neither readers nor the metadata table change. A ``backup_path`` inside the table
is refused (the moved files would sit in folders its listing walks).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from hudilite.filegroup.slices import join_path
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.archive import archived_commits, archived_times
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.tablestate.state import TableState
from hudilite.timeline.metadata import CommitMetadata
from hudilite.write.lock import table_lock

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)
from .repair import partition_folders

_COPY_CHUNK = 8 * 1024 * 1024


def inside_table(gw: FileSystemGateway, path: str) -> bool:
    """Whether the folder ``path`` is the table's base path or under it (where files the
    table's listing would take for its own must not be written)."""
    other = FileSystemGateway(path)
    if other.scheme != gw.scheme:
        return False
    return (other.abs_path("").rstrip("/") + "/").startswith(gw.abs_path("").rstrip("/") + "/")


def name_instant(name: str) -> str | None:
    """The instant a data file's name carries (``FSUtils.getCommitTime``), or None."""
    parsed = parse_data_file_name(name)
    if isinstance(parsed, BaseFileName):
        return parsed.instant_time
    if isinstance(parsed, LogFileName):
        return parsed.base_instant
    return None


def list_data_files(gw: FileSystemGateway, partitions: list[str]) -> dict[str, list[str]]:
    """Instant in the name -> table-relative paths of the base and log files of
    ``partitions`` (``RepairUtils.tagInstantsOfBaseAndLogFiles``)."""
    out: dict[str, list[str]] = {}
    for partition in partitions:
        for entry in gw.list_dir(partition):
            if entry.is_dir:
                continue
            instant = name_instant(entry.name)
            if instant is not None:
                out.setdefault(instant, []).append(join_path(partition, entry.name))
    return out


def _paths(meta: CommitMetadata) -> set[str]:
    """The files a commit's write stats name (table-relative)."""
    return {s.path for s in meta.write_stats() if s.path}


def find_orphans(state: TableState, by_instant: Mapping[str, list[str]]) -> list[str]:
    """The paths of ``by_instant`` no completed write references (see the module doc)."""
    timeline = state.timeline
    written: dict[str, set[str]] = {}
    for inst in timeline.commits():
        written[inst.requested_time] = _paths(timeline.commit_metadata(inst))
    archived_any = set(archived_times(state))
    for arch, meta in archived_commits(state):
        written.setdefault(arch.requested_time, _paths(meta))
    referenced = set().union(*written.values()) if written else set()
    orphans: list[str] = []
    for instant, paths in sorted(by_instant.items()):
        known = timeline.get(instant)
        if known is not None and known.is_pending:
            continue  # a write or table service still running (or to be rolled back)
        if instant in written:
            if written[instant]:
                orphans += [p for p in paths if p not in referenced]
            continue
        if known is not None or instant in archived_any or timeline.is_archived(instant):
            continue  # not a write, or no details to judge by
        orphans += paths  # an instant found nowhere: every file of it is dangling
    return sorted(orphans)


def _mdt_listed(state: TableState) -> dict[str, set[str]]:
    """Partition -> file names the metadata table's files partition lists ({} without one)."""
    if not sync.maintains_files(state.config.props) or not state.gw.exists(mt.PROPERTIES):
        return {}
    listing = mt.listing_of(mt.read_files_partition(state.gw, state.timeline))
    return {p: set(files) for p, files in listing.items()}


def _copy(src: FileSystemGateway, rel: str, dest: FileSystemGateway, dest_rel: str) -> None:
    with src.open_input_file(rel) as fin, dest.open_output_stream(dest_rel) as fout:
        while chunk := fin.read(_COPY_CHUNK):
            fout.write(chunk)


def _back_up(state: TableState, rel: str, backup: FileSystemGateway, name: str) -> tuple[str, str]:
    """Move ``rel`` to ``<backup>/<table>/<partition>/<file>``: ``(new path, status)``."""
    dest_rel = join_path(join_path(name, posixpath.dirname(rel)), posixpath.basename(rel))
    try:
        if backup.exists(dest_rel):
            return "", "BACKUP_FAILED"  # never overwrite an earlier backup
        _copy(state.gw, rel, backup, dest_rel)
        if backup.size(dest_rel) != state.gw.size(rel):
            return "", "BACKUP_FAILED"
        state.gw.delete_file(rel)
    except FileNotFoundError:
        if not state.gw.exists(rel):
            return "", "BACKED_UP"  # deleted meanwhile (a concurrent clean): nothing to move
        return "", "BACKUP_FAILED"
    except OSError:
        return "", "BACKUP_FAILED"
    return backup.abs_path(dest_rel), "BACKED_UP"


@procedure(
    "repair_orphan_files",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("partition", "string", default=""),
        Param("dry_run", "boolean", default=True),
        Param("backup_path", "string", default=""),
        Param("archived_start_ts", "string", default=""),
        Param("archived_end_ts", "string", default=""),
        Param("max_orphans", "integer", default=100000),
    ],
    [
        Output("partition"),
        Output("file_name"),
        Output("instant_time"),
        Output("backup_path"),
        Output("status"),
    ],
    "Lists (or moves to backup_path) data files that no commit references.",
)
def repair_orphan_files(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per orphan file ``(partition, file_name, instant_time, backup_path,
    status)``: ``IDENTIFIED`` (dry run), ``BACKED_UP`` (with its new path) or
    ``BACKUP_FAILED``, then ``SKIPPED_PRESENT_IN_MDT`` for those the metadata table lists."""
    dry_run = args["dry_run"]
    backup_path = str(args["backup_path"] or "")
    if not dry_run and not backup_path:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: backup_path is required when dry_run is false"
        )
    table = ctx.table(args)
    gw = table.gw
    if not dry_run and inside_table(gw, backup_path):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: backup_path {backup_path!r} is inside the table; give a "
            "folder outside it"
        )
    partition = str(args["partition"] or "").strip("/")
    folders = partition_folders(gw)
    if args["partition"]:
        if partition not in folders:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: partition {args['partition']!r} is not a partition folder "
                "of the table"
            )
        partitions = [partition]
    else:
        partitions = sorted(p for p, has_meta in folders.items() if has_meta)
    start, end = str(args["archived_start_ts"] or ""), str(args["archived_end_ts"] or "")
    # Listed before the timeline is loaded: see the module docstring.
    by_instant = {
        t: paths
        for t, paths in list_data_files(gw, partitions).items()
        if (not start or t >= start) and (not end or t <= end)
    }
    if dry_run:
        return _rows(ctx, table.state(), by_instant, args["max_orphans"], None)
    backup = FileSystemGateway(backup_path)
    with table_lock(gw):
        return _rows(ctx, table.state(), by_instant, args["max_orphans"], backup)


def _rows(
    ctx: ProcedureContext,
    state: TableState,
    by_instant: Mapping[str, list[str]],
    max_orphans: int,
    backup: FileSystemGateway | None,
) -> list[tuple[Any, ...]]:
    orphans = find_orphans(state, by_instant)
    if len(orphans) > max_orphans:
        raise ProcedureError(
            f"{ctx.procedure}: found {len(orphans)} orphan candidates, which exceeds "
            f"max_orphans={max_orphans}; re-run with partition => '<partition>' or raise "
            "max_orphans"
        )
    listed = _mdt_listed(state)
    rows, skipped = [], []
    for rel in orphans:
        partition, name = posixpath.dirname(rel), posixpath.basename(rel)
        instant = name_instant(name)
        if name in listed.get(partition, ()):
            skipped.append((partition, name, instant, "", "SKIPPED_PRESENT_IN_MDT"))
        elif backup is None:
            rows.append((partition, name, instant, "", "IDENTIFIED"))
        else:
            moved_to, status = _back_up(state, rel, backup, state.config.name)
            rows.append((partition, name, instant, moved_to, status))
    return rows + skipped
