"""CDC payload rules without a JVM (issue 30): what each payload class configures, how MySQL
binlog positions compare, which records are deletes, and what is refused."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.config import Options, TableConfig
from hudilite.errors import ConfigError, SchemaError
from hudilite.merge import MergeSpec, merge_file_group, precombine
from hudilite.read.file_group_reader import _delete_rows
from hudilite.storage.log_format import DeleteKey, decode_deletes, delete_block
from hudilite.write.keying import KeyingSpec, delete_flags

PG = "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload"
MYSQL = "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload"
DMS = "org.apache.hudi.common.model.AWSDmsAvroPayload"
STRATEGY = "hoodie.record.merge.strategy.id"


def table(version: int, payload: str, ordering: tuple[str, ...] = ()) -> TableConfig:
    return TableConfig.new(
        "t", table_version=version, record_key_fields=("id",), ordering_fields=ordering,
        payload_class=payload,
    )  # fmt: skip


def test_payload_classes_are_recorded_as_each_versions_hudi_records_them() -> None:
    v6 = table(6, "PostgresDebeziumAvroPayload").to_properties()
    assert v6["hoodie.compaction.payload.class"] == PG
    assert v6["hoodie.table.precombine.field"] == "_event_lsn"
    assert "hoodie.record.merge.mode" not in v6 and STRATEGY not in v6
    v8 = table(8, MYSQL).to_properties()
    assert (v8["hoodie.record.merge.mode"], v8[STRATEGY]) == (
        "CUSTOM",
        "00000000-0000-0000-0000-000000000000",
    )
    assert v8["hoodie.table.precombine.field"] == "_event_seq"
    dms = table(8, "AWSDmsAvroPayload").to_properties()
    assert dms["hoodie.compaction.payload.class"] == DMS
    assert "hoodie.table.precombine.field" not in dms
    default = table(8, "DefaultHoodieRecordPayload", ("ts",)).to_properties()
    assert default["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert default["hoodie.compaction.payload.class"].endswith(".DefaultHoodieRecordPayload")
    # Read back, the CUSTOM table merges like its payload.
    spec = MergeSpec.from_config(TableConfig.from_properties(v8))
    assert (spec.mode, spec.ordering_field, spec.binlog_seq) == (
        "EVENT_TIME_ORDERING",
        "_event_seq",
        True,
    )
    assert (spec.delete_field, spec.delete_marker) == ("_change_operation_type", "d")


def test_a_debezium_table_with_another_ordering_field_is_refused() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^payload PostgresDebeziumAvroPayload orders by '_event_lsn', but the "
        r"ordering \(precombine\) field is 'ts'$",
    ):
        MergeSpec.from_config(table(6, PG, ("ts",)))


def rec(key: str, seq: str, name: str, op: str, s: int) -> dict:
    return {
        "_hoodie_record_key": key, "id": int(key), "name": name, "_event_seq": seq,
        "_change_operation_type": op, "_hl_seq": s, "_hl_delete": op.lower() == "d",
    }  # fmt: skip


def test_mysql_positions_compare_as_file_then_position_numbers() -> None:
    spec = MergeSpec.from_config(table(6, MYSQL))
    # As text "0.8" > "0.10" and "9.5" > "10.1"; as binlog positions both are older.
    batch = pa.Table.from_pylist(
        [rec("1", "0.10", "new", "u", 0), rec("1", "0.8", "old", "u", 1),
         rec("2", "10.1", "new", "u", 2), rec("2", "9.5", "old", "u", 3)]
    )  # fmt: skip
    assert precombine(spec, batch)["name"].to_pylist() == ["new", "new"]
    stored = pa.Table.from_pylist([rec("1", "0.10", "stored", "c", 0)]).drop_columns(
        ["_hl_seq", "_hl_delete"]
    )
    older_delete = pa.Table.from_pylist([rec("1", "0.9", None, "d", 1)])
    assert merge_file_group(spec, stored, older_delete).table["name"].to_pylist() == ["stored"]
    newer_delete = pa.Table.from_pylist([rec("1", "1.0", None, "D", 1)])
    assert merge_file_group(spec, stored, newer_delete).table.num_rows == 0
    bad = pa.Table.from_pylist([rec("1", "mysql-bin.000003", "x", "u", 1)])
    with pytest.raises(
        SchemaError,
        match=r"^ordering field '_event_seq' holds 'mysql-bin.000003', not a MySQL binlog "
        r"position '<file number>.<position>'$",
    ):
        merge_file_group(spec, stored, bad)


def test_cdc_deletes_ignore_case_and_honour_is_deleted() -> None:
    batch = pa.table(
        {
            "Op": ["I", "d", "D", "U", None],
            "_hoodie_is_deleted": [False, False, False, True, None],
        }
    )
    spec = MergeSpec.from_config(table(6, DMS))
    assert (spec.delete_field, spec.delete_marker, spec.cdc_deletes) == ("Op", "D", True)
    expected = [False, True, True, True, False]
    assert spec.mark_deletes(batch)["_hl_delete"].to_pylist() == expected
    keying = KeyingSpec(keygen=None, delete_field="Op", delete_marker="D", cdc_deletes=True)  # type: ignore[arg-type]
    assert delete_flags(keying, batch).to_pylist() == expected
    # DefaultHoodieRecordPayload's custom marker stays exact, and alone.
    default = MergeSpec.from_config(
        table(6, "DefaultHoodieRecordPayload", ("ts",)),
        Options({"hoodie.payload.delete.field": "Op", "hoodie.payload.delete.marker": "D"}),
    )
    assert not default.cdc_deletes
    assert default.mark_deletes(batch)["_hl_delete"].to_pylist() == [
        False, False, True, False, False,
    ]  # fmt: skip


def test_postgres_toast_placeholders_are_refused_before_anything_merges() -> None:
    spec = MergeSpec.from_config(table(6, PG))
    batch = pa.table(
        {
            "_hoodie_record_key": ["1"],
            "id": [1],
            "body": ["__debezium_unavailable_value"],
            "_event_lsn": [5],
            "_change_operation_type": ["u"],
        }
    )
    with pytest.raises(
        ConfigError,
        match=r"^column 'body' holds Debezium's TOAST placeholder "
        r"'__debezium_unavailable_value': hudilite does not merge unchanged TOAST values",
    ):
        precombine(spec, batch)


def test_v9_postgres_table_is_hudi_11s_mapping_and_fills_unavailable_values() -> None:
    props = table(9, PG, ("ts",)).to_properties()
    v9 = {k: v for k, v in props.items() if "merge" in k or "payload" in k or "order" in k}
    v9 |= {k: v for k, v in props.items() if "partial" in k or "precombine" in k}
    assert v9 == {  # EightToNineUpgradeHandler's change set for this payload
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.table.legacy.payload.class": PG,
        "hoodie.table.partial.update.mode": "FILL_UNAVAILABLE",
        "hoodie.record.merge.property.partial.update.unavailable.value": (
            "__debezium_unavailable_value"
        ),
        "hoodie.record.merge.property.hoodie.payload.delete.field": "_change_operation_type",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "d",
        "hoodie.table.ordering.fields": "_event_lsn",  # the payload's, whatever was given
    }
    spec = MergeSpec.from_config(TableConfig.from_properties(props))
    assert (spec.mode, spec.ordering_field, spec.partial_update, spec.toast_check) == (
        "EVENT_TIME_ORDERING", "_event_lsn", True, False,
    )  # fmt: skip
    toast = "__debezium_unavailable_value"

    def pg(key: int, body: str | None, name: str | None, lsn: int, op: str, s: int) -> dict:
        return {
            "_hoodie_record_key": str(key), "id": key, "body": body, "name": name,
            "_event_lsn": lsn, "_change_operation_type": op, "_hl_seq": s,
            "_hl_delete": op == "d",
        }  # fmt: skip

    def data(t: pa.Table) -> list[tuple]:
        return sorted(
            zip(*(t[c].to_pylist() for c in ("id", "body", "name", "_event_lsn")), strict=True)
        )

    stored = pa.Table.from_pylist(
        [pg(1, "long", "a", 10, "c", 0), pg(2, "text", "b", 10, "c", 1)]
    ).drop_columns(["_hl_seq", "_hl_delete"])
    incoming = pa.Table.from_pylist(
        [
            pg(1, toast, None, 20, "u", 0),  # TOAST unchanged: the stored body; null name
            pg(2, toast, "b-old", 5, "u", 1),  # older: loses
            pg(3, toast, "c", 7, "c", 2),  # new key: nothing to fill from, kept as sent
        ]
    )
    merged = merge_file_group(spec, stored, incoming).table
    assert data(merged) == [(1, "long", None, 20), (2, "text", "b", 10), (3, toast, "c", 7)]
    # In one batch: a later record's unavailable body takes the earlier record's.
    batch = pa.Table.from_pylist(
        [pg(4, "v1", "d", 20, "u", 0), pg(4, toast, "d2", 25, "u", 1), pg(5, "x", "e", 3, "d", 2)]
    )
    assert data(precombine(spec, batch)) == [(4, "v1", "d2", 25), (5, "x", "e", 3)]
    alone = pa.Table.from_pylist([pg(6, toast, "f", 1, "u", 0)])  # nothing to fill it from
    assert data(precombine(spec, alone)) == [(6, toast, "f", 1)]
    deleted = merge_file_group(spec, stored, pa.Table.from_pylist([pg(1, None, None, 30, "d", 0)]))
    assert data(deleted.table) == [(2, "text", "b", 10)]


def my(key: int, file: str, pos: int, v: str, op: str, s: int) -> dict:
    return {
        "_hoodie_record_key": str(key), "id": key, "v": v, "_event_bin_file": file,
        "_event_pos": pos, "_change_operation_type": op, "_hl_seq": s, "_hl_delete": op == "d",
    }  # fmt: skip


def test_v9_mysql_table_orders_by_binlog_file_then_position() -> None:
    props = table(9, MYSQL, ("ts",)).to_properties()
    v9 = {k: v for k, v in props.items() if "merge" in k or "payload" in k or "order" in k}
    v9 |= {k: v for k, v in props.items() if "partial" in k or "precombine" in k}
    assert v9 == {  # EightToNineUpgradeHandler's change set for this payload
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.table.legacy.payload.class": MYSQL,
        "hoodie.record.merge.property.hoodie.payload.delete.field": "_change_operation_type",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "d",
        "hoodie.table.ordering.fields": "_event_bin_file,_event_pos",  # whatever was given
    }
    config = TableConfig.from_properties(props)
    assert config.unsupported_features() == []
    spec = MergeSpec.from_config(config)
    assert (spec.mode, spec.ordering_field, spec.binlog_pos_field, spec.binlog_seq) == (
        "EVENT_TIME_ORDERING", "_event_bin_file", "_event_pos", False,
    )  # fmt: skip
    assert (spec.delete_field, spec.delete_marker) == ("_change_operation_type", "d")

    def data(t: pa.Table) -> list[tuple]:
        cols = ("id", "v", "_event_bin_file", "_event_pos")
        return sorted(zip(*(t[c].to_pylist() for c in cols), strict=True))

    b9, b10 = "mysql-bin.000009", "mysql-bin.000010"
    stored = pa.Table.from_pylist(
        [my(1, b9, 1000, "a", "c", 0), my(2, b9, 50, "b", "c", 1), my(3, b10, 4, "c", "c", 2)]
    ).drop_columns(["_hl_seq", "_hl_delete"])
    incoming = pa.Table.from_pylist(
        [
            my(1, b9, 900, "a-old", "u", 0),  # 900 < 1000 as numbers ("900" > "1000" as text)
            my(2, b10, 1, "b2", "u", 1),  # a later file wins at any position
            my(3, b9, 99999, "c-old", "d", 2),  # an older delete loses
        ]
    )
    merged = merge_file_group(spec, stored, incoming).table
    assert data(merged) == [(1, "a", b9, 1000), (2, "b2", b10, 1), (3, "c", b10, 4)]
    # In one batch, out of order: the greatest pair wins, a later delete removes the key.
    batch = pa.Table.from_pylist(
        [
            my(4, b10, 7, "d2", "u", 0), my(4, b9, 8, "d1", "c", 1),
            my(5, b9, 8, "e1", "c", 2), my(5, b9, 9, "e", "d", 3),
        ]
    )  # fmt: skip
    combined = precombine(spec, batch)
    assert [(r["id"], r["v"], r["_hl_delete"]) for r in combined.to_pylist()] == [
        (4, "d2", False),
        (5, "e", True),
    ]
    deleted = merge_file_group(spec, stored, pa.Table.from_pylist([my(2, b9, 51, "", "d", 0)]))
    assert data(deleted.table) == [(1, "a", b9, 1000), (3, "c", b10, 4)]
    with pytest.raises(SchemaError, match=r"^ordering field '_event_pos' holds -1, not a binlog"):
        precombine(spec, pa.Table.from_pylist([my(6, b9, -1, "f", "c", 0)]))
    with pytest.raises(SchemaError, match=r"^ordering field '_event_pos' is not in the records$"):
        precombine(
            spec, pa.Table.from_pylist([my(6, b9, 1, "f", "c", 0)]).drop_columns("_event_pos")
        )


def test_other_ordering_field_pairs_stay_refused_by_name() -> None:
    props = table(9, "DefaultHoodieRecordPayload", ("a", "b")).to_properties()
    config = TableConfig.from_properties(props)
    assert config.unsupported_features() == [
        "hoodie.table.ordering.fields='a,b' (hudilite orders records by one field, or by "
        "MySqlDebeziumAvroPayload's _event_bin_file,_event_pos)"
    ]
    with pytest.raises(
        ConfigError,
        match=r"^several ordering fields \['a', 'b'\] are not supported; use one \(or "
        r"MySqlDebeziumAvroPayload's _event_bin_file,_event_pos\)$",
    ):
        MergeSpec.from_config(config)


def test_a_delete_block_holds_the_pair_and_reads_back_as_both_fields() -> None:
    spec = MergeSpec.from_config(TableConfig.from_properties(table(9, MYSQL).to_properties()))
    keys = [DeleteKey("7", "", ("mysql-bin.000003", 12), ("StringWrapper", "LongWrapper"))]
    back = decode_deletes(delete_block(keys, "20260101000000000").content)
    assert [(k.ordering_value, k.wrapper) for k in back] == [
        (("mysql-bin.000003", 12), ("StringWrapper", "LongWrapper"))
    ]
    schema = pa.schema([("_event_bin_file", pa.string()), ("_event_pos", pa.int64())])
    rows = _delete_rows(back, spec, schema)
    assert rows.select(["_event_bin_file", "_event_pos"]).to_pylist() == [
        {"_event_bin_file": "mysql-bin.000003", "_event_pos": 12}
    ]
    with pytest.raises(SchemaError, match=r"^delete block ordering value 5 is not the pair"):
        _delete_rows([DeleteKey("7", "", 5, "LongWrapper")], spec, schema)
