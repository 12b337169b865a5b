"""The ``hudilite`` Python data source: ``spark.read.format("hudilite")`` and
``spark.readStream.format("hudilite")`` on pyspark's Python Data Source API.

Batch reads take Hudi's read options::

    spark.read.format("hudilite").load(path)                               # snapshot
    .option("hoodie.datasource.query.type", "read_optimized")              # base files only
    .option("as.of.instant", "20260101000000000")                          # time travel
    .option("hoodie.datasource.query.type", "incremental")
    .option("hoodie.datasource.read.begin.instanttime", t0)                # (begin, end]
    .option("hoodie.datasource.read.end.instanttime", t1)                  # begin: or earliest

Writes (``df.write.format("hudilite").options(**hudi_options).save(path)``, the operations
that need no shuffle) are :mod:`hudilite.spark.datasource_writer`'s. The source is also
registered as ``hudi`` where no JVM source has that name (see :func:`register`).

Hudi's Flink read names (``read.start-commit``, ``read.commits.limit``, ...) are mapped
to these by :mod:`hudilite.spark.read_options`; read options hudilite does not implement
are refused by name.

A relation plans its read once: a DataFrame of ``load(path)`` (and a view made with
``CREATE TEMPORARY VIEW ... USING hudilite``) keeps the snapshot of its first query. Views
that read the current snapshot at every query: :mod:`hudilite.spark.views` and
``hudilite.register(spark, warehouse=...)``.

Planning runs on the driver (in the Python worker Spark starts for data source planning)
with the same planner as :meth:`hudilite.Table.read`: one Spark input partition per file
slice -- a base file read with pyarrow, or a slice with log files merged by
:func:`hudilite.read.file_group_reader.read_file_slice` -- read in the executors. No table
data passes through the driver. Every partition carries what its task needs (gateway,
merge rules, visibility, row filter), as the stream reader that runs ``read`` in the
executors is not the one that planned.

The API gives a reader the full schema (it offers no column pruning hook), so every
column is read; Spark drops the unused ones after the scan. Filters are not pushed down:
Spark 4.3 keeps the partitions a reader planned for one filtered query on the provider
instance and reuses them for the next query of the same relation (``df.filter("p = 'a'")
.count()`` then ``df.count()`` would read partition ``a`` only; apache/spark#57752 keeps
them per scan), so pruning partitions by pushed filters would hide rows. Spark applies
the filters after the scan.

Streaming reads (:class:`HudiliteStreamReader`): offsets are commit *completion* times
(table version 8; version 6 records none, there the requested time and a stream never
moves past a pending write), so a commit that completes late is never skipped.
Options:

* ``hoodie.datasource.streaming.startOffset`` = ``earliest`` (default: the whole table
  as of the first batch, then each commit) | ``latest`` (commits after the query starts)
  | an instant time (commits completing after it);
* ``hoodie.datasource.read.streaming.max.instants.per.batch`` = N: at most N commits per
  micro-batch (Spark's ``ReadMaxFiles`` limit, one "file" per commit);
* ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` = true: when the commits
  a batch needs were archived or their files cleaned, read the table's snapshot (rows
  committed after the start offset) instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import AnalysisException
from pyspark.sql.datasource import (
    CaseInsensitiveDict,
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from hudilite.errors import ConfigError, InstantNotFoundError
from hudilite.merge.spec import MergeSpec
from hudilite.read.data_skipping import filters_sql
from hudilite.read.file_group_reader import conform, read_file_slice, read_slice_changes
from hudilite.read.planner import (
    ScanPlan,
    _has_archive,
    normalize_instant,
    plan_incremental,
    plan_snapshot,
    skip_files,
)
from hudilite.read.where import Predicate
from hudilite.schema import COMMIT_TIME_COL, cast_to_schema
from hudilite.spark.cdc import (
    CDC_SPARK_SCHEMA,
    INCREMENTAL_FORMAT,
    CdcPartition,
    cdc_partitions,
    is_cdc,
)
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.spark.read_options import EARLIEST as EARLIEST_BEGIN
from hudilite.spark.read_options import resolve_read_options
from hudilite.storage.fs import FileSystemGateway, storage_options_of
from hudilite.storage.parquet_io import read_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import WRITE_ACTIONS, Instant
from hudilite.timeline.plans import clean_bound

FORMAT = "hudilite"
#: Hudi's short name, registered too when no JVM source has it (see :func:`register`).
HUDI_ALIAS = "hudi"

# Option keys (Hudi's names where Hudi has one).
QUERY_TYPE = "hoodie.datasource.query.type"
AS_OF = "as.of.instant"
BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"
IGNORE_MISSING = "hoodie.hudilite.read.ignore.missing.files"
START_OFFSET = "hoodie.datasource.streaming.startOffset"
MAX_INSTANTS = "hoodie.datasource.read.streaming.max.instants.per.batch"
FALLBACK_FULL_SCAN = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"

#: The offset before every commit (``startOffset=earliest``).
EARLIEST = "0"


def _true(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def _gateway(options: Mapping[str, str]) -> FileSystemGateway:
    path = options.get("path")
    if not path:
        raise ConfigError("the hudilite data source needs a table path: .load(path)")
    return FileSystemGateway(path, storage_options=storage_options_of(dict(options)))


# ------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class _ReadContext:
    """What a task needs to read its part of a plan (picklable, no file lists)."""

    gw: FileSystemGateway
    merge_spec: MergeSpec
    storage: pa.Schema  # the table's storage schema (meta + data columns)
    target: pa.Schema  # the Arrow schema of the Spark output
    visibility: ScanPlan  # the plan without its files: visibility and row filter
    changes: bool  # changelog table, incremental read: every change, unmerged
    since: str | None = None  # fallback scans: keep commits after this time ...
    also: frozenset[str] = frozenset()  # ... or requested at these times

    def read(self, kind: str, item: Any) -> Iterator[pa.RecordBatch]:
        plan = self.visibility
        if kind == "base":
            table = conform(read_base_file(self.gw, item), self.target, where=item)
        elif self.changes:
            assert plan.commit_times is not None
            table = read_slice_changes(
                self.gw,
                item,
                schema=self.storage,
                is_instant_visible=plan.is_instant_visible,
                commit_times=plan.commit_times,
            )
        else:
            table = read_file_slice(
                self.gw,
                item,
                merge_spec=self.merge_spec,
                schema=self.storage,
                is_instant_visible=plan.is_instant_visible,
                as_of=plan.as_of,
                commit_times=plan.commit_times,
            )
        table = cast_to_schema(self._filter(table), self.target)
        yield from table.to_batches()

    def _filter(self, table: pa.Table) -> pa.Table:
        """The incremental row filter on ``_hoodie_commit_time`` (as ``Table.read``)."""
        plan = self.visibility
        times = table[COMMIT_TIME_COL]
        if self.since is not None:
            keep = pc.greater(times, self.since)
            if self.also:
                keep = pc.or_(keep, pc.is_in(times, value_set=pa.array(sorted(self.also))))
            return table.filter(pc.fill_null(keep, False))
        if plan.commit_times is not None:
            values = pa.array(sorted(plan.commit_times), pa.string())
            return table.filter(pc.fill_null(pc.is_in(times, value_set=values), False))
        if plan.commit_range is not None:
            start, end = plan.commit_range
            if start is not None:
                table = table.filter(pc.fill_null(pc.greater(table[COMMIT_TIME_COL], start), False))
            if end is not None:
                table = table.filter(
                    pc.fill_null(pc.less_equal(table[COMMIT_TIME_COL], end), False)
                )
        return table


class SlicePartition(InputPartition):
    """One Spark input partition: a base file (``kind="base"``, a table-relative path) or a
    file slice with logs (``kind="slice"``, a :class:`FileSlice`) and how to read it."""

    def __init__(self, kind: str, item: Any, context: _ReadContext) -> None:
        super().__init__((kind, getattr(item, "group_key", item)))
        self.kind = kind
        self.item = item
        self.context = context


def partitions_of(
    state: TableState,
    plan: ScanPlan,
    schema: StructType,
    *,
    since: str | None = None,
    also: frozenset[str] = frozenset(),
) -> list[SlicePartition]:
    """One input partition per file slice of ``plan``, largest merge slices first."""
    context = _ReadContext(
        gw=state.gw,
        merge_spec=state.merge_spec(state.options()),
        storage=state.storage_schema,
        target=arrow_schema(schema),
        visibility=replace(plan, native_paths=[], merge_slices=[]),
        changes=state.changelog and plan.commit_times is not None,
        since=since,
        also=also,
    )
    slices = sorted(plan.merge_slices, key=lambda s: s.total_size, reverse=True)
    return [SlicePartition("slice", s, context) for s in slices] + [
        SlicePartition("base", p, context) for p in plan.native_paths
    ]


def _read_partition(partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if isinstance(partition, CdcPartition):
        return partition.read()
    if not isinstance(partition, SlicePartition):  # the default single empty partition
        return iter(())
    return partition.context.read(partition.kind, partition.item)


def _check_not_archived(state: TableState, start: str | None) -> None:
    """A CDC read from ``start`` must see every commit after it on the active timeline."""
    first = state.timeline.first_active()
    archived = start is not None and first is not None and start < first.requested_time
    if archived and first is not None and _archived(state):
        raise InstantNotFoundError(
            f"commits before {first.requested_time} were archived: a cdc read from "
            f"{start} cannot list them"
        )


# ----------------------------------------------------------------------- batch reads


def batch_plan(
    state: TableState, options: Mapping[str, str], partitions: list[str] | None = None
) -> ScanPlan:
    """The scan plan of a batch read with Hudi's read options (``partitions``: only
    these partition paths; None: all)."""
    query = str(options.get(QUERY_TYPE) or "snapshot").strip().lower()
    ignore = _true(options.get(IGNORE_MISSING, "false"))
    as_of = options.get(AS_OF)
    begin, end = options.get(BEGIN), options.get(END)
    if query == "incremental":
        if not begin:
            raise ConfigError(f"an incremental read needs {BEGIN}")
        return plan_incremental(
            state.timeline,
            state.view,
            None if begin.strip().lower() == EARLIEST_BEGIN else begin,
            end,
            partitions=partitions,
            ignore_missing_files=ignore,
        )
    if query in ("snapshot", "read_optimized"):
        if begin or end:
            raise ConfigError(f"{BEGIN} / {END} apply to {QUERY_TYPE}=incremental only")
        return plan_snapshot(
            state.view,
            as_of=as_of or None,
            partitions=partitions,
            read_optimized=query == "read_optimized",
            ignore_missing_files=ignore,
        )
    raise ConfigError(
        f"unknown {QUERY_TYPE} {query!r}; use snapshot, read_optimized or incremental"
    )


class HudiliteBatchReader(DataSourceReader):
    """Plans on the driver, reads one file slice per task (see the module docstring)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        # Spark hands options in lower case: look them up case-insensitively.
        self.options = CaseInsensitiveDict(resolve_read_options(options, streaming=False))
        self.schema = schema
        self.cdc = is_cdc(self.options)
        self.where: str | None = None

    def pushFilters(self, filters: list[Any]) -> list[Any]:
        """Keep the filters data skipping can use (:func:`~hudilite.read.data_skipping.
        filters_sql`); every filter is handed back, so Spark still applies them all."""
        self.where = filters_sql(filters)
        return list(filters)

    def _cdc_partitions(self, state: TableState) -> Sequence[InputPartition]:
        """The ``cdc`` incremental format: change rows of the commits in (begin, end]."""
        query = str(self.options.get(QUERY_TYPE) or "snapshot").strip().lower()
        if query != "incremental":
            raise ConfigError(f"{INCREMENTAL_FORMAT}=cdc needs {QUERY_TYPE}=incremental")
        begin, end = self.options.get(BEGIN), self.options.get(END)
        if not begin:
            raise ConfigError(f"an incremental read needs {BEGIN}")
        lo = None if begin.strip().lower() == EARLIEST_BEGIN else normalize_instant(begin)
        hi = normalize_instant(end) if end else None
        _check_not_archived(state, lo)
        commits = [(_completion(state, i), i) for i in state.timeline.commits_in_range(lo, hi)]
        return cdc_partitions(state, commits) or [InputPartition(None)]

    def partitions(self) -> Sequence[InputPartition]:
        state = TableState.load(_gateway(self.options))
        if self.cdc:
            return self._cdc_partitions(state)
        try:
            plan = batch_plan(state, self.options)
            where = Predicate.parse_or_none(self.where, state.storage_schema)
            plan = skip_files(state, plan, where, self.options)  # files no filter can match
        except InstantNotFoundError:
            begin = self.options.get(BEGIN)
            if not (begin and _true(self.options.get(FALLBACK_FULL_SCAN, "false"))):
                raise
            # Hudi's fallback: the whole table, rows committed after ``begin`` (to ``end``).
            end = self.options.get(END)
            plan = plan_incremental(state.timeline, state.view, None, end)
            return partitions_of(state, plan, self.schema, since=normalize_instant(begin)) or [
                InputPartition(None)
            ]
        return partitions_of(state, plan, self.schema) or [InputPartition(None)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_partition(partition)


# ------------------------------------------------------------------------ stream reads


def _completion(state: TableState, instant: Instant) -> str:
    return state.timeline.completion_time(instant.requested_time) or instant.requested_time


def _write_commits(state: TableState) -> list[tuple[str, Instant]]:
    """Completed write commits as ``(offset time, instant)``, by offset time.

    The offset time is the completion time (v8); version 6 records none, so there it is
    the requested time and commits requested after the oldest pending write are held
    back until that write completes or is rolled back (else a late commit is skipped).
    """
    commits = sorted((_completion(state, i), i) for i in state.timeline.commits())
    if state.config.table_version < 8:
        pending = [i.requested_time for i in state.timeline.pending() if i.action in WRITE_ACTIONS]
        if pending:
            oldest = min(pending)
            commits = [(t, i) for t, i in commits if t < oldest]
    return commits


def _earliest_kept(state: TableState) -> str | None:
    """The oldest commit whose files the cleaner still keeps (the last clean's
    ``earliestCommitToRetain``), or None when nothing was cleaned."""
    return clean_bound(state.timeline)


def _archived(state: TableState) -> bool:
    return _has_archive(state.view)


class HudiliteStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of commits by completion time (see the module docstring)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        # Spark hands options in lower case: look them up case-insensitively.
        self.options = CaseInsensitiveDict(resolve_read_options(options, streaming=True))
        self.schema = schema
        self.cdc = is_cdc(self.options)
        self._target: str | None = None  # Trigger.AvailableNow: the last offset to reach
        start = str(self.options.get(START_OFFSET) or "earliest").strip()
        if start.lower() not in ("earliest", "latest"):
            start = normalize_instant(start)  # ConfigError for a malformed one
        self.start = start
        limit = self.options.get(MAX_INSTANTS)
        self.max_instants = int(limit) if limit else None
        if self.max_instants is not None and self.max_instants < 1:
            raise ConfigError(f"{MAX_INSTANTS} must be at least 1, got {limit!r}")

    def _state(self) -> TableState:
        return TableState.load(_gateway(self.options))

    def initialOffset(self) -> dict:
        if self.start.lower() == "earliest":
            return {"completion_time": EARLIEST}
        if self.start.lower() == "latest":
            commits = _write_commits(self._state())
            return {"completion_time": commits[-1][0] if commits else EARLIEST}
        return {"completion_time": self.start}

    def getDefaultReadLimit(self) -> Any:
        if self.max_instants is None:
            return ReadAllAvailable()
        return ReadMaxFiles(self.max_instants)

    def prepareForTriggerAvailableNow(self) -> None:
        commits = _write_commits(self._state())
        self._target = commits[-1][0] if commits else EARLIEST

    def latestOffset(self, start: dict, limit: Any = None) -> dict:
        after = str(start["completion_time"])
        new = [t for t, _ in _write_commits(self._state()) if t > after]
        if self._target is not None:
            new = [t for t in new if t <= self._target]
        if isinstance(limit, ReadMaxFiles):
            new = new[: max(1, int(limit.max_files))]
        return {"completion_time": new[-1] if new else after}

    def reportLatestOffset(self) -> dict | None:
        commits = _write_commits(self._state())
        return {"completion_time": commits[-1][0]} if commits else None

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        lo, hi = str(start["completion_time"]), str(end["completion_time"])
        if lo >= hi:
            return []
        state = self._state()
        if self.cdc:
            commits = [(t, i) for t, i in _write_commits(state) if lo < t <= hi]
            missing = None if lo == EARLIEST else self._missing(state, lo, [i for _, i in commits])
            if missing is not None:
                raise InstantNotFoundError(f"the cdc stream cannot continue after {lo}: {missing}")
            return cdc_partitions(state, commits)
        wanted = [i for t, i in _write_commits(state) if lo < t <= hi]
        if lo == EARLIEST:
            # The whole table as of ``hi`` (Hudi's earliest): every live slice, no filter.
            plan = plan_incremental(state.timeline, state.view, None, hi)
            return partitions_of(state, plan, self.schema)
        missing = self._missing(state, lo, wanted)
        if missing is None:
            try:
                plan = plan_incremental(state.timeline, state.view, lo, hi)
                return partitions_of(state, plan, self.schema)
            except InstantNotFoundError as exc:
                missing = str(exc)
        if not _true(self.options.get(FALLBACK_FULL_SCAN, "false")):
            raise InstantNotFoundError(
                f"the stream cannot continue after {lo}: {missing}. Restart it with "
                f"{START_OFFSET}=earliest or latest, or set {FALLBACK_FULL_SCAN}=true to "
                "read the table's snapshot (rows committed after the offset) instead"
            )
        plan = plan_incremental(state.timeline, state.view, None, hi)
        since = min([lo, *(i.requested_time for i in wanted)])
        return partitions_of(
            state, plan, self.schema, since=since, also=frozenset(i.requested_time for i in wanted)
        )

    def _missing(self, state: TableState, lo: str, wanted: list[Instant]) -> str | None:
        """Why the commits after ``lo`` cannot be read incrementally, or None."""
        first = state.timeline.first_active()
        if first is not None and lo < first.requested_time and _archived(state):
            return f"commits before {first.requested_time} were archived"
        kept = _earliest_kept(state)
        if kept is not None:
            cleaned = [i.requested_time for i in wanted if i.requested_time < kept]
            if cleaned:
                return f"the cleaner removed files of commits before {kept} ({cleaned[0]})"
        return None

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_partition(partition)

    def commit(self, end: dict) -> None:
        return None


# ------------------------------------------------------------------------ the source


class HudiliteDataSource(DataSource):
    """``format("hudilite")``: Hudi tables written by hudilite (or Hudi)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        if is_cdc(CaseInsensitiveDict(self.options)):
            return CDC_SPARK_SCHEMA
        return spark_schema(TableState.load(_gateway(self.options)).storage_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        return HudiliteBatchReader(self.options, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return HudiliteStreamReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        # why lazy: the writer pulls in the write path, which reads never need
        from hudilite.spark.datasource_writer import make_writer

        return make_writer(self.options, schema, overwrite)


class HudiAliasDataSource(HudiliteDataSource):
    """The same source under Hudi's short name ``hudi`` (see :func:`register`)."""

    @classmethod
    def name(cls) -> str:
        return HUDI_ALIAS


def register(spark: Any) -> None:
    """Register the ``hudilite`` data source with ``spark`` (``hudilite.register``).

    Python data sources plan in a Python worker the JVM starts from ``$PYSPARK_PYTHON``
    (not ``spark.pyspark.python``): that interpreter must import hudilite.
    ``hudilite.spark_session()`` sets both and registers the source itself.

    The source is also registered as ``hudi`` when the session has no JVM data source of
    that name, so a pipeline's ``spark.read.format("hudi")`` reads run unchanged. Spark
    refuses a Python source whose name a JVM source already has (with Hudi's bundle on
    the classpath ``hudi`` stays Hudi's), and looks JVM sources up first anyway.
    """
    # Spark hands a Python source its filters only with this on (hudilite skips files by them)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(HudiliteDataSource)
    try:
        spark.dataSource.register(HudiAliasDataSource)
    except AnalysisException as exc:  # DATA_SOURCE_ALREADY_EXISTS: Hudi's own source
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
            raise
