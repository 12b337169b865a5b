"""A write as a transaction: requested → inflight → completed, or rolled back.

Used as a context manager. Entering it rolls back writes that died earlier,
reserves a fresh instant time (requested file) and starts the heartbeat;
:meth:`WriteTransaction.commit` checks for conflicting commits under the table
lock and completes the instant; leaving the block with an exception (or
without committing) rolls the instant back, so a failed write never leaves
visible files behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from hudilite import failpoints
from hudilite.config import Options, TableConfig
from hudilite.errors import ConflictError, TimelineError
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.config_drift import check_table_config
from hudilite.write.conflict import (
    ALTER_SCHEMA,
    Clash,
    ReadSnapshot,
    conflict_message,
    find_clashes,
)
from hudilite.write.finalize import finalize_write
from hudilite.write.lock import LockConfig, ensure_table_unlocked, table_lock
from hudilite.write.markers import delete_markers
from hudilite.write.rollback import (
    RollbackResult,
    rollback_failed_writes,
    rollback_own_write,
    rollback_planned_for,
)

__all__ = [
    "ALTER_SCHEMA",
    "WriteTransaction",
    "commit_metadata",
    "inflight_content",
    "touched_partitions",
]


class WriteTransaction:
    """One write instant from reservation to commit or rollback."""

    #: Whether :meth:`commit` also fails an upsert on new keys a concurrent upsert inserted
    #: (``hoodie.hudilite.write.conflict.check.keys``, see :mod:`hudilite.write.conflict`).
    check_keys: bool = True
    #: The snapshot the write's records were computed from (SQL UPDATE/DELETE/MERGE,
    #: ``Table.write(read_snapshot=...)``): :meth:`commit` then also fails on commits that
    #: completed after it, before this write started (snapshot isolation, see
    #: :mod:`hudilite.write.conflict`). None: a blind write.
    read_snapshot: ReadSnapshot | None = None

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
        lock: LockConfig | None = None,
    ) -> None:
        self.gw = gw
        # The write's options (the drift check reads them) and the table lock's settings:
        # ``lock`` when the write resolved them once at its door (WriteConfig.lock), else
        # parsed from ``lock_options`` at each lock; None: the table's stored write options.
        self.lock_options = lock_options
        self.lock: Any = lock if lock is not None else lock_options
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
        # A table asking for what hudilite cannot honour is refused by name before anything
        # changes, the table lock's metadata-table guard included.
        self.config.check_writable()
        # An edited hoodie.properties (key fields, partitioning, key generator, table type)
        # that contradicts the data is refused before anything is written (cached per
        # properties content: one check per table until they change).
        check_table_config(
            self.gw,
            self.config,
            self.lock_options if isinstance(self.lock_options, Options) else None,
        )
        # Fail fast when a live writer holds the table lock, before doing any work.
        ensure_table_unlocked(self.gw, self.lock)
        self.rolled_back = rollback_failed_writes(
            self.gw,
            self.config,
            heartbeat_interval_ms=self.heartbeat_interval_ms,
            tolerable_misses=self.tolerable_misses,
            lock_options=self.lock,
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
        """Instants completed since this write started that it conflicts with (same file
        groups, a schema change, or -- upserts, ``check_keys`` -- the same new keys); see
        :mod:`hudilite.write.conflict`."""
        return [c.instant_time for c in self._clashes(metadata)]

    def _clashes(self, metadata: CommitMetadata) -> list[Clash]:
        assert self.instant is not None
        return find_clashes(
            self.gw,
            self.config,
            metadata,
            self.instant.requested_time,
            self._completed_at_start,
            check_keys=self.check_keys,
            read_snapshot=self.read_snapshot,
        )

    def commit(self, metadata: CommitMetadata) -> Instant:
        """Complete the instant with ``metadata`` unless a concurrent commit conflicts
        (see :meth:`conflicts`)."""
        assert self.instant is not None
        with table_lock(self.gw, self.lock) as held:
            self._check_still_pending()
            if not self.instant.is_inflight:
                # Under the lock, after the check: never re-create a rolled-back instant.
                self.start_inflight()
            # Hudi's finalizeWrite: files of failed or duplicate task attempts must not
            # survive the commit (readers that list partitions would see them).
            finalize_write(self.gw, self.instant.requested_time, metadata)
            clashes = self._clashes(metadata)
            if clashes:
                raise ConflictError(
                    conflict_message(self.instant_time, clashes, self.read_snapshot)
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
            lock_options=self.lock,
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
