"""A write as a transaction: requested → inflight → completed, or rolled back.

Used as a context manager. Entering it rolls back writes that died earlier,
reserves a fresh instant time (requested file) and starts the heartbeat;
:meth:`WriteTransaction.commit` checks for conflicting commits under the table
lock and completes the instant; leaving the block with an exception (or
without committing) rolls the instant back, so a failed write never leaves
visible files behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from hudilite import failpoints
from hudilite.config import TableConfig
from hudilite.errors import ConflictError, TimelineError
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import ensure_table_unlocked, table_lock
from hudilite.write.markers import delete_markers
from hudilite.write.rollback import (
    RollbackResult,
    rollback_failed_writes,
    rollback_own_write,
    rollback_planned_for,
)

#: ``operationType`` of a commit that only changes the table schema (Hudi's ALTER TABLE).
ALTER_SCHEMA = "ALTER_SCHEMA"


class WriteTransaction:
    """One write instant from reservation to commit or rollback."""

    def __init__(
        self,
        gw: FileSystemGateway,
        config: TableConfig,
        action: str,
        *,
        heartbeat_interval_ms: int = 60000,
        tolerable_misses: int = 2,
        requested_content: bytes = b"",
        lock_options: Any = None,
    ) -> None:
        self.gw = gw
        # Hudi's lock options (provider, wait); None: the table's stored write options.
        self.lock_options = lock_options
        # Hudi leaves write requests empty, but a partition delete's request says what it is
        # (an Avro HoodieRequestedReplaceMetadata), so tools can tell it from a clustering.
        self.requested_content = requested_content
        self.config = config
        self.action = action
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.tolerable_misses = tolerable_misses
        self.writer = TimelineWriter(gw, config)
        self.instant: Instant | None = None
        self.completed: Instant | None = None
        self.rolled_back: list[RollbackResult] = []
        self._heartbeat: Heartbeat | None = None
        self._completed_at_start: set[str] = set()

    @property
    def instant_time(self) -> str:
        """The requested time of this write (valid inside the ``with`` block)."""
        if self.instant is None:
            raise TimelineError("the transaction has not started")
        return self.instant.requested_time

    def __enter__(self) -> WriteTransaction:
        # Fail fast when a live writer holds the table lock, before doing any work.
        ensure_table_unlocked(self.gw, self.lock_options)
        self.rolled_back = rollback_failed_writes(
            self.gw,
            self.config,
            heartbeat_interval_ms=self.heartbeat_interval_ms,
            tolerable_misses=self.tolerable_misses,
            lock_options=self.lock_options,
        )
        timeline = Timeline.load(self.gw, self.config)
        self._completed_at_start = {i.requested_time for i in timeline.completed()}
        time_ = self.writer.new_instant_time()
        # Start the heartbeat before the requested file exists, so no other
        # writer can mistake this fresh instant for a dead one.
        self._heartbeat = Heartbeat(self.gw, time_, self.heartbeat_interval_ms)
        self._heartbeat.__enter__()
        self.instant = self.writer.create_requested(self.action, time_, self.requested_content)
        if self.instant.requested_time != time_:
            # The reservation moved to a later time (collision): beat for that one instead.
            fresh = Heartbeat(self.gw, self.instant.requested_time, self.heartbeat_interval_ms)
            fresh.__enter__()
            self._heartbeat.__exit__(None, None, None)
            self._heartbeat = fresh
        return self

    def start_inflight(self, content: bytes = b"") -> None:
        """Move to inflight, recording the planned work (partitions, file groups)."""
        assert self.instant is not None
        self.instant = self.writer.transition_inflight(self.instant, content)

    def conflicts(self, metadata: CommitMetadata) -> list[str]:
        """Instants completed since this write started that touched the same file groups."""
        mine = set(metadata.file_ids()) | {
            (p, f) for p, fids in metadata.partition_to_replace_file_ids.items() for f in fids
        }
        timeline = Timeline.load(self.gw, self.config)
        clashes = []
        for other in timeline.commits():
            if other.requested_time in self._completed_at_start:
                continue
            other_meta = timeline.commit_metadata(other)
            theirs = set(other_meta.file_ids()) | {
                (p, f) for p, fids in other_meta.partition_to_replace_file_ids.items() for f in fids
            }
            overlap = mine & theirs
            if overlap and (other_meta.compacted or other_meta.operation_type == "COMPACT"):
                overlap = self._lost_to_compaction(metadata, overlap, other.requested_time)
            if overlap or _schema_changed_under(metadata, other_meta):
                clashes.append(other.requested_time)
        return clashes

    def _lost_to_compaction(
        self, metadata: CommitMetadata, groups: set[tuple[str, str]], compaction_time: str
    ) -> set[tuple[str, str]]:
        """The file groups whose logs a concurrent compaction did not include.

        Version 8 attaches logs to slices by completion time, so a compaction never
        loses a delta commit's logs. Version 6 logs name their slice: logs written to
        the slice the compaction opened (base instant = its time) are safe; logs
        written to the compacted slice would be lost, which is a conflict.
        """
        if self.config.table_version >= 8:
            return set()
        lost = set()
        for stat in metadata.write_stats():
            key = (stat.partition_path, stat.file_id)
            if key in groups and (stat.log_version is None or stat.prev_commit != compaction_time):
                lost.add(key)
        return lost

    def commit(self, metadata: CommitMetadata) -> Instant:
        """Complete the instant with ``metadata`` unless a concurrent commit conflicts."""
        assert self.instant is not None
        with table_lock(self.gw, self.lock_options) as held:
            self._check_still_pending()
            if not self.instant.is_inflight:
                # Under the lock, after the check: never re-create a rolled-back instant.
                self.start_inflight()
            clashes = self.conflicts(metadata)
            if clashes:
                raise ConflictError(
                    f"write {self.instant_time} conflicts with commit(s) {', '.join(clashes)} "
                    "that changed the same file groups; it was rolled back, retry it"
                )
            content = (
                metadata.to_json_bytes()
                if self.config.layout_version == 1
                else metadata.to_avro_bytes()
            )
            failpoints.check(None, "before_complete")
            held.check()  # a lease lost meanwhile: another writer may be committing now
            self.completed = self.writer.complete(self.instant, content)
        failpoints.check(None, "after_complete")
        delete_markers(self.gw, self.instant.requested_time)
        return self.completed

    def _check_still_pending(self) -> None:
        """Under the table lock: refuse to commit an instant another process took for dead
        and planned to roll back (its files are being deleted), or that is gone."""
        assert self.instant is not None
        timeline = Timeline.load(self.gw, self.config)
        rollback = rollback_planned_for(timeline, self.instant_time)
        if rollback is not None:
            raise ConflictError(
                f"write {self.instant_time} cannot commit: rollback {rollback} of it was "
                "planned by another writer that found its heartbeat expired; retry the write"
            )
        current = timeline.get(self.instant_time)
        if current is None or not current.is_pending:
            raise ConflictError(
                f"write {self.instant_time} cannot commit: its instant is no longer pending "
                f"on the timeline ({current or 'gone'}); retry the write"
            )

    def rollback(self) -> RollbackResult | None:
        """Undo this instant (files and instant files); a no-op once committed. Decided
        under the table lock, so an instant that completed is never touched."""
        if self.instant is None or self.completed is not None:
            return None
        return rollback_own_write(
            self.gw,
            self.config,
            self.instant.requested_time,
            self.heartbeat_interval_ms,
            lock_options=self.lock_options,
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self.completed is None:
                self.rollback()
        finally:
            if self._heartbeat is not None:
                self._heartbeat.__exit__(None, None, None)


def _schema_changed_under(mine: CommitMetadata, other: CommitMetadata) -> bool:
    """A schema change committed while this write ran, and this write records another schema.

    Readers take the schema of the latest commit, so committing the schema read before
    the change would silently undo it (e.g. drop a column just added).
    """
    if other.operation_type != ALTER_SCHEMA or not other.schema:
        return False
    if not mine.schema:
        return False
    try:
        return bool(json.loads(mine.schema) != json.loads(other.schema))
    except ValueError:
        return mine.schema != other.schema


def inflight_content(config: TableConfig, partitions: Iterable[str], operation_type: str) -> bytes:
    """The inflight file of a write: its operation and the partitions it plans to touch
    (what Hudi's ``saveWorkloadProfileMetadataToInflight`` records)."""
    meta = CommitMetadata(
        partition_to_write_stats={p: [] for p in partitions},
        operation_type=operation_type,
        extra_metadata={},
    )
    return meta.to_bytes(config.layout_version)


def commit_metadata(
    config: TableConfig,
    schema_json: str,
    write_stats: Sequence[WriteStat],
    operation_type: str,
    replaced: Mapping[str, Sequence[str]] | None = None,
    extra: Mapping[str, str] | None = None,
) -> CommitMetadata:
    """The metadata a write completes with: its write stats by partition, the data schema
    (Avro JSON, ``extraMetadata.schema``), replaced file groups and extra entries.

    A non-partitioned table always lists its one partition ``""``, even when nothing was
    written (readers expect the key).
    """
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in write_stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    if not by_partition and not config.partition_fields:
        by_partition[""] = []
    return CommitMetadata(
        partition_to_write_stats=by_partition,
        operation_type=operation_type,
        extra_metadata={"schema": schema_json, **(extra or {})},
        partition_to_replace_file_ids={p: list(ids) for p, ids in (replaced or {}).items()},
    )


def touched_partitions(metadata: CommitMetadata) -> Iterable[str]:
    """Partitions a commit wrote to or replaced files in."""
    return sorted(
        set(metadata.partition_to_write_stats) | set(metadata.partition_to_replace_file_ids)
    )
