"""Java date patterns for the timestamp key generator: parsing inputs, formatting paths.

Hudi's ``TimestampBasedAvroKeyGenerator`` parses ``DATE_STRING`` values with
``hoodie.keygen.timebased.input.dateformat`` and renders partition paths with
``...output.dateformat``, both Java date patterns (Joda's, whose letters match
``java.time.format.DateTimeFormatter`` for everything below). Supported letters:

* ``y``/``u`` year (``yy``: Joda's two-digit year, see :func:`two_digit_year_base`),
  ``M`` month (``MMM``/``MMMM``: English names), ``d`` day, ``D`` day of year
  (formatting), ``H`` hour, ``h`` + ``a`` 12-hour clock, ``m``, ``s``, ``S...`` fraction
  of a second (parsing reads up to nine digits, formatting gives milliseconds cut or
  zero-padded to the width), ``E`` day name;
* offsets: ``Z`` (``+0100``), ``ZZ``/``XXX``/``xxx``/``ZZZZZ`` (``+01:00``), ``X``
  (``+01``), ``XX``/``x``/``xx`` (``+0100``); a parsed ``Z`` is UTC for every letter.
  A parsed offset decides the instant, whatever the input time zone (Joda's
  ``parseDateTime``). ``z``/``zzzz``/``VV``/``ZZZ``: a zone id (``UTC``, ``Europe/Paris``,
  ``GMT+8``) when parsing; the zone's short name (``UTC``, ``CET``) when formatting;
* quoted literals (``'T'``, ``''`` for a quote) and any other non-letter text.

Parsing is one RE2 regular expression per pattern run by ``pyarrow.compute``
(``extract_regex``), then Arrow arithmetic: no Python per row (zone ids and month names:
per distinct value).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import ConfigError

_LETTER_RUN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
#: Letters a pattern may use (see the module docstring).
LETTERS = "yYuMdDHhmsSEaZXxzV"
_OFFSET_LETTERS = "ZXx"
_NUMERIC = "yYuMdDHhms"


def format_tokens(pattern: str) -> list[tuple[str, str]]:
    """Split a Java date pattern into ``(letter, run)`` tokens; literals use letter ``'``.

    Raises :class:`ConfigError` naming a letter hudilite does not support.
    """
    tokens = []
    for m in _LETTER_RUN.finditer(pattern):
        run = m.group(0)
        if run.startswith("'"):
            tokens.append(("'", "'" if run == "''" else run[1:-1].replace("''", "'")))
        elif m.group(1):
            letter = m.group(1)
            if letter not in LETTERS:
                raise ConfigError(f"{pattern!r}: pattern letter {letter!r} unsupported")
            tokens.append((letter, run))
        else:
            tokens.append(("'", run))
    return tokens


# --- parsing ---------------------------------------------------------------------------------

_OFFSET_TEXT = r"Z|[+-]\d{2}(?::?\d{2})?"


def _group_pattern(letter: str, run: str, adjacent: bool) -> str:
    """The regex of one field; ``adjacent``: another number follows without a separator,
    so the field takes exactly its width (``yyyyMMdd``)."""
    width = len(run)
    if letter in "yYu":
        if width == 2:
            return r"\d{2}"
        return rf"\d{{{width}}}" if adjacent else rf"\d{{{max(width, 1)},9}}"
    if letter == "M" and width >= 3:
        names = [m[:3] for m in MONTHS] if width == 3 else MONTHS
        return "(?i:" + "|".join(names) + ")"
    if letter == "E":
        names = DAYS if width >= 4 else [d[:3] for d in DAYS]
        return "(?i:" + "|".join(names) + ")"
    if letter == "a":
        return "(?i:AM|PM)"
    if letter == "S":
        return rf"\d{{{width}}}" if adjacent else r"\d{1,9}"
    if letter in _OFFSET_LETTERS and not (letter == "Z" and width in (3, 4)):
        return _OFFSET_TEXT
    if letter in "zVZ":  # a zone id (or GMT+8, or a bare offset)
        return r"[A-Za-z][A-Za-z0-9_/+\-:]*|" + _OFFSET_TEXT
    return rf"\d{{{width}}}" if adjacent else rf"\d{{1,{max(width, 2)}}}"


def parse_regex(pattern: str) -> tuple[str, list[tuple[str, str]]]:
    """``(regex, fields)``: a full-match RE2 pattern with one group ``g<i>`` per field."""
    tokens = format_tokens(pattern)
    parts: list[str] = []
    fields: list[tuple[str, str]] = []
    for i, (letter, run) in enumerate(tokens):
        if letter == "'":
            parts.append(re.escape(run))
            continue
        following = tokens[i + 1][0] if i + 1 < len(tokens) else "'"
        adjacent = following in _NUMERIC or following == "S"
        if letter == "D":
            raise ConfigError(f"input date format {pattern!r}: {run!r} cannot be parsed")
        parts.append(f"(?P<g{len(fields)}>{_group_pattern(letter, run, adjacent)})")
        fields.append((letter, run))
    return "^" + "".join(parts) + "$", fields


def check_input_format(pattern: str) -> None:
    """Raise :class:`ConfigError` when ``pattern`` cannot parse dates (no year, say)."""
    _, fields = parse_regex(pattern)
    letters = {letter for letter, _ in fields}
    if not letters & set("yYu"):
        raise ConfigError(f"input date format {pattern!r} has no year")


def two_digit_year_base(today: datetime | None = None) -> tuple[int, int]:
    """Joda's rule for a parsed ``yy`` (``DateTimeFormat.forPattern`` pivots on the current
    year minus 30): two digits ``t`` name the year in ``[pivot - 50, pivot + 49]``. Returns
    ``(low, offset)`` such that the year is ``low - offset + t``, plus 100 when
    ``t < offset`` (Joda's ``TwoDigitYear.parseInto``). In 2026: 47 -> 1947, 45 -> 2045."""
    low = (today or datetime.now(UTC)).year - 30 - 50
    return low, low % 100


def parse_dates(text: pa.Array, pattern: str, in_tz: str) -> pa.Array:
    """``text`` parsed with ``pattern`` as epoch milliseconds (int64; null where it does not
    match). Fields absent from the pattern take their smallest value (January, day 1,
    midnight); values are read in ``in_tz`` unless they carry an offset or zone."""
    regex, fields = parse_regex(pattern)
    n = len(text)
    groups = pc.extract_regex(text, regex)  # null where the pattern does not match
    parts: dict[str, Any] = {}
    for i, (letter, run) in enumerate(fields):
        parts.setdefault(letter, (run, pc.struct_field(groups, [i])))

    def number(letter: str, default: int) -> pa.Array:
        if letter not in parts:
            return pa.repeat(pa.scalar(default, pa.int64()), n)
        return parts[letter][1].cast(pa.int64())

    year_letter = next((c for c in "yuY" if c in parts), "y")
    year = number(year_letter, 1970)
    if year_letter in parts and len(parts[year_letter][0]) == 2:
        low, offset = two_digit_year_base()
        wrap = pc.if_else(pc.less(year, offset), 100, 0)
        year = pc.add(pc.add(year, low - offset), wrap)
    if "M" in parts and len(parts["M"][0]) >= 3:
        names = [m.lower()[: 3 if len(parts["M"][0]) == 3 else None] for m in MONTHS]
        lowered = pc.utf8_lower(parts["M"][1])
        month = pc.add(pc.index_in(lowered, value_set=pa.array(names)), 1).cast(pa.int64())
    else:
        month = number("M", 1)
    day = number("d", 1)
    hour = number("H", 0)
    if "h" in parts:
        hour = pc.subtract(number("h", 12), pc.multiply(pc.divide(number("h", 12), 12), 12))
        if "a" in parts:
            pm = pc.equal(pc.utf8_upper(parts["a"][1]), "PM")
            hour = pc.add(hour, pc.if_else(pm, 12, 0))
    minute, second = number("m", 0), number("s", 0)
    text_iso = pc.binary_join_element_wise(
        _pad(year, 4), "-", _pad(month, 2), "-", _pad(day, 2), " ",
        _pad(hour, 2), ":", _pad(minute, 2), ":", _pad(second, 2), "",
    )  # fmt: skip
    local = pc.strptime(text_iso, format="%Y-%m-%d %H:%M:%S", unit="ms", error_is_null=True)
    millis = local.cast(pa.int64())
    if "S" in parts:
        digits = pc.utf8_rpad(parts["S"][1], width=9, padding="0")
        frac = pc.utf8_slice_codeunits(digits, 0, 3).cast(pa.int64())
        millis = pc.add(millis, frac)
    offset = _offset_millis(parts, millis, in_tz)
    return pc.subtract(millis, offset)


def _offset_millis(parts: dict[str, Any], local_millis: pa.Array, in_tz: str) -> pa.Array:
    """Milliseconds to subtract from local wall-clock millis to get the instant."""
    text = next((parts[c][1] for c in "ZXxzV" if c in parts), None)
    in_zone = _zone_offsets(local_millis, in_tz)
    if text is None:
        return in_zone
    # One Python call per distinct zone text: an offset, Z, or a zone id.
    uniques = pc.unique(text).to_pylist()
    fixed: list[int | None] = []
    zones: dict[str, str] = {}
    for value in uniques:
        offset = _fixed_offset(value) if value is not None else None
        fixed.append(offset)
        if offset is None and value is not None:
            zones[value] = normalize_tz(value)
    index = pc.index_in(text, value_set=pa.array(uniques, pa.string()))
    result = pa.array(fixed, pa.int64()).take(index)
    for value, zone in zones.items():
        is_it = pc.fill_null(pc.equal(text, value), False)
        result = pc.if_else(is_it, _zone_offsets(local_millis, zone), result)
    return pc.coalesce(result, in_zone)


def _fixed_offset(value: str) -> int | None:
    m = re.fullmatch(r"(?:GMT|UTC|UT)?([+-])(\d{2}):?(\d{2})?", value.strip(), re.IGNORECASE)
    if value.strip().upper() in ("Z", "UTC", "GMT", "UT"):
        return 0
    if not m:
        return None
    sign = -1 if m.group(1) == "-" else 1
    return sign * (int(m.group(2)) * 3_600_000 + int(m.group(3) or 0) * 60_000)


def _zone_offsets(local_millis: pa.Array, zone: str) -> pa.Array:
    """UTC offset (ms) of ``zone`` at each local wall-clock time (DST gaps: the earlier)."""
    naive = local_millis.cast(pa.timestamp("ms"))
    zoned = pc.assume_timezone(naive, zone, ambiguous="earliest", nonexistent="earliest")
    return pc.subtract(local_millis, zoned.cast(pa.int64()))


# --- formatting ------------------------------------------------------------------------------


def format_instants(ts: pa.Array, pattern: str) -> pa.StringArray:
    """Render zoned timestamps (``timestamp[ms, tz]``) with a Java date pattern."""
    pieces: list[Any] = []
    for letter, run in format_tokens(pattern):
        width = len(run)
        if letter == "'":
            pieces.append(run)
        elif letter in "yYu":
            year = pc.year(ts)
            pieces.append(_pad(_mod(year, 100) if width == 2 else year, 2 if width == 2 else width))
        elif letter == "M" and width >= 3:
            names = [m[:3] for m in MONTHS] if width == 3 else MONTHS
            pieces.append(pa.array(names).take(pc.subtract(pc.month(ts), 1)))
        elif letter == "E":
            names = DAYS if width >= 4 else [d[:3] for d in DAYS]
            pieces.append(pa.array(names).take(pc.day_of_week(ts)))
        elif letter == "a":
            pieces.append(pc.if_else(pc.less(pc.hour(ts), 12), "AM", "PM"))
        elif letter == "S":  # fraction of a second: millis, cut or zero-padded to the width
            millis = _pad(pc.millisecond(ts), 3)
            pieces.append(pc.utf8_slice_codeunits(millis, 0, width) if width <= 3 else
                          pc.binary_join_element_wise(millis, "0" * (width - 3), ""))  # fmt: skip
        elif letter in _OFFSET_LETTERS and not (letter == "Z" and width in (3, 4)):
            pieces.append(_format_offsets(ts, letter, width))
        elif letter in "zVZ":
            pieces.append(_zone_names(ts, letter, width))
        else:
            component = {
                "M": pc.month, "d": pc.day, "D": pc.day_of_year, "H": pc.hour,
                "m": pc.minute, "s": pc.second,
                "h": lambda x: pc.add(_mod(pc.add(pc.hour(x), 11), 12), 1),
            }[letter](ts)  # fmt: skip
            pieces.append(_pad(component, width))
    if all(isinstance(p, str) for p in pieces):  # a constant pattern
        return pa.repeat("".join(pieces), len(ts))
    return pc.binary_join_element_wise(*pieces, "")


def _format_offsets(ts: pa.Array, letter: str, width: int) -> pa.Array:
    """``+0100`` / ``+01:00`` / ``+01`` (``Z`` for zero with the ``X`` letters)."""
    local = pc.local_timestamp(ts).cast(pa.int64())
    minutes = pc.divide(pc.subtract(local, ts.cast(pa.int64())), 60_000)
    sign = pc.if_else(pc.less(minutes, 0), "-", "+")
    absolute = pc.abs(minutes)
    hours, mins = _pad(pc.divide(absolute, 60), 2), _pad(_mod(absolute, 60), 2)
    colon = (letter == "Z" and width in (2, 5)) or (letter in "Xx" and width in (3, 5))
    if letter in "Xx" and width == 1:
        text = pc.binary_join_element_wise(sign, hours, "")
        has_minutes = pc.not_equal(_mod(absolute, 60), 0)
        text = pc.if_else(has_minutes, pc.binary_join_element_wise(text, mins, ""), text)
    else:
        text = pc.binary_join_element_wise(sign, hours, ":" if colon else "", mins, "")
    if letter == "X":
        text = pc.if_else(pc.equal(minutes, 0), "Z", text)
    return text


def _zone_names(ts: pa.Array, letter: str, width: int) -> pa.Array:
    """The zone's id (``VV``, ``ZZZ``) or short name at each instant (``z``: ``CET``)."""
    zone = ts.type.tz or "UTC"
    if letter in "VZ":
        return pa.repeat(zone, len(ts))
    info = ZoneInfo(zone) if "/" in zone or zone == "UTC" else None
    if info is None:
        return pa.repeat(zone, len(ts))
    hours = pc.unique(pc.divide(ts.cast(pa.int64()), 3_600_000))  # names change on the hour
    names = {
        h: datetime.fromtimestamp(h * 3600, UTC).astimezone(info).tzname() or zone
        for h in hours.to_pylist()
        if h is not None
    }
    keys = pc.divide(ts.cast(pa.int64()), 3_600_000)
    at = pc.index_in(keys, value_set=pa.array(list(names), pa.int64()))
    return pa.array(list(names.values()), pa.string()).take(at)


def _mod(values: pa.Array, n: int) -> pa.Array:  # Arrow has no modulo kernel
    return pc.subtract(values, pc.multiply(pc.divide(values, n), n))


def _pad(values: pa.Array, width: int) -> pa.Array:
    return pc.utf8_lpad(values.cast(pa.string()), width=width, padding="0")


_GMT_OFFSET = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def normalize_tz(tz: str) -> str:
    """A Java time zone id as an Arrow one (``GMT+8`` -> ``+08:00``; IANA names as is)."""
    text = (tz or "UTC").strip()
    if text.upper() in ("UTC", "GMT", "Z", "UT"):
        return "UTC"
    m = _GMT_OFFSET.match(text.upper())
    if m:
        return f"{m.group(1)}{int(m.group(2)):02d}:{m.group(3) or '00'}"
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"unknown time zone {tz!r}") from None
    return text


__all__ = ["DAYS", "LETTERS", "MONTHS", "check_input_format", "format_instants",
           "format_tokens", "normalize_tz", "parse_dates", "parse_regex"]  # fmt: skip
