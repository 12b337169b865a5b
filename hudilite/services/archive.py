"""Timeline archival: move old completed instants off the active timeline, as Hudi does.

Which instants (``hoodie.keep.min.commits`` = m, ``hoodie.keep.max.commits`` = M):

* Nothing happens until the active timeline holds more than M completed commits
  (commit, deltacommit, replacecommit; a completed compaction is a commit). Then the
  oldest are archived until m remain, but never one at or after
  - the completed commit before the earliest pending write or plan (no holes),
  - the first savepoint,
  - for merge-on-read with the NUM_COMMITS/NUM_AND_TIME compaction trigger, the instant
    the next compaction trigger still counts from (``hoodie.compact.inline.max.delta.commits``),
  - the first replacecommit/clustering the last clean has not cleaned up after
    (its replaced file groups would come back to life without its metadata),
  - with a metadata table, the first commit that completed after its latest compaction
    (nothing at all before its first compaction), and the metadata table then archives
    its own timeline (:mod:`hudilite.services.metadata_archive`).
  m is raised to what the cleaner still needs (the commits after its earliest commit to
  retain, plus 2), as Hudi's ``ArchivalUtils`` does.
* Completed cleans and rollbacks: table version 6 (Hudi 0.x) archives each action's
  oldest when it has more than M instants, down to m; version 8 (Hudi 1.x) archives those
  older than the newest commit being archived. Leftover savepoint files older than that
  commit go too.

Every state of an archived instant is archived (its requested, inflight and completed
files; a compaction's plan with the commit that completed it). The archive is written
first (:mod:`hudilite.services.archive_formats`), then the pending-state files are
deleted, then the completed ones oldest first, so a reader never sees a hole in the
timeline; files older than the active timeline count as committed for every reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError, HudiliteError
from hudilite.metadata import sync
from hudilite.services import archive_formats as fmt
from hudilite.services import metadata_archive as mda
from hudilite.services._common import OptionsLike, resolve_options
from hudilite.services.clean import (
    CLEANER_COMMITS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    KEEP_LATEST_FILE_VERSIONS,
    CleanPlan,
    earliest_commit_to_retain,
)
from hudilite.services.compaction import COMPACT_DELTA_COMMITS, COMPACT_TRIGGER_STRATEGY
from hudilite.services.savepoint import savepoint_times
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.log_format import write_log_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import epoch_ms_to_instant, parse_instant
from hudilite.timeline.metadata import CommitMetadata
from hudilite.timeline.timeline import Timeline
from hudilite.write.lock import table_lock
from hudilite.write.markers import delete_markers

#: Records per archive data block / LSM batch (Hudi's ``hoodie.commits.archival.batch``).
ARCHIVAL_BATCH = cfg.ARCHIVAL_BATCH
#: LSM files per level before they are merged (``hoodie.timeline.compaction.batch.size``).
LSM_COMPACTION_BATCH = cfg.LSM_COMPACTION_BATCH
_WRITE_TIMELINE = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING}
)


@dataclass(frozen=True)
class ArchiveResult:
    """What one archival did: the instants archived as ``(requested time, action)``, the
    archive files written and the timeline files deleted."""

    archived: tuple[tuple[str, str], ...]
    files_written: tuple[str, ...]
    timeline_files_deleted: tuple[str, ...]
    min_commits: int
    max_commits: int
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def num_archived(self) -> int:
        """How many instants left the active timeline."""
        return len(self.archived)


# ----------------------------------------------------------------------------- selection


def _keep_bounds(state: TableState, opts: cfg.Options) -> tuple[int, int]:
    """(min, max) commits to keep, raised to what the cleaner still needs."""
    lo, hi = int(opts.get(cfg.KEEP_MIN_COMMITS)), int(opts.get(cfg.KEEP_MAX_COMMITS))
    if lo <= 0 or hi <= lo:
        raise ConfigError(
            f"invalid archival settings hoodie.keep.min.commits={lo}, hoodie.keep.max.commits={hi}:"
            " max must be greater than min, and min positive"
        )
    commits = state.timeline.commits()
    if not commits:
        return lo, hi
    latest = parse_instant(commits[-1].requested_time)
    etr = earliest_commit_to_retain(
        state.timeline,
        str(opts.get(CLEANER_POLICY)),
        int(opts.get(CLEANER_COMMITS_RETAINED)),
        int(opts.get(CLEANER_HOURS_RETAINED)),
        now=latest,
    )
    if etr is not None:
        needed = sum(1 for c in commits if c.requested_time > etr.requested_time) + 2
        if lo < needed:
            return needed, needed + hi - lo
    return lo, hi


def _compaction_bound(timeline: Timeline, max_delta_commits: int) -> str | None:
    """Hudi's ``getEarliestInstantToRetainForCompaction``: keep the delta commits the next
    compaction trigger counts (from the last completed compaction)."""
    compactions = [i for i in timeline.completed() if i.action == COMMIT]
    deltas = [i for i in timeline.instants if i.action == DELTA_COMMIT]
    if compactions:
        ref = compactions[-1].requested_time
        since = [d for d in deltas if d.requested_time > ref]
    elif deltas:
        ref, since = deltas[0].requested_time, deltas
    else:
        return None
    if len(since) < max_delta_commits:
        return ref
    return since[len(since) - max_delta_commits].requested_time


def _clustering_bound(state: TableState, policy: str) -> str | None:
    """Hudi's ``getEarliestInstantToRetainForClustering``: the first replacecommit or
    clustering at/after the last clean's earliest instant to retain."""
    replaces = [i for i in state.timeline.instants if i.action in (REPLACE_COMMIT, CLUSTERING)]
    if not replaces:
        return None
    cleans = [i for i in state.timeline.completed() if i.action == CLEAN]
    if not cleans:
        return replaces[0].requested_time
    last = cleans[-1]
    lower = last.requested_time
    try:
        data = state.timeline.instant_content(Instant(last.requested_time, CLEAN, State.REQUESTED))
        plan = CleanPlan.from_bytes(data)
        etr = plan.earliest_commit_to_retain
        lower = etr or lower
        # A savepoint the clean honoured before a completed replace blocks archival there:
        # the replaced files it kept are still on disk (getEarliestReplacedSavepointInClean).
        sp = sorted(plan.savepointed)
        blocked = bool(sp) and etr > sp[0] and policy != KEEP_LATEST_FILE_VERSIONS
        if blocked and any(r.is_completed and sp[0] <= r.requested_time <= etr for r in replaces):
            lower = sp[0]
    except HudiliteError:
        pass  # no readable plan: the clean's own time is the bound, as for file versions
    return next((r.requested_time for r in replaces if r.requested_time >= lower), None)


def _pending_bound(timeline: Timeline) -> str | None:
    """The completed commit before the earliest pending write or plan (or that pending
    instant itself when no commit precedes it)."""
    pending = [i for i in timeline.pending() if i.action in _WRITE_TIMELINE]
    if not pending:
        return None
    first = pending[0].requested_time
    before = [c for c in timeline.commits() if c.requested_time < first]
    return before[-1].requested_time if before else first


def select_instants(
    state: TableState, options: OptionsLike = None
) -> tuple[list[Instant], int, int]:
    """The instants Hudi's archiver would archive now (completed, most advanced state),
    sorted by requested time, with the (min, max) commits kept."""
    opts = resolve_options(state, options)
    lo, hi = _keep_bounds(state, opts)
    timeline = state.timeline
    commits = timeline.commits()
    chosen: list[Instant] = []
    if len(commits) > hi:
        bounds = [_pending_bound(timeline), _clustering_bound(state, str(opts.get(CLEANER_POLICY)))]
        if state.config.is_mor and str(opts.get(COMPACT_TRIGGER_STRATEGY)) in (
            "NUM_COMMITS",
            "NUM_AND_TIME",
        ):
            bounds.append(_compaction_bound(timeline, int(opts.get(COMPACT_DELTA_COMMITS))))
        savepoints = savepoint_times(state.gw, state.config)
        if savepoints:
            bounds.append(min(savepoints))
        # The metadata table's last compaction bounds the data timeline (metadata_archive).
        allowed, metadata_bound = mda.data_table_bound(state.gw, state.config.props, commits)
        bounds.append(metadata_bound)
        limit = min((b for b in bounds if b is not None), default=None)
        eligible = [c for c in commits if allowed and (limit is None or c.requested_time < limit)]
        chosen = eligible[: len(commits) - lo]
    side = [i for i in timeline.completed() if i.action in (CLEAN, ROLLBACK)]
    if state.config.layout_version >= 2:
        newest = chosen[-1].requested_time if chosen else ""
        chosen += [i for i in side if i.requested_time < newest]
    else:
        for action in (CLEAN, ROLLBACK):
            group = [i for i in side if i.action == action]
            if len(group) > hi:
                chosen += group[: len(group) - lo]
    return sorted(chosen), lo, hi


def _instant_files(
    gw: FileSystemGateway, timeline_dir: str, layout: int
) -> list[tuple[Instant, str]]:
    """Every instant file of the timeline folder (savepoints included) with its name."""
    out = []
    for e in gw.list_dir(timeline_dir):
        inst = None if e.is_dir else Instant.parse(e.name, layout)
        if inst is not None:
            out.append((inst, e.name))
    return sorted(out, key=lambda p: p[0].sort_key())


def _groups(state: TableState, chosen: list[Instant]) -> list[list[tuple[Instant, str]]]:
    """The files of each chosen instant, every state, grouped like Hudi's ``ActiveAction``
    (a compaction plan with its commit; stale savepoint files older than the archived
    commits as their own group)."""
    files = _instant_files(state.gw, state.config.timeline_dir, state.config.layout_version)
    keys = [(i.requested_time, fmt.comparable_action(i.action)) for i in chosen]
    newest_commit = max((i.requested_time for i in chosen if i.is_write), default="")
    by_key: dict[tuple[str, str], list[tuple[Instant, str]]] = {}
    for inst, name in files:
        key = (inst.requested_time, fmt.comparable_action(inst.action))
        if key in keys or (inst.action == SAVEPOINT and inst.requested_time < newest_commit):
            by_key.setdefault(key, []).append((inst, name))
    return [by_key[k] for k in sorted(by_key)]


# ----------------------------------------------------------------------------- payloads


def mtime_instant(gw: FileSystemGateway, path: str, utc: bool) -> str:
    """A file's modification time as an instant time (Hudi 0.x's state transition time),
    in UTC or the local zone as the table's timeline zone says."""
    return epoch_ms_to_instant(gw.mtime_ms(path), utc)


def legacy_entry(inst: Instant, content: bytes, transition_time: str | None) -> dict[str, Any]:
    """Hudi's ``MetadataConversionUtils.createMetaWrapper``: one ``HoodieArchivedMetaEntry``
    for one state of an instant, its content decoded into the matching field."""
    entry: dict[str, Any] = {
        "commitTime": inst.requested_time,
        "actionType": inst.action,
        "actionState": inst.state.name,
        "stateTransitionTime": transition_time if inst.is_completed else None,
        "version": 1,
    }
    action, empty = inst.action, not content.strip()
    if action in (COMMIT, DELTA_COMMIT):
        entry["hoodieCommitMetadata"] = fmt.commit_metadata_record(content, replace=False)
    elif action in (REPLACE_COMMIT, CLUSTERING):
        if inst.is_completed:
            entry["hoodieReplaceCommitMetadata"] = fmt.commit_metadata_record(content, replace=True)
        elif inst.is_inflight and not empty:
            entry["HoodieInflightReplaceMetadata"] = fmt.commit_metadata_record(content, False)
        elif not empty:
            entry["hoodieRequestedReplaceMetadata"] = fmt.decode_avro_as(
                content, "HoodieRequestedReplaceMetadata"
            )
    elif action == CLEAN:
        name, key = (
            ("HoodieCleanMetadata", "hoodieCleanMetadata")
            if inst.is_completed
            else ("HoodieCleanerPlan", "hoodieCleanerPlan")
        )
        entry[key] = fmt.decode_avro_as(content, name)
    elif action == ROLLBACK and inst.is_completed:
        entry["hoodieRollbackMetadata"] = fmt.decode_avro_as(content, "HoodieRollbackMetadata")
    elif action == SAVEPOINT:
        entry["hoodieSavePointMetadata"] = fmt.decode_avro_as(content, "HoodieSavepointMetadata")
    elif action in (COMPACTION, LOG_COMPACTION) and inst.is_requested:
        entry["hoodieCompactionPlan"] = fmt.decode_avro_as(content, "HoodieCompactionPlan")
    return entry


def lsm_row(group: list[tuple[Instant, bytes]]) -> dict[str, Any]:
    """Hudi's ``createLSMTimelineInstant`` for one action: completed content as metadata,
    the requested plan (or the inflight replace metadata) as plan."""
    done = next(i for i, _ in group if i.is_completed)
    metadata = next(c for i, c in group if i.is_completed)
    plan = None
    for inst, content in group:
        if inst.is_pending and content.strip():
            if inst.action in (CLEAN, COMPACTION, LOG_COMPACTION) and inst.is_requested:
                plan = content
            elif inst.action in (REPLACE_COMMIT, CLUSTERING):
                plan = content  # the inflight file, read after the requested one, wins
    return {
        "instantTime": done.requested_time,
        "completionTime": done.completion_time or done.requested_time,
        "action": done.action,
        "metadata": metadata or None,
        "plan": plan,
        "version": 1,
    }


# ----------------------------------------------------------------------------- archival


def _write_legacy(state: TableState, entries: list[dict[str, Any]], batch: int) -> list[str]:
    if not entries:
        return []
    blocks = [
        fmt.encode_entries_block(entries[i : i + batch]) for i in range(0, len(entries), batch)
    ]
    path = fmt.next_archive_file(state.gw, state.config.archive_dir)
    state.gw.mkdirs(state.config.archive_dir)
    write_log_file(state.gw, path, blocks)
    return [path]


def write_archive(
    state: TableState, groups: list[list[tuple[Instant, bytes]]], options: OptionsLike = None
) -> list[str]:
    """Append the instants of ``groups`` (each: every state of one instant with its file
    content) to the archived timeline of the table's version; returns the files written."""
    opts = resolve_options(state, options)
    if state.config.layout_version < 2:
        utc = state.config.timeline_utc
        entries = []
        for group in groups:
            for inst, content in group:
                done_at = _mtime_or_none(state, inst, utc)
                entries.append(legacy_entry(inst, content, done_at))
        return _write_legacy(state, entries, max(1, int(opts.get(ARCHIVAL_BATCH))))
    history = state.config.archive_dir
    state.gw.mkdirs(history)
    rows = [lsm_row(g) for g in groups if any(i.is_completed for i, _ in g)]
    if not rows:
        return []
    rows.sort(key=lambda r: r["instantTime"])
    name = fmt.write_lsm_file(state.gw, history, rows)
    written = [join(history, name)] if name else []
    compacted = fmt.compact_lsm(state.gw, history, int(opts.get(LSM_COMPACTION_BATCH)))
    return written + [join(history, n) for n in compacted]


def _mtime_or_none(state: TableState, inst: Instant, utc: bool) -> str | None:
    if not inst.is_completed:
        return None
    if inst.completion_time:
        return inst.completion_time
    path = join(state.config.timeline_dir, inst.file_name(state.config.layout_version))
    try:
        return mtime_instant(state.gw, path, utc)
    except FileNotFoundError:
        return None


def may_archive(state: TableState, options: OptionsLike = None) -> bool:
    """Whether :func:`archive` could archive anything on ``state``'s timeline, decided from
    the timeline alone (no lock, no listing): not while the completed commits are at
    most ``hoodie.keep.max.commits`` (raised for the cleaner, never lowered) and, on
    version 6, each of the clean and rollback actions too; version 8 archives cleans and
    rollbacks only beside a commit. The inline archival after a write asks this first,
    so most writes skip the archiver's lock and re-load. ``ConfigError`` as
    :func:`archive` for invalid bounds."""
    _, hi = _keep_bounds(state, resolve_options(state, options))
    timeline = state.timeline
    if len(timeline.commits()) > hi:
        return True
    if state.config.layout_version >= 2:
        return False
    side = [i.action for i in timeline.completed() if i.action in (CLEAN, ROLLBACK)]
    return any(side.count(action) > hi for action in (CLEAN, ROLLBACK))


def archive(state: TableState, options: OptionsLike = None) -> ArchiveResult:
    """Archive what Hudi's archiver would (see the module doc) under the table lock.

    Options: ``hoodie.keep.min.commits``/``hoodie.keep.max.commits``, the cleaner and
    compaction-trigger keys above, ``hoodie.commits.archival.batch``. Raises
    :class:`ConfigError` for min/max settings Hudi rejects.
    """
    opts = resolve_options(state, options)
    with table_lock(state.gw, opts):
        state = TableState.load(state.gw)
        chosen, lo, hi = select_instants(state, opts)
        groups: list[list[tuple[Instant, bytes]]] = []
        written: list[str] = []
        deleted: list[str] = []
        if chosen:
            gw, tdir = state.gw, state.config.timeline_dir
            named = _groups(state, chosen)
            groups = [[(i, gw.read_bytes(join(tdir, name))) for i, name in g] for g in named]
            written = write_archive(state, groups, opts)
            deleted = _delete_archived(state, named)
        extra = {"metadata_table": _archive_metadata_table(state, opts)}
    return ArchiveResult(_archived(groups), tuple(written), tuple(deleted), lo, hi, extra)


def _archived(groups: list[list[tuple[Instant, bytes]]]) -> tuple[tuple[str, str], ...]:
    """``(requested time, action)`` of each archived group (its completed action)."""
    return tuple(
        (g[0][0].requested_time, next((i.action for i, _ in g if i.is_completed), g[0][0].action))
        for g in groups
    )


def _archive_metadata_table(state: TableState, opts: cfg.Options) -> tuple[tuple[str, str], ...]:
    """Archive the metadata table's own timeline (:mod:`~hudilite.services.metadata_archive`)
    into its LSM history after the data table's archival (the caller holds the lock); returns
    the instants archived. Nothing when the table keeps no metadata table."""
    gw = state.gw
    if not sync.maintains_files(state.config.props):
        return ()
    data_timeline = Timeline.load(gw, state.config)  # after the data table's archival
    chosen, _, _ = mda.select_metadata_instants(gw, data_timeline, opts)
    if not chosen:
        return ()
    named = mda.metadata_groups(gw, chosen)
    groups = [[(i, gw.read_bytes(path)) for i, path in g] for g in named]
    rows = sorted(
        (lsm_row(g) for g in groups if any(i.is_completed for i, _ in g)),
        key=lambda r: r["instantTime"],
    )
    gw.mkdirs(mda.HISTORY_DIR)
    fmt.write_lsm_file(gw, mda.HISTORY_DIR, rows)
    fmt.compact_lsm(gw, mda.HISTORY_DIR, int(opts.get(LSM_COMPACTION_BATCH)))
    # As for the data table: pending-state files first, then completed ones oldest first.
    flat = [p for g in named for p in g]
    for _, path in [p for p in flat if p[0].is_pending]:
        gw.delete_file(path)
    for _, path in sorted((p for p in flat if p[0].is_completed), key=lambda p: p[0].sort_key()):
        gw.delete_file(path)
    return _archived(groups)


def _delete_archived(state: TableState, groups: list[list[tuple[Instant, str]]]) -> list[str]:
    """Pending-state files first, then completed ones oldest first (Hudi's order)."""
    tdir = state.config.timeline_dir
    flat = [p for g in groups for p in g]
    pending = [join(tdir, n) for i, n in flat if i.is_pending]
    done = [join(tdir, n) for i, n in sorted(flat, key=lambda p: p[0].sort_key()) if i.is_completed]
    deleted = [p for p in pending + done if state.gw.delete_file(p)]
    for time in sorted({i.requested_time for i, _ in flat}):
        delete_markers(state.gw, time)  # Hudi's deleteAnyLeftOverMarkers
    return deleted


# ----------------------------------------------------------------------------- reading


def read_archived_entries(state: TableState) -> list[fmt.ArchivedInstant]:
    """Every record of the table's archived timeline, decoded: one per archived state on
    version 6 (legacy log files), one per completed instant on version 8 (LSM)."""
    gw, adir = state.gw, state.config.archive_dir
    if state.config.layout_version < 2:
        return [fmt.entry_to_instant(e) for e in fmt.read_archive_entries(gw, adir)]
    return [fmt.lsm_row_to_instant(r) for r in fmt.read_lsm_rows(gw, adir)]


def archived_timeline(state: TableState) -> list[fmt.ArchivedInstant]:
    """The archived instants, one per requested time and action in its most advanced
    state (a completed compaction as its ``commit``, carrying the plan), by requested time."""
    best: dict[tuple[str, str], fmt.ArchivedInstant] = {}
    plans: dict[tuple[str, str], Any] = {}
    for inst in read_archived_entries(state):
        key = (inst.requested_time, fmt.comparable_action(inst.action))
        if inst.plan is not None:
            plans.setdefault(key, inst.plan)
        cur = best.get(key)
        if cur is None or inst.state.value > cur.state.value:
            best[key] = inst
    out = []
    for key, inst in best.items():
        if inst.plan is None and key in plans:
            inst = fmt.ArchivedInstant(
                inst.requested_time,
                inst.action,
                inst.state,
                inst.completion_time,
                inst.metadata,
                plans[key],
            )
        out.append(inst)
    return sorted(out, key=lambda i: (i.requested_time, i.action))


def archived_commits(
    state: TableState, start: str | None = None, end: str | None = None
) -> list[tuple[fmt.ArchivedInstant, CommitMetadata]]:
    """Completed archived write actions requested in ``(start, end]`` (None = open) with
    their commit metadata, newest first (what ``show_archived_commits`` lists)."""
    out = []
    for inst in archived_timeline(state):
        if (
            not inst.is_completed
            or (start and inst.requested_time <= start)
            or (end and inst.requested_time > end)
        ):
            continue
        meta = inst.commit_metadata()
        if meta is not None:
            out.append((inst, meta))
    return sorted(out, key=lambda p: p[0].requested_time, reverse=True)


def archived_times(state: TableState) -> Iterable[str]:
    """Requested times of every archived instant."""
    return sorted({i.requested_time for i in read_archived_entries(state)})
