"""The driver-side write's pure steps (no JVM): key stats and the split of inserts over
their planned file groups. The whole write is compared with the Spark write in
``tests/spark/test_small_write.py``."""

from __future__ import annotations

import pyarrow as pa

from hudilite.schema import DELETE_COL, FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.write.assign import InsertBucket
from hudilite.write.small_write import assign_buckets, key_stats


def keyed(rows: list[tuple[str, str, bool | None]], file_ids: list[str | None] | None = None):
    table = pa.table(
        {
            RECORD_KEY_COL: [r[0] for r in rows],
            PARTITION_PATH_COL: [r[1] for r in rows],
            DELETE_COL: pa.array([r[2] for r in rows], pa.bool_()),
        }
    )
    if file_ids is not None:
        table = table.append_column(FILE_ID_COL, pa.array(file_ids, pa.string()))
    return table


def test_key_stats_count_records_ranges_and_non_deletes_per_partition() -> None:
    plan = key_stats(
        keyed(
            [
                ("k5", "p=1", False),
                ("k1", "p=1", True),
                ("k9", "p=1", None),  # a null flag is not counted as kept (Spark's filter)
                ("a", "p=2", False),
            ]
        )
    )
    assert plan.partitions == {"p=1": 3, "p=2": 1}
    assert plan.key_ranges == {"p=1": ("k1", "k9"), "p=2": ("a", "a")}
    assert plan.kept == {"p=1": 1, "p=2": 1}


def test_key_stats_of_nothing() -> None:
    plan = key_stats(keyed([]))
    assert (plan.partitions, plan.key_ranges, plan.kept) == ({}, {}, {})


def test_inserts_split_over_buckets_in_their_planned_shares() -> None:
    rows = [(f"k{i}", "p", False) for i in range(10)] + [("u", "p", False), ("q", "other", False)]
    tagged = keyed(rows, [None] * 10 + ["f-old", None])
    buckets = [
        InsertBucket("p", "f-small", 0.0, 0.3, is_new=False, capacity=3),
        InsertBucket("p", "f-new", 0.3, 1.0, is_new=True, capacity=7),
    ]
    out = assign_buckets(tagged, buckets)
    got = dict(zip(out[RECORD_KEY_COL].to_pylist(), out[FILE_ID_COL].to_pylist(), strict=True))
    # 3 of the 10 inserts to the small file, 7 to the new group; the located row keeps
    # its group; the insert of a partition without a bucket is dropped.
    assert sorted(got.values()).count("f-small") == 3
    assert sorted(got.values()).count("f-new") == 7
    assert got["u"] == "f-old"
    assert "q" not in got
    assert out.num_rows == 11


def test_assign_without_buckets_keeps_located_rows_only() -> None:
    tagged = keyed([("a", "p", False), ("b", "p", True)], ["f1", None])
    out = assign_buckets(tagged, [])
    assert out[RECORD_KEY_COL].to_pylist() == ["a"]


def test_key_table_keys_a_collected_input_in_one_write_order() -> None:
    from hudilite.keygen import KeyGenSpec
    from hudilite.schema import SEQ_COL
    from hudilite.write.keying import KeyingSpec
    from hudilite.write.small_write import key_table

    spec = KeyingSpec(KeyGenSpec("SIMPLE", ("id",), ("p",), hive_style=True))
    data = pa.concat_tables(
        [
            pa.table({"id": ["a", "b"], "p": ["x", "y"], "_hoodie_is_deleted": [False, True]}),
            pa.table({"id": ["c"], "p": ["x"], "_hoodie_is_deleted": pa.array([None], pa.bool_())}),
        ]
    )
    out = key_table(spec, data)
    assert out[RECORD_KEY_COL].to_pylist() == ["a", "b", "c"]
    assert out[PARTITION_PATH_COL].to_pylist() == ["p=x", "p=y", "p=x"]
    assert out[SEQ_COL].to_pylist() == [0, 1, 2]
    assert out[DELETE_COL].to_pylist() == [False, True, False]
    assert key_table(spec, data.slice(0, 0)).num_rows == 0
