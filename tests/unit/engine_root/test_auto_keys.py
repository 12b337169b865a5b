"""Keyless tables without Spark (hudilite/auto_keys.py): what hoodie.properties records,
the pending keys the keying step gives, their completion with the instant by the file
writers' conform step, and the refusal of an upsert."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudilite import config as cfg
from hudilite.auto_keys import (
    PENDING_MARK,
    STORED_KEY_COL,
    check_operation,
    pending_keys,
    stamp_keys,
)
from hudilite.errors import ConfigError, KeyGenerationError
from hudilite.keygen import KeyGenSpec, record_keys
from hudilite.merge import MergeSpec
from hudilite.schema import RECORD_KEY_COL, SEQ_COL, with_meta_columns
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.create import create_table
from hudilite.write.keying import KeyingSpec, key_batch
from hudilite.write.write_context import WriteContext, conform

SCHEMA = pa.schema([("msg", pa.string()), ("day", pa.string())])


def _props(root: Path) -> dict[str, str]:
    return cfg.parse_properties((root / ".hoodie/hoodie.properties").read_text())


@pytest.mark.parametrize(
    ("version", "partition_by", "keygen"),
    [
        (
            6,
            ["day"],
            ("hoodie.table.keygenerator.class", "org.apache.hudi.keygen.SimpleKeyGenerator"),
        ),
        (
            6,
            [],
            (
                "hoodie.table.keygenerator.class",
                "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            ),
        ),
        (8, ["day"], ("hoodie.table.keygenerator.type", "SIMPLE")),
        (8, [], ("hoodie.table.keygenerator.type", "NON_PARTITION")),
    ],
)
def test_a_keyless_table_records_no_record_key_field(
    tmp_path: Path, version: int, partition_by: list[str], keygen: tuple[str, str]
) -> None:
    # Hudi's AutoRecordKeyGenerationUtils recognises such a table by the absent
    # hoodie.table.recordkey.fields; the key generator (partition paths) is inferred as usual.
    root = tmp_path / "logs"
    config = create_table(
        FileSystemGateway(str(root)),
        SCHEMA,
        record_key=None,
        partition_by=partition_by,
        table_version=version,
    )
    props = _props(root)
    assert "hoodie.table.recordkey.fields" not in props
    assert props["hoodie.table.partition.fields"] == ",".join(partition_by)
    assert props[keygen[0]] == keygen[1]
    assert props["hoodie.populate.meta.fields"] == "true"
    assert config.record_key_fields == ()
    assert cfg.TableConfig.from_properties(properties_file.load(FileSystemGateway(str(root))))\
        .record_key_fields == ()  # fmt: skip


def test_pending_keys_come_from_the_write_order_and_take_the_instant() -> None:
    seq = pa.array([0, 1, (3 << 33) + 7], pa.int64())
    keys = pending_keys(seq)
    stamped = stamp_keys("20240101000000000", pa.table({RECORD_KEY_COL: keys, "v": [1, 2, 3]}))
    assert stamped[RECORD_KEY_COL].to_pylist() == [
        "20240101000000000_0_0",
        "20240101000000000_0_1",
        "20240101000000000_3_7",
    ]
    # Stored keys (a merged base file's rows, compaction, clustering) are left as they are.
    mixed = pa.table({RECORD_KEY_COL: pa.concat_arrays([pa.array(["20230101_0_5"]), keys[:1]])})
    assert stamp_keys("2024", mixed)[RECORD_KEY_COL].to_pylist() == ["20230101_0_5", "2024_0_0"]


def test_key_batch_and_conform_give_hudis_generated_keys(tmp_path: Path) -> None:
    spec = KeyingSpec(keygen=KeyGenSpec("SIMPLE", (), ("day",), hive_style=True))
    batch = pa.RecordBatch.from_pylist(
        [{"msg": "a", "day": "d1"}, {"msg": "b", "day": "d2"}], schema=SCHEMA
    )
    keyed = key_batch(spec, batch, 5 << 33)  # Spark partition 5, rows 0 and 1
    assert keyed.column(keyed.schema.get_field_index(SEQ_COL)).to_pylist() == [
        5 << 33,
        (5 << 33) + 1,
    ]
    ctx = WriteContext(
        gw=FileSystemGateway(str(tmp_path)),
        instant_time="20250102030405006",
        storage_schema=with_meta_columns(SCHEMA),
        merge_spec=MergeSpec(),
        operation="insert",
    )
    written = conform(ctx, pa.Table.from_batches([keyed]))
    assert written.to_pylist() == [
        {"_hoodie_commit_time": None, "_hoodie_commit_seqno": None,
         "_hoodie_record_key": "20250102030405006_5_0", "_hoodie_partition_path": "day=d1",
         "_hoodie_file_name": None, "msg": "a", "day": "d1"},
        {"_hoodie_commit_time": None, "_hoodie_commit_seqno": None,
         "_hoodie_record_key": "20250102030405006_5_1", "_hoodie_partition_path": "day=d2",
         "_hoodie_file_name": None, "msg": "b", "day": "d2"},
    ]  # fmt: skip
    with pytest.raises(ConfigError) as info:
        record_keys(spec.keygen, batch)
    assert str(info.value) == "the table has no record key field (its keys are generated)"


def test_an_upsert_into_a_keyless_table_is_refused_by_name(tmp_path: Path) -> None:
    config = create_table(FileSystemGateway(str(tmp_path / "logs")), SCHEMA, record_key=None)
    for op in ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table"):
        check_operation(config, op)
    with pytest.raises(ConfigError) as info:
        check_operation(config, "upsert")
    assert str(info.value) == (
        "table 'logs' has no record key (its keys are generated): upsert is not supported "
        "without the rows' _hoodie_record_key; use insert or bulk_insert"
    )
    # Rows read back with their stored keys (SQL UPDATE and DELETE) may upsert and delete.
    check_operation(config, "upsert", stored_keys=True)
    check_operation(config, "delete", stored_keys=True)
    with pytest.raises(ConfigError, match="delete is not supported without the rows'"):
        check_operation(config, "delete")
    keyed = create_table(FileSystemGateway(str(tmp_path / "t")), SCHEMA, record_key="msg")
    check_operation(keyed, "upsert")


def test_stored_keys_are_kept_a_null_one_is_new_an_empty_one_refused() -> None:
    spec = KeyingSpec(keygen=KeyGenSpec("NON_PARTITION", ()))
    schema = SCHEMA.append(pa.field(STORED_KEY_COL, pa.string()))
    batch = pa.RecordBatch.from_pylist(
        [
            {"msg": "a", "day": "d", STORED_KEY_COL: "2024_0_3"},
            {"msg": "b", "day": "d", STORED_KEY_COL: None},  # a keyless MERGE's insert
        ],
        schema=schema,
    )
    keyed = key_batch(spec, batch, 7)
    keys = keyed.column(keyed.schema.get_field_index(RECORD_KEY_COL)).to_pylist()
    assert keys == ["2024_0_3", PENDING_MARK + "0_8"]
    bad = pa.RecordBatch.from_pylist(
        [
            {"msg": "a", "day": "d", STORED_KEY_COL: "2024_0_3"},
            {"msg": "b", "day": "d", STORED_KEY_COL: ""},
        ],
        schema=schema,
    )
    with pytest.raises(KeyGenerationError) as info:
        key_batch(spec, bad, 0)
    assert str(info.value) == "_hoodie_record_key is empty in row 1"
