"""Write conflicts: when a commit must fail because of commits that completed while it ran.

hudilite resolves concurrent writers optimistically, as Hudi's
``SimpleConcurrentFileSizeBasedConflictResolutionStrategy`` does: a write checks,
under the table lock right before completing, the commits that completed since it
started, and fails with :class:`~hudilite.errors.ConflictError` (after which it is rolled
back) when

* **file groups** -- both wrote (or replaced) the same file group: committing would drop
  the other commit's version of the group. Exception: a compaction that completed
  meanwhile conflicts only with the groups whose new logs it cannot have included
  (:func:`lost_to_compaction`);
* **schema** -- an ALTER TABLE committed another schema meanwhile
  (:func:`schema_changed_under`);
* **keys** -- both are upserts and inserted the same record key in the same partition
  (:func:`duplicate_keys`).

The last rule closes a gap file-group OCC leaves open (Hudi's has it too): two upserts
of the same *new* key both miss it in the index, each puts it in a file group of its own
(new groups, or different small files), no file group is shared, both commit and the key
is stored twice. The bucket index avoids it by construction (a key's bucket, hence its
file group, is fixed, so the file-group rule catches it); for the simple index hudilite
checks the keys, on by default for upserts
(``hoodie.hudilite.write.conflict.check.keys``). Inserts and bulk inserts are exempt:
they keep duplicates by design (Hudi's ``insert`` does not look keys up), so any order
of the two writes yields the same duplicate. The check costs nothing without a concurrent
upsert that inserted into the same partition; otherwise it compares the min/max record
keys in the footers of the files both inserted into and, only where the ranges overlap,
reads those files' record key and commit time columns (not the data). Keys inserted into
log files (possible with writers other than hudilite) are not checked.

**Writes that read the table** (SQL UPDATE, DELETE, MERGE INTO, an INSERT whose query reads
its own target, ``Table.write(..., read_snapshot=...)``) get snapshot isolation: their
records were computed from a snapshot older than their own instant, so "completed since
this write started" is not enough -- a commit that landed between the read and the write's
start would be overwritten with values computed before it (a lost update: two concurrent
``UPDATE t SET n = n + 1`` applying once). For them the commits checked are every commit
the :class:`ReadSnapshot` did not see, and one more rule applies:

* **rows removed** -- the other commit deleted rows (``numDeletes``) or replaced file
  groups (INSERT OVERWRITE, a partition delete) in a partition this write writes
  (:func:`removed_in`). A row the snapshot held and this write updates may be gone: the
  write's index lookup then misses it and would insert it again, in a file group the
  delete never touched, undoing the acknowledged delete.

So a reading write conflicts with an unseen commit when both wrote the same file group,
or the other removed rows in a partition it writes: write-write conflicts at file-group
granularity, as snapshot isolation defines them (first committer wins). Not conflicts: an
unseen commit that only inserted into file groups this write does not write (a new row
matching an UPDATE's predicate is not updated: the UPDATE is ordered before that insert),
and compaction or clustering, which move rows without changing them: one that completed
before the write began is not checked (the write was planned on its layout), one that
completed while it ran is checked as for any write (a clustering that replaced a group
this write wrote is a file-group conflict). The anomaly snapshot
isolation allows remains: write skew, two writes each reading what the other writes
without writing the same file groups.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.config import TableConfig
from hudilite.config.vocab import (
    COMPACT_OPERATION,
    OP_UPSERT,
    OPERATION_TYPES,
    TABLE_SERVICE_OPERATIONS,
)
from hudilite.errors import ConfigError
from hudilite.schema import COMMIT_TIME_COL, RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import read_base_file, read_key_range
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline

#: ``operationType`` of a commit that only changes the table schema (Hudi's ALTER TABLE).
ALTER_SCHEMA = "ALTER_SCHEMA"
#: Operations whose inserted keys must not duplicate a concurrent upsert's.
_KEYED_OPERATIONS = frozenset({OPERATION_TYPES[OP_UPSERT], OPERATION_TYPES[OP_UPSERT] + "_PREPPED"})
#: How many duplicate keys an error names.
_KEYS_SHOWN = 5
#: Operations that move rows between file groups without changing them: their deletes and
#: replaced groups are not removals (the file-group rule covers the groups they rewrite).
_TABLE_SERVICES = TABLE_SERVICE_OPERATIONS


@dataclass(frozen=True)
class Clash:
    """One completed commit this write conflicts with, and why."""

    instant_time: str
    reason: str  # "file groups", "rows removed", "schema" or "keys"
    # keys: "<partition>/<record key>" samples, sorted; rows removed: the partitions
    keys: tuple[str, ...] = ()
    num_keys: int = 0

    def describe(self) -> str:
        """``<instant> (<why>)`` for error messages."""
        if self.reason == "file groups":
            return f"{self.instant_time} (it changed the same file groups)"
        if self.reason == "rows removed":
            where = ", ".join(repr(p) for p in self.keys)
            return f"{self.instant_time} (it deleted or replaced rows in partition(s) {where})"
        if self.reason == "schema":
            return f"{self.instant_time} (it changed the table schema)"
        more = self.num_keys - len(self.keys)
        shown = ", ".join(self.keys) + (f" and {more} more" if more else "")
        return f"{self.instant_time} (it inserted {self.num_keys} of the same new keys: {shown})"


def find_clashes(
    gw: FileSystemGateway,
    config: TableConfig,
    metadata: CommitMetadata,
    instant_time: str,
    completed_at_start: set[str],
    *,
    check_keys: bool = True,
    read_snapshot: ReadSnapshot | None = None,
) -> list[Clash]:
    """The commits completed since this write started (not in ``completed_at_start``) that
    it conflicts with; call under the table lock, on a fresh timeline.

    With ``read_snapshot`` (a write whose records were computed from that snapshot), the
    commits checked are those the snapshot did not see, and an unseen commit that removed
    rows in a partition this write writes conflicts too (see the module docstring)."""
    mine = _groups(metadata)
    timeline = Timeline.load(gw, config)
    seen = set(completed_at_start)
    written: set[str] = set()
    if read_snapshot is not None:
        seen &= read_snapshot.saw(gw, timeline)
        written = _written_partitions(metadata)
    clashes = []
    for other in timeline.commits():
        if other.requested_time in seen:
            continue
        other_meta = timeline.commit_metadata(other)
        if other.requested_time in completed_at_start and _moves_rows_only(other_meta):
            # A compaction or clustering that completed before this write began: the write
            # was planned on its file layout, and it changed no row the snapshot read.
            continue
        overlap = mine & _groups(other_meta)
        if overlap and (other_meta.compacted or other_meta.operation_type == COMPACT_OPERATION):
            overlap = lost_to_compaction(config, metadata, overlap, other.requested_time)
        removed = removed_in(other_meta, written) if written else []
        if overlap:
            clashes.append(Clash(other.requested_time, "file groups"))
        elif removed:
            clashes.append(Clash(other.requested_time, "rows removed", tuple(removed)))
        elif schema_changed_under(metadata, other_meta):
            clashes.append(Clash(other.requested_time, "schema"))
        elif check_keys:
            dups = duplicate_keys(gw, metadata, instant_time, other_meta, other.requested_time)
            if dups:
                shown = tuple(sorted(dups)[:_KEYS_SHOWN])
                clashes.append(Clash(other.requested_time, "keys", shown, len(dups)))
    return clashes


def conflict_message(
    instant_time: str, clashes: Iterable[Clash], read_snapshot: ReadSnapshot | None = None
) -> str:
    """The ConflictError text: which commits, why, and what to do."""
    what = ", ".join(c.describe() for c in clashes)
    if read_snapshot is None:
        return f"write {instant_time} conflicts with commit(s) {what}; it was rolled back, retry it"
    at = read_snapshot.instant or "an empty table"
    return (
        f"write {instant_time} conflicts with commit(s) {what}, completed after the snapshot "
        f"it read ({at}); it was rolled back, retry it (reading the table again)"
    )


def _written_partitions(metadata: CommitMetadata) -> set[str]:
    """Partitions a commit wrote records to or replaced file groups in."""
    out = {p for p, stats in metadata.partition_to_write_stats.items() if stats}
    return out | {p for p, ids in metadata.partition_to_replace_file_ids.items() if ids}


def _moves_rows_only(metadata: CommitMetadata) -> bool:
    """Whether a commit is a compaction or clustering: rows rewritten, none changed."""
    return metadata.operation_type in _TABLE_SERVICES or metadata.compacted


def removed_in(other: CommitMetadata, partitions: set[str]) -> list[str]:
    """The partitions of ``partitions`` where commit ``other`` deleted rows or replaced file
    groups (sorted; empty for compaction and clustering, which remove no row)."""
    if _moves_rows_only(other):
        return []
    hit = {p for p, ids in other.partition_to_replace_file_ids.items() if ids}
    hit |= {s.partition_path or "" for s in other.write_stats() if s.num_deletes > 0}
    return sorted(hit & partitions)


@dataclass(frozen=True)
class ReadSnapshot:
    """The table state a write's records were computed from (snapshot isolation).

    ``instant``: the latest completed instant the read saw -- by completion time on table
    version 8+, by requested time on version 6 -- or None for an empty table. ``seen``: the
    requested times of every completed instant the read saw, when known exactly (a
    snapshot taken with :meth:`of`, as SQL statements do before reading). A snapshot named
    only by its instant (:meth:`from_instant`, ``Table.write(read_snapshot="<instant>")``)
    is bounded conservatively by :meth:`saw`: it may count a commit the read did see as
    unseen (a needless conflict), never the reverse.
    """

    instant: str | None
    seen: frozenset[str] | None = None

    @classmethod
    def of(cls, timeline: Timeline) -> ReadSnapshot:
        """The snapshot a read of the table now sees, from a fresh ``timeline``."""
        completed = timeline.completed()
        latest = max(completed, key=lambda i: _completion(timeline, i), default=None)
        return cls(
            latest.requested_time if latest is not None else None,
            frozenset(i.requested_time for i in completed),
        )

    @classmethod
    def from_instant(cls, timeline: Timeline, instant: str) -> ReadSnapshot:
        """The snapshot named by ``instant``, a completed (or archived) instant of the table,
        else ``ConfigError`` naming it."""
        text = str(instant).strip()
        if not (text.isdigit() and timeline.is_completed_or_archived(text)):
            latest = cls.of(timeline).instant
            raise ConfigError(
                f"read_snapshot {instant!r} is not a completed instant of the table "
                f"(its latest is {latest or 'none: the table is empty'})"
            )
        return cls(text)

    def saw(self, gw: FileSystemGateway, timeline: Timeline) -> set[str]:
        """Requested times of the completed instants of ``timeline`` this snapshot saw."""
        completed = timeline.completed()
        if self.seen is not None:
            return {i.requested_time for i in completed if i.requested_time in self.seen}
        snap = self.instant
        if snap is None:
            return set()
        if timeline.layout_version >= 2:
            # Completion times grow with every commit (each is later than any time on the
            # timeline when it is written), so "seen" is exactly "completed no later".
            bound = timeline.completion_time(snap) or snap
            return {
                i.requested_time
                for i in completed
                if (timeline.completion_time(i.requested_time) or "") <= bound
            }
        own = timeline.get(snap)
        if own is None or not own.is_completed:  # archived: every active instant is later
            return {i.requested_time for i in completed if i.requested_time <= snap}
        # Version 6 records no completion time, and instants complete out of requested
        # order: an earlier-requested commit may have completed after the read. The
        # completed files' modification times order completions (commits complete one at
        # a time under the table lock); a tie counts as unseen.
        mtimes = {e.name: e.mtime_ms for e in gw.list_dir(timeline.timeline_dir)}
        mark = mtimes.get(timeline.file_name(own))
        out = set()
        for i in completed:
            if i.requested_time == snap:
                out.add(snap)
            elif i.requested_time < snap and mark is not None:
                done = mtimes.get(timeline.file_name(i))
                if done is not None and done < mark:
                    out.add(i.requested_time)
        return out


def _completion(timeline: Timeline, instant: Instant) -> tuple[str, str]:
    """Sort key of completion order: completion time (v8; the requested time on v6), then
    requested time."""
    return (timeline.completion_time(instant.requested_time) or "", instant.requested_time)


def _groups(metadata: CommitMetadata) -> set[tuple[str, str]]:
    """File groups a commit wrote or replaced."""
    return set(metadata.file_ids()) | metadata.replaced_file_groups()


def lost_to_compaction(
    config: TableConfig,
    metadata: CommitMetadata,
    groups: set[tuple[str, str]],
    compaction_time: str,
) -> set[tuple[str, str]]:
    """The file groups whose logs a concurrent compaction did not include.

    Version 8 attaches logs to slices by completion time, so a compaction never
    loses a delta commit's logs. Version 6 logs name their slice: logs written to
    the slice the compaction opened (base instant = its time) are safe; logs
    written to the compacted slice would be lost, which is a conflict.
    """
    if config.table_version >= 8:
        return set()
    lost = set()
    for stat in metadata.write_stats():
        key = (stat.partition_path or "", stat.file_id)
        if key in groups and (stat.log_version is None or stat.prev_commit != compaction_time):
            lost.add(key)
    return lost


def schema_changed_under(mine: CommitMetadata, other: CommitMetadata) -> bool:
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


def _inserted_files(metadata: CommitMetadata) -> dict[str, list[str]]:
    """Partition -> base files a commit inserted records into (new or small-file groups)."""
    out: dict[str, list[str]] = {}
    for stat in metadata.write_stats():
        if stat.num_inserts > 0 and stat.path and not _is_log(stat):
            out.setdefault(stat.partition_path or "", []).append(stat.path)
    return out


def _is_log(stat: WriteStat) -> bool:
    return stat.log_version is not None or "/." in f"/{stat.path}"


def duplicate_keys(
    gw: FileSystemGateway,
    mine: CommitMetadata,
    my_time: str,
    other: CommitMetadata,
    other_time: str,
) -> set[str]:
    """``<partition>/<key>`` of record keys both upserts inserted (empty if either is not an
    upsert or they inserted into different partitions or disjoint key ranges)."""
    if (
        mine.operation_type not in _KEYED_OPERATIONS
        or other.operation_type not in _KEYED_OPERATIONS
    ):
        return set()
    my_files, their_files = _inserted_files(mine), _inserted_files(other)
    dups: set[str] = set()
    for partition in sorted(set(my_files) & set(their_files)):
        ranges = {p: read_key_range(gw, p) for p in my_files[partition] + their_files[partition]}
        for my_file in my_files[partition]:
            near = [f for f in their_files[partition] if _may_overlap(ranges[my_file], ranges[f])]
            if not near:
                continue
            keys = _keys_written(gw, my_file, my_time)
            for their_file in near:
                theirs = _keys_written(gw, their_file, other_time)
                common = pc.is_in(keys, value_set=theirs)
                for key in keys.filter(common).to_pylist():
                    dups.add(f"{partition}/{key}" if partition else str(key))
    return dups


def _may_overlap(a: tuple[str, str] | None, b: tuple[str, str] | None) -> bool:
    """Whether two footer key ranges overlap (unknown ranges might)."""
    if a is None or b is None:
        return True
    return a[0] <= b[1] and b[0] <= a[1]


def _keys_written(gw: FileSystemGateway, rel_path: str, instant_time: str) -> pa.Array:
    """Record keys of the rows ``instant_time`` wrote into a base file (its own rows, not
    the rows a small-file merge carried over)."""
    table = read_base_file(gw, rel_path, columns=[RECORD_KEY_COL, COMMIT_TIME_COL])
    own = pc.equal(table[COMMIT_TIME_COL], instant_time)
    return table.filter(own)[RECORD_KEY_COL].combine_chunks()
