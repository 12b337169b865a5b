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
    SequenceGroup,
    apply_delete_markers,
    changelog_rows,
    format_sequence_groups,
    merge_file_group,
    mode_for_payload,
    parse_sequence_groups,
    payload_semantics,
    precombine,
)
from hudilite.schema import CHANGED_COL, DELETE_COL, META_COLUMNS, OPERATION_COL, SEQ_COL

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
    # Payloads without a hudilite equivalent are refused rather than approximated.
    with pytest.raises(ConfigError, match="FirstValueAvroPayload"):
        MergeSpec.from_config(
            v8, Options({"payloadClass": "org.apache.hudi.common.model.FirstValueAvroPayload"})
        )
    first_value = TableConfig.new(
        "t",
        record_key_fields=("id",),
        ordering_fields=("ts",),
        payload_class="org.apache.hudi.common.model.FirstValueAvroPayload",
    )
    with pytest.raises(ConfigError, match="not supported"):
        MergeSpec.from_config(first_value)
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
    # Unchanged base rows come first, in their order; the rows the batch wrote follow.
    assert picked(out.table) == [("a", 5, "A"), ("d", 5, "D"), ("b", 5, "b1"), ("c", -1, "c1")]
    assert counts(out) == (0, 2, 0, 2)
    assert out.table[CHANGED_COL].to_pylist() == [False, False, True, True]
    assert out.table["_hoodie_commit_time"].to_pylist() == ["c0", "c0", None, None]


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
    assert picked(out.table) == [("b", 1, "B"), ("a", 3, "a2"), ("a", 3, "a2")]
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
        {"_hoodie_record_key": "b", "v": "B", "ts": None, "extra": None},
        {"_hoodie_record_key": "a", "v": "a1", "ts": 2, "extra": 1.5},
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


# --- payload classes, partial update and sequence-group options -----------------------------

PKG = "org.apache.hudi.common.model."
PARTIAL = MergeSpec(EVENT_TIME_ORDERING, "ts", partial_update=True)
PARTIAL_COMMIT = MergeSpec(COMMIT_TIME_ORDERING, None, partial_update=True)


def v8_table(**kwargs: Any) -> TableConfig:
    return TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), ordering_fields=("ts",), **kwargs
    )


@pytest.mark.parametrize(
    ("payload", "mode", "partial"),
    [
        ("OverwriteWithLatestAvroPayload", COMMIT_TIME_ORDERING, False),
        ("DefaultHoodieRecordPayload", EVENT_TIME_ORDERING, False),
        ("EventTimeAvroPayload", EVENT_TIME_ORDERING, False),
        ("PartialUpdateAvroPayload", EVENT_TIME_ORDERING, True),
        ("OverwriteNonDefaultsWithLatestAvroPayload", COMMIT_TIME_ORDERING, True),
    ],
)
def test_spec_payload_classes(payload: str, mode: str, partial: bool) -> None:
    assert payload_semantics(PKG + payload) == (mode, partial)
    assert mode_for_payload(payload) == mode
    expected = MergeSpec(mode, "ts", partial_update=partial)
    # As a write option...
    assert MergeSpec.from_config(v8_table(), Options({"payloadClass": PKG + payload})) == expected
    # ...and as the table's payload (v6 and v8; v8 records payload merging as CUSTOM).
    v6 = TableConfig.new(
        "t", record_key_fields=("id",), ordering_fields=("ts",), payload_class=PKG + payload
    )
    assert MergeSpec.from_config(v6) == expected
    v8 = v8_table(merge_mode="CUSTOM", payload_class=PKG + payload)
    assert MergeSpec.from_config(v8, Options({})) == expected


def test_spec_partial_update_options() -> None:
    on = Options({"hoodie.datasource.write.partial.update": "true"})
    assert MergeSpec.from_config(v8_table(), on) == PARTIAL
    commit = on.with_overrides({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"})
    assert MergeSpec.from_config(v8_table(), commit) == MergeSpec(
        COMMIT_TIME_ORDERING, "ts", partial_update=True
    )
    # The explicit hudilite option beats the payload class.
    off = Options(
        {
            "hoodie.datasource.write.partial.update": "false",
            "payloadClass": PKG + "PartialUpdateAvroPayload",
        }
    )
    assert MergeSpec.from_config(v8_table(), off) == EVENT
    # Hudi 1.1's table property (v9 tables migrated from PartialUpdateAvroPayload).
    props = {**v8_table().props, "hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"}
    assert MergeSpec.from_config(TableConfig.from_properties(props)).partial_update
    props["hoodie.table.partial.update.mode"] = "NONE"
    assert not MergeSpec.from_config(TableConfig.from_properties(props)).partial_update
    props["hoodie.table.partial.update.mode"] = "KEEP_VALUES"
    with pytest.raises(ConfigError, match="IGNORE_DEFAULTS"):
        MergeSpec.from_config(TableConfig.from_properties(props))
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.write\.partial\.update"):
        MergeSpec.from_config(v8_table(), Options({"partial.update": "maybe"}))


def test_sequence_group_syntax() -> None:
    groups = parse_sequence_groups(" ts_a : name , email ; ts_b:age; ")
    assert groups == (
        SequenceGroup(("name", "email"), "ts_a"),
        SequenceGroup(("age",), "ts_b"),
    )
    assert groups[0].all_columns == ("ts_a", "name", "email")
    assert format_sequence_groups(groups) == "ts_a:name,email;ts_b:age"
    assert parse_sequence_groups(format_sequence_groups(groups)) == groups
    assert parse_sequence_groups("") == ()
    for bad in ("ts_a", ":name", "ts_a:", "ts_a: , ", "ts:a,a"):
        with pytest.raises(ConfigError):
            parse_sequence_groups(bad)
    spec = MergeSpec(
        COMMIT_TIME_ORDERING, None, sequence_groups=parse_sequence_groups("ts_a:name;ts_b:age")
    )
    assert spec.sequence_groups == (
        SequenceGroup(("name",), "ts_a"),
        SequenceGroup(("age",), "ts_b"),
    )
    assert spec.grouped_columns == {"ts_a", "name", "ts_b", "age"} and not spec.simple
    with pytest.raises(ConfigError, match="two sequence groups"):
        MergeSpec(sequence_groups=parse_sequence_groups("ts_a:name;ts_b:name"))
    with pytest.raises(ConfigError, match="two sequence groups"):
        MergeSpec(sequence_groups=parse_sequence_groups("ts_a:name;ts_b:ts_a"))
    with pytest.raises(ConfigError, match="ordering field 'ts'"):
        MergeSpec(EVENT_TIME_ORDERING, "ts", sequence_groups=parse_sequence_groups("ts_a:ts,name"))


def test_spec_from_config_groups_deletes_and_changelog() -> None:
    opts = Options(
        {
            "hoodie.hudilite.sequence.groups": "ts_a:name;ts_b:age",
            "hoodie.payload.delete.field": "op",
            "hoodie.payload.delete.marker": "d",
            "changelog.enabled": "true",
        }
    )
    spec = MergeSpec.from_config(v8_table(), opts)
    assert spec == MergeSpec(
        EVENT_TIME_ORDERING,
        "ts",
        sequence_groups=parse_sequence_groups("ts_a:name;ts_b:age"),
        delete_field="op",
        delete_marker="d",
        changelog=True,
    )
    # The table's properties are the fallback (hoodie.payload.* keys are table properties).
    table = v8_table(extra={"hoodie.payload.delete.field": "flag"})
    assert MergeSpec.from_config(table).delete_field == "flag"
    assert (
        MergeSpec.from_config(table, Options({"hoodie.payload.delete.field": "x"})).delete_field
        == "x"
    )
    default = MergeSpec.from_config(v8_table())
    assert (default.delete_field, default.delete_marker, default.changelog) == (
        "_hoodie_is_deleted",
        None,
        False,
    )
    with pytest.raises(ConfigError, match="sequence group"):
        MergeSpec.from_config(v8_table(), Options({"hoodie.hudilite.sequence.groups": "ts_a"}))


def test_spec_mark_deletes() -> None:
    table = pa.table({"_hoodie_is_deleted": [True, False, None], "op": ["u", "d", "d"]})
    assert MergeSpec().mark_deletes(table)[DELETE_COL].to_pylist() == [True, False, False]
    by_op = MergeSpec(delete_field="op", delete_marker="d").mark_deletes(table)
    assert by_op[DELETE_COL].to_pylist() == [False, True, True]
    ints = pa.table({"flag": [1, 0, 1], DELETE_COL: [False, True, False]})
    marked = MergeSpec(delete_field="flag", delete_marker="1").mark_deletes(ints)
    assert marked[DELETE_COL].to_pylist() == [True, True, True]
    # A marked record is a delete to the merge.
    rows = incoming(("a", 1, "a1", False), ("a", 2, "a2", False)).append_column(
        "_hoodie_is_deleted", pa.array([False, True])
    )
    assert precombine(EVENT, MergeSpec().mark_deletes(rows))[DELETE_COL].to_pylist() == [True]


# --- partial update -------------------------------------------------------------------------

PartialRow = tuple[str, Any, Any, Any, bool]  # key, ts, name, price, delete


def partial_incoming(*rows: PartialRow) -> pa.Table:
    return pa.table(
        {
            "_hoodie_record_key": [r[0] for r in rows],
            "_hoodie_partition_path": ["p"] * len(rows),
            "ts": pa.array([r[1] for r in rows], pa.int64()),
            "name": pa.array([r[2] for r in rows], pa.string()),
            "price": pa.array([r[3] for r in rows], pa.string()),
            SEQ_COL: pa.array(range(len(rows)), pa.int64()),
            DELETE_COL: [r[4] for r in rows],
        }
    )


def partial_base(*rows: tuple[str, Any, Any, Any]) -> pa.Table:
    n = len(rows)
    data = partial_incoming(*((*r, False) for r in rows)).drop_columns([SEQ_COL, DELETE_COL])
    return pa.table(
        {
            "_hoodie_commit_time": ["c0"] * n,
            "_hoodie_commit_seqno": [f"c0_0_{i}" for i in range(n)],
            "_hoodie_record_key": data["_hoodie_record_key"],
            "_hoodie_partition_path": data["_hoodie_partition_path"],
            "_hoodie_file_name": ["f0.parquet"] * n,
            "ts": data["ts"],
            "name": data["name"],
            "price": data["price"],
        }
    )


def rows_of(table: pa.Table) -> list[tuple[Any, ...]]:
    return [(r["_hoodie_record_key"], r["ts"], r["name"], r["price"]) for r in table.to_pylist()]


def test_partial_update_javadoc_case_1_incoming_newer_keeps_stored_for_nulls() -> None:
    # PartialUpdateAvroPayload's javadoc, case 1.
    stored = partial_base(("1", 1, "name_1", "price_1"))
    new = partial_incoming(("1", 2, None, "price_2", False))
    out = merge_file_group(PARTIAL, stored, new)
    assert rows_of(out.table) == [("1", 2, "name_1", "price_2")]
    assert counts(out) == (0, 1, 0, 0)
    assert out.table["_hoodie_commit_time"].to_pylist() == [None]  # the incoming row's meta
    both = partial_incoming(("1", 1, "name_1", "price_1", False), ("1", 2, None, "price_2", False))
    assert rows_of(precombine(PARTIAL, both)) == [("1", 2, "name_1", "price_2")]


def test_partial_update_javadoc_case_2_stored_newer_takes_incoming_for_its_nulls() -> None:
    # Case 2: the stored record wins under event time; its null fields come from incoming.
    stored = partial_base(("1", 2, "name_1", None))
    new = partial_incoming(("1", 1, None, "price_1", False))
    out = merge_file_group(PARTIAL, stored, new)
    assert rows_of(out.table) == [("1", 2, "name_1", "price_1")]
    assert counts(out) == (0, 1, 0, 0)
    # The stored row stays the winner (its meta columns), but changed: the writer stamps it.
    assert out.table["_hoodie_commit_seqno"].to_pylist() == ["c0_0_0"]
    assert out.table[CHANGED_COL].to_pylist() == [True]
    both = partial_incoming(("1", 2, "name_1", None, False), ("1", 1, None, "price_1", False))
    combined = precombine(PARTIAL, both)
    assert rows_of(combined) == [("1", 2, "name_1", "price_1")]
    assert combined[SEQ_COL].to_pylist() == [0]  # the winner's row


def test_partial_update_stored_winner_without_fill_is_unchanged() -> None:
    stored = partial_base(("1", 5, "n", "p"), ("2", 5, "n2", None))
    new = partial_incoming(("1", 1, "x", "y", False), ("2", 1, "x", None, False))
    out = merge_file_group(PARTIAL, stored, new)
    assert rows_of(out.table) == [("1", 5, "n", "p"), ("2", 5, "n2", None)]
    assert counts(out) == (0, 0, 0, 2)
    assert out.table[CHANGED_COL].to_pylist() == [False, False]


def test_partial_update_commit_time_like_overwrite_non_defaults() -> None:
    stored = partial_base(("1", 9, "name_1", "price_1"))
    new = partial_incoming(("1", 1, None, "price_2", False))
    out = merge_file_group(PARTIAL_COMMIT, stored, new)
    assert rows_of(out.table) == [("1", 1, "name_1", "price_2")]  # no ordering: later write wins
    # Inside a batch too: the later record's nulls keep the earlier values.
    batch = partial_incoming(
        ("2", 1, "a", None, False), ("2", None, None, "b", False), ("2", 3, None, None, False)
    )
    assert rows_of(precombine(PARTIAL_COMMIT, batch)) == [("2", 3, "a", "b")]
    # An insert has nothing to fill from.
    assert rows_of(merge_file_group(PARTIAL_COMMIT, None, batch).table) == [("2", 3, "a", "b")]


def test_partial_update_deletes() -> None:
    stored = partial_base(("1", 5, "n1", None), ("2", 5, "n2", None), ("3", 5, "n3", None))
    new = partial_incoming(
        ("1", 4, "x", "p", True),  # an older delete loses and fills nothing
        ("2", None, "x", "p", True),  # a natural-order delete wins
        ("3", 6, None, None, True),  # a newer delete wins
    )
    out = merge_file_group(PARTIAL, stored, new)
    assert rows_of(out.table) == [("1", 5, "n1", None)]
    assert counts(out) == (0, 0, 2, 1)
    # In a batch: a record after a winning delete starts from nothing...
    batch = partial_incoming(
        ("a", 1, "n", "p", False), ("a", 2, None, None, True), ("a", 3, None, "q", False)
    )
    assert rows_of(precombine(PARTIAL, batch)) == [("a", 3, None, "q")]
    # ...a record that loses to a delete is dropped, and the delete's own values never fill.
    batch = partial_incoming(
        ("a", 1, "n", "p", False), ("a", 5, "d", "d", True), ("a", 3, "x", None, False)
    )
    out_batch = precombine(PARTIAL, batch)
    assert rows_of(out_batch) == [("a", 5, "d", "d")] and out_batch[DELETE_COL].to_pylist() == [
        True
    ]
    batch = partial_incoming(("a", 5, None, "p", False), ("a", 1, "x", "y", True))
    assert rows_of(precombine(PARTIAL, batch)) == [("a", 5, None, "p")]


def test_partial_update_out_of_order_rows_of_one_writer() -> None:
    """The documented limit of one ordering field: a value is guarded by the row's ordering.

    a1 (ts 1) and a2 (ts 3) update ``name``; b (ts 5) updates ``price``. When a2
    arrives after b, the stored row's ordering value is 5, so a2 loses and only
    fills nulls: ``name`` keeps a1's value (as Hudi's PartialUpdateAvroPayload).
    Sequence groups give every writer its own ordering column instead
    (``test_merge_properties.test_three_writers_with_sequence_groups``).
    """
    a1 = ("k", 1, "a1", None, False)
    b = ("k", 5, None, "b", False)
    a2 = ("k", 3, "a2", None, False)
    state = merge_file_group(PARTIAL, None, partial_incoming(a1)).table
    state = merge_file_group(PARTIAL, state, partial_incoming(b)).table
    state = merge_file_group(PARTIAL, state, partial_incoming(a2)).table
    assert rows_of(state) == [("k", 5, "a1", "b")]
    # A batch reduced first compares a2 with b inside the batch: a2 fills name.
    state = merge_file_group(PARTIAL, None, partial_incoming(a1)).table
    merged = merge_file_group(PARTIAL, state, precombine(PARTIAL, partial_incoming(b, a2)))
    assert rows_of(merged.table) == [("k", 5, "a2", "b")]


def test_partial_update_never_fills_meta_columns_and_unifies_columns() -> None:
    stored = partial_base(("1", 1, "n", "p"))
    new = partial_incoming(("1", 2, None, None, False)).drop_columns(["price"])
    out = merge_file_group(PARTIAL, stored, new)
    row = out.table.to_pylist()[0]
    assert (row["name"], row["price"]) == ("n", "p")  # a column incoming lacks is kept
    assert row["_hoodie_commit_time"] is None and row["_hoodie_file_name"] is None


def test_three_writers_of_one_wide_table() -> None:
    """A: id, name; B: id, age; C: id, sex -- a union of partial rows, any order."""
    spec = MergeSpec(COMMIT_TIME_ORDERING, None, partial_update=True)

    def rows(*recs: tuple[int, str | None, int | None, str | None]) -> pa.Table:
        return pa.table(
            {
                "_hoodie_record_key": [str(r[0]) for r in recs],
                "_hoodie_partition_path": [""] * len(recs),
                "id": pa.array([r[0] for r in recs], pa.int64()),
                "name": pa.array([r[1] for r in recs], pa.string()),
                "age": pa.array([r[2] for r in recs], pa.int64()),
                "sex": pa.array([r[3] for r in recs], pa.string()),
                SEQ_COL: pa.array(range(len(recs)), pa.int64()),
            }
        )

    batch1 = rows((1, None, 30, None), (2, "bo", None, None), (1, "al", None, None))
    batch2 = rows((1, None, None, "f"), (2, None, None, "m"), (1, None, 31, None))
    state = merge_file_group(spec, None, precombine(spec, batch1)).table
    state = merge_file_group(spec, state, precombine(spec, batch2)).table
    got = sorted((r["id"], r["name"], r["age"], r["sex"]) for r in state.to_pylist())
    assert got == [(1, "al", 31, "f"), (2, "bo", None, "m")]


# --- sequence groups ------------------------------------------------------------------------

GROUPS = MergeSpec(
    EVENT_TIME_ORDERING, "ts", sequence_groups=parse_sequence_groups("ga:a1,a2;gb:b")
)


def grouped(*rows: dict[str, Any]) -> pa.Table:
    cols = ("ts", "v", "ga", "a1", "a2", "gb", "b")
    return pa.table(
        {
            "_hoodie_record_key": [r.get("k", "k") for r in rows],
            "_hoodie_partition_path": ["p"] * len(rows),
            **{c: pa.array([r.get(c) for r in rows], pa.int64()) for c in cols},
            SEQ_COL: pa.array(range(len(rows)), pa.int64()),
            DELETE_COL: [r.get("del", False) for r in rows],
        }
    )


def values(table: pa.Table) -> list[dict[str, Any]]:
    keep = ("ts", "v", "ga", "a1", "a2", "gb", "b")
    return [{c: r[c] for c in keep} for r in table.to_pylist()]


def test_sequence_groups_update_independently() -> None:
    batch = grouped(
        {"ts": 5, "v": 1, "ga": 1, "a1": 10, "a2": 11, "gb": 1, "b": 100},
        {"ts": 1, "v": 2, "ga": 2, "a1": 20, "a2": None},  # loses the record, wins group a
        {"ts": 9, "v": 3, "ga": 1, "a1": 30, "gb": 0, "b": 300},  # wins the record, no group
        {"ts": 2, "v": 4, "gb": 1, "b": 400},  # a tie on gb: the later write wins
    )
    out = precombine(GROUPS, batch)
    # ga=2's values, nulls included; v follows the record level (ts 9).
    assert values(out) == [{"ts": 9, "v": 3, "ga": 2, "a1": 20, "a2": None, "gb": 1, "b": 400}]


def test_sequence_groups_null_ordering_does_not_update_the_group() -> None:
    batch = grouped({"ts": 1, "v": 1, "a1": 10, "a2": 11, "b": 5})
    # A new key: its groups have no ordering value, so they start empty.
    assert values(precombine(GROUPS, batch)) == [
        {"ts": 1, "v": 1, "ga": None, "a1": None, "a2": None, "gb": None, "b": None}
    ]
    stored = merge_file_group(
        GROUPS, None, grouped({"ts": 1, "v": 1, "ga": 3, "a1": 1, "a2": 2, "gb": 3, "b": 3})
    ).table.drop_columns([CHANGED_COL])
    out = merge_file_group(GROUPS, stored, grouped({"ts": 2, "v": 2, "a1": 99, "gb": 4, "b": 4}))
    assert values(out.table) == [{"ts": 2, "v": 2, "ga": 3, "a1": 1, "a2": 2, "gb": 4, "b": 4}]
    # An older record (ts) still updates a group it carries a greater ordering value for.
    out = merge_file_group(GROUPS, stored, grouped({"ts": 0, "v": 9, "ga": 4, "a1": 7}))
    assert values(out.table) == [{"ts": 1, "v": 1, "ga": 4, "a1": 7, "a2": None, "gb": 3, "b": 3}]
    assert counts(out) == (0, 1, 0, 0) and out.table["_hoodie_commit_time"].to_pylist() == [None]
    # Nothing greater: unchanged.
    out = merge_file_group(GROUPS, stored, grouped({"ts": 0, "v": 9, "ga": 2, "a1": 7, "gb": 1}))
    assert counts(out) == (0, 0, 0, 1) and out.table[CHANGED_COL].to_pylist() == [False]


def test_sequence_groups_and_deletes() -> None:
    stored = merge_file_group(
        GROUPS, None, grouped({"ts": 5, "v": 1, "ga": 1, "a1": 1, "gb": 1, "b": 1})
    ).table.drop_columns([CHANGED_COL])
    # A delete that loses at record level does nothing, even with greater group values.
    out = merge_file_group(GROUPS, stored, grouped({"ts": 4, "ga": 9, "a1": 9, "del": True}))
    assert counts(out) == (0, 0, 0, 1)
    out = merge_file_group(GROUPS, stored, grouped({"ts": 6, "del": True}))
    assert counts(out) == (0, 0, 1, 0) and out.table.num_rows == 0
    # In a batch: after a winning delete the key starts over.
    batch = grouped(
        {"ts": 1, "v": 1, "ga": 5, "a1": 5},
        {"ts": 2, "del": True},
        {"ts": 3, "v": 3, "gb": 1, "b": 1},
    )
    assert values(precombine(GROUPS, batch)) == [
        {"ts": 3, "v": 3, "ga": None, "a1": None, "a2": None, "gb": 1, "b": 1}
    ]


def test_sequence_groups_with_partial_update_of_other_columns() -> None:
    spec = MergeSpec(
        EVENT_TIME_ORDERING,
        "ts",
        partial_update=True,
        sequence_groups=parse_sequence_groups("ga:a1,a2"),
    )
    batch = grouped(
        {"ts": 1, "v": 1, "ga": 2, "a1": 1, "a2": None, "b": 7},
        {"ts": 2, "v": None, "ga": 3, "a1": None, "a2": 2},
    )
    # Ungrouped columns merge partially; a group is replaced as a unit (its nulls too).
    assert values(precombine(spec, batch)) == [
        {"ts": 2, "v": 1, "ga": 3, "a1": None, "a2": 2, "gb": None, "b": 7}
    ]


# --- changelog ------------------------------------------------------------------------------


def changes(table: pa.Table) -> list[tuple[Any, ...]]:
    return [
        (r["_hoodie_operation"], r["_hoodie_record_key"], r["ts"], r["v"], r[SEQ_COL])
        for r in table.to_pylist()
    ]


def test_changelog_rows_event_time() -> None:
    stored = base(("a", 5, "A"), ("b", 5, "B"), ("c", 5, "C"))
    new = incoming(
        ("a", 6, "a1", False),  # update: -U, U
        ("a", 1, "old", False),  # loses: nothing
        ("b", None, "x", True),  # natural-order delete of an existing key: D
        ("b", 0, "b2", False),  # the key comes back: I
        ("c", 9, "x", True),  # a delete with an ordering value: D
        ("c", 8, "c2", False),  # loses to that delete: nothing
        ("n", 1, "n1", False),  # a new key: I
        ("n", 2, "n2", False),  # then updated within the batch: -U, U
        ("n", None, "x", True),  # natural-order delete: D
        ("z", None, "x", True),  # delete of an unknown key: nothing
    )
    out = changelog_rows(EVENT, stored, new)
    assert out.column_names == [*META_COLUMNS, OPERATION_COL, "ts", "v", SEQ_COL]
    assert changes(out) == [
        ("-U", "a", 5, "A", 0),
        ("U", "a", 6, "a1", 0),
        ("D", "b", 5, "B", 2),
        ("I", "b", 0, "b2", 3),
        ("D", "c", 5, "C", 4),
        ("I", "n", 1, "n1", 6),
        ("-U", "n", 1, "n1", 7),
        ("U", "n", 2, "n2", 7),
        ("D", "n", 2, "n2", 8),
    ]
    # The before image of a stored row carries its meta columns; after images the incoming ones.
    assert out["_hoodie_commit_time"].to_pylist()[:2] == ["c0", None]
    assert changelog_rows(EVENT, None, incoming()).num_rows == 0


def test_changelog_rows_commit_time_and_duplicate_base_rows() -> None:
    stored = base(("a", 1, "A1"), ("a", 1, "A2"))
    out = changelog_rows(COMMIT, stored, incoming(("a", 0, "a1", False)))
    assert changes(out) == [
        ("-U", "a", 1, "A1", 0),
        ("U", "a", 0, "a1", 0),
        ("-U", "a", 1, "A2", 0),
        ("U", "a", 0, "a1", 0),
    ]
    with pytest.raises(SchemaError, match="ordering field 'nope'"):
        changelog_rows(
            MergeSpec(EVENT_TIME_ORDERING, "nope"), stored, incoming(("a", 1, "x", False))
        )


def test_changelog_rows_partial_update_emits_fills() -> None:
    stored = partial_base(("1", 5, "n", None))
    new = partial_incoming(("1", 1, "x", "p", False), ("1", 2, "y", "q", False))
    out = changelog_rows(PARTIAL, stored, new)
    got = [(r[OPERATION_COL], r["ts"], r["name"], r["price"]) for r in out.to_pylist()]
    # The first record fills price (stored row wins); the second changes nothing.
    assert got == [("-U", 5, "n", None), ("U", 5, "n", "p")]


def test_changelog_natural_delete_then_record() -> None:
    """The documented difference between a changelog and the collapsed merge."""
    stored = base(("a", 5, "A"))
    new = incoming(("a", None, "x", True), ("a", 1, "a1", False))
    # Record at a time: the natural-order delete removes the row, the record re-inserts it.
    assert changes(changelog_rows(EVENT, stored, new)) == [
        ("D", "a", 5, "A", 0),
        ("I", "a", 1, "a1", 1),
    ]
    # Collapsed (as Hudi): the batch's winner (ts 1) is compared with the stored row (ts 5).
    assert picked(merge_file_group(EVENT, stored, precombine(EVENT, new)).table) == [("a", 5, "A")]
