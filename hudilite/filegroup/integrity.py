"""The files the timeline names against the files the listing has: damage found without
opening a data file.

The file-system view is built from directory listings, so a base or log file that a
completed commit wrote but that is gone (deleted by hand, lost by a copy) silently drops
out of the view: the file group's older version, or nothing, takes its place. Found here,
from the commit metadata of the visible commits and the listed slices with their sizes:

* the newest base file a visible commit wrote for a live file group must be the live
  slice's base file (or an even newer one), and at least as large as the commit recorded;
* a log file a visible commit wrote into the live slice must be among the slice's logs,
  and at least as large as recorded (Hudi records the log's size after the append).

Only partitions present in the listing are checked (a partition folder lost as a whole
is not detected: timeline-only tables name files in folders that never existed).

Two callers decide what to do with the damage: reads
(:func:`hudilite.read.file_checks.check_slices`: fail, or leave the group out with
``hoodie.hudilite.read.ignore.missing.files``), and everything that builds on the latest
slices -- writes, their index lookups and small-file packing, compaction, clustering --
through :meth:`FileSystemView.latest_slices`, which refuses (:func:`write_refusal`): a
write merged into, or packed into, the previous version of a group would revert the
commit whose file is missing, and later reads would succeed without a word.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from hudilite.errors import CorruptFileError, MissingFileError
from hudilite.filegroup.slices import FileSlice
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.timeline.metadata import CommitMetadata
from hudilite.timeline.timeline import Timeline

GroupKey = tuple[str, str]


class Visibility(Protocol):
    """What is used of :class:`hudilite.filegroup.view.Visibility` (the view imports this
    module, so it is named by its shape)."""

    @property
    def as_of(self) -> str | None: ...

    @property
    def completed_by(self) -> str | None: ...

    def is_visible(self, instant_time: str) -> bool: ...

    def completion(self, instant_time: str) -> str: ...


class FileSystemView(Protocol):
    """What is used of :class:`hudilite.filegroup.view.FileSystemView`."""

    gw: FileSystemGateway
    timeline: Timeline
    table_version: int

    def partitions(self) -> list[str]: ...

    def commit_metadata(self, requested_time: str) -> CommitMetadata | None: ...

    def replaced_file_groups(
        self, as_of: str | None = None, completed_by: str | None = None
    ) -> set[GroupKey]: ...


@dataclass(frozen=True)
class _Written:
    """A file a visible commit names: its path, recorded size and the commit."""

    path: str
    size: int
    commit: str


@dataclass(frozen=True)
class Damage:
    """One damaged file: the error naming it, its file group, and whether the group's rows
    live in it (a base file: a read leaving the file out must leave the group out)."""

    error: CorruptFileError
    group: GroupKey
    whole_group: bool


def _named_files(
    view: FileSystemView, vis: Visibility, in_scope: Callable[[GroupKey], bool]
) -> tuple[dict[GroupKey, _Written], dict[GroupKey, list[_Written]]]:
    """Per file group in scope: the newest base file and every log file visible commits
    wrote (a log written by several appends keeps its largest recorded size)."""
    bases: dict[GroupKey, tuple[str, _Written]] = {}
    logs: dict[str, _Written] = {}
    log_groups: dict[str, GroupKey] = {}
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
    per_group: dict[GroupKey, list[_Written]] = {}
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


def find_damage(
    view: FileSystemView,
    vis: Visibility,
    slices: Iterable[FileSlice],
    in_scope: Callable[[GroupKey], bool],
) -> list[Damage]:
    """The damaged files of the file groups in scope, ``slices`` being their live slices
    under ``vis`` (see the module docstring), in file group order."""
    live = {s.group_key: s for s in slices}
    replaced = view.replaced_file_groups(vis.as_of, vis.completed_by)
    listed = set(view.partitions())
    bases, logs = _named_files(
        view, vis, lambda g: g[0] in listed and in_scope(g) and g not in replaced
    )
    found: list[Damage] = []
    for group, base in sorted(bases.items()):
        current = live.get(group)
        have = current.base_file if current is not None else None
        shown = f"{view.gw.abs_path(base.path)} (written by commit {base.commit})"
        base_instant = BaseFileName.parse(posixpath.basename(base.path))
        newest = base_instant.instant_time if base_instant is not None else ""
        if have is None or have.instant_time < newest:
            found.append(Damage(MissingFileError(f"base file {shown} is missing"), group, True))
        elif have.path == base.path and have.size < base.size:
            message = f"base file {shown} is truncated: {have.size} of {base.size} bytes"
            found.append(Damage(CorruptFileError(message), group, True))
    for group, written in sorted(logs.items()):
        current = live.get(group)
        if current is None:
            if group not in bases:  # a log-only group whose every file is gone
                for log in written:
                    shown = f"{view.gw.abs_path(log.path)} (written by commit {log.commit})"
                    error = MissingFileError(f"log file {shown} is missing")
                    found.append(Damage(error, group, False))
            continue
        present = {f.path: f for f in current.log_files}
        for log in sorted(written, key=lambda w: w.path):
            if not _log_in_live_slice(view, vis, log, current.base_instant):
                continue
            shown = f"{view.gw.abs_path(log.path)} (written by commit {log.commit})"
            on_disk = present.get(log.path)
            if on_disk is None:
                found.append(Damage(MissingFileError(f"log file {shown} is missing"), group, False))
            elif on_disk.size < log.size:
                message = f"log file {shown} is truncated: {on_disk.size} of {log.size} bytes"
                found.append(Damage(CorruptFileError(message), group, False))
    return found


def write_refusal(damage: list[Damage]) -> CorruptFileError:
    """The error a write or table service raises on damaged latest slices: the first file
    named, what to do, and how many more there are."""
    first = damage[0].error
    more = f" (and {len(damage) - 1} more damaged files)" if len(damage) > 1 else ""
    return type(first)(
        f"{first}{more}: a write cannot build on its file group (it would revert that "
        "commit); put the file back, or roll back or restore the table past that commit"
    )


__all__ = ["Damage", "find_damage", "write_refusal"]
