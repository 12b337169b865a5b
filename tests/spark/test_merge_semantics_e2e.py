"""Merge semantics through real writes: partial updates from several sources, sequence groups,
custom delete markers — on COW and MOR, after compaction too."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

import hudilite
from tests.helpers import spark_rows

WIDE = pa.schema(
    [("id", pa.int64()), ("name", pa.string()), ("age", pa.int64()), ("sex", pa.string())]
)
COLS = ["id", "name", "age", "sex"]
PARTIAL_PAYLOAD = "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"
SOURCES = {
    "A": [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}],
    "B": [{"id": 1, "age": 30}, {"id": 3, "age": 7}],
    "C": [{"id": 2, "sex": "m"}, {"id": 1, "sex": "f"}],
}


def left_join() -> list[tuple]:
    ids = sorted({r["id"] for rs in SOURCES.values() for r in rs})
    out = []
    for i in ids:
        row = {"id": i, "name": None, "age": None, "sex": None}
        for rs in SOURCES.values():
            for r in rs:
                if r["id"] == i:
                    row.update(r)
        out.append(tuple(row[c] for c in COLS))
    return out


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@pytest.mark.parametrize("order", list(itertools.permutations("ABC"))[::2])
def test_three_sources_partial_update_equal_their_left_join(spark, tmp_path, table_type, order):
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "wide"),
        WIDE,
        record_key="id",
        table_type=table_type,
        options={
            "hoodie.datasource.write.payload.class": PARTIAL_PAYLOAD,
        },
    )
    for source in order:  # one commit per source, in this arrival order
        t.write(pa.Table.from_pylist(SOURCES[source], WIDE))
    assert spark_rows(t.read(), COLS) == left_join()
    if table_type == "mor":
        t.compact()
        assert spark_rows(t.read(), COLS) == left_join()


def test_sequence_groups_take_each_group_from_its_newest_source(spark, tmp_path):
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("ts_a", pa.int64()),
            ("age", pa.int64()),
            ("ts_b", pa.int64()),
        ]
    )
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "sg"),
        schema,
        record_key="id",
        table_type="mor",
        options={"hoodie.hudilite.sequence.groups": "ts_a:name;ts_b:age"},
    )
    rows_ = [
        {"id": 1, "name": "new", "ts_a": 5},
        {"id": 1, "age": 40, "ts_b": 2},
        {"id": 1, "name": "late-but-old", "ts_a": 3},  # older in its group: ignored
        {"id": 1, "age": 41, "ts_b": 9},
    ]
    for r in rows_:
        t.write(pa.Table.from_pylist([r], schema))
    cols = ["id", "name", "ts_a", "age", "ts_b"]
    assert spark_rows(t.read(), cols) == [(1, "new", 5, 41, 9)]
    t.compact()
    assert spark_rows(t.read(), cols) == [(1, "new", 5, 41, 9)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_custom_delete_field_and_marker(spark, tmp_path, table_type):
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("op", pa.string())])
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "del"),
        schema,
        record_key="id",
        ordering_field="ts",
        table_type=table_type,
        options={"hoodie.payload.delete.field": "op", "hoodie.payload.delete.marker": "DEL"},
    )
    t.write(
        pa.Table.from_pylist(
            [{"id": 1, "ts": 1, "op": "ins"}, {"id": 2, "ts": 1, "op": "ins"}], schema
        )
    )
    r = t.write(
        pa.Table.from_pylist(
            [{"id": 1, "ts": 2, "op": "DEL"}, {"id": 2, "ts": 2, "op": "upd"}], schema
        )
    )
    assert r.num_deletes == 1
    assert spark_rows(t.read(), ["id", "op"]) == [(2, "upd")]
