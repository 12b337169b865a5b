"""CDC payload rules without a JVM (issue 30): what each payload class configures, how MySQL
binlog positions compare, which records are deletes, and what is refused."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.config import Options, TableConfig
from hudilite.errors import ConfigError, SchemaError
from hudilite.merge import MergeSpec, merge_file_group, precombine
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
