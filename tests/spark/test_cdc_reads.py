"""Hudi's incremental format ``cdc`` on ``format("hudilite")``: one row per change (op,
ts_ms, before, after) for COW and MOR tables, batch and streaming, compactions skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("fare", pa.float64())])
COLUMNS = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
    "id",
    "ts",
    "fare",
]
CDC = {
    "hoodie.datasource.query.type": "incremental",
    "hoodie.datasource.query.incremental.format": "cdc",
}


def _rows(*records: tuple[str, int, float]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"id": i, "ts": ts, "fare": f} for i, ts, f in records], schema=SCHEMA
    )


@pytest.fixture(scope="module", params=["cow", "mor"])
def table(request: pytest.FixtureRequest, spark: Any, tmp_path_factory: pytest.TempPathFactory):
    """Insert a, b, c; update b and insert d; delete c (MOR: then compact)."""
    kind = request.param
    t = hudilite.Table.create(
        spark,
        str(tmp_path_factory.mktemp("cdc") / kind),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        table_type=kind,
        table_version=6 if kind == "cow" else 8,
        options={"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"},
    )
    c1 = t.write(_rows(("a", 1, 1.0), ("b", 1, 2.0), ("c", 1, 3.0)), "insert").instant_time
    c2 = t.write(_rows(("b", 2, 20.0), ("d", 2, 4.0))).instant_time
    c3 = t.write(_rows(("c", 3, 0.0)), "delete").instant_time
    if kind == "mor":
        assert t.compact()  # a compaction commit in the range changes no record
    return t, (c1, c2, c3)


def _img(text: str | None) -> tuple | None:
    if text is None:
        return None
    doc = json.loads(text)
    assert list(doc) == COLUMNS  # every column, meta columns included
    return (doc["_hoodie_commit_time"], doc["id"], doc["ts"], doc["fare"])


def _changes(rows: list[Any]) -> list[tuple]:
    return sorted((r.ts_ms, r.op, _img(r.before), _img(r.after)) for r in rows)


def _expected(c1: str, c2: str, c3: str) -> list[tuple]:
    return sorted(
        [
            (c1, "i", None, (c1, "a", 1, 1.0)),
            (c1, "i", None, (c1, "b", 1, 2.0)),
            (c1, "i", None, (c1, "c", 1, 3.0)),
            (c2, "u", (c1, "b", 1, 2.0), (c2, "b", 2, 20.0)),
            (c2, "i", None, (c2, "d", 2, 4.0)),
            (c3, "d", (c1, "c", 1, 3.0), None),
        ]
    )


def test_cdc_batch_reads_every_change(spark: Any, table: tuple) -> None:
    t, (c1, c2, c3) = table
    reader = spark.read.format("hudilite").options(**CDC)
    df = reader.option("hoodie.datasource.read.begin.instanttime", "earliest").load(t.path)
    assert df.columns == ["op", "ts_ms", "before", "after"]
    assert [f.dataType.simpleString() for f in df.schema] == ["string"] * 4
    assert _changes(df.collect()) == _expected(c1, c2, c3)
    # The range is (begin, end] on the clock incremental reads use: requested times on
    # table version 6, completion times on 8.
    clock = t.state().timeline.completion_time
    ranged = (
        reader.option("hoodie.datasource.read.begin.instanttime", clock(c1))
        .option("hoodie.datasource.read.end.instanttime", clock(c2))
        .load(t.path)
    )
    assert _changes(ranged.collect()) == [e for e in _expected(c1, c2, c3) if e[0] == c2]


def test_cdc_stream_delivers_the_same_changes(spark: Any, table: tuple, tmp_path: Path) -> None:
    t, (c1, c2, c3) = table
    seen: list[Any] = []
    q = (
        spark.readStream.format("hudilite")
        .option("hoodie.datasource.query.incremental.format", "cdc")
        .option("hoodie.datasource.read.streaming.max.instants.per.batch", "2")
        .load(t.path)
        .writeStream.foreachBatch(lambda df, _: seen.extend(df.collect()))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    assert q.exception() is None
    assert _changes(seen) == _expected(c1, c2, c3)


def test_cdc_options_fail_clearly(spark: Any, table: tuple) -> None:
    t, _ = table
    with pytest.raises(Exception, match=r"incremental\.format=cdc needs hoodie\.datasource\.query"):
        spark.read.format("hudilite").option(
            "hoodie.datasource.query.incremental.format", "cdc"
        ).load(t.path).collect()
    unknown = r"unknown hoodie\.datasource\.query\.incremental\.format 'x'"
    with pytest.raises(Exception, match=unknown):
        spark.read.format("hudilite").option(
            "hoodie.datasource.query.incremental.format", "x"
        ).load(t.path).collect()


def test_cdc_of_a_truncate_deletes_every_row(spark: Any, tmp_path: Path) -> None:
    """A replace commit (truncate, insert overwrite, delete partition): its replaced file
    groups' records are deletes."""
    t = hudilite.Table.create(
        spark, str(tmp_path / "tr"), SCHEMA, record_key="id", ordering_field="ts", table_version=8
    )
    c1 = t.write(_rows(("a", 1, 1.0), ("b", 1, 2.0)), "insert").instant_time
    t.truncate()
    c2 = t.timeline()[-1].requested_time
    df = (
        spark.read.format("hudilite")
        .options(**CDC)
        .option("hoodie.datasource.read.begin.instanttime", "earliest")
        .load(t.path)
    )
    assert _changes(df.collect()) == [
        (c1, "i", None, (c1, "a", 1, 1.0)),
        (c1, "i", None, (c1, "b", 1, 2.0)),
        (c2, "d", (c1, "a", 1, 1.0), None),
        (c2, "d", (c1, "b", 1, 2.0), None),
    ]
