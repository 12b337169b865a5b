"""hudilite.keygen: record keys and partition paths exactly as Hudi writes them."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudilite.config import Options, TableConfig, parse_properties
from hudilite.errors import ConfigError, KeyGenerationError
from hudilite.keygen import (
    DEFAULT_PARTITION_PATH,
    KeyGenSpec,
    escape_path_name,
    partition_paths,
    partition_values,
    record_keys,
    to_key_text,
    unescape_path_name,
)
from tests.conftest import FIXTURES, fixture_id, fixture_zips, unzip_table

FIXTURE_IDS = [fixture_id(z) for z in fixture_zips()]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is absent")
    root = tmp_path_factory.mktemp("fx")
    return {
        fixture_id(z): unzip_table(z, root / fixture_id(z).replace("/", "_"))
        for z in fixture_zips()
    }


def _config(base: Path) -> TableConfig:
    return TableConfig.from_properties(
        parse_properties((base / ".hoodie/hoodie.properties").read_text())
    )


def simple(**kw: object) -> KeyGenSpec:
    return KeyGenSpec("SIMPLE", ("id",), **kw)  # type: ignore[arg-type]


# --- real tables ----------------------------------------------------------------------------


@pytest.mark.parametrize("fid", FIXTURE_IDS)
def test_keys_and_paths_equal_what_hudi_wrote(tables: dict[str, Path], fid: str) -> None:
    from hudi import HudiReadOptions, HudiTableBuilder

    base = tables[fid]
    spec = KeyGenSpec.from_config(_config(base), Options({}))
    batches = HudiTableBuilder.from_base_uri(str(base)).build().read(HudiReadOptions())
    if not batches:
        pytest.skip("empty table")
    table = pa.Table.from_batches(batches)
    assert record_keys(spec, table).to_pylist() == table["_hoodie_record_key"].to_pylist()
    paths = partition_paths(spec, table).to_pylist()
    assert paths == table["_hoodie_partition_path"].to_pylist()
    for path, row in zip(paths, table.to_pylist(), strict=True):
        values = partition_values(spec, path)
        assert values == {f: str(row[f]) for f in spec.partition_field_names}


def test_fixture_specs(tables: dict[str, Path]) -> None:
    complex_ = KeyGenSpec.from_config(
        _config(tables["sample_table/cow/v6_complexkeygen_hivestyle"])
    )
    assert (complex_.kind, complex_.record_key_fields, complex_.partition_fields) == (
        "COMPLEX",
        ("id", "name"),
        ("byteField", "shortField"),
    )
    assert complex_.hive_style and not complex_.url_encode
    nonpart = KeyGenSpec.from_config(_config(tables["sample_table/cow/v8_nonpartitioned"]))
    assert nonpart.kind == "NON_PARTITION" and nonpart.partition_parts == ()


# --- value text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "arrow_type", "expected"),
    [
        ([1, -20, None], pa.int8(), ["1", "-20", None]),
        ([2**62], pa.int64(), [str(2**62)]),
        (["a b", ""], pa.large_string(), ["a b", ""]),
        ([True, False], pa.bool_(), ["true", "false"]),
        (
            [1.0, 19.1, 1e7, 1.2345e-4, 0.001, 123456.789, -0.0, 1e21, 2.5e-300],
            pa.float64(),
            [
                "1.0",
                "19.1",
                "1.0E7",
                "1.2345E-4",
                "0.001",
                "123456.789",
                "-0.0",
                "1.0E21",
                "2.5E-300",
            ],
        ),
        ([math.nan, math.inf, -math.inf], pa.float64(), ["NaN", "Infinity", "-Infinity"]),
        ([19.1, 0.1, 16777216.0], pa.float32(), ["19.1", "0.1", "1.6777216E7"]),
        ([Decimal("1.50000"), Decimal("0.0000001")], pa.decimal128(10, 7), ["1.5000000", "1E-7"]),
        ([Decimal("12.30")], pa.decimal128(5, 2), ["12.30"]),
        ([dt.date(2024, 1, 31)], pa.date32(), ["2024-01-31"]),
        ([dt.datetime(1970, 1, 1, 0, 0, 1, 5)], pa.timestamp("us", tz="UTC"), ["1000005"]),
        ([dt.datetime(1970, 1, 1, 0, 0, 2)], pa.timestamp("ms"), ["2000000"]),
    ],
)
def test_value_text_is_java_string_value_of(
    values: list, arrow_type: pa.DataType, expected: list
) -> None:
    assert to_key_text(pa.array(values, arrow_type)).to_pylist() == expected


def test_value_text_of_dictionaries_and_chunked_arrays() -> None:
    dictionary = pa.array(["x", "y", "x"]).dictionary_encode()
    assert to_key_text(dictionary).to_pylist() == ["x", "y", "x"]
    chunked = pa.chunked_array([[1], [2, 3]])
    assert to_key_text(chunked).to_pylist() == ["1", "2", "3"]


@pytest.mark.parametrize(
    "arrow_type", [pa.binary(), pa.list_(pa.int32()), pa.struct([("a", pa.int32())])]
)
def test_value_text_refuses_binary_and_nested(arrow_type: pa.DataType) -> None:
    with pytest.raises(KeyGenerationError, match="'col'"):
        to_key_text(pa.nulls(1, arrow_type), "col")


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_text_reads_back_exactly(x: float) -> None:
    text = to_key_text(pa.array([x], pa.float64()))[0].as_py()
    assert float(text) == x
    mantissa = text.split("E")[0].lstrip("-")
    assert "." in mantissa and not mantissa.endswith(".")
    assert ("E" in text) == (x != 0 and not 1e-3 <= abs(x) < 1e7)


# --- record keys ----------------------------------------------------------------------------


def test_simple_key_and_errors_name_field_and_row() -> None:
    spec = simple()
    assert record_keys(spec, pa.table({"id": [3, 1]})).to_pylist() == ["3", "1"]
    with pytest.raises(KeyGenerationError, match=r"'id' is null in row 1"):
        record_keys(spec, pa.table({"id": [3, None]}))
    with pytest.raises(KeyGenerationError, match=r"'id' is empty in row 0"):
        record_keys(spec, pa.table({"id": ["", "a"]}))
    with pytest.raises(KeyGenerationError, match="'id' is not in the data"):
        record_keys(spec, pa.table({"other": [1]}))


def test_complex_key_placeholders() -> None:
    spec = KeyGenSpec("COMPLEX", ("id", "name"))
    batch = pa.record_batch({"id": [1, None, 3], "name": ["Alice", "Bob", ""]})
    assert record_keys(spec, batch).to_pylist() == [
        "id:1,name:Alice",
        "id:__null__,name:Bob",
        "id:3,name:__empty__",
    ]
    with pytest.raises(
        KeyGenerationError, match=r"\['id', 'name'\] are all null or empty in row 1"
    ):
        record_keys(spec, pa.table({"id": [1, None], "name": ["a", ""]}))


def test_complex_single_field_is_prefixed_unless_value_only() -> None:
    batch = pa.table({"id": [7]})
    assert record_keys(KeyGenSpec("COMPLEX", ("id",)), batch).to_pylist() == ["id:7"]
    spec = KeyGenSpec("COMPLEX", ("id",), complex_value_only=True)
    assert record_keys(spec, batch).to_pylist() == ["7"]


def test_non_partitioned_and_nested_key_fields() -> None:
    batch = pa.table({"a": [{"b": 5}], "c": ["x"]})
    single = KeyGenSpec("NON_PARTITION", ("a.b",))
    assert record_keys(single, batch).to_pylist() == ["5"]
    assert partition_paths(single, batch).to_pylist() == [""]
    multi = KeyGenSpec("NON_PARTITION", ("a.b", "c"))
    assert record_keys(multi, batch).to_pylist() == ["a.b:5,c:x"]


# --- partition paths ------------------------------------------------------------------------


def test_partition_paths_plain_hive_and_default() -> None:
    batch = pa.table({"id": [1, 2, 3], "city": ["sf", None, ""]})
    assert partition_paths(simple(partition_fields=("city",)), batch).to_pylist() == [
        "sf",
        DEFAULT_PARTITION_PATH,
        DEFAULT_PARTITION_PATH,
    ]
    hive = simple(partition_fields=("city",), hive_style=True)
    assert partition_paths(hive, batch).to_pylist() == [
        "city=sf",
        f"city={DEFAULT_PARTITION_PATH}",
        f"city={DEFAULT_PARTITION_PATH}",
    ]
    assert partition_paths(simple(), batch).to_pylist() == ["", "", ""]


def test_complex_partition_paths_join_parts() -> None:
    spec = KeyGenSpec("COMPLEX", ("id",), ("y", "m"), hive_style=True)
    batch = pa.table({"id": [1], "y": [2024], "m": pa.array([1], pa.int8())})
    assert partition_paths(spec, batch).to_pylist() == ["y=2024/m=1"]
    assert partition_values(spec, "y=2024/m=1") == {"y": "2024", "m": "1"}
    plain = KeyGenSpec("COMPLEX", ("id",), ("y", "m"))
    assert partition_values(plain, "2024/1") == {"y": "2024", "m": "1"}


def test_url_encoding_is_hudi_escape_path_name() -> None:
    spec = simple(partition_fields=("p",), url_encode=True, hive_style=True)
    batch = pa.table({"id": [1, 2, 3], "p": ["a/b:c=d%", "plain text-_.~", None]})
    paths = partition_paths(spec, batch).to_pylist()
    assert paths == ["p=a%2Fb%3Ac%3Dd%25", "p=plain text-_.~", f"p={DEFAULT_PARTITION_PATH}"]
    assert [partition_values(spec, p)["p"] for p in paths] == [
        "a/b:c=d%",
        "plain text-_.~",
        DEFAULT_PARTITION_PATH,
    ]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_escape_path_name_round_trips(text: str) -> None:
    escaped = escape_path_name(text)
    assert "/" not in escaped and unescape_path_name(escaped) == text


def test_partition_values_errors_and_non_partitioned() -> None:
    assert partition_values(KeyGenSpec("NON_PARTITION", ("id",)), "") == {}
    spec = KeyGenSpec("COMPLEX", ("id",), ("y", "m"), hive_style=True)
    with pytest.raises(KeyGenerationError, match="does not match"):
        partition_values(spec, "y=2024")
    with pytest.raises(KeyGenerationError, match="does not match"):
        partition_values(KeyGenSpec("COMPLEX", ("id",), ("y", "m")), "2024/1/2")


# --- timestamp and custom key generators ----------------------------------------------------


def ts_spec(ts_type: str, out: str, **kw: object) -> KeyGenSpec:
    return KeyGenSpec(
        "TIMESTAMP",
        ("id",),
        ("ts",),
        timestamp_type=ts_type,
        output_format=out,
        **kw,  # type: ignore[arg-type]
    )


def test_timestamp_epoch_millis_and_seconds() -> None:
    millis = 1706745600123  # 2024-02-01T00:00:00.123Z
    batch = pa.table({"id": [1, 2], "ts": [millis, None]})
    assert partition_paths(ts_spec("EPOCHMILLISECONDS", "yyyy/MM/dd"), batch).to_pylist() == [
        "2024/02/01",
        "1970/01/01",  # a null takes Hudi's default value (epoch + 1 unit)
    ]
    seconds = pa.table({"id": [1], "ts": [millis // 1000]})
    spec = ts_spec("UNIX_TIMESTAMP", "yyyy-MM-dd-HH", timezone="Asia/Kolkata")
    assert partition_paths(spec, seconds).to_pylist() == ["2024-02-01-05"]
    gmt = ts_spec("UNIX_TIMESTAMP", "yyyyMMddHH", timezone="GMT+8")
    assert partition_paths(gmt, seconds).to_pylist() == ["2024020108"]
    floats = pa.table({"id": [1], "ts": [millis // 1000 + 0.9]})  # truncated like longValue()
    assert partition_paths(ts_spec("UNIX_TIMESTAMP", "ss.SSS"), floats).to_pylist() == ["00.000"]


def test_timestamp_pattern_letters() -> None:
    batch = pa.table({"id": [1], "ts": [dt.datetime(2024, 3, 9, 15, 4, 5, 678000, tzinfo=dt.UTC)]})
    spec = ts_spec("EPOCHMILLISECONDS", "yy-M-d'T'h:mm:ss.SSS a E MMM MMMM D ''")
    assert partition_paths(spec, batch).to_pylist() == ["24-3-9T3:04:05.678 PM Sat Mar March 69 '"]


def test_timestamp_date_string_inputs() -> None:
    spec = ts_spec(
        "DATE_STRING",
        "yyyy/MM/dd/HH",
        input_format="yyyy-MM-dd HH:mm:ss,yyyy-MM-dd",
        input_timezone="America/New_York",
        output_timezone="UTC",
        hive_style=True,
    )
    batch = pa.table({"id": [1, 2], "ts": ["2024-01-31 22:00:00", "2024-02-01"]})
    paths = partition_paths(spec, batch).to_pylist()
    assert paths == ["ts=2024/02/01/03", "ts=2024/02/01/05"]
    assert partition_values(spec, paths[0]) == {"ts": "2024/02/01/03"}
    with pytest.raises(KeyGenerationError, match=r"'31/01/2024' in row 0"):
        partition_paths(spec, pa.table({"id": [1], "ts": ["31/01/2024"]}))


def test_timestamp_from_arrow_timestamps_dates_and_encoding() -> None:
    batch = pa.table(
        {
            "id": [1, 2],
            "ts": pa.array(
                [dt.datetime(2024, 5, 6, 7), dt.datetime(2024, 5, 7)], pa.timestamp("us", tz="UTC")
            ),
        }
    )
    spec = ts_spec("EPOCHMILLISECONDS", "yyyy/MM/dd", url_encode=True)
    assert partition_paths(spec, batch).to_pylist() == ["2024%2F05%2F06", "2024%2F05%2F07"]
    dates = pa.table({"id": [1], "ts": [dt.date(2024, 5, 6)]})
    assert partition_paths(ts_spec("UNIX_TIMESTAMP", "yyyyMMdd"), dates).to_pylist() == ["20240506"]


def test_custom_keygen_mixes_simple_and_timestamp_parts() -> None:
    spec = KeyGenSpec(
        "CUSTOM",
        ("id",),
        ("region:simple", "ts:TIMESTAMP"),
        hive_style=True,
        timestamp_type="EPOCHMILLISECONDS",
        output_format="yyyy/MM",
    )
    batch = pa.table({"id": [1], "region": ["eu"], "ts": [1706745600000]})
    assert record_keys(spec, batch).to_pylist() == ["1"]
    path = partition_paths(spec, batch).to_pylist()[0]
    assert path == "region=eu/ts=2024/02"
    assert partition_values(spec, path) == {"region": "eu", "ts": "2024/02"}
    plain = KeyGenSpec(
        "CUSTOM", ("id",), ("region:SIMPLE", "ts:TIMESTAMP"), timestamp_type="EPOCHMILLISECONDS",
        output_format="yyyy/MM",
    )  # fmt: skip
    assert partition_values(plain, "eu/2024/02") == {"region": "eu", "ts": "2024/02"}


TS = {"kind": "TIMESTAMP", "record_key_fields": ("a",), "partition_fields": ("t",)}
TS_MS = {**TS, "timestamp_type": "EPOCHMILLISECONDS"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "NOPE", "record_key_fields": ("id",)}, "unknown key generator"),
        ({"kind": "SIMPLE", "record_key_fields": ("a", "b")}, "one record key field"),
        (
            {"kind": "SIMPLE", "record_key_fields": ("a",), "partition_fields": ("x", "y")},
            "at most one",
        ),
        (
            {"kind": "CUSTOM", "record_key_fields": ("a",), "partition_fields": ("x",)},
            "name:SIMPLE",
        ),
        (TS, "timestamp.type"),
        ({**TS, "timestamp_type": "EPOCHMILLISECONDS"}, "output.dateformat"),
        ({**TS_MS, "output_format": "yyyy Q"}, "pattern letter 'Q'"),
        ({**TS, "timestamp_type": "DATE_STRING", "output_format": "yyyy"}, "input.dateformat"),
        ({**TS_MS, "output_format": "yyyy", "timezone": "Mars/Base"}, "unknown time zone"),
    ],
)
def test_spec_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KeyGenSpec(**kwargs)


def test_from_config_reads_timestamp_settings_from_options_then_table() -> None:
    config = TableConfig.new(
        "t",
        record_key_fields=("id",),
        partition_fields=("ts",),
        keygen_type="TIMESTAMP",
        extra={
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy",
        },
    )
    spec = KeyGenSpec.from_config(config, Options({"hoodie.keygen.timebased.timezone": "GMT+1"}))
    assert (spec.timestamp_type, spec.output_format, spec.out_tz) == (
        "EPOCHMILLISECONDS",
        "yyyy",
        "+01:00",
    )
    legacy = Options({"hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyy/MM"})
    assert KeyGenSpec.from_config(config, legacy).output_format == "yyyy/MM"


def test_from_config_custom_types_from_write_option_and_complex_encoding() -> None:
    config = TableConfig.new(
        "t", record_key_fields=("id",), partition_fields=("region",), keygen_type="CUSTOM"
    )
    options = Options({"hoodie.datasource.write.partitionpath.field": "region:SIMPLE"})
    assert KeyGenSpec.from_config(config, options).partition_parts == (("region", "SIMPLE"),)
    complex_cfg = TableConfig.new("t", record_key_fields=("id",), keygen_type="COMPLEX")
    new_encoding = Options({"hoodie.write.complex.keygen.new.encoding": "true"})
    assert KeyGenSpec.from_config(complex_cfg, new_encoding).complex_value_only
    assert not KeyGenSpec.from_config(complex_cfg).complex_value_only
