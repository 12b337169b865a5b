"""``DROP TABLE ... PURGE`` of a table at a ``LOCATION``: delete the table's files, no others.

A managed table's folder (``<wh>/<db>.db/<table>``) belongs to the catalog and is deleted
as a whole. An external table's ``LOCATION`` may be a folder that holds other things too
(``LOCATION '/data'`` beside ``/data/reports/``, a non-partitioned table's files beside
other files): deleting the folder took those with it. So a purge deletes what is the
table's:

* ``.hoodie/`` (timeline, properties, archive, markers, heartbeats, the metadata table);
* in the table's partition folders (those holding ``.hoodie_partition_metadata``, as the
  file-system view finds them): the partition metadata file and every file named as a
  Hudi base or log file (committed ones, which the timeline names, and the leftovers of
  failed writes, which belong to no one else), with their Hadoop ``.crc`` companions;
* then the folders this leaves empty, up to and including the location itself.

Anything else stays: other files and folders, a folder below the location that is the
base path of another table (it holds its own ``.hoodie``). A location without a Hudi
table (no ``.hoodie``) is left alone entirely.
"""

from __future__ import annotations

import contextlib
import os

from hudilite.storage.fs import FileEntry, FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName, is_partition_metadata_name

_TIMELINE_DIR = ".hoodie"


def _is_table_file(name: str) -> bool:
    """A partition folder's file that belongs to the table (see the module docstring)."""
    if name.startswith(".") and name.endswith(".crc"):  # Hadoop's checksum of a file
        name = name[1:-4]
    return bool(
        is_partition_metadata_name(name) or BaseFileName.parse(name) or LogFileName.parse(name)
    )


def purge_table_files(gw: FileSystemGateway) -> list[str]:
    """Delete the table at ``gw``'s base path and only its files; returns the deleted
    table-relative file paths (``.hoodie/`` as one entry), sorted."""
    if not gw.is_dir(_TIMELINE_DIR):
        return []
    deleted: list[str] = []
    folders: list[str] = []
    stack = [""]
    while stack:
        folder = stack.pop()
        entries: list[FileEntry] = gw.list_dir(folder)
        if folder and any(e.is_dir and e.name == _TIMELINE_DIR for e in entries):
            continue  # another table's base path, nested in this location
        partition = any(not e.is_dir and is_partition_metadata_name(e.name) for e in entries)
        for entry in entries:
            if entry.is_dir:
                if not entry.name.startswith("."):  # .hoodie below; hidden folders stay
                    stack.append(entry.path)
                    folders.append(entry.path)
            elif partition and _is_table_file(entry.name):
                gw.delete_file(entry.path)
                deleted.append(entry.path)
    gw.delete_dir(_TIMELINE_DIR)
    deleted.append(_TIMELINE_DIR + "/")
    # Deepest first, so a folder whose only content was emptied folders goes too.
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        _remove_if_empty(gw, folder)
    _remove_if_empty(gw, "")
    return sorted(deleted)


def _remove_if_empty(gw: FileSystemGateway, folder: str) -> None:
    """Remove ``folder`` (``""``: the location) when it holds nothing."""
    with contextlib.suppress(OSError):
        if gw.is_local:
            os.rmdir(gw.abs_path(folder))  # refuses a folder that is not empty
        elif not gw.list_dir(folder) and "/" in gw.abs_path(folder).strip("/"):
            # An object store's empty folder marker (never a whole bucket).
            gw.filesystem.delete_dir(gw.abs_path(folder))


__all__ = ["purge_table_files"]
