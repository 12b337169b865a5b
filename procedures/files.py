"""File inspection procedures: ``show_file_status`` (what became of one data file) and
``show_fs_path_detail`` (directory counts and sizes under a path).

Parameters and output columns are Hudi's (``ShowFileStatusProcedure`` and
``ShowFsPathDetailProcedure`` in ``hudi-spark-datasource``, ``command/procedures``); as in
the other procedures, ``show_file_status`` also takes ``path`` after Hudi's parameters, so
``table`` is optional there. Both are read-only.

``show_file_status`` answers in Hudi's order, first match wins:

1. ``deleted`` by a completed **clean** -- active timeline (newest first), then archived;
2. ``deleted`` by a completed **rollback** -- active, then archived;
3. ``deleted`` by a completed **restore** (active timeline only, as Hudi);
4. ``exist``: the partition folder lists a file of exactly that name (``full_path`` is its
   URI's path, Hudi's ``toUri.getPath``);
5. otherwise ``unknown``, every other column empty.

A file "was deleted" when any partition's ``successDeleteFiles`` entry *contains* the
name, as Hudi matches (a prefix such as a file id matches too). A partitioned table needs
``partition``; a partition folder that does not exist is an error (Hudi fails listing it).

``show_fs_path_detail`` gives, per path matched by ``path`` (a Hadoop glob; with
``is_sub`` its children instead), Hadoop's content summary: sub-folder count including
the folder itself, file count and total bytes, largest first (``sort => false``: most
files first), the first ``limit``. Ties keep path order (Spark's sort leaves them
unspecified). Beyond Hudi: Hudi's row puts the quota in ``space_consumed`` and the space
consumed in ``quota``; here each value is in the column that names it (on non-HDFS
storage the space consumed is the length, the quotas ``-1``). A path that does not exist is
an error (Hudi fails with a NullPointerException), a glob that matches nothing no rows.
"""

from __future__ import annotations

import struct
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any
from urllib.parse import urlsplit

from hudilite.services.archive import archived_timeline
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLEAN, RESTORE, ROLLBACK
from hudilite.timeline.metadata import read_avro_record

from .fsview import display_path, glob_regex
from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

# ---------------------------------------------------------------------------------------
# show_file_status

_EMPTY = ""


def _deletes(partition_metadata: Any, file_name: str) -> bool:
    """Whether any partition's ``successDeleteFiles`` names ``file_name`` (substring, as
    Hudi: its partition-specific check is subsumed by the any-partition one)."""
    for meta in (partition_metadata or {}).values():
        if any(file_name in str(f) for f in (meta or {}).get("successDeleteFiles") or []):
            return True
    return False


def _active_completed(state: TableState, action: str) -> list[Any]:
    """Completed ``action`` instants of the active timeline, newest first."""
    found = [i for i in state.timeline.filter(actions=action) if i.is_completed]
    return sorted(found, key=lambda i: i.requested_time, reverse=True)


def _find_deletion(state: TableState, file_name: str) -> tuple[str, str, str] | None:
    """``(action, instant, timeline)`` of the instant that deleted the file, or None."""
    archived: list[Any] | None = None

    def archived_of(action: str) -> list[Any]:
        nonlocal archived
        if archived is None:  # read the archive only when the active timeline has no answer
            archived = archived_timeline(state)
        done = [a for a in archived if a.action == action and a.is_completed]
        return sorted(done, key=lambda a: a.requested_time, reverse=True)

    for action in (CLEAN, ROLLBACK):
        for inst in _active_completed(state, action):
            meta = read_avro_record(state.timeline.instant_content(inst))
            if _deletes(meta.get("partitionMetadata"), file_name):
                return action, inst.requested_time, "active"
        for a in archived_of(action):
            if _deletes((a.metadata or {}).get("partitionMetadata"), file_name):
                return action, a.requested_time, "archived"
    for inst in _active_completed(state, RESTORE):
        meta = read_avro_record(state.timeline.instant_content(inst))
        for rollbacks in (meta.get("hoodieRestoreMetadata") or {}).values():
            if any(_deletes(r.get("partitionMetadata"), file_name) for r in rollbacks or []):
                return RESTORE, inst.requested_time, "active"
    return None


@procedure(
    "show_file_status",
    [
        Param("table", "string"),
        Param("partition", "string"),
        Param("file", "string", required=True),
        Param("path", "string"),
    ],
    [
        Output("status"),
        Output("action"),
        Output("instant"),
        Output("timeline"),
        Output("full_path"),
    ],
    "Shows whether a data file exists or which clean, rollback or restore deleted it.",
    read_only=True,
)
def show_file_status(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row: ``deleted`` with the clean, rollback or restore that deleted the file
    (cleans, then rollbacks, each on the active then the archived timeline, then restores),
    else ``exist`` with its path, else ``unknown``. A file is deleted when a deleted path
    contains its name."""
    state = ctx.table(args).state()
    partition = str(args["partition"]).strip().strip("/") if args["partition"] else ""
    file_name = str(args["file"]).strip()
    if not file_name:
        raise ProcedureArgumentError(f"{ctx.procedure}: file names no file")
    if not partition and state.config.is_partitioned:
        name = args["table"] or args["path"]
        raise ProcedureArgumentError(
            f"{ctx.procedure}: table {name} is a partitioned table; give the partition "
            "(partition => ...) the file is in"
        )
    found = _find_deletion(state, file_name)
    if found is not None:
        action, instant, timeline = found
        return [("deleted", action, instant, timeline, _EMPTY)]
    if partition and not state.gw.is_dir(partition):
        raise ProcedureError(
            f"{ctx.procedure}: partition {partition!r} does not exist in {state.gw.abs_path('')}"
        )
    for entry in state.gw.list_dir(partition):
        if entry.name == file_name:
            full = urlsplit(state.gw.uri(join(partition, file_name))).path
            return [("exist", _EMPTY, _EMPTY, "active", full)]
    return [("unknown", _EMPTY, _EMPTY, _EMPTY, _EMPTY)]


# ---------------------------------------------------------------------------------------
# show_fs_path_detail

_GLOB_CHARS = frozenset("*?[{")


def human_size(size: int) -> str:
    """Hudi's ``getFileSize``: bytes as ``B``, or ``KB``/``MB``/``GB`` with two decimals
    (``DecimalFormat("0.00")``, half-even, of the size as a Java float divided by the unit:
    the float rounding shows in large sizes, as in Hudi)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size // scale >= 1:
            as_float = struct.unpack("f", struct.pack("f", float(size)))[0]
            # Dividing a float by a power of two is exact, so Decimal's quotient is Java's.
            value = Decimal(as_float) / Decimal(scale)
            return f"{value.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN)}{unit}"
    return f"{size}B"


def _summary(gw: FileSystemGateway, rel: str, is_dir: bool, size: int) -> tuple[int, int, int]:
    """Hadoop's content summary: (folders including ``rel`` itself, files, bytes)."""
    if not is_dir:
        return 0, 1, size
    entries = gw.list_recursive(rel)
    files = [e for e in entries if not e.is_dir]
    return 1 + sum(1 for e in entries if e.is_dir), len(files), sum(e.size for e in files)


def _glob(gw: FileSystemGateway, pattern: str) -> list[tuple[str, bool, int]]:
    """``(relative path, is folder, size)`` of what the glob (relative to the gateway's
    root) matches, level by level as Hadoop's ``globStatus``."""
    matched: list[tuple[str, bool, int]] = [("", True, 0)]
    for part in [p for p in pattern.split("/") if p]:
        regex = glob_regex(part) if _GLOB_CHARS & set(part) else None
        nxt: list[tuple[str, bool, int]] = []
        for rel, is_dir, _ in matched:
            if not is_dir:
                continue
            for entry in gw.list_dir(rel):
                if regex.fullmatch(entry.name) is not None if regex else entry.name == part:
                    nxt.append((entry.path, entry.is_dir, entry.size))
        matched = nxt
    return matched


def _root_and_pattern(path: str) -> tuple[str, str]:
    """Split ``path`` into the longest glob-free leading folder and the rest."""
    scheme_end = path.find("://")
    start = scheme_end + 3 if scheme_end >= 0 else 0
    head, parts = path[:start], path[start:].split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS & set(part):
            prefix = "/".join(parts[:i]) or ("/" if path[start:].startswith("/") else ".")
            return head + prefix, "/".join(parts[i:])
    return path, ""


@procedure(
    "show_fs_path_detail",
    [
        Param("path", "string", required=True),
        Param("is_sub", "boolean", default=False),
        Param("sort", "boolean", default=True),
        Param("limit", "integer", default=100),
    ],
    [
        Output("path_num", "bigint"),
        Output("file_num", "bigint"),
        Output("storage_size", "bigint"),
        Output("storage_size(unit)"),
        Output("storage_path"),
        Output("space_consumed", "bigint"),
        Output("quota", "bigint"),
        Output("space_quota", "bigint"),
    ],
    "Shows folder count, file count and size of a path (a glob) or of its children.",
    read_only=True,
)
def show_fs_path_detail(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per path matched (or child, with ``is_sub``), largest first (``sort``) or
    most files first, the first ``limit``."""
    text = str(args["path"]).strip()
    if not text:
        raise ProcedureArgumentError(f"{ctx.procedure}: path names no path")
    root, pattern = _root_and_pattern(text)
    gw = FileSystemGateway(root)
    if pattern:
        targets = _glob(gw, pattern) if gw.is_dir("") else []
    elif gw.is_dir(""):
        targets = [("", True, 0)]
    elif gw.exists(""):
        targets = [("", False, gw.size(""))]
    else:
        raise ProcedureError(f"{ctx.procedure}: path {text!r} does not exist")
    if args["is_sub"]:
        children = []
        for rel, is_dir, _ in targets:
            if not is_dir:
                raise ProcedureError(
                    f"{ctx.procedure}: path {text!r} is a file; is_sub lists a folder's children"
                )
            children += [(e.path, e.is_dir, e.size) for e in gw.list_dir(rel)]
        targets = children
    rows = []
    for rel, is_dir, size in targets:
        folders, files, length = _summary(gw, rel, is_dir, size)
        rows.append((folders, files, length, human_size(length), display_path(gw, rel)))
    rows.sort(key=lambda r: r[4])
    rows.sort(key=lambda r: r[2] if args["sort"] else r[1], reverse=True)
    return [(*r, r[2], -1, -1) for r in rows[: max(args["limit"], 0)]]
