"""How ``hudilite sql`` shows statement results: an aligned grid, CSV or JSON Lines.

The formatting functions take plain column names and rows of Python values (what
``DataFrame.collect`` returns: ``Row`` for structs, lists, dicts, dates, datetimes,
decimals, bytes) and need no JVM; :func:`collect_rows` is the only Spark code.

* ``table``: a grid with a header and a ``(N rows)`` footer; NULL for nulls; numbers
  right-aligned; nested values written like spark-sql (``[1,2]``, ``{"a":1,"b":"x"}``);
  binary as hex bytes (``[01 0A]``). A cell with line breaks (``SHOW CREATE TABLE``,
  ``CALL help``) spans several grid lines, tabs expanded, rather than showing ``\n``.
  With labels on (``-f`` scripts) each result is headed by its statement
  (``-- line 3: INSERT INTO ...``) and followed by ``Time taken: 0.42 seconds``.
* ``csv``: per result set one header, then RFC 4180 rows (CRLF line ends, quoted when
  needed), result sets separated by an empty line; nulls are empty fields, nested values
  JSON text, binary base64. No labels or timing on standard output (see ResultPrinter).
* ``json``: one JSON object per row (JSON Lines), the column names as keys; dates,
  timestamps, intervals and decimals as strings, binary as base64, NaN and infinities
  as the strings ``NaN``, ``Infinity`` and ``-Infinity``.

Dates and timestamps read ``2024-01-02`` and ``2024-01-02 03:04:05.5`` in every format;
top-level timestamp and interval columns are turned into text by Spark, in the session
time zone, as spark-sql shows them.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import json
import math
import struct
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

__all__ = [
    "FORMATS",
    "ResultPrinter",
    "ResultRows",
    "cell_text",
    "collect_rows",
    "confirmation",
    "format_csv",
    "format_json_lines",
    "format_result",
    "format_table",
    "json_value",
    "statement_label",
    "statement_tag",
    "time_taken",
]

FORMATS = ("table", "csv", "json")


@dataclass(frozen=True)
class ResultRows:
    """Rows collected from a result: ``truncated`` when the result had more than these."""

    columns: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False


# --------------------------------------------------------------------------------------------
# collecting


def collect_rows(df: DataFrame, max_rows: int | None) -> ResultRows:
    """The first ``max_rows`` rows of ``df`` (all rows when None or 0) as Python tuples.

    Top-level timestamp and interval columns are cast to strings by Spark first: Python
    would show timestamps in the local time zone rather than the session's, and cannot
    collect year-month intervals at all. ``FLOAT`` values get their shortest decimal form
    (``0.1``, not ``0.10000000149011612``).
    """
    columns = list(df.columns)
    fields = df.schema.fields
    as_text = (
        T.TimestampType,
        T.DayTimeIntervalType,
        T.YearMonthIntervalType,
        T.CalendarIntervalType,
    )
    if any(isinstance(f.dataType, as_text) for f in fields):
        temp = [f"_c{i}" for i in range(len(fields))]
        df = df.toDF(*temp).select(
            *[
                F.col(name).cast("string") if isinstance(f.dataType, as_text) else F.col(name)
                for name, f in zip(temp, fields, strict=True)
            ]
        )
    limit = max_rows if max_rows and max_rows > 0 else None
    collected = df.limit(limit + 1).collect() if limit is not None else df.collect()
    truncated = limit is not None and len(collected) > limit
    if truncated:
        collected = collected[:limit]
    floats = [i for i, f in enumerate(fields) if isinstance(f.dataType, T.FloatType)]
    rows = []
    for r in collected:
        values = list(r)
        for i in floats:
            if isinstance(values[i], float):
                values[i] = _shortest_float32(values[i])
        rows.append(tuple(values))
    return ResultRows(columns, rows, truncated)


def _shortest_float32(value: float) -> float:
    """The shortest decimal that reads back as the same 32-bit float as ``value``."""
    if not math.isfinite(value):
        return value
    target = struct.pack("<f", value)
    for digits in range(1, 10):
        candidate = float(f"{value:.{digits}g}")
        if struct.pack("<f", candidate) == target:
            return candidate
    return value


# --------------------------------------------------------------------------------------------
# values


def _is_struct(value: Any) -> bool:
    """A pyspark ``Row`` with field names (a collected struct)."""
    return isinstance(value, tuple) and hasattr(value, "__fields__")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _datetime_text(value: dt.datetime) -> str:
    """``2024-01-02 03:04:05`` with the fraction of a second trimmed (``.5``, not ``.500000``)."""
    naive = value.replace(tzinfo=None)
    text = naive.isoformat(sep=" ")
    if naive.microsecond:
        text = text.rstrip("0")
    if value.tzinfo is not None:
        text += value.isoformat()[len(naive.isoformat()) :]
    return text


def _scalar_text(value: Any) -> str | None:
    """Text of a value that reads the same in every format, or None for other kinds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, dt.datetime):
        return _datetime_text(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if hasattr(value, "toJson"):  # VariantVal
        return str(value.toJson())
    return None


def _binary(value: Any) -> bytes | None:
    return bytes(value) if isinstance(value, bytes | bytearray | memoryview) else None


def _nested_text(value: Any) -> str:
    """A value inside an array, map or struct, the way spark-sql writes it."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return cell_text(value)


def cell_text(value: Any) -> str:
    """A value as a ``table`` cell: NULL, ``true``, ``[1,2]``, ``{"a":1}``, ``[01 FF]``."""
    if value is None:
        return "NULL"
    if _is_struct(value):
        items = zip(value.__fields__, value, strict=True)
        return "{" + ",".join(f"{json.dumps(k)}:{_nested_text(v)}" for k, v in items) + "}"
    if isinstance(value, dict):
        return (
            "{" + ",".join(f"{_nested_text(k)}:{_nested_text(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(_nested_text(v) for v in value) + "]"
    raw = _binary(value)
    if raw is not None:
        return "[" + " ".join(f"{b:02X}" for b in raw) + "]"
    text = _scalar_text(value)
    return text if text is not None else str(value)


def json_value(value: Any) -> Any:
    """``value`` as something :func:`json.dumps` writes as valid JSON."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _float_text(value)
    if _is_struct(value):
        return {k: json_value(v) for k, v in zip(value.__fields__, value, strict=True)}
    if isinstance(value, dict):
        return {k if isinstance(k, str) else cell_text(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    raw = _binary(value)
    if raw is not None:
        return base64.b64encode(raw).decode("ascii")
    if hasattr(value, "toJson"):  # VariantVal
        return json.loads(value.toJson())
    text = _scalar_text(value)
    return text if text is not None else str(value)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _is_struct(value) or isinstance(value, dict | list | tuple):
        return _dumps(json_value(value))
    raw = _binary(value)
    if raw is not None:
        return base64.b64encode(raw).decode("ascii")
    return cell_text(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# formats


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal (wide East Asian characters take two)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _one_line(text: str) -> str:
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _cell_lines(value: Any) -> list[str]:
    """The lines of a ``table`` cell: its text split at line breaks, tabs expanded to
    4-column stops, other control characters escaped."""
    text = cell_text(value).replace("\r\n", "\n").replace("\r", "\n")
    return [_one_line(ln.expandtabs(4)) for ln in text.split("\n")]


def _rows_note(n: int, truncated: bool) -> str:
    noun = "row" if n == 1 else "rows"
    return f"(showing first {n} {noun})" if truncated else f"({n} {noun})"


def format_table(result: ResultRows) -> str:
    """An aligned grid with a header and a ``(N rows)`` footer (newline-terminated lines).

    ::

        +----+-------+
        | id | name  |
        +----+-------+
        |  1 | alice |
        |  2 | NULL  |
        +----+-------+
        (2 rows)
    """
    footer = _rows_note(len(result.rows), result.truncated) + "\n"
    if not result.columns:
        return footer
    cells = [[_cell_lines(v) for v in row] for row in result.rows]
    headers = [_one_line(c) for c in result.columns]
    widths = [_width(h) for h in headers]
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(_width(t) for t in lines))
    right = [
        any(row[i] is not None for row in result.rows)
        and all(row[i] is None or _is_number(row[i]) for row in result.rows)
        for i in range(len(result.columns))
    ]

    def line(texts: Sequence[str], align_right: Sequence[bool]) -> str:
        parts = []
        for text, width, r in zip(texts, widths, align_right, strict=True):
            pad = " " * (width - _width(text))
            parts.append(pad + text if r else text + pad)
        return "| " + " | ".join(parts) + " |\n"

    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+\n"
    out = [rule, line(headers, [False] * len(widths)), rule]
    for row in cells:
        height = max(len(lines) for lines in row)
        for k in range(height):
            out.append(line([lines[k] if k < len(lines) else "" for lines in row], right))
    out += [rule, footer]
    return "".join(out)


def format_csv(result: ResultRows) -> str:
    """A header line, then one RFC 4180 line per row (CRLF line ends)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow([_csv_text(v) for v in row])
    return buf.getvalue()


def format_json_lines(result: ResultRows) -> str:
    """One JSON object per row and line, keys in column order (repeated names kept)."""
    keys = [json.dumps(c, ensure_ascii=False) for c in result.columns]
    return "".join(
        "{"
        + ",".join(f"{k}:{_dumps(json_value(v))}" for k, v in zip(keys, row, strict=True))
        + "}\n"
        for row in result.rows
    )


_FORMATTERS: dict[str, Callable[[ResultRows], str]] = {
    "table": format_table,
    "csv": format_csv,
    "json": format_json_lines,
}


def format_result(result: ResultRows, fmt: str) -> str:
    """``result`` in format ``fmt`` (one of :data:`FORMATS`)."""
    try:
        return _FORMATTERS[fmt](result)
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {FORMATS}") from None


# --------------------------------------------------------------------------------------------
# statements without rows


def statement_tag(kind: str) -> str:
    """A statement class name as SQL words: ``CreateTable`` -> ``CREATE TABLE``."""
    words: list[str] = []
    for ch in kind:
        if ch.isupper() and words:
            words.append(" ")
        words.append(ch.upper())
    return "".join(words)


def confirmation(kind: str, write: object | None = None) -> str:
    """The line ``table`` format prints for a statement without rows (``OK`` for one
    hudilite passed to Spark)."""
    tag = "OK" if kind == "SparkStatement" else statement_tag(kind)
    return f"{tag}: {write}" if write is not None else tag


# --------------------------------------------------------------------------------------------
# printing


def statement_label(sql: str, line: int, width: int = 72) -> str:
    """``-- line 3: INSERT INTO t VALUES ...``: where a statement starts and its first
    line, shortened to about ``width`` characters."""
    lines = [ln.strip() for ln in sql.strip().splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if _width(first) > width:
        first, more = first[: width - 4].rstrip(), True
    return f"-- line {line}: {first}{' ...' if more else ''}"


def time_taken(seconds: float, rows: int | None = None) -> str:
    """spark-sql's line: ``Time taken: 1.23 seconds`` (``, Fetched 2 row(s)``)."""
    text = f"Time taken: {seconds:.2f} seconds"
    return text if rows is None else f"{text}, Fetched {rows} row(s)"


class ResultPrinter:
    """Prints statement results one after another in one format.

    ``out`` receives text exactly as it should appear (with its line ends); ``note``
    receives a line for standard error (the truncation note of csv and json). Results
    are separated by an empty line in ``table`` and ``csv`` format; :meth:`reset` starts
    a new run without one (for each input of the interactive prompt).

    Labels (:meth:`label`) and timing lines (:meth:`timing`) appear on ``out`` in
    ``table`` format only; csv and json keep standard output to the rows alone (timing
    goes to ``note`` there when asked for).
    """

    def __init__(
        self,
        fmt: str = "table",
        max_rows: int | None = 1000,
        *,
        out: Callable[[str], None],
        note: Callable[[str], None] | None = None,
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}; expected one of {FORMATS}")
        self.fmt = fmt
        self.max_rows = max_rows
        self._out = out
        self._note = note
        self._printed = False

    def reset(self) -> None:
        self._printed = False
        self._label = None

    _label: str | None = None

    def label(self, text: str) -> None:
        """Head the next result with ``text`` (``table`` format only)."""
        if self.fmt == "table":
            self._label = text

    def timing(self, seconds: float, rows: int | None = None) -> None:
        """``Time taken: ...`` after a result: on ``out`` in ``table`` format, else on
        ``note``."""
        text = time_taken(seconds, rows)
        if self.fmt == "table":
            self._out(text + "\n")
        elif self._note is not None:
            self._note(text)

    def show(self, kind: str, df: DataFrame | None, write: object | None = None) -> int | None:
        """Print one statement's result: its rows, or (no frame, or one without columns)
        a confirmation in ``table`` format. Returns the number of rows shown (None for a
        statement without rows).

        Rows are collected before anything is printed, so a statement that fails while
        running its query prints nothing.
        """
        if df is None or not df.columns:
            if self.fmt == "table":
                self._emit(confirmation(kind, write) + "\n")
            return None
        result = collect_rows(df, self.max_rows)
        self.show_rows(result)
        return len(result.rows)

    def show_rows(self, result: ResultRows) -> None:
        text = format_result(result, self.fmt)
        if text or self._label is not None:
            self._emit(text)
        if result.truncated and self.fmt != "table" and self._note is not None:
            self._note(_rows_note(len(result.rows), True))

    def _emit(self, text: str) -> None:
        if self._printed and self.fmt != "json":
            self._out("\r\n" if self.fmt == "csv" else "\n")
        if self._label is not None:
            self._out(self._label + "\n")
            self._label = None
        self._out(text)
        self._printed = True
