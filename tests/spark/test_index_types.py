"""The BLOOM index and the global indexes (GLOBAL_SIMPLE, GLOBAL_BLOOM), end to end.

* BLOOM gives exactly the SIMPLE index's table on random upserts, and prunes files (by key
  range, then by the bloom filter in each base file's footer) before reading keys.
* A global index keeps a key unique across partitions: with
  ``hoodie.*.index.update.partition.path=true`` (Hudi's default) a record whose partition
  value changed moves (deleted in the old partition, inserted in the new one); with false it
  is updated where it is: ``_hoodie_partition_path`` stays the old partition while its data
  columns (the partition column too) take the incoming values, as Hudi's
  ``HoodieIndexUtils.tagGlobalLocationBackToRecords`` tags it. hudi-rs reads the same rows.
"""

from __future__ import annotations

import random
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudilite
from hudilite.storage.bloom_filter import from_footer
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import TRIPS

DATA = TRIPS.columns
WITH_PATH = [*DATA, "_hoodie_partition_path"]


batch = TRIPS.batch


def make(spark, path, table_type="cow", version=8, **options) -> hudilite.Table:
    return TRIPS.create(
        spark,
        str(path),
        table_type=table_type,
        table_version=version,
        options={"hoodie.parquet.small.file.limit": "0", **options},
    )


def test_bloom_index_equals_simple_on_random_upserts_and_prunes(spark, tmp_path):
    rng = random.Random(11)
    cities = ["sf", "nyc", "la"]
    simple = make(spark, tmp_path / "simple", **{"hoodie.index.type": "SIMPLE"})
    bloom = make(spark, tmp_path / "bloom", **{"hoodie.index.type": "BLOOM"})
    known: list[tuple[str, str]] = []
    pruned_by_bloom = 0
    for round_no in range(3):
        recs = []
        for _ in range(40):  # new keys
            key = str(uuid.UUID(int=rng.getrandbits(128)))
            city = rng.choice(cities)
            known.append((key, city))
            recs.append((key, round_no, rng.random(), city))
        # Updates of first-round keys only: the later files' key ranges cover them (random
        # UUIDs) but their bloom filters rule them out.
        for key, city in rng.sample(known[:40], 15) if round_no else []:
            recs.append((key, round_no, rng.random(), city))
        data = batch(*recs)
        r_simple = simple.write(data, operation="upsert")
        r_bloom = bloom.write(data, operation="upsert")
        assert (r_bloom.num_inserts, r_bloom.num_updates) == (
            r_simple.num_inserts,
            r_simple.num_updates,
        )
        assert spark_rows(bloom.read(), WITH_PATH) == spark_rows(simple.read(), WITH_PATH)
        metrics = r_bloom.extra["index"]
        assert metrics["type"] == "BLOOM"
        assert metrics["files_read"] <= metrics["files_after_range_pruning"]
        assert metrics["files_after_range_pruning"] <= metrics["files_in_scope"]
        pruned_by_bloom += metrics["files_pruned_by_bloom"]
    assert pruned_by_bloom > 0
    # Every base file of the BLOOM table carries a filter holding its keys.
    files = [f for f in (tmp_path / "bloom").rglob("*.parquet") if ".hoodie" not in f.parts]
    assert files
    for f in files:
        pf = pq.ParquetFile(f)
        footer = {k.decode(): v.decode() for k, v in pf.metadata.metadata.items()}
        filt = from_footer(footer)
        assert filt is not None
        assert filt.might_contain_many(pf.read(columns=["_hoodie_record_key"]).column(0)).all()
    assert rows(hudi_rs_read(bloom.path), DATA) == spark_rows(bloom.read(), DATA)


def _global_case(spark, tmp_path, table_type, index_type, update, version=8):
    key = (
        "hoodie.bloom.index.update.partition.path"
        if "BLOOM" in index_type
        else "hoodie.simple.index.update.partition.path"
    )
    t = make(
        spark,
        tmp_path / "t",
        table_type,
        version,
        **{"hoodie.index.type": index_type, key: str(update).lower()},
    )
    t.write(batch(("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 1, 3.0, "nyc")))
    # a: sf -> nyc; c: same partition; d: new; b: deleted through a record naming another city.
    r = t.write(batch(("a", 2, 10.0, "nyc"), ("c", 2, 30.0, "nyc"), ("d", 2, 4.0, "la")))
    t.write(
        pa.table(
            {
                "uuid": ["b"],
                "ts": pa.array([3], pa.int64()),
                "fare": [0.0],
                "city": ["la"],
                "_hoodie_is_deleted": [True],
            }
        )
    )
    return t, r


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_global_simple_moves_a_record_to_its_new_partition(spark, tmp_path, table_type):
    t, r = _global_case(spark, tmp_path, table_type, "GLOBAL_SIMPLE", True)
    expected = [
        ("a", 2, 10.0, "nyc", "city=nyc"),
        ("c", 2, 30.0, "nyc", "city=nyc"),
        ("d", 2, 4.0, "la", "city=la"),
    ]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected
    assert r.extra["index"]["type"] == "GLOBAL_SIMPLE"
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (2, 1, 1)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_global_simple_without_partition_update_keeps_the_record_in_place(
    spark, tmp_path, table_type
):
    t, _ = _global_case(spark, tmp_path, table_type, "GLOBAL_SIMPLE", False)
    # a stays in sf (its _hoodie_partition_path); the data columns are the incoming ones.
    expected = [
        ("a", 2, 10.0, "nyc", "city=sf"),
        ("c", 2, 30.0, "nyc", "city=nyc"),
        ("d", 2, 4.0, "la", "city=la"),
    ]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected


def test_global_bloom(spark, tmp_path):
    update = True
    t, r = _global_case(spark, tmp_path, "cow", "GLOBAL_BLOOM", update)
    a_path = "city=nyc" if update else "city=sf"
    expected = [
        ("a", 2, 10.0, "nyc", a_path),
        ("c", 2, 30.0, "nyc", "city=nyc"),
        ("d", 2, 4.0, "la", "city=la"),
    ]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected
    assert r.extra["index"]["type"] == "GLOBAL_BLOOM"


def test_global_move_follows_event_time_ordering(spark, tmp_path):
    """An older record naming a new partition loses the merge: nothing moves (Hudi merges
    the stored record with the incoming one before deciding where the result goes)."""
    t = make(
        spark,
        tmp_path / "t",
        **{
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.datasource.write.payload.class": (
                "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
            ),
        },
    )
    t.write(batch(("a", 5, 1.0, "sf"), ("b", 5, 2.0, "sf")))
    t.write(batch(("a", 1, 9.0, "nyc"), ("b", 7, 8.0, "la")))
    expected = [("a", 5, 1.0, "sf", "city=sf"), ("b", 7, 8.0, "la", "city=la")]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected


def test_flink_index_global_enabled(spark, tmp_path):
    t = make(spark, tmp_path / "t", **{"index.global.enabled": "true"})
    t.write(batch(("a", 1, 1.0, "sf")))
    t.write(batch(("a", 2, 2.0, "nyc")))
    assert spark_rows(t.read(), WITH_PATH) == [("a", 2, 2.0, "nyc", "city=nyc")]
    t2 = make(spark, tmp_path / "t2", **{"index.global.enabled": "false"})
    t2.write(batch(("a", 1, 1.0, "sf")))
    t2.write(batch(("a", 2, 2.0, "nyc")))
    assert spark_rows(t2.read(), WITH_PATH) == [
        ("a", 1, 1.0, "sf", "city=sf"),
        ("a", 2, 2.0, "nyc", "city=nyc"),
    ]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_global_index_combines_one_batch_across_partitions(spark, tmp_path, table_type):
    """A key sent to two partitions in one batch is one record under a global index (Hudi
    de-duplicates by record key alone when the index is global); the latest event wins and
    the stored record moves to its partition."""
    t = make(spark, tmp_path / "t", table_type=table_type, **{"hoodie.index.type": "GLOBAL_SIMPLE"})
    t.write(batch(("a", 1, 1.0, "sf"), ("b", 3, 2.0, "sf"), ("b", 2, 3.0, "la")))
    expected = [("a", 1, 1.0, "sf", "city=sf"), ("b", 3, 2.0, "sf", "city=sf")]
    assert spark_rows(t.read(), WITH_PATH) == expected
    r = t.write(batch(("a", 2, 5.0, "nyc"), ("a", 3, 6.0, "la"), ("c", 1, 7.0, "la")))
    expected = [
        ("a", 3, 6.0, "la", "city=la"),
        ("b", 3, 2.0, "sf", "city=sf"),
        ("c", 1, 7.0, "la", "city=la"),
    ]
    assert spark_rows(t.read(), WITH_PATH) == expected
    assert rows(hudi_rs_read(t.path), WITH_PATH) == expected
    assert (r.num_inserts, r.num_updates, r.num_deletes) == (2, 0, 1)
