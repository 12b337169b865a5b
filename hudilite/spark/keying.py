"""Record keys and partition paths as native Spark expressions, when that gives the same text.

The key generator of record (:mod:`hudilite.keygen`) runs on Arrow batches in
Python workers. For the common cases (string, integral, boolean and date
fields; SIMPLE, COMPLEX and NON_PARTITION keys; no URL-encoding) Spark's own
``CAST(... AS STRING)`` renders values exactly as Hudi does, so keying runs as
JVM expressions and the write skips a round trip of every row through Python.
Anything else (floating point, decimals, timestamps, TIMESTAMP/CUSTOM
generators, URL-encoding) returns ``None`` and the Arrow key generator is used.
Tests compare both paths on the same rows. :func:`keyed_frame` adds the key columns a write
needs (record key, partition path, write order, delete flag) either way.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark import TaskContext
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

from hudilite.auto_keys import PENDING_MARK, ROW_BITS, STORED_KEY_COL
from hudilite.config.vocab import KEYGEN_COMPLEX, KEYGEN_NON_PARTITION, KEYGEN_SIMPLE
from hudilite.keygen import (
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    UNSAFE_SEGMENT,
    UNSAFE_SEGMENT_HIVE,
    KeyGenSpec,
    unsafe_value_message,
)
from hudilite.keygen_ambiguity import PLACEHOLDERS, ambiguous_value_message, field_markers
from hudilite.partition_segments import (
    MAX_SEGMENT_BYTES,
    overlong_message,
    placeholder_message,
    slash_message,
    splits_ambiguously,
)
from hudilite.schema import (
    DELETE_COL,
    IS_DELETED_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.write.keying import SEQ_PARTITION_SHIFT, KeyingSpec, key_batch, keyed_schema

# Types whose Spark string cast equals the key text Hudi writes.
_NATIVE_TYPES = (StringType, IntegerType, LongType, ShortType, ByteType, BooleanType, DateType)


_ERROR_PREFIX = "hudilite.errors.KeyGenerationError: "


def _fail(message: str) -> Column:
    # The prefix lets the driver re-raise it as KeyGenerationError (see task_errors).
    return F.raise_error(F.lit(f"{_ERROR_PREFIX}{message}"))


def _ambiguous(name: str, value: Column, fields: tuple[str, ...]) -> tuple[Column, Column]:
    """(condition, refusal) for a composite key part the key text cannot keep apart."""
    ambiguous = value.isin(*PLACEHOLDERS)
    for marker in field_markers(fields):
        ambiguous = ambiguous | value.contains(marker)
    head, tail = ambiguous_value_message(name, "\x00", fields).split("\x00")
    message = F.concat(F.lit(f"{_ERROR_PREFIX}{head}'"), value, F.lit(f"'{tail}"))
    return ambiguous, F.raise_error(message)


def _refuse_overlong(name: str, folder: Column) -> Column:
    """``folder`` unless one of its segments is too long a folder name (partition_segments)."""
    long = F.filter(F.split(folder, "/"), lambda s: F.octet_length(s) > MAX_SEGMENT_BYTES)
    segment = F.when(F.size(long) > 0, F.element_at(long, 1))  # (ANSI: no index past the end)
    head, tail = overlong_message(name, "\x00").split("\x00")
    shown = F.concat(
        F.lit("'"), F.substring(segment, 1, 40), F.lit("...' ("), F.octet_length(segment),
        F.lit(" bytes)"),
    )  # fmt: skip
    refused = F.raise_error(F.concat(F.lit(f"{_ERROR_PREFIX}{head}"), shown, F.lit(tail)))
    return F.when(segment.isNotNull(), refused).otherwise(folder)


def _text(df: DataFrame, name: str) -> Column:
    return F.col(f"`{name}`").cast("string")


def native_key_columns(spec: KeyGenSpec, df: DataFrame) -> tuple[Column, Column] | None:
    """``(record key, partition path)`` expressions, or None when Python keying is needed."""
    if spec.kind not in (KEYGEN_SIMPLE, KEYGEN_COMPLEX, KEYGEN_NON_PARTITION) or spec.url_encode:
        return None
    types: dict[str, DataType] = {f.name: f.dataType for f in df.schema.fields}
    used = list(spec.record_key_fields) + [name for name, _ in spec.partition_parts]
    if any(not isinstance(types.get(n), _NATIVE_TYPES) for n in used):
        return None
    if any(kind != KEYGEN_SIMPLE for _, kind in spec.partition_parts):
        return None
    fields = spec.record_key_fields
    key: Column
    if not fields and STORED_KEY_COL in df.columns:
        # A keyless table's rows read back (UPDATE, DELETE, MERGE) keep their stored keys;
        # a null one is a new record (keyed_frame gives it a pending key).
        stored = F.col(STORED_KEY_COL).cast("string")
        key = F.when(stored == "", _fail(f"{RECORD_KEY_COL} is empty")).otherwise(stored)
    elif not fields:
        # A keyless table: keyed_frame derives the pending key from the write order.
        key = F.lit(None).cast("string")
    elif len(fields) == 1 and (spec.kind != KEYGEN_COMPLEX or spec.complex_value_only):
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
        refusals = []  # values the f1:v1,f2:v2 text cannot keep apart (keygen_ambiguity)
        for name in fields:
            value = _text(df, name)
            if len(fields) > 1:
                refusals.append(_ambiguous(name, value, fields))
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
        )
        for ambiguous, refused in refusals:
            key = key.when(ambiguous, refused)
        key = key.otherwise(F.concat_ws(",", *parts))
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
            text = F.when(value.isNull() | (value == ""), F.lit(DEFAULT_PARTITION_PATH)).when(
                unsafe, refused
            )
            default = repr(DEFAULT_PARTITION_PATH)
            placeholder = placeholder_message(name, default, DEFAULT_PARTITION_PATH)
            text = text.when(value == DEFAULT_PARTITION_PATH, _fail(placeholder))
            n_parts = len(spec.partition_parts)
            if splits_ambiguously(n_parts, spec.hive_style, spec.url_encode):
                names = list(spec.partition_field_names)
                head, tail = slash_message(name, "\x00", names).split("\x00")
                message = F.concat(F.lit(f"{_ERROR_PREFIX}{head}'"), value, F.lit(f"'{tail}"))
                text = text.when(value.contains("/"), F.raise_error(message))
            text = text.otherwise(value)
            folder = F.concat(F.lit(f"{name}="), text) if spec.hive_style else text
            pieces.append(_refuse_overlong(name, folder))
        path = pieces[0] if len(pieces) == 1 else F.concat_ws("/", *pieces)
    return key, path


def pending_key_column(seq: Column) -> Column:
    """A keyless table's pending record key from the write order, as
    :func:`hudilite.auto_keys.pending_keys` renders it."""
    return F.concat(
        F.lit(PENDING_MARK),
        F.shiftright(seq, ROW_BITS).cast("string"),
        F.lit("_"),
        seq.bitwiseAND(F.lit((1 << ROW_BITS) - 1)).cast("string"),
    )


def keyed_frame(df: DataFrame, spec: KeyingSpec, *, native: bool = True) -> DataFrame:
    """Add record key, partition path, write order and delete flag.

    As JVM expressions when they render keys exactly as the Arrow key generator
    does (see :mod:`hudilite.spark.keying`), else in Python workers.
    """
    columns = native_key_columns(spec.keygen, df) if native else None
    if columns is not None:
        key, path = columns
        if spec.delete_all:
            deleted = F.lit(True)
        elif spec.delete_field in df.columns:
            marker = F.col(f"`{spec.delete_field}`")
            if spec.delete_marker is None:
                deleted = F.coalesce(marker.cast("boolean"), F.lit(False))
            elif spec.cdc_deletes:  # Debezium/DMS: the marker ignores case
                text = F.lower(marker.cast("string"))
                deleted = F.coalesce(text == F.lit(spec.delete_marker.lower()), F.lit(False))
            else:
                deleted = F.coalesce(
                    marker.cast("string") == F.lit(spec.delete_marker), F.lit(False)
                )
        else:
            deleted = F.lit(False)
        if (
            spec.cdc_deletes
            and spec.delete_field != IS_DELETED_COL
            and IS_DELETED_COL in df.columns
        ):
            is_deleted = F.coalesce(F.col(f"`{IS_DELETED_COL}`").cast("boolean"), F.lit(False))
            deleted = deleted | is_deleted
        keyed = df.select(
            *[F.col(f"`{c}`") for c in df.columns],
            key.alias(RECORD_KEY_COL),
            path.alias(PARTITION_PATH_COL),
            # partition id << 33 | row number: the same total write order as the Arrow path.
            F.monotonically_increasing_id().alias(SEQ_COL),
            deleted.alias(DELETE_COL),
        )
        if not spec.keygen.record_key_fields:
            pending = pending_key_column(F.col(SEQ_COL))
            if STORED_KEY_COL in df.columns:
                pending = F.coalesce(F.col(RECORD_KEY_COL), pending)
            keyed = keyed.withColumn(RECORD_KEY_COL, pending)
        return keyed
    out = spark_schema(keyed_schema(arrow_schema(df.schema)))

    def keyfn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ctx = TaskContext.get()
        offset = (ctx.partitionId() if ctx else 0) << SEQ_PARTITION_SHIFT
        for batch in batches:
            yield key_batch(spec, batch, offset)
            offset += batch.num_rows

    return df.mapInArrow(keyfn, out)
