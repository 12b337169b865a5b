"""Operations: one statement or metadata request, its state and its result rows.

An :class:`Operation` runs at most once (inline for a synchronous ``ExecuteStatement``, on a
thread of its own for ``runAsync``), in a Spark job group named after its handle, so
``CancelOperation`` stops its Spark jobs (``SparkContext.cancelJobGroup``). A statement's
result is streamed: the DataFrame is read with ``toLocalIterator`` (one partition at a time,
the next one prefetched), so the driver holds a partition and one fetch batch, never the
whole result. ``FETCH_FIRST`` starts the iterator again (the query runs again, as Spark's own
server does without incremental collect's cache).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from TCLIService import ttypes as tt

from .errors import CANCELLED, ClientError, client_message, sqlstate_of
from .rowsets import ColumnSpec, columns_of, display_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Operation", "RowSource"]

State = tt.TOperationState
_TERMINAL = (State.FINISHED_STATE, State.CANCELED_STATE, State.CLOSED_STATE, State.ERROR_STATE)

#: Produces the result: (columns, a function returning a fresh row iterator) or None when
#: the operation has no rows.
RowSource = tuple[list[ColumnSpec], Callable[[], Iterator[tuple[Any, ...]]]]


def new_handle_id() -> tt.THandleIdentifier:
    """A fresh handle (GUID and secret, 16 bytes each)."""
    return tt.THandleIdentifier(guid=uuid.uuid4().bytes, secret=uuid.uuid4().bytes)


def frame_rows(df: DataFrame) -> RowSource:
    """The columns of ``df`` and a function streaming its rows."""
    columns = columns_of(df.schema)
    shown = display_frame(df)

    def rows() -> Iterator[tuple[Any, ...]]:
        return (tuple(r) for r in shown.toLocalIterator(prefetchPartitions=True))

    return columns, rows


def static_rows(columns: list[ColumnSpec], rows: Sequence[tuple[Any, ...]]) -> RowSource:
    """A small in-memory result (metadata requests)."""
    return columns, lambda: iter(rows)


class Operation:
    """One operation of a session; ``work`` computes its result (a :data:`RowSource`)."""

    def __init__(
        self,
        spark: SparkSession,
        op_type: int,
        work: Callable[[], RowSource | None],
        description: str,
    ) -> None:
        self.handle = tt.TOperationHandle(
            operationId=new_handle_id(), operationType=op_type, hasResultSet=True
        )
        self.key = bytes(self.handle.operationId.guid)
        self.group = f"hudilite-thrift-{uuid.UUID(bytes=self.key)}"
        self.description = description[:200]
        self.state: int = State.INITIALIZED_STATE
        self.sqlstate: str | None = None
        self.error: str | None = None
        self.started = time.time()
        self.completed: float | None = None
        self.last_access = time.monotonic()
        self._spark = spark
        self._work = work
        self._columns: list[ColumnSpec] = []
        self._make_rows: Callable[[], Iterator[tuple[Any, ...]]] = lambda: iter(())
        self._rows: Iterator[tuple[Any, ...]] | None = None
        self._offset = 0
        self._lock = threading.RLock()  # one fetch at a time; cancel and close take it too
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ running
    def run(self, run_async: bool) -> None:
        """Run the operation inline, or on a thread when ``run_async``."""
        self.state = State.PENDING_STATE if run_async else State.RUNNING_STATE
        if run_async:
            self._thread = threading.Thread(
                target=self._execute, name=f"op-{self.group[-8:]}", daemon=True
            )
            self._thread.start()
        else:
            self._execute()

    def _execute(self) -> None:
        self.state = State.RUNNING_STATE
        sc = self._spark.sparkContext
        try:
            # A job group per operation: CancelOperation cancels exactly its jobs.
            sc.setJobGroup(self.group, self.description, interruptOnCancel=True)
            source = self._work()
            if source is not None:
                self._columns, self._make_rows = source
                with self._lock:
                    self._start_rows()
        except BaseException as exc:  # every failure becomes the operation's error state
            if self.state != State.CANCELED_STATE:
                self.sqlstate = sqlstate_of(exc)
                self.error = client_message(exc)
                self.state = State.ERROR_STATE
            if not isinstance(exc, Exception):
                raise
        else:
            if self.state not in (State.CANCELED_STATE, State.CLOSED_STATE):
                self.state = State.FINISHED_STATE
        finally:
            self.completed = time.time()
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]

    def _start_rows(self) -> None:
        """Start (or restart) the row iterator and run the query up to its first row, so a
        failing query fails here, as the statement, not in a later fetch."""
        self._offset = 0
        rows = self._make_rows()
        first = list(itertools.islice(rows, 1))
        self._rows = itertools.chain(first, rows)

    # ------------------------------------------------------------------ state
    @property
    def columns(self) -> list[ColumnSpec]:
        """The result's columns (available once the operation finished)."""
        return self._columns

    def wait(self, timeout: float | None = None) -> None:
        """Wait for an asynchronous run to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    def touch(self) -> None:
        """Record a client request on this operation (idle timeout)."""
        self.last_access = time.monotonic()

    def cancel(self) -> None:
        """Stop the operation's Spark jobs; it ends in ``CANCELED_STATE``."""
        if self.state in _TERMINAL and self.state != State.FINISHED_STATE:
            return
        self.state = State.CANCELED_STATE
        self.sqlstate, self.error = CANCELLED, "the operation was cancelled"
        self._spark.sparkContext.cancelJobGroup(self.group)
        self._close_rows()

    def close(self) -> None:
        """Cancel if still running, free the row iterator; ``CLOSED_STATE``."""
        if self.state in (State.PENDING_STATE, State.RUNNING_STATE, State.INITIALIZED_STATE):
            self._spark.sparkContext.cancelJobGroup(self.group)
        self.state = State.CLOSED_STATE
        self._close_rows()

    def _close_rows(self) -> None:
        rows, self._rows = self._rows, None
        close = getattr(rows, "close", None)
        if close is not None:
            # The iterator's socket may already be gone.
            with contextlib.suppress(Exception):
                close()

    # ------------------------------------------------------------------ fetching
    def fetch(self, max_rows: int, first: bool) -> tuple[int, list[tuple[Any, ...]]]:
        """Up to ``max_rows`` rows from the current position (from the start when
        ``first``): ``(offset of the first row, rows)``."""
        with self._lock:
            if self.state == State.ERROR_STATE:
                raise ClientError(self.error or "the operation failed", self.sqlstate or "HY000")
            if self.state == State.CANCELED_STATE:
                raise ClientError("the operation was cancelled", CANCELLED)
            if self.state == State.CLOSED_STATE:
                raise ClientError("the operation is closed")
            if self.state != State.FINISHED_STATE:
                raise ClientError("the operation has not finished: poll GetOperationStatus")
            if first:
                self._close_rows()
                self._start_rows()
            if self._rows is None:
                return self._offset, []
            sc = self._spark.sparkContext
            sc.setJobGroup(self.group, self.description, interruptOnCancel=True)
            try:
                batch = list(itertools.islice(self._rows, max(1, max_rows)))
            finally:
                sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            start = self._offset
            self._offset += len(batch)
            if not batch:
                self._close_rows()
            return start, batch
