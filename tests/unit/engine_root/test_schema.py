"""hudilite.schema: storage types, Arrow <-> Avro (checked against real Hudi tables), casting."""

from __future__ import annotations

import datetime as dt
import glob
import io
import json
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudilite.config import parse_properties
from hudilite.errors import SchemaError
from hudilite.schema import (
    COMMIT_TIME_COL,
    DELETE_COL,
    FILE_ID_COL,
    META_COLUMNS,
    OPERATION_COL,
    SEQ_COL,
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    cast_to_schema,
    data_schema,
    decimal_fixed_size,
    to_storage_schema,
    with_meta_columns,
)
from tests.conftest import FIXTURES, fixture_id, fixture_zips, unzip_table

# --- fixtures: every real Hudi table, unzipped once ---------------------------------------


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is absent")
    root = tmp_path_factory.mktemp("fx")
    return {
        fixture_id(z): unzip_table(z, root / fixture_id(z).replace("/", "_"))
        for z in fixture_zips()
    }


FIXTURE_IDS = [fixture_id(z) for z in fixture_zips()]


def _props(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie" / "hoodie.properties").read_text())


def _commit_schema(base: Path) -> dict | None:
    """``extraMetadata.schema`` of the table's first completed commit (JSON v6, Avro v8+)."""
    for pattern in (".hoodie/*.commit", ".hoodie/*.deltacommit"):
        for path in sorted(glob.glob(str(base / pattern))):
            return json.loads(json.loads(Path(path).read_text())["extraMetadata"]["schema"])
    for pattern in (".hoodie/timeline/*_*.commit", ".hoodie/timeline/*_*.deltacommit"):
        for path in sorted(glob.glob(str(base / pattern))):
            with open(path, "rb") as fh:
                record: Any = next(fastavro.reader(fh))
                return json.loads(record["extraMetadata"]["schema"])
    return None


# --- constants ------------------------------------------------------------------------------


def test_meta_and_internal_column_names() -> None:
    assert META_COLUMNS == (
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    )
    assert (SEQ_COL, DELETE_COL, FILE_ID_COL, OPERATION_COL) == (
        "_hl_seq",
        "_hl_delete",
        "_hl_file_id",
        "_hoodie_operation",
    )


# --- storage types --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arrow", "stored"),
    [
        (pa.int8(), pa.int32()),
        (pa.int16(), pa.int32()),
        (pa.uint8(), pa.int32()),
        (pa.uint16(), pa.int32()),
        (pa.uint32(), pa.int64()),
        (pa.uint64(), pa.int64()),
        (pa.int32(), pa.int32()),
        (pa.int64(), pa.int64()),
        (pa.float16(), pa.float32()),
        (pa.float64(), pa.float64()),
        (pa.bool_(), pa.bool_()),
        (pa.large_string(), pa.string()),
        (pa.large_binary(), pa.binary()),
        (pa.binary(16), pa.binary()),
        (pa.timestamp("ns"), pa.timestamp("us", tz="UTC")),
        (pa.timestamp("ms", tz="Asia/Kolkata"), pa.timestamp("us", tz="UTC")),
        (pa.date64(), pa.date32()),
        (pa.decimal128(10, 5), pa.decimal128(10, 5)),
        (pa.decimal256(20, 2), pa.decimal128(20, 2)),
        (pa.dictionary(pa.int32(), pa.large_string()), pa.string()),
        (pa.large_list(pa.int8()), pa.list_(pa.field("element", pa.int32()))),
        (pa.list_(pa.int16(), 3), pa.list_(pa.field("element", pa.int32()))),
        (
            pa.map_(pa.large_string(), pa.int8()),
            pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int32())),
        ),
        (
            pa.struct([pa.field("a", pa.int8(), nullable=False), ("b", pa.list_(pa.uint8()))]),
            pa.struct([("a", pa.int32()), ("b", pa.list_(pa.field("element", pa.int32())))]),
        ),
    ],
)
def test_to_storage_schema_maps_types(arrow: pa.DataType, stored: pa.DataType) -> None:
    out = to_storage_schema(pa.schema([pa.field("c", arrow, nullable=False)]))
    assert out.field("c").type == stored
    assert out.field("c").nullable


def test_to_storage_schema_makes_nested_fields_nullable_and_drops_metadata() -> None:
    inner = pa.struct([pa.field("x", pa.int32(), nullable=False)])
    schema = pa.schema(
        [pa.field("s", inner, nullable=False, metadata={"k": "v"})], metadata={"a": "b"}
    )
    out = to_storage_schema(schema)
    assert out.metadata is None and out.field("s").metadata is None
    assert out.field("s").type.field("x").nullable


@pytest.mark.parametrize(
    ("arrow", "message"),
    [
        (pa.null(), "type null"),
        (pa.time64("us"), "no Hudi/Spark counterpart"),
        (pa.duration("s"), "no Hudi/Spark counterpart"),
        (pa.map_(pa.int32(), pa.int32()), "map keys must be strings"),
        (pa.decimal256(40, 2), "precision 40"),
        (pa.struct([]), "without fields"),
    ],
)
def test_to_storage_schema_rejects_types_without_counterpart(
    arrow: pa.DataType, message: str
) -> None:
    with pytest.raises(SchemaError, match=message) as err:
        to_storage_schema(pa.schema([("col", arrow)]))
    assert "'col" in str(err.value)


def test_storage_types_survive_a_parquet_round_trip() -> None:
    """What we store is exactly what pyarrow (and so Spark/hudi-rs) reads back."""
    source = pa.table(
        {
            "i8": pa.array([1, None], pa.int8()),
            "s": pa.array(["a", None], pa.large_string()),
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6), None], pa.timestamp("ns")),
            "d": pa.array([dt.date(2024, 1, 2), None]),
            "dec": pa.array([Decimal("1.50000"), None], pa.decimal128(10, 5)),
            "l": pa.array([[{"x": 1}], None], pa.list_(pa.struct([("x", pa.int16())]))),
            "m": pa.array([[("k", 1.0)], None], pa.map_(pa.string(), pa.float64())),
        }
    )
    schema = to_storage_schema(source.schema)
    table = cast_to_schema(source, schema)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    back = pq.read_table(io.BytesIO(buf.getvalue()))
    assert [f.type for f in back.schema] == [f.type for f in schema]
    assert back.to_pylist() == table.to_pylist()


def test_with_meta_columns_puts_five_strings_first_and_is_idempotent() -> None:
    schema = pa.schema([("id", pa.int32()), (COMMIT_TIME_COL, pa.string()), ("v", pa.string())])
    out = with_meta_columns(schema)
    assert out.names == [*META_COLUMNS, "id", "v"]
    assert all(out.field(n).type == pa.string() and out.field(n).nullable for n in META_COLUMNS)
    assert with_meta_columns(out) == out
    assert data_schema(out.append(pa.field(SEQ_COL, pa.int64()))).names == ["id", "v"]


# --- Avro -> Arrow --------------------------------------------------------------------------


@pytest.mark.parametrize("fid", FIXTURE_IDS)
def test_avro_to_arrow_reads_every_fixture_create_schema(tables: dict[str, Path], fid: str) -> None:
    """The create schema maps to the types hudi-rs reads from the table's files."""
    from hudi import HudiReadOptions, HudiTableBuilder

    base = tables[fid]
    schema = avro_to_arrow_schema(_props(base)["hoodie.table.create.schema"])
    assert all(f.nullable for f in schema)
    batches = HudiTableBuilder.from_base_uri(str(base)).build().read(HudiReadOptions())
    if not batches:
        return
    read = data_schema(batches[0].schema)
    assert schema.names == read.names
    assert to_storage_schema(schema) == to_storage_schema(read)


@pytest.mark.parametrize("fid", FIXTURE_IDS)
def test_avro_round_trip_equals_hudi_commit_schema(tables: dict[str, Path], fid: str) -> None:
    """create.schema -> Arrow -> Avro gives exactly what Hudi wrote into its commit metadata."""
    base = tables[fid]
    create = json.loads(_props(base)["hoodie.table.create.schema"])
    expected = _commit_schema(base)
    if expected is None:
        pytest.skip("no completed commit")
    arrow = to_storage_schema(avro_to_arrow_schema(create))
    assert arrow_to_avro_schema(arrow, create["name"], create["namespace"]) == expected


def test_avro_with_meta_columns_is_byte_identical_to_a_hudi_log_block_schema(
    tables: dict[str, Path],
) -> None:
    base = tables["quickstart_trips_table/mor/avro/v6_trips_8i1u"]
    log = next(p for p in base.rglob(".*.log.*"))
    data = log.read_bytes()
    pos = data.index(b"#HUDI#") + 6 + 8 + 8  # magic, block length, version + type
    (count,) = struct.unpack(">i", data[pos : pos + 4])
    pos += 4
    header = {}
    for _ in range(count):
        key, length = struct.unpack(">ii", data[pos : pos + 8])
        header[key] = data[pos + 8 : pos + 8 + length].decode()
        pos += 8 + length
    create = json.loads(_props(base)["hoodie.table.create.schema"])
    schema = with_meta_columns(avro_to_arrow_schema(create))
    avro = arrow_to_avro_schema(schema, create["name"], create["namespace"])
    assert json.dumps(avro, separators=(",", ":")) == header[2]


def test_avro_to_arrow_union_order_nullability_and_logical_types() -> None:
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "a", "type": ["long", "null"]},
            {"name": "b", "type": ["null", "string"], "default": None},
            {"name": "c", "type": "int"},
            {
                "name": "d",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            },
            {"name": "e", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "f", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "g", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
            {"name": "h", "type": {"type": "fixed", "name": "F", "size": 4}},
            {"name": "i", "type": "F"},
            {"name": "j", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "k", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "l", "type": {"type": "array", "items": "int"}},
            {"name": "m", "type": {"type": "map", "values": ["null", "double"]}},
            {"name": "n", "type": {"type": "long", "logicalType": "unknown-thing"}},
        ],
    }
    schema = avro_to_arrow_schema(json.dumps(avro))
    assert schema.field("a").nullable and schema.field("b").nullable
    assert not schema.field("c").nullable
    assert schema.field("a").type == pa.int64() and schema.field("c").type == pa.int32()
    assert schema.field("d").type == pa.decimal128(5, 2)
    assert schema.field("e").type == pa.timestamp("ms", tz="UTC")
    assert schema.field("f").type == pa.timestamp("us")
    assert schema.field("g").type == pa.string()
    assert schema.field("h").type == pa.binary() == schema.field("i").type
    assert schema.field("j").type == pa.string()
    assert schema.field("k").type == pa.time32("ms")
    assert schema.field("l").type == pa.list_(pa.field("element", pa.int32(), nullable=False))
    assert schema.field("m").type.item_field.nullable
    assert schema.field("n").type == pa.int64()


@pytest.mark.parametrize(
    ("avro", "message"),
    [
        ("{not json", "invalid Avro schema JSON"),
        ({"type": "string"}, "must be a record"),
        (
            {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["int", "string"]}]},
            "union",
        ),
        (
            {
                "type": "record",
                "name": "Node",
                "fields": [{"name": "next", "type": ["null", "Node"]}],
            },
            "recursive",
        ),
        ({"type": "record", "name": "r", "fields": [{"name": "x", "type": "Nope"}]}, "unknown"),
    ],
)
def test_avro_to_arrow_errors(avro: object, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        avro_to_arrow_schema(avro)  # type: ignore[arg-type]


# --- Arrow -> Avro --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (15, 7), (18, 8), (38, 16)]
)
def test_decimal_fixed_size_is_minimal(precision: int, size: int) -> None:
    assert decimal_fixed_size(precision) == size


def test_arrow_to_avro_nested_names_and_fastavro_accepts_it() -> None:
    schema = with_meta_columns(
        pa.schema(
            [
                ("id", pa.int64()),
                ("ts", pa.timestamp("us", tz="UTC")),
                ("local", pa.timestamp("ms")),
                (
                    "s",
                    pa.struct(
                        [("amount", pa.decimal128(12, 2)), ("t", pa.struct([("x", pa.int8())]))]
                    ),
                ),
                ("l", pa.list_(pa.decimal128(4, 1))),
            ]
        )
    )
    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")
    fields = {f["name"]: f for f in avro["fields"]}
    assert fields["_hoodie_record_key"] == {
        "name": "_hoodie_record_key",
        "type": ["null", "string"],
        "doc": "",
        "default": None,
    }
    assert fields["ts"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["local"]["type"][1] == {"type": "long", "logicalType": "local-timestamp-millis"}
    struct_type = fields["s"]["type"][1]
    assert (struct_type["name"], struct_type["namespace"]) == ("s", "hoodie.t.t_record")
    amount = struct_type["fields"][0]["type"][1]
    assert amount["namespace"] == "hoodie.t.t_record.s.amount" and amount["size"] == 6
    assert struct_type["fields"][1]["type"][1]["namespace"] == "hoodie.t.t_record.s"
    assert fields["l"]["type"][1]["items"][1]["namespace"] == "hoodie.t.t_record.l"
    fastavro.parse_schema(avro)  # valid Avro with unique names
    assert avro_to_arrow_schema(avro).field("s").type.field("amount").type == pa.decimal128(12, 2)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (pa.schema([("bad name", pa.int32())]), "not a valid Avro name"),
        (pa.schema([("m", pa.map_(pa.int32(), pa.int32()))]), "map keys must be strings"),
        (pa.schema([("t", pa.time64("us"))]), "no Avro counterpart"),
    ],
)
def test_arrow_to_avro_errors(schema: pa.Schema, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        arrow_to_avro_schema(schema, "r", "ns")


# --- cast_to_schema -------------------------------------------------------------------------


def test_cast_to_schema_reorders_and_casts() -> None:
    table = pa.table(
        {
            "b": pa.array(["x"], pa.large_string()),
            "s": pa.array([{"y": 2, "x": 1}]),
            "a": pa.array([1], pa.int64()),
        }
    )
    schema = pa.schema(
        [
            ("a", pa.int32()),
            ("b", pa.string()),
            ("s", pa.struct([("x", pa.int32()), ("y", pa.int64())])),
        ]
    )
    out = cast_to_schema(table, schema)
    assert out.schema == schema
    assert out.to_pylist() == [{"a": 1, "b": "x", "s": {"x": 1, "y": 2}}]


def test_cast_to_schema_errors_name_the_column_and_types() -> None:
    schema = pa.schema([("id", pa.int32()), ("v", pa.string())])
    with pytest.raises(SchemaError, match=r"'id'.*int64.*int32"):
        cast_to_schema(pa.table({"id": pa.array([2**40]), "v": ["a"]}), schema)
    with pytest.raises(SchemaError, match=r"column 'v' \(string\) is missing"):
        cast_to_schema(pa.table({"id": [1]}), schema)
    with pytest.raises(SchemaError, match=r"'extra' \(int64\) is not in the table schema"):
        cast_to_schema(pa.table({"id": [1], "v": ["a"], "extra": [1]}), schema)
    with pytest.raises(SchemaError, match="did you mean 'id'"):
        cast_to_schema(pa.table({"ID": [1], "v": ["a"]}), schema)
    with pytest.raises(SchemaError, match=r"'v'.*cannot cast"):
        cast_to_schema(pa.table({"id": [1], "v": pa.array([[1]])}), schema)
    strict = pa.schema([pa.field("id", pa.int32(), nullable=False)])
    with pytest.raises(SchemaError, match="not nullable"):
        cast_to_schema(pa.table({"id": pa.array([None], pa.int32())}), strict)


def test_cast_to_schema_null_column_takes_any_type() -> None:
    out = cast_to_schema(
        pa.table({"v": pa.nulls(2)}), pa.schema([("v", pa.timestamp("us", tz="UTC"))])
    )
    assert out["v"].null_count == 2
