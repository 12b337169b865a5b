"""Scan planning: which files a read touches, decided on the driver without reading data.

A :class:`ScanPlan` splits the live file slices of a read into

* ``native_paths`` -- base files of slices without log files (COW tables, MOR slices
  that were compacted or never updated, every slice of a read-optimized query); Spark's
  own Parquet reader reads them as they are;
* ``merge_slices`` -- slices with log files, which a task must merge (base + logs).

plus what the readers need to filter records:

* ``commit_times`` -- incremental reads only: keep rows whose ``_hoodie_commit_time`` is
  in this set (the *requested* times of the commits in the range). Using the set rather
  than the range makes one rule serve both table versions: version 6 ranges are in
  instant (requested) time, version 8 ranges are in completion time, and a version-8
  commit requested before ``start`` may complete inside the range (hudi-rs returns its
  rows too). ``None`` means no row filter.
* ``commit_range`` -- the normalised ``(start, end)`` as the caller gave it (informational
  for version 8, where it is in completion time).
* :meth:`ScanPlan.is_instant_visible` -- which log blocks a merge may apply (blocks of
  pending/failed instants, or newer than the read instant, are skipped).

Read instants may be given as 17- or 14-digit instant times or as ISO-like date-times
(``2024-01-31 12:00:00.123``, ``2024-01-31T12:00:00Z``, ``2024-01-31``), see
:func:`normalize_instant`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError, InstantNotFoundError
from hudilite.filegroup.slices import BaseFile, FileSlice
from hudilite.filegroup.view import FileSystemView, PartitionFilter, Visibility
from hudilite.metadata import column_stats
from hudilite.metadata.listing import listing_view
from hudilite.read import data_skipping
from hudilite.read.file_checks import check_slices
from hudilite.read.where import Predicate
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.timeline.instant_time import format_instant, parse_instant
from hudilite.timeline.metadata import CommitMetadata
from hudilite.timeline.plans import clean_bound
from hudilite.timeline.timeline import savepoint_times

# Hudi's fix for 14-digit (second precision) instants: they stand for the whole second.
_LEGACY_MILLIS = "999"
_ISO = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[ T](?P<time>\d{2}:\d{2}(?::\d{2})?)(?:\.(?P<frac>\d{1,9}))?)?"
    r"\s*(?P<tz>Z|[+-]\d{2}:?\d{2})?$"
)


@dataclass(frozen=True)
class ScanPlan:
    """The files of one read and the filters its readers apply (see module docstring).

    ``schema`` is the Avro schema JSON of the data columns as of the read (from the latest
    visible commit's metadata, else the table's create schema), or ``None``.
    ``as_of`` is the read instant (requested-time bound) when there is one;
    ``visible_instants`` and ``timeline_start`` back :meth:`is_instant_visible`.
    """

    native_paths: list[str]
    merge_slices: list[FileSlice]
    schema: str | None
    commit_range: tuple[str | None, str | None] | None = None
    commit_times: frozenset[str] | None = None
    as_of: str | None = None
    visible_instants: frozenset[str] = field(default_factory=frozenset)
    timeline_start: str | None = None
    read_optimized: bool = False

    @property
    def is_empty(self) -> bool:
        """Nothing to read."""
        return not self.native_paths and not self.merge_slices

    def base_paths(self) -> list[str]:
        """Every base file the plan reads (native ones and those of merge slices), sorted."""
        merged = [s.base_path for s in self.merge_slices if s.base_path is not None]
        return sorted(self.native_paths + merged)

    def is_instant_visible(self, instant_time: str) -> bool:
        """Whether a log block written by ``instant_time`` belongs to this read: its instant
        completed (or is archived) and is not newer than the read instant."""
        if self.as_of is not None and instant_time > self.as_of:
            return False
        if instant_time in self.visible_instants:
            return True
        return self.timeline_start is not None and instant_time < self.timeline_start

    def keeps_commit_time(self, commit_time: str | None) -> bool:
        """The incremental row filter on ``_hoodie_commit_time`` (always True otherwise)."""
        return self.commit_times is None or commit_time in self.commit_times


# ---------------------------------------------------------------------------- instants


def normalize_instant(value: str | int | datetime) -> str:
    """A read instant as a 17-digit instant time (UTC, like the table's timeline).

    Accepts 17 digits (as is), 14 digits (legacy second precision: the whole second, i.e.
    ``...999`` milliseconds, as Hudi does), ``YYYY-MM-DD[ HH:MM[:SS][.fff]][Z|+hh:mm]`` and
    datetimes (naive = UTC). Raises ``ConfigError`` for anything else.
    """
    if isinstance(value, datetime):
        return format_instant(value)
    text = str(value).strip()
    if text.isdigit() and len(text) in (14, 17):
        candidate = text + _LEGACY_MILLIS if len(text) == 14 else text
        try:
            parse_instant(candidate)
        except ValueError as exc:
            raise ConfigError(f"not a valid instant time: {value!r}") from exc
        return candidate
    m = _ISO.match(text)
    if m is None:
        raise ConfigError(
            f"not an instant time: {value!r} (use yyyyMMddHHmmssSSS or 'YYYY-MM-DD HH:MM:SS.fff')"
        )
    clock = m["time"] or "00:00:00"
    if clock.count(":") == 1:
        clock += ":00"
    try:
        dt = datetime.strptime(f"{m['date']} {clock}", "%Y-%m-%d %H:%M:%S")
    except ValueError as exc:
        raise ConfigError(f"not a valid date-time: {value!r}") from exc
    dt += timedelta(milliseconds=int((m["frac"] or "0").ljust(3, "0")[:3]))
    if m["tz"] and m["tz"] != "Z":
        sign = 1 if m["tz"][0] == "+" else -1
        hours, minutes = int(m["tz"][1:3]), int(m["tz"][-2:])
        dt -= sign * timedelta(hours=hours, minutes=minutes)
    return format_instant(dt.replace(tzinfo=UTC))


def _is_savepoint(view: FileSystemView, instant: str) -> bool:
    """Savepointed commits keep their files through cleaning, so reads as of them work."""
    return instant in savepoint_times(view.gw, view.config)


def validate_as_of(view: FileSystemView, as_of: str | int | datetime) -> str:
    """Normalise a time-travel instant and check the table can still answer it.

    Raises ``InstantNotFoundError`` when the instant is older than the active timeline
    (archived, or before the table existed) or older than what the cleaner retained.
    """
    instant = normalize_instant(as_of)
    start = view.visibility().timeline_start
    if start is None:
        raise InstantNotFoundError(f"cannot read as of {instant}: the table has no commits")
    if instant < start:
        raise InstantNotFoundError(
            f"cannot read as of {instant}: it is before the first instant on the active "
            f"timeline ({start}); older instants are archived or predate the table"
        )
    # Before the last clean's bound, read instants may have lost their files (Hudi refuses
    # time travel before it too).
    retained = clean_bound(view.timeline)
    if retained is not None and instant < retained and not _is_savepoint(view, instant):
        raise InstantNotFoundError(
            f"cannot read as of {instant}: the cleaner removed the file versions of "
            f"instants before {retained}"
        )
    return instant


def _has_archive(view: FileSystemView) -> bool:
    """Whether any instants were archived (so the active timeline is not the whole story)."""
    try:
        entries = view.gw.list_dir(view.config.archive_dir)
    except (FileNotFoundError, OSError):
        return False
    # v6 archive files are hidden (``.commits_.archive.1_1-0-1``), v8 ones are Parquet.
    return any(
        not e.is_dir and not e.name.endswith(".crc") and e.name != ".DS_Store" for e in entries
    )


# -------------------------------------------------------------------------------- plans


def _view_of(source: Any) -> FileSystemView:
    """A ``FileSystemView`` itself, or the ``view`` of a table state."""
    if isinstance(source, FileSystemView):
        return source
    view = getattr(source, "view", None)
    if isinstance(view, FileSystemView):
        return view
    raise TypeError(f"expected a FileSystemView or a table state, got {type(source).__name__}")


def _schema(view: FileSystemView, vis: Visibility) -> str | None:
    """Avro schema of the latest visible write that recorded one, else the create schema
    (:meth:`Timeline.schema_json`, the table state's rule)."""
    return view.timeline.schema_json(view.config.create_schema, vis.is_visible)


def _build_plan(
    view: FileSystemView,
    slices: Iterable[FileSlice],
    vis: Visibility,
    *,
    read_optimized: bool,
    commit_range: tuple[str | None, str | None] | None = None,
    commit_times: frozenset[str] | None = None,
) -> ScanPlan:
    native: list[str] = []
    merge: list[FileSlice] = []
    for file_slice in slices:
        if file_slice.base_file is not None and (read_optimized or not file_slice.has_logs):
            native.append(file_slice.base_file.path)
        elif file_slice.has_logs and not read_optimized:
            merge.append(file_slice)
    visible = frozenset(t for t in vis.completed if vis.is_visible(t))
    return ScanPlan(
        native_paths=sorted(native),
        merge_slices=sorted(merge, key=lambda s: s.group_key),
        schema=_schema(view, vis),
        commit_range=commit_range,
        commit_times=commit_times,
        as_of=vis.as_of,
        visible_instants=visible,
        timeline_start=vis.timeline_start,
        read_optimized=read_optimized,
    )


def plan_snapshot(
    view_or_state: Any,
    as_of: str | int | datetime | None = None,
    partitions: PartitionFilter = None,
    *,
    read_optimized: bool = False,
    ignore_missing_files: bool = False,
) -> ScanPlan:
    """Plan a snapshot read (latest, or time travel ``as_of``) of the given partitions.

    ``read_optimized=True`` reads base files only (MOR logs are ignored, log-only file
    groups are skipped). Raises ``InstantNotFoundError`` for an ``as_of`` the table can no
    longer answer and ``ConfigError`` for a malformed one; ``MissingFileError`` /
    ``CorruptFileError`` when a committed file is gone or short, unless
    ``ignore_missing_files`` (see :mod:`hudilite.read.file_checks`).
    """
    view = listing_view(_view_of(view_or_state))
    instant = None if as_of is None else validate_as_of(view, as_of)
    vis = view.visibility(as_of=instant)
    slices = view.latest_slices(as_of=instant, partitions=partitions, check=False)
    wanted = _partition_predicate(partitions)
    slices = check_slices(
        view, vis, slices, lambda g: wanted(g[0]), ignore_missing=ignore_missing_files
    )
    return _build_plan(view, slices, vis, read_optimized=read_optimized)


def skip_files(
    state: Any,
    plan: ScanPlan,
    where: Predicate | None,
    options: Mapping[str, Any] | None = None,
) -> ScanPlan:
    """``plan`` without the file slices the table's column statistics prove ``where`` cannot
    match (:mod:`hudilite.read.data_skipping`), when ``hoodie.enable.data.skipping`` (read
    ``options`` over the table's) is on and the table keeps a usable ``column_stats``
    partition; else ``plan`` itself. Incremental plans are kept whole."""
    if where is None or plan.commit_times is not None or plan.is_empty:
        return plan
    view = _view_of(state)
    if not column_stats.listed(view.config.props):
        return plan  # no statistics: nothing else to look at
    given = {k: str(v) for k, v in (options or {}).items()}
    if not state.options(given).get(cfg.DATA_SKIPPING_ENABLED):
        return plan
    slices = [_native_slice(path) for path in plan.native_paths] + list(plan.merge_slices)
    stats = data_skipping.table_stats(
        view.gw, view.config.props, view.timeline, slices, where.columns, latest=plan.as_of is None
    )
    if stats is None:
        return plan
    kept = data_skipping.skip_slices(
        slices,
        where,
        state.storage_schema,
        stats.files,
        read_optimized=plan.read_optimized,
        partitions=stats.partitions,
    )
    native = {s.base_file.path for s in kept if s.base_file is not None and not s.file_id}
    merge = [s for s in kept if s.file_id]
    return replace(
        plan, native_paths=[p for p in plan.native_paths if p in native], merge_slices=merge
    )


def _native_slice(path: str) -> FileSlice:
    """A base file of a plan's native paths as a slice (an empty file id marks it)."""
    partition, _, name = path.rpartition("/")
    parsed = parse_data_file_name(name)
    if not isinstance(parsed, BaseFileName):
        raise ValueError(f"not a base file: {path}")
    return FileSlice(partition, "", parsed.instant_time, BaseFile(partition, parsed, 0))


def plan_incremental(
    timeline_or_state: Any,
    view: Any = None,
    start: str | int | datetime | None = None,
    end: str | int | datetime | None = None,
    *,
    partitions: PartitionFilter = None,
    ignore_missing_files: bool = False,
) -> ScanPlan:
    """Plan an incremental read of the commits in ``(start, end]``.

    Called as ``plan_incremental(timeline, view, start, end)`` (the timeline must be the
    view's own; the view's is used) or ``plan_incremental(table_state, start, end)``.
    Version 6 ranges compare instant (requested) times, version 8+ completion times;
    ``end=None`` is the latest commit.

    The files: for every file group written by a commit in range (its write stats), the
    group's live slice as of ``end`` (same clock as the range); replaced groups are
    dropped. Rows are then filtered by ``commit_times``. With ``start=None`` -- or a
    ``start`` before the active timeline when nothing was archived -- the read covers the
    table from its beginning: every live slice as of ``end``, no row filter. A ``start``
    before the active timeline of a table with archived instants raises
    ``InstantNotFoundError`` (the archived commits cannot be enumerated).
    """
    if not isinstance(timeline_or_state, FileSystemView) and hasattr(timeline_or_state, "view"):
        # plan_incremental(table_state, start, end): shift the positional arguments.
        fs_view = _view_of(timeline_or_state)
        start, end = view, start
    else:
        fs_view = _view_of(view)
    fs_view = listing_view(fs_view)
    lo = None if start is None else normalize_instant(start)
    hi = None if end is None else normalize_instant(end)
    if fs_view.table_version >= 8:
        vis = fs_view.visibility(completed_by=hi)
        slice_args: dict[str, str | None] = {"completed_by": hi}
    else:
        vis = fs_view.visibility(as_of=hi)
        slice_args = {"as_of": hi}
    first = vis.timeline_start
    if lo is not None and (first is None or lo < first):
        if _has_archive(fs_view):
            raise InstantNotFoundError(
                f"cannot read incrementally from {lo}: it is before the active timeline "
                f"(first instant {first}) and older commits are archived"
            )
        lo = None
    wanted = _partition_predicate(partitions)
    if lo is None:
        slices = fs_view.latest_slices(partitions=partitions, check=False, **slice_args)
        slices = check_slices(
            fs_view, vis, slices, lambda g: wanted(g[0]), ignore_missing=ignore_missing_files
        )
        return _build_plan(fs_view, slices, vis, read_optimized=False, commit_range=(lo, hi))

    # By requested time on table version 6, completion time on 8+.
    commits = fs_view.timeline.commits_in_range(lo, hi)
    touched: set[tuple[str, str]] = set()
    for instant in commits:
        metadata = fs_view.commit_metadata(instant.requested_time)
        if metadata is not None:
            touched |= _written_groups(metadata)
    scope = sorted({p for p, _ in touched if wanted(p)})
    slices = [
        s
        for s in fs_view.latest_slices(partitions=scope, check=False, **slice_args)
        if s.group_key in touched
    ]
    slices = check_slices(
        fs_view,
        vis,
        slices,
        lambda g: g in touched and wanted(g[0]),
        ignore_missing=ignore_missing_files,
    )
    return _build_plan(
        fs_view,
        slices,
        vis,
        read_optimized=False,
        commit_range=(lo, hi),
        commit_times=frozenset(i.requested_time for i in commits),
    )


def _written_groups(metadata: CommitMetadata) -> set[tuple[str, str]]:
    """``(partition, file_id)`` of every write stat (placeholder stats without id skipped)."""
    return {
        (partition, stat.file_id)
        for partition, stats in metadata.partition_to_write_stats.items()
        for stat in stats
        if stat.file_id
    }


def _partition_predicate(partitions: PartitionFilter) -> Callable[[str], bool]:
    if partitions is None:
        return lambda _p: True
    if callable(partitions):
        return partitions
    chosen = {p.strip("/") for p in partitions}
    return lambda p: p in chosen
