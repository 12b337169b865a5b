"""Cleaning old file slices of the metadata table's ``files`` partition.

Every compaction (:mod:`~hudilite.metadata.compact`) starts a new file slice of
``files-0000-0``; the older slices' base and log files are read by no one once the new slice
is complete. Hudi cleans them with a ``clean`` instant on the metadata timeline
(``HoodieBackedTableMetadataWriter.cleanIfNecessary``), and only once three instants
completed after the latest compaction, so a reader that listed the previous slice before the
compaction completed can still finish. :func:`clean_if_due` does the same from
:func:`hudilite.metadata.sync.before_complete`, keeping the latest two slices (the policy
``KEEP_LATEST_FILE_VERSIONS`` with two versions: a reader is at most one compaction behind):

1. ``T.clean.requested`` and ``T.clean.inflight``: an Avro ``HoodieCleanerPlan`` (version 2)
   naming the older slices' files in partition ``files`` (full URIs, as Hudi writes them) and
   the earliest retained instant (the compaction that starts the older kept slice);
2. the files are deleted;
3. ``T_<completion>.clean``: ``HoodieCleanMetadata`` (version 2) with the deleted names.

The same clean deletes the stats partitions' old slices (column_stats, partition_stats:
:func:`hudilite.metadata.column_stats_compact.stale_files`, the same rule per file group),
each partition under its own key of the plan and the clean metadata.

A crash between the steps leaves a pending clean, which the next call finishes (deleting
what is left of its plan). The reader never reads a cleaned slice: it reads the latest one.
"""

from __future__ import annotations

import logging
from typing import Any

from hudilite.metadata import column_stats_compact
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.timeline.instant import CLEAN, Instant, State
from hudilite.timeline.instant_time import next_instant_time
from hudilite.timeline.metadata import read_avro_record, write_avro_record

log = logging.getLogger(__name__)

#: Instants that must complete after the latest compaction before a clean (Hudi's buffer).
MIN_INSTANTS_AFTER_COMPACTION = 3
#: File slices kept: the latest and the one before it.
SLICES_RETAINED = 2
POLICY = "KEEP_LATEST_FILE_VERSIONS"
PLAN_VERSION = 2
METADATA_VERSION = 2


def stale_files(gw: FileSystemGateway, timeline: mt.MetadataTimeline) -> tuple[list[str], str]:
    """Table-relative paths of the files of ``files-0000-0``'s slices older than the latest
    :data:`SLICES_RETAINED`, and the base instant of the oldest slice kept ("" when fewer
    slices exist). A log file joins the slice of the latest base instant before its
    deltacommit's completion (Hudi 1.x); logs of deltacommits not on the timeline are kept."""
    part_dir = join(mt.METADATA_DIR, mt.FILES_PARTITION)
    bases: dict[str, list[str]] = {}
    logs: list[tuple[str, str]] = []
    for entry in gw.list_dir(part_dir):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName) and parsed.file_id == mt.FILES_FILE_ID:
            bases.setdefault(parsed.instant_time, []).append(entry.path)
        elif isinstance(parsed, LogFileName) and parsed.file_id == mt.FILES_FILE_ID:
            logs.append((parsed.base_instant, entry.path))
    starts = sorted(
        t for t in bases if t in timeline.compactions or t.startswith(mt.INIT_INSTANT[:14])
    )
    if len(starts) <= SLICES_RETAINED:
        return [], ""
    keep_from = starts[-SLICES_RETAINED]
    out = [p for t, paths in bases.items() if t in starts and t < keep_from for p in paths]
    for instant, path in logs:
        done = timeline.deltacommits.get(instant)
        if done is not None and done < keep_from:
            out.append(path)
    return sorted(out), keep_from


def clean_if_due(gw: FileSystemGateway, timeline: mt.MetadataTimeline | None = None) -> str | None:
    """Finish a pending clean, else clean the files partition's old slices when due (see the
    module docstring); the caller holds the table lock. Returns the clean's instant time, or
    None when nothing was cleaned."""
    mdt = timeline if timeline is not None else mt.load_timeline(gw)
    pending = _pending_cleans(gw)
    if pending:
        return _execute(gw, *pending[0])
    last = mdt.last_compaction
    if last is None:
        return None
    after = [t for t, done in mdt.deltacommits.items() if done > mdt.compactions[last]]
    if len(after) < MIN_INSTANTS_AFTER_COMPACTION:
        return None
    files, keep_from = stale_files(gw, mdt)
    if not files:
        return None
    latest = max([*mdt.deltacommits.values(), *mdt.compactions.values()])
    instant_time = next_instant_time(latest)
    last_done = max(mdt.deltacommits, key=lambda t: mdt.deltacommits[t])
    plan = write_avro_record(
        "HoodieCleanerPlan",
        {
            "earliestInstantToRetain": {
                "timestamp": keep_from,
                "action": "commit" if keep_from in mdt.compactions else "deltacommit",
                "state": "COMPLETED",
            },
            "lastCompletedCommitTimestamp": last_done,
            "policy": POLICY,
            "filesToBeDeletedPerPartition": {},
            "version": PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                part: [{"filePath": gw.uri(p), "isBootstrapBaseFile": False} for p in paths]
                for part, paths in {
                    mt.FILES_PARTITION: files,
                    **column_stats_compact.stale_files(gw, mdt),  # the stats partitions'
                }.items()
            },
            "partitionsToBeDeleted": [],
            "extraMetadata": None,
        },
    )
    _timeline_file(gw, Instant(instant_time, CLEAN, State.REQUESTED), plan)
    return _execute(gw, instant_time, plan)


def _pending_cleans(gw: FileSystemGateway) -> list[tuple[str, bytes]]:
    states: dict[str, set[State]] = {}
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None and inst.action == CLEAN:
            states.setdefault(inst.requested_time, set()).add(inst.state)
    out = []
    for time in sorted(states):
        if State.COMPLETED not in states[time]:
            name = Instant(time, CLEAN, State.REQUESTED).file_name(mt.LAYOUT)
            out.append((time, gw.read_bytes(join(mt.TIMELINE_DIR, name))))
    return out


def _execute(gw: FileSystemGateway, instant_time: str, plan_bytes: bytes) -> str:
    plan = read_avro_record(plan_bytes)
    inflight = Instant(instant_time, CLEAN, State.INFLIGHT)
    if not gw.exists(join(mt.TIMELINE_DIR, inflight.file_name(mt.LAYOUT))):
        _timeline_file(gw, inflight, plan_bytes)
    prefix = gw.uri("").rstrip("/") + "/"
    by_partition: dict[str, tuple[list[str], list[str]]] = {}
    for part, items in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
        planned, deleted = by_partition.setdefault(str(part), ([], []))
        for item in items:
            uri = str(item["filePath"])
            rel = uri[len(prefix) :] if uri.startswith(prefix) else uri
            name = rel.rsplit("/", 1)[-1]
            planned.append(name)
            if gw.exists(rel):
                gw.delete_file(rel)
            deleted.append(name)  # gone either way (a finished retry deleted it before)
    total = sum(len(d) for _, d in by_partition.values())
    retained = plan.get("earliestInstantToRetain") or {}
    meta: dict[str, Any] = {
        "startCleanTime": instant_time,
        "timeTakenInMillis": 0,
        "totalFilesDeleted": total,
        "earliestCommitToRetain": str(retained.get("timestamp") or ""),
        "lastCompletedCommitTimestamp": str(plan.get("lastCompletedCommitTimestamp") or ""),
        "partitionMetadata": {
            part: {
                "partitionPath": part,
                "policy": POLICY,
                "deletePathPatterns": planned,
                "successDeleteFiles": deleted,
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            }
            for part, (planned, deleted) in by_partition.items()
        },
        "version": METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
        "extraMetadata": None,
    }
    done = Instant(instant_time, CLEAN, State.COMPLETED, next_instant_time(instant_time))
    _timeline_file(gw, done, write_avro_record("HoodieCleanMetadata", meta))
    log.info("cleaned %d old files of the metadata table of %s", total, gw.uri(""))
    return instant_time


def _timeline_file(gw: FileSystemGateway, instant: Instant, content: bytes = b"") -> None:
    name = join(mt.TIMELINE_DIR, instant.file_name(mt.LAYOUT))
    if not gw.create_exclusive(name, content):
        raise FileExistsError(f"metadata table: {name} exists")
