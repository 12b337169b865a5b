"""Timeline-wide procedures: ``restore_to_instant`` and ``run_timeline_compaction``.

``restore_to_instant`` is Hudi 1.x's ``RestoreToInstantProcedure`` (apache/hudi
``0d4fec79``): a full point-in-time restore to any completed instant of the active
timeline, savepointed or not (``rollback_to_savepoint`` needs a savepoint). It runs
:func:`hudilite.services.restore.restore_to_instant` -- Hudi's restore plan, one rollback
per instant undone, the ``restore`` instant nesting their metadata -- under the table lock,
so a metadata table the table keeps is kept exact (its files partition is rebuilt from a
listing when the restore completes). Parameters: ``table`` or ``path``, ``instant_time``
(required unless ``audit_only``), ``enable_metadata`` (true), ``rollback_parallelism`` (4),
``enable_consistency_guard`` (false), ``audit_post_restore`` (false), ``audit_only``
(false), ``start_restore_time`` (only with ``audit_only``), checked against each other with
Hudi's messages. One row: ``restore_result``, ``start_restore_time`` (the restore's own
instant), ``time_taken_in_millis`` and ``instants_rolled_back`` from the restore metadata
(null with ``audit_only``), and ``audit_result``: ``PASSED`` when every file the restore's
rollbacks deleted is gone, ``FAILED`` when one is still there, ``INCONCLUSIVE`` when a check
failed; null without an audit. Differences from Hudi, by name: the rollbacks run in this
process (``rollback_parallelism`` must be positive and bounds nothing),
``enable_consistency_guard`` has no effect (the supported stores are strongly consistent),
and ``enable_metadata => false`` -- with which Hudi's writer deletes the metadata table --
is refused on a table whose options keep one (unset ``hoodie.metadata.enable`` instead).

``run_timeline_compaction`` is Hudi 1.x's ``RunTimelineCompactionProcedure``: the LSM
timeline writer's ``compactAndClean`` on the archived timeline of a table version 8+
(``.hoodie/timeline/history``): while a level holds ``hoodie.timeline.compaction.batch.size``
files, its oldest are merged into one file of the next level, then manifests beyond the
latest few are cleaned, as archival does after each run. One row: ``start_compaction_time``
(the instant time when it started) and ``time_taken_in_millis``. A table version 6 keeps its
archived timeline as log files (``.hoodie/archived``), with no LSM tree: Hudi's procedure
finds nothing there and returns a row anyway; hudilite refuses it by name instead.
"""

from __future__ import annotations

import time
from typing import Any

from hudilite import config as cfg
from hudilite.errors import InstantNotFoundError
from hudilite.metadata.sync import maintains_files
from hudilite.services import archive_formats as fmt
from hudilite.services._common import resolve_options
from hudilite.services.restore import restore_to_instant as restore_service
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.tablestate.properties_file import load as load_properties
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import RESTORE
from hudilite.timeline.instant_time import now_instant
from hudilite.timeline.metadata import read_avro_record
from hudilite.write.lock import table_lock

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

PASSED, FAILED, INCONCLUSIVE = "PASSED", "FAILED", "INCONCLUSIVE"


def _check_restore_args(ctx: ProcedureContext, args: dict[str, Any]) -> tuple[str, str]:
    """Hudi's cross-validation of ``instant_time`` / ``start_restore_time`` /
    ``audit_only``; returns both, stripped."""
    instant = str(args["instant_time"] or "").strip()
    start = str(args["start_restore_time"] or "").strip()
    audit_only = args["audit_only"]
    if not audit_only and not instant:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: instant_time is required when audit_only=false"
        )
    if audit_only and not start:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: start_restore_time is required when audit_only=true; pass the "
            "start_restore_time value from a prior restore_to_instant call"
        )
    if not audit_only and start:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: start_restore_time may only be specified when audit_only=true "
            f"(got {start!r})"
        )
    if audit_only and instant:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: instant_time may only be specified when audit_only=false (got "
            f"{instant!r}); use start_restore_time to identify a previously executed restore"
        )
    if args["rollback_parallelism"] <= 0:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: rollback_parallelism must be positive, got "
            f"{args['rollback_parallelism']}"
        )
    return instant, start


def _restore_metadata(state: TableState, restore_time: str) -> dict[str, Any] | None:
    """The ``HoodieRestoreMetadata`` of the completed restore ``restore_time``, else None."""
    inst = state.timeline.get(restore_time)
    if inst is None or inst.action != RESTORE or not inst.is_completed:
        return None
    return read_avro_record(state.timeline.instant_content(inst))


def audit(gw: FileSystemGateway, meta: dict[str, Any]) -> str:
    """Hudi's ``auditPostRestore``: every file a rollback of the restore deleted
    (``successDeleteFiles``, in partitions that still exist) must be gone."""
    present = errors = 0
    try:
        for rollbacks in (meta.get("hoodieRestoreMetadata") or {}).values():
            for rollback in rollbacks or []:
                for partition, pm in ((rollback or {}).get("partitionMetadata") or {}).items():
                    if not gw.exists(partition):
                        continue  # Hudi skips a partition folder that is gone
                    for f in (pm or {}).get("successDeleteFiles") or []:
                        try:
                            present += gw.exists(join(partition, str(f).rsplit("/", 1)[-1]))
                        except OSError:
                            errors += 1
    except (OSError, AttributeError, TypeError):
        return INCONCLUSIVE
    return FAILED if present else INCONCLUSIVE if errors else PASSED


@procedure(
    "restore_to_instant",
    [
        Param("table", "string"),
        Param("instant_time", "string"),
        Param("enable_metadata", "boolean", default=True),
        Param("rollback_parallelism", "integer", default=4),
        Param("enable_consistency_guard", "boolean", default=False),
        Param("audit_post_restore", "boolean", default=False),
        Param("audit_only", "boolean", default=False),
        Param("path", "string"),
        Param("start_restore_time", "string"),
    ],
    [
        Output("restore_result", "boolean"),
        Output("start_restore_time"),
        Output("time_taken_in_millis", "long"),
        Output("instants_rolled_back", "long"),
        Output("audit_result"),
    ],
    "Restores the table to any completed instant (no savepoint needed), rolling back every "
    "later instant; optionally audits that the restore's deleted files are gone.",
)
def restore_to_instant(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row: ``(true, restore instant, ms, instants rolled back, audit or null)``;
    with ``audit_only`` ``(null, null, null, null, audit)`` of the restore
    ``start_restore_time``."""
    instant, start = _check_restore_args(ctx, args)
    tbl = ctx.table(args)
    state = tbl.state()
    if not args["enable_metadata"] and maintains_files(load_properties(state.gw)):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: enable_metadata => false would delete the metadata table of "
            f"{state.config.name} (as Hudi's writer does); unset hoodie.metadata.enable on the "
            "table instead"
        )
    row: list[Any] = [None, None, None, None, None]
    if not args["audit_only"]:
        try:
            result = restore_service(state, instant, ctx.options)
        except InstantNotFoundError as exc:
            raise ProcedureError(f"{ctx.procedure}: {exc}") from None
        start = result.instant_time
        meta = _restore_metadata(tbl.state(), start) or {}
        row[:4] = [
            True,
            start,
            int(meta.get("timeTakenInMillis") or 0),
            len(meta.get("instantsToRollback") or []),
        ]
    if args["audit_only"] or args["audit_post_restore"]:
        meta_or_none = _restore_metadata(tbl.state(), start)
        if meta_or_none is None:
            raise ProcedureError(
                f"{ctx.procedure}: no completed restore instant found for {start}; pass the "
                "start_restore_time from a prior restore_to_instant call"
            )
        row[4] = audit(state.gw, meta_or_none)
    return [tuple(row)]


@procedure(
    "run_timeline_compaction",
    [Param("table", "string"), Param("path", "string")],
    [Output("start_compaction_time"), Output("time_taken_in_millis", "long")],
    "Compacts the LSM archived timeline (table version 8+): merges full levels of its "
    "files and cleans old manifests.",
)
def run_timeline_compaction(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row ``(start instant time, milliseconds)`` after ``compactAndClean``."""
    tbl = ctx.table(args)
    state = tbl.state()
    if state.config.layout_version < 2:
        raise ProcedureError(
            f"{ctx.procedure}: {state.config.name} is table version "
            f"{state.config.table_version}, whose archived timeline ({state.config.archive_dir}) "
            "is log files, not an LSM timeline; there is nothing to compact (upgrade the table "
            "to version 8 first)"
        )
    opts = resolve_options(state, ctx.options)
    batch = int(opts.get(cfg.LSM_COMPACTION_BATCH))
    if batch < 1:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {cfg.LSM_COMPACTION_BATCH.name} must be positive, got {batch}"
        )
    start = now_instant()
    started = time.monotonic()
    with table_lock(state.gw, opts):
        history = state.config.archive_dir
        if state.gw.exists(history):
            fmt.compact_lsm(state.gw, history, batch)
    return [(start, int((time.monotonic() - started) * 1000))]
