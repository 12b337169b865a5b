"""Archival procedures: ``archive_commits``, ``show_archived_commits`` and
``show_archived_commits_metadata``.

``archive_commits(table|path, min_commits=20, max_commits=30, retain_commits=10,
enable_metadata=true)`` runs Hudi's archiver with ``hoodie.keep.min.commits``,
``hoodie.keep.max.commits`` and ``hoodie.cleaner.commits.retained`` set from the arguments
and returns ``0`` on success, as Hudi's ``ArchiveExecutorUtils`` does (hudilite keeps no
metadata table, so ``enable_metadata`` changes nothing).

``show_archived_commits[_metadata](table|path, limit=10, start_ts, end_ts)`` read the
*archived* timeline only (``.hoodie/archived`` on table version 6, the LSM timeline on 8):
completed commits, delta commits and replace commits requested in ``(start_ts, end_ts]``,
newest first, ``limit`` rows. As in Hudi, an empty ``start_ts`` means 10 days ago and an
empty ``end_ts`` 1 day ago (instant times in the table's timeline zone); the 0.12 spellings
``startTs``/``endTs`` are accepted too. ``state_transition_time`` is the completion time
the archive recorded.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hudilite.services.archive import archived_commits
from hudilite.timeline.instant_time import format_instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat

from .registry import Output, Param, ProcedureContext, procedure

_SHOW_PARAMS = [
    Param("table", "string"),
    Param("limit", "integer", default=10),
    Param("start_ts", "string", default=""),
    Param("end_ts", "string", default=""),
    Param("path", "string"),
    Param("startTs", "string"),
    Param("endTs", "string"),
]
_COMMIT_OUTPUT = [
    Output("commit_time"),
    Output("state_transition_time"),
    Output("total_bytes_written", "long"),
    Output("total_files_added", "long"),
    Output("total_files_updated", "long"),
    Output("total_partitions_written", "long"),
    Output("total_records_written", "long"),
    Output("total_update_records_written", "long"),
    Output("total_errors", "long"),
]
_METADATA_OUTPUT = [
    Output("commit_time"),
    Output("state_transition_time"),
    Output("action"),
    Output("partition"),
    Output("file_id"),
    Output("previous_commit"),
    *(
        Output(name, "long")
        for name in (
            "num_writes",
            "num_inserts",
            "num_deletes",
            "num_update_writes",
            "total_errors",
            "total_log_blocks",
            "total_corrupt_log_blocks",
            "total_rollback_blocks",
            "total_log_records",
            "total_updated_records_compacted",
            "total_bytes_written",
        )
    ),
]


@procedure(
    "archive_commits",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("min_commits", "integer", default=20),
        Param("max_commits", "integer", default=30),
        Param("retain_commits", "integer", default=10),
        Param("enable_metadata", "boolean", default=True),
    ],
    [Output("result", "int")],
    "Archives old completed instants of the active timeline, as Hudi's archiver does.",
)
def archive_commits(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    tbl = ctx.table(args)
    options = {
        **ctx.options,
        "hoodie.keep.min.commits": str(args["min_commits"]),
        "hoodie.keep.max.commits": str(args["max_commits"]),
        "hoodie.cleaner.commits.retained": str(args["retain_commits"]),
    }
    tbl.archive(options=options)
    return [(0,)]


def _window(tbl: Any, args: dict[str, Any]) -> tuple[str, str]:
    """``(start, end]`` of the listing, Hudi's defaults (10 days ago, 1 day ago) filled in."""
    start = args["start_ts"] or args["startTs"] or ""
    end = args["end_ts"] or args["endTs"] or ""
    # A LOCAL-zone table's instant digits are wall-clock time (format_instant renders a
    # naive datetime as is).
    now = datetime.now(UTC) if tbl.config.timeline_utc else datetime.now()

    def ago(days: int) -> str:
        return format_instant(now - timedelta(days=days))

    return str(start) or ago(10), str(end) or ago(1)


def _archived(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, CommitMetadata]]:
    tbl = ctx.table(args)
    start, end = _window(tbl, args)
    return archived_commits(tbl.state(), start, end)


def _files_added(meta: CommitMetadata) -> int:
    return sum(1 for s in meta.write_stats() if (s.prev_commit or "").lower() == "null")


def _files_updated(meta: CommitMetadata) -> int:
    return sum(
        1
        for s in meta.write_stats()
        if s.prev_commit is not None and s.prev_commit.lower() != "null"
    )


@procedure(
    "show_archived_commits",
    _SHOW_PARAMS,
    _COMMIT_OUTPUT,
    "Lists the archived commits (newest first) with their write totals.",
    read_only=True,
)
def show_archived_commits(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = []
    for inst, meta in _archived(ctx, args):
        stats = meta.write_stats()
        rows.append(
            (
                inst.requested_time,
                inst.completion_time,
                meta.total_bytes_written,
                _files_added(meta),
                _files_updated(meta),
                len(meta.partition_to_write_stats),
                meta.total_records_written,
                meta.total_updates,
                sum(s.total_write_errors for s in stats),
            )
        )
    return rows[: max(0, args["limit"])]


def _stat_row(inst: Any, stat: WriteStat) -> tuple[Any, ...]:
    return (
        inst.requested_time,
        inst.completion_time,
        inst.action,
        stat.partition_path,
        stat.file_id,
        stat.prev_commit,
        stat.num_writes,
        stat.num_inserts,
        stat.num_deletes,
        stat.num_update_writes,
        stat.total_write_errors,
        stat.total_log_blocks,
        stat.total_corrupt_log_block,
        stat.total_rollback_blocks,
        stat.total_log_records,
        stat.total_updated_records_compacted,
        stat.total_write_bytes,
    )


@procedure(
    "show_archived_commits_metadata",
    _SHOW_PARAMS,
    _METADATA_OUTPUT,
    "Lists the write stats of the archived commits (newest first), one row per file.",
    read_only=True,
)
def show_archived_commits_metadata(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    rows = [_stat_row(inst, s) for inst, meta in _archived(ctx, args) for s in meta.write_stats()]
    return rows[: max(0, args["limit"])]
