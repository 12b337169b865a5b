"""``show_file_group_history``: what every write did to one file group, and whether each
file it wrote was later deleted or replaced.

Hudi's procedure has changed between releases; parameters and the 27 output columns here
are those of ``ShowFileGroupHistoryProcedure`` with ``ShowFileHistoryProcedureUtils`` as
PR #13745 added them (apache/hudi commit ``1dcb6e69``): ``table``, ``file_group_id``,
``partition``, ``showArchived`` (false), ``limit`` (20), ``filter`` (a Spark SQL predicate
over the output columns, applied after ``limit`` as in Hudi); as in the other procedures
``path`` may name the table instead, and ``show_archived`` is accepted as post-1.0
spelling. Later Hudi versions add ``delete_status`` and date-range parameters.

Rows, newest requested time first, at most ``limit``:

* every write-stat of the file group in a completed write instant (commit, deltacommit,
  replacecommit; ``partition`` restricts the partitions looked at) -- its counts, sizes,
  ``prev_commit``, ``prev_base_file`` and runtime times (0 without runtime stats);
  ``operation_type`` is ``INSERT`` (inserts only), ``UPDATE``, ``UPSERT`` (both),
  ``DELETE`` (deletes only) or ``UNKNOWN``;
* one row per *pending* write instant, whatever file group is asked (as in Hudi: a pending
  instant's files are not known yet), with empty names and ``-1`` counts.

``was_deleted``: a completed clean or rollback lists the file among its deleted files
(the file group id is the deleted name's part before the first ``_``; a log file, whose
name starts with a dot, never matches, as in Hudi). ``was_replaced``: a completed
replacecommit (clustering, insert overwrite) replaced the file group -- ``clustering`` --
or a completed compaction's write-stat names the file as its previous base file --
``compaction``. Archived instants count with ``showArchived``. ``column_stats_available``
is always false: column stats are not part of the commit metadata Hudi reads back.
"""

from __future__ import annotations

from typing import Any

from hudilite.config.vocab import OP_INSERT, OP_UPSERT, OPERATION_TYPES
from hudilite.services.archive import archived_timeline
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLEAN, REPLACE_COMMIT, ROLLBACK
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record

from .cleaning import filtered
from .commits import transition_time
from .registry import Output, Param, ProcedureArgumentError, ProcedureContext, procedure

_OUTPUTS = [
    Output("instant_time"),
    Output("completion_time"),
    Output("action"),
    Output("timeline_type"),
    Output("state"),
    Output("partition_path"),
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
    Output("was_replaced", "boolean"),
    Output("replace_action"),
    Output("replace_instant"),
    Output("total_write_errors", "bigint"),
    Output("total_scan_time_ms", "bigint"),
    Output("total_upsert_time_ms", "bigint"),
    Output("total_create_time_ms", "bigint"),
    Output("prev_base_file"),
    Output("column_stats_available", "boolean"),
]


def operation_type(stat: WriteStat) -> str:
    """Hudi's ``determineOperationType`` from the write-stat's counts."""
    if stat.num_inserts > 0:
        return OPERATION_TYPES[OP_UPSERT if stat.num_update_writes > 0 else OP_INSERT]
    if stat.num_update_writes > 0:
        return "UPDATE"
    return "DELETE" if stat.num_deletes > 0 else "UNKNOWN"


def _group_of(deleted: str) -> str:
    """Hudi's ``extractFileGroupIdFromDeletedFile``: the name's part before the first ``.``,
    then before the first ``_``."""
    stem = str(deleted).rsplit("/", 1)[-1].split(".")[0]
    return stem.split("_")[0]


def _name(path: str) -> str:
    return str(path).rsplit("/", 1)[-1]


# One history entry: (requested time, completion time, action, timeline, state, partition,
# write-stat or None for a pending instant).
_Entry = tuple[str, str | None, str, str, str, str, WriteStat | None]
# One write instant: (requested time, completion time, action, timeline, state, metadata).
_Write = tuple[str, str | None, str, str, str, CommitMetadata | None]


def _entries(
    instants: list[_Write],
    file_id: str,
    partition: str | None,
    limit: int,
) -> list[_Entry]:
    """Hudi's ``processTimeline``: newest first, stop once ``limit`` instants gave rows."""
    out: list[_Entry] = []
    found = 0
    for time, done_at, action, timeline, st, meta in sorted(
        instants, key=lambda i: i[0], reverse=True
    ):
        if found >= limit:
            break
        before = len(out)
        if st != "COMPLETED":
            out.append((time, done_at, action, timeline, st, partition or "", None))
        elif meta is not None:
            parts = [partition] if partition else list(meta.partition_to_write_stats)
            for p in parts:
                for stat in meta.partition_to_write_stats.get(p, []):
                    if stat.file_id == file_id:
                        out.append((time, done_at, action, timeline, "COMPLETED", p, stat))
        found += len(out) > before
    return out


def _write_instants(
    state: TableState, show_archived: bool
) -> tuple[list[_Write], list[tuple[str, str, dict[str, Any], str]]]:
    """The write instants (time, completion, action, timeline, completed, metadata) and the
    completed cleans and rollbacks (action, time, metadata, timeline)."""
    writes: list[_Write] = []
    deletes: list[tuple[str, str, dict[str, Any], str]] = []
    for inst in state.timeline.instants:
        if inst.is_write:
            meta = state.timeline.commit_metadata(inst) if inst.is_completed else None
            done_at = transition_time(state, inst) if inst.is_completed else None
            writes.append(
                (inst.requested_time, done_at, inst.action, "ACTIVE", inst.state.name, meta)
            )
        elif inst.action in (CLEAN, ROLLBACK) and inst.is_completed:
            content = read_avro_record(state.timeline.instant_content(inst))
            deletes.append((inst.action, inst.requested_time, content, "ACTIVE"))
    if show_archived:
        active = {(w[0], w[2]) for w in writes} | {(d[1], d[0]) for d in deletes}
        for a in archived_timeline(state):
            if (a.requested_time, a.action) in active:
                continue  # an interrupted archival leaves both copies: the active one wins
            if a.action in (CLEAN, ROLLBACK) and a.is_completed:
                deletes.append((a.action, a.requested_time, dict(a.metadata or {}), "ARCHIVED"))
            elif a.is_completed and (archived_meta := a.commit_metadata()) is not None:
                writes.append(
                    (
                        a.requested_time,
                        a.completion_time,
                        a.action,
                        "ARCHIVED",
                        "COMPLETED",
                        archived_meta,
                    )
                )
    return writes, deletes


@procedure(
    "show_file_group_history",
    [
        Param("table", "string"),
        Param("file_group_id", "string", required=True),
        Param("partition", "string"),
        Param("showArchived", "boolean", default=False),
        Param("limit", "integer", default=20),
        Param("filter", "string", default=""),
        Param("path", "string"),
        Param("show_archived", "boolean", default=False),
    ],
    _OUTPUTS,
    "Shows the history of one file group: every write to it, newest first, and whether "
    "each file was later deleted (clean, rollback) or replaced (compaction, clustering).",
    read_only=True,
)
def show_file_group_history(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per write-stat of the file group in a completed write (and one per pending
    write), newest first, at most ``limit``, then kept by ``filter``; each with whether
    and by which instant its file was deleted or replaced."""
    state = ctx.table(args).state()
    file_id = str(args["file_group_id"]).strip()
    if not file_id:
        raise ProcedureArgumentError(f"{ctx.procedure}: file_group_id names no file group")
    limit = args["limit"]
    if limit <= 0:
        raise ProcedureArgumentError(f"{ctx.procedure}: limit must be positive, got {limit}")
    partition = str(args["partition"]).strip().strip("/") if args["partition"] else None
    show_archived = bool(args["showArchived"] or args["show_archived"])
    writes, deletes = _write_instants(state, show_archived)

    # Later instants overwrite earlier ones in Hudi's maps: apply oldest first.
    deleted: dict[str, tuple[str, str]] = {}
    for action, time, content, _ in sorted(deletes, key=lambda d: d[1]):
        pm = content.get("partitionMetadata") or {}
        for p in [partition] if partition else list(pm):
            for f in (pm.get(p) or {}).get("successDeleteFiles") or []:
                if _group_of(f) == file_id:
                    deleted[_name(f)] = (action, time)
    replaced: dict[str, tuple[str, str]] = {}
    for time, _, action, _, st, meta in sorted(writes, key=lambda w: w[0]):
        if st != "COMPLETED" or meta is None:
            continue
        if action == REPLACE_COMMIT:
            ids = meta.partition_to_replace_file_ids
            for p in [partition] if partition else list(ids):
                for fid in ids.get(p) or []:
                    if fid == file_id:
                        replaced[fid] = ("clustering", time)
        elif meta.compacted or meta.operation_type.lower() == "compact":
            for p in [partition] if partition else list(meta.partition_to_write_stats):
                for ws in meta.partition_to_write_stats.get(p, []):
                    if ws.prev_commit is not None and ws.file_id == file_id and ws.prev_base_file:
                        replaced[_name(ws.prev_base_file)] = ("compaction", time)

    rows = []
    entries = _entries(writes, file_id, partition, limit)
    for time, done_at, action, timeline, st, part, stat in entries[:limit]:
        prev_commit: str | None
        if stat is None:
            counts: tuple[Any, ...] = (-1,) * 6
            name, op, prev_commit = "", "UNKNOWN", ""
            tail: tuple[Any, ...] = (-1, -1, -1, -1, None, False)
        else:
            name = _name(stat.path or "")
            op, prev_commit = operation_type(stat), stat.prev_commit
            counts = (
                stat.num_writes,
                stat.num_inserts,
                stat.num_update_writes,
                stat.num_deletes,
                stat.file_size_in_bytes,
                stat.total_write_bytes,
            )
            rt = stat.runtime_stats or {}
            tail = (
                stat.total_write_errors,
                rt.get("totalScanTime", 0),
                rt.get("totalUpsertTime", 0),
                rt.get("totalCreateTime", 0),
                stat.prev_base_file,
                False,
            )
        deletion = deleted.get(name)
        replacement = replaced.get(name) or replaced.get(name.split("_")[0])
        rows.append(
            (
                time,
                done_at,
                action,
                timeline,
                st,
                part,
                name,
                op,
                *counts,
                prev_commit,
                deletion is not None,
                deletion[0] if deletion else None,
                deletion[1] if deletion else None,
                replacement is not None,
                replacement[0] if replacement else None,
                replacement[1] if replacement else None,
                *tail,
            )
        )
    return filtered(ctx, rows, None, args["filter"])
