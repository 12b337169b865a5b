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
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.config import TableConfig
from hudilite.schema import COMMIT_TIME_COL, RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import read_base_file, read_key_range
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline

#: ``operationType`` of a commit that only changes the table schema (Hudi's ALTER TABLE).
ALTER_SCHEMA = "ALTER_SCHEMA"
#: Operations whose inserted keys must not duplicate a concurrent upsert's.
_KEYED_OPERATIONS = frozenset({"UPSERT", "UPSERT_PREPPED"})
#: How many duplicate keys an error names.
_KEYS_SHOWN = 5


@dataclass(frozen=True)
class Clash:
    """One completed commit this write conflicts with, and why."""

    instant_time: str
    reason: str  # "file groups", "schema" or "keys"
    keys: tuple[str, ...] = ()  # keys: "<partition>/<record key>" samples, sorted
    num_keys: int = 0

    def describe(self) -> str:
        """``<instant> (<why>)`` for error messages."""
        if self.reason == "file groups":
            return f"{self.instant_time} (it changed the same file groups)"
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
) -> list[Clash]:
    """The commits completed since this write started (not in ``completed_at_start``) that
    it conflicts with; call under the table lock, on a fresh timeline."""
    mine = _groups(metadata)
    timeline = Timeline.load(gw, config)
    clashes = []
    for other in timeline.commits():
        if other.requested_time in completed_at_start:
            continue
        other_meta = timeline.commit_metadata(other)
        overlap = mine & _groups(other_meta)
        if overlap and (other_meta.compacted or other_meta.operation_type == "COMPACT"):
            overlap = lost_to_compaction(config, metadata, overlap, other.requested_time)
        if overlap:
            clashes.append(Clash(other.requested_time, "file groups"))
        elif schema_changed_under(metadata, other_meta):
            clashes.append(Clash(other.requested_time, "schema"))
        elif check_keys:
            dups = duplicate_keys(gw, metadata, instant_time, other_meta, other.requested_time)
            if dups:
                shown = tuple(sorted(dups)[:_KEYS_SHOWN])
                clashes.append(Clash(other.requested_time, "keys", shown, len(dups)))
    return clashes


def conflict_message(instant_time: str, clashes: Iterable[Clash]) -> str:
    """The ConflictError text: which commits, why, and what to do."""
    what = ", ".join(c.describe() for c in clashes)
    return f"write {instant_time} conflicts with commit(s) {what}; it was rolled back, retry it"


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
