"""The partial-update pattern of Hudi's SQL users: several ``INSERT INTO ... SELECT`` that
each fill some columns of a key, merged into one row.

It works because INSERT INTO upserts a table with a record key and an ordering field
(Hudi's ``deduceSparkSqlInsertIntoWriteOperation``) and the table merges partially:
``PartialUpdateAvroPayload`` (v6 tables) or Hudi 1.1's ``hoodie.table.partial.update.mode
= IGNORE_DEFAULTS`` (v9), where a null column of the winning record keeps the other
record's value. The rows are checked through hudilite and, where hudi-rs merges as Hudi
does (copy-on-write files, a compacted merge-on-read table), through hudi-rs.
"""

from __future__ import annotations

from typing import Any

import pytest

from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read

COLS = ["id", "ts", "name", "email", "score", "region"]
PARTIAL_PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"


def create_profiles(session: Any, kind: str, how: str) -> None:
    """``profiles`` with partial updates configured as ``how`` says."""
    if how == "payload":
        merge = f"'hoodie.datasource.write.payload.class' = '{PARTIAL_PAYLOAD}'"
    else:  # Hudi 1.1's table properties on a v9 table
        session.sql("SET hoodie.write.table.version = 9")
        merge = (
            "'hoodie.record.merge.mode' = 'EVENT_TIME_ORDERING', "
            "'hoodie.table.partial.update.mode' = 'IGNORE_DEFAULTS'"
        )
    session.sql(
        "CREATE TABLE profiles (id STRING, ts BIGINT, name STRING, email STRING, score INT, "
        "region STRING) USING hudi PARTITIONED BY (region) TBLPROPERTIES ("
        f"primaryKey = 'id', preCombineField = 'ts', type = '{kind}', {merge})"
    )


def rows(session: Any) -> list[tuple[Any, ...]]:
    sql = f"SELECT {', '.join(COLS)} FROM profiles ORDER BY id"
    return [tuple(r) for r in session.sql(sql).collect()]


def hudi_rs_rows(path: str) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(path)
    return sorted(zip(*(table.column(c).to_pylist() for c in COLS), strict=True))


@pytest.mark.parametrize("how", ["payload", "mode"])
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_inserts_filling_different_columns_merge_into_one_row(
    session: Any, kind: str, how: str
) -> None:
    create_profiles(session, kind, how)
    session.sql(
        "CREATE TEMPORARY VIEW names AS SELECT * FROM VALUES "
        "('u1', 1L, 'Ann', 'eu'), ('u2', 1L, 'Bob', 'us') AS t(id, ts, name, region)"
    )
    session.sql("CREATE TEMPORARY VIEW emails AS SELECT 'u1' AS id, 2L AS ts, 'ann@x' AS email")
    # Each statement fills the key, the ordering field and its own columns (the column
    # list leaves the others null).
    first = session.sql("INSERT INTO profiles (id, ts, name, region) SELECT * FROM names")
    second = session.sql(
        "INSERT INTO profiles (id, ts, email, region) SELECT id, ts, email, 'eu' FROM emails"
    )
    third = session.sql(
        "INSERT INTO profiles (id, ts, score, region) "
        "SELECT 'u1', 3L, 7, 'eu' UNION ALL SELECT 'u2', 2L, 9, 'us'"
    )
    ops = [r.collect()[0].operation for r in (first, second, third)]
    assert ops == ["upsert", "upsert", "upsert"]
    # A late statement with an older ordering value loses, but still fills a column the
    # winner leaves null; its non-null name does not replace the newer one.
    session.sql("INSERT INTO profiles VALUES ('u2', 0, 'Old Bob', 'bob@x', 1, 'us')")
    expected = [
        ("u1", 3, "Ann", "ann@x", 7, "eu"),
        ("u2", 2, "Bob", "bob@x", 9, "us"),
    ]
    assert rows(session) == expected
    path = str(session.entry(TableName(None, "profiles")).location)
    if kind == "mor":
        # hudi-rs merges log records by its own (whole-record) rule: compact first, then
        # it reads the merged base files.
        session.sql("CALL run_compaction(op => 'scheduleAndExecute', table => 'profiles')")
        assert rows(session) == expected
    assert hudi_rs_rows(path) == expected
