"""The timestamp key generator on tables of the shape Hudi writes (issue 25.4).

* Hudi 1.1 (table version 9): ``hoodie.table.keygenerator.type=TIMESTAMP``,
  ``hoodie.table.partition.fields=<the long column>`` and ``hoodie.keygen.timebased.*`` in
  ``hoodie.properties``; the column is stored as a number (``EPOCHMILLISECONDS``,
  ``UNIX_TIMESTAMP``) and partitioned as a formatted date (``yyyy/MM/dd/HH``, not hive
  style). Reads take the column's values from the files, never from the path (Hudi's
  ``hoodie.datasource.read.extract.partition.values.from.path=false``), and a filter on it
  compares numbers.
* ``DATE_STRING`` input formats with offsets (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``).
* Hudi 0.x tables whose ``hoodie.properties`` lacks ``timebased.timestamp.type`` (Hudi kept
  it in the catalog): the write names the option to pass, and with it the write works.

No fixture of ../shared uses this key generator: tables are written by hudilite at version
8 and their ``hoodie.properties`` rewritten as Hudi 1.1 (or 0.x) leaves it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import ConfigError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("event", pa.int64()), ("v", pa.string())]
)
COLS = ["id", "ts", "event", "v"]
MS = {"EPOCHMILLISECONDS": 1, "UNIX_TIMESTAMP": 1000}
H09, H10 = 1705312200, 1705316400  # 2024-01-15 09:50 and 11:00 UTC, in seconds
H_NEXT_DAY = 1705398600  # 2024-01-16 09:50 UTC


def batch(*recs: tuple, schema: pa.Schema = SCHEMA) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in recs], schema)


def as_hudi_1_1(path: str) -> None:
    """``hoodie.properties`` as Hudi 1.1 writes it for a new table (version 9)."""
    gw = FileSystemGateway(path)
    props = properties_file.load(gw)
    props["hoodie.table.version"] = props["hoodie.table.initial.version"] = "9"
    props.pop("hoodie.record.merge.strategy.id", None)
    props.pop("hoodie.compaction.payload.class", None)
    props["hoodie.table.ordering.fields"] = props.pop("hoodie.table.precombine.field")
    props["hoodie.table.format"] = "native"
    properties_file.store(gw, props)


@pytest.mark.parametrize(
    ("table_type", "ts_type"), [("cow", "EPOCHMILLISECONDS"), ("mor", "UNIX_TIMESTAMP")]
)
def test_hudi_1_1_timestamp_table_reads_writes_and_prunes(spark, tmp_path, table_type, ts_type):
    unit = MS[ts_type]

    def ev(seconds: int) -> int:
        return seconds * 1000 // unit

    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["event"],
        table_type=table_type,
        table_version=8,
        options={
            "hoodie.table.keygenerator.type": "TIMESTAMP",
            "hoodie.keygen.timebased.timestamp.type": ts_type,
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
    )
    t.write(batch(("a", 1, ev(H09), "a1"), ("b", 1, ev(H10), "b1"), ("c", 1, ev(H_NEXT_DAY), "c1")))
    as_hudi_1_1(t.path)
    t = hudilite.Table.load(spark, t.path)
    props = t.properties()
    assert props["hoodie.table.version"] == "9"
    assert props["hoodie.table.keygenerator.type"] == "TIMESTAMP"
    assert props["hoodie.table.partition.fields"] == "event"
    assert props["hoodie.keygen.timebased.timestamp.type"] == ts_type

    # An upsert updating a row in its hour and adding a key, then a delete.
    t.write(batch(("a", 2, ev(H09) + ev(60), "a2"), ("d", 2, ev(H10), "d2")))
    t.write(batch(("b", 3, ev(H10), None)), operation="delete")
    expected = [("a", 2, ev(H09) + ev(60), "a2"), ("c", 1, ev(H_NEXT_DAY), "c1"),
                ("d", 2, ev(H10), "d2")]  # fmt: skip
    paths = {"a": "2024/01/15/09", "c": "2024/01/16/09", "d": "2024/01/15/11"}
    full = [(*r, paths[r[0]]) for r in expected]
    cols = [*COLS, "_hoodie_partition_path"]
    assert spark_rows(t.read(), cols) == full
    assert rows(t.to_arrow(), cols) == full
    assert rows(hudi_rs_read(t.path), COLS) == expected
    # The column's type is the stored number's, in every reader.
    assert t.read().schema["event"].dataType.simpleString() == "bigint"
    assert t.to_arrow().schema.field("event").type == pa.int64()

    # Filters on the partition column compare numbers, not the path's text.
    assert spark_rows(t.read(where=f"event > {ev(H09) + ev(60)}"), COLS) == expected[1:]
    assert spark_rows(t.read(where=f"event = {ev(H10)}"), COLS) == expected[2:]
    via_source = spark.read.format("hudilite").load(t.path).filter(f"event = {ev(H10)}")
    assert spark_rows(via_source, COLS) == expected[2:]
    session = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    session.sql(f"CREATE TABLE ts9 USING hudi LOCATION '{t.path}'")
    got = session.sql(f"SELECT id, event FROM ts9 WHERE event >= {ev(H10)} ORDER BY id")
    assert [tuple(r) for r in got.collect()] == [("c", ev(H_NEXT_DAY)), ("d", ev(H10))]
    got = session.sql(f"SELECT id FROM ts9 WHERE event < {ev(H10)} ORDER BY id").collect()
    assert [tuple(r) for r in got] == [("a",)]


STR_SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("at", pa.string())])


def test_date_string_with_an_offset_pattern(spark, tmp_path):
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        STR_SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["at"],
        table_version=8,
        options={
            "hoodie.table.keygenerator.type": "TIMESTAMP",
            "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
            "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
    )
    # 23:30 at -02:00 is 01:30 UTC the next day; Z is UTC.
    recs = [("a", 1, "2024-01-15T23:30:00.000-0200"), ("b", 1, "2024-01-15T09:50:00.123Z")]
    t.write(batch(*recs, schema=STR_SCHEMA))
    cols = ["id", "ts", "at", "_hoodie_partition_path"]
    expected = [(*recs[0], "2024/01/16/01"), (*recs[1], "2024/01/15/09")]
    assert spark_rows(t.read(), cols) == expected
    assert rows(hudi_rs_read(t.path), cols) == expected


def test_hudi_0x_table_without_timestamp_type_names_the_option(spark, tmp_path, session):
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["event"],
        table_version=6,
        options={
            "hoodie.table.keygenerator.type": "TIMESTAMP",
            "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
    )
    t.write(batch(("a", 1, H09, "a1")))
    gw = FileSystemGateway(t.path)
    props = properties_file.load(gw)
    assert props.pop("hoodie.keygen.timebased.timestamp.type") == "UNIX_TIMESTAMP"
    properties_file.store(gw, props)  # as Hudi 0.x left it: the type only in the catalog
    t = hudilite.Table.load(spark, t.path)
    assert spark_rows(t.read(), COLS) == [("a", 1, H09, "a1")]  # reads need no key generator
    timeline = [i.file_name(1) for i in t.timeline()]
    message = (
        r"the timestamp key generator needs 'hoodie.keygen.timebased.timestamp.type' .*"
        r"pass it as a write option"
    )
    with pytest.raises(ConfigError, match=message):
        t.write(batch(("a", 2, H09, "a2"), ("b", 2, H_NEXT_DAY, "b2")))
    assert [i.file_name(1) for i in t.timeline()] == timeline  # nothing written

    option = {"hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP"}
    t.write(batch(("a", 2, H09, "a2"), ("b", 2, H_NEXT_DAY, "b2")), options=option)
    expected = [("a", 2, H09, "a2"), ("b", 2, H_NEXT_DAY, "b2")]
    cols = [*COLS, "_hoodie_partition_path"]
    full = [(*expected[0], "2024/01/15"), (*expected[1], "2024/01/16")]
    assert spark_rows(t.read(), cols) == full
    assert rows(hudi_rs_read(t.path), COLS) == expected

    # SQL: the same error, then SET and the statement works.
    session.sql(f"CREATE TABLE old_ts USING hudi LOCATION '{t.path}'")
    with pytest.raises(ConfigError, match=message):
        session.sql("UPDATE old_ts SET v = 'a3' WHERE id = 'a'")
    session.sql("SET hoodie.keygen.timebased.timestamp.type=UNIX_TIMESTAMP")
    session.sql("UPDATE old_ts SET v = 'a3', ts = 3 WHERE id = 'a'")
    expected = [("a", 3, H09, "a3"), ("b", 2, H_NEXT_DAY, "b2")]
    assert rows(hudi_rs_read(t.path), COLS) == expected


def test_sql_create_table_with_the_timestamp_key_generator_class(session, spark, tmp_path):
    """Hudi's SQL users name the generator by its class in TBLPROPERTIES; the table was
    created with the inferred SimpleKeyGenerator (paths of raw numbers) instead."""
    session.sql(
        "CREATE TABLE tk (id STRING, ts BIGINT, v STRING, event BIGINT) USING hudi "
        "PARTITIONED BY (event) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
        "'hoodie.datasource.write.keygenerator.class' = "
        "'org.apache.hudi.keygen.TimestampBasedKeyGenerator', "
        "'hoodie.keygen.timebased.timestamp.type' = 'EPOCHMILLISECONDS', "
        "'hoodie.keygen.timebased.output.dateformat' = 'yyyy/MM/dd/HH', "
        "'hoodie.datasource.write.hive_style_partitioning' = 'false')"
    )
    d1, d2 = H09 * 1000, H_NEXT_DAY * 1000
    session.sql(f"INSERT INTO tk VALUES ('a', 1, 'x', {d1}), ('b', 1, 'y', {d2})")
    session.sql("UPDATE tk SET v = 'x2' WHERE id = 'a'")
    got = session.sql("SELECT id, event, v, _hoodie_partition_path FROM tk ORDER BY id")
    expected = [("a", d1, "x2", "2024/01/15/09"), ("b", d2, "y", "2024/01/16/09")]
    assert [tuple(r) for r in got.collect()] == expected
    assert [tuple(r) for r in session.sql(f"SELECT id FROM tk WHERE event > {d1}").collect()] == [
        ("b",)
    ]
    path = str(tmp_path / "wh" / "default.db" / "tk")
    props = properties_file.load(FileSystemGateway(path))
    assert props["hoodie.table.keygenerator.class"] == (
        "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
    )
    cols = ["id", "event", "v", "_hoodie_partition_path"]
    assert rows(hudi_rs_read(path), cols) == expected

    with pytest.raises(ConfigError, match=r"key generator class 'com.acme.KeyGen' is not one"):
        hudilite.Table.create(
            spark,
            str(tmp_path / "bad"),
            SCHEMA,
            record_key="id",
            partition_by=["event"],
            options={"hoodie.datasource.write.keygenerator.class": "com.acme.KeyGen"},
        )
    assert not (tmp_path / "bad" / ".hoodie").exists()
