"""hudilite.merge: one rule per test, exact rows."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from hudilite.config import Options, TableConfig
from hudilite.errors import ConfigError, KeyGenerationError, SchemaError
from hudilite.merge import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_ORDERING,
    MergeOutcome,
    MergeSpec,
    apply_delete_markers,
    merge_file_group,
    precombine,
)
from hudilite.schema import CHANGED_COL, DELETE_COL, META_COLUMNS, SEQ_COL

EVENT = MergeSpec(EVENT_TIME_ORDERING, "ts")
COMMIT = MergeSpec(COMMIT_TIME_ORDERING, "ts")

Row = tuple[str, Any, str, bool]  # key, ts, value, delete
INT64 = pa.int64()
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def incoming(*rows: Row, ts_type: pa.DataType = INT64) -> pa.Table:
    """Incoming records in write order (``_hl_seq`` = position)."""
    return pa.table(
        {
            "_hoodie_record_key": [r[0] for r in rows],
            "_hoodie_partition_path": ["p"] * len(rows),
            "ts": pa.array([r[1] for r in rows], ts_type),
            "v": [r[2] for r in rows],
            SEQ_COL: pa.array(range(len(rows)), pa.int64()),
            DELETE_COL: [r[3] for r in rows],
        }
    )


def base(*rows: tuple[str, Any, str]) -> pa.Table:
    """A base file: meta columns filled by an earlier commit ``c0``."""
    n = len(rows)
    return pa.table(
        {
            "_hoodie_commit_time": ["c0"] * n,
            "_hoodie_commit_seqno": [f"c0_0_{i}" for i in range(n)],
            "_hoodie_record_key": [r[0] for r in rows],
            "_hoodie_partition_path": ["p"] * n,
            "_hoodie_file_name": ["f0.parquet"] * n,
            "ts": pa.array([r[1] for r in rows], pa.int64()),
            "v": [r[2] for r in rows],
        }
    )


def picked(table: pa.Table) -> list[tuple[str, Any, str]]:
    return [(r["_hoodie_record_key"], r["ts"], r["v"]) for r in table.to_pylist()]


def counts(outcome: MergeOutcome) -> tuple[int, int, int, int]:
    return outcome.inserts, outcome.updates, outcome.deletes, outcome.unchanged_rows


# --- MergeSpec ------------------------------------------------------------------------------


def test_spec_modes_and_aliases() -> None:
    assert MergeSpec().mode == COMMIT_TIME_ORDERING and not MergeSpec().event_time
    assert MergeSpec("event_time", "ts").mode == EVENT_TIME_ORDERING
    assert MergeSpec("EVENT_TIME_ORDERING", "ts").event_time
    # Without an ordering field event time degenerates to "the later write wins", as in Hudi.
    assert not MergeSpec(EVENT_TIME_ORDERING, None).event_time
    assert not MergeSpec(EVENT_TIME_ORDERING, "  ").event_time
    with pytest.raises(ConfigError, match=r"hoodie\.record\.merge\.mode"):
        MergeSpec("LATEST", "ts")


def test_spec_from_table_config() -> None:
    v6 = TableConfig.from_properties(
        {
            "hoodie.table.name": "t",
            "hoodie.table.precombine.field": "ts",
            "hoodie.table.version": "6",
        }
    )
    assert MergeSpec.from_config(v6) == MergeSpec(COMMIT_TIME_ORDERING, "ts")  # Hudi 0.x default
    v6_default = TableConfig.from_properties(
        {
            "hoodie.table.name": "t",
            "hoodie.table.precombine.field": "ts",
            "hoodie.compaction.payload.class": DEFAULT_PAYLOAD,
        }
    )
    assert MergeSpec.from_config(v6_default) == EVENT
    v8 = TableConfig.new("t", table_version=8, record_key_fields=("id",), ordering_fields=("ts",))
    assert MergeSpec.from_config(v8, Options({})) == EVENT
    assert MergeSpec.from_config(TableConfig.new("t", record_key_fields=("id",))) == MergeSpec()


def test_spec_from_options_overrides_and_refusals() -> None:
    v8 = TableConfig.new("t", table_version=8, record_key_fields=("id",), ordering_fields=("ts",))
    opts = Options({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"})
    assert MergeSpec.from_config(v8, opts).mode == COMMIT_TIME_ORDERING
    payload = Options(
        {"payloadClass": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"}
    )
    assert MergeSpec.from_config(v8, payload).mode == COMMIT_TIME_ORDERING
    assert MergeSpec.from_config(v8, Options({"preCombineField": "ts2"})).ordering_field == "ts2"
    with pytest.raises(ConfigError, match="PartialUpdateAvroPayload"):
        MergeSpec.from_config(
            v8, Options({"payloadClass": "org.apache.hudi.common.model.PartialUpdateAvroPayload"})
        )
    partial = TableConfig.new(
        "t",
        record_key_fields=("id",),
        ordering_fields=("ts",),
        payload_class="org.apache.hudi.common.model.PartialUpdateAvroPayload",
    )
    with pytest.raises(ConfigError, match="not supported"):
        MergeSpec.from_config(partial)
    with pytest.raises(ConfigError, match="several ordering fields"):
        MergeSpec.from_config(v8, Options({"preCombineField": "a,b"}))
    custom = TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), merge_mode="CUSTOM", payload_class="x.My"
    )
    with pytest.raises(ConfigError):
        MergeSpec.from_config(custom)


# --- precombine -----------------------------------------------------------------------------


def test_precombine_commit_time_keeps_the_last_write_sorted_by_key() -> None:
    out = precombine(
        COMMIT, incoming(("b", 9, "b1", False), ("a", 5, "a1", False), ("b", 1, "b2", False))
    )
    assert picked(out) == [("a", 5, "a1"), ("b", 1, "b2")]
    assert out.column_names == incoming(("x", 1, "x", False)).column_names


def test_precombine_event_time_greatest_ordering_wins() -> None:
    out = precombine(
        EVENT, incoming(("a", 5, "a1", False), ("a", 3, "a2", False), ("a", 4, "a3", False))
    )
    assert picked(out) == [("a", 5, "a1")]


def test_precombine_event_time_tie_goes_to_the_later_write() -> None:
    out = precombine(
        EVENT, incoming(("a", 5, "a1", False), ("a", 5, "a2", False), ("a", 1, "a3", False))
    )
    assert picked(out) == [("a", 5, "a2")]


def test_precombine_event_time_null_ordering_is_lowest() -> None:
    rows = incoming(("a", None, "a1", False), ("a", -7, "a2", False), ("a", None, "a3", False))
    assert picked(precombine(EVENT, rows)) == [("a", -7, "a2")]
    only_nulls = incoming(("a", None, "a1", False), ("a", None, "a2", False))
    assert picked(precombine(EVENT, only_nulls)) == [("a", None, "a2")]


def test_precombine_nan_is_the_greatest_double() -> None:
    rows = incoming(("a", math.nan, "nan", False), ("a", 1e308, "big", False), ts_type=pa.float64())
    assert picked(precombine(EVENT, rows))[0][2] == "nan"


def test_precombine_deletes_follow_event_time_unless_natural() -> None:
    # A delete carrying an ordering value competes like any record...
    ordered = incoming(("a", 5, "a1", False), ("a", 3, "del", True))
    assert picked(precombine(EVENT, ordered)) == [("a", 5, "a1")]
    # ...a delete without one (DELETE operation) beats every earlier record...
    natural = incoming(("a", 5, "a1", False), ("a", None, "del", True))
    out = precombine(EVENT, natural)
    assert picked(out) == [("a", None, "del")] and out[DELETE_COL].to_pylist() == [True]
    # ...and any later record beats it (tie on null goes to the later write).
    reinsert = incoming(("a", 5, "a1", False), ("a", None, "del", True), ("a", 1, "a2", False))
    assert picked(precombine(EVENT, reinsert)) == [("a", 1, "a2")]
    twice = incoming(
        ("a", None, "d1", True),
        ("a", 9, "a1", False),
        ("a", None, "d2", True),
        ("b", 1, "b", False),
    )
    assert picked(precombine(EVENT, twice)) == [("a", None, "d2"), ("b", 1, "b")]


def test_precombine_defaults_and_errors() -> None:
    no_internal = pa.table({"_hoodie_record_key": ["a", "a"], "ts": [1, 1], "v": ["x", "y"]})
    assert precombine(EVENT, no_internal)["v"].to_pylist() == ["y"]  # row order = write order
    empty = incoming()
    assert precombine(EVENT, empty).num_rows == 0
    with pytest.raises(SchemaError, match="ordering field 'nope'"):
        precombine(MergeSpec(EVENT_TIME_ORDERING, "nope"), incoming(("a", 1, "x", False)))
    with pytest.raises(KeyGenerationError, match="row 1"):
        precombine(COMMIT, pa.table({"_hoodie_record_key": ["a", None]}))
    with pytest.raises(SchemaError, match="_hoodie_record_key"):
        precombine(COMMIT, pa.table({"k": ["a"]}))


# --- merge_file_group -----------------------------------------------------------------------


def test_merge_into_new_file_group() -> None:
    out = merge_file_group(EVENT, None, incoming(("a", 1, "a1", False), ("b", 1, "b1", True)))
    assert counts(out) == (1, 0, 0, 0)
    assert out.table.column_names == [*META_COLUMNS, "ts", "v", CHANGED_COL]
    row = out.table.to_pylist()[0]
    assert row["_hoodie_record_key"] == "a" and row["_hoodie_partition_path"] == "p"
    assert row["_hoodie_commit_time"] is None and row["_hoodie_file_name"] is None
    assert row[CHANGED_COL] is True


def test_merge_commit_time_updates_in_place_appends_inserts_and_deletes() -> None:
    stored = base(("a", 9, "A"), ("b", 9, "B"), ("c", 9, "C"))
    new = precombine(
        COMMIT,
        incoming(
            ("z", 1, "z1", False), ("b", 1, "b1", False), ("c", 1, "x", True), ("q", 1, "q", True)
        ),
    )
    out = merge_file_group(COMMIT, stored, new)
    assert counts(out) == (1, 1, 1, 1)
    assert picked(out.table) == [("a", 9, "A"), ("b", 1, "b1"), ("z", 1, "z1")]
    assert out.table[CHANGED_COL].to_pylist() == [False, True, True]
    untouched = out.table.slice(0, 1).to_pylist()[0]
    assert (
        untouched["_hoodie_commit_seqno"] == "c0_0_0"
        and untouched["_hoodie_file_name"] == "f0.parquet"
    )
    assert out.table.to_pylist()[1]["_hoodie_commit_time"] is None


def test_merge_event_time_base_wins_only_when_greater() -> None:
    stored = base(("a", 5, "A"), ("b", 5, "B"), ("c", None, "C"), ("d", 5, "D"))
    new = incoming(
        ("a", 4, "a1", False),
        ("b", 5, "b1", False),
        ("c", -1, "c1", False),
        ("d", None, "d1", False),
    )
    out = merge_file_group(EVENT, stored, precombine(EVENT, new))
    # a: base greater -> kept; b: tie -> incoming; c: stored null loses; d: incoming null loses.
    assert picked(out.table) == [("a", 5, "A"), ("b", 5, "b1"), ("c", -1, "c1"), ("d", 5, "D")]
    assert counts(out) == (0, 2, 0, 2)
    assert out.table[CHANGED_COL].to_pylist() == [False, True, True, False]
    assert out.table["_hoodie_commit_time"].to_pylist() == ["c0", None, None, "c0"]


def test_merge_event_time_deletes() -> None:
    stored = base(("a", 5, "A"), ("b", 5, "B"), ("c", 5, "C"))
    new = incoming(
        ("a", 4, "x", True), ("b", None, "x", True), ("c", 6, "x", True), ("d", None, "x", True)
    )
    out = merge_file_group(EVENT, stored, precombine(EVENT, new))
    # a: older delete ignored; b: natural-order delete wins; c: newer delete wins; d: unknown key.
    assert picked(out.table) == [("a", 5, "A")]
    assert counts(out) == (0, 0, 2, 1)


def test_merge_nan_in_base_beats_incoming_numbers() -> None:
    stored = base(("a", 1, "A")).set_column(5, "ts", pa.array([math.nan]))
    out = merge_file_group(EVENT, stored, incoming(("a", 1e300, "a1", False), ts_type=pa.float64()))
    assert out.table["v"].to_pylist() == ["A"]


def test_merge_precombines_duplicate_incoming_and_merges_duplicate_base_rows() -> None:
    stored = base(("a", 1, "A1"), ("a", 1, "A2"), ("b", 1, "B"))
    new = incoming(("a", 2, "a1", False), ("a", 3, "a2", False))
    out = merge_file_group(EVENT, stored, new)
    assert picked(out.table) == [("a", 3, "a2"), ("a", 3, "a2"), ("b", 1, "B")]
    assert counts(out) == (0, 2, 0, 1)


def test_merge_unifies_columns_by_name() -> None:
    stored = base(("a", 1, "A"), ("b", 1, "B")).drop_columns(["ts"])
    new = incoming(("a", 2, "a1", False), ("c", 2, "c1", False))
    new = new.set_column(2, "ts", new["ts"].cast(pa.int32())).append_column(
        "extra", pa.array([1.5, 2.5])
    )
    out = merge_file_group(EVENT, stored, new)  # a base file without the ordering column: all null
    assert out.table.column_names == [*META_COLUMNS, "v", "ts", "extra", CHANGED_COL]
    assert out.table.select(["_hoodie_record_key", "v", "ts", "extra"]).to_pylist() == [
        {"_hoodie_record_key": "a", "v": "a1", "ts": 2, "extra": 1.5},
        {"_hoodie_record_key": "b", "v": "B", "ts": None, "extra": None},
        {"_hoodie_record_key": "c", "v": "c1", "ts": 2, "extra": 2.5},
    ]
    clash = incoming(("a", 1, "x", False)).set_column(3, "v", pa.array([[1]]))
    with pytest.raises(SchemaError, match="do not fit"):
        merge_file_group(COMMIT, base(("a", 1, "A")), clash)


def test_merge_with_empty_incoming_keeps_everything() -> None:
    stored = base(("a", 1, "A"))
    out = merge_file_group(EVENT, stored, incoming())
    assert counts(out) == (0, 0, 0, 1) and out.unchanged == 1
    assert out.table.drop_columns([CHANGED_COL]).equals(stored)


def test_merge_event_time_compares_mixed_int_widths() -> None:
    out = merge_file_group(
        EVENT, base(("a", 10, "A")), incoming(("a", 9, "a1", False), ts_type=pa.int32())
    )
    assert out.table["v"].to_pylist() == ["A"]


# --- delete markers -------------------------------------------------------------------------


def test_apply_delete_markers() -> None:
    table = pa.table({"_hoodie_is_deleted": [True, False, None], DELETE_COL: [False, True, False]})
    assert apply_delete_markers(table)[DELETE_COL].to_pylist() == [True, True, False]
    no_flags = pa.table({"op": ["d", "u", None]})
    out = apply_delete_markers(no_flags, delete_field="op", marker_value="d")
    assert out[DELETE_COL].to_pylist() == [True, False, False]
    ints = pa.table({"flag": [1, 0]})
    assert apply_delete_markers(ints, "flag", "1")[DELETE_COL].to_pylist() == [True, False]
    assert apply_delete_markers(ints)[DELETE_COL].to_pylist() == [False, False]
