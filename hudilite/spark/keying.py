"""Record keys and partition paths as native Spark expressions, when that gives the same text.

The key generator of record (:mod:`hudilite.keygen`) runs on Arrow batches in
Python workers. For the common cases (string, integral, boolean and date
fields; SIMPLE, COMPLEX and NON_PARTITION keys; no URL-encoding) Spark's own
``CAST(... AS STRING)`` renders values exactly as Hudi does, so keying runs as
JVM expressions and the write skips a round trip of every row through Python.
Anything else (floating point, decimals, timestamps, TIMESTAMP/CUSTOM
generators, URL-encoding) returns ``None`` and the Arrow key generator is used.
Tests compare both paths on the same rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
)

from hudilite.keygen import (
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    UNSAFE_SEGMENT,
    UNSAFE_SEGMENT_HIVE,
    KeyGenSpec,
    unsafe_value_message,
)

# Types whose Spark string cast equals the key text Hudi writes.
_NATIVE_TYPES = (StringType, IntegerType, LongType, ShortType, ByteType, BooleanType, DateType)


def _fail(message: str) -> Column:
    # The prefix lets the driver re-raise it as KeyGenerationError (see task_errors).
    return F.raise_error(F.lit(f"hudilite.errors.KeyGenerationError: {message}"))


def _text(df: DataFrame, name: str) -> Column:
    return F.col(f"`{name}`").cast("string")


def native_key_columns(spec: KeyGenSpec, df: DataFrame) -> tuple[Column, Column] | None:
    """``(record key, partition path)`` expressions, or None when Python keying is needed."""
    if spec.kind not in ("SIMPLE", "COMPLEX", "NON_PARTITION") or spec.url_encode:
        return None
    types: dict[str, DataType] = {f.name: f.dataType for f in df.schema.fields}
    used = list(spec.record_key_fields) + [name for name, _ in spec.partition_parts]
    if any(not isinstance(types.get(n), _NATIVE_TYPES) for n in used):
        return None
    if any(kind != "SIMPLE" for _, kind in spec.partition_parts):
        return None
    fields = spec.record_key_fields
    if len(fields) == 1 and (spec.kind != "COMPLEX" or spec.complex_value_only):
        name = fields[0]
        value = _text(df, name)
        key = (
            F.when(value.isNull(), _fail(f"record key field {name!r} is null"))
            .when(value == "", _fail(f"record key field {name!r} is empty"))
            .otherwise(value)
        )
    else:
        parts = []
        missing = []
        for name in fields:
            value = _text(df, name)
            shown = (
                F.when(value.isNull(), F.lit(NULL_RECORDKEY_PLACEHOLDER))
                .when(value == "", F.lit(EMPTY_RECORDKEY_PLACEHOLDER))
                .otherwise(value)
            )
            parts.append(F.concat(F.lit(f"{name}:"), shown))
            missing.append(value.isNull() | (value == ""))
        all_missing = missing[0]
        for m in missing[1:]:
            all_missing = all_missing & m
        key = F.when(
            all_missing, _fail(f"record key fields {list(fields)!r} are all null or empty")
        ).otherwise(F.concat_ws(",", *parts))
    if not spec.partition_parts:
        path: Column = F.lit("")
    else:
        pieces = []
        for name, _ in spec.partition_parts:
            value = _text(df, name)
            # The Arrow key generator's path-safety check, as a Java regex (same syntax).
            unsafe = value.rlike(UNSAFE_SEGMENT_HIVE if spec.hive_style else UNSAFE_SEGMENT)
            head, tail = unsafe_value_message(name, "\x00").split("\x00")
            refused = F.raise_error(
                F.concat(
                    F.lit(f"hudilite.errors.KeyGenerationError: {head}'"), value, F.lit(f"'{tail}")
                )
            )
            text = (
                F.when(value.isNull() | (value == ""), F.lit(DEFAULT_PARTITION_PATH))
                .when(unsafe, refused)
                .otherwise(value)
            )
            pieces.append(F.concat(F.lit(f"{name}="), text) if spec.hive_style else text)
        path = pieces[0] if len(pieces) == 1 else F.concat_ws("/", *pieces)
    return key, path
