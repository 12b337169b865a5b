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

from typing import TYPE_CHECKING, Any

from hudilite.errors import (
    ConfigError,
    ConflictError,
    CorruptFileError,
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

if TYPE_CHECKING:
    from hudilite.table.api import Table
    from hudilite.write.result import WriteResult

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConflictError",
    "CorruptFileError",
    "HudiliteError",
    "InstantNotFoundError",
    "KeyGenerationError",
    "LockError",
    "PartitionNotFoundError",
    "SchemaError",
    "Table",
    "TableExistsError",
    "TableNotFoundError",
    "TimelineError",
    "WriteError",
    "WriteResult",
    "connect",
    "spark_session",
]


def connect(warehouse: str | None = None, **kwargs: Any) -> Any:
    """Open a SQL session on a warehouse folder (see :func:`hudilite.sqlext.session.connect`).

    ``s = hudilite.connect("./warehouse"); s.sql("SELECT ...").show()``
    """
    # The SQL layer sits above the engine; the import stays inside the call.
    from hudilite.sqlext.session import connect as _connect

    return _connect(warehouse, **kwargs)


def spark_session(**kwargs: Any) -> Any:
    """A SparkSession set up for hudilite (see :func:`hudilite.spark.session.spark_session`)."""
    from hudilite.spark.session import spark_session as _make

    return _make(**kwargs)


def __getattr__(name: str) -> Any:
    # pyspark is imported lazily so that the engine's pure-Arrow parts load without it.
    if name == "Table":
        from hudilite.table.api import Table

        return Table
    if name == "WriteResult":
        from hudilite.write.result import WriteResult

        return WriteResult
    raise AttributeError(f"module 'hudilite' has no attribute {name!r}")
