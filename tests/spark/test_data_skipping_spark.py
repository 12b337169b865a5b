"""Data skipping before Spark plans the scan (issue 29): a copy-on-write table with
``hoodie.metadata.index.column.stats.enable`` gets three inserts into one partition, one file
group each (small files not filled). ``Table.read(where=)`` with a selective predicate plans
only the file whose statistics may match -- ``DataFrame.inputFiles()`` lists that one file --
and returns exactly the rows hudi-rs reads for the predicate; an update keeps it exact; with
``hoodie.enable.data.skipping=false`` every file is read. ``spark.read.format("hudilite")``
with the same filters plans one input partition (one file slice) instead of three."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_V_P

COLS = ID_TS_V_P.columns


def test_selective_where_reads_only_the_matching_file(spark: Any, tmp_path: Path) -> None:
    t = ID_TS_V_P.create(
        spark,
        str(tmp_path / "t"),
        table_type="cow",
        table_version=9,
        options={
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.parquet.small.file.limit": "0",
        },
    )
    for batch in (("a", "b"), ("k", "m"), ("x", "y")):
        batch_rows = [{"id": i, "ts": 1, "v": f"v-{i}", "p": "p1"} for i in batch]
        t.write(pa.Table.from_pylist(batch_rows, ID_TS_V_P.schema), "insert")  # type: ignore[arg-type]
    t.write(
        pa.Table.from_pylist([{"id": "m", "ts": 2, "v": "new", "p": "p1"}], ID_TS_V_P.schema),
        "upsert",  # type: ignore[arg-type]
    )
    everything = t.read()
    assert len(everything.inputFiles()) == 3

    def expected(where: str) -> list[tuple[Any, ...]]:
        table = hudi_rs_read(t.path)
        mask = {
            "id = 'm'": pc.equal(table["id"], "m"),
            "v = 'new'": pc.equal(table["v"], "new"),
            "id > 'w'": pc.greater(table["id"], "w"),
        }[where]
        return rows(table.filter(mask), COLS)

    for where in ("id = 'm'", "v = 'new'", "id > 'w'"):
        df = t.read(where=where)
        assert len(df.inputFiles()) == 1, where
        assert spark_rows(df, COLS) == expected(where)
    # the hudilite data source: Spark hands it the filter, one slice is planned
    source = spark.read.format("hudilite").load(t.path)
    assert source.rdd.getNumPartitions() == 3
    assert source.where("id = 'm'").rdd.getNumPartitions() == 1
    assert spark_rows(source.where("id = 'm'"), COLS) == expected("id = 'm'")
    off = t.read(where="id = 'm'", options={"hoodie.enable.data.skipping": "false"})
    assert len(off.inputFiles()) == 3
    assert spark_rows(off, COLS) == expected("id = 'm'")
