"""What statements return: :class:`Outcome` from handlers, :class:`StatementResult` per
script statement, and the one-row metrics frame of a write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hudilite.write.result import WriteResult

__all__ = ["METRICS_SCHEMA", "Outcome", "StatementResult", "metrics_frame"]

METRICS_SCHEMA = (
    "instant string, operation string, num_affected_rows long, num_inserted_rows long, "
    "num_updated_rows long, num_deleted_rows long, num_files_written long"
)


@dataclass
class Outcome:
    """What a statement handler returns: rows to show and the write it made, if any."""

    df: DataFrame | None = None
    write: WriteResult | None = None


@dataclass
class StatementResult:
    """One executed statement of a script: where it starts, its kind, rows and write."""

    sql: str
    line: int
    column: int
    kind: str
    df: DataFrame | None
    write: WriteResult | None


def metrics_frame(spark: SparkSession, result: WriteResult) -> DataFrame:
    """One row with the write's instant and counts (the numbers in its commit metadata)."""
    row = (
        result.instant_time,
        result.operation,
        result.num_inserts + result.num_updates + result.num_deletes,
        result.num_inserts,
        result.num_updates,
        result.num_deletes,
        result.files_written,
    )
    return spark.createDataFrame([row], METRICS_SCHEMA)


def write_outcome(spark: SparkSession, result: WriteResult) -> Outcome:
    """The outcome of a statement that made one write."""
    return Outcome(metrics_frame(spark, result), result)
