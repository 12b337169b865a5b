"""Upserts whose input carries ``_hoodie_is_deleted`` although the table does not store it.

As with Hudi's datasource: flagged records delete their key, the rest are upserted, all
in one commit; a delete carries its ordering value, so under event-time ordering a stale
delete (smaller ordering value than the stored record) loses.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows
from tests.tables import TRIPS

SCHEMA = TRIPS.schema
MARKED = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
DATA = TRIPS.columns


def marked(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(MARKED.names, r, strict=True)) for r in recs], MARKED)


@pytest.mark.parametrize(
    ("kind", "version"),
    [("cow", 6), ("cow", 8), ("mor", 6), ("mor", 8)],
    ids=["cow-v6", "cow-v8", "mor-v6", "mor-v8"],
)
def test_upsert_with_delete_marker_column(spark, tmp_path, kind, version):
    t = TRIPS.create(spark, str(tmp_path / "t"), table_type=kind, table_version=version)
    oracle = DictOracle(["uuid"], "ts")
    first = marked(
        ("a", 1, 1.0, "sf", False), ("b", 1, 2.0, "sf", False), ("c", 1, 3.0, "la", False)
    )
    t.write(first)
    oracle.upsert(first.to_pylist())

    second = marked(
        ("a", 3, 9.0, "sf", False),
        ("a", 4, 10.0, "sf", True),  # precombined with the line above: the delete is newer
        ("b", 2, 20.0, "sf", False),  # update
        ("c", 0, 30.0, "la", True),  # a stale delete: the stored c (ts 1) wins
        ("d", 2, 40.0, "la", False),  # insert
        ("e", 2, 50.0, "la", True),  # delete of a key the table does not hold
    )
    r = t.write(second)
    oracle.upsert(second.to_pylist())
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 1, 1)
    assert [i.action for i in t.timeline()] == ["deltacommit" if kind == "mor" else "commit"] * 2
    state = t.state()
    meta = state.timeline.commit_metadata(state.timeline.commits()[-1])
    assert (meta.total_inserts, meta.total_updates, meta.total_deletes) == (1, 1, 1)
    assert meta.operation_type == "UPSERT"
    expected = oracle.rows(DATA)
    assert expected == [("b", 2, 20.0, "sf"), ("c", 1, 3.0, "la"), ("d", 2, 40.0, "la")]
    assert spark_rows(t.read(), DATA) == expected
    assert rows(t.to_arrow(), DATA) == expected
    assert rows(hudi_rs_read(t.path), DATA) == expected
    assert "_hoodie_is_deleted" not in t.read().columns  # the marker is not stored

    # A Spark DataFrame input, the marker as a nullable column (null = not deleted).
    third = [("b", 5, None, "sf", True), ("c", 5, 33.0, "la", None), ("f", 5, 6.0, "sf", None)]
    df = spark.createDataFrame(
        third, "uuid string, ts bigint, fare double, city string, _hoodie_is_deleted boolean"
    )
    r = t.write(df)
    oracle.upsert([dict(zip(MARKED.names, rec, strict=True)) for rec in third])
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 1, 1)
    expected = oracle.rows(DATA)
    assert expected == [("c", 5, 33.0, "la"), ("d", 2, 40.0, "la"), ("f", 5, 6.0, "sf")]
    assert spark_rows(t.read(), DATA) == expected
    assert rows(t.to_arrow(), DATA) == expected
    assert rows(hudi_rs_read(t.path), DATA) == expected
    if kind == "mor":
        t.compact()
        assert rows(hudi_rs_read(t.path, read_optimized=True), DATA) == expected
        assert spark_rows(t.read(), DATA) == expected
