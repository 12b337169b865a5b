"""Read-only commit and timeline procedures: ``show_table_properties``, ``show_commits``,
``show_commits_metadata``, ``show_commit_files``, ``show_commit_partitions``,
``show_commit_write_stats`` and ``show_timeline``.

Parameters and output columns are Hudi 1.0's (``docs/dev/hudi-procedures-reference.md``;
``show_timeline`` is Hudi's post-1.0 procedure). Every procedure also takes ``path``, after
Hudi's own parameters so positional calls keep working; ``table`` is therefore optional
here and :meth:`ProcedureContext.table` insists on one of the two. ``show_commits`` and
``show_commits_metadata`` take post-1.0's ``show_archived`` last; with it, and with
``show_timeline``'s ``showArchived``, the archived timeline is merged in (archived rows of
``show_timeline`` have ``timeline_type`` ``ARCHIVED``).

The numbers come from the commit metadata write stats (JSON on table version 6, Avro on 8
and later; :class:`hudilite.timeline.metadata.CommitMetadata` decodes both). Only
timeline files are read, on the driver: they are metadata, never table data.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from pyspark.errors import AnalysisException

from hudilite.errors import HudiliteError
from hudilite.services.archive import archived_commits, archived_timeline
from hudilite.services.archive_formats import ArchivedInstant, comparable_action
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
    completed_action,
)
from hudilite.timeline.instant_time import epoch_ms_to_instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

#: Actions ``show_commit_files`` & co. accept, in the order Hudi tries them.
_COMMIT_ACTIONS = (COMMIT, REPLACE_COMMIT, DELTA_COMMIT)


# ---------------------------------------------------------------------------------------
# helpers shared by the procedures of this module


def transition_time(state: TableState, instant: Instant) -> str | None:
    """When ``instant`` completed, as Hudi 1.0 shows it (``state_transition_time``): the one
    definition every procedure and SHOW statement prints.

    Version 8+ names carry the completion time. Version 6 records none, so Hudi uses the
    completed file's modification time, formatted as an instant time in the timeline's
    time zone (hudilite writes UTC; Hudi's default ``LOCAL`` is the machine's zone).
    """
    if instant.completion_time:
        return instant.completion_time
    try:
        name = state.timeline.file_name(instant)
        mtime = state.gw.mtime_ms(f"{state.config.timeline_dir}/{name}")
    except (OSError, HudiliteError):  # the file went away under us (e.g. archived)
        return None
    return epoch_ms_to_instant(mtime, state.config.timeline_utc)


def _is_new(stat: WriteStat) -> bool:
    """Hudi counts a stat as an added file when ``prevCommit`` is the string ``"null"``."""
    return stat.prev_commit is None or str(stat.prev_commit).lower() == "null"


def _completed_commit(
    ctx: ProcedureContext, state: TableState, instant_time: Any
) -> tuple[Instant, CommitMetadata]:
    """The completed commit/replacecommit/deltacommit at ``instant_time`` and its metadata,
    or an error naming the instant and what it is instead."""
    wanted = str(instant_time).strip()
    instant = state.timeline.get(wanted)
    if instant is None or not instant.is_completed or instant.action not in _COMMIT_ACTIONS:
        if instant is None:
            what = "is not on the active timeline"
        elif instant.is_pending:
            what = f"is a pending {instant.action} ({instant.state.name})"
        else:
            what = f"is a {instant.action}, not a commit"
        recent = [i.requested_time for i in state.timeline.commits()][-5:]
        raise ProcedureError(
            f"{ctx.procedure}: instant_time {wanted!r} {what}; it must be a completed "
            f"commit, deltacommit or replacecommit of {state.gw.abs_path('')} "
            f"(latest: {', '.join(recent) or 'none'})"
        )
    return instant, state.timeline.commit_metadata(instant)


def _newest_commits(state: TableState) -> list[Instant]:
    """Completed commits, deltacommits and replacecommits, newest requested time first."""
    return sorted(state.timeline.commits(), key=lambda i: i.requested_time, reverse=True)


def _commit_entries(
    state: TableState, show_archived: bool
) -> list[tuple[str, str | None, str, Instant | CommitMetadata]]:
    """``(commit time, state transition time, action, instant)`` of every completed commit,
    newest first; with ``show_archived`` the archived ones too (their transition time is
    the completion time the archive recorded, their metadata in place of the instant, as
    the archive holds it). Active metadata is read later, only for the rows shown."""
    out: list[tuple[str, str | None, str, Instant | CommitMetadata]] = [
        (i.requested_time, transition_time(state, i), i.action, i) for i in _newest_commits(state)
    ]
    if show_archived:
        active = {(t, a) for t, _, a, _ in out}
        # An archival that stopped between writing the archive and deleting the timeline
        # files leaves an instant in both: the active copy wins, as in Hudi's merged view.
        out += [
            (a.requested_time, a.completion_time, a.action, meta)
            for a, meta in archived_commits(state)
            if (a.requested_time, a.action) not in active
        ]
        out.sort(key=lambda e: e[0], reverse=True)
    return out


def _entry_metadata(state: TableState, inst: Instant | CommitMetadata) -> CommitMetadata:
    """The commit metadata of an entry of :func:`_commit_entries`."""
    return state.timeline.commit_metadata(inst) if isinstance(inst, Instant) else inst


# ---------------------------------------------------------------------------------------
# show_table_properties


@procedure(
    "show_table_properties",
    [Param("table", "string"), Param("path", "string"), Param("limit", "integer", default=10)],
    [Output("key"), Output("value")],
    "Shows the table's hoodie.properties, one row per property.",
    read_only=True,
)
def show_table_properties(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Rows ``(key, value)`` of ``hoodie.properties`` in file order, the first ``limit``."""
    props = ctx.table(args).state().config.props
    return list(props.items())[: args["limit"]]


# ---------------------------------------------------------------------------------------
# show_commits / show_commits_metadata

_COMMITS_OUTPUT = [
    Output("commit_time"),
    Output("state_transition_time"),
    Output("action"),
    Output("total_bytes_written", "bigint"),
    Output("total_files_added", "bigint"),
    Output("total_files_updated", "bigint"),
    Output("total_partitions_written", "bigint"),
    Output("total_records_written", "bigint"),
    Output("total_update_records_written", "bigint"),
    Output("total_errors", "bigint"),
]
_COMMITS_METADATA_OUTPUT = [
    Output("commit_time"),
    Output("state_transition_time"),
    Output("action"),
    Output("partition"),
    Output("file_id"),
    Output("previous_commit"),
    Output("num_writes", "bigint"),
    Output("num_inserts", "bigint"),
    Output("num_deletes", "bigint"),
    Output("num_update_writes", "bigint"),
    Output("total_errors", "bigint"),
    Output("total_log_blocks", "bigint"),
    Output("total_corrupt_log_blocks", "bigint"),
    Output("total_rollback_blocks", "bigint"),
    Output("total_log_records", "bigint"),
    Output("total_updated_records_compacted", "bigint"),
    Output("total_bytes_written", "bigint"),
]
_TABLE_LIMIT = [
    Param("table", "string"),
    Param("limit", "integer", default=10),
    Param("path", "string"),
    # Hudi's post-1.0 show_commits flag, after 1.0's parameters so positional calls work.
    Param("show_archived", "boolean", default=False),
    Param("showArchived", "boolean"),
]


@procedure(
    "show_commits",
    _TABLE_LIMIT,
    _COMMITS_OUTPUT,
    "Lists the completed commits (active timeline, and the archived one with show_archived) "
    "with their write totals, newest first.",
    read_only=True,
)
def show_commits(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per completed commit/deltacommit/replacecommit, newest first; archived
    ones too with ``show_archived``."""
    state = ctx.table(args).state()
    rows = []
    for time, when, action, instant in _commit_entries(state, _show_archived(args))[
        : args["limit"]
    ]:
        meta = _entry_metadata(state, instant)
        stats = meta.write_stats()
        added = sum(1 for s in stats if _is_new(s))
        rows.append(
            (
                time,
                when,
                action,
                sum(s.total_write_bytes for s in stats),
                added,
                len(stats) - added,
                len(meta.partition_to_write_stats),
                sum(s.num_writes for s in stats),
                sum(s.num_update_writes for s in stats),
                sum(s.total_write_errors for s in stats),
            )
        )
    return rows


@procedure(
    "show_commits_metadata",
    _TABLE_LIMIT,
    _COMMITS_METADATA_OUTPUT,
    "Lists the write stats (one row per file) of the completed commits (archived ones too "
    "with show_archived), newest first.",
    read_only=True,
)
def show_commits_metadata(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per write stat; as in Hudi, ``limit`` counts rows (files), not commits."""
    state = ctx.table(args).state()
    rows: list[tuple[Any, ...]] = []
    for time, when, action, instant in _commit_entries(state, _show_archived(args)):
        if len(rows) >= args["limit"]:
            break
        meta = _entry_metadata(state, instant)
        for partition, stats in meta.partition_to_write_stats.items():
            for s in stats:
                rows.append(
                    (
                        time,
                        when,
                        action,
                        partition,
                        s.file_id,
                        s.prev_commit,
                        s.num_writes,
                        s.num_inserts,
                        s.num_deletes,
                        s.num_update_writes,
                        s.total_write_errors,
                        s.total_log_blocks,
                        s.total_corrupt_log_block,
                        s.total_rollback_blocks,
                        s.total_log_records,
                        s.total_updated_records_compacted,
                        s.total_write_bytes,
                    )
                )
    return rows[: args["limit"]]


def _show_archived(args: dict[str, Any]) -> bool:
    """``show_archived`` or its camelCase spelling ``showArchived``."""
    return bool(args.get("show_archived") or args.get("showArchived"))


# ---------------------------------------------------------------------------------------
# one commit: files, partitions, write stats

_ONE_COMMIT = [
    Param("table", "string"),
    Param("limit", "integer", default=10),
    Param("instant_time", "string", required=True),
    Param("path", "string"),
]


@procedure(
    "show_commit_files",
    _ONE_COMMIT,
    [
        Output("action"),
        Output("partition_path"),
        Output("file_id"),
        Output("previous_commit"),
        Output("total_records_updated", "bigint"),
        Output("total_records_written", "bigint"),
        Output("total_bytes_written", "bigint"),
        Output("total_errors", "bigint"),
        Output("file_size", "bigint"),
    ],
    "Lists the files one completed commit wrote (one row per write stat).",
    read_only=True,
)
def show_commit_files(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per write stat of the commit, partitions in metadata order."""
    state = ctx.table(args).state()
    instant, meta = _completed_commit(ctx, state, args["instant_time"])
    rows = [
        (
            instant.action,
            partition,
            s.file_id,
            s.prev_commit,
            s.num_update_writes,
            s.num_writes,
            s.total_write_bytes,
            s.total_write_errors,
            s.file_size_in_bytes,
        )
        for partition, stats in meta.partition_to_write_stats.items()
        for s in stats
    ]
    return rows[: args["limit"]]


@procedure(
    "show_commit_partitions",
    _ONE_COMMIT,
    [
        Output("action"),
        Output("partition_path"),
        Output("total_files_added", "bigint"),
        Output("total_files_updated", "bigint"),
        Output("total_records_inserted", "bigint"),
        Output("total_records_updated", "bigint"),
        Output("total_bytes_written", "bigint"),
        Output("total_errors", "bigint"),
    ],
    "Lists the partitions one completed commit wrote, with per-partition totals.",
    read_only=True,
)
def show_commit_partitions(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per partition written by the commit."""
    state = ctx.table(args).state()
    instant, meta = _completed_commit(ctx, state, args["instant_time"])
    rows = []
    for partition, stats in meta.partition_to_write_stats.items():
        added = [s for s in stats if _is_new(s)]
        updated = [s for s in stats if not _is_new(s)]
        rows.append(
            (
                instant.action,
                partition,
                len(added),
                len(updated),
                sum(s.num_inserts for s in stats),
                # Hudi sums updates over updated files only (a new file has none anyway).
                sum(s.num_update_writes for s in updated),
                sum(s.total_write_bytes for s in stats),
                sum(s.total_write_errors for s in stats),
            )
        )
    return rows[: args["limit"]]


@procedure(
    "show_commit_write_stats",
    _ONE_COMMIT,
    [
        Output("action"),
        Output("total_bytes_written", "bigint"),
        Output("total_records_written", "bigint"),
        Output("avg_record_size", "bigint"),
    ],
    "Shows the bytes, records and average record size one completed commit wrote.",
    read_only=True,
)
def show_commit_write_stats(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Exactly one row. ``avg_record_size`` is ``ceil(bytes / records)``; with no records
    it is 0 (Hudi divides by zero and shows 0 or Long.MAX_VALUE)."""
    state = ctx.table(args).state()
    instant, meta = _completed_commit(ctx, state, args["instant_time"])
    written, records = meta.total_bytes_written, meta.total_records_written
    avg = math.ceil(written / records) if records else 0
    return [(instant.action, written, records, avg)][: args["limit"]]


# ---------------------------------------------------------------------------------------
# show_timeline (Hudi's post-1.0 procedure)

_TIMELINE_OUTPUT = [
    Output("instant_time"),
    Output("action"),
    Output("state"),
    Output("requested_time"),
    Output("inflight_time"),
    Output("completed_time"),
    Output("timeline_type"),
    Output("rollback_info"),
]


def _state_time(mtime_ms: int | None, instant_time: str) -> str | None:
    """A state file's modification time as Hudi shows it: ``MM-dd HH:mm:ss`` in the local
    zone (Java's default), the instant time when the time is unknown, None without file."""
    if mtime_ms is None:
        return None
    if mtime_ms <= 0:
        return instant_time
    return datetime.fromtimestamp(mtime_ms / 1000, tz=UTC).astimezone().strftime("%m-%d %H:%M:%S")


def _timeline_files(state: TableState) -> dict[tuple[str, str], dict[State, tuple[Instant, int]]]:
    """Every instant file of the active timeline by ``(requested time, completed action)``
    (so a compaction's requested file and its completed ``commit`` meet), per state."""
    out: dict[tuple[str, str], dict[State, tuple[Instant, int]]] = {}
    for entry in state.gw.list_dir(state.config.timeline_dir):
        if entry.is_dir:
            continue
        instant = Instant.parse(entry.name, state.config.layout_version)
        if instant is not None:
            key = (instant.requested_time, completed_action(instant.action))
            out.setdefault(key, {})[instant.state] = (instant, int(entry.mtime_ms))
    return out


def _rollback_targets(state: TableState, rollback: Instant) -> list[str]:
    """What a rollback undoes: its plan while pending, its metadata once completed
    (unreadable content gives nothing, as in Hudi)."""
    try:
        if rollback.is_completed:
            meta = read_avro_record(state.timeline.instant_content(rollback))
            return [str(t) for t in meta.get("commitsRollback") or []]
        requested = Instant(rollback.requested_time, ROLLBACK, State.REQUESTED)
        plan = read_avro_record(state.timeline.instant_content(requested))
        return [str(plan["instantToRollback"]["commitTime"])]
    except Exception:  # damaged or foreign content: no rollback info, never an error
        return []


@procedure(
    "show_timeline",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("limit", "integer", default=20),
        Param("showArchived", "boolean", default=False),
        Param("filter", "string", default=""),
        Param("startTime", "string", default=""),
        Param("endTime", "string", default=""),
        # snake_case spellings, as the other post-1.0 procedures spell them
        Param("show_archived", "boolean"),
        Param("start_time", "string"),
        Param("end_time", "string"),
    ],
    _TIMELINE_OUTPUT,
    "Lists every instant of the timeline (any action and state) with its state times.",
    read_only=True,
)
def show_timeline(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """Instants newest first: action, state, the times their state files were written,
    and what rolled them back (or what a rollback undid). ``startTime``/``endTime`` are
    inclusive bounds on the requested time; with both, ``limit`` does not apply.
    ``showArchived`` merges in the archived timeline (``timeline_type`` ``ARCHIVED``).
    ``filter`` is a Spark SQL condition over the output columns."""
    tbl = ctx.table(args)
    state = tbl.state()
    show_archived = bool(args["show_archived"] or args["showArchived"])
    start = str(args["start_time"] or args["startTime"] or "").strip()
    end = str(args["end_time"] or args["endTime"] or "").strip()
    files = _timeline_files(state)
    rolled_back_by: dict[str, list[str]] = {}
    for (time, action), states in sorted(files.items()):
        if action == ROLLBACK:
            latest = states[max(states)][0]
            for target in _rollback_targets(state, latest):
                rolled_back_by.setdefault(target, []).append(time)
    entries: list[tuple[str, str, tuple[Any, ...]]] = []
    for (time, action), states in files.items():
        if (start and time < start) or (end and time > end):
            continue
        instant = states[max(states)][0]
        if instant.action == ROLLBACK:
            targets = _rollback_targets(state, instant)
            if instant.is_completed:
                info: str | None = f"Rolled back: {', '.join(targets)}"
            else:
                info = f"Rolls back {targets[0]}" if targets else None
        elif time in rolled_back_by:
            info = f"Rolled back by: {', '.join(rolled_back_by[time])}"
        else:
            info = None
        times = [_state_time(states[s][1] if s in states else None, time) for s in State]
        row = (time, instant.action, instant.state.name, *times, "ACTIVE", info)
        entries.append((time, action, row))
    if show_archived:
        entries += _archived_timeline_entries(state, set(files), start, end)
    # Newest first; one requested time (a commit and its savepoint) in action order, as
    # Hudi's stable sort leaves its timeline order.
    entries.sort(key=lambda e: e[1])
    entries.sort(key=lambda e: e[0], reverse=True)
    rows = [row for _, _, row in entries]
    if not (start and end):
        rows = rows[: args["limit"]]
    condition = str(args["filter"] or "").strip()
    if not condition:
        return rows
    df = ctx.frame(rows, ", ".join(f"`{o.name}` {o.type}" for o in _TIMELINE_OUTPUT))
    try:
        return df.filter(condition)
    except AnalysisException as exc:
        raise ProcedureArgumentError(
            f"show_timeline: invalid filter {condition!r}: {str(exc).splitlines()[0]}"
        ) from None


def _instant_state_time(instant_time: str | None) -> str | None:
    """An instant time shown as ``MM-dd HH:mm:ss``: what Hudi shows for an archived
    instant, which has no state files to take times from (None when not a time)."""
    try:
        return datetime.strptime(str(instant_time)[:14], "%Y%m%d%H%M%S").strftime("%m-%d %H:%M:%S")
    except ValueError:
        return None


def _archived_rollback_targets(inst: ArchivedInstant) -> list[str]:
    """What an archived rollback undid (its metadata) or would undo (its plan)."""
    try:
        if inst.is_completed:
            return [str(t) for t in (inst.metadata or {}).get("commitsRollback") or []]
        return [str((inst.plan or {})["instantToRollback"]["commitTime"])]
    except (KeyError, TypeError):  # no or foreign content: no rollback info, as in Hudi
        return []


def _archived_timeline_entries(
    state: TableState, active: set[tuple[str, str]], start: str, end: str
) -> list[tuple[str, str, tuple[Any, ...]]]:
    """``show_timeline`` rows of the archived instants requested in ``[start, end]``.

    As Hudi, the state times come from the instant itself (requested and inflight: the
    requested time; completed: the completion time), and rollback info only from archived
    rollbacks. An instant still on the active timeline (an archival interrupted before it
    deleted the timeline files) is shown once, as active.
    """
    archived = [
        a
        for a in archived_timeline(state)
        if (a.requested_time, comparable_action(a.action)) not in active
    ]
    rolled_back_by: dict[str, list[str]] = {}
    for a in archived:
        if a.action == ROLLBACK:
            for target in _archived_rollback_targets(a):
                rolled_back_by.setdefault(target, []).append(a.requested_time)
    out = []
    for a in archived:
        time = a.requested_time
        if (start and time < start) or (end and time > end):
            continue
        if a.action == ROLLBACK:
            targets = _archived_rollback_targets(a)
            if a.is_completed:
                info: str | None = f"Rolled back: {', '.join(targets)}"
            else:
                info = f"Rolls back {targets[0]}" if targets else None
        elif time in rolled_back_by:
            info = f"Rolled back by: {', '.join(rolled_back_by[time])}"
        else:
            info = None
        requested = _instant_state_time(time)
        completed = _instant_state_time(a.completion_time or time)
        row = (time, a.action, a.state.name, requested, requested, completed, "ARCHIVED", info)
        out.append((time, comparable_action(a.action), row))
    return out
