"""The public :class:`Table`: create or load a Hudi table and write, read and inspect it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.auto_keys import check_operation
from hudilite.read.query import read_arrow
from hudilite.schema import RECORD_KEY_COL
from hudilite.services.archive import ArchiveResult
from hudilite.services.archive_formats import ArchivedInstant
from hudilite.services.clean import CleanResult
from hudilite.services.clustering import ClusteringResult
from hudilite.services.clustering_plan import ClusteringPlan
from hudilite.services.compaction import CompactionPlanResult, CompactionResult
from hudilite.services.partitions import delete_partitions, truncate_table
from hudilite.services.post_write import after_write
from hudilite.services.restore import RestoreResult
from hudilite.services.rollback_completed import RollbackInstantResult
from hudilite.services.savepoint import SavepointInfo
from hudilite.services.upgrade import VersionChangeResult
from hudilite.spark import streaming
from hudilite.spark.convert import to_dataframe
from hudilite.spark.services_job import spark_runner
from hudilite.spark.table_read import merged_row_counter, read_frame
from hudilite.spark.write_job import run_write
from hudilite.storage.fs import FileSystemGateway
from hudilite.table.groups import (
    Alter,
    Inspect,
    Savepoints,
    TableServices,
    arrow_schema_of,
    call_options,
)
from hudilite.table.snapshot import TableSnapshot
from hudilite.tablestate.create import create_table_at
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.write.conflict import ReadSnapshot
from hudilite.write.result import WriteResult
from hudilite.write.write_config import resolve_write_config

Operation = Literal[
    "upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"
]
QueryType = Literal["snapshot", "read_optimized", "incremental"]


class Table:
    """A handle on one Hudi table; every call reads the current timeline first.

    Writes and reads are methods of the table; the other operations come in groups:
    :attr:`services` (compaction, clustering, cleaning, archival, rollback, version
    changes), :attr:`savepoints` (create, list, delete, restore), :attr:`alter` (columns,
    properties, name) and :attr:`inspect` (timeline, archived timeline, properties). Their
    flat names of earlier releases (``t.compact()``, ``t.savepoint()``, ``t.add_columns()``,
    ``t.timeline()`` ...) stay as aliases of the grouped methods.
    """

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
        gw = create_table_at(
            path,
            arrow_schema_of(schema),
            record_key=record_key,
            ordering_field=ordering_field,
            partition_by=partition_by,
            table_type=table_type,
            table_version=table_version,
            name=name,
            database=database,
            options=options,
            storage_options=storage_options,
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
        """The table config from ``hoodie.properties`` (read again at every access; a
        :meth:`snapshot` reads it once)."""
        return self.state().config

    @property
    def schema(self) -> pa.Schema:
        """The data columns (without Hudi's meta columns) as Arrow."""
        return self.state().data_schema

    # ---------------------------------------------------------------- groups
    @property
    def services(self) -> TableServices:
        """Table services: ``compact``, ``schedule_compaction``, ``cluster``,
        ``schedule_clustering``, ``clean``, ``archive``, ``rollback``, ``upgrade``,
        ``downgrade`` (:class:`~hudilite.table.groups.TableServices`)."""
        return TableServices(self.spark, self.gw)

    @property
    def savepoints(self) -> Savepoints:
        """Savepoints: ``create``, ``list`` (also ``t.savepoints()``), ``delete``,
        ``restore`` (:class:`~hudilite.table.groups.Savepoints`)."""
        return Savepoints(self.spark, self.gw)

    @property
    def alter(self) -> Alter:
        """ALTER TABLE: ``add_columns``, ``set_properties``, ``unset_properties``,
        ``rename`` (:class:`~hudilite.table.groups.Alter`)."""
        return Alter(self.spark, self.gw)

    @property
    def inspect(self) -> Inspect:
        """What the table holds: ``timeline``, ``archived_timeline``, ``properties``
        (:class:`~hudilite.table.groups.Inspect`)."""
        return Inspect(self.spark, self.gw)

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
        given = call_options(options)
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
        # Hudi's inline services (compaction, clean, archive) after a commit; the policy is
        # the engine's, the compaction's operations run as Spark tasks.
        return after_write(self.gw, result, options, runner=spark_runner(self.spark))

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
        given = call_options(options)
        counter = merged_row_counter(self.spark)
        result = delete_partitions(self.state(), partitions, given, count_merged=counter)
        return self._after_write(result, given)

    def truncate(self, *, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete every row: a DELETE_PARTITION of all partitions (``""`` if unpartitioned).

        Time travel to earlier instants keeps working until the cleaner runs.
        """
        given = call_options(options)
        result = truncate_table(self.state(), given, count_merged=merged_row_counter(self.spark))
        return self._after_write(result, given)

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
        given = call_options(options)
        return read_frame(self.spark, state, query_type, as_of, start, end, where, given)

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
        given = call_options(options)
        return read_arrow(state, query_type, as_of, start, end, columns, given, where)

    # ------------------------------------------- flat aliases of the grouped methods
    def timeline(self) -> list[Instant]:
        """Alias of ``t.inspect.timeline()``: the active timeline's instants, oldest first."""
        return self.inspect.timeline()

    def archived_timeline(self) -> list[ArchivedInstant]:
        """Alias of ``t.inspect.archived_timeline()``: the archived instants, oldest first."""
        return self.inspect.archived_timeline()

    def properties(self) -> dict[str, str]:
        """Alias of ``t.inspect.properties()``: ``hoodie.properties`` and write defaults."""
        return self.inspect.properties()

    def add_columns(
        self,
        columns: pa.Schema | StructType | Sequence[pa.Field],
        *,
        options: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Alias of ``t.alter.add_columns()``: ALTER TABLE ADD COLUMNS (nullable ones)."""
        return self.alter.add_columns(columns, options=options)

    def set_properties(self, props: Mapping[str, str]) -> None:
        """Alias of ``t.alter.set_properties()``: ALTER TABLE SET TBLPROPERTIES."""
        self.alter.set_properties(props)

    def unset_properties(self, keys: Iterable[str]) -> None:
        """Alias of ``t.alter.unset_properties()``: ALTER TABLE UNSET TBLPROPERTIES."""
        self.alter.unset_properties(keys)

    def rename(self, new_name: str) -> None:
        """Alias of ``t.alter.rename()``: change ``hoodie.table.name``."""
        self.alter.rename(new_name)

    def schedule_compaction(
        self, *, force: bool = False, options: Mapping[str, Any] | None = None
    ) -> CompactionPlanResult | None:
        """Alias of ``t.services.schedule_compaction()``: plan a compaction if triggered."""
        return self.services.schedule_compaction(force=force, options=options)

    def compact(
        self,
        *,
        instant_time: str | None = None,
        force: bool = True,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> list[CompactionResult]:
        """Alias of ``t.services.compact()``: run pending compaction plans on Spark."""
        return self.services.compact(
            instant_time=instant_time, force=force, schedule=schedule, options=options
        )

    def schedule_clustering(
        self, *, options: Mapping[str, Any] | None = None
    ) -> ClusteringPlan | None:
        """Alias of ``t.services.schedule_clustering()``: plan a clustering."""
        return self.services.schedule_clustering(options=options)

    def cluster(
        self,
        *,
        instant_time: str | None = None,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> list[ClusteringResult]:
        """Alias of ``t.services.cluster()``: run clustering plans on Spark."""
        return self.services.cluster(instant_time=instant_time, schedule=schedule, options=options)

    def clean(self, *, options: Mapping[str, Any] | None = None) -> CleanResult | None:
        """Alias of ``t.services.clean()``: delete file versions no longer retained."""
        return self.services.clean(options=options)

    def archive(self, *, options: Mapping[str, Any] | None = None) -> ArchiveResult:
        """Alias of ``t.services.archive()``: archive old completed instants."""
        return self.services.archive(options=options)

    def rollback(
        self, instant_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RollbackInstantResult:
        """Alias of ``t.services.rollback()``: roll back the latest (or a pending) write."""
        return self.services.rollback(instant_time, options=options)

    def upgrade(
        self, to_version: int | str = 8, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Alias of ``t.services.upgrade()``: upgrade the table version step by step."""
        return self.services.upgrade(to_version, options=options)

    def downgrade(
        self, to_version: int | str = 6, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Alias of ``t.services.downgrade()``: downgrade the table version step by step."""
        return self.services.downgrade(to_version, options=options)

    def savepoint(
        self, instant_time: str | None = None, *, user: str = "", comments: str = ""
    ) -> SavepointInfo:
        """Alias of ``t.savepoints.create()``: savepoint a completed commit."""
        return self.savepoints.create(instant_time, user=user, comments=comments)

    def delete_savepoint(self, instant_time: str) -> bool:
        """Alias of ``t.savepoints.delete()``: remove a savepoint (whether one existed)."""
        return self.savepoints.delete(instant_time)

    def restore(
        self, savepoint_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RestoreResult:
        """Alias of ``t.savepoints.restore()``: roll back every commit after a savepoint."""
        return self.savepoints.restore(savepoint_time, options=options)

    def __repr__(self) -> str:
        return f"Table({self.path!r})"
