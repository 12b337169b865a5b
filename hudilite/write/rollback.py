"""Rolling back a failed (pending) write: rollback instant, data files deleted.

A write that dies leaves a requested/inflight instant and maybe data files
named with its instant time. Readers never see those files (their instant is
not completed); the next writer calls :func:`rollback_failed_writes`, which
rolls back every pending write whose heartbeat expired, the way Hudi's lazy
failed-writes cleaning does: a ``rollback`` instant with an Avro plan and
metadata listing the deleted files, then the failed instant's files removed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hudilite import failpoints
from hudilite.config import TableConfig
from hudilite.filegroup.view import FileSystemView
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.heartbeat import is_expired
from hudilite.timeline.instant import (
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.markers import delete_markers, marked_files

WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
ROLLBACK_VERSION = 1


@dataclass(frozen=True)
class RollbackResult:
    """What a rollback did: its own instant, the instant undone and the files deleted."""

    rollback_instant: str
    rolled_back_instant: str
    files_deleted: list[str]


def _instant_info(instant: Instant) -> dict[str, str]:
    return {"commitTime": instant.requested_time, "action": instant.action}


def rollback_pending_instant(
    gw: FileSystemGateway, config: TableConfig, timeline: Timeline, instant: Instant
) -> RollbackResult:
    """Undo one pending write instant: delete its data files and its instant files.

    The rollback is itself recorded on the timeline (requested plan, inflight,
    completed metadata) so that other Hudi tools see what happened.
    """
    writer = TimelineWriter(gw, config)
    view = FileSystemView(gw, config, timeline)
    # Marked files first: version-6 log names carry their slice's base instant, not ours.
    files = sorted(
        set(view.files_of_instant(instant.requested_time))
        | {p for p in marked_files(gw, instant.requested_time) if gw.exists(p)}
    )
    by_partition: dict[str, list[str]] = {}
    for rel in files:
        partition = rel.rsplit("/", 1)[0] if "/" in rel else ""
        by_partition.setdefault(partition, []).append(rel)
    started = time.monotonic()
    rb_time = writer.new_instant_time()
    plan = {
        "instantToRollback": _instant_info(instant),
        "RollbackRequests": [
            {
                "partitionPath": partition,
                "fileId": "",
                "latestBaseInstant": instant.requested_time,
                "filesToBeDeleted": [gw.abs_path(p) for p in rels],
                "logBlocksToBeDeleted": {},
            }
            for partition, rels in sorted(by_partition.items())
        ],
        "version": ROLLBACK_VERSION,
    }
    requested = writer.create_requested(
        ROLLBACK, rb_time, write_avro_record("HoodieRollbackPlan", plan)
    )
    inflight = writer.transition_inflight(requested)
    failpoints.check(None, "rollback_after_plan")
    deleted: list[str] = []
    for rel in files:
        if gw.exists(rel):
            gw.delete_file(rel)
        deleted.append(rel)
        failpoints.check(None, "rollback_mid_delete")
    failpoints.check(None, "rollback_before_complete")
    meta = {
        "startRollbackTime": requested.requested_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(deleted),
        "commitsRollback": [instant.requested_time],
        "partitionMetadata": {
            partition: {
                "partitionPath": partition,
                "successDeleteFiles": [gw.abs_path(p) for p in rels],
                "failedDeleteFiles": [],
                "rollbackLogFiles": {},
                "logFilesFromFailedCommit": {},
            }
            for partition, rels in sorted(by_partition.items())
        },
        "version": ROLLBACK_VERSION,
        "instantsRollback": [_instant_info(instant)],
    }
    writer.complete(inflight, write_avro_record("HoodieRollbackMetadata", meta))
    failpoints.check(None, "rollback_after_complete")
    writer.delete_instant_files(instant)
    delete_markers(gw, instant.requested_time)
    return RollbackResult(requested.requested_time, instant.requested_time, deleted)


def _is_clustering(timeline: Timeline, instant: Instant) -> bool:
    """True for a version-6 pending clustering: a replacecommit whose request holds a
    clustering plan. Hudi never rolls those back as failed writes; clustering rolls back
    its own abandoned attempts (``hudilite.services.clustering``)."""
    if instant.action != REPLACE_COMMIT:
        return False
    try:
        data = timeline.instant_content(
            Instant(instant.requested_time, REPLACE_COMMIT, State.REQUESTED)
        )
        return bool(data.strip()) and read_avro_record(data).get("operationType") == "CLUSTER"
    except Exception:  # no or unreadable request: an ordinary write
        return False


def rollback_failed_writes(
    gw: FileSystemGateway,
    config: TableConfig,
    *,
    heartbeat_interval_ms: int,
    tolerable_misses: int,
    exclude: str | None = None,
) -> list[RollbackResult]:
    """Roll back every pending write instant whose writer is gone (heartbeat expired)."""
    timeline = Timeline.load(gw, config)
    results = []
    for instant in timeline.pending():
        if instant.action not in WRITE_ACTIONS or instant.requested_time == exclude:
            continue
        if _is_clustering(timeline, instant):
            continue  # a table service awaiting execution (v6 spells it replacecommit)
        if not is_expired(gw, instant.requested_time, heartbeat_interval_ms, tolerable_misses):
            continue  # another writer is still working on it
        results.append(rollback_pending_instant(gw, config, timeline, instant))
        timeline = Timeline.load(gw, config)
    return results
