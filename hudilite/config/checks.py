"""Never silently ignored: every option key a user gives is checked against the registry.

:func:`check_options` warns (:class:`~hudilite.errors.OptionWarning`, a
``HudiliteWarning``) for

* a key hudilite does not know, naming the closest known keys (``difflib``);
* a key Hudi defines that hudilite does not implement (``ConfigKey.unsupported``), unless
  its value is what hudilite does anyway (``ConfigKey.ignore_values``);
* a deprecated key (it still works; the warning says what replaces it).

With ``hudilite.options.strict=true`` (among the options, or the environment variable
``HUDILITE_OPTIONS_STRICT=true``) the first two are a :class:`~hudilite.errors.ConfigError`
instead. Filesystem connection options (``fs.s3a.*``) and Spark settings (``spark.*``) are
not Hudi options and are not checked. Entry points call it: ``Table.create`` and every
``Table`` method taking ``options``, ``set_properties``/``unset_properties`` (ALTER TABLE
SET/UNSET TBLPROPERTIES), SQL ``SET``, ``CREATE TABLE ... OPTIONS/TBLPROPERTIES`` (through
``Table.create``) and procedures (through the Table methods they call).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from hudilite.config.keys_write import OPTIONS_STRICT
from hudilite.config.parsers import parse_bool
from hudilite.config.registry import _REGISTRY, ConfigKey, find_key
from hudilite.errors import ConfigError, HudiliteWarning, OptionWarning, warn_at_caller

#: Environment variable that turns strict mode on for the whole process.
STRICT_ENV_VAR = "HUDILITE_OPTIONS_STRICT"

# Not Hudi options: Spark settings and filesystem connection settings.
_NOT_OPTIONS = ("spark.", "fs.")

_HIVE_SYNC = "hudilite keeps its own catalog and does not sync to a Hive metastore"
_METADATA = "hudilite maintains no metadata table"
#: Families of Hudi keys hudilite implements none of: a key of one that is not declared
#: one by one is still refused by name, with the family's reason.
UNSUPPORTED_FAMILIES: dict[str, str] = {
    "hive_sync.": _HIVE_SYNC,
    "hoodie.datasource.hive_sync.": _HIVE_SYNC,
    "hoodie.datasource.meta.sync.": _HIVE_SYNC,
    "hoodie.meta.sync.": _HIVE_SYNC,
    "hoodie.metadata.": _METADATA,
    "metadata.": _METADATA,
    "hoodie.metrics.": "hudilite reports no Hudi metrics",
    "hoodie.embed.timeline.server": "hudilite runs no timeline server",
    "hoodie.filesystem.view.": "hudilite builds its file-system view in memory per operation",
    "hoodie.memory.": "hudilite has no spillable maps to size",
}


def _all_names() -> dict[str, str]:
    """Lower-cased name -> spelling, for every canonical name and alias."""
    out: dict[str, str] = {}
    for key in dict.fromkeys(_REGISTRY.values()):
        for name in key.all_names():
            out.setdefault(name.lower(), name)
    return out


def suggestions(name: str, n: int = 3) -> list[str]:
    """The known option names closest to ``name`` (best first), for messages."""
    names = _all_names()
    close = difflib.get_close_matches(name.strip().lower(), list(names), n=n, cutoff=0.6)
    return [names[c] for c in close]


def is_strict(options: Mapping[str, Any] | None = None) -> bool:
    """Whether strict mode is on: ``hudilite.options.strict`` among ``options`` (any
    spelling, any case), else the ``HUDILITE_OPTIONS_STRICT`` environment variable."""
    for k, v in (options or {}).items():
        if k.lower() == OPTIONS_STRICT.name and v is not None:
            return bool(parse_bool(str(v)))
    env = os.environ.get(STRICT_ENV_VAR)
    return bool(parse_bool(env)) if env else False


def problem(name: str, value: Any = None) -> tuple[str, bool] | None:
    """``(message, refused_in_strict_mode)`` for one key, or None when it is fine."""
    key = name.strip()
    if key.lower().startswith(_NOT_OPTIONS):
        return None
    known: ConfigKey | None = find_key(key)
    if known is None:
        for prefix, reason in UNSUPPORTED_FAMILIES.items():
            if key.lower().startswith(prefix):
                if value is not None and str(value).strip().lower() == "false":
                    return None  # switched off: what hudilite does anyway
                return (
                    f"option {key!r} is not supported by hudilite: {reason}; it has no effect",
                    True,
                )
        close = suggestions(key)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        return f"unknown option {key!r}{hint}: hudilite ignores it", True
    shown = repr(key) if key == known.name else f"{key!r} (= {known.name})"
    if known.unsupported is not None:
        text = "" if value is None else str(value).strip().lower()
        if value is not None and text in known.ignore_values:
            return None
        return (
            f"option {shown} is not supported by hudilite: {known.unsupported}; it has no effect",
            True,
        )
    if known.deprecated is not None:
        return f"option {shown} is deprecated: {known.deprecated}", False
    return None


def check_options(
    options: Mapping[str, Any] | Iterable[str] | None,
    *,
    strict: bool | None = None,
    context: Mapping[str, Any] | None = None,
    stacklevel: int = 3,
) -> list[str]:
    """Warn about (or, strict, refuse) the keys of ``options`` hudilite does not implement.

    ``options`` is a mapping (values are checked against ``ignore_values``) or just key
    names (UNSET). A warning points at the first line outside hudilite (``stacklevel`` is
    kept for callers that pass it and no longer used). ``strict`` defaults to
    :func:`is_strict` of ``options`` merged over ``context`` (e.g. the SQL session's
    options). Returns the messages (warned ones too).
    Raises :class:`ConfigError` listing every refused key in strict mode.
    """
    if options is None:
        return []
    items: list[tuple[str, Any]] = (
        [(str(k), v) for k, v in options.items()]
        if isinstance(options, Mapping)
        else [(str(k), None) for k in options]
    )
    if strict is None:
        merged = {**(context or {}), **(options if isinstance(options, Mapping) else {})}
        strict = is_strict(merged)
    messages: list[str] = []
    refused: list[str] = []
    for name, value in items:
        found = problem(name, value)
        if found is None:
            continue
        message, refusable = found
        messages.append(message)
        if strict and refusable:
            refused.append(message)
        else:
            # At the user's line, wherever inside hudilite the options were checked.
            warn_at_caller(message, OptionWarning)
    if refused:
        raise ConfigError("; ".join(refused) + f" ({OPTIONS_STRICT.name}=true)")
    return messages


@contextlib.contextmanager
def collect_warnings() -> Iterator[list[str]]:
    """Collect the messages of the :class:`~hudilite.errors.HudiliteWarning` raised inside
    (each once, in order) into the yielded list, filled when the block ends; every warning
    is re-issued afterwards, so Python callers still see them. The SQL layer shows the
    collected ones as ``warning:`` lines."""
    notes: list[str] = []
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always", HudiliteWarning)
            try:
                yield notes
            finally:
                caught = list(recorded or ())
    finally:
        for w in caught:
            if issubclass(w.category, HudiliteWarning) and str(w.message) not in notes:
                notes.append(str(w.message))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
