"""Column statistics of one data file, as Hudi records them in ``column_stats``.

* **Base files** (Parquet): from the footer, as Hudi's ``ParquetUtils.
  readColumnStatsFromMetadata``: per column the min of the row groups' minimums, the max of
  their maximums, the sums of their value counts (nulls included), null counts, compressed
  (``totalSize``) and uncompressed sizes. A column some row group has no min/max or null
  count for (while holding values) gets no record: no statistics, so data skipping keeps
  the file.
* **Log files**: over the records of their data blocks (Hudi collects them while appending):
  the count of records, their nulls, min and max, sizes 0. Delete blocks add nothing (a
  delete can remove a match, never add one); a log of deletes only gets records with no
  values (value type ``NULL``), as Hudi's.

The indexed columns (:func:`columns_to_index`) are Hudi 1.x's: ``_hoodie_commit_time``,
``_hoodie_partition_path`` and ``_hoodie_record_key`` (when the table has meta fields), then
``hoodie.metadata.index.column.stats.column.list`` or, when unset, the first 32 data columns
of a supported type (booleans, integers, floats, strings, dates, timestamps, decimals of
precision 30 and scale 15 at most: ``HoodieMetadata.avsc``'s ``DecimalWrapper``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudilite.metadata.column_stats_records import (
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LOCAL_TIMESTAMP_NANOS,
    LONG,
    NULL,
    STRING,
    TIMESTAMP_MICROS,
    TIMESTAMP_MILLIS,
    TIMESTAMP_NANOS,
    ColumnStats,
    decimal_bytes,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.log_format import block_records, read_log_file

#: Meta columns Hudi always indexes (``META_COLS_TO_ALWAYS_INDEX``, in its TreeMap order).
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
#: ``hoodie.metadata.index.column.stats.max.columns.to.index``'s default.
MAX_COLUMNS = 32
_DECIMAL_MAX_PRECISION = 30
_DECIMAL_MAX_SCALE = 15
_TS = {
    (True, "ms"): TIMESTAMP_MILLIS,
    (True, "us"): TIMESTAMP_MICROS,
    (True, "ns"): TIMESTAMP_NANOS,
    (False, "ms"): LOCAL_TIMESTAMP_MILLIS,
    (False, "us"): LOCAL_TIMESTAMP_MICROS,
    (False, "ns"): LOCAL_TIMESTAMP_NANOS,
}


def value_type_of(t: pa.DataType) -> tuple[int, str | None] | None:
    """The ``ValueType`` ordinal (and additional info) of an Arrow type, or None when Hudi
    does not index the type."""
    if pa.types.is_boolean(t):
        return BOOLEAN, None
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return INT, None
    if pa.types.is_int64(t):
        return LONG, None
    if pa.types.is_float32(t):
        return FLOAT, None
    if pa.types.is_float64(t):
        return DOUBLE, None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return STRING, None
    if pa.types.is_date32(t):
        return DATE, None
    if pa.types.is_timestamp(t) and t.unit in ("ms", "us", "ns"):
        return _TS[(t.tz is not None, t.unit)], None
    decimal = pa.types.is_decimal(t) and t.precision <= _DECIMAL_MAX_PRECISION
    if decimal and 0 <= t.scale <= _DECIMAL_MAX_SCALE:
        return DECIMAL, f"{t.precision},{t.scale}"
    return None


def columns_to_index(
    schema: pa.Schema, column_list: Sequence[str] = (), *, meta_fields: bool = True
) -> list[str]:
    """The columns whose statistics are kept (see the module docstring). ``schema``: the
    table's data columns (meta columns, if given, are ignored); ``column_list``: the option's
    columns, names of ``schema`` (ValueError naming one that is not)."""
    data = [f for f in schema if not f.name.startswith("_hoodie_")]
    names = {f.name for f in data}
    out = list(META_COLUMNS) if meta_fields else []
    if column_list:
        for name in column_list:
            if name in META_COLUMNS:
                continue
            if name not in names:
                raise ValueError(
                    f"hoodie.metadata.index.column.stats.column.list names {name!r}, not a "
                    f"column of the table ({', '.join(sorted(names))})"
                )
            if value_type_of(schema.field(name).type) is not None:
                out.append(name)
        return out
    supported = [f.name for f in data if value_type_of(f.type) is not None]
    return out + supported[:MAX_COLUMNS]


def _to_stat(value: Any, t: pa.DataType) -> Any:
    """A Python value of Arrow type ``t`` as the wrapped statistic."""
    if value is None:
        return None
    if pa.types.is_decimal(t):
        return decimal_bytes(int(Decimal(value).scaleb(t.scale)))
    return value


def _raw_stat(raw: Any, t: pa.DataType, physical: str) -> Any:
    """A Parquet statistic (``min_raw``/``max_raw``) as the wrapped statistic."""
    if pa.types.is_decimal(t):
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else raw
        return decimal_bytes(int(unscaled))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    if pa.types.is_boolean(t):
        return bool(raw)
    if pa.types.is_floating(t):
        return float(raw)
    if physical in ("INT32", "INT64"):
        return int(raw)
    return raw


def parquet_stats(
    gw: FileSystemGateway, rel_path: str, partition: str, columns: Iterable[str]
) -> list[ColumnStats]:
    """The statistics of a base file's ``columns`` from its footer."""
    file_name = rel_path.rsplit("/", 1)[-1]
    with gw.open_input_file(rel_path) as f:
        pf = pq.ParquetFile(f)
        meta = pf.metadata
        arrow = pf.schema_arrow
        index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
        out = []
        for column in columns:
            i = index.get(column)
            if i is None or column not in arrow.names:
                continue  # not in this file: no statistics
            t = arrow.field(column).type
            kind = value_type_of(t)
            if kind is None:
                continue
            physical = meta.schema.column(i).physical_type
            if physical == "INT96":
                continue  # legacy timestamps: Hudi indexes none
            stats = _chunks_stats(meta, i, t, physical)
            if stats is None:
                continue
            low, high, values, nulls, size, raw_size = stats
            out.append(
                ColumnStats(
                    partition,
                    file_name,
                    column,
                    low,
                    high,
                    values,
                    nulls,
                    size,
                    raw_size,
                    value_type=kind[0] if values > nulls else NULL,
                    additional_info=kind[1] if values > nulls else None,
                )
            )
        return out


def _chunks_stats(meta: Any, i: int, t: pa.DataType, physical: str) -> tuple[Any, ...] | None:
    low = high = None
    values = nulls = size = raw_size = 0
    for g in range(meta.num_row_groups):
        chunk = meta.row_group(g).column(i)
        values += chunk.num_values
        size += chunk.total_compressed_size
        raw_size += chunk.total_uncompressed_size
        st = chunk.statistics
        if st is None or not st.has_null_count:
            return None
        nulls += st.null_count
        if not st.has_min_max:
            if st.null_count < chunk.num_values:
                return None  # values without bounds: unknown
            continue
        lo, hi = _raw_stat(st.min_raw, t, physical), _raw_stat(st.max_raw, t, physical)
        low = lo if low is None or _cmp_key(lo, t) < _cmp_key(low, t) else low
        high = hi if high is None or _cmp_key(hi, t) > _cmp_key(high, t) else high
    return low, high, values, nulls, size, raw_size


def _cmp_key(value: Any, t: pa.DataType) -> Any:
    if pa.types.is_decimal(t):
        return int.from_bytes(value, "big", signed=True)
    return value


def log_stats(
    gw: FileSystemGateway,
    rel_path: str,
    partition: str,
    columns: Iterable[str],
    schema: pa.Schema,
) -> list[ColumnStats]:
    """The statistics of a log file's data records over ``columns`` (``schema``: the table's
    Arrow schema, for the types; a block without a column holds nulls in it)."""
    file_name = rel_path.rsplit("/", 1)[-1]
    parts = [block_records(b) for b in read_log_file(gw, rel_path) if b.is_data]
    rows = sum(p.num_rows for p in parts)
    out = []
    for column in columns:
        if column not in schema.names:
            continue
        t = schema.field(column).type
        kind = value_type_of(t)
        if kind is None:
            continue
        arrays = [
            p[column].cast(t) if column in p.column_names else pa.nulls(p.num_rows, t)
            for p in parts
        ]
        nulls = sum(a.null_count for a in arrays)
        low = high = None
        if rows > nulls:
            bounds = pc.min_max(pa.chunked_array(arrays, type=t))
            low = _to_stat(bounds["min"].as_py(), t)
            high = _to_stat(bounds["max"].as_py(), t)
            if pa.types.is_date32(t) or pa.types.is_timestamp(t):
                low, high = _epoch(bounds["min"]), _epoch(bounds["max"])
        known = rows > nulls
        out.append(
            ColumnStats(
                partition,
                file_name,
                column,
                low,
                high,
                rows,
                nulls,
                value_type=kind[0] if known else NULL,
                additional_info=kind[1] if known else None,
            )
        )
    return out


def _epoch(scalar: pa.Scalar) -> int | None:
    """A date's days or a timestamp's count of its unit since the epoch."""
    if not scalar.is_valid:
        return None
    target = pa.int32() if pa.types.is_date32(scalar.type) else pa.int64()
    return int(scalar.cast(target).as_py())
