"""Operations: one statement or metadata request, its state and its result rows.

An :class:`Operation` runs at most once (inline for a synchronous ``ExecuteStatement``, on a
thread of its own for ``runAsync``), in a Spark job group named after its handle, so
``CancelOperation`` stops its Spark jobs (``SparkContext.cancelJobGroup``). A statement's
result is streamed one partition at a time, the next one prefetched, so the driver holds a
partition and one fetch batch, never the whole result: as Arrow record batches
(:func:`_arrow_batches`, then :func:`~.rowsets.column_batch` per fetch) when every shown
column has an Arrow type, else as rows (``toLocalIterator``). ``FETCH_FIRST`` starts the
stream again (the query runs again, as Spark's own server does without incremental
collect's cache).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from TCLIService import ttypes as tt

from .errors import CANCELLED, TIMED_OUT, ClientError, client_message, sqlstate_of
from .rowsets import ColumnSpec, column_batch, columns_of, display_arrow_schema, display_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Operation", "ResultTooLarge", "RowSource", "row_bytes"]

State = tt.TOperationState
_TERMINAL = (State.FINISHED_STATE, State.CANCELED_STATE, State.CLOSED_STATE, State.ERROR_STATE)


class Rows:
    """A result's rows, read a batch at a time."""

    def prime(self) -> None:
        """Read up to the first row (running the query that far)."""

    def take(self, n: int, max_bytes: int = 0) -> Sequence[tuple[Any, ...]]:
        """The next ``n`` rows at most (none at the end); their size in bytes is then
        :attr:`nbytes`. With ``max_bytes`` (0: any), rows larger than that together raise
        :class:`ResultTooLarge` instead, before they are made Python objects when the
        source allows it."""
        raise NotImplementedError

    #: The size of the rows the last :meth:`take` returned (:func:`row_bytes`' measure).
    nbytes: int = 0

    def close(self) -> None:
        """Free the rows' source."""


class _IterRows(Rows):
    """Rows from an iterator of row tuples."""

    def __init__(self, rows: Iterator[tuple[Any, ...]]) -> None:
        self._rows = rows

    def prime(self) -> None:
        first = list(itertools.islice(self._rows, 1))
        self._rows = itertools.chain(first, self._rows)

    def take(self, n: int, max_bytes: int = 0) -> list[tuple[Any, ...]]:
        rows = list(itertools.islice(self._rows, n))
        self.nbytes = sum(row_bytes(r) for r in rows)
        if max_bytes and self.nbytes > max_bytes:
            raise ResultTooLarge(self.nbytes)
        return rows

    def close(self) -> None:
        close = getattr(self._rows, "close", None)
        if close is not None:
            close()


class _ArrowRows(Rows):
    """Rows from a stream of Arrow record batches (of :func:`display_arrow_schema`'s
    schema): each :meth:`take` slices what it needs (no copy) and converts only that."""

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> None:
        self._batches = batches
        self._schema = schema
        self._pending: pa.RecordBatch | None = None
        self._pos = 0

    def _next_pending(self) -> bool:
        """Make the next non-empty batch the pending one; False at the end."""
        for batch in self._batches:
            if batch.num_rows:
                self._pending, self._pos = batch, 0
                return True
        self._pending = None
        return False

    def prime(self) -> None:
        self._next_pending()

    def take(self, n: int, max_bytes: int = 0) -> Sequence[tuple[Any, ...]]:
        parts = []
        self.nbytes = 0
        while n > 0:
            if (
                self._pending is None or self._pos >= self._pending.num_rows
            ) and not self._next_pending():
                break
            assert self._pending is not None
            part = self._pending.slice(self._pos, n)
            self._pos += part.num_rows
            n -= part.num_rows
            parts.append(part)
            self.nbytes += part.nbytes
            # why here: the Arrow slices are views; the Python rows would cost several times
            # their size, so an over-large result is refused before they are made
            if max_bytes and self.nbytes > max_bytes:
                raise ResultTooLarge(self.nbytes)
        return column_batch(pa.Table.from_batches(parts, schema=self._schema))

    def close(self) -> None:
        self._pending = None
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


class ResultTooLarge(Exception):
    """Rows larger than a fetch may take (``nbytes``: their size so far)."""

    def __init__(self, nbytes: int) -> None:
        super().__init__(nbytes)
        self.nbytes = nbytes


def row_bytes(row: tuple[Any, ...]) -> int:
    """About the size of a result row as Arrow holds it: the bytes of strings and
    binaries (one per character), 8 for any other value; no per-row overhead."""
    return sum(len(v) if isinstance(v, str | bytes | bytearray) else 8 for v in row)


#: Produces the result: (columns, a function returning a fresh row iterator or
#: :class:`Rows`) or None when the operation has no rows.
RowSource = tuple[list[ColumnSpec], Callable[[], Iterator[tuple[Any, ...]] | Rows]]


def new_handle_id() -> tt.THandleIdentifier:
    """A fresh handle (GUID and secret, 16 bytes each)."""
    return tt.THandleIdentifier(guid=uuid.uuid4().bytes, secret=uuid.uuid4().bytes)


#: Spark's choice of Arrow string and binary types (large ones when true).
_LARGE_VAR_TYPES = "spark.sql.execution.arrow.useLargeVarTypes"


def frame_rows(df: DataFrame) -> RowSource:
    """The columns of ``df`` and a function streaming its rows."""
    columns = columns_of(df.schema)
    shown = display_frame(df)

    def rows() -> Iterator[tuple[Any, ...]] | Rows:
        try:
            large = str(shown.sparkSession.conf.get(_LARGE_VAR_TYPES)).lower()
        except Exception:  # a Spark without the setting: no Arrow
            large = ""
        schema = (
            display_arrow_schema(shown.schema, large == "true")
            if large in ("true", "false")
            else None
        )
        if schema is not None:
            batches = _arrow_batches(shown, schema)
            if batches is not None:
                return _ArrowRows(batches, schema)
        return (tuple(r) for r in shown.toLocalIterator(prefetchPartitions=True))

    return columns, rows


#: Results the optimizer bounds to at most this many rows are collected in one go.
COLLECT_AT_ONCE_ROWS = 10_000


def _arrow_batches(df: DataFrame, schema: pa.Schema) -> Iterator[pa.RecordBatch] | None:
    """``df``'s rows as Arrow record batches, streamed as ``toLocalIterator`` streams rows
    (one partition at a time, the next one prefetched); None when this PySpark lacks the
    internals it uses (the caller then uses ``toLocalIterator``).

    No public PySpark API streams Arrow batches (``toArrow`` collects the whole result), so
    this joins the internals ``toLocalIterator`` and ``toArrow`` are built on: the JVM
    Dataset's ``toArrowBatchRdd`` (an RDD of Arrow IPC record batch messages without their
    schema, which is ``schema``: Spark's ArrowUtils mapping, as display_arrow_schema
    mirrors it), ``PythonRDD.toLocalIteratorAndServe`` (serves an RDD's partitions in
    order, one at a time, each element length-framed) and
    ``pyspark.util._local_iterator_from_socket`` with ``NoOpSerializer`` (reads the frames
    back as bytes). Unlike ``toLocalIterator`` the query runs without a SQL execution id
    (as ``DataFrame.rdd`` does): it is missing from the UI's SQL tab and query execution
    listeners do not hear of it. A result the plan bounds to :data:`COLLECT_AT_ONCE_ROWS`
    is collected at once instead (``DataFrame.toArrow``'s internals)."""
    try:
        # why: PySpark internals: a PySpark without them loses only this fast path
        from py4j.protocol import Py4JError, Py4JJavaError
        from pyspark.serializers import NoOpSerializer
        from pyspark.util import _local_iterator_from_socket
    except ImportError:
        return None
    try:
        bound = df._jdf.queryExecution().optimizedPlan().maxRows()
        small = bool(bound.isDefined()) and int(bound.get()) <= COLLECT_AT_ONCE_ROWS
    except (Py4JError, AttributeError):
        small = False
    if small and hasattr(df, "_collect_as_arrow"):
        # A result known to be small (an aggregate without GROUP BY, a LIMIT, VALUES) is
        # collected at once: the local iterator's extra job and socket cost ~30 ms, a third
        # of a small query. The batches carry Spark's own Arrow schema, ``schema``'s twin.
        collected = df._collect_as_arrow()  # type: ignore[operator]  # private: typed as a column
        return (b if b.schema == schema else b.cast(schema) for b in collected)
    sc = df.sparkSession.sparkContext
    try:
        rdd = df._jdf.toArrowBatchRdd()
        sock_info = sc._jvm.PythonRDD.toLocalIteratorAndServe(rdd, True)  # type: ignore[union-attr]
    except Py4JJavaError:
        raise  # the query's own failure
    except (Py4JError, AttributeError):
        return None  # no such method in this Spark
    messages = _local_iterator_from_socket(sock_info, NoOpSerializer())
    return (pa.ipc.read_record_batch(pa.py_buffer(m), schema) for m in messages)


def _run_as(spark: SparkSession, user: str | None) -> None:
    """Make ``current_user()`` (``session_user()``, ``user()``) of the queries this thread
    runs ``user`` (None: back to the JVM's user), as Spark's own Thrift server does: the
    optimizer reads Spark's ``CurrentUserContext``, a thread-local of the JVM thread py4j
    pins to this Python thread (threads it starts inherit it)."""
    try:
        current = spark._jvm.org.apache.spark.sql.catalyst.CurrentUserContext.CURRENT_USER()  # type: ignore[union-attr]
        if user is None:
            current.remove()
        else:
            current.set(user)
    except Exception:  # a Spark without it: current_user() stays the server's OS user
        if user is not None:
            raise


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
        *,
        user: str | None = None,
        timeout: float = 0.0,
        result_limit: int = 0,
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
        self.ended: float | None = None  # monotonic, as last_access
        self.last_access = time.monotonic()
        self._spark = spark
        self._work = work
        self._columns: list[ColumnSpec] = []
        self._make_rows: Callable[[], Iterator[tuple[Any, ...]] | Rows] = lambda: iter(())
        self._rows: Rows | None = None
        self._offset = 0
        self._lock = threading.RLock()  # one fetch at a time; cancel and close take it too
        self._thread: threading.Thread | None = None
        self.user = user
        self.timeout = timeout
        self.result_limit = result_limit  # rows a client may fetch (0: any)
        #: Bytes of rows a client may fetch (0: any); the registry sets the server's.
        self.result_bytes_limit = 0
        self._sent_bytes = 0
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------------ running
    def run(self, run_async: bool) -> None:
        """Run the operation inline, or on a thread when ``run_async``; not at all when it
        was closed or cancelled before it started (its session closed meanwhile)."""
        if self.state != State.INITIALIZED_STATE:
            return
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
        if self.timeout > 0:
            self._timer = threading.Timer(self.timeout, self._time_out)
            self._timer.daemon = True
            self._timer.start()
        try:
            # A job group per operation: CancelOperation cancels exactly its jobs.
            sc.setJobGroup(self.group, self.description, interruptOnCancel=True)
            _run_as(self._spark, self.user)
            source = self._work()
            if source is not None:
                self._columns, self._make_rows = source
                with self._lock:
                    self._start_rows()
        except BaseException as exc:  # every failure becomes the operation's error state
            if self.state not in (State.CANCELED_STATE, State.ERROR_STATE):
                self.sqlstate = sqlstate_of(exc)
                self.error = client_message(exc)
                self.state = State.ERROR_STATE
            if not isinstance(exc, Exception):
                raise
        else:
            if self.state not in (State.CANCELED_STATE, State.CLOSED_STATE, State.ERROR_STATE):
                self.state = State.FINISHED_STATE
        finally:
            if self._timer is not None:
                self._timer.cancel()
            self.completed = time.time()
            self.ended = time.monotonic()
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            _run_as(self._spark, None)

    def _time_out(self) -> None:
        """The statement ran past its timeout: cancel its jobs, fail it (``HYT00``)."""
        if self.state not in (State.PENDING_STATE, State.RUNNING_STATE):
            return
        self.state = State.ERROR_STATE
        self.sqlstate = TIMED_OUT
        self.error = f"the statement timed out after {self.timeout:g} s and was cancelled"
        # Until the statement ends: a job it submits after a cancel (the next step of a
        # write, or a query still being planned a moment ago) is cancelled in turn.
        while self.ended is None:
            self._spark.sparkContext.cancelJobGroup(self.group)
            time.sleep(0.25)

    def _start_rows(self) -> None:
        """Start (or restart) the row iterator and run the query up to its first row, so a
        failing query fails here, as the statement, not in a later fetch."""
        self._offset = 0
        self._sent_bytes = 0
        rows = self._make_rows()
        self._rows = rows if isinstance(rows, Rows) else _IterRows(rows)
        self._rows.prime()

    # ------------------------------------------------------------------ state
    @property
    def columns(self) -> list[ColumnSpec]:
        """The result's columns (available once the operation finished)."""
        return self._columns

    def wait(self, timeout: float | None = None) -> None:
        """Wait for an asynchronous run to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    def outcome_seen(self) -> bool:
        """Whether the client asked about this operation after it ended (or closed it)."""
        if self.state == State.CLOSED_STATE:
            return True
        return self.ended is not None and self.last_access >= self.ended

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
        if rows is not None:
            # The iterator's socket may already be gone.
            with contextlib.suppress(Exception):
                rows.close()

    # ------------------------------------------------------------------ fetching
    def fetch(self, max_rows: int, first: bool) -> tuple[int, Sequence[tuple[Any, ...]]]:
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
                # The query runs again in the operation's job group. Only starting needs it:
                # the JVM thread serving the partitions (one job each) inherits the group
                # when the rows start, here or in _execute, so later fetches set nothing.
                sc = self._spark.sparkContext
                sc.setJobGroup(self.group, self.description, interruptOnCancel=True)
                _run_as(self._spark, self.user)
                try:
                    self._close_rows()
                    self._start_rows()
                finally:
                    sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
                    _run_as(self._spark, None)
            if self._rows is None:
                return self._offset, []
            wanted = max(1, max_rows)
            if self.result_limit > 0:
                if self._offset >= self.result_limit:
                    if self._rows.take(1):
                        self._close_rows()
                        raise ClientError(
                            f"the result has more than {self.result_limit} rows, the server's "
                            "limit (hudilite.thriftserver.max.result.rows): add a LIMIT or a "
                            "narrower WHERE"
                        )
                    self._close_rows()
                    return self._offset, []
                wanted = min(wanted, self.result_limit - self._offset)
            budget = 0
            if self.result_bytes_limit > 0:
                # At least 1: nothing left to send fails on the next non-empty row.
                budget = max(1, self.result_bytes_limit - self._sent_bytes)
            try:
                batch = self._rows.take(wanted, budget)
            except ResultTooLarge:
                self._close_rows()
                raise ClientError(
                    f"the result is larger than {self.result_bytes_limit} bytes, the server's "
                    "limit (hudilite.thriftserver.max.result.bytes): add a LIMIT, select "
                    "fewer columns or a narrower WHERE"
                ) from None
            self._sent_bytes += self._rows.nbytes
            start = self._offset
            self._offset += len(batch)
            if not batch:
                self._close_rows()
            return start, batch
