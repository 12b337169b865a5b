"""The bucket index in Spark SQL (hudilite.spark.bucket_expr) against the Python reference
(hudilite.index.bucket): the same hash and bucket for every key, the same file group for every
record, in ANSI mode and out of it; and a bucket-index MOR table upserted through it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

import hudilite
from hudilite.index import bucket as ref
from hudilite.schema import FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.spark import bucket_expr
from tests.helpers import hudi_rs_read, rows, spark_rows

FIELD_SETS: list[list[str]] = [[], ["a"], ["uuid"], ["a", "b"], ["b", "a", "c"]]
NAMES = st.sampled_from(["a", "b", "c", "uuid", "", "a:b"]) | st.text(max_size=3)
VALUES = st.sampled_from(["", "__null__", "__empty__", ":", ","]) | st.text(max_size=8)
PIECE = st.one_of(
    st.tuples(NAMES, VALUES).map(lambda nv: f"{nv[0]}:{nv[1]}"),
    NAMES,  # a piece without ':'
)
KEYS = st.one_of(
    st.text(),  # any Unicode, astral planes included (no lone surrogates: not UTF-8)
    st.text(alphabet=st.sampled_from(":,a\U0001d11e\u00e9_"), max_size=12),
    st.lists(PIECE, min_size=1, max_size=4).map(",".join),
    st.text(min_size=300, max_size=2000),
)


@pytest.fixture(params=["true", "false"], ids=["ansi", "no-ansi"])
def ansi(spark: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", request.param)
    yield request.param
    spark.conf.set("spark.sql.ansi.enabled", before)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(keys=st.lists(KEYS, min_size=1, max_size=60), num_buckets=st.integers(1, 1 << 20))
def test_sql_bucket_is_the_reference_bucket(
    spark: Any, ansi: str, keys: list[str], num_buckets: int
) -> None:
    df = spark.createDataFrame(pa.table({"k": pa.array(keys, pa.string())}))
    key = F.col("k")
    cols = [bucket_expr.java_string_hash(key).alias("h")] + [
        bucket_expr.bucket_id(key, num_buckets, fields).alias(f"b{i}")
        for i, fields in enumerate(FIELD_SETS)
    ]
    got = df.select("k", *cols).toArrow().to_pylist()
    for row in got:
        k = row["k"]
        assert row["h"] == ref.java_string_hash(k), k
        for i, fields in enumerate(FIELD_SETS):
            assert row[f"b{i}"] == ref.bucket_id(k, num_buckets, fields), (k, fields)


def test_known_hashes(spark: Any) -> None:
    """Java's own values: String.hashCode of 'abc' is 96354, of '' 0, of null (Objects) 0;
    one astral character counts as its two UTF-16 code units."""
    df = spark.createDataFrame(
        pa.table({"k": pa.array(["abc", "", None, "\U0001f600"], pa.string())})
    )
    got = [r[0] for r in df.select(bucket_expr.java_string_hash(F.col("k"))).collect()]
    assert got == [96354, 0, 0, (31 * 0xD83D + 0xDE00) & 0xFFFFFFFF]


@pytest.mark.parametrize("path", ["literal", "one partition", "join"])
def test_file_ids_are_the_reference_lookup(
    spark: Any, ansi: str, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """Each record gets bucket_file_id_column's file id, by a literal array or a broadcast
    join; a record whose partition is not planned is dropped."""
    if path == "join":
        monkeypatch.setattr(bucket_expr, "LITERAL_SLOTS", 0)
    partitions = ["city=sf"] if path == "one partition" else ["", "city=la", "city=sf"]
    num_buckets = 5
    existing = [("city=sf", "00000003-aaaa-bbbb-cccc-dddddddddddd-0")]
    file_ids = ref.bucket_file_ids(partitions, existing, num_buckets)
    keys = [f"id:{i},name:n{i % 7}" for i in range(200)]
    pps = [["", "city=la", "city=sf", "city=nyc"][i % 4] for i in range(200)]
    table = pa.table({RECORD_KEY_COL: keys, PARTITION_PATH_COL: pps, "n": list(range(200))})
    got = (
        bucket_expr.with_bucket_file_ids(
            spark.createDataFrame(table), partitions, file_ids, num_buckets, ["name"]
        )
        .toArrow()
        .to_pylist()
    )
    want = ref.bucket_file_id_column(
        table[RECORD_KEY_COL],
        table[PARTITION_PATH_COL],
        pa.array(partitions, pa.string()),
        pa.array(file_ids, pa.string()),
        num_buckets,
        ["name"],
    ).to_pylist()
    expected = [
        {**r, FILE_ID_COL: f} for r, f in zip(table.to_pylist(), want, strict=True) if f is not None
    ]
    assert sorted(got, key=lambda r: r["n"]) == expected
    assert any(r[FILE_ID_COL] == existing[0][1] for r in got)


SCHEMA = pa.schema(
    [("uuid", pa.string()), ("ts", pa.int64()), ("rider", pa.string()), ("city", pa.string())]
)
DATA = ["uuid", "ts", "rider", "city"]


def _batch(recs: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(DATA, r, strict=True)) for r in recs], SCHEMA)


@pytest.mark.parametrize("record_key", [["uuid"], ["uuid", "rider"]], ids=["simple", "complex"])
def test_mor_upsert_puts_every_key_in_its_bucket(
    spark: Any, tmp_path: Any, record_key: list[str]
) -> None:
    """A bucket-index MOR table written and upserted by Spark jobs: every stored row is in
    the file group of its key's bucket (Python reference), the upsert updates in place
    (no key stored twice), and hudi-rs reads the same rows."""
    num_buckets = 4
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key=record_key,
        ordering_field="ts",
        partition_by=["city"],
        table_type="mor",
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"},
    )
    spark_write = {"hoodie.hudilite.write.local.max.rows": "0"}
    keys = [f"k{i}\U0001f600:{i}" if i % 5 == 0 else f"k{i}" for i in range(60)]
    cities = ["sf", "la", "nyc"]
    t.write(
        _batch([(k, 1, f"r{i % 3}", cities[i % 3]) for i, k in enumerate(keys)]),
        options=spark_write,
    )
    r = t.write(
        _batch(
            [(k, 2, f"r{i % 3}", cities[i % 3]) for i, k in enumerate(keys) if i % 2 == 0]
            + [("new", 1, "r0", "sf")]
        ),
        options=spark_write,
    )
    assert r.num_inserts + r.num_updates == 31
    stored = t.read().toArrow()
    assert stored.num_rows == 61
    for row in stored.select(["_hoodie_record_key", "_hoodie_file_name", "uuid"]).to_pylist():
        file_id = row["_hoodie_file_name"].split("_")[0]
        if file_id.startswith("."):  # a log file: .<file id>_<instant>.log...
            file_id = file_id[1:]
        want = ref.bucket_id(row["_hoodie_record_key"], num_buckets, record_key)
        assert ref.bucket_of_file_id(file_id) == want, row
    want_rows = {
        (k, 2 if i % 2 == 0 else 1, f"r{i % 3}", cities[i % 3]) for i, k in enumerate(keys)
    }
    got = spark_rows(t.read(), DATA)
    assert set(got) == want_rows | {("new", 1, "r0", "sf")}
    assert got == rows(hudi_rs_read(t.path), DATA)
