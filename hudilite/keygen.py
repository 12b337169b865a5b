"""Record keys and partition paths, computed the way Hudi's key generators do.

Hudi stores the generator's output in ``_hoodie_record_key`` / ``_hoodie_partition_path``
and lays files out by the partition path, so the strings must be byte-identical or
upserts from Hudi and from hudilite into one table would miss each other. Rules (Hudi's
``KeyGenUtils`` and built-in generators):

* value text = Java ``String.valueOf`` of the Avro value: integer digits, ``true``/
  ``false``, strings as is, ``Float/Double.toString`` (``1.0``, ``1.0E7``, ``NaN``),
  ``BigDecimal.toString``, dates ``yyyy-MM-dd``, timestamps as epoch **microseconds**
  (the raw ``timestamp-micros`` long, Hudi's default). Binary/nested values are refused;
* SIMPLE: key = the value (null/empty -> error), partition = one field or none;
  COMPLEX: ``f1:v1,f2:v2`` with ``__null__``/``__empty__`` (all missing -> error),
  partition parts joined by ``/``; NON_PARTITION: path ``""``, key SIMPLE for one
  field else COMPLEX; TIMESTAMP: the field's instant in an output date format;
  CUSTOM: parts ``name:SIMPLE`` / ``name:TIMESTAMP``;
* hive style ``field=value``; null/empty partition value -> ``__HIVE_DEFAULT_PARTITION__``;
  ``url_encode`` escapes values as ``PartitionPathEncodeUtils.escapePathName`` (Hive's
  ``%XX`` for ``/ : = % # ? * ' " \\ [ ] { } ^``, DEL, controls) -- that, not
  ``java.net.URLEncoder``, is what Hudi 0.14+ writes.

Vectorised with ``pyarrow.compute``; Python runs only per *distinct* value where Java's
number formatting has no Arrow equivalent.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.config.vocab import (
    KEYGEN_COMPLEX,
    KEYGEN_CUSTOM,
    KEYGEN_NON_PARTITION,
    KEYGEN_SIMPLE,
    KEYGEN_TIMESTAMP,
    KEYGEN_TYPES,
)
from hudilite.errors import ConfigError, KeyGenerationError
from hudilite.keygen_ambiguity import check_composite_values
from hudilite.keygen_dates import (
    check_input_format,
    format_instants,
    format_tokens,
    normalize_tz,
    parse_dates,
)
from hudilite.partition_segments import (
    check_no_slash,
    check_not_placeholder,
    check_segment_lengths,
    splits_ambiguously,
)

if TYPE_CHECKING:
    from hudilite.config import Options, TableConfig

# The key generator types, under the names this module has always exported.
SIMPLE = KEYGEN_SIMPLE
COMPLEX = KEYGEN_COMPLEX
NON_PARTITION = KEYGEN_NON_PARTITION
TIMESTAMP = KEYGEN_TIMESTAMP
CUSTOM = KEYGEN_CUSTOM
KINDS = KEYGEN_TYPES

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"

#: ``hoodie.keygen.timebased.timestamp.type`` values -> epoch unit in ms (SCALAR: its unit).
_TYPE_UNITS_MS = {"UNIX_TIMESTAMP": 1000.0, "EPOCHMILLISECONDS": 1.0, "EPOCHMICROSECONDS": 1e-3}
TIMESTAMP_TYPES = (*_TYPE_UNITS_MS, "SCALAR", "DATE_STRING")
_SCALAR_UNITS_MS = {"NANOSECONDS": 1e-6, "MICROSECONDS": 1e-3, "MILLISECONDS": 1.0,
                    "SECONDS": 1e3, "MINUTES": 6e4, "HOURS": 3.6e6, "DAYS": 8.64e7}  # fmt: skip

Batch: TypeAlias = pa.RecordBatch | pa.Table
_TS = "hoodie.keygen.timebased."  # prefix of the timestamp key generator's options


@dataclass(frozen=True)
class KeyGenSpec:
    """How a table derives record keys and partition paths (Hudi's key generator config).

    CUSTOM ``partition_fields`` are ``name:SIMPLE`` / ``name:TIMESTAMP``; the timestamp
    settings serve TIMESTAMP specs and CUSTOM ``:TIMESTAMP`` parts. ``timezone`` is
    ``hoodie.keygen.timebased.timezone``; ``input_timezone``/``output_timezone`` override it
    per direction; ``input_format`` may list formats split by ``input_format_delimiter``.
    ``complex_value_only``: a single-field COMPLEX key is the bare value, as Hudi 0.14.1 -
    1.0.2 wrote it (``hoodie.table.complex.keygen.encoding``); by default ``field:value``.
    """

    kind: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False
    timestamp_type: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    timezone: str = "UTC"
    input_timezone: str | None = None
    output_timezone: str | None = None
    scalar_time_unit: str = "SECONDS"
    input_format_delimiter: str = ","
    complex_value_only: bool = False
    #: (field name, SIMPLE|TIMESTAMP) per partition path part, derived from the above.
    partition_parts: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kind = str(self.kind).strip().upper()
        set_ = object.__setattr__
        set_(self, "kind", kind)
        set_(self, "record_key_fields", tuple(self.record_key_fields))
        set_(self, "partition_fields", tuple(self.partition_fields))
        _require(kind in KINDS, f"unknown key generator type {self.kind!r} ({'|'.join(KINDS)})")
        # No record key field: a keyless table, whose keys the write generates
        # (hudilite.auto_keys); the generator still makes its partition paths.
        keys, parts = self.record_key_fields, self.partition_fields
        _require(kind != SIMPLE or len(keys) <= 1, f"SIMPLE takes one record key field: {keys}")
        set_(self, "partition_parts", self._parse_parts())
        n = len(self.partition_parts)
        _require(kind != SIMPLE or n <= 1, f"SIMPLE takes at most one partition field: {parts}")
        _require(kind != TIMESTAMP or n == 1, f"TIMESTAMP takes one partition field: {parts}")
        if any(k == TIMESTAMP for _, k in self.partition_parts):
            self._check_timestamp_settings()

    def _parse_parts(self) -> tuple[tuple[str, str], ...]:
        if self.kind == NON_PARTITION:
            return ()
        parts = []
        for spec in self.partition_fields:
            if self.kind != CUSTOM:
                parts.append((spec, TIMESTAMP if self.kind == TIMESTAMP else SIMPLE))
                continue
            name, sep, part_kind = spec.partition(":")
            part_kind = part_kind.strip().upper()
            ok = sep and part_kind in (SIMPLE, TIMESTAMP)
            _require(bool(ok), f"CUSTOM partition field {spec!r} must be name:SIMPLE|TIMESTAMP")
            parts.append((name.strip(), part_kind))
        return tuple(parts)

    def _check_timestamp_settings(self) -> None:
        """Validate on the driver what executors would otherwise fail on."""
        ts_type = (self.timestamp_type or "").strip().upper()
        types = "|".join(TIMESTAMP_TYPES)
        _require(bool(ts_type), _missing_setting("timestamp.type", types))
        _require(ts_type in TIMESTAMP_TYPES, f"invalid {_TS}timestamp.type {ts_type!r} ({types})")
        object.__setattr__(self, "timestamp_type", ts_type)
        _require(bool(self.output_format), _missing_setting("output.dateformat", "yyyy/MM/dd"))
        format_tokens(self.output_format or "")
        if ts_type == "DATE_STRING":
            example = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
            _require(bool(self.input_format), _missing_setting("input.dateformat", example))
            for fmt in self.input_formats:
                check_input_format(fmt)
        unit = self.scalar_time_unit.upper()
        _require(ts_type != "SCALAR" or unit in _SCALAR_UNITS_MS, f"unknown time unit {unit!r}")
        self.in_tz, self.out_tz  # noqa: B018 -- both parse the zone ids

    @property
    def input_formats(self) -> list[str]:
        """The DATE_STRING input formats, tried in order."""
        raw = self.input_format or ""
        return [f.strip() for f in re.split(self.input_format_delimiter, raw) if f.strip()]

    @property
    def in_tz(self) -> str:
        """Arrow time zone of DATE_STRING inputs."""
        return normalize_tz(self.input_timezone or self.timezone)

    @property
    def out_tz(self) -> str:
        """Arrow time zone the output date format is rendered in."""
        return normalize_tz(self.output_timezone or self.timezone)

    @property
    def partition_field_names(self) -> tuple[str, ...]:
        """The partition fields without CUSTOM ``:type`` suffixes."""
        return tuple(name for name, _ in self.partition_parts)

    @classmethod
    def from_config(cls, config: TableConfig, options: Options | None = None) -> KeyGenSpec:
        """The spec of a table: its ``hoodie.properties`` plus the write ``options``.

        Kind, fields, hive style and URL-encoding come from the table (they fix the layout on
        disk); timestamp settings from the options, then the table properties (also under
        the legacy ``hoodie.deltastreamer.keygen.timebased.*`` names).
        """
        given = {k.lower(): v for k, v in (options.raw if options is not None else {}).items()}
        table = {k.lower(): v for k, v in config.props.items()}

        def lookup(key: cfg.ConfigKey) -> str | None:
            # Every spelling the registry knows (Hudi's legacy hoodie.deltastreamer.keygen.*
            # names are aliases), the write options before the table's properties.
            for source in (given, table):
                for name in key.all_names():
                    if name.lower() in source:
                        return source[name.lower()]
            return None

        parts = tuple(config.partition_fields)
        if config.keygen_type == CUSTOM and any(":" not in p for p in parts):
            # hoodie.properties may hold bare names; the write option carries the types.
            typed = [
                p.strip() for p in (lookup(cfg.PARTITION_FIELDS) or "").split(",") if p.strip()
            ]
            if typed and all(":" in p for p in typed):
                parts = tuple(typed)
        general_tz = lookup(cfg.TIMESTAMP_TIMEZONE)
        encoding = (config.props.get(cfg.COMPLEX_KEYGEN_ENCODING.name) or "").strip().upper()
        if not encoding and (lookup(cfg.COMPLEX_KEYGEN_NEW_ENCODING) or "") == "true":
            encoding = "VALUE_ONLY"
        return cls(
            kind=config.keygen_type,
            record_key_fields=tuple(config.record_key_fields),
            partition_fields=parts,
            hive_style=config.hive_style,
            url_encode=config.url_encode,
            timestamp_type=lookup(cfg.TIMESTAMP_TYPE),
            input_format=lookup(cfg.TIMESTAMP_INPUT_FORMAT),
            output_format=lookup(cfg.TIMESTAMP_OUTPUT_FORMAT),
            timezone=general_tz or "UTC",
            # As Hudi: the general time zone, when set, wins over the per-direction ones.
            input_timezone=None if general_tz else lookup(cfg.TIMESTAMP_INPUT_TIMEZONE),
            output_timezone=None if general_tz else lookup(cfg.TIMESTAMP_OUTPUT_TIMEZONE),
            scalar_time_unit=lookup(cfg.TIMESTAMP_SCALAR_UNIT) or "SECONDS",
            input_format_delimiter=lookup(cfg.TIMESTAMP_INPUT_FORMAT_DELIMITER) or ",",
            complex_value_only=encoding == "VALUE_ONLY",
        )


def _missing_setting(name: str, example: str) -> str:
    """The error for a timestamp key generator setting neither the table nor the write has.

    Hudi 0.x kept ``hoodie.keygen.timebased.*`` in the catalog (Hive metastore, Spark table
    properties), not in ``hoodie.properties``: such a table's writes must pass it again.
    """
    return (
        f"the timestamp key generator needs '{_TS}{name}' ({example}), which the table's "
        f"hoodie.properties does not hold (Hudi 0.x kept it in the catalog): pass it as a "
        f"write option, e.g. options={{'{_TS}{name}': ...}} or SET {_TS}{name}=... in SQL"
    )


# --- public functions ----------------------------------------------------------------------


def record_keys(spec: KeyGenSpec, batch: Batch) -> pa.StringArray:
    """``_hoodie_record_key`` of every row of ``batch``.

    Raises :class:`KeyGenerationError` naming the field and the first bad row
    when a single-field key is null or empty, or when every field of a
    composite key is null or empty.
    """
    fields = spec.record_key_fields
    _require(bool(fields), "the table has no record key field (its keys are generated)")
    simple = len(fields) == 1 and (spec.kind != COMPLEX or spec.complex_value_only)
    if simple:
        text = to_key_text(_column(batch, fields[0]), fields[0])
        _raise_first(pc.is_null(text), "record key field {!r} is null in row {}", fields[0])
        _raise_first(pc.equal(text, ""), "record key field {!r} is empty in row {}", fields[0])
        return text
    parts: list[pa.Array] = []
    all_missing: pa.Array | None = None
    for name in fields:
        text = to_key_text(_column(batch, name), name)
        if len(fields) > 1:  # values the f1:v1,f2:v2 text cannot keep apart are refused
            check_composite_values(name, text, fields)
        is_null, is_empty = pc.is_null(text), pc.fill_null(pc.equal(text, ""), False)
        value = pc.if_else(is_empty, EMPTY_RECORDKEY_PLACEHOLDER, text)
        value = pc.if_else(is_null, NULL_RECORDKEY_PLACEHOLDER, value)
        parts.append(pc.binary_join_element_wise(f"{name}:", value, ""))
        missing = pc.or_(is_null, is_empty)
        all_missing = missing if all_missing is None else pc.and_(all_missing, missing)
    assert all_missing is not None
    message = "record key fields {!r} are all null or empty in row {}"
    _raise_first(all_missing, message, list(fields))
    return _as_array(pc.binary_join_element_wise(*parts, ","))


def partition_paths(spec: KeyGenSpec, batch: Batch) -> pa.StringArray:
    """``_hoodie_partition_path`` of every row of ``batch`` (``""`` when not partitioned)."""
    if not spec.partition_parts:
        return pa.repeat("", batch.num_rows)
    pieces = []
    n_parts = len(spec.partition_parts)
    for name, kind in spec.partition_parts:
        if kind == TIMESTAMP:  # never null: a null instant takes Hudi's default value
            text = _timestamp_part(spec, _column(batch, name), name)
            text = _escape_array(text) if spec.url_encode else text
        else:
            raw = text = to_key_text(_column(batch, name), name)
            missing = pc.or_(pc.is_null(text), pc.fill_null(pc.equal(text, ""), False))
            text = _escape_array(text) if spec.url_encode else text
            text = pc.if_else(missing, DEFAULT_PARTITION_PATH, text)
        _check_segments(text, name, hive_prefixed=spec.hive_style)
        if kind == SIMPLE and splits_ambiguously(n_parts, spec.hive_style, spec.url_encode):
            check_no_slash(name, text, list(spec.partition_field_names))
        if kind == SIMPLE:  # (null and empty values were replaced by the placeholder above)
            check_not_placeholder(name, raw, DEFAULT_PARTITION_PATH)
        if spec.hive_style:
            text = pc.binary_join_element_wise(f"{name}=", text, "")
        check_segment_lengths(name, text)  # a folder name the file system would refuse
        pieces.append(text)
    joined = pieces[0] if len(pieces) == 1 else pc.binary_join_element_wise(*pieces, "/")
    return _as_array(joined)


def partition_values(spec: KeyGenSpec, partition_path: str) -> dict[str, str]:
    """``{field: value text}`` of a partition path (the inverse of :func:`partition_paths`).

    Hive-style prefixes are stripped and URL-encoding undone. A null/empty value
    comes back as :data:`DEFAULT_PARTITION_PATH`; a TIMESTAMP part as its
    formatted text (``2024/01/31``), which may span several path segments.
    Raises :class:`KeyGenerationError` when the path does not fit the spec.
    """
    parts = spec.partition_parts
    if not parts:
        return {}
    segments = partition_path.split("/")
    values: list[str] = []
    if spec.hive_style:
        expected = iter(name for name, _ in parts)
        current = next(expected)
        for seg in segments:
            if seg.startswith(current + "="):
                values.append(seg[len(current) + 1 :])
                current = next(expected, "\x00")  # a name no segment starts with
            elif values:  # a '/' inside the previous value (e.g. a yyyy/MM/dd timestamp)
                values[-1] += "/" + seg
            else:
                break
    elif len(parts) == 1:
        values = [partition_path]
    else:
        # A TIMESTAMP value spans as many segments as its output format has '/' + 1.
        slashes = sum(t.count("/") for k, t in format_tokens(spec.output_format or "") if k == "'")
        widths = [1 if kind == SIMPLE else 1 + slashes for _, kind in parts]
        if sum(widths) == len(segments):
            pos = 0
            for width in widths:
                values.append("/".join(segments[pos : pos + width]))
                pos += width
    if len(values) != len(parts):
        raise KeyGenerationError(
            f"partition path {partition_path!r} does not match partition fields "
            f"{list(spec.partition_field_names)}"
        )
    decode = spec.url_encode
    return {
        name: unescape_path_name(v) if decode and v != DEFAULT_PARTITION_PATH else v
        for (name, _), v in zip(parts, values, strict=True)
    }


# --- value -> text -------------------------------------------------------------------------


def to_key_text(arr: pa.Array | pa.ChunkedArray, name: str = "?") -> pa.StringArray:
    """Values as the text Hudi's key generators use (``String.valueOf`` of the Avro value).

    Nulls stay null. Raises :class:`KeyGenerationError` for types Hudi renders
    as object addresses (binary, list, struct, map).
    """
    arr = _as_array(arr)
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_string(t):
        return arr
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or str(t) in _OTHER_STRINGS:
        return arr.cast(pa.string())
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_floating(t):
        return _map_distinct(arr, lambda x: _java_number(x, single=t != pa.float64()))
    if pa.types.is_decimal(t):
        return _map_distinct(arr, lambda d: str(d))  # Python's Decimal str == BigDecimal.toString
    if pa.types.is_date(t):
        return arr.cast(pa.date32()).cast(pa.string())
    if pa.types.is_timestamp(t):
        micros = arr.cast(pa.timestamp("us", tz=t.tz), safe=False)
        return micros.cast(pa.int64()).cast(pa.string())
    message = f"field {name!r} of type {t} cannot be used in a record key or partition path"
    raise KeyGenerationError(message)


_OTHER_STRINGS = ("large_string", "string_view")


def _java_number(x: float, single: bool = False) -> str:
    """Java's ``Double.toString`` (``Float.toString`` when ``single``): the shortest digits
    that read back as the same value; scientific notation below 1e-3 and from 1e7."""
    if math.isnan(x) or math.isinf(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    shortest = repr(x)
    for precision in range(1, 10) if single else ():  # shortest text giving the same float32
        text = f"{x:.{precision}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == x:
            shortest = text
            break
    sign, digits, exp = Decimal(shortest).normalize().as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    point = len(text) + exp  # digits before the decimal point
    if not 1e-3 <= abs(x) < 1e7:
        body = f"{text[0]}.{text[1:] or '0'}E{point - 1}"
    elif point <= 0:
        body = "0." + "0" * -point + text
    else:  # pad integral digits with zeros, then at least one fraction digit
        text = text.ljust(point, "0")
        body = f"{text[:point]}.{text[point:] or '0'}"
    return ("-" if sign else "") + body


def _map_distinct(arr: pa.Array, fn: Callable[[Any], str]) -> pa.StringArray:
    uniques = pc.unique(arr)  # Python work per distinct value, broadcast back with a take
    texts = pa.array([None if v is None else fn(v) for v in uniques.to_pylist()], pa.string())
    return texts.take(pc.index_in(arr, value_set=uniques))


# --- partition path escaping ---------------------------------------------------------------

# Hudi's charToEscape: 0x00-0x1F, DEL and the characters below.
_ESCAPED = set(range(0x00, 0x20)) | {ord(c) for c in "\"#%'*/:=?\\\x7f{[]^"}
# \xHH escapes: one pattern text both Python's re and Arrow's RE2 read the same way.
_NEEDS_ESCAPE = re.compile("[" + "".join(f"\\x{c:02x}" for c in sorted(_ESCAPED)) + "]")


def escape_path_name(value: str) -> str:
    """Hudi's ``PartitionPathEncodeUtils.escapePathName`` (Hive's ``%XX`` escapes)."""
    return "".join(f"%{ord(c):02X}" if ord(c) in _ESCAPED else c for c in value)


def unescape_path_name(value: str) -> str:
    """Inverse of :func:`escape_path_name` (lenient: a stray ``%`` stays as is, as in Hudi)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)


def _escape_array(text: pa.Array) -> pa.Array:
    if not pc.any(pc.match_substring_regex(text, _NEEDS_ESCAPE.pattern)).as_py():
        return text  # the common case: nothing to escape, no Python work
    return _map_distinct(text, escape_path_name)


# --- partition path safety ----------------------------------------------------------------

#: A value segment is unsafe when it is empty (``a//b``, a leading or trailing ``/``), starts
# with a dot (``..`` leaves the table, ``.hoodie`` is the metadata folder, and listings skip
# hidden directories so the rows would vanish), or holds ``\\`` / NUL (Hadoop, Spark and
# hudi-rs paths disagree on them).
UNSAFE_SEGMENT = r"(^|/)(\.|/|$)|\\|\x00"
#: The same for a hive-style value, whose first segment is prefixed by ``name=``.
UNSAFE_SEGMENT_HIVE = r"/(\.|/|$)|\\|\x00"


def unsafe_value_message(name: str, shown: str) -> str:
    """The error text for partition field ``name`` whose value (shown as ``shown``) is unsafe."""
    return (
        f"partition field {name!r} has value {shown} that is not a safe path segment (empty, "
        "'.'-prefixed such as '..' or '.hoodie', or holding '\\' or NUL); fix the value, or "
        "use hive-style partitioning / partitionpath.urlencode"
    )


def _check_segments(text: pa.Array, name: str, *, hive_prefixed: bool) -> None:
    """Refuse partition values that would not make safe path segments under the table.

    Hudi refuses ``..`` segments whatever the URL-encoding (``PartitionPathEncodeUtils.
    validateNoPathTraversal``: encoding leaves dots alone); hudilite also refuses the other
    segments above, since a row written there is hidden from every reader. A ``/`` inside a
    value stays a nested directory as in Hudi (``2024/01/31``). Raises
    :class:`KeyGenerationError` naming the field, the value and its row.
    """
    bad = pc.fill_null(
        pc.match_substring_regex(text, UNSAFE_SEGMENT_HIVE if hive_prefixed else UNSAFE_SEGMENT),
        False,
    )
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        shown = f"{text[row].as_py()!r} in row {row}"
        raise KeyGenerationError(unsafe_value_message(name, shown))


# --- timestamp partitions ------------------------------------------------------------------


def _timestamp_part(spec: KeyGenSpec, arr: pa.Array, name: str) -> pa.StringArray:
    """Format a TIMESTAMP partition field as Hudi's ``TimestampBasedAvroKeyGenerator``.

    Numbers are epoch values in the unit of ``timestamp_type`` (floats and
    decimals truncated, as Java's ``longValue()``); strings are parsed with the
    input formats in the input time zone (DATE_STRING) or read as numbers; Arrow
    timestamps and dates are taken as the instant they denote. A null becomes
    epoch + 1 unit, Hudi's ``getDefaultPartitionVal`` (``1970/01/01`` in UTC).
    """
    ts_type = spec.timestamp_type or ""
    unit_ms = _TYPE_UNITS_MS.get(ts_type, _SCALAR_UNITS_MS.get(spec.scalar_time_unit.upper(), 1))
    unit_ms = 1.0 if ts_type == "DATE_STRING" else unit_ms
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.dictionary_decode(), arr.type.value_type
    try:
        if pa.types.is_timestamp(t):
            millis = arr.cast(pa.timestamp("ms", tz=t.tz), safe=False).cast(pa.int64())
        elif pa.types.is_date(t):
            days = arr.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
            millis = pc.multiply(days, 86_400_000)
        elif ts_type == "DATE_STRING" and (pa.types.is_string(t) or pa.types.is_large_string(t)):
            millis = _parse_dates(spec, arr.cast(pa.string()), name)
        else:  # numbers (floats and decimals truncated) and numeric strings
            millis = _scale(arr.cast(pa.int64(), safe=False), unit_ms)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        message = f"partition field {name!r}: cannot read {t} as a timestamp: {exc}"
        raise KeyGenerationError(message) from exc
    millis = pc.fill_null(millis, max(1, int(unit_ms)))
    instants = millis.cast(pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("ms", tz=spec.out_tz))
    return format_instants(instants, spec.output_format or "")


def _scale(values: pa.Array, unit_ms: float) -> pa.Array:  # -> millis, as TimeUnit.convert
    if unit_ms >= 1:
        return pc.multiply_checked(values, int(unit_ms))
    return pc.divide(values, round(1 / unit_ms))  # integer division truncates toward zero


def _parse_dates(spec: KeyGenSpec, text: pa.Array, name: str) -> pa.Array:
    """DATE_STRING values -> epoch millis: the first input format that parses each value."""
    attempts = [parse_dates(text, fmt, spec.in_tz) for fmt in spec.input_formats]
    parsed = pc.coalesce(*attempts) if len(attempts) > 1 else attempts[0]
    bad = pc.and_(pc.is_null(parsed), pc.is_valid(text))
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        value, formats = text[row].as_py(), spec.input_formats
        message = f"partition field {name!r}: {value!r} in row {row} matches none of {formats}"
        raise KeyGenerationError(message)
    return parsed


# --- helpers -------------------------------------------------------------------------------


def _as_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _column(batch: Batch, name: str) -> pa.Array:
    """A top-level column, or a nested one addressed as ``parent.child`` (nulls propagate)."""
    if name in batch.schema.names:
        return _as_array(batch.column(name))
    head, *rest = name.split(".")
    missing = KeyGenerationError(f"field {name!r} is not in the data ({batch.schema.names})")
    if not rest or head not in batch.schema.names:
        raise missing
    arr = _as_array(batch.column(head))
    for child in rest:
        if not pa.types.is_struct(arr.type) or arr.type.get_field_index(child) < 0:
            raise missing
        arr = pc.struct_field(arr, child)
    return arr


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


def _raise_first(mask: pa.Array, message: str, subject: Any) -> None:
    mask = pc.fill_null(mask, False)
    if pc.any(mask).as_py():
        raise KeyGenerationError(message.format(subject, pc.index(mask, True).as_py()))


__all__ = ["COMPLEX", "CUSTOM", "DEFAULT_PARTITION_PATH", "EMPTY_RECORDKEY_PLACEHOLDER", "KINDS",
           "NON_PARTITION", "NULL_RECORDKEY_PLACEHOLDER", "SIMPLE", "TIMESTAMP", "UNSAFE_SEGMENT",
           "UNSAFE_SEGMENT_HIVE", "KeyGenSpec", "escape_path_name", "partition_paths",
           "partition_values", "record_keys", "to_key_text", "unescape_path_name",
           "unsafe_value_message"]  # fmt: skip
