"""SQL DML end to end on COW and MOR tables: INSERT [OVERWRITE], UPDATE, DELETE, MERGE INTO.

Every case checks the exact rows our snapshot returns, the metrics row, and (where the
table changed) that hudi-rs reads the same rows.
"""

from __future__ import annotations

from typing import Any

import pytest

import hudilite
from hudilite.errors import ConfigError, SchemaError
from hudilite.sqlext.statements import SqlError, TableName
from tests.helpers import hudi_rs_read

COLS = "uuid, ts, fare, city"

# Statements that change stored rows (overwrite, UPDATE, DELETE, MERGE) run on both table
# types: on MOR they append log blocks that the snapshot and hudi-rs must merge. The
# translation-only cases (column mapping, partition specs, option handling, errors) do
# not depend on the table type and run on COW only; the engine's COW/MOR write paths
# are covered in test_cow_table.py and test_mor_table.py.
COW_ONLY = pytest.mark.parametrize("kind", ["cow"])


@pytest.fixture(params=["cow", "mor"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def create_trips(session: Any, kind: str, name: str = "trips", ordering: bool = True) -> None:
    pre = ", 'preCombineField'='ts'" if ordering else ""
    session.sql(
        f"CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        f"PARTITIONED BY (city) TBLPROPERTIES ('primaryKey'='uuid'{pre}, 'type'='{kind}')"
    )


def rows(session: Any, name: str = "trips") -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(f"SELECT {COLS} FROM {name} ORDER BY uuid, ts").collect()]


def metrics(df: Any) -> tuple[Any, ...]:
    r = df.collect()[0]
    return (
        r.operation,
        r.num_affected_rows,
        r.num_inserted_rows,
        r.num_updated_rows,
        r.num_deleted_rows,
    )


def hudi_rs_rows(session: Any, name: str = "trips") -> list[tuple[Any, ...]]:
    location = session.entry(TableName(None, name)).location
    table = hudi_rs_read(location)
    data = sorted(zip(*(table.column(c).to_pylist() for c in COLS.split(", ")), strict=True))
    return [tuple(r) for r in data]


def timeline_len(session: Any, name: str = "trips") -> int:
    return len(session.table(TableName(None, name)).timeline())


# ------------------------------------------------------------------------------ INSERT


def test_insert_values_upserts_by_primary_key_with_the_upsert_operation(
    session: Any, kind: str
) -> None:
    # INSERT INTO upserts a table with a primary key and an ordering field (Hudi's rule,
    # see test_insert_into.py): it replaces stored records by primary key.
    create_trips(session, kind)
    first = session.sql("INSERT INTO trips VALUES ('a', 1, 9.5, 'sf'), ('b', 1, 3.0, 'ny')")
    assert metrics(first) == ("upsert", 2, 2, 0, 0)
    second = session.sql("INSERT INTO trips VALUES ('a', 2, 10.0, 'sf'), ('c', 1, 1.0, 'la')")
    assert metrics(second) == ("upsert", 2, 1, 1, 0)
    # An older ordering value loses against the stored one (event-time ordering).
    session.sql("INSERT INTO trips VALUES ('a', 0, 99.0, 'sf')")
    expected = [("a", 2, 10.0, "sf"), ("b", 1, 3.0, "ny"), ("c", 1, 1.0, "la")]
    assert rows(session) == expected
    assert hudi_rs_rows(session) == expected


@COW_ONLY
def test_insert_operation_option_keeps_duplicates(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips VALUES ('a', 1, 9.5, 'sf')")
    session.sql("SET hoodie.spark.sql.insert.into.operation=insert")
    result = session.sql("INSERT INTO trips VALUES ('a', 2, 1.0, 'sf')")
    assert metrics(result)[0] == "insert"
    assert rows(session) == [("a", 1, 9.5, "sf"), ("a", 2, 1.0, "sf")]
    session.sql("SET hoodie.spark.sql.insert.into.operation=bulk_insert")
    assert metrics(session.sql("INSERT INTO trips VALUES ('z', 1, 1.0, 'ny')"))[0] == (
        "bulk_insert"
    )
    # SET checks the value with the option's parser: the bad value never reaches a write.
    with pytest.raises(
        ConfigError, match=r"'merge' for option hoodie\.spark\.sql\.insert\.into\.operation"
    ):
        session.sql("SET hoodie.spark.sql.insert.into.operation=merge")


@COW_ONLY
def test_insert_with_column_list_and_select(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips (city, uuid, ts) VALUES ('sf', 'a', 1)")
    session.sql(
        "CREATE TABLE other (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        "TBLPROPERTIES ('primaryKey'='uuid', 'preCombineField'='ts')"
    )
    session.sql("INSERT INTO other SELECT uuid, ts + 1, 5.0, city FROM trips")
    # SELECT * from a Hudi table carries the meta columns: they are dropped, not mapped.
    # (An upsert: the newer 'a' replaces the stored one.)
    session.sql("INSERT INTO trips SELECT * FROM other")
    assert rows(session) == [("a", 2, 5.0, "sf")]
    assert rows(session, "other") == [("a", 2, 5.0, "sf")]


@COW_ONLY
def test_insert_static_and_dynamic_partitions(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips PARTITION (city='sf') VALUES ('a', 1, 1.0)")
    session.sql("INSERT INTO trips PARTITION (city) VALUES ('b', 1, 2.0, 'ny')")
    session.sql("INSERT INTO trips PARTITION (city='la') (ts, uuid) VALUES (3, 'c')")
    assert rows(session) == [("a", 1, 1.0, "sf"), ("b", 1, 2.0, "ny"), ("c", 3, None, "la")]
    assert hudi_rs_rows(session) == rows(session)
    with pytest.raises(SchemaError, match="'fare' is not a partition column"):
        session.sql("INSERT INTO trips PARTITION (fare=1.0) VALUES ('d', 1, 'sf')")


def test_insert_overwrite_table_and_partition(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql(
        "INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'sf'), ('c', 1, 3.0, 'ny')"
    )
    result = session.sql("INSERT OVERWRITE trips PARTITION (city='sf') VALUES ('d', 1, 4.0)")
    assert metrics(result)[0] == "insert_overwrite"
    assert rows(session) == [("c", 1, 3.0, "ny"), ("d", 1, 4.0, "sf")]
    assert hudi_rs_rows(session) == rows(session)
    session.sql("INSERT OVERWRITE TABLE trips VALUES ('e', 1, 5.0, 'la')")
    assert rows(session) == [("e", 1, 5.0, "la")]
    assert hudi_rs_rows(session) == [("e", 1, 5.0, "la")]
    # A static partition is replaced even when the query returns no rows: it ends up empty.
    session.sql("INSERT INTO trips VALUES ('f', 1, 6.0, 'sf')")
    result = session.sql(
        "INSERT OVERWRITE trips PARTITION (city='sf') SELECT uuid, ts, fare FROM trips WHERE false"
    )
    assert metrics(result) == ("insert_overwrite", 0, 0, 0, 0)
    assert rows(session) == [("e", 1, 5.0, "la")]
    assert hudi_rs_rows(session) == [("e", 1, 5.0, "la")]


@COW_ONLY
def test_insert_errors_name_the_problem_and_write_nothing(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    before = timeline_len(session)
    with pytest.raises(
        SchemaError,
        match=r"^INSERT INTO default.trips: the query gives 3 column\(s\) but 4 are expected "
        r"\(uuid, ts, fare, city\)$",
    ):
        session.sql("INSERT INTO trips VALUES ('b', 1, 'sf')")
    with pytest.raises(
        SchemaError,
        match=r"^cannot write to default.trips: column 'ts' is bigint but the query gives "
        r"string$",
    ):
        session.sql("INSERT INTO trips VALUES ('b', 'yesterday', 1.0, 'sf')")
    with pytest.raises(SchemaError, match=r"column 'nope' is not a column of default\.trips"):
        session.sql("INSERT INTO trips (uuid, nope) VALUES ('b', 1)")
    with pytest.raises(SchemaError, match="column 'uuid' needs a value"):
        session.sql("INSERT INTO trips (ts, city) VALUES (1, 'sf')")
    with pytest.raises(hudilite.TableNotFoundError, match=r"table default\.nope not found"):
        session.sql("INSERT INTO nope VALUES (1)")
    assert timeline_len(session) == before
    assert rows(session) == [("a", 1, 1.0, "sf")]


# ------------------------------------------------------------------------------ UPDATE / DELETE


def test_update_sets_expressions_where_condition_holds(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'ny')")
    result = session.sql("UPDATE trips SET fare = fare * 2, ts = ts + 1 WHERE city = 'sf'")
    assert metrics(result) == ("upsert", 1, 0, 1, 0)
    assert rows(session) == [("a", 2, 20.0, "sf"), ("b", 1, 20.0, "ny")]
    session.sql("UPDATE trips SET fare = 0")
    assert rows(session) == [("a", 2, 0.0, "sf"), ("b", 1, 0.0, "ny")]
    assert hudi_rs_rows(session) == rows(session)
    with pytest.raises(SchemaError, match="cannot update key or partition column 'uuid'"):
        session.sql("UPDATE trips SET uuid = 'x'")
    with pytest.raises(SchemaError, match=r"column 'nope' is not a column of default\.trips"):
        session.sql("UPDATE trips SET nope = 1")


def test_delete_where_and_delete_all(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql(
        "INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'ny'), ('c', 1, 3.0, 'sf')"
    )
    result = session.sql("DELETE FROM trips WHERE fare > 1.5 AND city = 'sf'")
    assert metrics(result) == ("delete", 1, 0, 0, 1)
    assert rows(session) == [("a", 1, 1.0, "sf"), ("b", 1, 2.0, "ny")]
    assert hudi_rs_rows(session) == rows(session)
    session.sql("DELETE FROM trips")
    assert rows(session) == []
    assert hudi_rs_rows(session) == []


# ------------------------------------------------------------------------------ MERGE INTO


def test_merge_first_matching_clause_wins(session: Any, kind: str) -> None:
    create_trips(session, kind)
    session.sql(
        "INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'ny'), ('c', 1, 3.0, 'sf')"
    )
    session.spark.createDataFrame(
        [
            ("a", 5, 0.0, "sf"),
            ("b", 5, 50.0, "ny"),
            ("c", 5, 30.0, "sf"),
            ("d", 5, 4.0, "la"),
            ("e", 5, -1.0, "la"),
        ],
        "uuid string, ts bigint, fare double, city string",
    ).createOrReplaceTempView("updates_src")
    try:
        result = session.sql(
            """
            MERGE INTO trips AS t USING updates_src AS s ON t.uuid = s.uuid
            WHEN MATCHED AND s.fare = 0 THEN DELETE
            WHEN MATCHED AND s.city = 'ny' THEN UPDATE SET fare = s.fare
            WHEN MATCHED THEN UPDATE SET *
            WHEN NOT MATCHED AND s.fare < 0 THEN INSERT (uuid, ts, city) VALUES (s.uuid, 0, 'x')
            WHEN NOT MATCHED THEN INSERT *
            """
        )
    finally:
        session.spark.catalog.dropTempView("updates_src")
    assert metrics(result) == ("upsert", 5, 2, 2, 1)
    expected = [
        ("b", 1, 50.0, "ny"),  # partial update: ts keeps its stored value
        ("c", 5, 30.0, "sf"),
        ("d", 5, 4.0, "la"),
        ("e", 0, None, "x"),
    ]
    assert rows(session) == expected
    assert hudi_rs_rows(session) == expected


@COW_ONLY
def test_merge_from_subquery_combines_source_rows_by_ordering_field(
    session: Any, kind: str
) -> None:
    create_trips(session, kind)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql(
        """
        MERGE INTO trips t
        USING (SELECT 'a' AS uuid, 7 AS ts, 70.0 AS fare, 'sf' AS city
               UNION ALL SELECT 'a', 9, 90.0, 'sf'
               UNION ALL SELECT 'a', 8, 80.0, 'sf'
               UNION ALL SELECT 'n', 2, 2.0, 'ny'
               UNION ALL SELECT 'n', 3, 3.0, 'ny') s
        ON t.uuid = s.uuid
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *
        """
    )
    assert rows(session) == [("a", 9, 90.0, "sf"), ("n", 3, 3.0, "ny")]


@COW_ONLY
def test_merge_without_ordering_field_rejects_two_matches(session: Any, kind: str) -> None:
    create_trips(session, kind, ordering=False)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    before = timeline_len(session)
    with pytest.raises(
        SqlError,
        match=r"MERGE INTO default.trips: 2 source rows match the target row with uuid='a'",
    ):
        session.sql(
            "MERGE INTO trips t USING (SELECT 'a' AS uuid, 2.0 AS fare UNION ALL "
            "SELECT 'a', 3.0) s ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET fare = s.fare"
        )
    assert timeline_len(session) == before
    session.sql(
        "MERGE INTO trips t USING (SELECT 'a' AS uuid, 2.0 AS fare) s ON t.uuid = s.uuid "
        "WHEN MATCHED THEN UPDATE SET fare = s.fare"
    )
    assert rows(session) == [("a", 1, 2.0, "sf")]


@COW_ONLY
def test_merge_errors(session: Any, kind: str) -> None:
    create_trips(session, kind)
    with pytest.raises(SqlError, match="the ON condition must equate every primary key column"):
        session.sql(
            "MERGE INTO trips t USING (SELECT 'a' AS k) s ON t.city = s.k WHEN MATCHED THEN DELETE"
        )
    with pytest.raises(SchemaError, match=r"UPDATE SET \* needs source column 'ts'"):
        session.sql(
            "MERGE INTO trips t USING (SELECT 'a' AS uuid) s ON t.uuid = s.uuid "
            "WHEN MATCHED THEN UPDATE SET *"
        )
    with pytest.raises(SchemaError, match="INSERT must give primary key column 'uuid'"):
        session.sql(
            "MERGE INTO trips t USING (SELECT 'a' AS uuid) s ON t.uuid = s.uuid "
            "WHEN NOT MATCHED THEN INSERT (ts) VALUES (1)"
        )
    assert timeline_len(session) == 0
