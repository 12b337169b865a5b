"""A hudilite job for ``spark-submit --py-files hudilite-<version>-<hash>.zip``.

``spark-submit ... submit_app.py MASTER_URL TABLE_PATH`` with a driver and executors
whose Python has no hudilite: both import it from the ``--py-files`` zip. Upserts into a
copy-on-write table and prints ``SUBMIT ok`` after checking the exact rows.
"""

from __future__ import annotations

import sys

import pyarrow as pa

import hudilite


def expected() -> list[tuple]:
    """100 inserts then 100 upserts over keys 50..149 (50 updates, 50 inserts)."""
    return [(f"s{i:03d}", 2 if i >= 50 else 1, i * (10 if i >= 50 else 1)) for i in range(150)]


def main(master: str, path: str) -> None:
    # The driver imports hudilite from the zip spark-submit put on its path.
    assert ".zip/hudilite/" in hudilite.__file__, hudilite.__file__
    spark = hudilite.spark_session(ship_package=True)  # takes spark-submit's --master
    assert spark.sparkContext.master == master, spark.sparkContext.master
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])
    t = hudilite.Table.create(spark, path, schema, record_key="id", ordering_field="ts")
    key = "format_string('s%03d', id) AS id"
    t.write(spark.range(0, 100).selectExpr(key, "1L AS ts", "id AS v"))
    r = t.write(spark.range(50, 150).selectExpr(key, "2L AS ts", "id * 10 AS v"))
    assert (r.num_inserts, r.num_updates) == (50, 50), r
    got = sorted(tuple(row) for row in t.read().select("id", "ts", "v").collect())
    assert got == expected(), got
    print("SUBMIT ok", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
