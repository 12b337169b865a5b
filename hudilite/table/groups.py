"""The grouped methods of :class:`~hudilite.table.api.Table`: ``t.services``,
``t.savepoints``, ``t.alter`` and ``t.inspect``.

Each group is a small handle on the table (its Spark session where it runs Spark jobs, and
its filesystem gateway); every call loads the table's current state, as ``Table``'s own
methods do. The operations are implemented here, once: ``Table``'s flat names of earlier
releases (``t.compact()``, ``t.savepoint()``, ``t.add_columns()``, ``t.timeline()`` ...)
call these methods, so both spellings reach the same code::

    t.services.compact()            # == t.compact()
    t.savepoints.create()           # == t.savepoint()
    t.savepoints.list()             # == t.savepoints()
    t.alter.add_columns([...])      # == t.add_columns([...])
    t.inspect.timeline()            # == t.timeline()

Options given to a call are checked against the option registry here
(:func:`call_options`): an unknown key warns, or with ``hudilite.options.strict=true``
raises, naming it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.errors import SchemaError
from hudilite.services.archive import ArchiveResult, archive, archived_timeline
from hudilite.services.archive_formats import ArchivedInstant
from hudilite.services.clean import CleanResult, clean
from hudilite.services.clustering import ClusteringResult, schedule_clustering
from hudilite.services.clustering_plan import ClusteringPlan
from hudilite.services.compaction import CompactionPlanResult, CompactionResult, schedule_compaction
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
from hudilite.spark.clustering_job import run_clustering
from hudilite.spark.convert import arrow_schema
from hudilite.spark.services_job import run_compaction, spark_runner
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.write.result import WriteResult


def call_options(options: Mapping[str, Any] | None) -> dict[str, str]:
    """A call's ``options`` as strings, checked against the registry: unknown, unsupported
    and deprecated keys warn at the caller's line (with ``hudilite.options.strict=true``
    they raise :class:`~hudilite.errors.ConfigError`)."""
    cfg.check_options(options)
    return {k: str(v) for k, v in (options or {}).items()}


def arrow_schema_of(schema: pa.Schema | StructType) -> pa.Schema:
    """``schema`` (a pyarrow Schema or a Spark StructType) as Arrow; anything else raises
    :class:`~hudilite.errors.SchemaError` naming its type."""
    if isinstance(schema, StructType):
        return arrow_schema(schema)
    if isinstance(schema, pa.Schema):
        return schema
    raise SchemaError(
        f"schema must be a pyarrow.Schema or a Spark StructType, got {type(schema).__name__}"
    )


class _Group:
    """A handle on one table for a group of operations."""

    def __init__(self, spark: SparkSession, gw: FileSystemGateway) -> None:
        self._spark = spark
        self._gw = gw

    def _state(self) -> TableState:
        return TableState.load(self._gw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._gw.abs_path('')!r})"


class TableServices(_Group):
    """``t.services``: compaction, clustering, cleaning, archival, rollback and table
    version changes. The compaction and clustering operations run as Spark tasks."""

    def schedule_compaction(
        self, *, force: bool = False, options: Mapping[str, Any] | None = None
    ) -> CompactionPlanResult | None:
        """Plan a compaction of the slices with logs (merge-on-read) if its trigger fires.

        ``force=True`` plans one regardless of the trigger; returns None when there is
        nothing to compact. The plan is executed by :meth:`compact`.
        """
        return schedule_compaction(self._state(), call_options(options), force=force)

    def compact(
        self,
        *,
        instant_time: str | None = None,
        force: bool = True,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> builtins.list[CompactionResult]:
        """Run pending compaction plans (FIFO, or ``hoodie.compaction.order=LIFO``).

        With ``schedule`` a new plan is made first (``force``: even when the trigger
        has not fired); ``instant_time`` runs only that pending plan. One Spark task
        per file group; each result has the instant and its metrics.
        """
        return run_compaction(
            self._spark,
            self._state(),
            call_options(options),
            schedule=schedule and instant_time is None,
            force=force,
            instant_times=[instant_time] if instant_time else None,
        )

    def schedule_clustering(
        self, *, options: Mapping[str, Any] | None = None
    ) -> ClusteringPlan | None:
        """Plan a clustering of the small file slices (``hoodie.clustering.plan.*`` options,
        e.g. ``hoodie.clustering.plan.strategy.sort.columns``); None when nothing qualifies.
        The plan is executed by :meth:`cluster`."""
        return schedule_clustering(self._state(), call_options(options))

    def cluster(
        self,
        *,
        instant_time: str | None = None,
        schedule: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> builtins.list[ClusteringResult]:
        """Cluster: with ``schedule`` plan first and run the new plan (else every pending
        one, oldest first); ``instant_time`` runs only that pending plan. One Spark task
        per clustering group; each result has the instant and its metrics."""
        return run_clustering(
            self._spark,
            self._state(),
            call_options(options),
            schedule=schedule and instant_time is None,
            instant_times=[instant_time] if instant_time else None,
        )

    def clean(self, *, options: Mapping[str, Any] | None = None) -> CleanResult | None:
        """Delete file versions the cleaning policy no longer retains (None: nothing to do)."""
        return clean(self._state(), call_options(options))

    def archive(self, *, options: Mapping[str, Any] | None = None) -> ArchiveResult:
        """Archive old completed instants as Hudi's archiver does (``hoodie.keep.min.commits``
        / ``hoodie.keep.max.commits``, default 20 / 30): v6 into ``.hoodie/archived`` log
        files, v8 into the LSM timeline ``.hoodie/timeline/history``."""
        return archive(self._state(), call_options(options))

    def rollback(
        self, instant_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RollbackInstantResult:
        """Roll back the latest completed write (or a pending one), deleting its files."""
        return rollback_instant(self._state(), instant_time, call_options(options))

    def upgrade(
        self, to_version: int | str = 8, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Upgrade the table version (6 -> 8 -> 9; ``9`` or Hudi's ``"NINE"``), one step at a
        time as Hudi's upgrade handlers do; merge-on-read tables are compacted first (on
        Spark)."""
        return upgrade_table(
            self._state(), to_version, call_options(options), runner=spark_runner(self._spark)
        )

    def downgrade(
        self, to_version: int | str = 6, *, options: Mapping[str, Any] | None = None
    ) -> VersionChangeResult:
        """Downgrade the table version (9 -> 8 -> 6; ``8`` or ``"EIGHT"``), one step at a
        time as Hudi's downgrade handlers do; merge-on-read tables are compacted first (on
        Spark)."""
        return downgrade_table(
            self._state(), to_version, call_options(options), runner=spark_runner(self._spark)
        )


class Savepoints(_Group):
    """``t.savepoints``: savepoints (completed commits whose files are never cleaned) and
    restoring the table to one. Calling it, ``t.savepoints()``, is :meth:`list`."""

    def create(
        self, instant_time: str | None = None, *, user: str = "", comments: str = ""
    ) -> SavepointInfo:
        """Savepoint a completed commit (default: the latest); its files are never cleaned."""
        return create_savepoint(self._state(), instant_time, user=user, comments=comments)

    def list(self) -> builtins.list[SavepointInfo]:
        """The table's savepoints, oldest first."""
        return list_savepoints(self._state())

    def __call__(self) -> builtins.list[SavepointInfo]:
        """:meth:`list` (``t.savepoints()``, the flat name of earlier releases)."""
        return self.list()

    def delete(self, instant_time: str) -> bool:
        """Remove a savepoint; returns whether one existed."""
        return delete_savepoint(self._state(), instant_time)

    def restore(
        self, savepoint_time: str, *, options: Mapping[str, Any] | None = None
    ) -> RestoreResult:
        """Restore the table to a savepoint: every later commit is rolled back."""
        return restore(self._state(), savepoint_time, call_options(options))


class Alter(_Group):
    """``t.alter``: ALTER TABLE's changes: columns added, table properties set or unset,
    the table renamed. None rewrites a data file."""

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
        fields = arrow_schema_of(columns) if isinstance(columns, StructType) else columns
        return add_columns(self._state(), fields, call_options(options))

    def set_properties(self, props: Mapping[str, str]) -> None:
        """ALTER TABLE SET TBLPROPERTIES: Hudi table properties go to ``hoodie.properties``,
        other options become write defaults of the table.

        Aliases (``primaryKey``, ``preCombineField``, ``type``...) resolve as in options.
        Changing a property fixed at creation (record key, partition and ordering fields,
        table type and version, key generator, ...) raises
        :class:`~hudilite.errors.ConfigError` naming the key and its current value.
        """
        cfg.check_options(props)
        set_properties(self._state(), props)

    def unset_properties(self, keys: Iterable[str]) -> None:
        """ALTER TABLE UNSET TBLPROPERTIES: remove ``keys`` (keys not set are ignored)."""
        keys = [keys] if isinstance(keys, str) else builtins.list(keys)
        cfg.check_options(keys)
        unset_properties(self._state(), keys)

    def rename(self, new_name: str) -> None:
        """Change the table name in ``hoodie.properties`` (``hoodie.table.name``); the
        table stays where it is."""
        rename_table(self._state(), new_name)


class Inspect(_Group):
    """``t.inspect``: the table's timeline, archived timeline and properties, read now."""

    def timeline(self) -> builtins.list[Instant]:
        """Every instant on the active timeline, oldest first, with action, state and times."""
        return builtins.list(self._state().timeline.instants)

    def archived_timeline(self) -> builtins.list[ArchivedInstant]:
        """The archived instants (action, state, times, decoded metadata), oldest first."""
        return archived_timeline(self._state())

    def properties(self) -> dict[str, str]:
        """``hoodie.properties`` as stored, overlaid with the table's write defaults."""
        return dict(self._state().options().raw)


__all__ = [
    "Alter",
    "Inspect",
    "Savepoints",
    "TableServices",
    "arrow_schema_of",
    "call_options",
]
