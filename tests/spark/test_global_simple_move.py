"""GLOBAL_SIMPLE with ``hoodie.simple.index.update.partition.path``: a key whose partition
value changes, written as a user writes it (issue 25, point 6).

The move failed in the JVM (``IllegalStateException: Value at index is null``) whenever the
batch's Spark schema called a column non-null (literals, ``SELECT ... AS``, SQL sources):
the delete record routed to the old partition carries no ordering value, and the moved
records' output schema kept Spark's non-null flags. Here the batch comes both as an Arrow
table (every column nullable) and as a Spark DataFrame of literals (non-null columns), with
the driver-side write allowed (the default) and turned off (a global index always runs in
Spark tasks, both ways agree).

Hudi's rules (``HoodieIndexUtils.tagGlobalLocationBackToRecords`` /
``mergeForPartitionUpdatesIfNeeded``):

* ``update.partition.path=true``: the stored record is merged with the incoming one; when
  the merged record names another partition it is inserted there and the old location gets
  a delete, so the key is in the new partition only. When the incoming record is older by
  the ordering field (event-time ordering) the merge keeps the stored record, which stays
  where it is, unchanged; under commit-time ordering the incoming record always wins.
* ``update.partition.path=false``: the incoming record updates the stored one where it is
  (``_hoodie_partition_path`` the old partition, data columns the incoming ones).

Every case checks the exact rows hudilite reads and hudi-rs reads.
"""

from __future__ import annotations

from typing import Any

import pytest

import hudilite
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import TRIPS

DATA = TRIPS.columns
WITH_PATH = [*DATA, "_hoodie_partition_path"]


def _table(spark: Any, path: str, table_type: str, **options: str) -> hudilite.Table:
    return TRIPS.create(
        spark,
        path,
        table_type=table_type,
        options={"hoodie.index.type": "GLOBAL_SIMPLE", **options},
    )


def _batch(spark: Any, source: str, *recs: tuple[str, int, float, str]) -> Any:
    """The records as an Arrow table, or as a Spark DataFrame of literals (non-null columns)."""
    if source == "arrow":
        return TRIPS.batch(*recs)
    selects = [
        f"SELECT '{k}' AS uuid, CAST({ts} AS BIGINT) AS ts, CAST({fare} AS DOUBLE) AS fare, "
        f"'{city}' AS city"
        for k, ts, fare, city in recs
    ]
    df = spark.sql(" UNION ALL ".join(selects))
    assert not any(f.nullable for f in df.schema.fields)  # what made the move fail
    return df


@pytest.mark.parametrize(
    ("table_type", "source", "local_rows"),
    # A global index never takes the driver-side path (asserted below), so the row limit
    # is varied once; the non-null Spark schema made the move fail, MOR kept a dead copy.
    [
        ("cow", "arrow", "100000"),
        ("mor", "spark-literals", "0"),
    ],
)
def test_a_moved_key_lives_in_its_new_partition_only(
    spark: Any, tmp_path: Any, table_type: str, source: str, local_rows: str
) -> None:
    t = _table(
        spark,
        str(tmp_path / "t"),
        table_type,
        **{
            "hoodie.simple.index.update.partition.path": "true",
            "hoodie.hudilite.write.local.max.rows": local_rows,
        },
    )

    def check(*expected: tuple[Any, ...]) -> None:
        assert spark_rows(t.read(), WITH_PATH) == sorted(expected)
        assert rows(hudi_rs_read(t.path), WITH_PATH) == sorted(expected)

    b, c = ("b", 2, 20.0, "sf", "city=sf"), ("c", 1, 3.0, "la", "city=la")
    d = ("d", 2, 4.0, "la", "city=la")
    t.write(_batch(spark, source, ("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 1, 3.0, "la")))
    # a moves sf -> nyc, b is updated in place, d is new.
    r = t.write(
        _batch(spark, source, ("a", 2, 10.0, "nyc"), ("b", 2, 20.0, "sf"), ("d", 2, 4.0, "la")),
        operation="upsert",
    )
    assert r.extra["driver_side"] is False  # a global index always runs in Spark tasks
    assert r.extra["index"]["type"] == "GLOBAL_SIMPLE"
    # a: inserted in nyc and deleted in sf; b: updated; d: inserted.
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (2, 1, 1)
    check(("a", 2, 10.0, "nyc", "city=nyc"), b, c, d)
    # Updated where it now lives (a merge-on-read sf base file still holds the old copy).
    r = t.write(_batch(spark, source, ("a", 3, 11.0, "nyc")), operation="upsert")
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (0, 1, 0)
    check(("a", 3, 11.0, "nyc", "city=nyc"), b, c, d)
    # Moved on, then back to the partition it began in.
    r = t.write(_batch(spark, source, ("a", 4, 12.0, "la")), operation="upsert")
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (1, 0, 1)
    check(("a", 4, 12.0, "la", "city=la"), b, c, d)
    r = t.write(_batch(spark, source, ("a", 5, 13.0, "sf")), operation="upsert")
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (1, 0, 1)
    check(("a", 5, 13.0, "sf", "city=sf"), b, c, d)
    # A delete naming another partition deletes the live copy.
    t.write(_batch(spark, source, ("a", 6, 0.0, "nyc")), operation="delete")
    check(b, c, d)


@pytest.mark.parametrize(("table_type", "source"), [("cow", "arrow"), ("mor", "spark-literals")])
def test_without_partition_update_the_key_stays_in_its_old_partition(
    spark: Any, tmp_path: Any, table_type: str, source: str
) -> None:
    t = _table(
        spark,
        str(tmp_path / "t"),
        table_type,
        **{"hoodie.simple.index.update.partition.path": "false"},
    )
    t.write(_batch(spark, source, ("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf")))
    r = t.write(_batch(spark, source, ("a", 2, 10.0, "nyc")), operation="upsert")
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (0, 1, 0)
    # Updated where it is: the old partition path, the incoming data columns (city too).
    expected = [("a", 2, 10.0, "nyc", "city=sf"), ("b", 1, 2.0, "sf", "city=sf")]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected
    assert not list((tmp_path / "t" / "city=nyc").glob("*.parquet"))
    assert not list((tmp_path / "t" / "city=nyc").glob(".*.log.*"))


_PAYLOAD = "hoodie.datasource.write.payload.class"
_EVENT_TIME = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
_COMMIT_TIME = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


@pytest.mark.parametrize(
    ("table_type", "version", "merge", "moves"),
    [
        # Version 6: the payload class merges (Hudi 0.x).
        ("cow", 6, {_PAYLOAD: _COMMIT_TIME}, True),
        ("mor", 6, {_PAYLOAD: _COMMIT_TIME}, True),
        ("mor", 6, {_PAYLOAD: _EVENT_TIME}, False),
        # Version 8: the merge mode (Hudi 1.x), event-time ordering with an ordering field.
        ("cow", 8, {}, False),
        ("mor", 8, {}, False),
    ],
)
def test_an_older_incoming_record_moves_only_when_it_wins_the_merge(
    spark: Any, tmp_path: Any, table_type: str, version: int, merge: dict[str, str], moves: bool
) -> None:
    t = TRIPS.create(
        spark,
        str(tmp_path / "t"),
        table_type=table_type,
        table_version=version,
        options={"hoodie.index.type": "GLOBAL_SIMPLE", **merge},
    )
    t.write(_batch(spark, "spark-literals", ("a", 5, 1.0, "sf"), ("b", 5, 2.0, "sf")))
    # a: older than the stored record, to nyc; b: newer, to la (moves either way).
    t.write(
        _batch(spark, "spark-literals", ("a", 1, 9.0, "nyc"), ("b", 7, 8.0, "la")),
        operation="upsert",
    )
    # Event-time ordering keeps the stored a (ts 5) where it is, unchanged; commit-time
    # ordering lets the incoming record win, so it moves.
    a = ("a", 1, 9.0, "nyc", "city=nyc") if moves else ("a", 5, 1.0, "sf", "city=sf")
    expected = [a, ("b", 7, 8.0, "la", "city=la")]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_sql_moves_a_key_with_merge_into_and_upserting_insert_into(
    session: Any, table_type: str
) -> None:
    session.sql(
        "CREATE TABLE trips (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        "PARTITIONED BY (city) TBLPROPERTIES (type = '" + table_type + "', primaryKey = 'uuid', "
        "preCombineField = 'ts', 'hoodie.index.type' = 'GLOBAL_SIMPLE', "
        "'hoodie.simple.index.update.partition.path' = 'true')"
    )
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'sf')")
    session.sql(
        "MERGE INTO trips t USING (SELECT 'a' AS uuid, 2L AS ts, 10.0D AS fare, 'nyc' AS city) s "
        "ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    # Explicit upsert: independent of what INSERT INTO defaults to on a keyed table.
    session.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    session.sql("INSERT INTO trips VALUES ('b', 3, 30.0, 'la')")
    expected = [("a", 2, 10.0, "nyc", "city=nyc"), ("b", 3, 30.0, "la", "city=la")]
    got = session.sql(
        "SELECT uuid, ts, fare, city, _hoodie_partition_path FROM trips ORDER BY uuid"
    ).collect()
    assert [tuple(r) for r in got] == expected
    path = str(session.entry(TableName(None, "trips")).location)
    assert rows(hudi_rs_read(path), WITH_PATH) == expected


def test_global_bloom_on_merge_on_read_moves_a_key_twice(spark: Any, tmp_path: Any) -> None:
    """GLOBAL_BLOOM shares the routing: the old copy its first move left in a base file
    (deleted by a log) is not taken for the key's location on the second move."""
    t = _table(spark, str(tmp_path / "t"), "mor", **{"hoodie.index.type": "GLOBAL_BLOOM"})
    t.write(_batch(spark, "arrow", ("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf")))
    t.write(_batch(spark, "arrow", ("a", 2, 10.0, "nyc")))
    r = t.write(_batch(spark, "arrow", ("a", 3, 11.0, "la")))
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (1, 0, 1)
    expected = [("a", 3, 11.0, "la", "city=la"), ("b", 1, 2.0, "sf", "city=sf")]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected
