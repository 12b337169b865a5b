"""Tables partitioned by the timestamp key generator read exactly as hudi-rs reads them.

The partition column is stored as a number (epoch milliseconds here) while the partition
path is a formatted date (``2024/01/15`` or, hive style, ``event_ms=2024-01-15``). Readers
take the column's values from the files, never from the path (Hudi's
``TimestampBasedKeyGenerator`` output cannot be parsed back into the stored number). No
fixture table of ../shared uses this key generator, so the case is built from Hudi's rules
with tables hudilite writes at table version 8.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import hudilite
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [("id", pa.string()), ("ts", pa.int64()), ("event_ms", pa.int64()), ("v", pa.string())]
)
COLS = ["id", "ts", "event_ms", "v", "_hoodie_partition_path"]
DAY1, DAY2 = 1705312200000, 1705398600000  # 2024-01-15 09:50, 2024-01-16 09:50 UTC


def upgrade_properties_to_v9(path: str) -> None:
    """``hoodie.properties`` as Hudi 1.1's ``EightToNineUpgradeHandler`` leaves a table with
    event- or commit-time merging (the timeline and files of versions 8 and 9 agree): version
    9, no merge strategy id, ``hoodie.table.ordering.fields`` instead of the precombine field."""
    gw = FileSystemGateway(path)
    props = properties_file.load(gw)
    props["hoodie.table.version"] = "9"
    props.pop("hoodie.record.merge.strategy.id", None)
    ordering = props.pop("hoodie.table.precombine.field", None)
    if ordering:
        props["hoodie.table.ordering.fields"] = ordering
    properties_file.store(gw, props)


@pytest.mark.parametrize(
    ("table_type", "hive", "fmt", "paths", "v9"),
    [
        ("cow", False, "yyyy/MM/dd", ("2024/01/15", "2024/01/16"), False),
        ("mor", True, "yyyy-MM-dd", ("event_ms=2024-01-15", "event_ms=2024-01-16"), True),
    ],
)
def test_timestamp_keygen_table_reads_as_hudi_rs(spark, tmp_path, table_type, hive, fmt, paths, v9):
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["event_ms"],
        table_type=table_type,
        table_version=8,
        options={
            "hoodie.table.keygenerator.type": "TIMESTAMP",
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": fmt,
            "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
        },
    )
    t.write(
        pa.table(
            {"id": ["a", "b"], "ts": [1, 1], "event_ms": [DAY1, DAY2], "v": ["x", "y"]}, SCHEMA
        )
    )
    t.write(pa.table({"id": ["a"], "ts": [2], "event_ms": [DAY1 + 1], "v": ["x2"]}, SCHEMA))
    expected = [("a", 2, DAY1 + 1, "x2", paths[0]), ("b", 1, DAY2, "y", paths[1])]
    if v9:
        upgrade_properties_to_v9(t.path)
        t = hudilite.Table.load(spark, t.path)
        assert t.state().config.table_version == 9
    assert spark_rows(t.read(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected
    # A filter on the partition column compares the stored numbers.
    assert spark_rows(t.read(where=f"event_ms > {DAY1 + 1}"), COLS) == expected[1:]
    ro = spark_rows(t.read(query_type="read_optimized"), COLS)
    assert ro == rows(hudi_rs_read(t.path, read_optimized="true"), COLS)
    # Spark's own reader API and SQL see the stored numbers too, never the formatted path.
    assert spark_rows(spark.read.format("hudilite").load(t.path), COLS) == expected
    session = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    session.sql(f"CREATE TABLE ts_keyed USING hudi LOCATION '{t.path}'")
    got = session.sql("SELECT id, event_ms FROM ts_keyed WHERE event_ms > 0 ORDER BY id")
    assert [tuple(r) for r in got.collect()] == [("a", DAY1 + 1), ("b", DAY2)]
