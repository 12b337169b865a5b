"""Copy-on-write tables end to end: writes, reads, time travel, incremental, hudi-rs agreement."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import hudilite
from hudilite.errors import SchemaError, TableExistsError, TableNotFoundError
from hudilite.spark.table_read import prune_partitions_spark
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("ts", pa.int64()),
        ("rider", pa.string()),
        ("fare", pa.float64()),
        ("city", pa.string()),
    ]
)
DATA = ["uuid", "ts", "rider", "fare", "city"]


def batch(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(DATA, r, strict=True)) for r in recs], SCHEMA)


def records(t: pa.Table) -> list[dict]:
    return t.to_pylist()


@pytest.fixture(params=[6, 8], ids=["v6", "v8"])
def version(request: pytest.FixtureRequest) -> int:
    return request.param


def make(spark, tmp_path, version: int, **kw) -> hudilite.Table:
    args = dict(
        record_key="uuid", ordering_field="ts", partition_by=["city"], table_version=version
    )
    args.update(kw)
    return hudilite.Table.create(spark, str(tmp_path / "trips"), SCHEMA, **args)


def assert_same_as_hudi_rs(t: hudilite.Table, oracle: DictOracle | None = None, **read) -> None:
    """hudilite and hudi-rs return exactly the same rows (and the oracle's, when given)."""
    ours = spark_rows(t.read(**_hl_opts(read)), DATA)
    theirs = rows(hudi_rs_read(t.path, **read), DATA)
    assert ours == theirs
    if oracle is not None:
        assert ours == oracle.rows(DATA)


def _hl_opts(read: dict) -> dict:
    if "start" in read:
        return {"query_type": "incremental", "start": read["start"], "end": read.get("end")}
    return read


def test_upsert_delete_time_travel_incremental(spark, tmp_path, version):
    t = make(spark, tmp_path, version)
    oracle = DictOracle(["uuid"], "ts")
    b1 = batch(
        ("a", 1, "r1", 10.0, "sf"),
        ("b", 1, "r2", 20.0, "sf"),
        ("c", 1, "r3", 30.0, "nyc"),
        ("d", 1, "r4", 40.0, "la"),
    )
    r1 = t.write(b1)
    oracle.upsert(records(b1))
    assert (r1.num_inserts, r1.num_updates, r1.num_deletes) == (4, 0, 0)
    assert r1.files_written == 3 and r1.partitions == ("city=la", "city=nyc", "city=sf")
    after1 = oracle.rows(DATA)

    # b: newer ts wins; c: older ts loses (event time); e: new key; a: in-batch duplicates.
    b2 = batch(
        ("b", 5, "r2-new", 21.0, "sf"),
        ("c", 0, "r3-stale", 31.0, "nyc"),
        ("e", 1, "r5", 50.0, "sf"),
        ("a", 2, "r1-v2", 11.0, "sf"),
        ("a", 3, "r1-v3", 12.0, "sf"),
    )
    r2 = t.write(b2)
    oracle.upsert(records(b2))
    assert (r2.num_inserts, r2.num_updates) == (1, 2)
    assert_same_as_hudi_rs(t, oracle)
    after2 = oracle.rows(DATA)

    r3 = t.write(batch(("d", 9, None, None, "la"), ("zz", 9, None, None, "la")), operation="delete")
    oracle.delete([("d",)])
    assert (r3.num_inserts, r3.num_updates, r3.num_deletes) == (0, 0, 1)
    assert_same_as_hudi_rs(t, oracle)

    # Time travel to each commit, with hudi-rs agreeing.
    assert spark_rows(t.read(as_of=r1.instant_time), DATA) == after1
    assert spark_rows(t.read(as_of=r2.instant_time), DATA) == after2
    assert_same_as_hudi_rs(t, as_of=r1.instant_time)
    assert_same_as_hudi_rs(t, as_of=r2.instant_time)

    # Incremental (r1, now]: the records r2 wrote (a, b, e); (r1, r2] the same. Table
    # version 8 ranges are over completion times (Hudi 1.x), version 6 over instant times.
    start = r1.completion_time or r1.instant_time
    end = r2.completion_time or r2.instant_time
    inc = spark_rows(t.read(query_type="incremental", start=start), ["uuid", "rider"])
    assert inc == [("a", "r1-v3"), ("b", "r2-new"), ("e", "r5")]
    assert_same_as_hudi_rs(t, start=start, end=end)
    # The Arrow reader (no Spark) returns the same rows.
    assert rows(t.to_arrow(), DATA) == oracle.rows(DATA)
    assert rows(t.to_arrow(as_of=r1.instant_time), DATA) == after1
    assert rows(t.to_arrow(query_type="incremental", start=start), ["uuid"]) == [
        ("a",),
        ("b",),
        ("e",),
    ]
    assert spark_rows(t.read(query_type="incremental", start=start, end=end), ["uuid"]) == [
        ("a",),
        ("b",),
        ("e",),
    ]

    # Commit times of untouched records are preserved across rewrites.
    times = dict(spark_rows(t.read(), ["uuid", "_hoodie_commit_time"]))
    assert times == {
        "a": r2.instant_time,
        "b": r2.instant_time,
        "c": r1.instant_time,
        "e": r2.instant_time,
    }

    tl = t.timeline()
    assert [i.action for i in tl] == ["commit"] * 3
    assert all(i.state.name == "COMPLETED" for i in tl)
    if version == 8:
        assert all(i.completion_time and i.completion_time > i.requested_time for i in tl)


def test_nonpartitioned_complex_key(spark, tmp_path, version):
    t = make(spark, tmp_path, version, record_key=["uuid", "rider"], partition_by=[])
    assert t.config.keygen_type == "NON_PARTITION"  # Hudi's inference for no partitions
    oracle = DictOracle(["uuid", "rider"], "ts")
    b1 = batch(("a", 1, "x", 1.0, "sf"), ("a", 1, "y", 2.0, "sf"), ("b", 1, "x", 5.0, "sf"))
    r1 = t.write(b1)
    oracle.upsert(records(b1))
    b2 = batch(("a", 2, "x", 3.0, "la"), ("c", 1, "z", 4.0, "la"))
    r2 = t.write(b2)
    oracle.upsert(records(b2))
    r3 = t.write(batch(("b", 0, "x", None, None)), operation="delete")
    oracle.delete([("b", "x")])
    assert (r3.num_deletes, r3.files_written) == (1, 1)
    got = spark_rows(t.read(), ["_hoodie_record_key", "_hoodie_partition_path", "fare"])
    assert got == [
        ("uuid:a,rider:x", "", 3.0),
        ("uuid:a,rider:y", "", 2.0),
        ("uuid:c,rider:z", "", 4.0),
    ]
    assert_same_as_hudi_rs(t, oracle)
    assert_same_as_hudi_rs(t, as_of=r1.instant_time)
    assert_same_as_hudi_rs(t, as_of=r2.instant_time)
    start = r1.completion_time or r1.instant_time
    assert_same_as_hudi_rs(t, start=start, end=r3.completion_time or r3.instant_time)


def test_is_deleted_marker_and_insert_operations(spark, tmp_path, version):
    schema = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        schema,
        record_key="uuid",
        ordering_field="ts",
        partition_by=["city"],
        table_version=version,
    )
    rows_ = [
        {
            "uuid": "a",
            "ts": 1,
            "rider": "r",
            "fare": 1.0,
            "city": "sf",
            "_hoodie_is_deleted": False,
        },
        {
            "uuid": "b",
            "ts": 1,
            "rider": "r",
            "fare": 1.0,
            "city": "sf",
            "_hoodie_is_deleted": False,
        },
    ]
    t.write(pa.Table.from_pylist(rows_, schema), operation="bulk_insert")
    r = t.write(pa.Table.from_pylist([{**rows_[0], "ts": 2, "_hoodie_is_deleted": True}], schema))
    assert r.num_deletes == 1
    assert spark_rows(t.read(), ["uuid"]) == [("b",)]
    # insert keeps duplicates of a key (Hudi's insert skips the index)
    t.write(pa.Table.from_pylist([{**rows_[1], "ts": 5}], schema), operation="insert")
    assert spark_rows(t.read(), ["uuid", "ts"]) == [("b", 1), ("b", 5)]
    assert_same_as_hudi_rs(t)


def test_insert_overwrite_partition_and_table(spark, tmp_path, version):
    t = make(spark, tmp_path, version)
    t.write(batch(("a", 1, "r", 1.0, "sf"), ("b", 1, "r", 1.0, "la")))
    r = t.write(batch(("c", 1, "r", 1.0, "sf")), operation="insert_overwrite")
    assert r.replaced_file_groups == 1
    assert spark_rows(t.read(), ["uuid", "city"]) == [("b", "la"), ("c", "sf")]
    assert [i.action for i in t.timeline()] == ["commit", "replacecommit"]
    assert_same_as_hudi_rs(t)
    t.write(batch(("d", 1, "r", 1.0, "nyc")), operation="insert_overwrite_table")
    assert spark_rows(t.read(), ["uuid", "city"]) == [("d", "nyc")]
    assert_same_as_hudi_rs(t)


def test_small_file_packing_and_file_size_limit(spark, tmp_path, version):
    t = make(spark, tmp_path, version, partition_by=[])
    t.write(batch(*[(f"k{i}", 1, "r", 1.0, "sf") for i in range(10)]))
    r = t.write(batch(*[(f"n{i}", 1, "r", 1.0, "sf") for i in range(10)]), operation="insert")
    # The second write packs into the existing small file group: one file group, new version.
    assert r.files_written == 1
    fids = {p.split("/")[-1].split("_")[0] for p in r.file_paths}
    first = t.timeline()[0].requested_time
    assert len(fids) == 1
    assert spark_rows(t.read(as_of=first), ["uuid"]) == [
        (f"k{i}",) for i in sorted(range(10), key=str)
    ]
    assert len(spark_rows(t.read(), ["uuid"])) == 20
    # A tiny max file size and no packing spreads 20 new inserts over several file groups,
    # sized by the average record size of the earlier commits (bytes / records written,
    # rounded up as Hudi does; with no small-file limit every commit is large enough to count).
    state = t.state()
    last = state.timeline.commit_metadata(state.timeline.commits()[-1])
    per_record = -(-last.total_bytes_written // last.total_records_written)
    r2 = t.write(
        batch(*[(f"m{i:02d}", 1, "r", 1.0, "sf") for i in range(20)]),
        options={
            "hoodie.parquet.max.file.size": str(per_record * 5),
            "hoodie.parquet.small.file.limit": "0",
        },
    )
    assert r2.files_written == 4
    assert r2.num_inserts == 20
    assert_same_as_hudi_rs(t)


def test_bucket_index(spark, tmp_path, version):
    t = make(
        spark,
        tmp_path,
        version,
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"},
    )
    t.write(batch(*[(f"k{i}", 1, "r", float(i), "sf") for i in range(20)]))
    r = t.write(batch(("k3", 2, "new", 0.5, "sf"), ("k99", 1, "r", 9.0, "sf")))
    assert (r.num_updates, r.num_inserts) == (1, 1)
    fids = {
        p.split("/")[-1].split("_")[0] for p in t.read().toArrow()["_hoodie_file_name"].to_pylist()
    }
    assert {f[:8] for f in fids} <= {"00000000", "00000001"}
    assert_same_as_hudi_rs(t)
    d = t.write(
        batch(("k3", 0, None, None, "sf"), ("nope", 0, None, None, "sf")), operation="delete"
    )
    assert (d.num_deletes, d.files_written) == (1, 1)
    assert len(spark_rows(t.read(), ["uuid"])) == 20
    assert_same_as_hudi_rs(t)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_bulk_insert_into_a_bucket_index_table_writes_by_bucket(spark, tmp_path, table_type):
    """A bulk insert puts each record in its key's bucket, as Hudi's does: with fresh file
    ids the next upsert's lookup would miss the keys and store them a second time."""
    t = make(
        spark,
        tmp_path,
        6,
        table_type=table_type,
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"},
    )
    loaded = t.write(
        batch(*[(f"k{i}", 1, "r", float(i), "sf") for i in range(40)]), operation="bulk_insert"
    )
    assert (loaded.num_inserts, loaded.files_written) == (40, 2)
    # Over the driver-side limit, so the Spark write's bucket lookup is checked too.
    again = t.write(
        batch(*[(f"k{i}", 2, "u", 0.0, "sf") for i in range(0, 40, 2)], ("k99", 1, "r", 1.0, "sf")),
        options={"hoodie.hudilite.write.local.max.rows": "0"},
    )
    # (A merge-on-read log write counts every record it appends as an update.)
    expected = (20, 1) if table_type == "cow" else (21, 0)
    assert (again.num_updates, again.num_inserts) == expected
    got = spark_rows(t.read(), ["uuid", "rider"])
    assert len(got) == 41
    assert got == sorted(
        [(f"k{i}", "u" if i % 2 == 0 else "r") for i in range(40)] + [("k99", "r")], key=repr
    )
    fids = {
        p.split("/")[-1].split("_")[0] for p in t.read().toArrow()["_hoodie_file_name"].to_pylist()
    }
    assert {f[:8] for f in fids} == {"00000000", "00000001"}
    assert rows(hudi_rs_read(t.path), ["uuid", "rider"]) == got


# Pruning reads partition paths and the filter only; one table version is enough.
@pytest.mark.parametrize("version", [6], ids=["v6"])
def test_partition_pruning_where(spark, tmp_path, version):
    t = make(spark, tmp_path, version)
    t.write(batch(("a", 1, "r", 1.0, "sf"), ("b", 1, "r", 2.0, "la"), ("c", 1, "r", 3.0, "nyc")))
    state = t.state()
    assert prune_partitions_spark(spark, state, "city = 'sf'") == ["city=sf"]
    assert prune_partitions_spark(spark, state, "fare > 1") is None  # a data column: no pruning
    assert spark_rows(t.read(where="city in ('sf', 'la')"), ["uuid"]) == [("a",), ("b",)]
    assert spark_rows(t.read(where="fare > 1.5"), ["uuid"]) == [("b",), ("c",)]


def test_bad_input_names_the_column_and_leaves_table_unchanged(spark, tmp_path, version):
    t = make(spark, tmp_path, version)
    t.write(batch(("a", 1, "r", 1.0, "sf")))
    before = t.timeline()
    with pytest.raises(SchemaError, match="column 'fare' is missing"):
        t.write(pa.table({"uuid": ["b"], "ts": [1], "rider": ["r"], "city": ["sf"]}))
    with pytest.raises(SchemaError, match=r"column\(s\) 'tip' are not in the table schema"):
        t.write(batch(("b", 1, "r", 1.0, "sf")).append_column("tip", pa.array([1.0])))
    with pytest.raises(
        SchemaError, match="column 'ts' has type string but the table stores bigint"
    ):
        t.write(
            pa.table({"uuid": ["b"], "ts": ["x"], "rider": ["r"], "fare": [1.0], "city": ["sf"]})
        )
    with pytest.raises(hudilite.KeyGenerationError, match="uuid"):
        t.write(batch((None, 1, "r", 1.0, "sf")))
    assert [i.requested_time for i in t.timeline() if i.action == "commit"] == [
        i.requested_time for i in before
    ]
    # A bulk insert's plan job evaluates the keys (it counts them): a null key read from a
    # file (local rows fail while Spark plans) fails there, before any instant exists, so
    # nothing is left to roll back either.
    bad = str(tmp_path / "bad.parquet")
    pq.write_table(batch(("b", 1, "r", 1.0, "sf"), (None, 1, "r", 1.0, "nyc")), bad)
    instants = [(i.requested_time, i.action, i.state) for i in t.timeline()]
    with pytest.raises(hudilite.KeyGenerationError, match="record key field 'uuid' is null"):
        t.write(spark.read.parquet(bad), "bulk_insert")
    assert [(i.requested_time, i.action, i.state) for i in t.timeline()] == instants
    assert spark_rows(t.read(), ["uuid"]) == [("a",)]


def test_create_and_load_errors(spark, tmp_path):
    with pytest.raises(TableNotFoundError, match="no Hudi table"):
        hudilite.Table.load(spark, str(tmp_path / "nope"))
    make(spark, tmp_path, 6)
    with pytest.raises(TableExistsError):
        make(spark, tmp_path, 6)
    with pytest.raises(SchemaError, match="record key field 'id' is not a column"):
        hudilite.Table.create(spark, str(tmp_path / "x"), SCHEMA, record_key="id")
    with pytest.raises(hudilite.ConfigError, match="unknown write operation 'merge'"):
        hudilite.Table.load(spark, str(tmp_path / "trips")).write(batch(), operation="merge")  # type: ignore[arg-type]


def test_timestamp_keygen_url_encoding_and_spark_schema(spark, tmp_path, version):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema = StructType(
        [
            StructField("id", StringType()),
            StructField("event_ms", LongType()),
            StructField("region", StringType()),
        ]
    )
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "ts"),
        schema,
        record_key="id",
        partition_by=["event_ms"],
        table_version=version,
        options={
            "hoodie.datasource.write.keygenerator.type": "TIMESTAMP",
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        },
    )
    df = spark.createDataFrame([("a", 1700000000000, "eu"), ("b", 1700100000000, "us")], schema)
    t.write(df)
    got = spark_rows(t.read(), ["id", "_hoodie_partition_path"])
    assert got == [("a", "event_ms=2023/11/14"), ("b", "event_ms=2023/11/16")]
    assert rows(hudi_rs_read(t.path), ["id", "_hoodie_partition_path"]) == got

    enc = hudilite.Table.create(
        spark,
        str(tmp_path / "enc"),
        schema,
        record_key="id",
        partition_by=["region"],
        table_version=version,
        options={
            "hoodie.datasource.write.partitionpath.urlencode": "true",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
    )
    enc.write(spark.createDataFrame([("a", 1, "eu/west"), ("b", 2, "us:1")], schema))
    got = spark_rows(enc.read(), ["id", "region", "_hoodie_partition_path"])
    assert got == [("a", "eu/west", "eu%2Fwest"), ("b", "us:1", "us%3A1")]
    assert rows(hudi_rs_read(enc.path), ["id", "region", "_hoodie_partition_path"]) == got


def test_native_keys_equal_arrow_keys(spark):
    """The JVM key expressions and the Arrow key generator render identical keys and paths."""
    from hudilite.keygen import KeyGenSpec
    from hudilite.spark.keying import keyed_frame as _keyed
    from hudilite.write.keying import KeyingSpec

    df = spark.createDataFrame(
        [("a", 1, True, "x", None), ("b", -7, False, "", "2024-01-02"), ("c", 3, None, None, None)],
        "s string, i int, b boolean, p string, d string",
    ).withColumn("d", F.col("d").cast("date"))
    specs = [
        KeyGenSpec("SIMPLE", ("s",), ("p",), hive_style=True),
        KeyGenSpec("COMPLEX", ("s", "i", "b"), ("p", "d")),
        KeyGenSpec("COMPLEX", ("s",), ()),
        KeyGenSpec("NON_PARTITION", ("i",), ()),
    ]
    cols = ["s", "_hoodie_record_key", "_hoodie_partition_path"]
    for spec in specs:
        native = _keyed(df, KeyingSpec(spec), native=True)
        assert "MapInArrow" not in native._jdf.queryExecution().toString()
        arrow = _keyed(df, KeyingSpec(spec), native=False)
        assert spark_rows(native, cols) == spark_rows(arrow, cols), spec
