"""Restoring a table to a savepoint (:func:`restore`), or to any completed instant
(:func:`restore_to_instant`, Hudi's ``restoreToInstant``): roll back everything written
after it, under the table lock.

As Hudi's restore (``RestorePlanActionExecutor`` / ``BaseRestoreActionExecutor``):

1. savepoints newer than ``S`` are deleted (they pin files that are about to go);
2. ``R.restore.requested`` holds an Avro ``HoodieRestorePlan`` (version 2) listing the
   instants to undo, newest first: every write, compaction or clustering (completed or
   pending) requested after the savepointed commit ``S`` -- and on table version 8 also
   those that completed after the savepoint was taken, since they were not part of it;
3. ``R.restore.inflight``; each instant is rolled back with its own ``rollback`` instant
   (plan first, so a crash can be finished), deleting its base and log files;
4. ``R.restore`` / ``R_C.restore`` with ``HoodieRestoreMetadata`` nesting every rollback's
   metadata; the individual rollback instants are then removed from the timeline, as
   Hudi's ``finishRestore`` does.

Before anything is touched, every file the savepoint pins must still exist, and no live
writer may own a pending instant being undone. A restore that died midway is resumed by
calling :func:`restore` again with the same savepoint.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Any

import fastavro

from hudilite import config as cfg
from hudilite.errors import ConflictError, HudiliteError, InstantNotFoundError
from hudilite.services._common import OptionsLike, resolve_options
from hudilite.services.rollback_completed import (
    DATA_ACTIONS,
    files_written_by,
    perform_rollback,
)
from hudilite.services.savepoint import delete_savepoint, get_savepoint, savepoint_times
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import is_expired
from hudilite.timeline.instant import (
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import AVRO_NAMESPACE, avro_schema, read_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from hudilite.write.rollback import instant_info

RESTORE_PLAN_VERSION = 2
RESTORE_METADATA_VERSION = 1
_INSTANT_INFO = f"{AVRO_NAMESPACE}.HoodieInstantInfo"
_WRITES = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)


def restore_plan_schema() -> dict[str, Any]:
    """Hudi's ``HoodieRestorePlan`` (not among the shared .avsc files)."""
    return {
        "type": "record",
        "name": f"{AVRO_NAMESPACE}.HoodieRestorePlan",
        "fields": [
            {
                "name": "instantsToRollback",
                "type": {"type": "array", "items": avro_schema("HoodieInstantInfo")},
                "default": [],
            },
            {"name": "version", "type": ["int", "null"], "default": RESTORE_PLAN_VERSION},
            {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
        ],
    }


def restore_metadata_schema() -> dict[str, Any]:
    """Hudi's ``HoodieRestoreMetadata``; the rollback metadata schema defines
    ``HoodieInstantInfo`` first, later uses refer to it by name."""
    return {
        "type": "record",
        "name": f"{AVRO_NAMESPACE}.HoodieRestoreMetadata",
        "fields": [
            {"name": "startRestoreTime", "type": "string"},
            {"name": "timeTakenInMillis", "type": "long"},
            {"name": "instantsToRollback", "type": {"type": "array", "items": "string"}},
            {
                "name": "hoodieRestoreMetadata",
                "type": {
                    "type": "map",
                    "values": {
                        "type": "array",
                        "items": ["null", avro_schema("HoodieRollbackMetadata")],
                    },
                },
            },
            {"name": "version", "type": ["int", "null"], "default": RESTORE_METADATA_VERSION},
            {
                "name": "restoreInstantInfo",
                "type": {"type": "array", "items": _INSTANT_INFO},
                "default": [],
            },
            {
                "name": "extraMetadata",
                "type": ["null", {"type": "map", "values": "string"}],
                "default": None,
            },
        ],
    }


def _avro(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record], codec="null")
    return buf.getvalue()


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: its instant, the savepoint, the instants undone (newest first),
    the data files deleted and the newer savepoints removed."""

    instant_time: str
    completion_time: str | None
    savepoint_time: str
    rolled_back: tuple[str, ...]
    files_deleted: tuple[str, ...]
    savepoints_deleted: tuple[str, ...]
    duration_s: float

    def __str__(self) -> str:
        return (
            f"restore @ {self.instant_time} to savepoint {self.savepoint_time}: "
            f"{len(self.rolled_back)} instant(s) rolled back"
        )


def instants_to_restore(
    state: TableState, savepoint_time: str, savepoint_completion: str | None = None
) -> list[Instant]:
    """The data instants a restore to ``savepoint_time`` undoes, newest first."""
    out = []
    for inst in state.timeline:
        if inst.action not in DATA_ACTIONS or inst.requested_time == savepoint_time:
            continue
        later = inst.requested_time > savepoint_time
        if not later and savepoint_completion is not None and inst.is_completed:
            done = state.timeline.completion_time(inst.requested_time) or inst.requested_time
            later = done > savepoint_completion
        if later:
            out.append(inst)
    return sorted(out, key=lambda i: i.requested_time, reverse=True)


def restore(state: TableState, savepoint_time: str, options: OptionsLike = None) -> RestoreResult:
    """Restore the table to the savepoint ``savepoint_time``; see the module docstring.

    Raises :class:`InstantNotFoundError` when there is no such savepoint,
    :class:`ConflictError` when a live writer owns an instant to undo (or another restore
    is pending) and :class:`HudiliteError` when savepointed files are missing.
    """
    started = time.monotonic()
    savepoint = get_savepoint(state, savepoint_time)
    missing = sorted(f for f in savepoint.files if not state.gw.exists(f))
    if missing:
        raise HudiliteError(
            f"cannot restore to {savepoint_time}: {len(missing)} savepointed file(s) are gone "
            f"(e.g. {missing[0]})"
        )
    return _restore(state, savepoint_time, savepoint.completion_time, options, started)


def restore_to_instant(
    state: TableState, instant_time: str, options: OptionsLike = None
) -> RestoreResult:
    """Hudi's ``restoreToInstant``: restore the table to any completed instant of the active
    timeline, savepointed or not (what ``restore_to_instant`` calls).

    The instants undone are those a savepoint of ``instant_time`` would undo: requested
    after it, and on table version 8+ also those that completed after it did (Hudi's
    restore plan compares completion times there). Files older versions of the table need
    may have been cleaned already; unlike a savepoint, nothing pinned them. Raises
    :class:`InstantNotFoundError` for an instant that is not completed on the active
    timeline (Hudi: no completion time to restore to).
    """
    started = time.monotonic()
    target = state.timeline.get(instant_time)
    if target is None or not target.is_completed:
        latest = [i.requested_time for i in state.timeline.completed()][-3:]
        raise InstantNotFoundError(
            f"cannot restore to {instant_time}: no completed instant at that time on the "
            f"active timeline (latest: {', '.join(latest) or 'none'})"
        )
    return _restore(state, instant_time, target.completion_time, options, started)


def _restore(
    state: TableState,
    savepoint_time: str,
    savepoint_completion: str | None,
    options: OptionsLike,
    started: float,
) -> RestoreResult:
    """Plan (or resume) and run the restore to ``savepoint_time`` under the table lock."""
    opts = resolve_options(state, options)
    with table_lock(state.gw, opts):
        return _restore_locked(state, savepoint_time, savepoint_completion, opts, started)


def _restore_locked(
    state: TableState,
    savepoint_time: str,
    savepoint_completion: str | None,
    opts: cfg.Options,
    started: float,
) -> RestoreResult:
    gw, config = state.gw, state.config
    interval = int(opts.get(cfg.HEARTBEAT_INTERVAL_MS))
    misses = int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES))
    state = TableState.load(gw)
    writer = TimelineWriter(gw, config)
    pending = [i for i in state.timeline.filter(actions=RESTORE) if i.is_pending]
    record: dict[str, Any] = {}
    if pending:
        record = read_avro_record(
            state.timeline.instant_content(
                Instant(pending[-1].requested_time, RESTORE, State.REQUESTED)
            )
        )
        if record.get("savepointToRestoreTimestamp") != savepoint_time:
            raise ConflictError(
                f"restore {pending[-1].requested_time} to savepoint "
                f"{record.get('savepointToRestoreTimestamp')} is pending; finish it first"
            )
    else:
        busy = [
            i
            for i in instants_to_restore(state, savepoint_time, savepoint_completion)
            if (i.is_inflight or (i.is_pending and i.action in _WRITES))
            and not is_expired(gw, i.requested_time, interval, misses)
        ]
        if busy:
            raise ConflictError(
                f"cannot restore while {busy[0]} is being written (its heartbeat is fresh)"
            )
    # Newer savepoints pin files that are about to go; they are dropped before planning
    # (which also keeps them from shadowing the commits they share a time with).
    removed = tuple(t for t in savepoint_times(gw, config) if t > savepoint_time)
    for t in removed:
        delete_savepoint(state, t)
    if pending:
        planned = [(i["commitTime"], i["action"]) for i in record.get("instantsToRollback") or []]
        current = pending[-1]
        inflight = current if current.is_inflight else writer.transition_inflight(current)
    else:
        targets = instants_to_restore(TableState.load(gw), savepoint_time, savepoint_completion)
        plan = {
            "instantsToRollback": [instant_info(i) for i in targets],
            "version": RESTORE_PLAN_VERSION,
            "savepointToRestoreTimestamp": savepoint_time,
        }
        requested = writer.create_requested(RESTORE, None, _avro(restore_plan_schema(), plan))
        inflight = writer.transition_inflight(requested)
        planned = [(i.requested_time, i.action) for i in targets]
    restore_time = inflight.requested_time
    nested: dict[str, list[dict[str, Any]]] = {}
    undone: list[tuple[str, str]] = []
    deleted: list[str] = []
    for target_time, action in planned:
        state = TableState.load(gw)
        target = state.timeline.get(target_time)
        if target is None or target.action not in DATA_ACTIONS:
            continue  # rolled back before a crash
        result = perform_rollback(gw, config, target, files_written_by(state, target_time))
        nested[target_time] = [result.metadata]
        undone.append((target_time, action))
        deleted.extend(result.files_deleted)
    meta = {
        "startRestoreTime": restore_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [t for t, _ in undone],
        "hoodieRestoreMetadata": nested,
        "version": RESTORE_METADATA_VERSION,
        "restoreInstantInfo": [{"commitTime": t, "action": a} for t, a in undone],
        "extraMetadata": None,
    }
    done = writer.complete(inflight, _avro(restore_metadata_schema(), meta))
    for inst in Timeline.load(gw, config).filter(actions=ROLLBACK):
        if inst.requested_time > restore_time:
            writer.delete_files(inst.requested_time, [ROLLBACK])
    return RestoreResult(
        instant_time=restore_time,
        completion_time=done.completion_time,
        savepoint_time=savepoint_time,
        rolled_back=tuple(t for t, _ in undone),
        files_deleted=tuple(sorted(deleted)),
        savepoints_deleted=removed,
        duration_s=time.monotonic() - started,
    )
