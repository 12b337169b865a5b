"""The table services a write runs after its commit: Hudi's inline services policy.

After every committed write (``Table.write``, a partition delete or truncate; SQL writes
and ``hudilite.save`` go through ``Table.write``) :func:`after_write` decides, in Hudi's
order, what runs before the call returns:

1. **compaction** of a merge-on-read table: with ``hoodie.compact.inline`` a plan is
   scheduled when its trigger fires and every pending plan runs; with only
   ``hoodie.compact.schedule.inline`` a plan is scheduled and left for a later run.
   A :class:`~hudilite.errors.ConflictError` (another writer is mid-way through a plan)
   skips the compaction; the next write tries again.
2. **cleaning** with ``hoodie.clean.automatic`` (default on);
3. **archival** with ``hoodie.archive.automatic`` (default on), beyond
   ``hoodie.keep.max.commits``, as Hudi's archiver.

The cleaner and the archiver are asked first, from the timeline alone, whether they could
do anything (:func:`~hudilite.services.clean.may_clean`,
:func:`~hudilite.services.archive.may_archive`): most writes neither clean nor archive
and then skip the services' locks, re-loads and listings.

The policy is plain engine code: the compaction's operations run in this process unless
the caller passes a ``runner`` (the facade passes
:func:`hudilite.spark.services_job.spark_runner`, one Spark task per file group).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConflictError
from hudilite.services.archive import archive, may_archive
from hudilite.services.clean import clean, may_clean
from hudilite.services.compaction import Runner, compact, schedule_compaction
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.write.result import WriteResult


def after_write(
    gw: FileSystemGateway,
    result: WriteResult,
    options: Mapping[str, Any] | None = None,
    *,
    runner: Runner | None = None,
) -> WriteResult:
    """Run the inline services the table's and the write's ``options`` ask for after
    ``result``'s commit on the table at ``gw``; returns ``result`` with their results in
    ``extra``: ``compactions`` (the completed compactions), ``compaction_skipped`` (the
    conflict that deferred them), ``scheduled_compaction`` (a plan, or None), ``clean``
    (a :class:`~hudilite.services.clean.CleanResult`, or None when nothing was due) and
    ``archive`` (an :class:`~hudilite.services.archive.ArchiveResult`, when it archived).
    ``runner`` executes the compaction's operations (default: in this process)."""
    given = {k: str(v) for k, v in (options or {}).items()}
    state = TableState.load(gw)
    opts = state.options(given)
    extra = dict(result.extra)
    if state.config.is_mor and opts.get(cfg.INLINE_COMPACT):
        try:
            extra["compactions"] = compact(state, given, schedule=True, runner=runner)
        except ConflictError as exc:  # a concurrent writer is mid-way: compact next time
            extra["compaction_skipped"] = str(exc)
        state = TableState.load(gw)
    elif state.config.is_mor and opts.get(cfg.SCHEDULE_INLINE_COMPACT):
        extra["scheduled_compaction"] = schedule_compaction(state, given)
        if extra["scheduled_compaction"] is not None:
            state = TableState.load(gw)  # a plan joined the timeline
    # ``state`` is current unless another writer committed since; that writer runs the
    # services after its own commit (and both services re-load under their lock).
    if opts.get(cfg.AUTO_CLEAN):
        extra["clean"] = clean(state, given) if may_clean(state, given) else None
        if extra["clean"] is not None:
            state = TableState.load(gw)  # the clean completed an instant
    if opts.get(cfg.AUTO_ARCHIVE) and may_archive(state, given):
        archived = archive(state, given)
        if archived.num_archived:
            extra["archive"] = archived
    return dataclasses.replace(result, extra=extra)


__all__ = ["after_write"]
