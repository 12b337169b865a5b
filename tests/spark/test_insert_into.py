"""INSERT INTO as Hudi's Spark SQL runs it (0.14 to 1.x), and the Python API's ``insert``.

Hudi's rule (``ProvidesHoodieConfig``, see ``hudilite.sqlext.insert_rule``; the rule case by
case is ``tests/unit/sqlext/test_insert_rule.py``): on a table with a record key and an ordering
field INSERT INTO **upserts** unless ``hoodie.spark.sql.insert.into.operation`` is set; on
any other table it inserts and keeps duplicate keys. An explicit operation is kept;
``hoodie.datasource.insert.dup.policy`` drops or refuses incoming keys the table holds
when the statement inserts; the deprecated ``hoodie.sql.insert.mode`` applies while the
operation key is unset; ``hoodie.combine.before.insert`` reduces an insert's batch to
one record per key. Every case checks the exact rows (and, where the table changed, that
hudi-rs reads them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.errors import ConfigError, DuplicateKeyError
from hudilite.sqlext import SqlError, SqlWarning
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read
from tests.tables import TRIPS

COLS = "uuid, ts, fare, city"
INSERT_OP = "hoodie.spark.sql.insert.into.operation"


def create_trips(
    session: Any, kind: str = "cow", ordering: str | None = "'preCombineField'"
) -> None:
    """``trips`` keyed by uuid, partitioned by city; ``ordering`` names the ordering
    field's option (None: no ordering field)."""
    order = f", {ordering}='ts'" if ordering else ""
    session.sql(
        "CREATE TABLE trips (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        f"PARTITIONED BY (city) TBLPROPERTIES ('primaryKey'='uuid'{order}, 'type'='{kind}')"
    )


def rows(session: Any) -> list[tuple[Any, ...]]:
    sql = f"SELECT {COLS} FROM trips ORDER BY uuid, ts, fare"
    return [tuple(r) for r in session.sql(sql).collect()]


def hudi_rs_rows(path: str) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(path)
    return sorted(zip(*(table.column(c).to_pylist() for c in COLS.split(", ")), strict=True))


def location(session: Any) -> str:
    return str(session.entry(TableName(None, "trips")).location)


def metrics(df: Any) -> tuple[Any, ...]:
    r = df.collect()[0]
    return (r.operation, r.num_affected_rows, r.num_inserted_rows, r.num_updated_rows)


def instants(session: Any) -> int:
    return len(session.table(TableName(None, "trips")).timeline())


# ------------------------------------------------------------------- the operation Hudi deduces


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_insert_into_a_keyed_table_with_an_ordering_field_upserts(session: Any, kind: str) -> None:
    create_trips(session, kind)
    first = session.sql(
        "INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('a', 2, 2.0, 'sf'), ('b', 1, 3.0, 'ny')"
    )
    # The batch is combined by key first (the greater ordering value wins).
    assert metrics(first) == ("upsert", 2, 2, 0)
    # An older ordering value loses against the stored record; a newer one replaces it.
    # (Whether the losing 'a' counts as updated differs: a merge-on-read log holds it, a
    # copy-on-write rewrite does not; the rows are what matters here.)
    second = session.sql(
        "INSERT INTO trips VALUES ('a', 0, 4.0, 'sf'), ('b', 5, 5.0, 'ny'), ('c', 1, 6.0, 'la')"
    )
    op, _, inserted, _ = metrics(second)
    assert (op, inserted) == ("upsert", 1)
    expected = [("a", 2, 2.0, "sf"), ("b", 5, 5.0, "ny"), ("c", 1, 6.0, "la")]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


@pytest.mark.parametrize(
    ("option", "version"),
    [
        ("'preCombineField'", None),
        ("'hoodie.table.precombine.field'", None),
        ("'hoodie.datasource.write.precombine.field'", None),
        ("'hoodie.table.ordering.fields'", "9"),  # Hudi 1.1's name, v8+ tables
        ("'precombine.field'", None),  # Flink
        ("'write.precombine.field'", None),  # Flink
    ],
)
def test_every_name_of_the_ordering_field_makes_insert_into_upsert(
    session: Any, option: str, version: str | None
) -> None:
    if version:
        session.sql(f"SET hoodie.write.table.version = {version}")
    create_trips(session, ordering=option)
    assert session.table(TableName(None, "trips")).config.ordering_fields == ("ts",)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    result = session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'sf')")
    assert metrics(result) == ("upsert", 1, 0, 1)
    assert rows(session) == [("a", 2, 2.0, "sf")]
    assert hudi_rs_rows(location(session)) == [("a", 2, 2.0, "sf")]


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_insert_into_a_table_without_ordering_field_keeps_duplicates(
    session: Any, kind: str
) -> None:
    create_trips(session, kind, ordering=None)
    first = session.sql(
        "INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('a', 2, 2.0, 'sf'), ('b', 1, 3.0, 'ny')"
    )
    assert metrics(first) == ("insert", 3, 3, 0)
    second = session.sql("INSERT INTO trips VALUES ('a', 0, 4.0, 'sf'), ('c', 1, 5.0, 'la')")
    assert metrics(second) == ("insert", 2, 2, 0)
    expected = [
        ("a", 0, 4.0, "sf"),
        ("a", 1, 1.0, "sf"),
        ("a", 2, 2.0, "sf"),
        ("b", 1, 3.0, "ny"),
        ("c", 1, 5.0, "la"),
    ]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


def test_an_explicit_operation_is_kept(session: Any) -> None:
    create_trips(session)
    session.sql(f"SET {INSERT_OP} = insert")
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    result = session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'sf'), ('b', 1, 3.0, 'ny')")
    assert metrics(result) == ("insert", 2, 2, 0)
    assert rows(session) == [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf"), ("b", 1, 3.0, "ny")]
    session.sql(f"SET {INSERT_OP} = bulk_insert")
    result = session.sql("INSERT INTO trips VALUES ('b', 0, 4.0, 'ny')")
    assert metrics(result)[0] == "bulk_insert"
    assert rows(session)[2:] == [("b", 0, 4.0, "ny"), ("b", 1, 3.0, "ny")]
    # upsert on a table without an ordering field: the later write wins.
    session.sql("DROP TABLE trips")
    create_trips(session, ordering=None)
    session.sql(f"SET {INSERT_OP} = upsert")
    session.sql("INSERT INTO trips VALUES ('a', 5, 1.0, 'sf')")
    assert metrics(session.sql("INSERT INTO trips VALUES ('a', 1, 2.0, 'sf')"))[0] == "upsert"
    expected = [("a", 1, 2.0, "sf")]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


def test_the_write_operation_wins(session: Any) -> None:
    """Hudi reads hoodie.datasource.write.operation before anything else."""
    create_trips(session)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql(f"SET {INSERT_OP} = upsert")
    session.sql("SET hoodie.datasource.write.operation = insert")
    assert metrics(session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'sf')"))[0] == "insert"
    assert rows(session) == [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf")]
    session.sql("SET hoodie.datasource.write.operation = delete")
    with pytest.raises(
        SqlError,
        match=r"hoodie\.datasource\.write\.operation='delete' is not supported for INSERT INTO",
    ):
        session.sql("INSERT INTO trips VALUES ('a', 3, 3.0, 'sf')")
    assert rows(session) == [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf")]


# ----------------------------------------------------------------------------- dup policies


@pytest.mark.parametrize("policy", ["drop", "fail"])
def test_a_dup_policy_alone_does_not_stop_the_upsert(session: Any, policy: str) -> None:
    """The policy does not enter Hudi's deduction and applies to inserts only: the
    statement upserts, and says the policy does nothing."""
    create_trips(session)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql(f"SET hoodie.datasource.insert.dup.policy = {policy}")
    with pytest.warns(SqlWarning) as caught:
        result = session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'sf')")
    assert [str(w.message) for w in caught] == [
        "INSERT INTO default.trips runs as an upsert (the table has a record key and an "
        "ordering field and hoodie.spark.sql.insert.into.operation is not set), so "
        f"hoodie.datasource.insert.dup.policy={policy} does not apply: it applies to inserts "
        "only. SET hoodie.spark.sql.insert.into.operation = insert to apply it"
    ]
    assert metrics(result) == ("upsert", 1, 0, 1)
    assert rows(session) == [("a", 2, 2.0, "sf")]


def test_dup_policy_drop_drops_stored_keys_only(session: Any) -> None:
    create_trips(session, ordering=None)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'ny')")
    session.sql("SET hoodie.datasource.insert.dup.policy = drop")
    # 'a' is stored (dropped, whatever its values); 'b' in another partition is a
    # different record for a partition-scoped index; 'c' twice in the batch is kept.
    result = session.sql(
        "INSERT INTO trips VALUES ('a', 9, 9.0, 'sf'), ('b', 1, 3.0, 'la'), "
        "('c', 1, 4.0, 'sf'), ('c', 2, 5.0, 'sf')"
    )
    assert metrics(result) == ("insert", 3, 3, 0)
    expected = [
        ("a", 1, 1.0, "sf"),
        ("b", 1, 2.0, "ny"),
        ("b", 1, 3.0, "la"),
        ("c", 1, 4.0, "sf"),
        ("c", 2, 5.0, "sf"),
    ]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


def test_dup_policy_with_a_global_index_looks_in_every_partition(session: Any) -> None:
    create_trips(session)
    session.sql("ALTER TABLE trips SET TBLPROPERTIES ('hoodie.index.type' = 'GLOBAL_SIMPLE')")
    session.sql(f"SET {INSERT_OP} = insert")
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql("SET hoodie.datasource.insert.dup.policy = fail")
    with pytest.raises(DuplicateKeyError, match=r"key\(s\) 'a'; nothing was written"):
        session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'ny')")
    session.sql("SET hoodie.datasource.insert.dup.policy = drop")
    session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'ny'), ('b', 1, 3.0, 'ny')")
    assert rows(session) == [("a", 1, 1.0, "sf"), ("b", 1, 3.0, "ny")]


def test_dup_policy_fail_names_the_keys_and_writes_nothing(session: Any) -> None:
    create_trips(session)
    session.sql(f"SET {INSERT_OP} = insert")
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'ny')")
    before = instants(session)
    session.sql("SET hoodie.datasource.insert.dup.policy = fail")
    with pytest.raises(
        DuplicateKeyError,
        match=r"key\(s\) 'a' \(partition 'city=sf'\), 'b' \(partition 'city=ny'\);",
    ) as info:
        session.sql(
            "INSERT INTO trips VALUES ('b', 2, 3.0, 'ny'), ('d', 1, 4.0, 'la'), ('a', 2, 5.0, 'sf')"
        )
    assert "nothing was written" in str(info.value)
    assert instants(session) == before  # no instant at all, not even a rollback
    assert rows(session) == [("a", 1, 1.0, "sf"), ("b", 1, 2.0, "ny")]
    # New keys pass (duplicates inside the batch are not the policy's business).
    session.sql("INSERT INTO trips VALUES ('d', 1, 4.0, 'la'), ('d', 2, 6.0, 'la')")
    assert rows(session)[2:] == [("d", 1, 4.0, "la"), ("d", 2, 6.0, "la")]


def test_dup_policy_drop_sees_the_merge_on_read_snapshot(session: Any) -> None:
    """Keys are looked up in the snapshot: a key deleted in a log is gone, a key only
    in a log is there."""
    create_trips(session, "mor", ordering=None)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'sf')")
    session.sql("DELETE FROM trips WHERE uuid = 'a'")
    session.sql("SET hoodie.datasource.insert.dup.policy = drop")
    session.sql("INSERT INTO trips VALUES ('a', 5, 5.0, 'sf'), ('b', 5, 5.0, 'sf')")
    expected = [("a", 5, 5.0, "sf"), ("b", 1, 2.0, "sf")]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


# ------------------------------------------------------------------ the deprecated insert mode


@pytest.mark.parametrize(
    ("mode", "kind", "ordering", "operation", "expected"),
    [
        # upsert: Hudi upserts a table with an ordering field (the newer 'a' wins) ...
        (
            "upsert",
            "cow",
            "'preCombineField'",
            "upsert",
            [("a", 2, 2.0, "sf"), ("c", 1, 3.0, "sf")],
        ),
        # ... and inserts into one without.
        (
            "upsert",
            "cow",
            None,
            "insert",
            [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf"), ("c", 1, 3.0, "sf")],
        ),
        # non-strict: an insert, duplicates kept.
        (
            "non-strict",
            "cow",
            "'preCombineField'",
            "insert",
            [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf"), ("c", 1, 3.0, "sf")],
        ),
        # strict on merge-on-read is the upsert mode.
        (
            "strict",
            "mor",
            "'preCombineField'",
            "upsert",
            [("a", 2, 2.0, "sf"), ("c", 1, 3.0, "sf")],
        ),
        # strict on copy-on-write: a stored key fails the statement.
        ("strict", "cow", "'preCombineField'", "insert", None),
        ("strict", "cow", None, "insert", None),
    ],
)
def test_deprecated_insert_mode(
    session: Any,
    mode: str,
    kind: str,
    ordering: str | None,
    operation: str,
    expected: list[tuple[Any, ...]] | None,
) -> None:
    create_trips(session, kind, ordering)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql(f"SET hoodie.sql.insert.mode = {mode}")
    insert = "INSERT INTO trips VALUES ('a', 2, 2.0, 'sf'), ('c', 1, 3.0, 'sf')"
    if expected is None:
        with pytest.raises(DuplicateKeyError, match=r"key\(s\) 'a' \(partition 'city=sf'\);"):
            session.sql(insert)
        assert rows(session) == [("a", 1, 1.0, "sf")]
        # New keys pass; with an ordering field the batch is combined as the upsert's is.
        result = session.sql("INSERT INTO trips VALUES ('c', 1, 3.0, 'sf'), ('c', 2, 4.0, 'sf')")
        assert metrics(result)[0] == operation
        tail = [("c", 2, 4.0, "sf")] if ordering else [("c", 1, 3.0, "sf"), ("c", 2, 4.0, "sf")]
        assert rows(session) == [("a", 1, 1.0, "sf"), *tail]
        assert hudi_rs_rows(location(session)) == rows(session)
        return
    assert metrics(session.sql(insert))[0] == operation
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


def test_insert_into_operation_beats_the_deprecated_insert_mode(session: Any) -> None:
    """Hudi honours hoodie.sql.insert.mode only when the operation key is not set."""
    create_trips(session)
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql("SET hoodie.sql.insert.mode = upsert")
    session.sql(f"SET {INSERT_OP} = insert")
    assert metrics(session.sql("INSERT INTO trips VALUES ('a', 2, 2.0, 'sf')"))[0] == "insert"
    assert rows(session) == [("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf")]
    with pytest.raises(ConfigError, match=r"'sloppy' for option hoodie\.sql\.insert\.mode"):
        session.sql("SET hoodie.sql.insert.mode = sloppy")


def test_combine_before_insert_reduces_the_batch(session: Any) -> None:
    create_trips(session)
    session.sql(f"SET {INSERT_OP} = insert")
    session.sql("INSERT INTO trips VALUES ('a', 1, 1.0, 'sf')")
    session.sql("SET hoodie.combine.before.insert = true")
    # The batch keeps one record per key (the greater ordering value wins); the stored
    # 'a' is not merged with -- that stays an insert.
    result = session.sql(
        "INSERT INTO trips VALUES ('a', 3, 3.0, 'sf'), ('a', 5, 5.0, 'sf'), "
        "('a', 4, 4.0, 'sf'), ('b', 1, 6.0, 'ny'), ('b', 1, 7.0, 'ny')"
    )
    assert metrics(result) == ("insert", 2, 2, 0)
    # A tie on the ordering value goes to the later record.
    expected = [("a", 1, 1.0, "sf"), ("a", 5, 5.0, "sf"), ("b", 1, 7.0, "ny")]
    assert rows(session) == expected
    assert hudi_rs_rows(location(session)) == expected


# ------------------------------------------------------------------------------ Python API


def test_python_insert_matches_sql(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    t = TRIPS.create(spark, path)
    batch = TRIPS.batch

    def data() -> list[tuple[Any, ...]]:
        got = t.to_arrow(columns=TRIPS.columns)
        return sorted(zip(*(got.column(c).to_pylist() for c in TRIPS.columns), strict=True))

    r = t.write(batch(("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf")), operation="insert")
    assert (r.num_inserts, r.num_updates) == (2, 0)
    t.write(batch(("a", 0, 3.0, "sf")), operation="insert")
    assert data() == [("a", 0, 3.0, "sf"), ("a", 1, 1.0, "sf"), ("a", 2, 2.0, "sf")]

    drop = {"hoodie.datasource.insert.dup.policy": "drop"}
    r = t.write(batch(("a", 9, 9.0, "sf"), ("b", 1, 4.0, "sf")), operation="insert", options=drop)
    assert r.num_inserts == 1
    with pytest.raises(DuplicateKeyError, match=r"'b' \(partition '(city=)?sf'\)"):
        t.write(
            batch(("b", 2, 5.0, "sf")),
            operation="insert",
            options={"hoodie.datasource.insert.dup.policy": "fail"},
        )
    combine = {"hoodie.combine.before.insert": "true"}
    t.write(batch(("c", 2, 6.0, "ny"), ("c", 1, 7.0, "ny")), operation="insert", options=combine)
    expected = [
        ("a", 0, 3.0, "sf"),
        ("a", 1, 1.0, "sf"),
        ("a", 2, 2.0, "sf"),
        ("b", 1, 4.0, "sf"),
        ("c", 2, 6.0, "ny"),
    ]
    assert data() == expected
    assert hudi_rs_rows(path) == expected
    # Hudi cannot check or drop duplicates in a bulk insert; neither option is ignored.
    with pytest.raises(ConfigError, match="does not apply to bulk_insert"):
        t.write(batch(("d", 1, 1.0, "sf")), operation="bulk_insert", options=drop)
