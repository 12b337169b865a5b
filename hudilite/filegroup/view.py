"""The file-system view: which data files make up the table at a given instant.

``FileSystemView`` lists the table's partitions and data files once (lazily, cached;
``refresh()`` re-lists) and answers, for a timeline loaded by the caller:

* which file groups and slices exist (``file_groups``),
* the live slice of every file group now or as of a read instant (``latest_slices``,
  ``slice_as_of``), following ``docs/dev/hudi-format.md`` section 6,
* which files an instant wrote (``files_of_instant``, for rollback),
* which base files are small enough to take more inserts (``small_files``).

Visibility rules (the "why" behind ``Visibility``):

* A file is visible when the instant in its name completed, or is older than the first
  instant of the active timeline (archived instants are committed). Files of pending
  or failed instants are invisible.
* Time travel ``as_of=T`` additionally requires the instant's *requested* time to be
  ``<= T`` -- for base files and, on purpose, for version 8 log files too. That is what
  hudi-rs and Hudi's Java time travel do (both filter the timeline by requested time
  and skip log blocks whose INSTANT_TIME is newer than T); comparing log *completion*
  times instead would drop a delta commit's own logs when reading as of its instant
  while keeping the base files the same commit wrote.
* ``completed_by=C`` (used by version-8 incremental reads, whose range is in completion
  time) requires the instant to have *completed* at or before ``C``.
* Version 6: a log file names its slice's base instant. Version 8: a log file names its
  delta commit; it joins the slice with the greatest visible base instant ``<=`` the
  delta commit's completion time, and logs apply in completion-time order.
* Pending compaction ``T`` (version 6): delta commits after the plan write logs named
  ``T`` although no base file ``T`` exists yet. Those logs form a slice keyed ``T``;
  the *latest* slice of such a group is then the merge of the previous slice and the
  ``T`` slice (previous base file, previous logs, then ``T``'s logs) -- Hudi's
  "merged file slice" rule (``AbstractTableFileSystemView.getLatestMergedFileSlicesBeforeOrOn``
  and ``fetchMergedFileSlice``, what Hudi's Spark snapshot reads of merge-on-read tables
  use), so a write made while a compaction is pending is visible at once. hudi-rs 0.5
  deviates: it drops logs whose base instant is a pending compaction until the compaction
  completes (``tests/spark/test_commit_integrity.py`` pins that gap). Version 8 needs no
  special case: while ``T`` is pending no base file ``T`` is visible, so the new logs
  attach to the previous slice by completion time, which is the same merged slice.
* File groups listed in ``partitionToReplaceFileIds`` of a replace commit that is
  visible under the same rule are removed.
"""

from __future__ import annotations

import bisect
import dataclasses
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from hudilite.config import TableConfig
from hudilite.errors import HudiliteError
from hudilite.filegroup.integrity import Damage, find_damage, write_refusal
from hudilite.filegroup.slices import (
    BaseFile,
    CommittedRange,
    FileGroup,
    FileSlice,
    LogFile,
    join_path,
)
from hudilite.storage.fs import FileEntry, FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName, is_partition_metadata_name
from hudilite.timeline.instant import (
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudilite.timeline.metadata import CommitMetadata
from hudilite.timeline.plans import pending_plan_groups
from hudilite.timeline.timeline import Timeline

_DataFile = TypeVar("_DataFile", BaseFile, LogFile)

PartitionFilter = Iterable[str] | Callable[[str], bool] | None
"""Partition selection: ``None`` (all), a collection of partition paths, or a predicate."""

_SKIPPED_DIRS = frozenset({"_temporary", "__MACOSX"})
# Actions whose completed instants write data files a reader must see.
_WRITE_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, CLUSTERING})


@dataclass(frozen=True)
class Visibility:
    """Which instants' files a read sees; see the module docstring for the rules.

    ``completed`` maps requested time -> completion time (``None`` for table version 6,
    which does not record it) for every completed instant on the active timeline;
    ``timeline_start`` is the first requested time on the active timeline (``None``
    when the timeline is empty); ``pending_compactions`` the requested times of
    compactions that are pending for this read.
    """

    completed: dict[str, str | None]
    timeline_start: str | None
    as_of: str | None = None
    completed_by: str | None = None
    pending_compactions: frozenset[str] = field(default_factory=frozenset)

    def is_archived(self, instant_time: str) -> bool:
        """Older than the active timeline, hence committed."""
        return self.timeline_start is not None and instant_time < self.timeline_start

    def is_visible(self, instant_time: str) -> bool:
        """Whether files (and log blocks) written by ``instant_time`` are visible."""
        if self.as_of is not None and instant_time > self.as_of:
            return False
        if instant_time in self.completed or self.is_archived(instant_time):
            return self.completed_by is None or self.completion(instant_time) <= self.completed_by
        return False

    def completion(self, instant_time: str) -> str:
        """Completion time of a visible instant; its requested time when not recorded
        (version 6, archived instants) -- the best available lower bound."""
        return self.completed.get(instant_time) or instant_time


class FileSystemView:
    """Partitions, file groups and live slices of one table for one loaded timeline.

    ``gw`` is the table's ``FileSystemGateway``, ``config`` its ``TableConfig`` and
    ``timeline`` a loaded ``Timeline``; ``listing``, when given, is called instead of
    walking storage and returns partition -> data file entries (the metadata table's
    ``files`` partition: :func:`hudilite.metadata.listing.listing_view`). Listing happens
    on first use and is cached; a
    view is a consistent picture of one moment, call ``refresh()`` (or build a new view
    with a reloaded timeline) after writes.
    """

    def __init__(
        self,
        gw: FileSystemGateway,
        config: TableConfig,
        timeline: Timeline,
        listing: Callable[[], dict[str, list[FileEntry]]] | None = None,
    ) -> None:
        self.gw = gw
        self.config = config
        self.timeline = timeline
        self.table_version = int(config.table_version)
        fmt = str(config.props.get("hoodie.table.base.file.format", "PARQUET"))
        self._base_extension = fmt.strip().lower()
        self._instants: list[Instant] = timeline.instants
        self._by_time = {i.requested_time: i for i in self._instants}
        self._listing: dict[str, list[FileEntry]] | None = None
        self._parsed: dict[str, tuple[list[BaseFile], list[LogFile]]] = {}
        self._metadata_cache: dict[str, CommitMetadata] = {}
        self._damage: list[Damage] | None = None
        self._log_ranges: dict[str, tuple[CommittedRange, ...]] | None = None
        # A listing that replaces the storage walk: partition -> its data files, e.g. the
        # metadata table's files partition (hudilite.metadata.listing), which lists only
        # files of completed instants -- enough for reads, not for rollbacks of pending ones.
        self._lister = listing

    # ------------------------------------------------------------------ listing

    def refresh(self) -> None:
        """Forget the cached listing (the timeline is kept; build a new view for a new one)."""
        self._listing = None
        self._parsed.clear()
        self._damage = None

    def _tree(self) -> dict[str, list[FileEntry]]:
        """Every non-hidden directory of the table (``""`` = base path) -> its file entries."""
        if self._listing is None and self._lister is not None:
            self._listing = self._lister()
        if self._listing is None:
            listing: dict[str, list[FileEntry]] = {}
            stack = [""]
            while stack:
                directory = stack.pop()
                files = []
                for entry in self.gw.list_dir(directory):
                    # Hidden dirs (.hoodie, .spark-staging, ...) never hold table data.
                    if entry.is_dir:
                        if not entry.name.startswith(".") and entry.name not in _SKIPPED_DIRS:
                            stack.append(join_path(directory, entry.name))
                    else:
                        files.append(entry)
                listing[directory] = files
            self._listing = listing
        return self._listing

    def partitions(self) -> list[str]:
        """Partition paths: directories holding ``.hoodie_partition_metadata`` (or its
        Parquet/ORC form), sorted (``""`` for a non-partitioned table); with a ``listing``
        given, the partitions it lists."""
        if self._lister is not None:
            return sorted(self._tree())
        return sorted(
            d
            for d, files in self._tree().items()
            if any(is_partition_metadata_name(f.name) for f in files)
        )

    def _selected(self, partitions: PartitionFilter) -> list[str]:
        known = self.partitions()
        if partitions is None:
            return known
        if callable(partitions):
            return [p for p in known if partitions(p)]
        if isinstance(partitions, str):  # one partition, not an iterable of characters
            partitions = [partitions]
        wanted = {p.strip("/") for p in partitions}
        return [p for p in known if p in wanted]

    def _files(self, directory: str) -> tuple[list[BaseFile], list[LogFile]]:
        """Parsed data files of one directory (names that do not parse are ignored)."""
        if directory not in self._parsed:
            bases: list[BaseFile] = []
            logs: list[LogFile] = []
            for entry in self._tree().get(directory, []):
                name: str = entry.name
                if name.endswith((".crc", ".tmp")) or is_partition_metadata_name(name):
                    continue
                if name.startswith("."):
                    log_name = LogFileName.parse(name)
                    # CDC logs (".cdc") and legacy ".archive" logs hold no table records.
                    if log_name is not None and log_name.extension == "log" and not log_name.suffix:
                        logs.append(LogFile(directory, log_name, int(entry.size)))
                else:
                    base_name = BaseFileName.parse(name)
                    if base_name is not None and self._is_base_format(base_name):
                        bases.append(BaseFile(directory, base_name, int(entry.size)))
            self._parsed[directory] = (bases, logs)
        return self._parsed[directory]

    def _is_base_format(self, name: BaseFileName) -> bool:
        return str(name.extension).lstrip(".").lower() == self._base_extension

    # --------------------------------------------------------------- visibility

    def visibility(self, as_of: str | None = None, completed_by: str | None = None) -> Visibility:
        """The visibility rule for a read as of ``as_of`` (requested-time bound) and/or
        ``completed_by`` (completion-time bound); both ``None`` = the latest state."""
        completed: dict[str, str | None] = {}
        pending_compactions = set()
        for instant in self._instants:
            if instant.state == State.COMPLETED:
                completed[instant.requested_time] = instant.completion_time
            elif instant.action == COMPACTION and (
                as_of is None or instant.requested_time <= as_of
            ):
                pending_compactions.add(instant.requested_time)
        first = self.timeline.first_active()
        start = first.requested_time if first is not None else None
        return Visibility(completed, start, as_of, completed_by, frozenset(pending_compactions))

    def commit_metadata(self, requested_time: str) -> CommitMetadata | None:
        """Commit metadata of the completed instant ``requested_time`` (cached), or ``None``
        when there is no such completed instant. A damaged file raises
        ``CorruptFileError``: guessing would show replaced or half-written data."""
        instant = self._by_time.get(requested_time)
        if instant is None or instant.state != State.COMPLETED:
            return None
        return self._metadata(instant)

    def _metadata(self, instant: Instant) -> CommitMetadata:
        """Commit metadata of a completed instant (cached)."""
        key = instant.requested_time
        if key not in self._metadata_cache:
            self._metadata_cache[key] = self.timeline.commit_metadata(instant)
        return self._metadata_cache[key]

    def _metadata_hint(self, instant: Instant | None) -> CommitMetadata | None:
        """Commit metadata where it only refines an answer: ``None`` if absent or damaged."""
        if instant is None or instant.state != State.COMPLETED:
            return None
        try:
            return self._metadata(instant)
        except (HudiliteError, OSError):
            return None

    def replaced_file_groups(
        self, as_of: str | None = None, completed_by: str | None = None
    ) -> set[tuple[str, str]]:
        """``(partition, file_id)`` of file groups replaced by replace commits visible to a
        read as of ``as_of`` / ``completed_by``."""
        vis = self.visibility(as_of, completed_by)
        replaced: set[tuple[str, str]] = set()
        for instant in self._instants:
            if instant.state != State.COMPLETED or instant.action not in (
                REPLACE_COMMIT,
                CLUSTERING,
            ):
                continue
            if not vis.is_visible(instant.requested_time):
                continue
            replaced |= self._metadata(instant).replaced_file_groups()
        return replaced

    # ------------------------------------------------------------------- slicing

    def _groups_in(self, partition: str) -> dict[str, tuple[list[BaseFile], list[LogFile]]]:
        bases, logs = self._files(partition)
        groups: dict[str, tuple[list[BaseFile], list[LogFile]]] = {}
        for base in bases:
            groups.setdefault(base.file_id, ([], []))[0].append(base)
        for log in logs:
            groups.setdefault(log.file_id, ([], []))[1].append(log)
        return groups

    def _slice_group(
        self,
        partition: str,
        file_id: str,
        bases: list[BaseFile],
        logs: list[LogFile],
        vis: Visibility,
    ) -> list[FileSlice]:
        """The visible slices of one file group, oldest first (may include a version-6
        pending-compaction slice without base file as the last one)."""
        visible_bases: dict[str, BaseFile] = {}
        for base in sorted(bases, key=lambda b: b.file_name):
            if not vis.is_visible(base.instant_time):
                continue
            if base.instant_time in visible_bases:
                base = self._pick_duplicate(visible_bases[base.instant_time], base)
            visible_bases[base.instant_time] = base
        if self.table_version >= 8:
            visible_bases = {
                t: _with_completion(b, vis.completion(t)) for t, b in visible_bases.items()
            }
            slice_logs = self._attach_logs_by_completion(visible_bases, logs, vis)
        else:
            slice_logs = {t: [] for t in visible_bases}
            for log in logs:
                t = log.instant_time
                if vis.is_visible(t) or t in vis.pending_compactions:
                    slice_logs.setdefault(t, []).append(log)
        return [
            FileSlice(
                partition,
                file_id,
                t,
                visible_bases.get(t),
                tuple(sorted(slice_logs[t], key=LogFile.sort_key)),
            )
            for t in sorted(slice_logs)
        ]

    @staticmethod
    def _attach_logs_by_completion(
        bases: dict[str, BaseFile], logs: list[LogFile], vis: Visibility
    ) -> dict[str, list[LogFile]]:
        """Version 8+: each visible log joins the slice with the greatest base instant
        ``<=`` its completion time. Logs older than every base (a log-only group) form one
        slice keyed by the earliest such log's instant."""
        keys = sorted(bases)
        slice_logs: dict[str, list[LogFile]] = {t: [] for t in keys}
        orphans: list[LogFile] = []
        for log in logs:
            if not vis.is_visible(log.instant_time):
                continue
            completion = vis.completion(log.instant_time)
            log = LogFile(log.partition, log.name, log.size, completion)
            index = bisect.bisect_right(keys, completion)
            if index == 0:
                orphans.append(log)
            else:
                slice_logs[keys[index - 1]].append(log)
        if orphans:
            slice_logs[min(o.instant_time for o in orphans)] = orphans
        return slice_logs

    def _pick_duplicate(self, first: BaseFile, second: BaseFile) -> BaseFile:
        """Two base files of one group and instant (a retried task's leftover): keep the
        one the commit metadata names, else the first by name."""
        metadata = self._metadata_hint(self._by_time.get(first.instant_time))
        written = set(_written_paths(metadata))
        if second.path in written and first.path not in written:
            return second
        return first

    def _build(
        self, partitions: PartitionFilter, vis: Visibility, include_replaced: bool
    ) -> list[FileGroup]:
        replaced = (
            set() if include_replaced else self.replaced_file_groups(vis.as_of, vis.completed_by)
        )
        groups = []
        for partition in self._selected(partitions):
            for file_id, (bases, logs) in sorted(self._groups_in(partition).items()):
                if (partition, file_id) in replaced:
                    continue
                slices = self._slice_group(partition, file_id, bases, logs, vis)
                if slices:
                    groups.append(FileGroup(partition, file_id, tuple(slices)))
        return groups

    def file_groups(
        self, partitions: PartitionFilter = None, *, include_replaced: bool = False
    ) -> list[FileGroup]:
        """File groups with their visible slices on the latest timeline, sorted by
        ``(partition, file_id)``. Replaced groups are left out unless
        ``include_replaced`` (the cleaner wants them)."""
        return self._build(partitions, self.visibility(), include_replaced)

    @staticmethod
    def _effective(group: FileGroup, vis: Visibility) -> FileSlice | None:
        """The slice a reader uses: the latest one, merged with its predecessor when it
        is a pending compaction without base file (see module docstring)."""
        slices = group.slices
        if not slices:
            return None
        last = slices[-1]
        pending = last.base_file is None and last.base_instant in vis.pending_compactions
        if pending and len(slices) > 1:
            prev = slices[-2]
            return FileSlice(
                prev.partition,
                prev.file_id,
                prev.base_instant,
                prev.base_file,
                prev.log_files + last.log_files,
            )
        return last

    def latest_slices(
        self,
        as_of: str | None = None,
        partitions: PartitionFilter = None,
        *,
        completed_by: str | None = None,
        check: bool = True,
    ) -> list[FileSlice]:
        """The live slice of every (non-replaced) file group, sorted by group.

        ``as_of`` is a read instant (normalised 17- or 14-digit instant time; instants
        with a greater requested time are ignored); ``completed_by`` bounds completion
        times instead (version-8 incremental reads). Both ``None``: the latest state,
        which writes and table services build on: then a file a visible commit wrote into
        a selected partition that is missing or short raises :class:`MissingFileError` /
        :class:`CorruptFileError` naming it (:mod:`hudilite.filegroup.integrity`), unless
        ``check`` is false (reads, which check themselves; inspection and repair).
        """
        vis = self.visibility(as_of, completed_by)
        out = self._with_committed(self._live(vis, partitions))
        if check and as_of is None and completed_by is None:
            selected = set(self._selected(partitions))
            hit = [d for d in self.damage() if d.group[0] in selected]
            if hit:
                raise write_refusal(hit)
        return out

    def _live(self, vis: Visibility, partitions: PartitionFilter) -> list[FileSlice]:
        out = []
        for group in self._build(partitions, vis, include_replaced=False):
            effective = self._effective(group, vis)
            if effective is not None and not effective.is_empty:
                out.append(effective)
        return out

    def damage(self) -> list[Damage]:
        """The damaged files of the latest state's live file groups (cached with the
        listing): what :meth:`latest_slices` refuses to hand to a writer."""
        if self._damage is None:
            vis = self.visibility()
            self._damage = find_damage(self, vis, self._live(vis, None), lambda _: True)
        return self._damage

    def slice_as_of(
        self, partition: str, file_id: str, as_of: str | None = None
    ) -> FileSlice | None:
        """The live slice of one file group as of ``as_of`` (``None`` if the group does not
        exist then or was replaced)."""
        vis = self.visibility(as_of)
        if (partition, file_id) in self.replaced_file_groups(as_of):
            return None
        bases, logs = self._groups_in(partition).get(file_id, ([], []))
        slices = self._slice_group(partition, file_id, bases, logs, vis)
        effective = self._effective(FileGroup(partition, file_id, tuple(slices)), vis)
        return None if effective is None else self._with_committed([effective])[0]

    def committed_log_ranges(self) -> dict[str, tuple[CommittedRange, ...]]:
        """Table-relative log file path -> the byte ranges completed commits on the active
        timeline recorded writing to it (cached; see :attr:`LogFile.committed`). A commit
        file that cannot be read adds nothing here (reads fail on it by name elsewhere)."""
        if self._log_ranges is None:
            ranges: dict[str, list[CommittedRange]] = {}
            for instant in self.timeline.commits():
                metadata = self._metadata_hint(instant)
                for stats in metadata.partition_to_write_stats.values() if metadata else ():
                    for stat in stats:
                        if stat.path and LogFileName.parse(posixpath.basename(stat.path)):
                            start = int(stat.log_offset or 0)
                            end = start + int(stat.file_size_in_bytes or 0)
                            ranges.setdefault(stat.path, []).append(
                                (start, end, instant.requested_time)
                            )
            self._log_ranges = {path: tuple(sorted(r)) for path, r in ranges.items()}
        return self._log_ranges

    def _with_committed(self, slices: list[FileSlice]) -> list[FileSlice]:
        """``slices`` with their log files' committed ranges (read only when there are logs)."""
        if not any(s.log_files for s in slices):
            return slices
        ranges = self.committed_log_ranges()
        return [
            s if not s.log_files else dataclasses.replace(
                s,
                log_files=tuple(
                    dataclasses.replace(log, committed=ranges.get(log.path, ()))
                    for log in s.log_files
                ),
            )
            for s in slices
        ]  # fmt: skip

    # -------------------------------------------------------- writers and services

    def files_of_instant(self, instant_time: str) -> list[str]:
        """Table-relative paths of the data files written by ``instant_time`` (any state),
        sorted. Used by rollback to delete a failed write's files.

        Base files named with the instant; version 8: log files named with it; version 6:
        log files whose base instant is the instant when it is a delta commit (log-only
        file groups it opened) -- logs named after a compaction or replace commit were
        written by later delta commits. Version-6 logs that a delta commit *appended to
        an older slice* cannot be told apart by name; when the instant completed, its
        write stats name them and they are included, otherwise rollback must neutralise
        them with a rollback command block (as Hudi does).
        """
        instant = self._by_time.get(instant_time)
        own_logs = self.table_version >= 8 or (instant is None or instant.action == DELTA_COMMIT)
        paths: set[str] = set()
        existing: set[str] = set()
        for directory in self._tree():
            bases, logs = self._files(directory)
            existing.update(b.path for b in bases)
            existing.update(log.path for log in logs)
            paths.update(b.path for b in bases if b.instant_time == instant_time)
            if own_logs:
                paths.update(log.path for log in logs if log.instant_time == instant_time)
        written = _written_paths(self._metadata_hint(instant))
        paths.update(p for p in written if p in existing)
        return sorted(paths)

    def pending_file_groups(self) -> set[tuple[str, str]]:
        """File groups with pending work: named in a pending compaction or clustering plan,
        or holding files of a pending (or failed, not yet rolled back) instant."""
        busy: set[tuple[str, str]] = set()
        busy.update(pending_plan_groups(self.timeline, (COMPACTION, CLUSTERING, REPLACE_COMMIT)))
        pending = {i.requested_time for i in self._instants if i.state != State.COMPLETED}
        if pending:
            for directory in self._tree():
                bases, logs = self._files(directory)
                busy.update(b.group_key for b in _named(bases, pending))
                busy.update(log.group_key for log in _named(logs, pending))
        return busy

    def small_files(self, partition: str, limit_bytes: int) -> list[BaseFile]:
        """Latest base files of ``partition`` smaller than ``limit_bytes`` that can take
        more inserts: the group's live slice has no logs and the group has no pending
        work (``pending_file_groups``). Sorted by path."""
        busy = self.pending_file_groups()
        out = []
        for file_slice in self.latest_slices(partitions=[partition]):
            base = file_slice.base_file
            if base is None or file_slice.has_logs or file_slice.group_key in busy:
                continue
            if base.size < limit_bytes:
                out.append(base)
        return sorted(out, key=lambda b: b.path)


def _with_completion(base: BaseFile, completion: str) -> BaseFile:
    return BaseFile(base.partition, base.name, base.size, completion)


def _named(files: Iterable[_DataFile], instants: set[str]) -> list[_DataFile]:
    """The files whose name carries one of ``instants``."""
    return [f for f in files if f.instant_time in instants]


def _written_paths(metadata: CommitMetadata | None) -> list[str]:
    """Table-relative data file paths in commit metadata write stats (``path`` plus MOR
    ``logFiles``, which are names relative to the partition)."""
    if metadata is None:
        return []
    out = []
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if stat.path:
                out.append(stat.path)
            for log_name in stat.log_files or []:
                out.append(join_path(partition, log_name))
    return out
