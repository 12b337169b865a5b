"""``show_metadata_table_column_stats``: the metadata table's ``column_stats`` partition, as
Hudi's ``ShowMetadataTableColumnStatsProcedure`` (master: ``table``, ``path``, ``partition``,
``targetColumns``, ``filter``; columns ``file_name``, ``column_name``, ``min_value``,
``max_value``, ``null_number``) shows it.

The records are read by :func:`hudilite.metadata.column_stats.read_partition` (the latest
file slice of each file group, logs whose data instant completed, merged as Hudi's
``HoodieMetadataPayload`` does); tombstones are not shown. Only the stats of base files of the
data table's latest file slices are shown (all partitions, or the comma-separated
``partition`` list), sorted by column, then file name.

Values print as Hudi prints them: ``String.valueOf`` of the wrapped value (Java's text of a
double or float), a byte array (``BytesWrapper``, ``DecimalWrapper``: Hudi 1.1 keeps decimals as
bytes) as ``Arrays.toString`` of its signed bytes, ``null`` for none; a wrapper Hudi's procedure
does not print (``LocalDateWrapper``, ``ArrayWrapper``) is refused naming the file and column,
as Hudi fails on it. Beyond Hudi: without ``targetColumns`` every column is shown (Hudi looks up
the column named ``""`` and shows nothing). A table without a ``column_stats`` partition is
refused as Hudi refuses it (no file slices for the partition).
"""

from __future__ import annotations

import datetime
import math
from decimal import Decimal
from typing import Any

import numpy as np

from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import column_stats
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import table as mt

from .cleaning import filtered
from .metadata_table import latest_slices, require_files_partition, table_state
from .registry import Output, Param, ProcedureContext, ProcedureError, procedure

#: Wrappers Hudi prints with ``String.valueOf`` of the value, and as signed byte arrays.
_PLAIN = frozenset(
    {
        "IntWrapper",
        "BooleanWrapper",
        "DateWrapper",
        "DoubleWrapper",
        "FloatWrapper",
        "LongWrapper",
        "StringWrapper",
        "TimeMicrosWrapper",
        "TimestampMicrosWrapper",
    }
)
_BYTES = frozenset({"BytesWrapper", "DecimalWrapper"})
#: ``DecimalWrapper``'s scale in ``HoodieMetadata.avsc`` (Hudi 1.0's decimals).
_DECIMAL_SCALE = 15


def java_float_text(value: float, *, single: bool = False) -> str:
    """Java's ``Double.toString`` (``Float.toString`` with ``single``): the shortest digits
    that read back, plain between 10^-3 and 10^7, else ``d.dddE<n>``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = Decimal(str(np.float32(value)) if single else repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # digits before the decimal point
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            body = "0." + "0" * -point + text
        elif point >= len(text):
            body = text + "0" * (point - len(text)) + ".0"
        else:
            body = text[:point] + "." + text[point:]
    else:
        body = f"{text[0]}.{text[1:] or '0'}E{point - 1}"
    return ("-" if sign else "") + body


def value_text(stats: csr.ColumnStats, value: Any) -> str:
    """How Hudi's procedure prints one min or max value of ``stats`` (see the module
    docstring)."""
    if value is None:
        return "null"
    wrapper = stats.wrapper or csr.WRAPPERS.get(stats.value_type or -1, "")
    if wrapper in _BYTES:
        if isinstance(value, Decimal):  # a DecimalWrapper decoded with its logical type
            value = csr.decimal_bytes(int(value.scaleb(_DECIMAL_SCALE)))
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if wrapper not in _PLAIN:
        raise ProcedureError(
            f"show_metadata_table_column_stats: Unsupported type: {wrapper or type(value)} "
            f"(file {stats.file_name}, column {stats.column})"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float_text(value, single=wrapper == "FloatWrapper")
    if isinstance(value, datetime.time):  # time-micros decoded with its logical type
        value = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
    return str(value)


@procedure(
    "show_metadata_table_column_stats",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("partition", "string"),
        Param("targetColumns", "string"),
        Param("filter", "string", default=""),
    ],
    [
        Output("file_name"),
        Output("column_name"),
        Output("min_value"),
        Output("max_value"),
        Output("null_number", "bigint"),
    ],
    "Lists the column statistics the metadata table's column_stats partition keeps per file.",
    read_only=True,
)
def show_metadata_table_column_stats(ctx: ProcedureContext, args: dict[str, Any]) -> Any:
    """One row per column of each base file of the latest file slices (of ``partition``, a
    comma-separated list, else every partition), for the ``targetColumns`` (comma-separated;
    every column when not given): its minimum, maximum and null count as the column_stats
    partition holds them, by column then file name, kept by ``filter``."""
    state = table_state(ctx, args)
    require_files_partition(ctx, state)
    timeline = mt.load_timeline(state.gw)
    if not latest_slices(state.gw, column_stats.PARTITION, timeline):
        raise ProcedureError(
            f"{ctx.procedure}: the metadata table of {state.config.name} has no column_stats "
            f"partition (Number of file slices for partition {column_stats.PARTITION} should be "
            "> 0); "
            "hoodie.metadata.index.column.stats.enable builds it"
        )
    columns = {c.strip() for c in str(args["targetColumns"] or "").split(",") if c.strip()}
    wanted = [p.strip().strip("/") for p in str(args["partition"] or "").split(",") if p.strip()]
    view = FileSystemView(state.gw, state.config, state.timeline)
    files = {
        s.base_file.path.rsplit("/", 1)[-1]
        for s in view.latest_slices(partitions=wanted or None, check=False)
        if s.base_file is not None
    }
    rows = []
    records = column_stats.live(column_stats.read_partition(state.gw, state.timeline, timeline))
    for r in records.values():
        if r.file_name in files and (not columns or r.column in columns):
            low, high = value_text(r, r.min), value_text(r, r.max)
            rows.append((r.file_name, r.column, low, high, r.null_count))
    rows.sort(key=lambda row: (row[1], row[0]))
    return filtered(ctx, rows, None, args["filter"])
