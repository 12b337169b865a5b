"""hudilite: lakehouse tables for PySpark that are real Apache Hudi tables on disk.

Quick start::

    import hudilite
    spark = hudilite.spark_session()
    t = hudilite.Table.create(spark, "/tmp/trips", schema, record_key="uuid",
                              ordering_field="ts", partition_by=["city"])
    t.write(df, operation="upsert")
    t.read().show()

    s = hudilite.connect(warehouse="./warehouse")   # SQL over a warehouse folder
    s.sql("SELECT * FROM trips").show()
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING, Any

from hudilite.errors import (
    ConfigError,
    ConflictError,
    CorruptFileError,
    DuplicateKeyError,
    HudiliteError,
    InstantNotFoundError,
    KeyGenerationError,
    LockError,
    PartitionNotFoundError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
    TimelineError,
    WriteError,
)
from hudilite.write.result import WriteResult

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

    from hudilite.sqlext.session import Session
    from hudilite.table.api import Table
    from hudilite.table.results import (
        ArchivedInstant,
        ArchiveResult,
        CleanResult,
        ClusteringGroup,
        ClusteringPlan,
        ClusteringResult,
        ClusteringSlice,
        CompactionPlanResult,
        CompactionResult,
        Instant,
        ReadSnapshot,
        RestoreResult,
        RollbackInstantResult,
        RollbackResult,
        SavepointInfo,
        TableConfig,
        TableSnapshot,
        TableState,
        VersionChangeResult,
    )

__version__ = "0.1.0"

# The SQL layers live in their own folders beside this one (sqlext/, catalog/, procedures/),
# mapped into the package by pyproject's package-dir; the strict editable install
# (``make install``) lays them out in a link tree that type checkers follow. A source
# checkout run from its root (``python -m pytest``, ``python -m hudilite.config.reference``)
# imports this folder ahead of that tree, so the mapped folders are looked up beside it,
# and new modules load without a reinstall. A wheel or the link tree (no pyproject.toml in
# the folder above) is left as it is.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "pyproject.toml")) and _os.path.isfile(
    _os.path.join(_checkout, "sqlext", "__init__.py")
):
    __path__.append(_checkout)

__all__ = [
    "ArchiveResult",
    "ArchivedInstant",
    "CleanResult",
    "ClusteringGroup",
    "ClusteringPlan",
    "ClusteringResult",
    "ClusteringSlice",
    "CompactionPlanResult",
    "CompactionResult",
    "ConfigError",
    "ConflictError",
    "CorruptFileError",
    "DuplicateKeyError",
    "HudiliteError",
    "Instant",
    "InstantNotFoundError",
    "KeyGenerationError",
    "LockError",
    "PartitionNotFoundError",
    "ReadSnapshot",
    "RestoreResult",
    "RollbackInstantResult",
    "RollbackResult",
    "SavepointInfo",
    "SchemaError",
    "Table",
    "TableConfig",
    "TableExistsError",
    "TableNotFoundError",
    "TableSnapshot",
    "TableState",
    "TimelineError",
    "VersionChangeResult",
    "WriteError",
    "WriteResult",
    "connect",
    "register",
    "save",
    "spark_session",
]


def connect(warehouse: str | None = None, **kwargs: Any) -> Session:
    """Open a SQL session on a warehouse folder (see :func:`hudilite.sqlext.session.connect`).

    ``s = hudilite.connect("./warehouse"); s.sql("SELECT ...").show()``
    """
    # why lazy: Python runs this module before every engine module; the SQL layer loads pyspark
    from hudilite.sqlext.session import connect as _connect

    return _connect(warehouse, **kwargs)


def spark_session(**kwargs: Any) -> SparkSession:
    """A SparkSession set up for hudilite (see :func:`hudilite.spark.session.spark_session`)."""
    # why lazy: keeps pyspark out of engine imports (this module runs before each of them)
    from hudilite.spark.session import spark_session as _make

    return _make(**kwargs)


def save(
    df: DataFrame, path: str, *, options: Mapping[str, Any] | None = None, mode: str = "append"
) -> WriteResult | None:
    """Hudi's ``df.write.format("hudi").options(**options).mode(mode).save(path)``, by the
    same options: creates the table on the first write, runs
    ``hoodie.datasource.write.operation`` (default upsert), applies ``mode`` (append,
    overwrite, error, ignore) as Hudi does; see :mod:`hudilite.table.save`."""
    # why lazy: the write loads pyspark, kept out of engine imports
    from hudilite.table.save import save as _save

    return _save(df, path, options=options, mode=mode)


def register(spark: SparkSession, warehouse: str | None = None) -> list[str]:
    """Register the ``hudilite`` data source with a session made elsewhere, so that
    ``spark.read.format("hudilite")`` and ``spark.readStream.format("hudilite")`` work in it
    (``spark_session()`` does this itself). See :mod:`hudilite.spark.datasource`.

    With ``warehouse`` (a hudilite warehouse folder), also make every table of it the view
    ``<db>.<table>`` of the session catalog, reading the table's current snapshot at every
    query (so ``spark.sql("SELECT * FROM trips")`` reads ``default.trips``); return the
    names registered (see :mod:`hudilite.catalog.spark_views`)."""
    # why lazy: keeps pyspark out of engine imports (this module runs before each of them)
    from hudilite.spark.datasource import register as _register

    _register(spark)
    if warehouse is None:
        return []
    # why lazy: the catalog layer sits above the engine modules this root module fronts
    from hudilite.catalog.spark_views import register_warehouse

    return register_warehouse(spark, warehouse)


def __getattr__(name: str) -> Any:
    if name == "Table":
        # why lazy: Table loads pyspark; the engine's pure-Arrow modules load without it
        from hudilite.table.api import Table

        return Table
    if name in __all__:  # the result types: every other name is defined above
        # why lazy: the result types load the table services; ``import hudilite`` stays light
        from hudilite.table import results

        return getattr(results, name)
    raise AttributeError(f"module 'hudilite' has no attribute {name!r}")
