"""The public :class:`Table`: create or load a Hudi table and write, read and inspect it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.auto_keys import check_operation
from hudilite.errors import (
    ConfigError,
    ConflictError,
    CorruptFileError,
    MissingFileError,
    SchemaError,
)
from hudilite.keygen import partition_values
from hudilite.metadata.listing import listing_view
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import ScanPlan, plan_incremental, plan_snapshot
from hudilite.read.where import Predicate
from hudilite.schema import RECORD_KEY_COL
from hudilite.services.archive import ArchiveResult, archive, archived_timeline, may_archive
from hudilite.services.archive_formats import ArchivedInstant
from hudilite.services.clean import CleanResult, clean, may_clean
from hudilite.services.clustering import ClusteringResult, schedule_clustering
from hudilite.services.clustering_plan import ClusteringPlan
from hudilite.services.compaction import CompactionPlanResult, CompactionResult, schedule_compaction
from hudilite.services.partitions import delete_partitions, truncate_table
from hudilite.services.properties import rename_table, set_properties, unset_properties
from hudilite.services.restore import RestoreResult, restore
from hudilite.services.rollback_completed import RollbackInstantResult, rollback_instant
from hudilite.services.savepoint import (
    SavepointInfo,
    create_savepoint,
    delete_savepoint,
    list_savepoints,
)
from hudilite.services.schema_evolution import add_columns
from hudilite.services.upgrade import VersionChangeResult, downgrade_table, upgrade_table
from hudilite.spark import streaming
from hudilite.spark.clustering_job import run_clustering
from hudilite.spark.convert import arrow_schema, spark_schema, to_dataframe
from hudilite.spark.read_job import read_plan
from hudilite.spark.services_job import run_compaction, spark_runner
from hudilite.spark.task_errors import read_error_from
from hudilite.spark.write_job import run_write
from hudilite.storage.fs import FileSystemGateway, is_storage_option, storage_options_of
from hudilite.table.snapshot import TableSnapshot
from hudilite.tablestate.create import create_table
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.write.conflict import ReadSnapshot
from hudilite.write.result import WriteResult
from hudilite.write.write_config import resolve_write_config

Operation = Literal[
    "upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"
]
QueryType = Literal["snapshot", "read_optimized", "incremental"]


def _to_arrow_schema(schema: pa.Schema | StructType) -> pa.Schema:
    if isinstance(schema, StructType):
        return arrow_schema(schema)
    if isinstance(schema, pa.Schema):
        return schema
    raise SchemaError(
        f"schema must be a pyarrow.Schema or a Spark StructType, got {type(schema).__name__}"
    )


def _opts(options: Mapping[str, Any] | None) -> dict[str, str]:
    # Every option a caller passes is checked against the registry: unknown, unsupported
    # and deprecated keys warn (or, with hudilite.options.strict=true, raise).
    cfg.check_options(options, stacklevel=4)
    return {k: str(v) for k, v in (options or {}).items()}


class Table:
    """A handle on one Hudi table; every call reads the current timeline first."""

    def __init__(self, spark: SparkSession, gw: FileSystemGateway) -> None:
        self.spark = spark
        self.gw = gw

    # ---------------------------------------------------------------- creation
    @classmethod
    def create(
        cls,
        spark: SparkSession,
        path: str,
        schema: pa.Schema | StructType,
        *,
        record_key: str | Sequence[str] | None,
        ordering_field: str | None = None,
        partition_by: Sequence[str] = (),
        table_type: Literal["cow", "mor", "COPY_ON_WRITE", "MERGE_ON_READ"] = "cow",
        table_version: Literal[6, 8, 9] = 6,
        name: str | None = None,
        database: str = "default",
        options: Mapping[str, Any] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> Table:
        """Create an empty table at ``path`` (a local path or a URI) and return its handle.

        ``record_key=None`` makes a keyless, append-only table: each insert generates its
        records' keys as Hudi 0.14+ does (``<instant>_<partition id>_<row id>``); an upsert
        is refused. ``options`` are Hudi option keys (or their SQL/Flink aliases); they are kept
        in ``hoodie.properties`` and apply to every later write unless overridden.
        ``storage_options`` are filesystem connection settings (``fs.s3a.endpoint``, ...,
        see :mod:`hudilite.storage.fs`); they are never stored with the table, nor are
        ``fs.s3a.*`` keys given among ``options`` (they count as storage options).
        """
        storage = {**storage_options_of(options), **storage_options_of(storage_options)}
        options = {k: v for k, v in (options or {}).items() if not is_storage_option(k)}
        gw = FileSystemGateway(path, storage_options=storage)
        create_table(
            gw,
            _to_arrow_schema(schema),
            record_key=record_key,
            ordering_field=ordering_field,
            partition_by=partition_by,
            table_type=table_type,
            table_version=table_version,
            name=name,
            database=database,
            options=options,
        )
        return cls(spark, gw)

    @classmethod
    def load(
        cls, spark: SparkSession, path: str, *, storage_options: Mapping[str, Any] | None = None
    ) -> Table:
        """Open the table at ``path``; raises :class:`TableNotFoundError` if there is none.

        ``storage_options``: filesystem connection settings, as for :meth:`create`."""
        gw = FileSystemGateway(path, storage_options=storage_options)
        TableState.load(gw)  # fails early with a clear error
        return cls(spark, gw)

    # ---------------------------------------------------------------- state
    def state(self) -> TableState:
        """The table's config and timeline as of now."""
        return TableState.load(self.gw)

    @property
    def path(self) -> str:
        """The table's base path."""
        return self.gw.abs_path("")

    @property
    def config(self) -> cfg.TableConfig:
        """The table config from ``hoodie.properties``."""
        return self.state().config

    @property
    def schema(self) -> pa.Schema:
        """The data columns (without Hudi's meta columns) as Arrow."""
        return self.state().data_schema

    def timeline(self) -> list[Instant]:
        """Every instant on the active timeline, oldest first, with action, state and times."""
        return list(self.state().timeline.instants)

    # ---------------------------------------------------------------- writes
    def write(
        self,
        data: Any,
        operation: Operation = "upsert",
        *,
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        read_snapshot: TableSnapshot | ReadSnapshot | str | None = None,
    ) -> WriteResult:
        """Write a Spark DataFrame, pyarrow Table or pandas DataFrame and commit it.

        ``extra_metadata``: entries for the commit's ``extraMetadata``, committed with the
        data (the streaming sink's ``_hudi_streaming_sink_checkpoint``, for one).

        ``read_snapshot``: the snapshot ``data`` was computed from, when it was read from
        this table (read, change, write back): :meth:`snapshot` taken before the read, or
        the instant time of the latest completed instant the read saw. The write then fails
        with a retryable :class:`ConflictError` naming the commit when a commit completed
        after that snapshot changed the same file groups or deleted rows in the partitions
        it writes, instead of overwriting it with values computed before it (snapshot
        isolation; see docs/reliability.md). Without it the write is blind: it conflicts
        only with commits that completed after it began. An instant that is not a completed
        one of the table raises :class:`ConfigError` and writes nothing. A table without a
        record key (keys generated on insert) refuses an upsert or delete by name unless
        the rows hold their ``_hoodie_record_key`` (rows read back from it)."""
        state = self.state()
        if isinstance(read_snapshot, TableSnapshot):
            read_snapshot = read_snapshot.isolation
        snap = (
            ReadSnapshot.from_instant(state.timeline, read_snapshot)
            if isinstance(read_snapshot, str)
            else read_snapshot
        )
        df = to_dataframe(self.spark, data)
        check_operation(state.config, operation, stored_keys=RECORD_KEY_COL in df.columns)
        given = _opts(options)
        # The write's options are parsed here, once, for every layer below (issue 28).
        wc = resolve_write_config(state, given)
        result = run_write(
            state, df, operation, wc, extra_metadata=extra_metadata, read_snapshot=snap
        )
        return self._after_write(result, given)

    def write_stream(
        self,
        df: DataFrame,
        *,
        checkpoint_location: str,
        operation: Operation = "upsert",
        trigger: Mapping[str, Any] | str | None = None,
        options: Mapping[str, Any] | None = None,
        query_name: str | None = None,
    ) -> StreamingQuery:
        """Write a streaming DataFrame into the table exactly once; returns the running
        pyspark ``StreamingQuery``.

        One commit per non-empty micro-batch, recording the batch id in the commit's
        extra metadata (Hudi's ``_hudi_streaming_sink_checkpoint``, per
        ``hoodie.datasource.write.streaming.checkpoint.identifier``): a batch Spark
        replays after a crash is skipped when it was committed. ``trigger``: keyword
        arguments of ``DataStreamWriter.trigger`` (``{"processingTime": "10 seconds"}``,
        ``{"availableNow": True}``) or a processing-time string. A merge-on-read table
        compacts beside the stream: plans scheduled after commits by the trigger strategy,
        run by a driver thread while later batches commit
        (``hoodie.datasource.compaction.async.enable``, default on;
        :func:`hudilite.spark.streaming.compactor_of`). See :mod:`hudilite.spark.streaming`.
        """
        return streaming.write_stream(
            self,
            df,
            checkpoint_location=checkpoint_location,
            operation=operation,
            trigger=trigger,
            options=options,
            query_name=query_name,
        )

    def _after_write(self, result: WriteResult, options: dict[str, str]) -> WriteResult:
        """Inline table services after a commit: compaction (MOR), automatic cleaning and
        archival (``hoodie.archive.automatic``, as Hudi: beyond ``hoodie.keep.max.commits``).

        Their results are reported in ``result.extra`` (``compactions``, ``clean``,
        ``archive``).
        """
        state = self.state()
        opts = state.options(options)
        extra = dict(result.extra)
        if state.config.is_mor and opts.get(cfg.INLINE_COMPACT):
            try:
                extra["compactions"] = run_compaction(self.spark, state, options, schedule=True)
            except ConflictError as exc:  # a concurrent writer is mid-way: compact next time
                extra["compaction_skipped"] = str(exc)
            state = self.state()
        elif state.config.is_mor and opts.get(cfg.SCHEDULE_INLINE_COMPACT):
            extra["scheduled_compaction"] = schedule_compaction(state, options)
            if extra["scheduled_compaction"] is not None:
                state = self.state()  # a plan joined the timeline
        # The triggers are checked on the timeline first: most writes neither clean nor
        # archive, and then skip the services' locks, re-loads and listings. ``state`` is
        # current unless another writer committed since; that writer runs the services
        # after its own commit (and both services re-load under their lock).
        if opts.get(cfg.AUTO_CLEAN):
            extra["clean"] = clean(state, options) if may_clean(state, options) else None
            if extra["clean"] is not None:
                state = self.state()  # the clean completed an instant
        if opts.get(cfg.AUTO_ARCHIVE) and may_archive(state, options):
            archived = archive(state, options)
            if archived.num_archived:
                extra["archive"] = archived
        return dataclasses.replace(result, extra=extra)

    # ---------------------------------------------------------------- partitions, schema
    def delete_partitions(
        self, partitions: Sequence[str], *, options: Mapping[str, Any] | None = None
    ) -> WriteResult:
        """Delete every row of ``partitions`` (Hudi's DELETE_PARTITION ``replacecommit``).

        Partitions are relative paths as stored (``city=sf``, or ``sf`` without hive-style
        folders). No file is rewritten: the partitions' file groups are marked replaced
        and the cleaner removes them later. ``rows_deleted`` counts the rows dropped,
        ``replaced_file_groups`` the file groups. An unknown partition raises
        :class:`~hudilite.errors.PartitionNotFoundError` and nothing is written.
        """
        result = delete_partitions(
            self.state(), partitions, _opts(options), count_merged=self._count_merged
        )
        return self._after_write(result, _opts(options))

    def truncate(self, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete every row: a DELETE_PARTITION of all partitions (``""`` if unpartitioned).

        Time travel to earlier instants keeps working until the cleaner runs.
        """
        result = truncate_table(self.state(), _opts(options), count_merged=self._count_merged)
        return self._after_write(result, _opts(options))

    def _count_merged(self, state: TableState, plan: ScanPlan) -> int:
        # Rows of merge-on-read slices with logs: merged and counted in executors.
        return read_plan(self.spark, state, plan).count()

    def add_columns(
        self,
        columns: pa.Schema | StructType | Sequence[pa.Field],
        *,
        options: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """ALTER TABLE ADD COLUMNS: append nullable columns to the schema (an empty
        ``commit``/``deltacommit`` with operation ALTER_SCHEMA; no file is rewritten).

        Rows written before read null in the new columns. An existing name
        (case-insensitive) or a non-nullable column raises
        :class:`~hudilite.errors.SchemaError` naming it.
        """
        fields = _to_arrow_schema(columns) if isinstance(columns, StructType) else columns
        return add_columns(self.state(), fields, _opts(options))

    # ---------------------------------------------------------------- properties
    def set_properties(self, props: Mapping[str, str]) -> None:
        """ALTER TABLE SET TBLPROPERTIES: Hudi table properties go to ``hoodie.properties``,
        other options become write defaults of the table.

        Aliases (``primaryKey``, ``preCombineField``, ``type``...) resolve as in options.
        Changing a property fixed at creation (record key, partition and ordering fields,
        table type and version, key generator, ...) raises
        :class:`~hudilite.errors.ConfigError` naming the key and its current value.
        """
        cfg.check_options(props)
        set_properties(self.state(), props)

    def unset_properties(self, keys: Iterable[str]) -> None:
        """ALTER TABLE UNSET TBLPROPERTIES: remove ``keys`` (keys not set are ignored)."""
        keys = [keys] if isinstance(keys, str) else list(keys)
        cfg.check_options(keys)
        unset_properties(self.state(), keys)

    def properties(self) -> dict[str, str]:
        """``hoodie.properties`` as stored, overlaid with the table's write defaults."""
        return dict(self.state().options().raw)

    def rename(self, new_name: str) -> None:
        """Change the table name in ``hoodie.properties`` (``hoodie.table.name``); the
        table stays where it is."""
        rename_table(self.state(), new_name)

    # ---------------------------------------------------------------- table services
    def schedule_compaction(
        self, *, force: bool = False, options: Mapping[str, Any] | None = None
    ) -> CompactionPlanResult | None:
        """Plan a compaction of the slices with logs (merge-on-read) if its trigger fires.

        ``force=True`` plans one regardless of the trigger; returns None when there is
        nothing to compact. The plan is executed by :meth:`compact`.
        """
        return schedule_compaction(self.state(), _opts(options), force=force)

    def compact(
        self,
        *,
        instant_time: str | None = None,
        force: bool = True,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> list[CompactionResult]:
        """Run pending compaction plans (FIFO, or ``hoodie.compaction.order=LIFO``).

        With ``schedule`` a new plan is made first (``force``: even when the trigger
        has not fired); ``instant_time`` runs only that pending plan. One Spark task
        per file group; each result has the instant and its metrics.
        """
        return run_compaction(
            self.spark,
            self.state(),
            _opts(options),
            schedule=schedule and instant_time is None,
            force=force,
            instant_times=[instant_time] if instant_time else None,
        )

    def clean(self, *, options: Mapping[str, Any] | None = None) -> CleanResult | None:
        """Delete file versions the cleaning policy no longer retains (None: nothing to do)."""
        return clean(self.state(), _opts(options))

    def savepoint(
        self, instant_time: str | None = None, *, user: str = "", comments: str = ""
    ) -> SavepointInfo:
        """Savepoint a completed commit (default: the latest); its files are never cleaned."""
        return create_savepoint(self.state(), instant_time, user=user, comments=comments)

    def savepoints(self) -> list[SavepointInfo]:
        """The table's savepoints, oldest first."""
        return list_savepoints(self.state())

    def delete_savepoint(self, instant_time: str) -> bool:
        """Remove a savepoint; returns whether one existed."""
        return delete_savepoint(self.state(), instant_time)

    def rollback(
        self, instant_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RollbackInstantResult:
        """Roll back the latest completed write (or a pending one), deleting its files."""
        return rollback_instant(self.state(), instant_time, _opts(options))

    def restore(
        self, savepoint_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RestoreResult:
        """Restore the table to a savepoint: every later commit is rolled back."""
        return restore(self.state(), savepoint_time, _opts(options))

    # ---------------------------------------------------------------- reads
    def snapshot(self, as_of: str | int | datetime | None = None) -> TableSnapshot:
        """The table pinned as it is now (or as of ``as_of``, an instant time or date-time as
        :meth:`read` takes), read once: its ``config``, ``schema``, ``timeline``,
        ``read()`` and ``to_arrow()`` stay the same after later commits (see
        :class:`~hudilite.table.snapshot.TableSnapshot`).

        Pass it to :meth:`write` (``read_snapshot=``) with rows computed from its reads
        (snapshot isolation). ``snapshot().instant`` is the latest completed instant (by
        completion time on table version 8+, by requested time on 6), None while the table
        is empty."""
        return TableSnapshot.take(self, self.state(), as_of)

    def read(
        self,
        *,
        query_type: QueryType = "snapshot",
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        where: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> DataFrame:
        """Read the table as a Spark DataFrame (Hudi's ``_hoodie_*`` columns first).

        ``as_of`` time-travels to an instant (``yyyyMMddHHmmssSSS`` or a date-time);
        ``query_type="incremental"`` returns records committed in ``(start, end]``;
        ``where`` is a SQL predicate; when it only names partition columns the
        partitions it excludes are not read at all. ``options``: read options such as
        ``hoodie.hudilite.read.ignore.missing.files``.

        A data file the timeline names that is missing or truncated raises
        :class:`MissingFileError` / :class:`CorruptFileError` naming it.
        """
        return self._read(self.state(), query_type, as_of, start, end, where, options)

    def _read(
        self,
        state: TableState,
        query_type: str,
        as_of: str | None,
        start: str | None,
        end: str | None,
        where: str | None,
        options: Mapping[str, Any] | None,
    ) -> DataFrame:
        """:meth:`read` of a loaded ``state`` (a :class:`TableSnapshot` passes its own)."""
        partitions = None
        if where:
            try:  # pruned in Arrow when to_arrow takes the predicate, else by a Spark job
                pred = Predicate.parse(where, state.storage_schema)
            except ConfigError:
                partitions = self._prune(state, where)
            else:
                partitions = self._prune_arrow(state, pred)
        plan = self._plan(state, query_type, as_of, start, end, partitions, options)
        try:
            df = read_plan(self.spark, state, plan)
        except Exception as exc:  # Spark lists the files now: one may have vanished since
            mapped = read_error_from(exc)
            if mapped is None:
                raise
            raise mapped from exc
        return df.filter(F.expr(where)) if where else df

    def to_arrow(
        self,
        *,
        query_type: QueryType = "snapshot",
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        columns: list[str] | None = None,
        options: Mapping[str, Any] | None = None,
        where: str | None = None,
    ) -> pa.Table:
        """Read like :meth:`read`, into a pyarrow Table in this process, without Spark.

        The live files are read with ``pyarrow.dataset`` (multi-threaded); meant for
        data that fits in memory, like ``deltalake``'s ``to_pyarrow_table``. A missing or
        unreadable data file raises :class:`MissingFileError` / :class:`CorruptFileError`.
        ``where``: a SQL predicate on columns (:mod:`hudilite.read.where` lists the SQL it
        takes); the rows are filtered by it, and when it names only partition columns the
        partitions it excludes are not read at all.
        """
        return self._to_arrow(self.state(), query_type, as_of, start, end, columns, options, where)

    def _to_arrow(
        self,
        state: TableState,
        query_type: str,
        as_of: str | None,
        start: str | None,
        end: str | None,
        columns: list[str] | None,
        options: Mapping[str, Any] | None,
        where: str | None = None,
    ) -> pa.Table:
        """:meth:`to_arrow` of a loaded ``state`` (a :class:`TableSnapshot` passes its own)."""
        pred = Predicate.parse(where, state.storage_schema) if where else None
        partitions = self._prune_arrow(state, pred) if pred else None
        plan = self._plan(state, query_type, as_of, start, end, partitions, options)
        wanted = columns
        if pred is not None and columns is not None:  # the filter's columns are read too
            wanted = list(dict.fromkeys([*columns, *sorted(pred.columns)]))
        try:
            table = read_plan_arrow(
                state.gw,
                plan,
                state.storage_schema,
                columns=wanted,
                merge_spec=state.merge_spec(state.options()),
            )
        except FileNotFoundError as exc:
            raise MissingFileError(f"a data file of {self.path} is missing: {exc}") from exc
        except (pa.ArrowInvalid, OSError) as exc:
            raise CorruptFileError(f"a data file of {self.path} is unreadable: {exc}") from exc
        if pred is None:
            return table
        table = table.filter(pred.expression)
        return table if columns is None else table.select(columns)

    def _prune_arrow(self, state: TableState, pred: Predicate) -> list[str] | None:
        """:meth:`_prune` without Spark: the partitions whose values satisfy ``pred``, or
        None when it names other columns."""
        if state.config.keygen_type not in (cfg.KEYGEN_SIMPLE, cfg.KEYGEN_COMPLEX):
            return None
        spec = state.keygen(state.options())
        return pred.partitions(
            listing_view(state.view).partitions(),  # the files partition when kept
            lambda p: partition_values(spec, p),
            state.config.partition_fields,
            state.data_schema,
        )

    def _plan(
        self,
        state: TableState,
        query_type: str,
        as_of: str | None,
        start: str | None,
        end: str | None,
        partitions: list[str] | None,
        options: Mapping[str, Any] | None = None,
    ) -> ScanPlan:
        ignore = bool(state.options(_opts(options)).get(cfg.READ_IGNORE_MISSING_FILES))
        if query_type == "incremental":
            if start is None:
                raise ConfigError("an incremental read needs start=<instant time>")
            return plan_incremental(
                state.timeline, state.view, start, end, ignore_missing_files=ignore
            )
        if query_type in ("snapshot", "read_optimized"):
            if start is not None or end is not None:
                raise ConfigError("start/end apply to query_type='incremental' only")
            return plan_snapshot(
                state.view,
                as_of=as_of,
                partitions=partitions,
                read_optimized=query_type == "read_optimized",
                ignore_missing_files=ignore,
            )
        raise ConfigError(
            f"unknown query_type {query_type!r}; use snapshot, read_optimized or incremental"
        )

    def _prune(self, state: TableState, where: str) -> list[str] | None:
        """Partitions whose values satisfy ``where``, or None when it names other columns."""
        fields = list(state.config.partition_fields)
        if not fields or state.config.keygen_type not in (cfg.KEYGEN_SIMPLE, cfg.KEYGEN_COMPLEX):
            return None
        spec = state.keygen(state.options())
        parts = listing_view(state.view).partitions()  # the files partition when kept
        types = {f.name: f.type for f in state.data_schema}
        rows = [(p, *[partition_values(spec, p).get(f) for f in fields]) for p in parts]
        frame = self.spark.createDataFrame(
            rows, ", ".join(["`_hl_partition` string"] + [f"`{f}` string" for f in fields])
        )
        frame = frame.select(
            "_hl_partition",
            *[
                F.col(f"`{f}`")
                .cast(spark_schema(pa.schema([pa.field(f, types[f])]))[0].dataType)
                .alias(f)
                for f in fields
            ],
        )
        try:
            return [r[0] for r in frame.filter(F.expr(where)).select("_hl_partition").collect()]
        except AnalysisException:
            return None

    # ---------------------------------------------------------------- clustering
    def schedule_clustering(
        self, *, options: Mapping[str, Any] | None = None
    ) -> ClusteringPlan | None:
        """Plan a clustering of the small file slices (``hoodie.clustering.plan.*`` options,
        e.g. ``hoodie.clustering.plan.strategy.sort.columns``); None when nothing qualifies.
        The plan is executed by :meth:`cluster`."""
        return schedule_clustering(self.state(), _opts(options))

    def cluster(
        self,
        *,
        instant_time: str | None = None,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> list[ClusteringResult]:
        """Cluster: with ``schedule`` plan first and run the new plan (else every pending
        one, oldest first); ``instant_time`` runs only that pending plan. One Spark task
        per clustering group; each result has the instant and its metrics."""
        return run_clustering(
            self.spark,
            self.state(),
            _opts(options),
            schedule=schedule and instant_time is None,
            instant_times=[instant_time] if instant_time else None,
        )

    # ---------------------------------------------------------------- archival, table version
    def archive(self, *, options: Mapping[str, Any] | None = None) -> ArchiveResult:
        """Archive old completed instants as Hudi's archiver does (``hoodie.keep.min.commits``
        / ``hoodie.keep.max.commits``, default 20 / 30): v6 into ``.hoodie/archived`` log
        files, v8 into the LSM timeline ``.hoodie/timeline/history``."""
        return archive(self.state(), _opts(options))

    def archived_timeline(self) -> list[ArchivedInstant]:
        """The archived instants (action, state, times, decoded metadata), oldest first."""
        return archived_timeline(self.state())

    def upgrade(
        self, to_version: int | str = 8, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Upgrade the table version (6 -> 8 -> 9; ``9`` or Hudi's ``"NINE"``), one step at a
        time as Hudi's upgrade handlers do; merge-on-read tables are compacted first (on
        Spark)."""
        return upgrade_table(
            self.state(), to_version, _opts(options), runner=spark_runner(self.spark)
        )

    def downgrade(
        self, to_version: int | str = 6, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Downgrade the table version (9 -> 8 -> 6; ``8`` or ``"EIGHT"``), one step at a
        time as Hudi's downgrade handlers do; merge-on-read tables are compacted first (on
        Spark)."""
        return downgrade_table(
            self.state(), to_version, _opts(options), runner=spark_runner(self.spark)
        )

    def __repr__(self) -> str:
        return f"Table({self.path!r})"
