"""Plan-time checks that the files the timeline names are the files on storage.

The file-system view is built from directory listings, so a base or log file that a
completed commit wrote but that is gone (deleted by hand, lost by a copy) silently drops
out of the view: the read then shows the file group's older version, or nothing, and no
one notices. Checked here, on the driver, from what the plan already has (the commit
metadata of the visible commits and the listed slices with their sizes), without opening
a data file:

* the newest base file a visible commit wrote for a live file group must be the live
  slice's base file (or an even newer one), and at least as large as the commit recorded;
* a log file a visible commit wrote into the live slice must be among the slice's logs,
  and at least as large as recorded (Hudi records the log's size after the append).

Only partitions present in the listing are checked (a partition folder lost as a whole
is not detected: timeline-only tables name files in folders that never existed).

A missing file raises :class:`MissingFileError`, a short one :class:`CorruptFileError`,
both naming the file and the commit. With ``hoodie.hudilite.read.ignore.missing.files``
the read goes on with a warning instead, leaving out the file group of a damaged base
file (its rows are in that file; showing the older version would resurrect old values).
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hudilite.errors import CorruptFileError, MissingFileError
from hudilite.filegroup.slices import FileSlice
from hudilite.filegroup.view import FileSystemView, Visibility
from hudilite.storage.layout import BaseFileName, LogFileName

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Written:
    """A file a visible commit names: its path, recorded size and the commit."""

    path: str
    size: int
    commit: str


def _named_files(
    view: FileSystemView, vis: Visibility, in_scope: Callable[[tuple[str, str]], bool]
) -> tuple[dict[tuple[str, str], _Written], dict[tuple[str, str], list[_Written]]]:
    """Per file group in scope: the newest base file and every log file visible commits
    wrote (a log written by several appends keeps its largest recorded size)."""
    bases: dict[tuple[str, str], tuple[str, _Written]] = {}
    logs: dict[str, _Written] = {}
    log_groups: dict[str, tuple[str, str]] = {}
    for instant in view.timeline.commits():
        if not vis.is_visible(instant.requested_time):
            continue
        metadata = view.commit_metadata(instant.requested_time)
        if metadata is None:
            continue
        for partition, stats in metadata.partition_to_write_stats.items():
            for stat in stats:
                if not stat.path or not stat.file_id:
                    continue
                group = (partition or "", stat.file_id)
                if not in_scope(group):
                    continue
                name = posixpath.basename(stat.path)
                size = int(stat.file_size_in_bytes or 0)
                written = _Written(stat.path, size, instant.requested_time)
                if name.startswith("."):
                    if LogFileName.parse(name) is None:
                        continue
                    known = logs.get(stat.path)
                    if known is None or known.size < size:
                        logs[stat.path] = written
                    log_groups[stat.path] = group
                    continue
                base = BaseFileName.parse(name)
                if base is None:
                    continue
                newest = bases.get(group)
                if newest is None or newest[0] < base.instant_time:
                    bases[group] = (base.instant_time, written)
    per_group: dict[tuple[str, str], list[_Written]] = {}
    for path, written in logs.items():
        per_group.setdefault(log_groups[path], []).append(written)
    return {g: w for g, (_, w) in bases.items()}, per_group


def _log_in_live_slice(view: FileSystemView, vis: Visibility, log: _Written, live: str) -> bool:
    """Whether a named log belongs to the slice with base instant ``live`` (else it belongs
    to an older slice, which the cleaner may have removed)."""
    name = LogFileName.parse(posixpath.basename(log.path))
    if name is None:
        return False
    if view.table_version >= 8:  # logs join the slice their completion time falls in
        return (vis.completion(log.commit) or log.commit) >= live
    return name.base_instant >= live  # v6: the name carries the slice's base instant


def check_slices(
    view: FileSystemView,
    vis: Visibility,
    slices: Iterable[FileSlice],
    in_scope: Callable[[tuple[str, str]], bool],
    *,
    ignore_missing: bool = False,
) -> list[FileSlice]:
    """``slices`` after checking them against the visible commits' write stats (see the
    module docstring); ``in_scope`` says which file groups the read covers."""
    live = {s.group_key: s for s in slices}
    replaced = view.replaced_file_groups(vis.as_of, vis.completed_by)
    # Only partitions the listing has (a folder with partition metadata): the files of a
    # partition folder that is gone as a whole are not detected here.
    listed = set(view.partitions())
    bases, logs = _named_files(
        view, vis, lambda g: g[0] in listed and in_scope(g) and g not in replaced
    )
    problems: list[tuple[CorruptFileError, tuple[str, str] | None]] = []

    def report(error: CorruptFileError, drop: tuple[str, str] | None) -> None:
        problems.append((error, drop))

    for group, base in sorted(bases.items()):
        current = live.get(group)
        have = current.base_file if current is not None else None
        shown = f"{view.gw.abs_path(base.path)} (written by commit {base.commit})"
        base_instant = BaseFileName.parse(posixpath.basename(base.path))
        newest = base_instant.instant_time if base_instant is not None else ""
        if have is None or have.instant_time < newest:
            report(MissingFileError(f"base file {shown} is missing"), group)
        elif have.path == base.path and have.size < base.size:
            message = f"base file {shown} is truncated: {have.size} of {base.size} bytes"
            report(CorruptFileError(message), group)
    for group, written in sorted(logs.items()):
        current = live.get(group)
        if current is None:
            if group not in bases:  # a log-only group whose every file is gone
                for log in written:
                    shown = f"{view.gw.abs_path(log.path)} (written by commit {log.commit})"
                    report(MissingFileError(f"log file {shown} is missing"), None)
            continue
        present = {f.path: f for f in current.log_files}
        for log in sorted(written, key=lambda w: w.path):
            if not _log_in_live_slice(view, vis, log, current.base_instant):
                continue
            shown = f"{view.gw.abs_path(log.path)} (written by commit {log.commit})"
            found = present.get(log.path)
            if found is None:
                report(MissingFileError(f"log file {shown} is missing"), None)
            elif found.size < log.size:
                message = f"log file {shown} is truncated: {found.size} of {log.size} bytes"
                report(CorruptFileError(message), None)
    if not problems:
        return list(live.values())
    if not ignore_missing:
        first = problems[0][0]
        more = f" (and {len(problems) - 1} more damaged files)" if len(problems) > 1 else ""
        hint = "; set hoodie.hudilite.read.ignore.missing.files=true to read without them"
        raise type(first)(f"{first}{more}{hint}")
    dropped = {drop for _, drop in problems if drop is not None}
    for error, drop in problems:
        left_out = " -- its file group is left out of the read" if drop is not None else ""
        _LOG.warning("%s%s", error, left_out)
    return [s for key, s in live.items() if key not in dropped]
