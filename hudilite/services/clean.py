"""The cleaner: delete file versions no reader needs any more, as Hudi's ``CleanPlanner`` does.

Policies (``hoodie.cleaner.policy``):

* ``KEEP_LATEST_COMMITS`` (default): with more than ``hoodie.cleaner.commits.retained``
  (10) completed commits, the earliest commit to retain is the N-th latest one (never
  later than the earliest pending write or plan). In every file group, slices whose base
  instant is older than it are deleted, except the latest slice and the newest slice
  older than it (a query started before that commit may still read it).
* ``KEEP_LATEST_BY_HOURS``: the same with the earliest commit to retain being the first
  one requested within the last ``hoodie.cleaner.hours.retained`` (24) hours.
* ``KEEP_LATEST_FILE_VERSIONS``: keep the newest ``hoodie.cleaner.fileversions.retained``
  (3) slices of every file group.

Always: file groups replaced by a completed replacecommit are deleted whole once that
replacecommit is older than the earliest commit to retain (any age for
``KEEP_LATEST_FILE_VERSIONS``); slices a pending compaction reads (base instant at or
after the plan's) are kept; slices holding a file any savepoint pins are kept; the
latest slice of a live file group is kept. A slice goes with its base file and all its
log files.

Timeline: ``T.clean.requested`` with an Avro ``HoodieCleanerPlan`` (version 2:
``earliestInstantToRetain``, ``lastCompletedCommitTimestamp``, ``policy``,
``filePathsToBeDeletedPerPartition`` with full paths, ``extraMetadata`` listing the
savepointed times), ``T.clean.inflight`` (the plan again, as Hudi 0.x writes it), then
``T.clean`` / ``T_C.clean`` with ``HoodieCleanMetadata`` (version 2; file names per
partition). ``earliestCommitToRetain`` there is what the read planner checks before a time
travel. Nothing to delete means no clean instant at all, as in Hudi.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import ConfigError, InstantNotFoundError, TimelineError
from hudilite.filegroup.slices import FileGroup, FileSlice, join_path
from hudilite.services._common import OptionsLike, pending_plan_groups, resolve_options
from hudilite.services.savepoint import list_savepoints
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    SAVEPOINT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import format_instant
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock

KEEP_LATEST_COMMITS = cfg.KEEP_LATEST_COMMITS
KEEP_LATEST_FILE_VERSIONS = cfg.KEEP_LATEST_FILE_VERSIONS
KEEP_LATEST_BY_HOURS = cfg.KEEP_LATEST_BY_HOURS
CLEAN_PLAN_VERSION = 2
CLEAN_METADATA_VERSION = 2
SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"  # Hudi's plan extraMetadata key

# The cleaner's options (declared in hudilite.config, the one registry).
CLEANER_POLICY = cfg.CLEANER_POLICY
CLEANER_COMMITS_RETAINED = cfg.CLEANER_COMMITS_RETAINED
CLEANER_FILE_VERSIONS_RETAINED = cfg.CLEANER_FILE_VERSIONS_RETAINED
CLEANER_HOURS_RETAINED = cfg.CLEANER_HOURS_RETAINED

#: Hudi's "commits and compaction timeline": what bounds the earliest commit to retain.
_COMMITS_AND_PLANS = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, CLUSTERING, LOG_COMPACTION}
)


@dataclass(frozen=True)
class CleanPlan:
    """What one clean deletes: table-relative paths per partition (sorted).

    ``earliest_instant_to_retain`` is the completed commit the policy keeps from (None for
    ``KEEP_LATEST_FILE_VERSIONS``); ``last_completed_commit`` the latest commit when
    planned; ``savepointed`` the savepoint times honoured.
    """

    policy: str
    earliest_instant_to_retain: Instant | None
    last_completed_commit: str
    files: Mapping[str, tuple[str, ...]]
    savepointed: tuple[str, ...] = ()

    @property
    def num_files(self) -> int:
        """Files to delete."""
        return sum(len(v) for v in self.files.values())

    @property
    def earliest_commit_to_retain(self) -> str:
        """The earliest retained commit time, ``""`` when the policy has none."""
        inst = self.earliest_instant_to_retain
        return inst.requested_time if inst is not None else ""

    def to_avro_bytes(self, gw: FileSystemGateway) -> bytes:
        """The ``HoodieCleanerPlan`` Avro container (file paths as full URIs, like Hudi)."""
        inst = self.earliest_instant_to_retain
        record: dict[str, Any] = {
            "earliestInstantToRetain": (
                {"timestamp": inst.requested_time, "action": inst.action, "state": "COMPLETED"}
                if inst is not None
                else None
            ),
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": CLEAN_PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                p: [{"filePath": gw.uri(rel), "isBootstrapBaseFile": False} for rel in rels]
                for p, rels in self.files.items()
            },
            "partitionsToBeDeleted": [],
            "extraMetadata": (
                {SAVEPOINTED_TIMESTAMPS: ",".join(self.savepointed)} if self.savepointed else None
            ),
        }
        return write_avro_record("HoodieCleanerPlan", record)

    @classmethod
    def from_bytes(cls, data: bytes) -> CleanPlan:
        """Decode a plan written by Hudi (v1 names or v2 paths) or hudilite."""
        record = read_avro_record(data)
        earliest = record.get("earliestInstantToRetain")
        files: dict[str, list[str]] = {}
        for p, infos in (record.get("filePathsToBeDeletedPerPartition") or {}).items():
            for info in infos or []:
                if info.get("filePath") and not info.get("isBootstrapBaseFile"):
                    files.setdefault(p, []).append(join_path(p, _name(info["filePath"])))
        for p, names in (record.get("filesToBeDeletedPerPartition") or {}).items():
            files.setdefault(p, []).extend(join_path(p, _name(n)) for n in names or [])
        extra = record.get("extraMetadata") or {}
        saved = tuple(t for t in (extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if t)
        return cls(
            policy=str(record.get("policy") or ""),
            earliest_instant_to_retain=(
                Instant(earliest["timestamp"], earliest.get("action") or COMMIT, State.COMPLETED)
                if earliest
                else None
            ),
            last_completed_commit=str(record.get("lastCompletedCommitTimestamp") or ""),
            files={p: tuple(sorted(set(v))) for p, v in sorted(files.items())},
            savepointed=saved,
        )


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class CleanResult:
    """Metrics of one completed clean; ``resumed`` lists earlier pending cleans finished
    first."""

    instant_time: str
    completion_time: str | None
    policy: str
    earliest_commit_to_retain: str
    files_deleted: tuple[str, ...]
    files_failed: tuple[str, ...]
    partitions: tuple[str, ...]
    duration_s: float
    resumed: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_files_deleted(self) -> int:
        """Files deleted."""
        return len(self.files_deleted)

    def __str__(self) -> str:
        return f"clean @ {self.instant_time} ({self.policy}): {self.num_files_deleted} file(s)"


# -------------------------------------------------------------------------------- planning


def earliest_commit_to_retain(
    timeline: Timeline,
    policy: str,
    commits_retained: int,
    hours_retained: int,
    now: datetime | None = None,
) -> Instant | None:
    """Hudi's ``CleanerUtils.getEarliestCommitToRetain`` on the active timeline."""
    completed = timeline.commits()
    if policy == KEEP_LATEST_COMMITS:
        if len(completed) <= commits_retained:
            return None
        nth = completed[len(completed) - commits_retained]
        pending = [i for i in timeline.pending() if i.action in _COMMITS_AND_PLANS]
        if pending and nth.requested_time > pending[0].requested_time:
            before = [c for c in completed if c.requested_time < pending[0].requested_time]
            return before[-1] if before else None
        return nth
    if policy == KEEP_LATEST_BY_HOURS:
        moment = (now or datetime.now(UTC)) - timedelta(hours=hours_retained)
        bound = format_instant(moment)
        return next((c for c in completed if c.requested_time >= bound), None)
    return None


def _replace_times(timeline: Timeline) -> dict[tuple[str, str], str]:
    """``(partition, file_id) -> requested time`` of the replacecommit that retired it."""
    out: dict[tuple[str, str], str] = {}
    for inst in timeline.commits():
        if inst.action == REPLACE_COMMIT:
            for key in timeline.commit_metadata(inst).replaced_file_groups():
                out.setdefault(key, inst.requested_time)
    return out


def _slice_files(s: FileSlice) -> list[str]:
    return s.paths


class _Rules:
    """Per-slice protections shared by the policies."""

    def __init__(
        self, pinned: frozenset[str], pending: Mapping[tuple[str, str], tuple[str, str | None]]
    ):
        self.pinned = pinned
        self.pending = pending

    def savepointed(self, s: FileSlice) -> bool:
        names = [log.file_name for log in s.log_files]
        if s.base_file is not None:
            names.append(s.base_file.file_name)
        return any(n in self.pinned for n in names)

    def needed_by_compaction(self, s: FileSlice) -> bool:
        entry = self.pending.get(s.group_key)
        if entry is None:
            return False
        base = entry[1]
        return base is None or s.base_instant >= base


def _clean_by_commits(group: FileGroup, earliest: str, rules: _Rules) -> list[str]:
    newest_first = list(reversed(group.slices))
    last_version = newest_first[0].base_instant
    before = next((s.base_instant for s in newest_first if s.base_instant < earliest), None)
    out: list[str] = []
    for s in newest_first:
        if rules.savepointed(s) or s.base_instant in (last_version, before):
            continue
        if not rules.needed_by_compaction(s) and s.base_instant < earliest:
            out += _slice_files(s)
    return out


def _clean_by_versions(group: FileGroup, keep: int, rules: _Rules) -> list[str]:
    candidates = [s for s in reversed(group.slices) if not rules.needed_by_compaction(s)]
    if group.group_key in rules.pending:
        keep -= 1  # the slice the compaction reads is already kept
    out: list[str] = []
    for s in candidates[max(keep, 0) :]:
        if not rules.savepointed(s):
            out += _slice_files(s)
    return out


def _trigger(
    state: TableState, opts: cfg.Options, now: datetime | None
) -> tuple[str, int, Instant | None]:
    """The policy, the file versions retained and the earliest commit to retain (from the
    timeline alone); ``ConfigError`` for retention settings Hudi rejects."""
    policy = str(opts.get(CLEANER_POLICY))
    commits_retained = int(opts.get(CLEANER_COMMITS_RETAINED))
    versions = int(opts.get(CLEANER_FILE_VERSIONS_RETAINED))
    hours = int(opts.get(CLEANER_HOURS_RETAINED))
    if commits_retained < 1 or versions < 1 or hours < 0:
        raise ConfigError(
            "hoodie.cleaner.commits.retained and hoodie.cleaner.fileversions.retained must be "
            "at least 1, hoodie.cleaner.hours.retained at least 0"
        )
    earliest = earliest_commit_to_retain(state.timeline, policy, commits_retained, hours, now)
    return policy, versions, earliest


def may_clean(
    state: TableState, options: OptionsLike = None, *, now: datetime | None = None
) -> bool:
    """Whether :func:`clean` on ``state`` could do anything, decided from the timeline alone
    (no file listing, no lock): False when no clean is pending and either the commit-based
    policies have no earliest commit to retain yet (fewer completed commits than
    ``hoodie.cleaner.commits.retained``, or none old enough), which is where
    :func:`plan_clean` stops too, or fewer commits than ``hoodie.clean.max.commits`` (when
    set above its default of 1) completed since the last clean (Hudi's trigger), or an
    earlier plan of this process found nothing to delete and nothing since can have made
    a file deletable (:func:`_nothing_since`). The inline clean after a write asks this
    first, so most writes skip the cleaner's lock, re-load and listing."""
    if pending_cleans(state):
        return True
    opts = resolve_options(state, options)
    policy, _, earliest = _trigger(state, opts, now)
    if policy != KEEP_LATEST_FILE_VERSIONS and earliest is None:
        return False
    max_commits = int(opts.get(cfg.CLEAN_MAX_COMMITS))
    if max_commits > 1 and commits_since_last_clean(state) < max_commits:
        # Hudi's NUM_COMMITS trigger. (At the default of 1 it is left out: a write just
        # committed, and a commit requested before the last clean's latest one but
        # completed after it keeps being cleaned at once, as hudilite always did.)
        return False
    return not _nothing_since(state, _settings(opts), earliest)


def commits_since_last_clean(state: TableState) -> int:
    """Hudi's ``getCommitsSinceLastCleaning``: completed commits after the last completed
    clean's ``lastCompletedCommitTimestamp`` (all of them when there was no clean)."""
    commits = state.timeline.commits()
    cleans = [i for i in state.timeline.filter(actions=CLEAN) if i.is_completed]
    if not cleans:
        return len(commits)
    meta = read_avro_record(state.timeline.instant_content(cleans[-1]))
    last = str(meta.get("lastCompletedCommitTimestamp") or "")
    return sum(1 for c in commits if c.requested_time > last)


# ------------------------------------------------------------- "nothing to clean" memo
#
# A plan that finds nothing to delete is remembered (per table, in this process) with the
# timeline it saw. A later timeline whose changes since are only (a) pending writes and
# plans, and (b) completed commits / deltacommits that only created new file groups, with
# (c) every commit the earliest retained instant moved past also one that only created
# file groups, (d) savepoints, replacecommits, rollbacks, restores and cleans unchanged, and
# (e) the same policy and retention settings, cannot have anything to delete either:
#
# * a file group no new commit wrote has the slices it had. A slice of it older than the
#   old earliest retained instant survived the last plan as the latest slice (still the
#   latest) or the newest one before that instant (it stays kept unless a newer slice
#   older than the new earliest instant exists: one written by a commit the earliest
#   instant moved past, which would have updated an existing group: excluded by (c)). A
#   slice at or after the old earliest instant and before the new one was written by such
#   a commit, so it is its group's first slice, and any later slice older than the new
#   instant would be another such commit's update (excluded by (c)): it is the newest
#   slice before the new instant, kept;
# * a file group a new commit created has one slice, the latest, kept;
# * savepoints and pending compactions only protect more; replaced groups are unchanged;
#   ``KEEP_LATEST_FILE_VERSIONS`` keeps as many versions of unchanged groups as before.
#
# When the check passes the memo moves to the new timeline; otherwise the cleaner plans
# (and a plan that finds nothing remembers again). Explicit cleans always plan.


@dataclass(frozen=True)
class _NothingToClean:
    """A plan found nothing to delete on ``files`` (the timeline's instant files), with
    earliest retained instant ``earliest`` (None for KEEP_LATEST_FILE_VERSIONS)."""

    files: frozenset[Instant]
    earliest: str | None
    settings: tuple[str, int, int, int]


_NOTHING: OrderedDict[str, _NothingToClean] = OrderedDict()
_NOTHING_LOCK = threading.Lock()
_NOTHING_MAX = 256  # tables remembered


def _settings(opts: cfg.Options) -> tuple[str, int, int, int]:
    """The options a plan depends on besides the timeline and the files."""
    return (
        str(opts.get(CLEANER_POLICY)),
        int(opts.get(CLEANER_COMMITS_RETAINED)),
        int(opts.get(CLEANER_FILE_VERSIONS_RETAINED)),
        int(opts.get(CLEANER_HOURS_RETAINED)),
    )


def _remember(state: TableState, settings: tuple[str, int, int, int], earliest: str | None) -> None:
    memo = _NothingToClean(state.timeline.file_instants(), earliest, settings)
    with _NOTHING_LOCK:
        _NOTHING[state.gw.uri()] = memo
        _NOTHING.move_to_end(state.gw.uri())
        while len(_NOTHING) > _NOTHING_MAX:
            _NOTHING.popitem(last=False)


def forget_nothing_to_clean() -> None:
    """Drop every remembered "nothing to clean" plan (the next inline clean plans)."""
    with _NOTHING_LOCK:
        _NOTHING.clear()


#: Pending instants whose files no snapshot shows (a write or a plan in progress).
_PENDING_OK = _COMMITS_AND_PLANS
#: Completed actions whose new file groups alone cannot make a file deletable.
_CREATING = frozenset({COMMIT, DELTA_COMMIT})


def _only_creates(timeline: Timeline, requested_time: str) -> bool:
    """Whether the completed instant ``requested_time`` is a commit or deltacommit whose
    every write created its file group (no update, log append, compaction or replace)."""
    inst = timeline.get(requested_time)
    if inst is None or not inst.is_completed or inst.action not in _CREATING:
        return False
    meta = timeline.commit_metadata(inst)
    if meta.is_replace or meta.compacted:
        return False
    return all(s.is_new_file_group and not s.is_delta for s in meta.write_stats())


def _nothing_since(
    state: TableState, settings: tuple[str, int, int, int], earliest: Instant | None
) -> bool:
    """Whether a plan on ``state`` provably deletes nothing, from a remembered plan that
    found nothing (see the comment above); moves the memo to ``state`` when so."""
    key = state.gw.uri()
    with _NOTHING_LOCK:
        memo = _NOTHING.get(key)
    if memo is None or memo.settings != settings:
        return False
    timeline = state.timeline
    files = timeline.file_instants()
    old = memo.earliest
    new = earliest.requested_time if earliest is not None else None
    by_commits = settings[0] != KEEP_LATEST_FILE_VERSIONS
    if by_commits and (old is None or new is None or new < old):
        return False
    for inst in memo.files - files:
        # Gone: a state file replaced by a later one of the same instant, or (the commit
        # policies) an instant older than the earliest retained one archived; never a
        # savepoint.
        if inst.action == SAVEPOINT:
            return False
        if inst.requested_time in timeline:
            continue
        if not by_commits or old is None or inst.requested_time >= old:
            return False
    check: set[str] = set()
    for inst in files - memo.files:
        if not inst.is_completed and inst.action in _PENDING_OK:
            continue
        if inst.is_completed and inst.action in _CREATING:
            check.add(inst.requested_time)
            continue
        return False  # a clean, rollback, restore, savepoint, replacecommit, ...
    if by_commits and old is not None and new is not None:
        # The commits the earliest retained instant moved past (none of them gone: above).
        check.update(c.requested_time for c in timeline.commits() if old <= c.requested_time < new)
    if not all(_only_creates(timeline, t) for t in sorted(check)):
        return False
    with _NOTHING_LOCK:
        if _NOTHING.get(key) is memo:
            _NOTHING[key] = _NothingToClean(files, new, settings)
    return True


def plan_clean(
    state: TableState, options: OptionsLike = None, *, now: datetime | None = None
) -> CleanPlan | None:
    """What a clean run now would delete (no timeline change); None when nothing.

    ``now`` replaces the wall clock of ``KEEP_LATEST_BY_HOURS``.
    """
    opts = resolve_options(state, options)
    policy, versions, earliest = _trigger(state, opts, now)
    if policy != KEEP_LATEST_FILE_VERSIONS and earliest is None:
        return None
    plan = _plan(state, policy, versions, earliest)
    if plan is None:
        _remember(state, _settings(opts), earliest.requested_time if earliest else None)
    return plan


def _plan(
    state: TableState, policy: str, versions: int, earliest: Instant | None
) -> CleanPlan | None:
    timeline = state.timeline
    savepoints = list_savepoints(state)
    pinned: frozenset[str] = frozenset().union(*(sp.file_names for sp in savepoints))
    rules = _Rules(pinned, pending_plan_groups(timeline, (COMPACTION, LOG_COMPACTION)))
    replaced = _replace_times(timeline)
    files: dict[str, list[str]] = {}
    for group in state.view.file_groups(include_replaced=True):
        if not group.slices:
            continue
        retired_at = replaced.get(group.group_key)
        if retired_at is not None:
            if earliest is None or retired_at < earliest.requested_time:
                doomed = [
                    f for s in group.slices if not rules.savepointed(s) for f in _slice_files(s)
                ]
            else:
                doomed = []
        elif policy == KEEP_LATEST_FILE_VERSIONS:
            doomed = _clean_by_versions(group, versions, rules)
        else:
            assert earliest is not None
            doomed = _clean_by_commits(group, earliest.requested_time, rules)
        if doomed:
            files.setdefault(group.partition, []).extend(doomed)
    if not files:
        return None
    last = timeline.last_commit()
    return CleanPlan(
        policy=policy,
        earliest_instant_to_retain=earliest,
        last_completed_commit=last.requested_time if last is not None else "",
        files={p: tuple(sorted(set(v))) for p, v in sorted(files.items())},
        savepointed=tuple(sp.instant_time for sp in savepoints),
    )


def schedule_clean(
    state: TableState, options: OptionsLike = None, *, now: datetime | None = None
) -> tuple[Instant, CleanPlan] | None:
    """Plan a clean and write ``T.clean.requested``; None when there is nothing to delete."""
    with table_lock(state.gw):
        state = TableState.load(state.gw)
        plan = plan_clean(state, options, now=now)
        if plan is None:
            return None
        writer = TimelineWriter(state.gw, state.config)
        inst = writer.create_requested(CLEAN, None, plan.to_avro_bytes(state.gw))
    return inst, plan


# ------------------------------------------------------------------------------- execution


def execute_clean(state: TableState, instant_time: str) -> CleanResult:
    """Run the pending clean ``instant_time`` from its plan and complete it.

    Deleting is idempotent: a file already gone (an earlier attempt got to it) counts as
    deleted; a file that cannot be deleted is reported in ``failedDeleteFiles``.
    """
    started = time.monotonic()
    gw, config = state.gw, state.config
    timeline = Timeline.load(gw, config)
    inst = timeline.get(instant_time)
    if inst is None or inst.action != CLEAN:
        raise InstantNotFoundError(f"no clean {instant_time} on the timeline")
    if inst.is_completed:
        raise TimelineError(f"clean {instant_time} is already completed")
    data = timeline.instant_content(Instant(instant_time, CLEAN, State.REQUESTED))
    plan = CleanPlan.from_bytes(data)
    writer = TimelineWriter(gw, config)
    if inst.is_requested:
        inst = writer.transition_inflight(inst, data)
    failpoints.check(None, "clean_after_plan")
    deleted: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for partition, rels in plan.files.items():
        for rel in rels:
            try:
                gw.delete_file(rel)
                deleted.setdefault(partition, []).append(rel)
            except OSError:
                failed.setdefault(partition, []).append(rel)
            failpoints.check(None, "clean_mid_delete")
    meta = {
        "startCleanTime": instant_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "earliestCommitToRetain": plan.earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": plan.last_completed_commit,
        "partitionMetadata": {
            p: {
                "partitionPath": p,
                "policy": plan.policy,
                "deletePathPatterns": [_name(r) for r in rels],
                "successDeleteFiles": [_name(r) for r in deleted.get(p, [])],
                "failedDeleteFiles": [_name(r) for r in failed.get(p, [])],
                "isPartitionDeleted": False,
            }
            for p, rels in plan.files.items()
        },
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
        "extraMetadata": (
            {SAVEPOINTED_TIMESTAMPS: ",".join(plan.savepointed)} if plan.savepointed else None
        ),
    }
    failpoints.check(None, "clean_before_complete")
    done = writer.complete(inst, write_avro_record("HoodieCleanMetadata", meta))
    return CleanResult(
        instant_time=instant_time,
        completion_time=done.completion_time,
        policy=plan.policy,
        earliest_commit_to_retain=plan.earliest_commit_to_retain,
        files_deleted=tuple(r for v in deleted.values() for r in v),
        files_failed=tuple(r for v in failed.values() for r in v),
        partitions=tuple(plan.files),
        duration_s=time.monotonic() - started,
        metadata=meta,
    )


def pending_cleans(state: TableState) -> list[str]:
    """Requested times of cleans planned but not completed, oldest first."""
    return [i.requested_time for i in state.timeline.filter(actions=CLEAN) if i.is_pending]


def clean(
    state: TableState, options: OptionsLike = None, *, now: datetime | None = None
) -> CleanResult | None:
    """Finish pending cleans (as Hudi does before planning), then plan and run a new one.

    Returns the result of the last clean completed (its ``resumed`` names the pending
    cleans finished before it), or None when there was nothing to do.
    """
    results = [execute_clean(state, t) for t in pending_cleans(state)]
    scheduled = schedule_clean(state, options, now=now)
    if scheduled is not None:
        # execute_clean lists the timeline itself: only the table's location and config
        # are taken from ``state``.
        results.append(execute_clean(state, scheduled[0].requested_time))
    if not results:
        return None
    return replace(results[-1], resumed=tuple(r.instant_time for r in results[:-1]))
