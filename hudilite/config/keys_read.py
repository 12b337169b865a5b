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
