# ruff: noqa: E501, W291, W293  (the guide's text, verbatim)
"""Hudi 1.x's Spark quick start, PySpark tab, run with only its write calls changed (issue 30).

The script below is the Python tab of https://hudi.apache.org/docs/quick-start-guide (Hudi
1.1): the table is created by its first write from two options (no record key: Hudi
generates the keys and the first write is a bulk insert), updated and deleted by writing
back rows read from it, then read incrementally and as of an instant; the CDC section makes
a table with ``hoodie.table.cdc.enabled`` and appends to it with no options at all. The only
change is each ``X.write.format("hudi")[.options(**o)].mode(m).save(basePath)`` becoming
``hudilite.save(X, basePath, options=o, mode=m)`` (:data:`WRITE_CALL`, counted). Reads stay
``format("hudi")`` (hudilite's data source is registered under that name too).

The script runs step by step; after each step the rows read by ``format("hudilite")`` and by
hudi-rs are asserted exactly, and ``hoodie.properties`` holds the key, partition and ordering
fields and the table type the options gave. The guide's "Table Types", "Keys" and "Merge
Modes" sections add ``hoodie.datasource.write.table.type``, ``.recordkey.field`` and
``hoodie.table.ordering.fields`` to ``hudi_options``: the second case runs the same steps on
such a merge-on-read table with keys.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.config import parse_properties
from hudilite.errors import OptionWarning
from tests.helpers import hudi_rs_read, rows, spark_rows

# The guide's steps, verbatim (its ``# pyspark`` blocks, in order).
SETUP = """
from pyspark.sql.functions import lit, col

tableName = "trips_table"
"""
INSERT = """
columns = ["ts","uuid","rider","driver","fare","city"]
data =[(1695159649087,"334e26e9-8355-45cc-97c6-c31daf0df330","rider-A","driver-K",19.10,"san_francisco"),
       (1695091554788,"e96c4396-3fad-413a-a942-4cb36106d721","rider-C","driver-M",27.70 ,"san_francisco"),
       (1695046462179,"9909a8b1-2d15-4d3d-8ec9-efc48c536a00","rider-D","driver-L",33.90 ,"san_francisco"),
       (1695516137016,"e3cf430c-889d-4015-bc98-59bdce1e530c","rider-F","driver-P",34.15,"sao_paulo"),
       (1695115999911,"c8abbe79-8d89-47ea-b4ce-4d224bae5bfa","rider-J","driver-T",17.85,"chennai")]
inserts = spark.createDataFrame(data).toDF(*columns)

hudi_options = {
    'hoodie.table.name': tableName,
    'hoodie.datasource.write.partitionpath.field': 'city'
}
{more_options}
inserts.write.format("hudi"). \\
    options(**hudi_options). \\
    mode("overwrite"). \\
    save(basePath)
"""
QUERY = """
tripsDF = spark.read.format("hudi").load(basePath)
tripsDF.createOrReplaceTempView("trips_table")

spark.sql("SELECT uuid, fare, ts, rider, driver, city FROM  trips_table WHERE fare > 20.0").show()
spark.sql("SELECT _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path, rider, driver, fare FROM trips_table").show()
"""
UPDATE = """
# Lets read data from target Hudi table, modify fare column for rider-D and update it.
updatesDf = spark.read.format("hudi").load(basePath).filter("rider == 'rider-D'").withColumn("fare",col("fare")*10)

updatesDf.write.format("hudi"). \\
  options(**hudi_options). \\
  mode("append"). \\
  save(basePath)
"""
DELETE = """
# Lets  delete rider: rider-D
deletesDF = spark.read.format("hudi").load(basePath).filter("rider == 'rider-F'")

# issue deletes
hudi_hard_delete_options = {
  'hoodie.table.name': tableName,
  'hoodie.datasource.write.partitionpath.field': 'city',
  'hoodie.datasource.write.operation': 'delete',
}

deletesDF.write.format("hudi"). \\
options(**hudi_hard_delete_options). \\
mode("append"). \\
save(basePath)
"""
TIME_TRAVEL = """
spark.read.format("hudi"). \\
  option("as.of.instant", "20210728141108100"). \\
  load(basePath)

spark.read.format("hudi"). \\
  option("as.of.instant", "2021-07-28 14:11:08.000"). \\
  load(basePath)

# It is equal to "as.of.instant = 2021-07-28 00:00:00"
spark.read.format("hudi"). \\
  option("as.of.instant", "2021-07-28"). \\
  load(basePath)
"""
INCREMENTAL = """
# reload data
spark.read.format("hudi").load(basePath).createOrReplaceTempView("trips_table")

commits = list(map(lambda row: row[0], spark.sql("SELECT DISTINCT(_hoodie_commit_time) AS commitTime FROM  trips_table ORDER BY commitTime").limit(50).collect()))
beginTime = commits[len(commits) - 2] # commit time we are interested in

# incrementally query data
incremental_read_options = {
  'hoodie.datasource.query.type': 'incremental',
  'hoodie.datasource.read.begin.instanttime': beginTime,
}

tripsIncrementalDF = spark.read.format("hudi"). \\
  options(**incremental_read_options). \\
  load(basePath)
tripsIncrementalDF.createOrReplaceTempView("trips_incremental")

spark.sql("SELECT `_hoodie_commit_time`, fare, rider, driver, uuid, ts FROM trips_incremental WHERE fare > 20.0").show()
"""
CDC = """
# Lets first insert data to a new table with cdc enabled.
columns = ["ts","uuid","rider","driver","fare","city"]
data =[(1695159649087,"334e26e9-8355-45cc-97c6-c31daf0df330","rider-A","driver-K",19.10,"san_francisco"),
       (1695091554788,"e96c4396-3fad-413a-a942-4cb36106d721","rider-B","driver-L",27.70 ,"san_francisco"),
       (1695046462179,"9909a8b1-2d15-4d3d-8ec9-efc48c536a00","rider-C","driver-M",33.90 ,"san_francisco"),
       (1695516137016,"e3cf430c-889d-4015-bc98-59bdce1e530c","rider-C","driver-N",34.15,"sao_paulo")]
       

inserts = spark.createDataFrame(data).toDF(*columns)

hudi_options = {
    'hoodie.table.name': tableName,
    'hoodie.datasource.write.partitionpath.field': 'city',
    'hoodie.table.cdc.enabled': 'true'
}
# Insert data
inserts.write.format("hudi"). \\
    options(**hudi_options). \\
    mode("overwrite"). \\
    save(basePath)


#  Update fare for riders: rider-A and rider-B 
updatesDf = spark.read.format("hudi").load(basePath).filter("rider == 'rider-A' or rider == 'rider-B'").withColumn("fare",col("fare")*10)

updatesDf.write.format("hudi"). \\
  mode("append"). \\
  save(basePath)

# Query CDC data
cdc_read_options = {
    'hoodie.datasource.query.incremental.format': 'cdc',
    'hoodie.datasource.query.type': 'incremental',
    'hoodie.datasource.read.begin.instanttime': 0
}
spark.read.format("hudi"). \\
    options(**cdc_read_options). \\
    load(basePath).show(10, False)
"""

#: ``X.write.format("hudi"). \\ [options(**o). \\] mode("m"). \\ save(basePath)``.
WRITE_CALL = re.compile(
    r'(\w+)\.write\.format\("hudi"\)\. \\\s*(?:options\(\*\*(\w+)\)\. \\\s*)?'
    r'mode\("(\w+)"\)\. \\\s*save\(basePath\)'
)
#: The Python tab's "Table Types", "Keys" and "Merge Modes" additions to ``hudi_options``.
MOR_WITH_KEYS = """hudi_options.update({
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.datasource.write.recordkey.field': 'uuid',
  'hoodie.table.ordering.fields': 'ts',
})
"""
COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]


def ported(script: str) -> str:
    """``script`` with each Hudi write call replaced by ``hudilite.save`` (nothing else)."""

    def call(m: re.Match[str]) -> str:
        options = f", options={m[2]}" if m[2] else ""
        return f"hudilite.save({m[1]}, basePath{options}, mode={m[3]!r})"

    out, changed = WRITE_CALL.subn(call, script)
    assert changed == script.count('.write.format("hudi")') > 0
    return out


def props(path: Path) -> dict[str, str]:
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text())


def read(spark: Any, base: str, columns: list[str], **options: str) -> list[tuple]:
    """The rows ``format("hudilite")`` reads, asserted equal to hudi-rs's."""
    got = spark_rows(spark.read.format("hudilite").options(**options).load(base), columns)
    rs_opts = {}
    if "as.of.instant" in options:
        rs_opts["as_of"] = options["as.of.instant"]
    if "hoodie.datasource.read.begin.instanttime" in options:
        rs_opts["start"] = options["hoodie.datasource.read.begin.instanttime"]
    assert rows(hudi_rs_read(base, **rs_opts), columns) == got
    return got


RIDERS = [
    ("rider-A", 19.1, "san_francisco"),
    ("rider-C", 27.7, "san_francisco"),
    ("rider-D", 33.9, "san_francisco"),
    ("rider-F", 34.15, "sao_paulo"),
    ("rider-J", 17.85, "chennai"),
]
FIELDS = ["rider", "fare", "city"]


@pytest.mark.parametrize("variant", ["guide", "mor_with_keys"])
def test_quickstart_with_only_the_writes_changed(spark: Any, tmp_path: Path, variant: str) -> None:
    path = tmp_path / "trips_table"
    base = str(path)
    ns: dict[str, Any] = {"spark": spark, "basePath": base, "hudilite": hudilite}

    def run(step: str) -> None:
        code = ported(step) if ".write." in step else step
        exec(compile(code, "quickstart.py", "exec"), ns)

    keyed = variant == "mor_with_keys"
    run(SETUP)
    run(INSERT.replace("{more_options}", MOR_WITH_KEYS if keyed else ""))
    stored = props(path)
    assert stored["hoodie.table.name"] == "trips_table"
    assert stored["hoodie.table.type"] == ("MERGE_ON_READ" if keyed else "COPY_ON_WRITE")
    assert stored["hoodie.table.partition.fields"] == "city"
    assert stored.get("hoodie.table.recordkey.fields") == ("uuid" if keyed else None)
    ordering = stored.get("hoodie.table.ordering.fields") or stored.get(
        "hoodie.table.precombine.field"
    )
    assert ordering == ("ts" if keyed else None)
    assert read(spark, base, FIELDS) == sorted(RIDERS, key=repr)
    keys = dict(read(spark, base, ["rider", "_hoodie_record_key"]))
    (first,) = {t for (t,) in read(spark, base, ["_hoodie_commit_time"])}
    if keyed:
        assert keys["rider-D"] == "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"
    else:  # Hudi's generated keys: <instant>_<spark partition>_<row>, one commit, unique
        assert len(set(keys.values())) == 5
        assert all(re.fullmatch(first + r"_\d+_\d+", k) for k in keys.values())

    run(QUERY)
    run(UPDATE)
    updated = [(r, f * 10 if r == "rider-D" else f, c) for r, f, c in RIDERS]
    assert read(spark, base, FIELDS) == sorted(updated, key=repr)
    assert dict(read(spark, base, ["rider", "_hoodie_record_key"])) == keys  # updated in place

    run(DELETE)
    final = [r for r in updated if r[0] != "rider-F"]
    assert read(spark, base, FIELDS) == sorted(final, key=repr)
    assert props(path) == stored  # no write changed a table property

    run(TIME_TRAVEL)  # instants before the table: the guide only builds the DataFrames
    assert read(spark, base, FIELDS, **{"as.of.instant": first}) == sorted(RIDERS, key=repr)

    run(INCREMENTAL)
    assert ns["beginTime"] == first
    assert spark_rows(ns["tripsIncrementalDF"], FIELDS) == [("rider-D", 339.0, "san_francisco")]
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": ns["beginTime"],
    }
    assert read(spark, base, FIELDS, **incremental) == [("rider-D", 339.0, "san_francisco")]


def test_quickstart_cdc_section(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "trips_table"
    base = str(path)
    ns: dict[str, Any] = {"spark": spark, "basePath": base, "hudilite": hudilite}
    # hudilite writes no CDC log files (it derives changes from the timeline): the option
    # warns that it has no effect, and the CDC read below still gives Hudi's changes.
    with pytest.warns(OptionWarning, match="'hoodie.table.cdc.enabled' is not supported"):
        exec(compile(ported(SETUP + CDC), "quickstart.py", "exec"), ns)
    stored = props(path)
    assert (stored["hoodie.table.name"], stored["hoodie.table.partition.fields"]) == (
        "trips_table",
        "city",
    )
    assert "hoodie.table.recordkey.fields" not in stored
    assert read(spark, base, ["rider", "fare", "city"]) == [
        ("rider-A", 191.0, "san_francisco"),
        ("rider-B", 277.0, "san_francisco"),
        ("rider-C", 33.9, "san_francisco"),
        ("rider-C", 34.15, "sao_paulo"),
    ]
    cdc = spark.read.format("hudilite").options(**ns["cdc_read_options"]).load(base)
    # Hudi's CDC rows: op, ts_ms, and the before and after images as JSON text.
    images = [
        (r["op"], r["before"] and json.loads(r["before"]), json.loads(r["after"]))
        for r in cdc.collect()
    ]
    changes = sorted((op, before and before["fare"], after["fare"]) for op, before, after in images)
    for op, before, after in images:  # an update keeps the generated key of its row
        assert op != "u" or before["_hoodie_record_key"] == after["_hoodie_record_key"]
    assert changes == [
        ("i", None, 19.1),
        ("i", None, 27.7),
        ("i", None, 33.9),
        ("i", None, 34.15),
        ("u", 19.1, 191.0),
        ("u", 27.7, 277.0),
    ]
