"""Flink read option names on ``format("hudilite")`` (no JVM): mapped to the Spark names,
or refused naming the option."""

from __future__ import annotations

import re

import pytest

from hudilite.errors import ConfigError
from hudilite.spark.read_options import exclusive_start, resolve_read_options

BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"
QUERY = "hoodie.datasource.query.type"
START = "hoodie.datasource.streaming.startoffset"
MAX = "hoodie.datasource.read.streaming.max.instants.per.batch"


def test_start_commit_is_inclusive() -> None:
    assert exclusive_start("20260101000000000") == "20251231235959999"
    assert exclusive_start("20260101120000") == "20260101115959999"
    batch = resolve_read_options(
        {"path": "/t", "read.start-commit": "20260101120000500", "read.end-commit": "2026-01-02"},
        streaming=False,
    )
    assert batch == {
        "path": "/t",
        QUERY: "incremental",
        BEGIN: "20260101120000499",
        END: "20260102000000000",
    }
    stream = resolve_read_options(
        {"read.start-commit": "earliest", "read.commits.limit": "2", "read.streaming.enabled": "1"},
        streaming=True,
    )
    assert stream == {START: "earliest", MAX: "2"}


def test_flink_names_that_match_what_hudilite_does_pass() -> None:
    got = resolve_read_options(
        {
            "read.streaming.check-interval": "10",
            "read.streaming.skip_compaction": "true",
            "read.streaming.skip_clustering": "true",
            "read.streaming.skip_insertoverwrite": "false",
            "hoodie.metadata.enable": "true",  # a write-side key: no effect on a read
        },
        streaming=True,
    )
    assert got == {
        "read.streaming.skip_insertoverwrite": "false",
        "hoodie.metadata.enable": "true",
    }


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        (
            {"read.streaming.enabled": "true"},
            False,
            "option read.streaming.enabled='true' needs spark.readStream.format('hudilite')",
        ),
        (
            {"read.end-commit": "20260101000000000"},
            True,
            "option read.end-commit applies to batch reads (spark.read); a stream has no end",
        ),
        (
            {"read.commits.limit": "3"},
            False,
            "option read.commits.limit applies to streaming reads (spark.readStream)",
        ),
        (
            {"read.streaming.check-interval": "0"},
            True,
            "option read.streaming.check-interval must be a whole number of seconds >= 1, got '0'",
        ),
        (
            {"read.streaming.skip_compaction": "false"},
            True,
            "option read.streaming.skip_compaction=false is not supported: the stream never "
            "delivers rows a compaction or clustering rewrote (they keep their commit time)",
        ),
        (
            {"read.start-commit": "20260101000000000", BEGIN: "20250101000000000"},
            False,
            f"option read.start-commit (as {BEGIN}='20251231235959999') disagrees with "
            f"{BEGIN}='20250101000000000'; give one of them",
        ),
        (
            {"read.tasks": "4"},
            False,
            "option read.tasks='4' is not supported by the hudilite data source: Spark decides "
            "task parallelism (hudilite has no Flink operators to size)",
        ),
    ],
)
def test_refused_options_are_named(options: dict, streaming: bool, message: str) -> None:
    with pytest.raises(ConfigError, match="^" + re.escape(message) + "$"):
        resolve_read_options(options, streaming=streaming)
