"""Archival with a metadata table: the data timeline's bound and the metadata table's own
archive, as Hudi 1.x's ``TimelineArchiverV2`` does them.

**The data table** (rule 4 of ``getCommitInstantsToArchive``): when the table lists the
``files`` partition (hudilite keeps its metadata table), nothing is archived before the
metadata table's first compaction ("no compaction yet on the metadata table"), and after it
the data timeline keeps every completed commit from the first one (by requested time) that
completed after the latest compaction was requested (``findInstantsModifiedAfterByCompletion
Time``): the deltacommits of those instants are the logs of the metadata table's current file
slice, and its readers check each log's data instant on the data timeline
(:func:`data_table_bound`).

**The metadata table** keeps its own timeline (``.hoodie/metadata/.hoodie/timeline``) and
archives it into its own LSM history (``.hoodie/metadata/.hoodie/timeline/history``), right
after the data table's archival and under the same lock (Hudi's metadata writer archives as
one of its table services). :func:`select_metadata_instants` chooses as Hudi does for a
metadata table, whose write config keeps ``hoodie.keep.min.commits`` + 1 and
``hoodie.keep.max.commits`` + 1 commits (``HoodieMetadataWriteUtils``): nothing happens until
more than that maximum of completed deltacommits and compaction commits are active; then
the oldest go, down to the minimum, but never one at or after

1. the completed commit before the earliest pending write or compaction of the metadata
   table (no holes);
2. the compaction trigger's bound (``hoodie.metadata.compact.max.delta.commits``: the latest
   compaction while fewer deltacommits followed it, ``getEarliestInstantToRetainForCompaction``);
3. the data table's earliest commit or earliest pending instant, whichever is earlier
   (``getEarliestInstantForMetadataArchival``): a rollback of a data instant removes its
   deltacommit, which must still be on the metadata timeline;
4. hudilite's own rule: the earliest instant that wrote a file still in a metadata partition.
   The metadata table's readers (hudilite's :func:`~hudilite.metadata.table.current_slice`,
   its clean's :func:`~hudilite.metadata.clean.stale_files`) know a base file or log only
   by its instant on the active metadata timeline; so only instants whose files the clean
   already deleted leave it, the initialization instants included (they stay while the
   initialization's base file does).

Completed cleans and rollbacks of the metadata table older than the newest commit archived go
with them. The archive itself is written by :func:`hudilite.services.archive.archive`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hudilite import config as cfg
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.archive_formats import comparable_action
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
)
from hudilite.timeline.timeline import Timeline

#: The metadata table's archived timeline (Hudi's layout: ``hoodie.timeline.history.path``
#: under its timeline folder).
HISTORY_DIR = f"{mt.TIMELINE_DIR}/history"
#: Write and compaction actions of the metadata timeline (pending ones block archival).
_WRITES = frozenset({DELTA_COMMIT, COMMIT, COMPACTION, LOG_COMPACTION})
#: The data timeline's commits timeline (``getCommitsTimeline``), any state.
_DATA_COMMITS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING})


def data_table_bound(
    gw: FileSystemGateway, props: Mapping[str, str], commits: Sequence[Instant]
) -> tuple[bool, str | None]:
    """``(may archive, earliest instant to retain)`` for the data table whose
    ``hoodie.properties`` are ``props`` and completed ``commits`` (by requested time): see the
    module docstring. ``(True, None)`` when the table keeps no metadata table."""
    if not sync.maintains_files(props) or not gw.exists(mt.PROPERTIES):
        return True, None
    last = mt.load_timeline(gw).last_compaction
    if last is None:
        return False, None
    after = [
        c
        for c in commits
        if c.requested_time != last and (c.completion_time or c.requested_time) > last
    ]
    return True, (after[0].requested_time if after else None)


def metadata_timeline_files(gw: FileSystemGateway) -> list[tuple[Instant, str]]:
    """Every instant file of the metadata timeline with its name, in timeline order."""
    out = []
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = None if entry.is_dir else Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None:
            out.append((inst, entry.name))
    return sorted(out, key=lambda p: p[0].sort_key())


def live_file_instants(gw: FileSystemGateway) -> set[str]:
    """Instants that wrote a base file or log file still in a metadata partition."""
    out: set[str] = set()
    for part in gw.list_dir(mt.METADATA_DIR):
        if not part.is_dir or part.name.startswith("."):
            continue
        for entry in gw.list_dir(part.path):
            parsed = parse_data_file_name(entry.name)
            if isinstance(parsed, BaseFileName):
                out.add(parsed.instant_time)
            elif isinstance(parsed, LogFileName):
                out.add(parsed.base_instant)
    return out


def _pending_bound(instants: Sequence[Instant], commits: Sequence[Instant]) -> str | None:
    done = {(i.requested_time, comparable_action(i.action)) for i in instants if i.is_completed}
    pending = sorted(
        i.requested_time
        for i in instants
        if i.action in _WRITES
        and not i.is_completed
        and (i.requested_time, comparable_action(i.action)) not in done
    )
    if not pending:
        return None
    before = [c.requested_time for c in commits if c.requested_time < pending[0]]
    return before[-1] if before else pending[0]


def _compaction_bound(
    instants: Sequence[Instant], commits: Sequence[Instant], max_deltas: int
) -> str | None:
    compactions = [c.requested_time for c in commits if c.action == COMMIT]
    deltas = sorted({i.requested_time for i in instants if i.action == DELTA_COMMIT})
    if compactions:
        ref = compactions[-1]
        since = [d for d in deltas if d > ref]
    elif deltas:
        ref, since = deltas[0], deltas
    else:
        return None
    return ref if len(since) < max_deltas else since[len(since) - max_deltas]


def _data_bound(data_timeline: Timeline) -> str | None:
    commit = [i.requested_time for i in data_timeline.instants if i.action in _DATA_COMMITS]
    pending = [i.requested_time for i in data_timeline.pending()]
    return min([*commit[:1], *pending], default=None)


def select_metadata_instants(
    gw: FileSystemGateway, data_timeline: Timeline, opts: cfg.Options
) -> tuple[list[Instant], int, int]:
    """The metadata table's completed instants to archive now (see the module docstring),
    sorted by requested time, with the (min, max) commits it keeps."""
    lo = int(opts.get(cfg.KEEP_MIN_COMMITS)) + 1
    hi = int(opts.get(cfg.KEEP_MAX_COMMITS)) + 1
    if not gw.exists(mt.PROPERTIES):
        return [], lo, hi
    instants = [i for i, _ in metadata_timeline_files(gw)]
    completed = [i for i in instants if i.is_completed]
    commits = sorted(
        (i for i in completed if i.action in (DELTA_COMMIT, COMMIT)),
        key=lambda i: i.requested_time,
    )
    if len(commits) <= hi:
        return [], lo, hi
    max_deltas = int(opts.get(cfg.METADATA_COMPACT_MAX_DELTA_COMMITS))
    bounds = [
        _pending_bound(instants, commits),
        _compaction_bound(instants, commits, max_deltas),
        _data_bound(data_timeline),
        min(live_file_instants(gw), default=None),
    ]
    limit = min((b for b in bounds if b is not None), default=None)
    eligible = [c for c in commits if limit is None or c.requested_time < limit]
    chosen = eligible[: len(commits) - lo]
    newest = chosen[-1].requested_time if chosen else ""
    chosen += [i for i in completed if i.action in (CLEAN, ROLLBACK) and i.requested_time < newest]
    return sorted(chosen, key=lambda i: i.sort_key()), lo, hi


def metadata_groups(
    gw: FileSystemGateway, chosen: Sequence[Instant]
) -> list[list[tuple[Instant, str]]]:
    """The timeline files of each chosen instant, every state (a compaction's plan with its
    commit), as ``(instant, table-relative path)`` in timeline order."""
    keys = {(i.requested_time, comparable_action(i.action)) for i in chosen}
    by_key: dict[tuple[str, str], list[tuple[Instant, str]]] = {}
    for inst, name in metadata_timeline_files(gw):
        key = (inst.requested_time, comparable_action(inst.action))
        if key in keys:
            by_key.setdefault(key, []).append((inst, join(mt.TIMELINE_DIR, name)))
    return [by_key[k] for k in sorted(by_key)]
