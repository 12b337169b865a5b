"""Hudi instant times: ``yyyyMMddHHmmssSSS`` strings in UTC.

An instant time names every action on the timeline (its *requested* time) and, from table
version 8 on, also when the action finished (its *completion* time). Hudi compares them as
plain strings, so the format must stay fixed-width: 17 digits, milliseconds included. Tables
written by old Hudi releases may still carry 14-digit (second precision) times; they parse
fine and compare correctly as strings against 17-digit ones (a 14-digit value is a prefix of
every 17-digit value within the same second, so it sorts first).

hudilite always writes UTC (and records ``hoodie.table.timeline.timezone=UTC``); Java's
default would be the JVM's local zone, which makes times ambiguous around DST changes.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

#: Length of a millisecond-precision instant time.
INSTANT_TIME_LENGTH = 17
#: Length of a legacy, second-precision instant time.
LEGACY_INSTANT_TIME_LENGTH = 14

_DIGITS = re.compile(r"[0-9]+")


def format_instant(dt: datetime) -> str:
    """Render ``dt`` as a 17-digit instant time.

    Aware datetimes are converted to UTC first; naive ones are taken to be UTC already.
    Sub-millisecond precision is truncated (never rounded up, so the result is never later
    than ``dt``).
    """
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return dt.strftime("%Y%m%d%H%M%S") + f"{dt.microsecond // 1000:03d}"


def parse_instant(value: str) -> datetime:
    """Parse a 17-digit (or legacy 14-digit) instant time into an aware UTC datetime.

    Raises ``ValueError`` for anything else, including well-formed digits that are not a
    calendar date.
    """
    if not isinstance(value, str) or not _DIGITS.fullmatch(value):
        raise ValueError(f"not an instant time: {value!r}")
    if len(value) == INSTANT_TIME_LENGTH:
        base = datetime.strptime(value[:14], "%Y%m%d%H%M%S")
        dt = base + timedelta(milliseconds=int(value[14:]))
    elif len(value) == LEGACY_INSTANT_TIME_LENGTH:
        dt = datetime.strptime(value, "%Y%m%d%H%M%S")
    else:
        raise ValueError(
            f"instant time must have {INSTANT_TIME_LENGTH} or "
            f"{LEGACY_INSTANT_TIME_LENGTH} digits: {value!r}"
        )
    return dt.replace(tzinfo=UTC)


def is_instant_time(value: str) -> bool:
    """True when ``value`` parses as an instant time (17 or 14 digits, a valid date)."""
    try:
        parse_instant(value)
    except ValueError:
        return False
    return True


def instant_to_epoch_ms(value: str, utc: bool = True) -> int:
    """Milliseconds since the Unix epoch of an instant time; ``utc=False`` reads its digits
    as the machine's local wall-clock time (a ``LOCAL`` timeline zone, Java's default)."""
    dt = parse_instant(value)
    if not utc:
        dt = dt.replace(tzinfo=None).astimezone()  # naive: the local zone
    return int(dt.timestamp()) * 1000 + dt.microsecond // 1000


def epoch_ms_to_instant(epoch_ms: int, utc: bool = True) -> str:
    """The instant time of a Unix epoch in milliseconds; ``utc=False`` renders the
    machine's local wall-clock time (a ``LOCAL`` timeline zone, Java's default). The one
    place a table's timeline zone turns a time into instant digits: state transition
    times from file modification times go through here."""
    seconds, millis = divmod(epoch_ms, 1000)
    dt = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=millis * 1000)
    if not utc:
        dt = dt.astimezone().replace(tzinfo=None)  # naive local digits, rendered as they are
    return format_instant(dt)


def now_instant() -> str:
    """The current time as an instant time (UTC, millisecond precision)."""
    return epoch_ms_to_instant(time.time_ns() // 1_000_000)


def plus_millis(value: str, millis: int) -> str:
    """``value`` shifted by ``millis`` milliseconds, always as a 17-digit instant time."""
    return epoch_ms_to_instant(instant_to_epoch_ms(value) + millis)


def next_instant_time(after: str | None = None) -> str:
    """A new instant time: now, but strictly greater than ``after`` (string order).

    Instant times must increase strictly per table. When the wall clock is at or behind
    ``after`` (two calls in the same millisecond, clock skew between hosts, a clock step
    backwards) the result is ``after`` + 1 ms instead, so the sequence keeps increasing
    even though it then runs slightly ahead of real time.
    """
    candidate = now_instant()
    if after is None or candidate > after:
        return candidate
    return plus_millis(after, 1)
