"""The option registry: :class:`ConfigKey`, name/alias lookup and :class:`Options`.

Every option hudilite understands is a :class:`ConfigKey` declared (once) in one of the
``hudilite.config.keys_*`` modules under the name Hudi's Spark datasource uses (the
*canonical* name), with the Hudi SQL short names (``primaryKey``, ``preCombineField``,
``type``...), Hudi Flink names (``table.type``, ``precombine.field``...) and table-config
names (``hoodie.table.*``) as aliases. Callers wrap user options in :class:`Options` and ask
for typed values with ``opts.get(KEY)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hudilite.config.parsers import _to_text
from hudilite.errors import ConfigError

#: Where a key acts: a table property (``hoodie.properties`` or the table's write defaults),
#: a per-write option, a read option, or a table service (compaction, clean, archive,
#: clustering, lock).
SCOPES = ("table", "write", "read", "service")


@dataclass(frozen=True)
class ConfigKey:
    """One option: canonical Hudi name, default, doc, accepted aliases and value parser.

    The default is returned as is (already typed); ``parse`` turns a raw string into the
    typed value. ``scope`` is one of :data:`SCOPES`. A key Hudi defines but hudilite does
    not implement carries ``unsupported`` (the reason): giving it warns (an error with
    ``hudilite.options.strict=true``) unless its value is one of ``ignore_values`` (what
    hudilite does anyway, e.g. ``hive_sync.enabled=false``). A ``deprecated`` key (the
    message says what replaces it) still works, with a warning.
    """

    name: str
    default: Any
    doc: str
    aliases: tuple[str, ...] = ()
    parse: Callable[[str], Any] = str
    scope: str = "write"
    unsupported: str | None = None
    ignore_values: tuple[str, ...] = ()
    deprecated: str | None = None
    internal: bool = False

    def all_names(self) -> tuple[str, ...]:
        """The canonical name first, then the aliases in lookup order."""
        return (self.name, *self.aliases)

    @property
    def supported(self) -> bool:
        """False for keys hudilite declares but does not implement."""
        return self.unsupported is None

    @property
    def choices(self) -> tuple[str, ...]:
        """The values a :func:`~hudilite.config.parsers.choice` parser accepts, else ()."""
        return tuple(getattr(self.parse, "choices", ()))


_REGISTRY: dict[str, ConfigKey] = {}

#: target key name -> [(source key, translate)]: keys whose value, translated, gives another
#: key's value when that key is not set itself (deprecated keys, unit conversions).
_FEEDS: dict[str, list[tuple[ConfigKey, Callable[[str], str | None]]]] = {}


def _key(
    name: str,
    default: Any,
    doc: str,
    aliases: tuple[str, ...] = (),
    parse: Callable[[str], Any] = str,
    *,
    scope: str | None = None,
    unsupported: str | None = None,
    ignore_values: tuple[str, ...] = (),
    deprecated: str | None = None,
    internal: bool = False,
    feeds: tuple[tuple[ConfigKey, Callable[[str], str | None]], ...] = (),
) -> ConfigKey:
    """Declare a key (once: a name or alias given twice fails at import).

    ``feeds``: ``(target, translate)`` pairs; when ``target`` is not set by any of its own
    names, ``translate(raw value of this key)`` is its raw value (None: no effect).
    """
    if scope is None:
        scope = "table" if name.startswith(_HOODIE_PROPERTIES_PREFIXES) else "write"
    assert scope in SCOPES, f"bad scope {scope!r} for {name}"
    key = ConfigKey(
        name,
        default,
        doc,
        aliases,
        parse,
        scope=scope,
        unsupported=unsupported,
        ignore_values=tuple(v.lower() for v in ignore_values),
        deprecated=deprecated,
        internal=internal,
    )
    for n in key.all_names():
        # Two keys sharing a name would make alias resolution ambiguous; fail at import.
        assert n.lower() not in _REGISTRY, f"duplicate option name {n}"
        _REGISTRY[n.lower()] = key
    for target, translate in feeds:
        _FEEDS.setdefault(target.name, []).append((key, translate))
    return key


def declare(
    name: str,
    default: Any,
    doc: str,
    aliases: tuple[str, ...] = (),
    parse: Callable[[str], Any] = str,
    **kwargs: Any,
) -> ConfigKey:
    """Public spelling of the declaration function (see :func:`_key`)."""
    return _key(name, default, doc, aliases, parse, **kwargs)


def fed_by(key: ConfigKey) -> tuple[ConfigKey, ...]:
    """The keys whose value can stand in for ``key``'s (see ``feeds`` of :func:`_key`)."""
    return tuple(src for src, _ in _FEEDS.get(key.name, ()))


def all_keys() -> tuple[ConfigKey, ...]:
    """Every declared key, once each, in declaration order."""
    return tuple(dict.fromkeys(_REGISTRY.values()))


def find_key(name: str) -> ConfigKey | None:
    """The key a canonical name or alias (case-insensitive) belongs to, or None."""
    return _REGISTRY.get(name.lower())


#: Name prefixes of Hudi's table config (``HoodieTableConfig``): the keys hoodie.properties
#: holds. A key declared without a scope under one of them is a table key.
_HOODIE_PROPERTIES_PREFIXES = (
    "hoodie.table.",
    "hoodie.keygen.",
    "hoodie.record.merge.",
    "hoodie.timeline.",
    "hoodie.archivelog.",
    "hoodie.compaction.payload.",
    "hoodie.compaction.record.merger.",
    "hoodie.bucket.index.",
    "hoodie.index.type",
    "hoodie.payload.",
)


def is_table_property(key: str) -> bool:
    """True for a key persisted as given in ``hoodie.properties`` (see ``TableConfig.new``;
    the others given at creation go to the table's write defaults).

    The registry decides: a declared key is one only when its scope is ``table`` (a write,
    read or service key never is, whatever its name), and then when the name given is one
    of Hudi's table config names (a ``table`` key under a Spark or SQL name, such as
    ``hoodie.datasource.write.recordkey.field``, is stored under Hudi's table name by
    ``TableConfig`` or kept in the write defaults). A key hudilite does not declare is one
    when Hudi's table config would hold it (kept as found on disk)."""
    declared = _REGISTRY.get(key.lower())
    if declared is not None and declared.scope != "table":
        return False
    return key.startswith(_HOODIE_PROPERTIES_PREFIXES)


class Options:
    """User options with alias resolution and typed, validated access.

    ``raw`` keeps every key exactly as given (unknown ``hoodie.*`` keys pass through
    untouched); key matching is case-insensitive, as Spark's option maps are.
    """

    def __init__(self, raw: Mapping[str, Any] | None = None) -> None:
        self.raw: dict[str, str] = {k: _to_text(v) for k, v in (raw or {}).items() if v is not None}
        self._lower: dict[str, str] = {}
        for k, v in self.raw.items():
            self._lower[k.lower()] = v

    def get_raw(self, key: ConfigKey) -> str | None:
        """The unparsed value under the first spelling present, or None."""
        for name in key.all_names():
            value = self._lower.get(name.lower())
            if value is not None:
                return value
        for source, translate in _FEEDS.get(key.name, ()):
            raw = self.get_raw(source)
            if raw is not None:
                try:
                    value = translate(raw)
                except (ValueError, TypeError) as exc:
                    raise ConfigError(
                        f"invalid value {raw!r} for option {source.name!r}: {exc}"
                    ) from None
                if value is not None:
                    return value
        return None

    def is_set(self, key: ConfigKey) -> bool:
        """True when any spelling of ``key`` was given."""
        return self.get_raw(key) is not None

    def get(self, key: ConfigKey, default: Any = ...) -> Any:
        """Parsed value of ``key``; its default (or ``default``) when unset.

        Raises ``ConfigError`` naming the option and the value when it does not parse.
        """
        value = self.get_raw(key)
        if value is None:
            return key.default if default is ... else default
        try:
            return key.parse(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid value {value!r} for option {key.name!r}: {exc}") from None

    def resolved(self) -> dict[str, str]:
        """Known keys under their canonical names (first spelling wins), unknown keys as given."""
        out: dict[str, str] = {}
        for k, v in self.raw.items():
            known = find_key(k)
            if known is None:
                out[k] = v
            elif known.name not in out:
                out[known.name] = self.get_raw(known) or v
        return out

    def with_overrides(self, more: Mapping[str, Any]) -> Options:
        """A new Options where ``more`` replaces every spelling of the keys it sets."""
        merged = dict(self.raw)
        for k in more:
            known = find_key(k)
            names = {n.lower() for n in known.all_names()} if known else {k.lower()}
            merged = {mk: mv for mk, mv in merged.items() if mk.lower() not in names}
        merged.update({k: _to_text(v) for k, v in more.items() if v is not None})
        return Options(merged)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lower

    def __repr__(self) -> str:
        return f"Options({self.raw!r})"
