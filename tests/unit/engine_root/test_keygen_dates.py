"""The timestamp key generator's Java date patterns: offsets, zones, quoted literals and
fractions in DATE_STRING inputs, offsets and zone names in output formats (issue 25.4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from hudilite.config import Options, TableConfig
from hudilite.errors import ConfigError, KeyGenerationError
from hudilite.keygen import KeyGenSpec, partition_paths
from hudilite.keygen_dates import format_instants, parse_dates

INSTANT = datetime(2024, 1, 15, 8, 50, 0, 123000, tzinfo=UTC)


def ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-01-15T09:50:00.123+0100", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-01-15T08:50:00.123Z", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-01-15T03:50:00.123-0500", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-15T09:50:00.123+01:00", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-15T08:50:00.123Z", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2024-01-15T10:50:00.123+02", INSTANT),
        ("yyyy-MM-dd HH:mm:ss.SSS z", "2024-01-15 08:50:00.123 UTC", INSTANT),
        ("yyyy-MM-dd HH:mm:ss.SSS z", "2024-01-15 09:50:00.123 Europe/Paris", INSTANT),
        ("yyyy-MM-dd HH:mm:ss.SSSSSS", "2024-01-15 08:50:00.123456", INSTANT),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-15 08:50:00.12", INSTANT - timedelta(milliseconds=3)),
        ("yyyyMMddHHmmssSSS", "20240115085000123", INSTANT),
        ("yyyy-MM-dd'T'HH:mm:ss", "2024-01-15T08:50:00", INSTANT.replace(microsecond=0)),
        ("dd MMM yyyy HH:mm", "15 Jan 2024 08:50", INSTANT.replace(second=0, microsecond=0)),
        ("yyyy/MM/dd hh:mm a", "2024/01/15 08:50 PM", datetime(2024, 1, 15, 20, 50, tzinfo=UTC)),
        ("''yyyy-MM-dd''", "'2024-01-15'", datetime(2024, 1, 15, tzinfo=UTC)),
    ],
)
def test_date_string_patterns_parse_as_joda(pattern, text, expected):
    got = parse_dates(pa.array([text, "nonsense", None]), pattern, "UTC").to_pylist()
    assert got == [ms(expected), None, None]


def test_values_without_offset_are_read_in_the_input_time_zone():
    # 08:50 in New York (EST, UTC-5) is 13:50 UTC; a parsed offset wins over the zone.
    got = parse_dates(
        pa.array(["2024-01-15T08:50:00"]),
        "yyyy-MM-dd'T'HH:mm:ss",
        "America/New_York",
    ).to_pylist()
    assert got[0] == ms(datetime(2024, 1, 15, 13, 50, tzinfo=UTC))
    with_offset = parse_dates(
        pa.array(["2024-01-15T08:50:00+0000"]), "yyyy-MM-dd'T'HH:mm:ssZ", "America/New_York"
    )
    assert with_offset.to_pylist() == [ms(datetime(2024, 1, 15, 8, 50, tzinfo=UTC))]


@pytest.mark.parametrize(
    ("pattern", "tz", "expected"),
    [
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "+01:00", "2024-01-15T09:50:00.123+0100"),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "+01:00", "2024-01-15T09:50:00+01:00"),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "UTC", "2024-01-15T08:50:00Z"),
        ("yyyy-MM-dd'T'HH:mm:ssX", "-05:00", "2024-01-15T03:50:00-05"),
        ("yyyy-MM-dd HH z", "Europe/Paris", "2024-01-15 09 CET"),
        ("yyyy-MM-dd HH z", "UTC", "2024-01-15 08 UTC"),
        ("yyyy/MM/dd/HH", "UTC", "2024/01/15/08"),
        ("yyyy'h'HH''", "UTC", "2024h08'"),
    ],
)
def test_output_patterns_render_offsets_zones_and_literals(pattern, tz, expected):
    ts = pa.array([ms(INSTANT)], pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
    assert format_instants(ts.cast(pa.timestamp("ms", tz=tz)), pattern).to_pylist() == [expected]


def test_summer_time_offsets_follow_the_instant():
    july = datetime(2024, 7, 1, 12, 0, tzinfo=UTC)
    ts = pa.array([ms(INSTANT), ms(july)], pa.int64()).cast(pa.timestamp("ms", tz="Europe/Paris"))
    assert format_instants(ts, "HH:mm XXX z").to_pylist() == [
        "09:50 +01:00 CET",
        "14:00 +02:00 CEST",
    ]


def _spec(**ts: str) -> KeyGenSpec:
    config = TableConfig.new(
        name="t", record_key_fields=("id",), partition_fields=("d",), keygen_type="TIMESTAMP"
    )
    return KeyGenSpec.from_config(
        config, Options({f"hoodie.keygen.timebased.{k}": v for k, v in ts.items()})
    )


def test_date_string_partition_paths_with_an_offset_pattern():
    spec = _spec(**{"timestamp.type": "DATE_STRING",
                    "input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
                    "output.dateformat": "yyyy/MM/dd/HH"})  # fmt: skip
    batch = pa.table(
        {"id": ["a", "b"], "d": ["2024-01-15T23:50:00.000-0200", "2024-01-15T00:10:00.000Z"]}
    )
    assert partition_paths(spec, batch).to_pylist() == ["2024/01/16/01", "2024/01/15/00"]
    with pytest.raises(KeyGenerationError, match=r"'2024-01-15' in row 0 matches none of"):
        partition_paths(spec, pa.table({"id": ["a"], "d": ["2024-01-15"]}))


def test_unsupported_letters_and_missing_settings_are_named():
    with pytest.raises(ConfigError, match=r"pattern letter 'Q' unsupported"):
        _spec(**{"timestamp.type": "EPOCHMILLISECONDS", "output.dateformat": "yyyy-QQ"})
    with pytest.raises(
        ConfigError,
        match=r"needs 'hoodie.keygen.timebased.timestamp.type' .*pass it as a write option",
    ):
        _spec(**{"output.dateformat": "yyyy/MM/dd"})
    with pytest.raises(ConfigError, match=r"'hoodie.keygen.timebased.input.dateformat'"):
        _spec(**{"timestamp.type": "DATE_STRING", "output.dateformat": "yyyy"})
    with pytest.raises(ConfigError, match=r"input date format 'HH:mm' has no year"):
        _spec(**{"timestamp.type": "DATE_STRING", "input.dateformat": "HH:mm",
                 "output.dateformat": "yyyy"})  # fmt: skip


def test_two_digit_years_pivot_as_joda():
    # Joda's forPattern("yy") pivots on the current year minus 30: in 2026 the two digits
    # name a year in [1946, 2045], so "47" is 1947 and "45" is 2045 (not 2000 + yy).
    from hudilite.keygen_dates import two_digit_year_base

    assert two_digit_year_base(datetime(2026, 11, 28, tzinfo=UTC)) == (1946, 46)
    low, offset = two_digit_year_base()
    year = datetime.now(UTC).year
    got = parse_dates(pa.array(["01/15/00", "01/15/99", "01/15/45", "01/15/47"]), "MM/dd/yy", "UTC")
    expected = [low - offset + t + (100 if t < offset else 0) for t in (0, 99, 45, 47)]
    assert [datetime.fromtimestamp(v / 1000, UTC).year for v in got.to_pylist()] == expected
    assert all(year - 80 <= y <= year + 19 for y in expected)
    if year == 2026:
        assert expected == [2000, 1999, 2045, 1947]
