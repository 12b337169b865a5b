"""Instant file names (both timeline layouts) and instant times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudilite.config import TableConfig, parse_properties
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
    completed_action,
    times_in_name,
)
from hudilite.timeline.instant_time import (
    epoch_ms_to_instant,
    format_instant,
    instant_to_epoch_ms,
    is_instant_time,
    next_instant_time,
    parse_instant,
    plus_millis,
)
from tests.conftest import FIXTURES, fixture_id, fixture_zips

T = "20240418173235694"
C = "20240418173236001"
R, INF, D = State.REQUESTED, State.INFLIGHT, State.COMPLETED

# (file name, layout, expected instant): the table of docs/dev/hudi-format.md §3.
NAMES = [
    (f"{T}.commit.requested", 1, Instant(T, COMMIT, R)),
    (f"{T}.inflight", 1, Instant(T, COMMIT, INF)),
    (f"{T}.commit", 1, Instant(T, COMMIT, D)),
    (f"{T}.deltacommit.requested", 1, Instant(T, DELTA_COMMIT, R)),
    (f"{T}.deltacommit.inflight", 1, Instant(T, DELTA_COMMIT, INF)),
    (f"{T}.deltacommit", 1, Instant(T, DELTA_COMMIT, D)),
    (f"{T}.compaction.requested", 1, Instant(T, COMPACTION, R)),
    (f"{T}.compaction.inflight", 1, Instant(T, COMPACTION, INF)),
    (f"{T}.replacecommit.requested", 1, Instant(T, REPLACE_COMMIT, R)),
    (f"{T}.replacecommit.inflight", 1, Instant(T, REPLACE_COMMIT, INF)),
    (f"{T}.replacecommit", 1, Instant(T, REPLACE_COMMIT, D)),
    (f"{T}.clean.requested", 1, Instant(T, CLEAN, R)),
    (f"{T}.clean.inflight", 1, Instant(T, CLEAN, INF)),
    (f"{T}.clean", 1, Instant(T, CLEAN, D)),
    (f"{T}.rollback.requested", 1, Instant(T, ROLLBACK, R)),
    (f"{T}.rollback", 1, Instant(T, ROLLBACK, D)),
    (f"{T}.savepoint.inflight", 1, Instant(T, SAVEPOINT, INF)),
    (f"{T}.savepoint", 1, Instant(T, SAVEPOINT, D)),
    (f"{T}.restore.requested", 1, Instant(T, RESTORE, R)),
    (f"{T}.restore", 1, Instant(T, RESTORE, D)),
    (f"{T}.commit.requested", 2, Instant(T, COMMIT, R)),
    (f"{T}.inflight", 2, Instant(T, COMMIT, INF)),
    (f"{T}_{C}.commit", 2, Instant(T, COMMIT, D, C)),
    (f"{T}_{C}.deltacommit", 2, Instant(T, DELTA_COMMIT, D, C)),
    (f"{T}.clustering.requested", 2, Instant(T, CLUSTERING, R)),
    (f"{T}.clustering.inflight", 2, Instant(T, CLUSTERING, INF)),
    (f"{T}_{C}.replacecommit", 2, Instant(T, REPLACE_COMMIT, D, C)),
    (f"{T}_{C}.clean", 2, Instant(T, CLEAN, D, C)),
    (f"{T}_{C}.rollback", 2, Instant(T, ROLLBACK, D, C)),
    (f"{T}_{C}.savepoint", 2, Instant(T, SAVEPOINT, D, C)),
    # legacy 14-digit times
    ("20210101120000.commit", 1, Instant("20210101120000", COMMIT, D)),
    # a v8 completed file without _C (hudi-rs ignores it; we keep it, without completion)
    (f"{T}.commit", 2, Instant(T, COMMIT, D)),
]


@pytest.mark.parametrize(
    ("name", "layout", "expected"), NAMES, ids=[f"{n}@{v}" for n, v, _ in NAMES]
)
def test_parse_and_render(name: str, layout: int, expected: Instant) -> None:
    assert Instant.parse(name, layout) == expected
    assert expected.file_name(layout) == name


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("hoodie.properties", 1),
        ("archived", 1),
        ("history", 2),
        (".aux", 1),
        (".temp", 2),
        (".schema", 1),
        (".heartbeat", 1),
        (f".{T}.commit.0c1d.tmp", 2),  # FileSystemGateway temp files
        (f"{T}_{C}.commit", 1),  # completion time is a layout-2 thing
        (f"{T}_{C}.commit.requested", 2),
        (f"{T}.commit.bogus", 1),
        (f"{T}.unknownaction", 2),
        ("2024.commit", 1),
        (f"{T}.commit.requested.crc", 1),
    ],
)
def test_non_instant_names_are_ignored(name: str, layout: int) -> None:
    assert Instant.parse(name, layout) is None


def test_layout_quirks() -> None:
    # Completing a table service writes the action readers look for.
    assert Instant(T, COMPACTION, D).file_name(1) == f"{T}.commit"
    assert Instant(T, COMPACTION, D, C).file_name(2) == f"{T}_{C}.commit"
    assert Instant(T, CLUSTERING, D, C).file_name(2) == f"{T}_{C}.replacecommit"
    # Layout 1 has no clustering action: it is a replacecommit throughout.
    assert Instant(T, CLUSTERING, R).file_name(1) == f"{T}.replacecommit.requested"
    assert Instant(T, CLUSTERING, INF).file_name(1) == f"{T}.replacecommit.inflight"
    # Layout 1 never writes a completion time, even when one is known.
    assert Instant(T, COMMIT, D, C).file_name(1) == f"{T}.commit"
    with pytest.raises(ValueError, match="savepoint"):
        Instant(T, SAVEPOINT, R).file_name(1)
    assert completed_action(COMPACTION) == COMMIT
    assert completed_action(LOG_COMPACTION) == DELTA_COMMIT
    assert completed_action(CLEAN) == CLEAN


def test_state_helpers_and_validation() -> None:
    req = Instant(T, COMPACTION, R)
    assert (req.is_requested, req.is_inflight, req.is_completed, req.is_pending) == (
        True,
        False,
        False,
        True,
    )
    inflight = req.as_state(INF)
    assert inflight == Instant(T, COMPACTION, INF)
    done = inflight.as_state(D, C)
    assert done == Instant(T, COMMIT, D, C)
    assert done.is_completed and not done.is_pending and done.is_write
    assert not Instant(T, CLEAN, D).is_write
    assert str(done) == f"[{T} commit COMPLETED completed at {C}]"
    with pytest.raises(ValueError, match="completion time"):
        Instant(T, COMMIT, INF, C)
    with pytest.raises(ValueError, match="unknown action"):
        Instant(T, "merge", R)
    with pytest.raises(ValueError, match="requested time"):
        Instant("2024-01-01", COMMIT, R)
    with pytest.raises(ValueError, match="completion time"):
        Instant(T, COMMIT, D, "later")


def test_ordering_is_by_requested_time_then_state() -> None:
    a = Instant("20240101000000001", CLEAN, D)
    b = Instant("20240101000000000", COMMIT, D, "20240101000000005")
    c = Instant("20240101000000001", CLEAN, R)
    assert sorted([a, b, c]) == [b, c, a]
    assert b < c <= a and a > c >= b
    assert State.REQUESTED < State.INFLIGHT < State.COMPLETED
    assert len({a, b, c, Instant("20240101000000001", CLEAN, D)}) == 3  # hashable


def test_times_in_name() -> None:
    assert times_in_name(f"{T}_{C}.commit") == [T, C]
    assert times_in_name(f"{T}.indexing.requested") == [T]
    assert times_in_name("hoodie.properties") == []


# -- every instant file of every fixture table round-trips ---------------------------------------

_SKIP = {"hoodie.properties", "archived", "history", ".aux", ".schema", ".temp", "__MACOSX"}
ZIPS = fixture_zips()


@pytest.mark.skipif(not ZIPS, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_every_fixture_instant_file_round_trips(shared_fixture, zip_path: Path) -> None:
    base = shared_fixture(str(zip_path.relative_to(FIXTURES)))
    config = TableConfig.from_properties(
        parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    )
    folder = base / config.timeline_dir
    names = sorted(p.name for p in folder.iterdir() if p.name not in _SKIP)
    for name in names:
        inst = Instant.parse(name, config.layout_version)
        assert inst is not None, name
        assert inst.file_name(config.layout_version) == name
        if config.layout_version == 2 and inst.is_completed:
            assert inst.completion_time is not None and inst.completion_time > inst.requested_time


# -- instant times ------------------------------------------------------------------------------


def test_format_and_parse_instant() -> None:
    dt = datetime(2024, 4, 18, 17, 32, 35, 694999, tzinfo=UTC)
    assert format_instant(dt) == "20240418173235694"  # truncated, never rounded up
    assert parse_instant("20240418173235694") == datetime(2024, 4, 18, 17, 32, 35, 694000, UTC)
    assert parse_instant("20210101120000") == datetime(2021, 1, 1, 12, 0, 0, tzinfo=UTC)
    # An aware datetime in another zone is converted; a naive one is taken as UTC.
    plus2 = timezone(timedelta(hours=2))
    assert format_instant(datetime(2024, 1, 1, 2, 0, 0, tzinfo=plus2)) == "20240101000000000"
    assert format_instant(datetime(2024, 1, 1, 0, 0, 0)) == "20240101000000000"
    bad_values = ("2024", "2024041817323569", "20241318173235694", "2024-04-18", "", "x" * 17)
    for bad in (*bad_values, "20240418173235694\n", "٢٠٢٤٠٤١٨١٧٣٢٣٥٦٩٤"):
        with pytest.raises(ValueError):
            parse_instant(bad)
        assert not is_instant_time(bad)
    assert is_instant_time("20240418173235694")


def test_epoch_conversions() -> None:
    assert instant_to_epoch_ms("19700101000000001") == 1
    assert epoch_ms_to_instant(1713461555694) == "20240418173235694"
    assert plus_millis("20241231235959999", 1) == "20250101000000000"
    assert plus_millis("20210101120000", 1) == "20210101120000001"


def test_next_instant_time_is_strictly_greater() -> None:
    now = next_instant_time()
    assert len(now) == 17 and is_instant_time(now)
    # Clock behind the timeline: after + 1 ms.
    assert next_instant_time("29991231235959999") == "30000101000000000"
    assert next_instant_time("29990101000000") == "29990101000000001"
    # Clock ahead: now.
    assert next_instant_time("20000101000000000") >= now
    seq = [next_instant_time()]
    for _ in range(200):  # far more calls than milliseconds elapse
        seq.append(next_instant_time(seq[-1]))
    assert seq == sorted(set(seq))


@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31)))
def test_format_parse_round_trip(dt: datetime) -> None:
    text = format_instant(dt)
    assert len(text) == 17
    back = parse_instant(text)
    assert back == dt.replace(microsecond=dt.microsecond // 1000 * 1000, tzinfo=UTC)
    assert format_instant(back) == text
    assert next_instant_time(text) > text
