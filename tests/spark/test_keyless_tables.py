"""Keyless tables (issue 30): Hudi 0.14+'s auto-generated record keys.

A table made without a record key (``Table.create(record_key=None)``, SQL ``CREATE TABLE``
without ``primaryKey``, ``hudilite.save`` without ``hoodie.datasource.write.recordkey.field``)
is append-only: each insert gives its records Hudi's keys ``<instant>_<spark partition
id>_<row id>`` (``HoodieRecord.generateSequenceId``), on the driver-side small write and on
the Spark write (JVM-expression and Arrow keying alike). Keys are unique across writes and
tasks, clustering keeps them, UPDATE and DELETE find rows by them, hudi-rs reads the rows,
and an upsert of new rows is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

import hudilite
from hudilite import Table
from hudilite.config import parse_properties
from hudilite.errors import ConfigError
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read, rows

SCHEMA = pa.schema([("msg", pa.string()), ("day", pa.string())])
SPARK_WRITE = {"hoodie.hudilite.write.local.max.rows": "0"}  # never the driver-side write
REFUSED = (
    "table 'logs' has no record key (its keys are generated): upsert is not supported "
    "without the rows' _hoodie_record_key; use insert or bulk_insert"
)


def _keys(path: str) -> dict[str, str]:
    """Each stored row's record key by its message, read by hudi-rs."""
    table = hudi_rs_read(path)
    return dict(zip(table["msg"].to_pylist(), table["_hoodie_record_key"].to_pylist(), strict=True))


def _commit_times(path: str) -> list[str]:
    return sorted(set(hudi_rs_read(path)["_hoodie_commit_time"].to_pylist()))


@pytest.mark.parametrize("native", ["true", "false"])
def test_inserts_get_hudis_generated_keys(spark: Any, tmp_path: Path, native: str) -> None:
    path = str(tmp_path / "logs")
    table = Table.create(spark, path, SCHEMA, record_key=None, partition_by=["day"])
    props = parse_properties((tmp_path / "logs/.hoodie/hoodie.properties").read_text())
    assert "hoodie.table.recordkey.fields" not in props
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"

    # 1. A small insert, keyed in the driver: Spark partition 0, rows 0..2.
    first = pa.Table.from_pylist(
        [{"msg": "a", "day": "d1"}, {"msg": "b", "day": "d2"}, {"msg": "c", "day": "d1"}], SCHEMA
    )
    table.write(first, "insert")
    (t1,) = _commit_times(path)
    assert _keys(path) == {"a": f"{t1}_0_0", "b": f"{t1}_0_1", "c": f"{t1}_0_2"}

    # 2. A bulk insert through Spark's tasks: two input partitions of two rows each.
    data = [("d", "d1"), ("e", "d2"), ("f", "d1"), ("g", "d2")]
    frame = spark.sparkContext.parallelize(data, 2).toDF(["msg", "day"])
    opts = {**SPARK_WRITE, "hudilite.keygen.native": native}
    table.write(frame, "bulk_insert", options=opts)
    # 3. An insert through Spark's tasks (it packs records into the small files).
    frame = spark.sparkContext.parallelize([("h", "d1"), ("i", "d2")], 2).toDF(["msg", "day"])
    table.write(frame, "insert", options=opts)
    _, t2, t3 = _commit_times(path)
    assert _keys(path) == {
        "a": f"{t1}_0_0", "b": f"{t1}_0_1", "c": f"{t1}_0_2",
        "d": f"{t2}_0_0", "e": f"{t2}_0_1", "f": f"{t2}_1_0", "g": f"{t2}_1_1",
        "h": f"{t3}_0_0", "i": f"{t3}_1_0",
    }  # fmt: skip
    stored = hudi_rs_read(path)
    assert rows(stored, ["msg", "day", "_hoodie_partition_path"]) == [
        (m, d, f"day={d}") for m, d in sorted([("a", "d1"), ("b", "d2"), ("c", "d1"), *data,
                                              ("h", "d1"), ("i", "d2")])
    ]  # fmt: skip
    assert rows(table.read().toArrow(), ["msg", "_hoodie_record_key"]) == rows(
        stored, ["msg", "_hoodie_record_key"]
    )

    # Clustering rewrites the rows into new file groups and keeps their keys.
    before = _keys(path)
    (result,) = table.cluster()
    assert _keys(path) == before
    assert result.instant_time > t3
    assert rows(hudi_rs_read(path), ["msg", "day"]) == rows(stored, ["msg", "day"])

    # An upsert has no key to match by: refused by name, nothing written.
    with pytest.raises(ConfigError) as info:
        table.write(first, "upsert")
    assert str(info.value) == REFUSED
    assert len(table.timeline()) == 4


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_sql_create_and_insert_into_a_keyless_table(
    session: Any, tmp_path: Path, kind: str
) -> None:
    session.sql(f"CREATE TABLE logs (msg STRING, n INT) USING hudi TBLPROPERTIES (type = '{kind}')")
    session.sql("INSERT INTO logs VALUES ('a', 1), ('b', 2)")
    session.sql("INSERT INTO logs VALUES ('a', 1)")  # no key: an insert, the row twice
    got = [tuple(r) for r in session.sql(
        "SELECT _hoodie_commit_time, _hoodie_record_key, msg, n FROM logs"
    ).collect()]  # fmt: skip
    t1, t2 = sorted({r[0] for r in got})
    assert sorted(got) == [
        (t1, f"{t1}_0_0", "a", 1),
        (t1, f"{t1}_0_1", "b", 2),
        (t2, f"{t2}_0_0", "a", 1),
    ]
    where = tmp_path / "wh/default.db/logs"
    props = parse_properties((where / ".hoodie/hoodie.properties").read_text())
    assert "hoodie.table.recordkey.fields" not in props
    assert rows(hudi_rs_read(str(where)), ["_hoodie_record_key", "msg", "n"]) == sorted(
        [r[1:] for r in got], key=repr
    )
    create = session.sql("SHOW CREATE TABLE logs").collect()[0][0]
    assert "primaryKey" not in create

    # UPDATE and DELETE find the rows by their stored keys, which stay as they were.
    session.sql("UPDATE logs SET n = 10 WHERE msg = 'b'")
    session.sql(f"DELETE FROM logs WHERE msg = 'a' AND _hoodie_commit_time = '{t2}'")
    expected = [(f"{t1}_0_0", "a", 1), (f"{t1}_0_1", "b", 10)]
    got = [tuple(r) for r in session.sql(
        "SELECT _hoodie_record_key, msg, n FROM logs ORDER BY msg"
    ).collect()]  # fmt: skip
    assert got == expected
    assert rows(hudi_rs_read(str(where)), ["_hoodie_record_key", "msg", "n"]) == expected
    if kind == "mor":  # the update went to a log file: compaction merges it, keys kept
        (done,) = session.table(TableName(None, "logs")).compact()
        assert done.instant_time > t2
        assert rows(hudi_rs_read(str(where)), ["_hoodie_record_key", "msg", "n"]) == expected
    session.sql("SET hoodie.datasource.write.operation = upsert")
    with pytest.raises(Exception) as info:
        session.sql("INSERT INTO logs VALUES ('c', 3)")
    assert str(info.value).splitlines()[0].endswith(REFUSED)


def test_save_without_a_record_key_appends(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "logs")
    options = {"hoodie.table.name": "logs", "hoodie.datasource.write.partitionpath.field": "day"}
    frame = spark.createDataFrame([("a", "d1"), ("b", "d2")], "msg string, day string")
    hudilite.save(frame.coalesce(1), path, options=options, mode="append")
    hudilite.save(frame.coalesce(1), path, options=options, mode="append")  # Hudi: bulk insert
    t1, t2 = _commit_times(path)
    got = rows(hudi_rs_read(path), ["_hoodie_record_key", "msg", "day"])
    assert got == [
        (f"{t1}_0_0", "a", "d1"), (f"{t1}_0_1", "b", "d2"),
        (f"{t2}_0_0", "a", "d1"), (f"{t2}_0_1", "b", "d2"),
    ]  # fmt: skip
    for t in (t1, t2):
        commit = json.loads((tmp_path / f"logs/.hoodie/{t}.commit").read_text())
        assert commit["operationType"] == "BULK_INSERT"
    # Rows read back hold their keys: the default upsert updates them in place.
    back = Table.load(spark, path).read().where("msg = 'a'").withColumn("msg", F.lit("A"))
    hudilite.save(back, path, options=options, mode="append")
    t3 = _commit_times(path)[-1]
    got = rows(hudi_rs_read(path), ["_hoodie_record_key", "msg", "_hoodie_commit_time"])
    assert got == [
        (f"{t1}_0_0", "A", t3), (f"{t1}_0_1", "b", t1),
        (f"{t2}_0_0", "A", t3), (f"{t2}_0_1", "b", t2),
    ]  # fmt: skip
    with pytest.raises(ConfigError) as info:
        hudilite.save(
            frame,
            path,
            options={**options, "hoodie.datasource.write.operation": "upsert"},
            mode="append",
        )
    assert str(info.value) == REFUSED
