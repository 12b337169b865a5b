"""The options of a ``format("hudilite")`` read: Hudi's Flink read names mapped to the Spark
data source's, and read options hudilite does not implement refused by name.

Flink names with a Spark meaning (Hudi's ``FlinkOptions``):

==================================  ===========================================================
``read.streaming.enabled``          ``true`` with ``spark.readStream``, ``false`` with
                                    ``spark.read`` (Spark picks streaming by the reader; the
                                    other value is refused)
``read.start-commit``               Flink's start is *inclusive*: ``earliest``, or an instant
                                    ``T`` read as "commits at or after ``T``". Batch: an
                                    incremental read with ``begin.instanttime`` = ``T`` - 1 ms
                                    (exclusive); stream: ``startOffset`` = ``T`` - 1 ms
``read.end-commit``                 batch: ``hoodie.datasource.read.end.instanttime``
                                    (inclusive); refused on a stream (Spark streams do not end)
``read.commits.limit``              stream: ``hoodie.datasource.read.streaming.max.instants.
                                    per.batch``; refused on a batch read
``read.streaming.check-interval``   seconds between polls: a Spark source cannot set it, the
                                    query's trigger does (``.trigger(processingTime="N
                                    seconds")``); checked to be a whole number >= 1, no effect
``read.streaming.skip_compaction``  ``true`` (Flink's default) is what the stream always does:
``read.streaming.skip_clustering``  rows a compaction or clustering rewrote keep their commit
                                    time and are not delivered again; ``false`` is refused
==================================  ===========================================================

``hoodie.datasource.read.begin.instanttime`` = ``0`` (or ``000``, as Hudi's guides write it)
is ``earliest``. A Flink name and its Spark name given together must agree. Any other read
option the option registry declares unsupported (``read.tasks``,
``read.streaming.skip_insertoverwrite``, ``read.cdc.from.changelog``=false, ...) raises
:class:`ConfigError` with the reason; options of other scopes (write, table) do not change a
read and pass.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudilite import config as cfg
from hudilite.config.parsers import parse_bool
from hudilite.errors import ConfigError
from hudilite.read.planner import normalize_instant
from hudilite.timeline.instant_time import plus_millis

#: ``read.start-commit`` / ``hoodie.datasource.read.begin.instanttime`` value: from the start.
EARLIEST = "earliest"


def exclusive_start(value: str) -> str:
    """The exclusive start (Spark's ``begin.instanttime``) of Flink's inclusive
    ``read.start-commit`` ``value``: one millisecond before it (a 14-digit, second-precision
    value starts at the beginning of its second)."""
    text = str(value).strip()
    if text.isdigit() and len(text) == 14:
        text += "000"
    return plus_millis(normalize_instant(text), -1)


def _bool(name: str, value: str) -> bool:
    try:
        return bool(parse_bool(value))
    except (ValueError, ConfigError) as exc:
        raise ConfigError(f"option {name} must be true or false, got {value!r}") from exc


def _put(out: dict[str, str], key: str, value: str, source: str) -> None:
    """Set ``key`` from the Flink option ``source``; a different value already there is an
    error naming both."""
    current = out.get(key)
    if current is not None and current != value:
        raise ConfigError(
            f"option {source} (as {key}={value!r}) disagrees with {key}={current!r}; "
            "give one of them"
        )
    out[key] = value


def resolve_read_options(options: Mapping[str, str], *, streaming: bool) -> dict[str, str]:
    """``options`` (lower-case keys) with the Flink names above mapped to Spark's; raises
    :class:`ConfigError` naming a refused option."""
    out = {str(k).lower(): str(v) for k, v in options.items()}
    flink = {
        k: out.pop(k)
        for k in list(out)
        if (key := cfg.find_key(k)) is not None and key.name in _FLINK_NAMES
    }
    for name, value in out.items():
        key = cfg.find_key(name)
        if key is None or key.supported or key.scope != "read":
            continue
        if value.strip().lower() in key.ignore_values:
            continue
        raise ConfigError(
            f"option {name}={value!r} is not supported by the hudilite data source: "
            f"{key.unsupported}"
        )
    for name, value in flink.items():
        key = cfg.find_key(name)
        assert key is not None
        _FLINK_NAMES[key.name](out, name, value, streaming)
    begin = cfg.BEGIN_INSTANT.name.lower()
    if set(out.get(begin, "").strip()) == {"0"}:
        # Hudi's guides begin at 0 or "000": before every instant (Hudi compares instant
        # times as text), which is the earliest.
        out[begin] = EARLIEST
    return out


def _streaming_enabled(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    if _bool(name, value) != streaming:
        reader = "spark.readStream" if _bool(name, value) else "spark.read"
        raise ConfigError(f"option {name}={value!r} needs {reader}.format('hudilite')")


def _start_commit(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    earliest = value.strip().lower() == EARLIEST
    start = EARLIEST if earliest else exclusive_start(value)
    if streaming:
        _put(out, cfg.STREAMING_START_OFFSET.name.lower(), start, name)
        return
    _put(out, cfg.QUERY_TYPE.name.lower(), "incremental", name)
    _put(out, cfg.BEGIN_INSTANT.name.lower(), start, name)


def _end_commit(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    if streaming:
        raise ConfigError(f"option {name} applies to batch reads (spark.read); a stream has no end")
    _put(out, cfg.END_INSTANT.name.lower(), normalize_instant(value), name)


def _commits_limit(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    if not streaming:
        raise ConfigError(f"option {name} applies to streaming reads (spark.readStream)")
    _put(out, cfg.STREAMING_MAX_INSTANTS.name.lower(), value.strip(), name)


def _check_interval(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    text = value.strip()
    if not (text.isdigit() and int(text) >= 1):
        raise ConfigError(f"option {name} must be a whole number of seconds >= 1, got {value!r}")


def _skip(out: dict[str, str], name: str, value: str, streaming: bool) -> None:
    if not _bool(name, value):
        raise ConfigError(
            f"option {name}=false is not supported: the stream never delivers rows a "
            "compaction or clustering rewrote (they keep their commit time)"
        )


_FLINK_NAMES = {
    cfg.FLINK_READ_STREAMING.name: _streaming_enabled,
    cfg.FLINK_READ_START_COMMIT.name: _start_commit,
    cfg.FLINK_READ_END_COMMIT.name: _end_commit,
    cfg.FLINK_READ_COMMITS_LIMIT.name: _commits_limit,
    cfg.FLINK_READ_STREAMING_CHECK_INTERVAL.name: _check_interval,
    cfg.FLINK_READ_STREAMING_SKIP_COMPACTION.name: _skip,
    cfg.FLINK_READ_STREAMING_SKIP_CLUSTERING.name: _skip,
}
