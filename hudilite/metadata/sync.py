"""Keeping the ``files`` partition exact as data instants complete, with Hudi 1.x's protocol.

:func:`before_complete` is registered with the timeline
(:func:`hudilite.timeline.timeline.before_complete`) when this module is imported (the
metadata-table guard imports it, and every action takes the table lock, which runs the guard,
before it completes anything). It runs right before a data instant's completed file is
written, and only when the table's ``hoodie.table.metadata.partitions`` names ``files``:

* commit, deltacommit, replacecommit, compaction, clustering and clean: the instant's records
  (:mod:`~hudilite.metadata.convert`) go into a metadata deltacommit with the same instant
  time (:func:`~hudilite.metadata.table.write_deltacommit`), after the files partition is
  compacted when ``hoodie.metadata.compact.max.delta.commits`` deltacommits completed since
  its base file (:func:`~hudilite.metadata.compact.compact_if_due`, as Hudi does first) and
  its old slices cleaned (:func:`~hudilite.metadata.clean.clean_if_due`);
* rollback: as ``HoodieBackedTableMetadataWriter.update(HoodieRollbackMetadata)``, the
  metadata deltacommit of the rolled-back instant is rolled back (its completed file, its log
  file, its inflight and requested files, in that order); when a compaction already folded it
  into a base file, a deltacommit at the rollback's time also deletes the files it listed.
  A rolled-back instant the metadata table has no deltacommit of, but whose files it lists
  (a completed instant written before the metadata table was built), gets a deltacommit at
  the rollback's time deleting them (Hudi refuses that rollback instead);
* restore: the files partition is rebuilt from a storage listing
  (:func:`~hudilite.metadata.table.initialize`): the restore's rollbacks deleted their files
  and completed files already, and a listing is what Hudi falls back to when the metadata
  table cannot be restored to the savepoint.

When the table lists ``column_stats`` (and ``partition_stats``), the same deltacommit carries
their logs, derived from the instant's files-partition records
(:func:`hudilite.metadata.column_stats.records_for`); rolling back a deltacommit removes
them with it, and a restore rebuilds them after the files partition.

A metadata deltacommit whose data instant never completed (a crash between the two) is
skipped by :func:`~hudilite.metadata.table.read_files_partition` given the data timeline, and
:func:`roll_back_strays` (run by the guard under the table lock) removes it: an instant
completes under the lock, so when the lock is taken no such deltacommit belongs to a live
writer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.metadata import bloom_filters, clean, column_stats, compact, convert, partition_stats
from hudilite.metadata import record_index as ri
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import LogFileName, parse_data_file_name
from hudilite.tablestate import properties_file
from hudilite.timeline import timeline as tl
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record

log = logging.getLogger(__name__)

#: Fail point between the metadata deltacommit and the data instant's completion (crash tests).
AFTER_DELTACOMMIT = "metadata_after_deltacommit"

#: Actions (as their inflight instant names them) whose metadata is a CommitMetadata.
COMMIT_ACTIONS = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, CLUSTERING, LOG_COMPACTION}
)


def listed_partitions(props: Mapping[str, str]) -> list[str]:
    """The metadata partitions ``props`` list as complete (``hoodie.table.metadata.partitions``)."""
    raw = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
    return [p.strip() for p in raw.split(",") if p.strip()]


def maintains_files(props: Mapping[str, str]) -> bool:
    """True when the data table's ``props`` list the files partition on a version hudilite
    keeps it for."""
    return (
        mt.FILES_PARTITION in listed_partitions(props)
        and cfg.TableConfig.from_properties(props).table_version in mt.SUPPORTED_VERSIONS
    )


def before_complete(gw: FileSystemGateway, instant: Instant, content: bytes) -> None:
    """The metadata table's part of completing ``instant`` (see the module docstring)."""
    action = instant.action
    if action not in COMMIT_ACTIONS and action not in (CLEAN, ROLLBACK, RESTORE):
        return  # savepoints, indexing, schema commits change no file listing
    if not gw.exists(properties_file.PROPERTIES_FILE):
        return
    props = properties_file.load(gw)
    if not maintains_files(props):
        return
    time = instant.requested_time
    if action == RESTORE:
        mt.initialize(gw)
        options = {**props, **properties_file.read_write_defaults(gw)}
        if column_stats.enabled(options):
            column_stats.initialize(gw)  # rebuilt from the listing with the files partition
        if bloom_filters.enabled(options):
            bloom_filters.initialize(gw)
        if partition_stats.enabled(options):
            partition_stats.initialize(gw)
        if ri.enabled(options):
            ri.initialize(gw)  # the restored table's keys, from its latest slices
        return
    if action == ROLLBACK:
        _on_rollback(gw, time, read_avro_record(content))
        return
    metadata = None
    if action == CLEAN:
        records = convert.clean_records(read_avro_record(content))
    else:
        metadata = CommitMetadata.from_bytes(content)
        records = convert.commit_records(metadata)
    remove_deltacommit(gw, time)  # a leftover of an earlier attempt at this instant
    # Hudi compacts the metadata table before it writes the instant's deltacommit.
    options = {**props, **properties_file.read_write_defaults(gw)}
    compact.compact_if_due(
        gw, cfg.TableConfig.from_properties(props), compact.max_delta_commits(options)
    )
    clean.clean_if_due(gw)
    more = _stats_writer(gw, props, time, records)
    if metadata is not None and ri.listed(props):
        more = _with_record_index(gw, props, instant, metadata, more)
    mt.write_deltacommit(gw, time, records, more)
    failpoints.check(None, AFTER_DELTACOMMIT)


def _with_record_index(
    gw: FileSystemGateway,
    props: Mapping[str, str],
    instant: Instant,
    metadata: CommitMetadata,
    other: Callable[[], list[WriteStat]] | None,
) -> Callable[[], list[WriteStat]]:
    """``other`` followed by the record_index logs of the instant (:mod:`~hudilite.metadata.
    record_index`), read against the index as the completed data instants left it."""

    def write() -> list[WriteStat]:
        out = list(other()) if other is not None else []
        data = tl.Timeline.load(gw, cfg.TableConfig.from_properties(props))
        return out + ri.write_logs(gw, instant.action, instant.requested_time, metadata, data)

    return write


def _stats_writer(
    gw: FileSystemGateway, props: Mapping[str, str], time: str, records: list[rec.FilesRecord]
) -> Callable[[], list[WriteStat]] | None:
    """The column_stats (and partition_stats) and bloom_filters parts of the deltacommit of
    ``records``, for the partitions the table keeps."""
    stats_on = column_stats.listed(props)
    blooms_on = bloom_filters.listed(props)
    if not stats_on and not blooms_on:
        return None

    def write() -> list[WriteStat]:
        out: list[WriteStat] = []
        if blooms_on:
            blooms = bloom_filters.records_for(gw, records, time)
            out += bloom_filters.write_logs(gw, time, blooms)
        if not stats_on:
            return out
        new = column_stats.records_for(gw, props, records)
        out += column_stats.write_logs(gw, time, new)
        if partition_stats.listed(props):
            stats = partition_stats.records_for(gw, props, records, new)
            out += partition_stats.write_log(gw, time, stats)
        return out

    return write


def _on_rollback(gw: FileSystemGateway, rb_time: str, meta: Mapping[str, Any]) -> None:
    targets = [str(t) for t in meta.get("commitsRollback") or []]
    remove_deltacommit(gw, rb_time)
    mine = set(deltacommit_times(gw))
    built = _initialized_at(gw)
    timeline = mt.load_timeline(gw)
    compacted_at = timeline.last_compaction
    unlisted: dict[str, list[str]] = {}
    for target in targets:
        if target in mine:
            done = timeline.deltacommits.get(target)
            remove_deltacommit(gw, target)
            if compacted_at is None or done is None or done > compacted_at:
                continue
            # Its log was compacted into the base file, which still lists its files: delete
            # them with a deltacommit (Hudi refuses this rollback; its compactions wait for
            # every data instant, hudilite's compact only completed ones).
        elif built is not None and target > built:
            continue  # requested after the listing: only its own deltacommit could list it
        for partition, pmeta in (meta.get("partitionMetadata") or {}).items():
            names = [str(p).rsplit("/", 1)[-1] for p in pmeta.get("successDeleteFiles") or []]
            unlisted.setdefault(partition, []).extend(names)
    if any(unlisted.values()) and ri.listed(properties_file.load(gw)):
        # The record index's entries of the target are in a compacted base file (or in its
        # initialization): rebuilt from the slices the rollback left.
        ri.initialize(gw)
    if not any(unlisted.values()):
        return
    listing = mt.listing_of(mt.read_files_partition(gw))
    records = []
    for partition, names in unlisted.items():
        gone = sorted(n for n in names if n in listing.get(partition, {}))
        if gone:
            records.append(rec.partition_files_record(partition, {}, gone))
    if records:
        props = properties_file.load(gw)
        mt.write_deltacommit(gw, rb_time, records, _stats_writer(gw, props, rb_time, records))


def _initialized_at(gw: FileSystemGateway) -> str | None:
    """The completion time of the files partition's initialization (None when unknown)."""
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None and inst.is_completed and inst.requested_time == mt.INIT_INSTANT:
            return inst.completion_time
    return None


def deltacommit_times(gw: FileSystemGateway) -> list[str]:
    """Requested times of the metadata table's deltacommits in any state, sorted."""
    out = set()
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None and inst.action == DELTA_COMMIT:
            out.add(inst.requested_time)
    return sorted(out)


def remove_deltacommit(gw: FileSystemGateway, instant_time: str) -> bool:
    """Roll back the metadata table's deltacommit ``instant_time``: its completed file first
    (readers stop seeing it), then its log files, then its inflight and requested files.
    Returns True when anything was deleted; every step is idempotent."""
    found = []
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None and inst.requested_time == instant_time and inst.action == DELTA_COMMIT:
            found.append((inst.state, entry.path))
    order = {State.COMPLETED: 0, State.INFLIGHT: 1, State.REQUESTED: 2}
    done = [p for s, p in sorted(found, key=lambda f: order[f[0]]) if s is State.COMPLETED]
    for path in done:
        gw.delete_file(path)
    logs = [
        e.path
        for part_dir in (
            join(mt.METADATA_DIR, mt.FILES_PARTITION),
            column_stats.PART_DIR,
            partition_stats.PART_DIR,
            bloom_filters.PART_DIR,
            ri.PART_DIR,
        )
        for e in gw.list_dir(part_dir)
        if isinstance(p := parse_data_file_name(e.name), LogFileName)
        and p.base_instant == instant_time
    ]
    for path in logs:
        gw.delete_file(path)
    for _, path in sorted(found, key=lambda f: order[f[0]]):
        if path not in done:
            gw.delete_file(path)
    if found or logs:
        log.info("rolled back metadata deltacommit %s of %s", instant_time, gw.uri(""))
    return bool(found or logs)


def roll_back_strays(gw: FileSystemGateway, data_timeline: tl.Timeline) -> list[str]:
    """Remove every metadata deltacommit whose data instant is not completed (the caller holds
    the table lock, so none belongs to a live writer); the initialization instants stay.
    Returns the times removed."""
    out = []
    for time in deltacommit_times(gw):
        if time.startswith(mt.INIT_INSTANT[:14]) or data_timeline.is_completed_or_archived(time):
            continue
        if remove_deltacommit(gw, time):
            out.append(time)
    return out


def foreign_actions(gw: FileSystemGateway) -> list[str]:
    """Timeline file names of the metadata table that hudilite does not read (Hudi's own
    rollback or log compaction of it): hudilite rebuilds such a table. Compactions, Hudi's or
    hudilite's, are read (:mod:`~hudilite.metadata.compact`): a completed one's base file
    starts the current slice, a pending one is ignored and rolled back; cleans
    (:mod:`~hudilite.metadata.clean`) only delete older slices."""
    return list(mt.load_timeline(gw).others)


tl.before_complete(before_complete)
