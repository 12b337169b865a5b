"""Column-wise decoding of flat Avro data blocks against fastavro's row-by-row decoding."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudilite.errors import CorruptFileError
from hudilite.storage import log_blocks
from hudilite.storage.avro_columns import decode_flat, flat_plan, record_bounds

PRIMITIVES: dict[str, Any] = {
    "boolean": st.booleans(),
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "string": st.text(max_size=40),
    "bytes": st.binary(max_size=40),
    "date": st.integers(-719_162, 2_932_896),  # years 1-9999, as Python dates
    "timestamp-micros": st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999),
}


def avro_type(kind: str) -> Any:
    if kind == "date":
        return {"type": "int", "logicalType": "date"}
    if kind == "timestamp-micros":
        return {"type": "long", "logicalType": "timestamp-micros"}
    return kind


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """A flat record schema (some fields in null unions, either order) and rows of it."""
    kinds = draw(st.lists(st.sampled_from(sorted(PRIMITIVES)), min_size=1, max_size=8))
    fields, values = [], {}
    for i, kind in enumerate(kinds):
        nullable = draw(st.sampled_from([None, "first", "last"]))
        t = avro_type(kind)
        if nullable:
            t = ["null", t] if nullable == "first" else [t, "null"]
        fields.append({"name": f"f{i}", "type": t})
        values[f"f{i}"] = st.one_of(st.none(), PRIMITIVES[kind]) if nullable else PRIMITIVES[kind]
    schema = json.dumps({"type": "record", "name": "r", "fields": fields})
    rows = draw(st.lists(st.fixed_dictionaries(values), max_size=30))
    return schema, rows


def content_of(schema: str, rows: list[dict[str, Any]]) -> bytes:
    """AVRO_DATA content written with fastavro: version 3, count, (length, datum) per row."""
    # Logical types stripped: the rows hold the stored integers themselves.
    parsed = fastavro.parse_schema(json.loads(schema.replace('"logicalType"', '"_logical"')))
    out = [struct.pack(">ii", 3, len(rows))]
    for row in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out += [struct.pack(">i", len(buf.getvalue())), buf.getvalue()]
    return b"".join(out)


def row_by_row(content: bytes, schema: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(log_blocks, "decode_flat", lambda *_: None)
        return log_blocks.decode_avro_records(content, schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks())
def test_flat_blocks_decode_as_fastavro_decodes_them(block: tuple[str, list[dict[str, Any]]]):
    schema, rows = block
    assert flat_plan(schema) is not None
    content = content_of(schema, rows)
    fast = log_blocks.decode_avro_records(content, schema)
    starts, ends = record_bounds(content, len(rows), 8)
    direct = decode_flat(content, starts, ends, schema, log_blocks.arrow_schema_of(schema))
    assert direct is not None and direct.equals(fast)  # the column-wise path decoded it
    with pytest.MonkeyPatch.context() as mp:
        slow = row_by_row(content, schema, mp)
    assert fast.schema == slow.schema
    assert fast.to_pylist() == slow.to_pylist()
    assert fast.num_rows == len(rows)


def test_the_fast_path_is_taken_for_flat_rows_and_gives_their_values() -> None:
    schema = json.dumps(
        {
            "type": "record",
            "name": "r",
            "fields": [
                {"name": "k", "type": "string"},
                {"name": "ts", "type": ["null", "long"]},
                {"name": "v", "type": ["double", "null"]},
                {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            ],
        }
    )
    rows = [
        {"k": "a", "ts": 1, "v": 0.5, "d": 19000},
        {"k": "é" * 200, "ts": None, "v": None, "d": -1},
        {"k": "", "ts": -(2**63), "v": -1e300, "d": 0},
    ]
    table = log_blocks.decode_avro_records(content_of(schema, rows), schema)
    got = table.to_pydict()
    assert got["k"] == ["a", "é" * 200, ""]
    assert got["ts"] == [1, None, -(2**63)]
    assert got["v"] == [0.5, None, -1e300]
    assert [d.toordinal() - 719163 for d in got["d"]] == [19000, -1, 0]


@pytest.mark.parametrize(
    "avro",
    [
        {"type": "record", "name": "n", "fields": [{"name": "x", "type": "int"}]},
        {"type": "array", "items": "int"},
        {"type": "map", "values": "int"},
        {"type": "enum", "name": "e", "symbols": ["A"]},
        {"type": "fixed", "name": "f", "size": 2},
        {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
        ["null", "int", "string"],
        "some.named.Type",
    ],
)
def test_other_schemas_are_left_to_fastavro(avro: Any) -> None:
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": avro}]})
    assert flat_plan(schema) is None


SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "r",
        "fields": [{"name": "k", "type": ["null", "string"]}, {"name": "n", "type": "int"}],
    }
)


def datum(key: bytes, n: bytes) -> bytes:
    return b"\x02" + bytes([len(key) * 2]) + key + n


def block_of(*datums: bytes, count: int | None = None) -> bytes:
    out = [struct.pack(">ii", 3, len(datums) if count is None else count)]
    for d in datums:
        out += [struct.pack(">i", len(d)), d]
    return b"".join(out)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (block_of(datum(b"ab", b"\x02") + b"\x00"), "length is wrong"),  # a byte too many
        (block_of(datum(b"ab", b"")), "length is wrong"),  # the int is missing
        (block_of(b"\x04\x02a\x02"), "out of range"),  # union branch 2 of 2
        (block_of(datum(b"\xff\xfe", b"\x02")), "not UTF-8"),
        (block_of(datum(b"a", b"\xff" * 11)), "longer than ten bytes"),
        (block_of(datum(b"a", b"\xff\xff\xff\xff\x7f")), "32-bit range"),
        (block_of(datum(b"a", b"\x02"), count=2), "runs past the content"),
        (block_of(datum(b"a", b"\x02")) + b"\x00", "bytes after the records"),
        (block_of(b"\x02\x7f"), "negative string length"),  # -64
    ],
)
def test_damaged_flat_blocks_raise_corrupt_file_error(content: bytes, message: str) -> None:
    assert flat_plan(SCHEMA) is not None
    with pytest.raises(CorruptFileError, match=message):
        log_blocks.decode_avro_records(content, SCHEMA)


def test_an_intact_hand_made_block_decodes() -> None:
    table = log_blocks.decode_avro_records(block_of(datum(b"ab", b"\x03"), b"\x00\x04"), SCHEMA)
    assert table.to_pylist() == [{"k": "ab", "n": -2}, {"k": None, "n": 2}]
