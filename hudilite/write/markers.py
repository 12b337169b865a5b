"""Marker files: which data files a write created, for rollback.

Before a task creates a data file it drops an empty marker
``.hoodie/.temp/<instant>/<partition>/<file name>.marker.<IO type>`` (Hudi's
direct-marker layout: CREATE for a new base file, MERGE for a rewritten one,
APPEND for a log file). A rollback deletes exactly the marked files, which
matters for version-6 log files: their names carry the slice's base instant,
not the instant that wrote them. Markers are deleted once the instant
completes or is rolled back.

A write's data file also needs its partition's metadata file
(``.hoodie_partition_metadata``, what makes a folder a partition): :func:`mark_data_file`
writes it, if absent, just before the marker, as Hudi's write handles do
(``HoodiePartitionMetadata.trySave``). Only a partition a file actually lands in gets it:
written up front for every partition the input's keys named, a record a global index kept
in its stored partition (``update.partition.path=false``) or a delete of an absent key left
an empty folder holding nothing but that file.
"""

from __future__ import annotations

import posixpath
from typing import Literal

from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import write_partition_metadata

TEMP_DIR = ".hoodie/.temp"
IOType = Literal["CREATE", "MERGE", "APPEND"]
_SUFFIX = ".marker."


def marker_dir(instant_time: str) -> str:
    """The folder holding one instant's markers."""
    return f"{TEMP_DIR}/{instant_time}"


def create_marker(gw: FileSystemGateway, instant_time: str, rel_path: str, io_type: IOType) -> None:
    """Record that ``rel_path`` is about to be written by ``instant_time``."""
    gw.write_bytes(f"{marker_dir(instant_time)}/{rel_path}{_SUFFIX}{io_type}", b"")


# (partition URI, instant) pairs whose metadata file this process has seen or written: one
# existence check per partition and write, not one per file (many files per partition).
_PARTITIONS_READY: set[tuple[str, str]] = set()


def mark_data_file(
    gw: FileSystemGateway, instant_time: str, rel_path: str, io_type: IOType
) -> None:
    """Before ``instant_time`` writes the data file ``rel_path``: its partition's metadata
    file (if absent; see the module docstring), then the marker."""
    partition = posixpath.dirname(rel_path)
    seen = (gw.uri(partition), instant_time)
    if seen not in _PARTITIONS_READY:
        write_partition_metadata(gw, partition, instant_time)
        if len(_PARTITIONS_READY) > 10_000:  # a long-lived server: forget older writes'
            _PARTITIONS_READY.clear()
        _PARTITIONS_READY.add(seen)
    create_marker(gw, instant_time, rel_path, io_type)


def marked_files(gw: FileSystemGateway, instant_time: str) -> list[str]:
    """Table-relative paths of the data files an instant's markers name."""
    root = marker_dir(instant_time)
    if not gw.exists(root):
        return []
    out = []
    for entry in gw.list_recursive(root):
        if entry.is_dir or _SUFFIX not in entry.name:
            continue
        rel = entry.path[len(root) + 1 :]
        out.append(rel[: rel.rindex(_SUFFIX)])
    return sorted(out)


def delete_markers(gw: FileSystemGateway, instant_time: str) -> None:
    """Remove an instant's markers (after it completed or was rolled back)."""
    root = marker_dir(instant_time)
    if gw.exists(root):
        gw.delete_dir(root)
