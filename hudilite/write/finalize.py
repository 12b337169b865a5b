"""Finalize a write before its instant completes: delete the files the commit does not name.

Spark retries a failed task, re-runs tasks of a lost stage and may run speculative
copies. Every attempt names its files with its own write token
(``<partition>-<stage>-<attempt id>``), so a retried task leaves its first attempt's
file next to the one the commit names: a second base file of the same file group and
instant, a second log file of the same version, or -- for ``bulk_insert``, whose tasks
open new file groups -- a whole extra file group. Readers that follow the commit
metadata cope, but readers that list the partition (hudi-rs, Hudi's own file-system
view) see two files for one slice (hudi-rs refuses the table: ``Timestamp ... is
already present in File Group``) or the extra group's rows twice.

Hudi's answer is ``HoodieTable.finalizeWrite``: before completing an instant,
reconcile the markers (one per file any attempt *started* to write, see
:mod:`hudilite.write.markers`) with the write stats and delete every marked file the
stats do not name. :func:`finalize_write` does exactly that; writes
(:class:`hudilite.write.transaction.WriteTransaction`) and table services
(compaction, clustering) call it right before completing their instant. Deleting
a file only this instant's markers name is safe at any time: no completed commit
refers to it, and hudilite never appends to an existing file (a log version is
written once), so a marked file is always a file this instant created.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.write.markers import marked_files

log = logging.getLogger("hudilite.write")


def committed_paths(stats: Iterable[WriteStat]) -> set[str]:
    """Table-relative paths of the data files ``stats`` name: each stat's ``path`` and,
    for merge-on-read stats, its ``logFiles`` (names relative to the partition)."""
    out: set[str] = set()
    for stat in stats:
        if stat.path:
            out.add(stat.path)
        partition = stat.partition_path or ""
        for name in stat.log_files or []:
            out.add(f"{partition}/{name}" if partition else name)
    return out


def stray_files(gw: FileSystemGateway, instant_time: str, stats: Iterable[WriteStat]) -> list[str]:
    """Files the markers of ``instant_time`` name that exist but ``stats`` do not name."""
    named = committed_paths(stats)
    return [p for p in marked_files(gw, instant_time) if p not in named and gw.exists(p)]


def finalize_write(
    gw: FileSystemGateway, instant_time: str, stats: Iterable[WriteStat] | CommitMetadata
) -> list[str]:
    """Delete the files ``instant_time`` marked but does not commit; returns their paths.

    ``stats`` are the write stats the instant completes with (or its commit metadata).
    Call it before completing the instant: a crash in between leaves the instant
    pending, and its rollback deletes every marked file anyway.
    """
    if isinstance(stats, CommitMetadata):
        stats = stats.write_stats()
    stray = stray_files(gw, instant_time, list(stats))
    for path in stray:
        log.info(
            "instant %s: deleting %s, written by a failed or duplicate task", instant_time, path
        )
        gw.delete_file(path)
    return stray
