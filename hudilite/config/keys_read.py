"""Read keys: query type, incremental range, time travel, missing files."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
)
from hudilite.config.registry import _key

QUERY_TYPE = _key(
    "hoodie.datasource.query.type",
    "snapshot",
    "snapshot|incremental|read_optimized.",
    parse=choice("snapshot", "incremental", "read_optimized", upper=False),
    scope="read",
)
BEGIN_INSTANT = _key(
    "hoodie.datasource.read.begin.instanttime",
    None,
    "Incremental read start (exclusive).",
    scope="read",
)
END_INSTANT = _key(
    "hoodie.datasource.read.end.instanttime",
    None,
    "Incremental read end (inclusive).",
    scope="read",
)
AS_OF_INSTANT = _key("as.of.instant", None, "Time-travel read instant.", scope="read")
READ_IGNORE_MISSING_FILES = _key(
    "hoodie.hudilite.read.ignore.missing.files",
    False,
    "Read on, with a warning, when a data file a commit names is missing or truncated "
    "(its file group is left out); by default such a read fails naming the file.",
    parse=parse_bool,
    scope="read",
)

# Spark data source (format("hudilite")) streaming reads, Hudi's names.
STREAMING_START_OFFSET = _key(
    "hoodie.datasource.streaming.startOffset",
    "earliest",
    "Streaming read start: earliest (the table, then each commit), latest (commits after "
    "the query starts) or an instant time (commits completing after it).",
    scope="read",
)
STREAMING_MAX_INSTANTS = _key(
    "hoodie.datasource.read.streaming.max.instants.per.batch",
    None,
    "Streaming read: at most this many commits per micro-batch.",
    scope="read",
)
INCR_FALLBACK_FULL_SCAN = _key(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable",
    False,
    "Incremental/streaming read: read the snapshot when the commits needed were archived or "
    "their files cleaned, instead of failing.",
    parse=parse_bool,
    scope="read",
)
INCREMENTAL_FORMAT = _key(
    "hoodie.datasource.query.incremental.format",
    "latest_state",
    "Incremental reads (format('hudilite')): latest_state (the changed records as they are "
    "now) or cdc (one row per change: op, ts_ms, before, after; batch and streaming reads, "
    "any table, no CDC log files needed).",
    parse=choice("latest_state", "cdc", upper=False),
    scope="read",
)
