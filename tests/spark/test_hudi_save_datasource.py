"""``df.write.format("hudilite")`` (and ``format("hudi")``) with Hudi's options, and Hudi's
quick-start script run with only its write calls changed (issue 30).

The data source writer runs the operations that need no shuffle (bulk_insert, insert,
insert_overwrite, insert_overwrite_table) in the Spark tasks, committing one instant; an
upsert is refused with one line pointing to ``hudilite.save``, before anything is written;
a failed task rolls the instant back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

import hudilite
from hudilite.config import parse_properties
from tests.helpers import hudi_rs_read, rows, spark_rows

COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]
SCHEMA = "ts long, uuid string, rider string, driver string, fare double, city string"
ROWS = [
    (1, "a", "rider-A", "driver-K", 19.1, "san_francisco"),
    (2, "b", "rider-C", "driver-M", 27.7, "san_francisco"),
    (3, "c", "rider-F", "driver-P", 34.15, "sao_paulo"),
    (4, "d", "rider-J", "driver-T", 17.85, "chennai"),
]
OPTIONS = {
    "hoodie.table.name": "trips_table",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "city",
}


def instants(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.name[:1].isdigit())


def table_rows(spark: Any, path: Path) -> list[tuple]:
    """The rows the data source reads, checked against hudi-rs."""
    got = spark_rows(spark.read.format("hudilite").load(str(path)), COLUMNS)
    assert rows(hudi_rs_read(str(path)), COLUMNS) == got
    return got


def test_datasource_writer(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "trips"
    base = str(path)
    hudilite.save(
        spark.createDataFrame([("x", 1)], "id string, v int"),
        base,
        options={"hoodie.table.name": "old", "hoodie.datasource.write.recordkey.field": "id"},
    )
    df = spark.createDataFrame(ROWS, SCHEMA).repartition(2)

    def write(frame: Any, operation: str, mode: str = "append", fmt: str = "hudilite") -> None:
        opts = {**OPTIONS, "hoodie.datasource.write.operation": operation}
        frame.write.format(fmt).options(**opts).mode(mode).save(base)

    # mode("overwrite") recreates the table from the options; the two tasks commit once.
    write(df, "bulk_insert", "overwrite")
    assert table_rows(spark, path) == sorted(ROWS, key=repr)
    stored = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert stored["hoodie.table.name"] == "trips_table"
    assert (stored["hoodie.table.recordkey.fields"], stored["hoodie.table.partition.fields"]) == (
        "uuid",
        "city",
    )
    assert stored["hoodie.table.precombine.field"] == "ts"
    (first,) = [i for i in instants(path) if i.endswith(".commit")]
    assert not list((path / ".hoodie" / ".heartbeat").iterdir())
    assert not (path / ".hoodie" / ".temp" / first.split(".")[0]).exists()  # markers gone

    # insert keeps a second copy of a key (no lookup), through Hudi's short name.
    dup = (9, "a", "rider-Z", "driver-Z", 1.0, "chennai")
    write(spark.createDataFrame([dup], SCHEMA), "insert", fmt="hudi")
    assert table_rows(spark, path) == sorted([*ROWS, dup], key=repr)
    # insert_overwrite replaces the partitions written (chennai), no other.
    new = (10, "e", "rider-N", "driver-N", 5.0, "chennai")
    write(spark.createDataFrame([new], SCHEMA), "insert_overwrite")
    assert table_rows(spark, path) == sorted([*ROWS[:3], new], key=repr)
    replace = [i for i in instants(path) if i.endswith(".replacecommit")]
    assert len(replace) == 1
    # insert_overwrite_table replaces every partition.
    write(spark.createDataFrame([ROWS[2]], SCHEMA), "insert_overwrite_table")
    assert table_rows(spark, path) == [ROWS[2]]

    # An upsert (Hudi's default operation) is refused before anything is written, with one
    # line pointing to hudilite.save; so are Spark's error/ignore modes and a conflict.
    before = instants(path)
    with pytest.raises(AnalysisException) as err:
        df.write.format("hudilite").options(**OPTIONS).mode("append").save(base)
    assert (
        "hudilite.errors.ConfigError: the upsert operation cannot run through "
        "df.write.format('hudilite'): it needs the rows grouped by key first; use "
        "hudilite.save(df, path, options=..., mode=...) instead\n"
    ) in str(err.value)
    with pytest.raises(AnalysisException, match=r"UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        write(df, "insert", "ignore")
    with pytest.raises(AnalysisException) as err:
        opts = {**OPTIONS, "hoodie.datasource.write.recordkey.field": "rider"}
        df.write.format("hudilite").options(
            **opts, **{"hoodie.datasource.write.operation": "insert"}
        ).mode("append").save(base)
    assert (
        f"hudilite.errors.ConfigError: options conflict with the table at {base}: "
        "hoodie.datasource.write.recordkey.field='rider' but the table's is 'uuid'\n"
    ) in str(err.value)
    assert instants(path) == before

    # A task that fails (a null record key) rolls the instant back: the table is unchanged.
    bad = spark.createDataFrame([(11, None, "r", "d", 1.0, "chennai")], SCHEMA)
    with pytest.raises(Exception, match="record key"):
        write(bad, "bulk_insert")
    assert table_rows(spark, path) == [ROWS[2]]
    timeline = hudilite.Table.load(spark, base).timeline()
    assert not [i for i in timeline if i.is_pending]
    assert timeline[-1].action == "rollback"


# Hudi's quick start (Spark Guide, PySpark tab; the 0.x options naming the record key and
# precombine field). Only the three ``.write...save(basePath)`` calls are changed below.
QUICKSTART = """
from pyspark.sql.functions import lit, col

tableName = "trips_table"
columns = ["ts","uuid","rider","driver","fare","city"]
data =[(1695159649087,"334e26e9-8355-45cc-97c6-c31daf0df330","rider-A","driver-K",19.10,"san_francisco"),
       (1695091554788,"e96c4396-3fad-413a-a942-4cb36106d721","rider-C","driver-M",27.70 ,"san_francisco"),
       (1695046462179,"9909a8b1-2d15-4d3d-8ec9-efc48c536a00","rider-D","driver-L",33.90 ,"san_francisco"),
       (1695332066204,"1dced545-862b-4ceb-8b43-d2a568f6616b","rider-E","driver-O",93.50,"san_francisco"),
       (1695516137016,"e3cf430c-889d-4015-bc98-59bdce1e530c","rider-F","driver-P",34.15,"sao_paulo"),
       (1695376420876,"7a84095f-737f-40bc-b62f-6b69664712d2","rider-G","driver-Q",43.40 ,"sao_paulo"),
       (1695173887231,"3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04","rider-I","driver-S",41.06 ,"chennai"),
       (1695115999911,"c8abbe79-8d89-47ea-b4ce-4d224bae5bfa","rider-J","driver-T",17.85,"chennai")]
inserts = spark.createDataFrame(data).toDF(*columns)

hudi_options = {
    'hoodie.table.name': tableName,
    'hoodie.datasource.write.recordkey.field': 'uuid',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.partitionpath.field': 'city'
}

inserts.write.format("hudi"). \\
    options(**hudi_options). \\
    mode("overwrite"). \\
    save(basePath)

tripsDF = spark.read.format("hudi").load(basePath)
tripsDF.createOrReplaceTempView("trips_table")

spark.sql("SELECT uuid, fare, ts, rider, driver, city FROM  trips_table WHERE fare > 20.0").show()
spark.sql("SELECT _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path, rider, driver, fare FROM  trips_table").show()

updatesDf = spark.read.format("hudi").load(basePath).filter("rider == 'rider-D'").withColumn("fare", col("fare") * 10)

updatesDf.write.format("hudi"). \\
  options(**hudi_options). \\
  mode("append"). \\
  save(basePath)

deletesDF = spark.read.format("hudi").load(basePath).filter("rider == 'rider-F'")

hudi_hard_delete_options = {
  'hoodie.table.name': tableName,
  'hoodie.datasource.write.recordkey.field': 'uuid',
  'hoodie.datasource.write.partitionpath.field': 'city',
  'hoodie.datasource.write.operation': 'delete',
}

deletesDF.write.format("hudi"). \\
options(**hudi_hard_delete_options). \\
mode("append"). \\
save(basePath)

spark.read.format("hudi").option("as.of.instant", "20210728141108100").load(basePath)
spark.read.format("hudi").option("as.of.instant", "2021-07-28 14:11:08.200").load(basePath)
spark.read.format("hudi").option("as.of.instant", "2021-07-28").load(basePath)

spark.read.format("hudi").load(basePath).createOrReplaceTempView("trips_table")
commits = list(map(lambda row: row[0], spark.sql("SELECT DISTINCT(_hoodie_commit_time) AS commitTime FROM  trips_table ORDER BY commitTime").limit(50).collect()))
beginTime = commits[len(commits) - 2]

incremental_read_options = {
  'hoodie.datasource.query.type': 'incremental',
  'hoodie.datasource.read.begin.instanttime': beginTime,
}

tripsIncrementalDF = spark.read.format("hudi"). \\
  options(**incremental_read_options). \\
  load(basePath)
tripsIncrementalDF.createOrReplaceTempView("trips_incremental")

spark.sql("SELECT `_hoodie_commit_time`, fare, rider, driver, uuid, ts FROM  trips_incremental WHERE fare > 20.0").show()
"""  # noqa: E501

WRITE_CALL = re.compile(
    r'(\w+)\.write\.format\("hudi"\)\. \\\s*options\(\*\*(\w+)\)\. \\\s*'
    r'mode\("(\w+)"\)\. \\\s*save\(basePath\)'
)


def test_quickstart_script_with_only_the_writes_changed(spark: Any, tmp_path: Path) -> None:
    script, changed = WRITE_CALL.subn(
        r"hudilite.save(\1, basePath, options=\2, mode='\3')", QUICKSTART
    )
    assert changed == 3
    base = str(tmp_path / "trips_table")
    namespace: dict[str, Any] = {"spark": spark, "basePath": base, "hudilite": hudilite}
    exec(compile(script, "quickstart.py", "exec"), namespace)
    # Rider D's fare times ten, rider F deleted; the incremental read is the update.
    final = [
        ("rider-A", 19.1),
        ("rider-C", 27.7),
        ("rider-D", 339.0),
        ("rider-E", 93.5),
        ("rider-G", 43.4),
        ("rider-I", 41.06),
        ("rider-J", 17.85),
    ]
    assert rows(hudi_rs_read(base), ["rider", "fare"]) == sorted(final, key=repr)
    assert spark_rows(spark.read.format("hudi").load(base), ["rider", "fare"]) == sorted(
        final, key=repr
    )
    incremental = namespace["tripsIncrementalDF"]
    assert spark_rows(incremental, ["rider", "fare"]) == [("rider-D", 339.0)]
    assert rows(hudi_rs_read(base, start=namespace["beginTime"]), ["rider", "fare"]) == [
        ("rider-D", 339.0)
    ]
