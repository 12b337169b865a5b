"""Value parsers for option values.

Each takes the raw string and raises ConfigError (a ValueError) when it is malformed;
``Options.get`` re-raises with the option name added.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hudilite.errors import ConfigError

_TRUE = frozenset({"true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off"})


def parse_bool(value: str | bool) -> bool:
    """``true/false`` (also ``1/0``, ``yes/no``, ``on/off``), case-insensitive."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"not a boolean: {value!r}")


def parse_int(value: str | int) -> int:
    """A decimal integer (underscores allowed, as in Python literals)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(f"not an integer: {value!r}") from None


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(value: str | int) -> int:
    """A byte count: plain digits (Hudi's own format) or ``128m``, ``1.5GB``, ``64KiB``.

    Units are binary (k = 1024), as Spark's ``byteFromString`` treats them.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ConfigError(f"not a size: {value!r}")
    number, unit = match.group(1), match.group(2).lower()
    return int(float(number) * _SIZE_UNITS[unit])


def parse_fields(value: str) -> tuple[str, ...]:
    """A comma-separated field list; blanks are dropped, so ``""`` is the empty tuple."""
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


def parse_table_type(value: str) -> str:
    """``COPY_ON_WRITE``/``MERGE_ON_READ``, also the SQL short forms ``cow``/``mor``."""
    text = str(value).strip().upper()
    aliases = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}
    text = aliases.get(text, text)
    if text not in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        raise ConfigError(f"not a table type: {value!r} (expected cow|mor)")
    return text


def choice(*allowed: str, upper: bool = True) -> Callable[[str], str]:
    """Build a parser accepting one of ``allowed`` (case-insensitive), normalised in case."""

    def _parse(value: str) -> str:
        text = str(value).strip()
        text = text.upper() if upper else text.lower()
        if text not in allowed:
            raise ConfigError(f"not one of {'|'.join(allowed)}: {value!r}")
        return text

    _parse.choices = allowed  # type: ignore[attr-defined]  # read by ConfigKey.choices
    return _parse


def parse_seconds(value: str | float) -> float:
    """A number of seconds; Hudi takes whole seconds, fractions are accepted (short test leases)."""
    try:
        return float(str(value).strip())
    except ValueError:
        raise ConfigError(f"not a number of seconds: {value!r}") from None


_parse_seconds = parse_seconds


def parse_float(value: str | float) -> float:
    """A decimal number (a ratio such as ``hoodie.record.size.estimation.threshold``)."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        raise ConfigError(f"not a number: {value!r}") from None


def to_text(value: Any) -> str:
    """Hudi's text spelling of a Python option value (``true``/``false`` for bools)."""
    # Python callers pass bools/ints; store Hudi's spelling so raw stays properties-ready.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_to_text = to_text
