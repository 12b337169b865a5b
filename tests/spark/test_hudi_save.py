"""``hudilite.save``: Hudi's DataFrame write by options (issue 30).

Hudi's quick-start flow (insert with mode overwrite, update, delete, incremental read, time
travel) through ``hudilite.save`` and ``spark.read.format("hudilite")``: after each step the
data source, hudi-rs and a dict oracle read the same rows, and ``hoodie.properties`` holds
exactly the given key, partition and ordering fields and the table type. Then the save
modes, the operations and the option conflicts, each with the error Hudi raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

import hudilite
from hudilite.config import parse_properties
from hudilite.errors import (
    ConfigError,
    OptionWarning,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows

KEYGEN = "org.apache.hudi.keygen."
COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]
# Hudi's quick-start trips (the rows of /work/shared/fixtures/.../quickstart_trips_table).
TRIPS = [
    (1695159649087, "334e26e9-8355-45cc-97c6-c31daf0df330", "rider-A", "driver-K", 19.10, "san_francisco"),  # noqa: E501
    (1695091554788, "e96c4396-3fad-413a-a942-4cb36106d721", "rider-C", "driver-M", 27.70, "san_francisco"),  # noqa: E501
    (1695046462179, "9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "rider-D", "driver-L", 33.90, "san_francisco"),  # noqa: E501
    (1695332066204, "1dced545-862b-4ceb-8b43-d2a568f6616b", "rider-E", "driver-O", 93.50, "san_francisco"),  # noqa: E501
    (1695516137016, "e3cf430c-889d-4015-bc98-59bdce1e530c", "rider-F", "driver-P", 34.15, "sao_paulo"),  # noqa: E501
    (1695376420876, "7a84095f-737f-40bc-b62f-6b69664712d2", "rider-G", "driver-Q", 43.40, "sao_paulo"),  # noqa: E501
    (1695173887231, "3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", "rider-I", "driver-S", 41.06, "chennai"),  # noqa: E501
    (1695115999911, "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", "rider-J", "driver-T", 17.85, "chennai"),  # noqa: E501
]  # fmt: skip


def hudi_options(table_type: str = "COPY_ON_WRITE", **more: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "trips_table",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.table.type": table_type,
        **more,
    }


def props(path: Path) -> dict[str, str]:
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text())


def timeline(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file())


def check(spark: Any, path: Path, oracle: DictOracle) -> None:
    """The data source, hudi-rs and the oracle read the same rows."""
    expected = oracle.rows(COLUMNS)
    assert spark_rows(spark.read.format("hudilite").load(str(path)), COLUMNS) == expected
    assert rows(hudi_rs_read(str(path)), COLUMNS) == expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_quickstart_flow(spark: Any, tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "trips_table"
    base = str(path)
    # Something else lives at the path: mode overwrite recreates the table from the options.
    old = spark.createDataFrame([("x", 1)], "id string, v int")
    hudilite.save(
        old,
        base,
        options={"hoodie.table.name": "old", "hoodie.datasource.write.recordkey.field": "id"},
    )
    assert props(path)["hoodie.table.name"] == "old"

    opts = hudi_options(table_type)
    oracle = DictOracle(["uuid"], "ts")
    inserts = spark.createDataFrame(TRIPS).toDF(*COLUMNS)
    first = hudilite.save(inserts, base, options=opts, mode="overwrite")
    assert first is not None and (first.operation, first.num_inserts) == ("upsert", 8)
    oracle.upsert(dict(zip(COLUMNS, r, strict=True)) for r in TRIPS)
    check(spark, path, oracle)
    stored = props(path)
    assert stored["hoodie.table.name"] == "trips_table"
    assert stored["hoodie.table.type"] == table_type
    assert stored["hoodie.table.recordkey.fields"] == "uuid"
    assert stored["hoodie.table.partition.fields"] == "city"
    assert stored["hoodie.table.precombine.field"] == "ts"
    # Hudi's DataFrame default: partition folders named by value, not city=...
    assert stored["hoodie.datasource.write.hive_style_partitioning"] == "false"
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith(".")) == [
        "chennai",
        "san_francisco",
        "sao_paulo",
    ]
    # No write option became a table property.
    assert not any("operation" in k or "inline" in k for k in stored)

    # Update: rows read from the table (meta columns and all) are written back.
    trips = spark.read.format("hudilite").load(base)
    updates = trips.filter("rider == 'rider-D'").withColumn("fare", F.col("fare") * 10)
    second = hudilite.save(updates, base, options=opts, mode="append")
    assert second is not None and (second.num_updates, second.num_inserts) == (1, 0)
    oracle.upsert([{**oracle.state[("9909a8b1-2d15-4d3d-8ec9-efc48c536a00",)], "fare": 339.0}])
    check(spark, path, oracle)

    # Delete, with Hudi's hard-delete options.
    deletes = spark.read.format("hudilite").load(base).filter("rider == 'rider-F'")
    delete_opts = {**opts, "hoodie.datasource.write.operation": "delete"}
    third = hudilite.save(deletes, base, options=delete_opts, mode="append")
    assert third is not None and third.num_deletes == 1
    oracle.delete([("e3cf430c-889d-4015-bc98-59bdce1e530c",)])
    check(spark, path, oracle)

    # Incremental read from the second-to-last commit time of the table's rows: the update.
    view = spark.read.format("hudilite").load(base)
    commits = [
        r[0]
        for r in view.select("_hoodie_commit_time")
        .distinct()
        .orderBy(F.col("_hoodie_commit_time"))
        .collect()
    ]
    assert commits == [first.instant_time, second.instant_time]
    begin = commits[-2]
    incremental = (
        spark.read.format("hudilite")
        .options(
            **{
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": begin,
            }
        )
        .load(base)
    )
    changed = [("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", 339.0)]
    assert spark_rows(incremental, ["uuid", "fare"]) == changed
    assert rows(hudi_rs_read(base, start=begin), ["uuid", "fare"]) == changed

    # Time travel to the first commit: the eight inserted trips.
    travel = spark.read.format("hudilite").option("as.of.instant", first.instant_time).load(base)
    original = sorted(tuple(r) for r in TRIPS)
    assert spark_rows(travel, COLUMNS) == rows_of(original)
    assert rows(hudi_rs_read(base, as_of=first.instant_time), COLUMNS) == rows_of(original)
    assert props(path) == stored  # the writes changed no table property


def rows_of(records: list[tuple]) -> list[tuple]:
    oracle = DictOracle(["uuid"], "ts")
    oracle.upsert(dict(zip(COLUMNS, r, strict=True)) for r in records)
    return oracle.rows(COLUMNS)


def test_save_modes(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    base = str(path)
    opts = hudi_options()
    df = spark.createDataFrame(TRIPS[:3]).toDF(*COLUMNS)
    # delete and delete_partition take append only, whether or not the table exists.
    with pytest.raises(
        ConfigError,
        match=r"^append is the only save mode applicable for the delete operation "
        r"\(got mode 'overwrite'\)$",
    ):
        hudilite.save(
            df,
            base,
            options={**opts, "hoodie.datasource.write.operation": "delete"},
            mode="overwrite",
        )
    with pytest.raises(TableNotFoundError, match=f"^no Hudi table at {base} to delete from$"):
        hudilite.save(df, base, options={**opts, "hoodie.datasource.write.operation": "delete"})
    assert not path.exists()
    with pytest.raises(
        ConfigError, match=r"^'hoodie.table.name' must be set \(the table's name\)$"
    ):
        hudilite.save(df, base, options={"hoodie.datasource.write.recordkey.field": "uuid"})
    with pytest.raises(
        ConfigError, match=r"^unknown save mode 'upsert'; use append, overwrite, error or ignore$"
    ):
        hudilite.save(df, base, options=opts, mode="upsert")

    assert hudilite.save(df, base, options=opts, mode="error") is not None  # no table yet
    before = timeline(path)
    with pytest.raises(
        TableExistsError, match=f"^a Hudi table already exists at {base} \\(mode 'error'\\)$"
    ):
        hudilite.save(df, base, options=opts, mode="errorifexists")
    more = spark.createDataFrame(TRIPS[3:]).toDF(*COLUMNS)
    assert hudilite.save(more, base, options=opts, mode="ignore") is None
    assert timeline(path) == before
    expected = rows_of(TRIPS[:3])
    assert rows(hudi_rs_read(base), COLUMNS) == expected

    # append under another table name: Hudi's handleSaveModes refuses it.
    with pytest.raises(
        ConfigError,
        match=f"^a Hudi table named 'trips_table' already exists at {base}: "
        "cannot append to it as hoodie.table.name='trips'$",
    ):
        hudilite.save(more, base, options={**opts, "hoodie.table.name": "trips"})
    # Options contradicting the table: every one named with both values; nothing written.
    clash = hudi_options(
        "MERGE_ON_READ",
        **{
            "hoodie.datasource.write.recordkey.field": "rider",
            "hoodie.datasource.write.precombine.field": "fare",
            "hoodie.datasource.write.partitionpath.field": "driver",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.keygenerator.class": KEYGEN + "ComplexKeyGenerator",
            "hoodie.write.table.version": "8",
        },
    )
    message = (
        f"options conflict with the table at {base}: "
        "hoodie.datasource.write.table.type='MERGE_ON_READ' but the table's is 'COPY_ON_WRITE'; "
        "hoodie.write.table.version='8' but the table's is '6'; "
        "hoodie.datasource.write.recordkey.field='rider' but the table's is 'uuid'; "
        "hoodie.datasource.write.precombine.field='fare' but the table's is 'ts'; "
        "hoodie.datasource.write.partitionpath.field='driver' but the table's is 'city'; "
        "hoodie.datasource.write.hive_style_partitioning='true' but the table's is 'false'; "
        "hoodie.datasource.write.keygenerator.class='org.apache.hudi.keygen.ComplexKeyGenerator' "
        "but the table's is 'org.apache.hudi.keygen.SimpleKeyGenerator'"
    )
    for mode in ("append", "ignore", "error"):
        with pytest.raises(ConfigError) as err:
            hudilite.save(more, base, options=clash, mode=mode)
        assert str(err.value) == message
    # The v1.x name of the ordering field is checked the same way.
    with pytest.raises(
        ConfigError, match=r"hoodie\.table\.ordering\.fields='fare' but the table's is 'ts'$"
    ):
        hudilite.save(more, base, options={**opts, "hoodie.table.ordering.fields": "fare"})
    assert timeline(path) == before

    # A field the data lacks is refused before overwrite deletes the table.
    with pytest.raises(
        SchemaError,
        match=r"^hoodie.datasource.write.partitionpath.field='town': 'town' is not a column "
        r"of the data \(city, driver, fare, rider, ts, uuid\)$",
    ):
        bad = {**opts, "hoodie.datasource.write.partitionpath.field": "town"}
        hudilite.save(more, base, options=bad, mode="overwrite")
    assert timeline(path) == before

    # overwrite + insert_overwrite_table replaces the rows and keeps the table (and its
    # timeline); plain overwrite deletes the table and makes a new one from the options.
    replaced = hudilite.save(
        more,
        base,
        options={**opts, "hoodie.datasource.write.operation": "insert_overwrite_table"},
        mode="overwrite",
    )
    assert replaced is not None and replaced.operation == "insert_overwrite_table"
    assert set(before) < set(timeline(path))
    assert rows(hudi_rs_read(base), COLUMNS) == rows_of(TRIPS[3:])
    remade = hudilite.save(
        df,
        base,
        options=clash
        | {
            "hoodie.datasource.write.keygenerator.class": KEYGEN + "SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
        mode="overwrite",
    )
    assert remade is not None
    stored = props(path)
    assert (stored["hoodie.table.type"], stored["hoodie.table.version"]) == ("MERGE_ON_READ", "8")
    assert (stored["hoodie.table.recordkey.fields"], stored["hoodie.table.partition.fields"]) == (
        "rider",
        "driver",
    )
    assert rows(hudi_rs_read(base), COLUMNS) == rows_of(TRIPS[:3])
    # The new table's timeline holds its one commit: the old table's instants are gone.
    instants = hudilite.Table.load(spark, base).timeline()
    assert [(i.requested_time, i.action) for i in instants] == [
        (remade.instant_time, "deltacommit")
    ]


def test_operations(spark: Any, tmp_path: Path) -> None:
    base = str(tmp_path / "ops")
    opts = hudi_options()

    def save(records: list[tuple], operation: str, **more: str) -> Any:
        df = spark.createDataFrame(
            records, "ts long, uuid string, rider string, driver string, fare double, city string"
        )
        return hudilite.save(
            df, base, options={**opts, "hoodie.datasource.write.operation": operation, **more}
        )

    bulk = save(TRIPS[:4], "bulk_insert")
    assert (bulk.operation, bulk.num_inserts) == ("bulk_insert", 4)
    # insert keeps a second copy of a key (Hudi's insert does not look keys up).
    dup = (1, TRIPS[0][1], "rider-Z", "driver-Z", 1.0, "san_francisco")
    assert save([dup], "insert").num_inserts == 1
    assert sorted(r[2] for r in rows(hudi_rs_read(base), COLUMNS)) == [
        "rider-A",
        "rider-C",
        "rider-D",
        "rider-E",
        "rider-Z",
    ]
    # insert.drop.duplicates turns the default upsert into an insert that drops known keys.
    with pytest.warns(
        OptionWarning, match="is deprecated: use hoodie.datasource.insert.dup.policy=drop"
    ):
        kept = save(
            [TRIPS[1], TRIPS[4]],
            "upsert",
            **{"hoodie.datasource.write.insert.drop.duplicates": "true"},
        )
    assert (kept.operation, kept.num_inserts, kept.num_updates) == ("insert", 1, 0)
    save(TRIPS[5:], "bulk_insert")
    # insert_overwrite replaces the partitions it writes (san_francisco), no other.
    new_sf = (
        9,
        "f0000000-0000-0000-0000-000000000000",
        "rider-N",
        "driver-N",
        5.0,
        "san_francisco",
    )
    over = save([new_sf], "insert_overwrite")
    assert over.operation == "insert_overwrite"
    assert sorted(r[2] for r in rows(hudi_rs_read(base), COLUMNS)) == [
        "rider-F",
        "rider-G",
        "rider-I",
        "rider-J",
        "rider-N",
    ]
    # delete_partition: by the option (a wildcard matches partition paths) ...
    gone = save([], "delete_partition", **{"hoodie.datasource.write.partitions.to.delete": "sao_*"})
    assert gone.rows_deleted == 2
    assert sorted(r[2] for r in rows(hudi_rs_read(base), COLUMNS)) == [
        "rider-I",
        "rider-J",
        "rider-N",
    ]
    # ... or by the partitions of the rows given.
    gone = save([TRIPS[6]], "delete_partition")
    assert gone.rows_deleted == 2
    assert rows(hudi_rs_read(base), COLUMNS) == [new_sf]


def test_version_9_table_with_ordering_fields_and_timestamp_keys(
    spark: Any, tmp_path: Path
) -> None:
    """Hudi 1.x's option names: the table version, ``hoodie.table.ordering.fields`` and the
    timestamp key generator's class and settings make the table; the settings are checked
    on later writes."""
    base = str(tmp_path / "events")
    schema = "id string, event long, ts long, v string"
    options = {
        "hoodie.table.name": "events",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.table.ordering.fields": "ts",
        "hoodie.datasource.write.partitionpath.field": "event",
        "hoodie.datasource.write.keygenerator.class": KEYGEN + "TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        "hoodie.write.table.version": "9",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    }
    day1, day2 = 1705312200000, 1705398600000  # 2024-01-15 and -16, 09:50 UTC
    first = spark.createDataFrame([("a", day1, 1, "x"), ("b", day2, 2, "y")], schema)
    hudilite.save(first, base, options=options)
    stored = props(tmp_path / "events")
    assert {k: stored[k] for k in sorted(stored) if k in V9_KEYS} == {
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.table.keygenerator.type": "TIMESTAMP",
        "hoodie.table.ordering.fields": "ts",
        "hoodie.table.partition.fields": "event",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "9",
    }
    assert sorted(p.name for p in (tmp_path / "events" / "2024" / "01").iterdir()) == ["15", "16"]
    # An older ordering value loses (event-time ordering); a newer one wins.
    late = spark.createDataFrame([("a", day1, 5, "x2"), ("b", day2, 0, "old")], schema)
    result = hudilite.save(late, base, options=options)
    # (Merge-on-read logs both records; the read merges them by ordering value.)
    assert result is not None and (result.operation, result.num_inserts) == ("upsert", 0)
    expected = [("a", day1, 5, "x2"), ("b", day2, 2, "y")]
    assert rows(hudi_rs_read(base), ["id", "event", "ts", "v"]) == expected
    read = spark.read.format("hudilite").load(base)
    assert spark_rows(read, ["id", "event", "ts", "v"]) == expected
    with pytest.raises(ConfigError) as err:
        hudilite.save(
            late,
            base,
            options={**options, "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd"},
        )
    assert str(err.value) == (
        f"options conflict with the table at {base}: hoodie.keygen.timebased.output.dateformat="
        "'yyyy-MM-dd' but the table's is 'yyyy/MM/dd'"
    )


V9_KEYS = {
    "hoodie.keygen.timebased.output.dateformat",
    "hoodie.keygen.timebased.timestamp.type",
    "hoodie.record.merge.mode",
    "hoodie.table.keygenerator.type",
    "hoodie.table.keygenerator.class",
    "hoodie.table.ordering.fields",
    "hoodie.table.precombine.field",
    "hoodie.table.partition.fields",
    "hoodie.table.recordkey.fields",
    "hoodie.table.type",
    "hoodie.table.version",
}
