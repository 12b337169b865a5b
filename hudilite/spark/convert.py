"""Conversions between Spark and Arrow: schemas, DataFrames, pyarrow tables."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import DataType, StructType

from hudilite.errors import SchemaError
from hudilite.schema import IS_DELETED_COL


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema (timestamps with a zone become TIMESTAMP)."""
    return from_arrow_schema(schema)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema of a Spark schema as ``mapInArrow`` batches carry it."""
    return to_arrow_schema(schema, timezone="UTC", prefers_large_types=False)


def to_dataframe(spark: SparkSession, data: Any) -> DataFrame:
    """Accept a Spark DataFrame, a pyarrow Table/RecordBatch or a pandas DataFrame."""
    if isinstance(data, DataFrame):
        return data
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        return spark.createDataFrame(data)
    # No pandas import here (it adds to every start-up): a pandas DataFrame exists only
    # once its caller imported pandas.
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(data, pd.DataFrame):
        return spark.createDataFrame(data)
    raise SchemaError(
        f"cannot write a {type(data).__name__}: pass a Spark DataFrame, a pyarrow Table "
        "or a pandas DataFrame"
    )


def _compatible(source: DataType, target: DataType) -> bool:
    """Whether a column of type ``source`` may be written into ``target`` without loss."""
    if source == target:
        return True
    name_s, name_t = source.typeName(), target.typeName()
    widening = {
        "byte": {"short", "integer", "long", "float", "double", "decimal"},
        "short": {"integer", "long", "float", "double", "decimal"},
        "integer": {"long", "float", "double", "decimal"},
        "long": {"float", "double", "decimal"},
        "float": {"double"},
        "date": {"timestamp", "timestamp_ntz"},
        "timestamp_ntz": {"timestamp"},
        "void": {name_t},
    }
    if name_t in widening.get(name_s, set()):
        return True
    if name_s == name_t == "decimal":
        return True  # precision checks happen in the cast; overflow becomes an error below
    # Nested types: compare by JSON shape ignoring nullability.
    if name_s == name_t and name_s in ("array", "map", "struct"):
        return _strip_nullability(source.jsonValue()) == _strip_nullability(target.jsonValue())
    return False


def _strip_nullability(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_nullability(v)
            for k, v in value.items()
            if k not in ("nullable", "containsNull", "valueContainsNull", "metadata")
        }
    if isinstance(value, list):
        return [_strip_nullability(v) for v in value]
    return value


def conform_columns(
    df: DataFrame,
    target: StructType,
    *,
    required: list[str] | None = None,
    carry: Mapping[str, str] | None = None,
) -> DataFrame:
    """Select and cast ``df``'s columns to ``target`` (by name, case-insensitively).

    ``required`` lists the columns that must be present (default: all of
    ``target``); absent optional ones become typed nulls. Unknown columns and
    incompatible types raise :class:`SchemaError` naming the column. ``carry`` maps
    columns of ``df`` kept after the target's, renamed (a keyless table's stored
    ``_hoodie_record_key``, see :mod:`hudilite.auto_keys`).
    """
    by_lower = {f.name.lower(): f for f in df.schema.fields}
    target_names = {f.name.lower() for f in target.fields}
    extra = [f.name for f in df.schema.fields if f.name.lower() not in target_names]
    # Hudi's meta columns and the delete marker may ride along in the input.
    extra = [c for c in extra if not c.startswith("_hoodie_")]
    if extra:
        raise SchemaError(
            f"column(s) {', '.join(repr(c) for c in extra)} are not in the table schema "
            f"({', '.join(f.name for f in target.fields)})"
        )
    must = {c.lower() for c in (required if required is not None else target.fieldNames())}
    cols = []
    for field in target.fields:
        source = by_lower.get(field.name.lower())
        if source is None:
            if field.name.lower() in must:
                raise SchemaError(f"column {field.name!r} is missing from the data being written")
            cols.append(F.lit(None).cast(field.dataType).alias(field.name))
            continue
        if not _compatible(source.dataType, field.dataType):
            raise SchemaError(
                f"column {field.name!r} has type {source.dataType.simpleString()} but the table "
                f"stores {field.dataType.simpleString()}"
            )
        cols.append(F.col(f"`{source.name}`").cast(field.dataType).alias(field.name))
    marker = by_lower.get(IS_DELETED_COL)
    if marker is not None and IS_DELETED_COL not in target_names:
        # The delete marker steers the write even when the table does not store it.
        cols.append(F.col(f"`{marker.name}`").cast("boolean").alias(IS_DELETED_COL))
    cols += [F.col(f"`{name}`").alias(alias) for name, alias in (carry or {}).items()]
    return df.select(*cols)
