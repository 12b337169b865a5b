"""Merge semantics through real writes: partial updates from several sources, sequence groups,
custom delete markers — on COW and MOR, after compaction too."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

import hudilite
from tests.helpers import hudi_rs_read, rows, spark_rows

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


EVENT_PARTIAL_PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
PERSON = pa.schema(
    [("id", pa.int64()), ("ts", pa.int64()), ("name", pa.string()), ("city", pa.string())]
)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_partial_update_late_older_event_same_on_cow_mor_and_after_compaction(
    spark, tmp_path, table_type
):
    """PartialUpdateAvroPayload: the record with the greater ordering value wins and a null
    field takes the other record's value; records apply to the stored row in write order.
    So an older event arriving late only fills the stored row's nulls, and a MOR snapshot
    (base + two log blocks), its compaction and a COW table all give the same row."""
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "p"),
        PERSON,
        record_key="id",
        ordering_field="ts",
        table_type=table_type,
        options={"hoodie.datasource.write.payload.class": EVENT_PARTIAL_PAYLOAD},
    )
    t.write(pa.Table.from_pylist([{"id": 1, "ts": 1, "name": "ann", "city": "oslo"}], PERSON))
    # The newest event, without a name: the stored name stays.
    t.write(pa.Table.from_pylist([{"id": 1, "ts": 3, "name": None, "city": "rome"}], PERSON))
    # An older event arriving late: it loses, and the stored row has no null to fill.
    t.write(
        pa.Table.from_pylist(
            [{"id": 1, "ts": 2, "name": "anna", "city": "paris"}, {"id": 2, "ts": 2}], PERSON
        )
    )
    expected = [(1, 3, "ann", "rome"), (2, 2, None, None)]
    assert spark_rows(t.read(), PERSON.names) == expected
    if table_type == "mor":
        t.compact()
        assert spark_rows(t.read(), PERSON.names) == expected
        assert spark_rows(t.read(query_type="read_optimized"), PERSON.names) == expected


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_empty_payload_upsert_deletes_every_incoming_key(spark, tmp_path, table_type):
    """Hudi's EmptyHoodieRecordPayload as the payload of an upsert: every incoming record
    deletes its key, whatever its ordering value; unknown keys are nothing to delete."""
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "e"),
        PERSON,
        record_key="id",
        ordering_field="ts",
        table_type=table_type,
    )
    t.write(pa.Table.from_pylist([{"id": i, "ts": 5, "name": f"n{i}"} for i in (1, 2, 3)], PERSON))
    r = t.write(
        pa.Table.from_pylist([{"id": 1, "ts": 1, "name": "old"}, {"id": 9, "ts": 9}], PERSON),
        options={
            "hoodie.datasource.write.payload.class": (
                "org.apache.hudi.common.model.EmptyHoodieRecordPayload"
            )
        },
    )
    assert (r.num_deletes, r.num_inserts, r.num_updates) == (1, 0, 0)
    expected = [(2, 5, "n2", None), (3, 5, "n3", None)]
    assert spark_rows(t.read(), PERSON.names) == expected
    assert rows(hudi_rs_read(t.path), PERSON.names) == expected
    # Later upserts use the table's own payload again.
    t.write(pa.Table.from_pylist([{"id": 1, "ts": 7, "name": "back"}], PERSON))
    assert spark_rows(t.read(), ["id", "name"]) == [(1, "back"), (2, "n2"), (3, "n3")]
