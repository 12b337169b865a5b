"""Compaction of the metadata table's ``files`` partition, as Hudi 1.x does it.

Every data instant adds a log file to ``files-0000-0`` (:func:`~hudilite.metadata.table.
write_deltacommit`), so without compaction a reader merges one more log file per instant.
Hudi compacts the metadata table once ``hoodie.metadata.compact.max.delta.commits`` (10)
deltacommits completed since its latest base file (``HoodieBackedTableMetadataWriter.
compactIfNecessary``, strategy ``NUM_COMMITS``), before it writes the deltacommit of the data
instant being completed; :func:`compact_if_due` does the same from
:func:`hudilite.metadata.sync.before_complete`:

1. ``C.compaction.requested`` on the metadata timeline, an Avro ``HoodieCompactionPlan``
   (version 2) with one operation for ``files/files-0000-0``: its base file and the log files
   of the current slice (:func:`~hudilite.metadata.table.current_slice`), then
   ``C.compaction.inflight`` (empty, as Hudi's);
2. the base file ``files-0000-0_0-0-0_C.hfile``: the slice's records merged with
   ``HoodieMetadataPayload``'s rule (:func:`~hudilite.metadata.records.merge_all`, tombstones
   kept, as Hudi's compacted base files hold them), ``_hoodie_file_name`` filled in;
3. ``C_<completion>.commit``: ``HoodieCommitMetadata`` with ``operationType=COMPACT`` and
   ``compacted=true``.

The compaction time ``C`` is Hudi 1.1's: a new instant time (Hudi takes the earliest data
instant pending on the data table but completed on the metadata table minus 1 ms; under the
table lock, after :func:`~hudilite.metadata.sync.roll_back_strays`, hudilite has none, and it
refuses to compact when one is left rather than fold a failed write into a base file). ``C``
is later than every completion on the metadata timeline, so the plan holds every completed
log file, and the deltacommit written next completes after ``C`` and belongs to the new slice
(Hudi 1.x slices by completion time). Readers ignore the base file until the commit
completes; a crash before that leaves a pending compaction that :func:`roll_back_pending`
removes (its base file, then its inflight and requested files) under the next lock.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import ConfigError
from hudilite.metadata import bloom_filters, column_stats_compact, hfiles
from hudilite.metadata import record_index as ri
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.timeline.instant import COMMIT, COMPACTION, Instant, State
from hudilite.timeline.instant_time import next_instant_time, now_instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat, write_avro_record
from hudilite.timeline.timeline import Timeline

log = logging.getLogger(__name__)

#: Fail point after the compacted base file is written, before the commit completes.
AFTER_BASE_FILE = "metadata_compaction_after_base_file"
#: The compaction plan's version (file names relative to the partition).
PLAN_VERSION = 2
#: The write operation Hudi's compaction commit records.
OPERATION = "COMPACT"


def max_delta_commits(options: Mapping[str, str]) -> int:
    """``hoodie.metadata.compact.max.delta.commits`` of the table's ``options``
    (ConfigError naming the value when it is not a positive integer)."""
    value = cfg.Options(dict(options)).get(cfg.METADATA_COMPACT_MAX_DELTA_COMMITS)
    if value < 1:
        raise ConfigError(
            f"{cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name} must be at least 1, got {value}"
        )
    return int(value)


def deltacommits_since_compaction(timeline: mt.MetadataTimeline) -> list[str]:
    """Requested times of the completed deltacommits that completed after the latest
    completed compaction was requested (all of them before the first), sorted: the log
    files a reader merges over the latest base file."""
    last = timeline.last_compaction
    return sorted(t for t, done in timeline.deltacommits.items() if last is None or done > last)


def compact_if_due(gw: FileSystemGateway, config: cfg.TableConfig, max_commits: int) -> str | None:
    """Compact the files partition when at least ``max_commits`` deltacommits completed since
    its latest base file (see the module docstring); the caller holds the table lock.
    Returns the compaction's instant time, or None when none was due (or possible)."""
    timeline = mt.load_timeline(gw)
    if len(deltacommits_since_compaction(timeline)) < max_commits:
        return None
    data_timeline = Timeline.load(gw, config)
    strays = [
        t
        for t in timeline.deltacommits
        if not t.startswith(mt.INIT_INSTANT[:14]) and not data_timeline.is_completed_or_archived(t)
    ]
    if strays:
        # Hudi compacts below the earliest such instant; hudilite's guard has rolled them
        # back before any write, so one left here is not ours to fold into a base file.
        log.info("metadata table of %s not compacted: pending data instants %s", gw.uri(""), strays)
        return None
    roll_back_pending(gw, timeline)
    return compact(gw, data_timeline, timeline)


def compact(
    gw: FileSystemGateway,
    data_timeline: Timeline,
    timeline: mt.MetadataTimeline | None = None,
) -> str:
    """Compact the files partition's current slice now (steps 1-3 of the module docstring);
    returns the compaction's instant time."""
    mdt = timeline if timeline is not None else mt.load_timeline(gw)
    file_slice = mt.current_slice(gw, data_timeline, mdt)
    latest = max(
        [*mdt.deltacommits, *mdt.deltacommits.values(), *mdt.compactions.values()], default=None
    )
    instant_time = next_instant_time(latest)
    base_name = file_slice.base_path.rsplit("/", 1)[-1] if file_slice.base_path else None
    log_names = [path.rsplit("/", 1)[-1] for _, path in file_slice.logs]
    log_bytes = sum(gw.size(path) for _, path in file_slice.logs)
    operation = {
        "baseInstantTime": file_slice.base_instant or instant_time,
        "deltaFilePaths": log_names,
        "dataFilePath": base_name,
        "fileId": mt.FILES_FILE_ID,
        "partitionPath": mt.FILES_PARTITION,
        # Hudi's metrics of the files partition's operation (its IO estimates are 0 there).
        "metrics": {
            "TOTAL_LOG_FILES": float(len(log_names)),
            "TOTAL_IO_MB": 0.0,
            "TOTAL_IO_READ_MB": 0.0,
            "TOTAL_LOG_FILES_SIZE": float(log_bytes),
            "TOTAL_IO_WRITE_MB": 0.0,
        },
        "bootstrapFilePath": None,
    }
    stats_units = column_stats_compact.units(gw, data_timeline, mdt)  # the stats partitions'
    stats_units += bloom_filters.compaction_units(gw, data_timeline, mdt)
    stats_units += ri.compaction_units(gw, data_timeline, mdt)
    plan = write_avro_record(
        "HoodieCompactionPlan",
        {
            "operations": [operation, *(u.operation(instant_time, gw) for u in stats_units)],
            "extraMetadata": {},
            "version": PLAN_VERSION,
            "strategy": None,
            "preserveHoodieMetadata": False,
            "missingSchedulePartitions": [],
        },
    )
    _timeline_file(gw, Instant(instant_time, COMPACTION, State.REQUESTED), plan)
    _timeline_file(gw, Instant(instant_time, COMPACTION, State.INFLIGHT))
    records = mt.read_slice(gw, file_slice)
    name = BaseFileName(mt.FILES_FILE_ID, mt.WRITE_TOKEN, instant_time, ".hfile").render()
    data = hfiles.encode_base_file(records.values(), file_name=name)
    gw.write_bytes(join(mt.METADATA_DIR, mt.FILES_PARTITION, name), data)
    stats_written = [
        (
            bloom_filters.compact_unit
            if u.partition == bloom_filters.PARTITION
            else ri.compact_unit
            if u.partition == ri.PARTITION
            else column_stats_compact.compact_unit
        )(gw, u, instant_time)
        for u in stats_units
    ]
    failpoints.check(None, AFTER_BASE_FILE)
    stat = WriteStat(
        file_id=mt.FILES_FILE_ID,
        path=f"{mt.FILES_PARTITION}/{name}",
        partition_path=mt.FILES_PARTITION,
        prev_commit=file_slice.base_instant or "null",
        num_writes=len(records),
        num_update_writes=len(records),
        total_write_bytes=len(data),
        file_size_in_bytes=len(data),
        total_log_files_compacted=len(log_names),
        total_log_size_compacted=log_bytes,
    )
    metadata = CommitMetadata(
        partition_to_write_stats={
            mt.FILES_PARTITION: [stat],
            **{
                p: [s for s in stats_written if s.partition_path == p]
                for p in (*column_stats_compact.PARTITIONS, bloom_filters.PARTITION, ri.PARTITION)
                if any(s.partition_path == p for s in stats_written)
            },
        },
        operation_type=OPERATION,
        extra_metadata={"schema": rec.schema_json_without_meta()},
        compacted=True,
    )
    done = Instant(instant_time, COMMIT, State.COMPLETED, next_instant_time(now_instant()))
    _timeline_file(gw, done, metadata.to_bytes(mt.LAYOUT))
    log.info(
        "compacted the metadata table of %s at %s (%d log files)",
        gw.uri(""),
        instant_time,
        len(log_names),
    )
    return instant_time


def roll_back_pending(
    gw: FileSystemGateway, timeline: mt.MetadataTimeline | None = None
) -> list[str]:
    """Remove every compaction of the metadata table that was requested but never completed
    (a crash mid-compaction, hudilite's or Hudi's): the base files it wrote in the files
    partition first (no reader reads them: their commit is missing), then its inflight and
    requested files. The caller holds the table lock. Returns the instant times removed."""
    mdt = timeline if timeline is not None else mt.load_timeline(gw)
    if not mdt.pending_compactions:
        return []
    part_dir = join(mt.METADATA_DIR, mt.FILES_PARTITION)
    for entry in gw.list_dir(part_dir):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName) and parsed.instant_time in mdt.pending_compactions:
            gw.delete_file(entry.path)
    for path in column_stats_compact.pending_base_files(gw, mdt.pending_compactions):
        gw.delete_file(path)
    for path in bloom_filters.pending_base_files(gw, mdt.pending_compactions):
        gw.delete_file(path)
    for path in ri.pending_base_files(gw, mdt.pending_compactions):
        gw.delete_file(path)
    order = {State.INFLIGHT: 0, State.REQUESTED: 1}
    found = []
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if (
            inst is not None
            and inst.action == COMPACTION
            and inst.requested_time in mdt.pending_compactions
            and inst.state in order
        ):
            found.append((order[inst.state], entry.path))
    for _, path in sorted(found):
        gw.delete_file(path)
    log.info(
        "rolled back metadata compactions %s of %s", sorted(mdt.pending_compactions), gw.uri("")
    )
    return sorted(mdt.pending_compactions)


def _timeline_file(gw: FileSystemGateway, instant: Instant, content: bytes = b"") -> None:
    name = join(mt.TIMELINE_DIR, instant.file_name(mt.LAYOUT))
    if not gw.create_exclusive(name, content):
        raise FileExistsError(f"metadata table: {name} exists")
