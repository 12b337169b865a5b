"""Helpers shared by the Spark tests: hudi-rs reads, row normalisation, a dict oracle."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

#: JVM options for the short-lived Spark JVMs the tests start (writer subprocesses, cluster
#: drivers, executors and daemons): the C1 compiler only and the serial collector. A JVM that
#: lives for a few jobs spends much of its CPU in the C2 compiler and G1's threads; with
#: these it starts and runs its first jobs about twice as fast on two cores. Performance
#: flags only: nothing a test checks depends on them.
FAST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

META = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]


def sql_rows(session: Any, sql: str) -> list[tuple[Any, ...]]:
    """The rows of a SQL statement run through a hudilite (or Spark) session, as tuples."""
    return [tuple(r) for r in session.sql(sql).collect()]


def call(session: Any, text: str) -> list[tuple[Any, ...]]:
    """The rows of ``CALL text`` (a procedure call) as tuples."""
    return sql_rows(session, f"CALL {text}")


def hudi_rs_read(path: str, **opts: str) -> pa.Table:
    """Read a table with hudi-rs (``hudi==0.5.0``), the independent oracle."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    ro = HudiReadOptions()
    if "as_of" in opts:
        ro = ro.with_as_of_timestamp(opts["as_of"])
    if "start" in opts:
        ro = ro.with_query_type(HudiQueryType.Incremental).with_start_timestamp(opts["start"])
        if opts.get("end"):
            ro = ro.with_end_timestamp(opts["end"])
    if opts.get("read_optimized"):
        ro = ro.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    batches = table.read(ro)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def _norm(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return (
            v.replace(tzinfo=None)
            if v.tzinfo is None
            else v.astimezone(dt.UTC).replace(tzinfo=None)
        )
    if isinstance(v, float):
        return round(v, 9)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    if isinstance(v, list):
        # maps come back from arrow as lists of (key, value) tuples
        return tuple(_norm(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_norm(x) for x in v)
    return v


def rows(table: pa.Table, columns: Sequence[str] | None = None) -> list[tuple]:
    """Sorted, normalised tuples of ``columns`` (default: all) for exact comparisons."""
    if table.num_columns == 0:
        return []
    cols = list(columns) if columns is not None else table.column_names
    data = table.select(cols).to_pylist()
    return sorted((tuple(_norm(r[c]) for c in cols) for r in data), key=repr)


def spark_rows(df: Any, columns: Sequence[str]) -> list[tuple]:
    """Sorted normalised tuples of a Spark DataFrame's ``columns``."""
    return rows(df.select(*columns).toArrow(), columns)


class DictOracle:
    """A plain-dict model of a Hudi table with event-time ordering (null ordering lowest)."""

    def __init__(self, key_cols: Sequence[str], ordering: str | None) -> None:
        self.key_cols = list(key_cols)
        self.ordering = ordering
        self.state: dict[tuple, dict[str, Any]] = {}

    def key(self, rec: dict[str, Any]) -> tuple:
        return tuple(rec[c] for c in self.key_cols)

    def _wins(self, new: dict[str, Any], old: dict[str, Any]) -> bool:
        if self.ordering is None:
            return True
        a, b = new.get(self.ordering), old.get(self.ordering)
        if b is None:
            return True
        if a is None:
            return False
        return a >= b

    def upsert(self, records: Iterable[dict[str, Any]]) -> None:
        batch: dict[tuple, dict[str, Any]] = {}
        for rec in records:  # precombine: later record wins ties
            k = self.key(rec)
            if k not in batch or self._wins(rec, batch[k]):
                batch[k] = rec
        for k, rec in batch.items():
            old = self.state.get(k)
            if old is None or self._wins(rec, old):
                if rec.get("_hoodie_is_deleted"):
                    self.state.pop(k, None)
                else:
                    self.state[k] = {c: v for c, v in rec.items() if c != "_hoodie_is_deleted"}

    def delete(self, keys: Iterable[tuple]) -> None:
        for k in keys:
            self.state.pop(k, None)

    def rows(self, columns: Sequence[str]) -> list[tuple]:
        return sorted((tuple(_norm(r[c]) for c in columns) for r in self.state.values()), key=repr)


class SparkJobs:
    """Count the Spark jobs, stages and tasks run by the code inside ``with SparkJobs(spark)``.

    The block runs under a job group of its own (``setJobGroup``; hudilite sets none
    except in the Thrift server), and on exit the listener bus is drained so the status
    tracker has seen every job before it is asked. Counts do not depend on machine load,
    which makes them a stable measure of a write's fixed cost. ``jobs`` / ``stages`` /
    ``tasks`` are filled on exit; stages Spark skipped (shuffle output reused) are not
    counted, as they run no task.
    """

    _seq = 0

    def __init__(self, spark: Any) -> None:
        self.sc = spark.sparkContext
        SparkJobs._seq += 1
        self.group = f"hudilite-job-count-{SparkJobs._seq}"
        self.jobs = self.stages = self.tasks = 0
        self.job_ids: list[int] = []

    def __enter__(self) -> SparkJobs:
        self.sc.setJobGroup(self.group, self.group)
        return self

    def __exit__(self, *exc: object) -> None:
        self.sc.setLocalProperty("spark.jobGroup.id", None)
        self.sc.setLocalProperty("spark.job.description", None)
        # Job-end events reach the status store through the listener bus, asynchronously.
        self.sc._jsc.sc().listenerBus().waitUntilEmpty()
        tracker = self.sc.statusTracker()
        self.job_ids = sorted(tracker.getJobIdsForGroup(self.group))
        self.jobs = len(self.job_ids)
        for job_id in self.job_ids:
            info = tracker.getJobInfo(job_id)
            for stage_id in info.stageIds if info else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None and stage.numCompletedTasks + stage.numFailedTasks > 0:
                    self.stages += 1
                    self.tasks += stage.numTasks


#: The FileSystemGateway methods that reach the storage (each one a driver round trip).
_GATEWAY_IO = (
    "exists",
    "is_dir",
    "size",
    "mtime_ms",
    "read_bytes",
    "open_input_file",
    "list_dir",
    "list_recursive",
    "mkdirs",
    "open_output_stream",
    "write_bytes",
    "create_exclusive",
    "create_versioned",
    "read_versioned",
    "replace_if_version",
    "delete_if_version",
    "touch",
    "delete_file",
    "delete_dir",
)


class GatewayCalls:
    """Count the driver's storage calls (``FileSystemGateway`` methods) inside the block.

    Only calls made by the thread that entered the block and not from inside another
    counted call (a ``read_versioned`` that reads bytes is one call) are counted, so the
    heartbeat thread's touches do not make the count depend on timing. Executors run in
    other processes and are not counted. ``calls`` maps method name to count; ``total``.
    """

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self._saved: dict[str, Any] = {}

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def __enter__(self) -> GatewayCalls:
        import threading

        from hudilite.storage.fs import FileSystemGateway

        owner = threading.get_ident()
        depth = threading.local()

        def wrap(name: str, fn: Any) -> Any:
            def counted(*args: Any, **kwargs: Any) -> Any:
                level = getattr(depth, "n", 0)
                if level == 0 and threading.get_ident() == owner:
                    self.calls[name] = self.calls.get(name, 0) + 1
                depth.n = level + 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    depth.n = level

            return counted

        for name in _GATEWAY_IO:
            fn = FileSystemGateway.__dict__[name]
            self._saved[name] = fn
            setattr(FileSystemGateway, name, wrap(name, fn))
        return self

    def __exit__(self, *exc: object) -> None:
        from hudilite.storage.fs import FileSystemGateway

        for name, fn in self._saved.items():
            setattr(FileSystemGateway, name, fn)
