"""Compaction beside a stream: plans scheduled by the sink, executed by a driver thread.

A merge-on-read table written by :meth:`hudilite.Table.write_stream` compacts the way
Hudi's Spark streaming sink does (``hoodie.datasource.compaction.async.enable``, Flink's
``compaction.async.enabled``; on by default for streamed MOR tables): after each commit the
sink *schedules* a compaction when the trigger strategy says so
(``hoodie.compact.inline.trigger.strategy``, ``...max.delta.commits``,
``...max.delta.seconds``). Scheduling is cheap and runs under the table lock with
:func:`hudilite.services.compaction.schedule_compaction`'s rules: on table version 8 the
later delta commits' logs attach to the new slice by completion time; on version 6 it is
refused while a write is in flight (the sink then tries again after its next commit). An
:class:`AsyncCompactor` thread in the driver *executes* the pending plans as Spark jobs
(Spark runs jobs of several threads at once) while the next micro-batches keep appending
log files; so ingestion never waits for a compaction.

Why a thread and not inline: compaction rewrites whole file groups and can take many
trigger intervals; inline it would stall the stream (Hudi moved streams to async
compaction for this reason).

Stopping: the thread notices the query ended (or :meth:`AsyncCompactor.stop`), finishes
the compaction it is running, if any, and exits; plans not started stay requested for the
next run or ``Table.compact()``. A driver that dies mid-compaction leaves the instant
inflight with a stale heartbeat: the next attempt (this thread after a restart, or any
``compact()``) rolls it back under the table lock and runs the plan again
(:func:`hudilite.services._common.take_over_expired`), so a crash never loses or
duplicates a row. A compaction another process is executing (live heartbeat) is left to
it. Any other failure is rolled back by the service (the plan stays requested) and kept
in :attr:`AsyncCompactor.error`: the sink raises it at the next micro-batch, as Hudi's
sink fails the query when its compactor died.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import SparkSession

from hudilite import config as cfg
from hudilite.errors import ConflictError, TimelineError, WriteError
from hudilite.services.compaction import (
    CompactionResult,
    pending_compactions,
    schedule_compaction,
)
from hudilite.spark.services_job import execute_compaction_spark
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState

log = logging.getLogger(__name__)

#: Seconds between the thread's checks of the query and the timeline when not woken.
POLL_SECONDS = 1.0


def async_compaction_enabled(state: TableState, options: Mapping[str, Any] | None) -> bool:
    """Whether a stream with ``options`` into ``state``'s table compacts asynchronously:
    a MOR table, ``hoodie.datasource.compaction.async.enable`` (default true) and
    ``hoodie.compact.inline`` not set to true under its own name (Hudi's rule: inline
    compaction asked for explicitly wins)."""
    if not state.config.is_mor:
        return False
    opts = state.options({k: str(v) for k, v in (options or {}).items()})
    inline_own = any(name in opts for name in cfg.INLINE_COMPACT.all_names())
    if inline_own and opts.get(cfg.INLINE_COMPACT):
        return False
    return bool(opts.get(cfg.ASYNC_COMPACT))


def write_options(options: Mapping[str, Any] | None) -> dict[str, str]:
    """The options of each micro-batch write when compaction runs asynchronously: no
    inline compaction or inline scheduling (the sink schedules, the thread executes)."""
    opts = cfg.Options(options).with_overrides(
        {cfg.INLINE_COMPACT.name: "false", cfg.SCHEDULE_INLINE_COMPACT.name: "false"}
    )
    return dict(opts.raw)


class AsyncCompactor:
    """Executes a table's pending compaction plans in a daemon thread of the driver.

    ``spark`` runs the compaction jobs; ``options`` are the stream's write options (the
    heartbeat, lock and compaction settings among them); ``is_active()`` tells whether the
    stream still runs (the thread exits when it returns False).
    """

    def __init__(
        self,
        spark: SparkSession,
        gw: FileSystemGateway,
        options: Mapping[str, Any] | None = None,
        *,
        is_active: Callable[[], bool] | None = None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.spark = spark
        self.gw = gw
        self.options = {k: str(v) for k, v in (options or {}).items()}
        self.is_active = is_active or (lambda: True)
        self.poll_seconds = poll_seconds
        #: Every compaction this compactor completed, in order.
        self.completed: list[CompactionResult] = []
        #: The last failure (the plan was rolled back and stays requested), else None.
        self.error: BaseException | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the sink's side
    def schedule(self) -> str | None:
        """After a commit: schedule a compaction if the trigger fires; wakes the thread.
        Returns the new plan's instant time, else None (not triggered, nothing to
        compact, or refused on version 6 while a write is in flight)."""
        state = TableState.load(self.gw)
        try:
            planned = schedule_compaction(state, self.options)
        except ConflictError as exc:  # v6: a concurrent write is in flight; next commit
            log.info("compaction not scheduled: %s", exc)
            planned = None
        if planned is not None or pending_compactions(TableState.load(self.gw)):
            self._wake.set()
        return planned.instant_time if planned is not None else None

    def raise_if_failed(self) -> None:
        """Raise the last compaction failure (once) so the stream reports it."""
        error, self.error = self.error, None
        if error is not None:
            raise WriteError(f"async compaction failed: {error}") from error

    # ---------------------------------------------------------------- the thread's side
    def start(self) -> AsyncCompactor:
        """Start the thread (once); returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name=f"hudilite-async-compaction-{self.gw.abs_path('')}"
            )
            self._thread.daemon = True  # a dying driver abandons it; recovery rolls back
            self._thread.start()
        return self

    def run_pending(self) -> list[CompactionResult]:
        """Execute every pending plan now (``hoodie.compaction.order``), in this thread;
        plans another process is executing are skipped. Returns those completed."""
        state = TableState.load(self.gw)
        order = str(state.options(self.options).get(cfg.COMPACTION_ORDER))
        done = []
        for instant in pending_compactions(state, order):
            if self._stopping.is_set() and threading.current_thread() is self._thread:
                break  # stopping: leave plans not started for the next run
            try:
                result = execute_compaction_spark(
                    self.spark, TableState.load(self.gw), instant.requested_time, self.options
                )
            except (ConflictError, TimelineError) as exc:  # another process has it / done
                log.info("compaction %s skipped: %s", instant.requested_time, exc)
                continue
            done.append(result)
            self.completed.append(result)
        return done

    def stop(self, *, wait: bool = True, finish_pending: bool = False) -> None:
        """Stop the thread after the compaction it is running; with ``wait`` join it, and
        with ``finish_pending`` then run the remaining plans in the calling thread."""
        self._stopping.set()
        self._wake.set()
        if wait and self._thread is not None:
            self._thread.join()
        if finish_pending:
            self.run_pending()

    @property
    def running(self) -> bool:
        """True while the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _loop(self) -> None:
        self._wake.set()  # plans left by an earlier run (or a crash) first
        while not self._stopping.is_set():
            self._wake.wait(self.poll_seconds)
            woken = self._wake.is_set()
            self._wake.clear()
            try:
                if not _alive(self.is_active):
                    break
                if woken:
                    self.run_pending()
            except Exception as exc:  # rolled back by the service; reported to the sink
                if self._stopping.is_set() or not _alive(self.is_active):
                    break  # the session is going away under us: the run was abandoned
                log.warning("async compaction failed: %s", exc)
                self.error = exc


def _alive(is_active: Callable[[], bool]) -> bool:
    """``is_active()``, False when asking fails (the session or its JVM is gone)."""
    try:
        return bool(is_active())
    except Exception:
        return False
