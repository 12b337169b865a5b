"""Composite key values Hudi's key text cannot keep apart are refused in every write path.

Issue 26: ``('x,k2:y', 'z')`` and ``('x', 'y,k2:z')`` both became ``k1:x,k2:y,k2:z``, so
a MERGE of one replaced the other's row and reported an update; NULL and ``'__null__'``,
``''`` and ``'__empty__'`` collided the same way. Each path (the driver-side small write,
the Spark write with native and with Arrow keying, SQL INSERT / UPDATE / MERGE) must refuse
with the one error naming the key fields and the value, before any instant exists, and
leave the rows every reader sees unchanged.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudilite
from hudilite.errors import KeyGenerationError
from hudilite.keygen_ambiguity import ambiguous_value_message
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema([("k1", pa.string()), ("k2", pa.string()), ("v", pa.int64())])
COLS = ["k1", "k2", "v"]
FIELDS = ("k1", "k2")


def data(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(COLS, r, strict=True)) for r in recs], SCHEMA)


def refusal(name: str, value: str, row: int | None) -> str:
    """The exact message: the Arrow key generator names the row, Spark expressions cannot."""
    shown = f"{value!r} in row {row}" if row is not None else f"{value!r}"
    return ambiguous_value_message(name, shown, FIELDS)


def instants(t: hudilite.Table) -> list[tuple]:
    return [(i.requested_time, i.action, i.state) for i in t.timeline()]


# (write options, which row the message names): the driver-side write (keyed by the Arrow
# key generator: the input's row), a Spark write keyed by Spark expressions (no row), and
# one keyed by the Arrow key generator in executors (the row within its Arrow batch, which
# depends on how Spark split the input: "any").
PATHS = {
    "driver": ({}, "input"),
    "spark-native": ({"hoodie.hudilite.write.local.max.rows": "0"}, "none"),
    "spark-arrow": (
        {"hoodie.hudilite.write.local.max.rows": "0", "hudilite.keygen.native": "false"},
        "any",
    ),
}


@pytest.mark.parametrize("path", list(PATHS))
def test_table_writes_refuse_ambiguous_values(spark, tmp_path, path):
    options, row_named = PATHS[path]
    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key=["k1", "k2"], table_type="mor"
    )
    t.write(data(("x", "y,z", 1), ("a", None, 2), ("b", "", 3)))
    before = instants(t)
    stored = [("a", None, 2), ("b", "", 3), ("x", "y,z", 1)]
    cases = [
        # ('x,k2:y', 'z') would have been the key k1:x,k2:y,k2:z of ('x', 'y,k2:z').
        (data(("x,k2:y", "z", 9)), "k1", "x,k2:y"),
        (data(("ok", "q", 9), ("x", "y,k2:z", 9)), "k2", "y,k2:z"),
        (data(("a", "__null__", 9)), "k2", "__null__"),  # would replace ('a', NULL)
        (data(("b", "__empty__", 9)), "k2", "__empty__"),  # would replace ('b', '')
    ]
    # (Keying does not depend on the table type: the SQL test below runs both.)
    operations = ["upsert", "insert", "delete", "upsert"]
    for (batch, name, value), operation in zip(cases, operations, strict=True):
        row = batch.column(name).to_pylist().index(value) if row_named == "input" else None
        with pytest.raises(KeyGenerationError) as err:
            t.write(spark.createDataFrame(batch.to_pandas()), operation, options=options)
        got = str(err.value)
        if row_named == "any":
            got = re.sub(r"(?<=') in row \d+(?=,)", "", got, count=1)
        assert got == refusal(name, value, row), (operation, got)
    assert instants(t) == before  # refused before any instant (nothing to roll back)
    assert spark_rows(t.read(), COLS) == stored
    assert rows(hudi_rs_read(t.path), COLS) == stored


def test_bulk_insert_refuses_in_its_plan_job(spark, tmp_path):
    t = hudilite.Table.create(spark, str(tmp_path / "t"), SCHEMA, record_key=["k1", "k2"])
    path = str(tmp_path / "in.parquet")
    pq.write_table(data(("a", "b", 1), ("c", "__empty__", 2)), path)
    with pytest.raises(KeyGenerationError) as err:
        t.write(spark.read.parquet(path), "bulk_insert")
    assert str(err.value) == refusal("k2", "__empty__", None)
    assert instants(t) == []


def sql_rows(session: Any) -> list[tuple]:
    return [tuple(r) for r in session.sql("SELECT k1, k2, v FROM t ORDER BY k1, v").collect()]


def sql_instants(session: Any) -> tuple[list[str], str]:
    location = session.entry(TableName(None, "t")).location
    return sorted(os.listdir(os.path.join(location, ".hoodie"))), location


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_sql_insert_update_merge_refuse_ambiguous_values(session, kind):
    session.sql(
        "CREATE TABLE t (k1 STRING, k2 STRING, v BIGINT) USING hudi "
        f"TBLPROPERTIES ('primaryKey'='k1,k2', 'type'='{kind}')"
    )
    session.sql("INSERT INTO t VALUES ('x', 'y', 1), ('a', NULL, 2), ('b', '', 3)")
    stored = [("a", None, 2), ("b", "", 3), ("x", "y", 1)]
    listing, location = sql_instants(session)
    statements = [
        ("INSERT INTO t VALUES ('x,k2:y', 'z', 9)", "k1", "x,k2:y"),
        ("INSERT INTO t SELECT 'a', '__null__', 9", "k2", "__null__"),
        # UPDATE cannot change key fields; a MERGE's source keys are the written keys.
        (
            "MERGE INTO t USING (SELECT 'b' AS k1, '__empty__' AS k2, 9 AS v) s "
            "ON t.k1 = s.k1 AND t.k2 = s.k2 "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            "k2",
            "__empty__",
        ),
        (
            "MERGE INTO t USING (SELECT 'x' AS k1, 'q,k1:r' AS k2, 9 AS v) s "
            "ON t.k1 = s.k1 AND t.k2 = s.k2 WHEN NOT MATCHED THEN INSERT *",
            "k2",
            "q,k1:r",
        ),
    ]
    for statement, name, value in statements:
        with pytest.raises(KeyGenerationError) as err:
            session.sql(statement)
        # Keyed in the driver (row 0 named) or by Spark expressions (no row number).
        assert str(err.value) in (refusal(name, value, 0), refusal(name, value, None))
    assert sql_instants(session) == (listing, location)
    assert sql_rows(session) == stored
    assert rows(hudi_rs_read(location), COLS) == stored
    # An UPDATE that keeps the keys still works on the rows whose parts are null and empty.
    session.sql("UPDATE t SET v = v + 10 WHERE k1 IN ('a', 'b')")
    updated = [("a", None, 12), ("b", "", 13), ("x", "y", 1)]
    assert sql_rows(session) == updated
    assert rows(hudi_rs_read(location), COLS) == updated
