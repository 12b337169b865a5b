"""``show_file_slice_history``: what every write, clean and rollback did to the files whose
name holds a given text (a file name, a file group id, or part of one).

Parameters and the 25 output columns are those of Hudi's ``ShowFileSliceHistoryProcedure``
with the ``FILE_SLICE`` branch of ``ShowFileHistoryProcedureUtils`` (apache/hudi
``ec551cd1``): ``table``, ``file_name`` (required), ``partition``, ``show_archived``
(false; the ``showArchived`` spelling of the earlier revision ``25498d31`` is accepted too),
``limit`` (20), ``filter`` (a Spark SQL predicate over the output columns, applied after
``limit`` as in Hudi); as in the other procedures ``path`` may name the table instead.
Unlike ``show_file_group_history`` its rows carry ``file_group_id`` and no ``was_replaced``
columns.

Rows, newest requested time first (ties keep the order below), at most ``limit``:

* every write-stat of a commit, deltacommit, replacecommit or clustering instant (Hudi's
  commits timeline: pending compactions are not on it) whose path or file id *contains*
  ``file_name`` (and whose partition is ``partition``, when given); counted per instant up
  to ``limit`` instants, as Hudi's ``processTimeline``. ``operation_type`` is ``INSERT``,
  ``UPDATE``, ``UPSERT``, ``DELETE`` or ``UNKNOWN`` from the stat's counts;
* one row per *pending* instant of those actions, whatever ``file_name`` is (Hudi cannot
  know a pending instant's files): empty ``file_group_id``, ``file_name`` = the text asked,
  ``-1`` counts;
* one row per completed clean and per completed rollback that deleted a file whose name
  contains ``file_name`` (in ``partition``, when given): ``operation_type`` is the action,
  ``num_deletes`` the instant's total files deleted, ``prev_commit`` its own time,
  ``partition_path`` ``partition`` or ``ALL_PARTITIONS``; and one row per pending clean or
  rollback, as for pending writes. Cleans and rollbacks are counted up to ``limit`` each.

``was_deleted`` is set on the rows whose ``file_name`` equals the asked text exactly (Hudi
keys its deletions by the asked text): true when any completed clean or rollback deleted a
matching file -- the latest rollback if any did, else the latest clean (Hudi's map takes the
cleans, then the rollbacks, the archived timeline's after the active one's).
``column_stats_available`` is false: column stats are not part of the commit metadata Hudi
reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudilite.services.archive import archived_timeline
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
)
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record

from .cleaning import filtered
from .commits import transition_time
from .file_history import operation_type
from .registry import Output, Param, ProcedureArgumentError, ProcedureContext, procedure

#: Hudi's ``getCommitsTimeline``: the actions whose instants the history lists.
_COMMITS_TIMELINE = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING})
#: ``partition_path`` of a clean or rollback row when no partition is asked for.
ALL_PARTITIONS = "ALL_PARTITIONS"

_OUTPUTS = [
    Output("instant_time"),
    Output("completion_time"),
    Output("action"),
    Output("timeline_type"),
    Output("state"),
    Output("partition_path"),
    Output("file_group_id"),
    Output("file_name"),
    Output("operation_type"),
    Output("num_writes", "bigint"),
    Output("num_inserts", "bigint"),
    Output("num_updates", "bigint"),
    Output("num_deletes", "bigint"),
    Output("file_size_bytes", "bigint"),
    Output("total_write_bytes", "bigint"),
    Output("prev_commit"),
    Output("was_deleted", "boolean"),
    Output("delete_action"),
    Output("delete_instant"),
    Output("total_write_errors", "bigint"),
    Output("total_scan_time_ms", "bigint"),
    Output("total_upsert_time_ms", "bigint"),
    Output("total_create_time_ms", "bigint"),
    Output("prev_base_file"),
    Output("column_stats_available", "boolean"),
]


@dataclass(frozen=True)
class _Instant:
    """One instant of either timeline, as the history reads it."""

    time: str
    completion: str | None
    action: str
    timeline: str  # ACTIVE | ARCHIVED
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    commit: CommitMetadata | None = None  # completed writes
    content: Mapping[str, Any] | None = None  # completed cleans and rollbacks


def _instants(state: TableState, show_archived: bool) -> tuple[list[_Instant], list[_Instant]]:
    """The active (then, with ``show_archived``, archived) instants of the commits timeline
    and of the clean and rollback timelines, each in timeline order."""
    active: list[_Instant] = []
    for inst in state.timeline.instants:
        if inst.action not in _COMMITS_TIMELINE and inst.action not in (CLEAN, ROLLBACK):
            continue
        done = inst.is_completed
        commit = content = None
        if done and inst.action in _COMMITS_TIMELINE:
            commit = state.timeline.commit_metadata(inst)
        elif done:
            content = read_avro_record(state.timeline.instant_content(inst))
        active.append(
            _Instant(
                inst.requested_time,
                transition_time(state, inst) if done else None,
                inst.action,
                "ACTIVE",
                inst.state.name,
                commit,
                content,
            )
        )
    archived: list[_Instant] = []
    if show_archived:
        seen = {(i.time, i.action) for i in active}
        for a in archived_timeline(state):
            if (a.requested_time, a.action) in seen or not a.is_completed:
                continue  # an interrupted archival leaves both copies: the active one wins
            if a.action in _COMMITS_TIMELINE:
                meta = a.commit_metadata()
                archived.append(
                    _Instant(
                        a.requested_time, a.completion_time, a.action, "ARCHIVED", "COMPLETED", meta
                    )
                )
            elif a.action in (CLEAN, ROLLBACK):
                archived.append(
                    _Instant(
                        a.requested_time,
                        a.completion_time,
                        a.action,
                        "ARCHIVED",
                        "COMPLETED",
                        content=dict(a.metadata or {}),
                    )
                )
    return active, archived


def _stat_matches(stat: WriteStat, partition_path: str, target: str, partition: str | None) -> bool:
    """Hudi's ``matchesFileName``: the partition, then the text in the path or file id."""
    if partition is not None and partition != partition_path:
        return False
    return target in (stat.path or "") or target in (stat.file_id or "")


def _deleted_matches(content: Mapping[str, Any], target: str, partition: str | None) -> bool:
    """Whether a clean's or rollback's successfully deleted files include a name holding
    ``target`` (in ``partition``, when given)."""
    pm = content.get("partitionMetadata") or {}
    for p in [partition] if partition is not None else list(pm):
        for f in (pm.get(p) or {}).get("successDeleteFiles") or []:
            if target in str(f).rsplit("/", 1)[-1]:
                return True
    return False


def _pending_row(i: _Instant, target: str, partition: str | None) -> tuple[Any, ...]:
    return (
        i.time,
        i.completion,
        i.action,
        i.timeline,
        i.state,
        partition or "",
        "",
        target,
        "UNKNOWN",
        *(-1,) * 6,
        "",
        *(-1,) * 4,
        None,
        False,
    )


def _stat_row(i: _Instant, partition_path: str, stat: WriteStat) -> tuple[Any, ...]:
    rt = stat.runtime_stats or {}
    return (
        i.time,
        i.completion,
        i.action,
        i.timeline,
        i.state,
        partition_path,
        stat.file_id,
        str(stat.path or "").rsplit("/", 1)[-1],
        operation_type(stat),
        stat.num_writes,
        stat.num_inserts,
        stat.num_update_writes,
        stat.num_deletes,
        stat.file_size_in_bytes,
        stat.total_write_bytes,
        stat.prev_commit,
        stat.total_write_errors,
        rt.get("totalScanTime", 0),
        rt.get("totalUpsertTime", 0),
        rt.get("totalCreateTime", 0),
        stat.prev_base_file,
        False,
    )


def _delete_row(i: _Instant, target: str, partition: str | None) -> tuple[Any, ...]:
    total = int((i.content or {}).get("totalFilesDeleted") or 0)
    return (
        i.time,
        i.completion,
        i.action,
        i.timeline,
        i.state,
        partition if partition is not None else ALL_PARTITIONS,
        "",
        target,
        i.action,
        0,
        0,
        0,
        total,
        0,
        0,
        i.time,
        0,
        0,
        0,
        0,
        None,
        False,
    )


def _history(
    instants: list[_Instant], target: str, partition: str | None, limit: int
) -> list[tuple[Any, ...]]:
    """One timeline's entries (still without the deletion columns): Hudi's
    ``processTimeline`` then ``processCleanAndRollbackOperations``."""
    out: list[tuple[Any, ...]] = []
    found = 0
    writes = [i for i in instants if i.action in _COMMITS_TIMELINE]
    for i in sorted(writes, key=lambda i: i.time, reverse=True):
        if found >= limit:
            break
        before = len(out)
        if i.state != "COMPLETED":
            out.append(_pending_row(i, target, partition))
        elif i.commit is not None:
            stats = i.commit.partition_to_write_stats
            for p in [partition] if partition is not None else list(stats):
                for stat in stats.get(p) or []:
                    if _stat_matches(stat, p, target, partition):
                        out.append(_stat_row(i, p, stat))
        found += len(out) > before
    for action in (CLEAN, ROLLBACK):
        found = 0
        of_action = [i for i in instants if i.action == action]
        for i in sorted(of_action, key=lambda i: i.time, reverse=True):
            if found >= limit:
                break
            if i.state != "COMPLETED":
                out.append(_pending_row(i, target, partition))
                found += 1
            elif _deleted_matches(i.content or {}, target, partition):
                out.append(_delete_row(i, target, partition))
                found += 1
    return out


def _deletion(
    timelines: list[list[_Instant]], target: str, partition: str | None
) -> tuple[str, str] | None:
    """Hudi's ``checkForDeletions``: per timeline, the cleans then the rollbacks in timeline
    order; the last completed one that deleted a matching file wins."""
    found: tuple[str, str] | None = None
    for instants in timelines:
        for action in (CLEAN, ROLLBACK):
            for i in instants:
                if i.action != action or i.state != "COMPLETED":
                    continue
                if _deleted_matches(i.content or {}, target, partition):
                    found = (action, i.time)
    return found


@procedure(
    "show_file_slice_history",
    [
        Param("table", "string"),
        Param("file_name", "string", required=True),
        Param("partition", "string"),
        Param("show_archived", "boolean", default=False),
        Param("limit", "integer", default=20),
        Param("filter", "string", default=""),
        Param("path", "string"),
        Param("showArchived", "boolean", default=False),
    ],
    _OUTPUTS,
    "Shows the history of the files whose name contains file_name: the writes, cleans and "
    "rollbacks that touched them, newest first, and whether they were deleted.",
    read_only=True,
)
def show_file_slice_history(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """Newest first, at most ``limit`` rows, then kept by ``filter``: each write-stat
    whose path or file id contains ``file_name``, each completed clean or rollback that
    deleted such a file (``operation_type`` its action, ``num_deletes`` its total), one
    row per pending write, clean or rollback; ``was_deleted`` on the rows whose
    ``file_name`` is exactly the text asked (Hudi's rule)."""
    state = ctx.table(args).state()
    target = str(args["file_name"]).strip()
    if not target:
        raise ProcedureArgumentError(f"{ctx.procedure}: file_name names no file")
    limit = args["limit"]
    if limit <= 0:
        raise ProcedureArgumentError(f"{ctx.procedure}: limit must be positive, got {limit}")
    partition = str(args["partition"]).strip().strip("/") if args["partition"] else None
    show_archived = bool(args["show_archived"] or args["showArchived"])
    active, archived = _instants(state, show_archived)
    entries = _history(active, target, partition, limit) + _history(
        archived, target, partition, limit
    )
    entries = sorted(entries, key=lambda r: r[0], reverse=True)[:limit]  # stable, as Scala's
    deletion = _deletion([active, archived], target, partition)
    rows = []
    for e in entries:
        hit = deletion if e[7] == target else None
        rows.append(
            (
                *e[:16],
                hit is not None,
                hit[0] if hit else None,
                hit[1] if hit else None,
                *e[16:],
            )
        )
    return filtered(ctx, rows, None, args["filter"])
