"""Savepoint and rollback procedures: ``create_savepoint``, ``show_savepoints``,
``delete_savepoint``, ``rollback_to_savepoint``, ``rollback_to_instant``,
``show_rollbacks`` and ``show_rollback_detail``.

Signatures and outputs are Hudi 0.14/0.15/1.0's. Each procedure calls the engine service
Hudi's write client calls (``Table.savepoint``, ``delete_savepoint``, ``restore``,
``rollback``), so the timeline gets the same ``savepoint``, ``restore`` and ``rollback``
instants Hudi writes. As in Hudi:

* ``create_savepoint`` savepoints the latest completed commit when ``commit_time`` is
  empty, and returns ``false`` (not an error) when the commit cannot be savepointed
  (already savepointed, or older than what the cleaner retains);
* ``delete_savepoint`` and ``rollback_to_savepoint`` take the latest savepoint when
  ``instant_time`` is empty; ``delete_savepoint`` also takes a comma-separated list;
* ``rollback_to_savepoint`` is a *restore*: every instant after the savepoint goes;
* ``rollback_to_instant`` rolls back that one instant, which must be the latest write
  (or a pending table-service plan) -- Hudi's rollback executor refuses older ones.

Unknown instants are errors naming the instant.
"""

from __future__ import annotations

import logging
from typing import Any

from hudilite.errors import HudiliteError
from hudilite.table.api import Table
from hudilite.timeline.instant import ROLLBACK
from hudilite.timeline.metadata import read_avro_record

from .registry import (
    Output,
    Param,
    ProcedureContext,
    ProcedureError,
    procedure,
)

_log = logging.getLogger("hudilite.procedures")


def _savepoint_times(tbl: Table) -> list[str]:
    """Completed savepoint times, oldest first."""
    return [sp.instant_time for sp in tbl.savepoints()]


def _shown(times: list[str]) -> str:
    return ", ".join(times[-5:]) or "none"


@procedure(
    "create_savepoint",
    [
        Param("table", "string"),
        Param("commit_time", "string", default=""),
        Param("user", "string", default=""),
        Param("comments", "string", default=""),
        Param("path", "string"),
    ],
    [Output("create_savepoint_result", "boolean")],
    "Savepoints a completed commit (default: the latest) so cleaning keeps its files.",
)
def create_savepoint(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``true`` once the savepoint is written, ``false`` when the commit cannot be
    savepointed; an unknown commit is an error."""
    tbl = ctx.table(args)
    commits = [c.requested_time for c in tbl.state().timeline.commits()]
    commit_time = str(args["commit_time"] or "").strip()
    if not commit_time:
        if not commits:
            raise ProcedureError(f"{ctx.procedure}: {tbl.config.name} has no completed commit")
        commit_time = commits[-1]
    elif commit_time not in commits:
        raise ProcedureError(
            f"{ctx.procedure}: commit {commit_time} not found among the completed commits of "
            f"{tbl.config.name} (latest: {_shown(commits)})"
        )
    try:
        tbl.savepoint(commit_time, user=args["user"] or "", comments=args["comments"] or "")
    except HudiliteError as exc:
        # Already savepointed, or the cleaner passed it: Hudi's HoodieSavepointException,
        # which the procedure logs and answers with false.
        _log.warning("%s: cannot savepoint %s: %s", ctx.procedure, commit_time, exc)
        return [(False,)]
    return [(True,)]


@procedure(
    "show_savepoints",
    [Param("table", "string"), Param("path", "string")],
    [Output("savepoint_time")],
    "Lists the completed savepoints, newest first.",
    read_only=True,
)
def show_savepoints(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per completed savepoint."""
    return [(t,) for t in reversed(_savepoint_times(ctx.table(args)))]


def _pick_savepoints(ctx: ProcedureContext, tbl: Table, value: str | None) -> list[str]:
    """The savepoints named by ``value`` (comma-separated; empty: the latest one)."""
    known = _savepoint_times(tbl)
    if not known:
        raise ProcedureError(f"{ctx.procedure}: {tbl.config.name} has no completed savepoint")
    wanted = [t.strip() for t in str(value or "").split(",") if t.strip()]
    if not wanted:
        return [known[-1]]
    missing = [t for t in wanted if t not in known]
    if missing:
        raise ProcedureError(
            f"{ctx.procedure}: no savepoint at {', '.join(missing)} in {tbl.config.name} "
            f"(savepoints: {_shown(known)})"
        )
    return wanted


@procedure(
    "delete_savepoint",
    [
        Param("table", "string"),
        Param("instant_time", "string", default=""),
        Param("path", "string"),
    ],
    [Output("delete_savepoint_result", "boolean")],
    "Deletes savepoints (default: the latest; a comma-separated list is accepted).",
)
def delete_savepoint(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``true`` when every named savepoint was deleted."""
    tbl = ctx.table(args)
    chosen = _pick_savepoints(ctx, tbl, args["instant_time"])
    return [(all([tbl.delete_savepoint(t) for t in chosen]),)]


@procedure(
    "rollback_to_savepoint",
    [
        Param("table", "string"),
        Param("instant_time", "string", default=""),
        Param("path", "string"),
    ],
    [Output("rollback_savepoint_result", "boolean")],
    "Restores the table to a savepoint (default: the latest), undoing every later instant.",
)
def rollback_to_savepoint(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Hudi's ``restoreToSavepoint``: a ``restore`` instant rolling back later commits."""
    tbl = ctx.table(args)
    chosen = _pick_savepoints(ctx, tbl, args["instant_time"])
    if len(chosen) != 1:
        raise ProcedureError(f"{ctx.procedure}: name one savepoint, got {', '.join(chosen)}")
    tbl.restore(chosen[0], options=ctx.options)
    return [(True,)]


@procedure(
    "rollback_to_instant",
    [
        Param("table", "string"),
        Param("instant_time", "string", required=True),
        Param("path", "string"),
    ],
    [Output("rollback_result", "boolean")],
    "Rolls back one instant: the latest write, or a pending table-service plan.",
)
def rollback_to_instant(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Roll back ``instant_time`` with a ``rollback`` instant, as Hudi's
    ``client.rollback``; other instants stay."""
    tbl = ctx.table(args)
    instant_time = str(args["instant_time"]).strip()
    timeline = tbl.state().timeline
    if timeline.get(instant_time) is None:
        latest = [i.requested_time for i in timeline.commits()]
        raise ProcedureError(
            f"{ctx.procedure}: instant {instant_time} not found on the timeline of "
            f"{tbl.config.name} (latest commits: {_shown(latest)})"
        )
    try:
        tbl.rollback(instant_time, options=ctx.options)
    except HudiliteError as exc:
        raise ProcedureError(f"{ctx.procedure}: cannot roll back {instant_time}: {exc}") from exc
    return [(True,)]


# ---------------------------------------------------------------------------------------
# show_rollbacks / show_rollback_detail


def _completed_rollbacks(tbl: Table) -> list[tuple[str, dict[str, Any]]]:
    """Completed rollbacks in timeline order, each with its ``HoodieRollbackMetadata``."""
    timeline = tbl.state().timeline
    return [
        (i.requested_time, read_avro_record(timeline.instant_content(i)))
        for i in timeline.filter(actions=ROLLBACK)
        if i.is_completed
    ]


@procedure(
    "show_rollbacks",
    [Param("table", "string"), Param("limit", "integer", default=10), Param("path", "string")],
    [
        Output("instant"),
        Output("rollback_instant"),
        Output("total_files_deleted", "int"),
        Output("time_taken_in_millis", "long"),
        Output("total_partitions", "int"),
    ],
    "Lists the completed rollbacks, one row per instant rolled back, oldest first.",
    read_only=True,
)
def show_rollbacks(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Rows of Hudi's ``ShowRollbacksProcedure(false)``: timeline order, first ``limit``."""
    rows = [
        (
            meta.get("startRollbackTime"),
            target,
            meta.get("totalFilesDeleted"),
            meta.get("timeTakenInMillis"),
            len(meta.get("partitionMetadata") or {}),
        )
        for _, meta in _completed_rollbacks(ctx.table(args))
        for target in meta.get("commitsRollback") or []
    ]
    return rows[: max(args["limit"], 0)]


@procedure(
    "show_rollback_detail",
    [
        Param("table", "string"),
        Param("limit", "integer", default=10),
        Param("instant_time", "string", required=True),
        Param("path", "string"),
    ],
    [
        Output("instant"),
        Output("rollback_instant"),
        Output("partition"),
        Output("deleted_file"),
        Output("succeeded", "boolean"),
    ],
    "Lists the files one completed rollback deleted (instant_time is the rollback's time).",
    read_only=True,
)
def show_rollback_detail(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Per partition: the deleted files (``succeeded``), then the ones that failed."""
    tbl = ctx.table(args)
    wanted = str(args["instant_time"]).strip()
    found = dict(_completed_rollbacks(tbl))
    meta = found.get(wanted)
    if meta is None:
        raise ProcedureError(
            f"{ctx.procedure}: no completed rollback {wanted} in {tbl.config.name} "
            f"(rollbacks: {_shown(sorted(found))})"
        )
    # Hudi prints the Java list: "[t1, t2]".
    targets = "[" + ", ".join(meta.get("commitsRollback") or []) + "]"
    rows = []
    for partition, pm in (meta.get("partitionMetadata") or {}).items():
        for ok, key in ((True, "successDeleteFiles"), (False, "failedDeleteFiles")):
            for path in pm.get(key) or []:
                rows.append((meta.get("startRollbackTime"), targets, partition, path, ok))
    return rows[: max(args["limit"], 0)]
