"""A write's settings, resolved once from its options (issue 28, options resolved once).

``resolve_write_config`` lays the caller's options over the table's properties and stored
write defaults, parses them into a frozen ``WriteConfig`` and refuses a bad value by key;
the record size estimate (which reads commit metadata) is computed on first use, once.
tests/spark/test_write_config_once.py counts the resolutions of real writes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.create import create_table
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata
from hudilite.write import write_config
from hudilite.write.assign import RecordSizeSettings
from hudilite.write.lock import LockConfig
from hudilite.write.transaction import WriteTransaction
from hudilite.write.write_config import resolve_write_config

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


def state(path: Path, **options: str) -> TableState:
    gw = FileSystemGateway(str(path))
    create_table(gw, SCHEMA, record_key="id", ordering_field="ts", options=options)
    return TableState.load(gw)


def test_call_options_over_the_tables_parsed_once(tmp_path: Path) -> None:
    s = state(tmp_path / "t", **{"hoodie.index.type": "GLOBAL_BLOOM"})
    wc = resolve_write_config(
        s,
        {
            "hoodie.parquet.max.file.size": "2048",
            "hoodie.parquet.small.file.limit": "1000",
            "hoodie.copyonwrite.record.size.estimate": "64",
            "hoodie.client.heartbeat.interval_in_ms": "5000",
            "hoodie.bloom.index.update.partition.path": "false",
        },
    )
    assert (wc.index.kind, wc.index.is_global, wc.index.update_partition_path) == (
        "BLOOM",
        True,
        False,
    )
    assert (wc.max_file_size, wc.small_file_limit, wc.heartbeat_interval_ms) == (2048, 1000, 5000)
    assert wc.record_size == RecordSizeSettings(
        estimate=64, max_commits=5, metadata_size=0, threshold=1000
    )
    assert wc.options.raw["hoodie.parquet.max.file.size"] == "2048"
    # The key generator and merge rules: the table's, built once.
    assert (wc.keygen.kind, wc.keygen.record_key_fields) == ("NON_PARTITION", ("id",))
    assert (wc.merge_spec.ordering_field, wc.merge_spec is wc.merge_spec) == ("ts", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        wc.max_file_size = 1  # type: ignore[misc]
    # The empty payload's upsert drops the payload and keeps what was resolved.
    over = resolve_write_config(
        s, {cfg.PAYLOAD_CLASS.name: "org.apache.hudi.common.model.EmptyHoodieRecordPayload"}
    )
    assert (over.empty_payload, wc.empty_payload) == (True, False)
    dropped = over.without_payload()
    assert (dropped.index, dropped.empty_payload) == (over.index, False)
    assert dropped.options.get(cfg.PAYLOAD_CLASS) is None


def test_bad_value_refused_by_key(tmp_path: Path) -> None:
    s = state(tmp_path / "t")
    with pytest.raises(ConfigError) as err:
        resolve_write_config(s, {"hoodie.client.heartbeat.interval_in_ms": "soon"})
    assert str(err.value) == (
        "invalid value 'soon' for option 'hoodie.client.heartbeat.interval_in_ms': "
        "not an integer: 'soon'"
    )


def test_record_size_estimate_computed_once_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = state(tmp_path / "t")
    calls: list[RecordSizeSettings] = []

    def estimate(st: TableState, sizes: RecordSizeSettings) -> int:
        calls.append(sizes)
        return 77

    monkeypatch.setattr(write_config, "avg_record_size", estimate)
    wc = resolve_write_config(s, {"hoodie.copyonwrite.record.size.estimate": "77"})
    assert calls == []  # a write that packs no inserts never reads commit metadata
    assert (wc.avg_record_size, wc.avg_record_size, len(calls)) == (77, 77, 1)
    # No commit yet: Hudi's configured estimate.
    monkeypatch.undo()
    assert (
        resolve_write_config(s, {"hoodie.copyonwrite.record.size.estimate": "77"}).avg_record_size
        == 77
    )
    with pytest.raises(ConfigError, match="needs the table"):
        _ = resolve_write_config(None, {}).avg_record_size


def test_lock_settings_resolved_once_and_every_lock_of_the_write_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = state(tmp_path / "t")
    wc = resolve_write_config(
        s, {"hoodie.write.lock.wait_time_ms": "1234", "hoodie.write.lock.num_retries": "2"}
    )
    assert wc.lock is not None
    assert (wc.lock.wait_ms, wc.lock.num_retries) == (1234, 2)
    assert wc.lock == LockConfig.resolve(s.gw, wc.options)
    assert LockConfig.resolve(s.gw, wc.lock) is wc.lock
    assert resolve_write_config(None, {}).lock is None  # no table: its locks read the table's
    with pytest.raises(ConfigError, match=r"'hoodie\.write\.lock\.num_retries'"):
        resolve_write_config(s, {"hoodie.write.lock.num_retries": "-1"})

    # The transaction's locks (fail-fast wait, rollback of failed writes, commit) get the
    # resolved settings: no lock option string is parsed again.
    parsed: list[object] = []
    resolve = LockConfig.resolve.__func__  # type: ignore[attr-defined]

    def counting(cls: type[LockConfig], gw: FileSystemGateway, options: object = None) -> object:
        if not isinstance(options, LockConfig):
            parsed.append(options)
        return resolve(cls, gw, options)

    monkeypatch.setattr(LockConfig, "resolve", classmethod(counting))
    with WriteTransaction(s.gw, s.config, COMMIT, lock_options=wc.options, lock=wc.lock) as txn:
        done = txn.commit(CommitMetadata(operation_type="INSERT"))
    assert parsed == []
    assert TableState.load(s.gw).timeline.completed()[-1].requested_time == done.requested_time


def test_write_job_switches_resolved_at_the_door(tmp_path: Path) -> None:
    # The switches the write job, the insert de-duplication and the null-ordering check
    # read: typed fields, the defaults first, then each set by its key (aliases included).
    s = state(tmp_path / "t")
    wc = resolve_write_config(s, {})
    assert (
        wc.empty_payload,
        wc.delete_field,
        wc.delete_marker,
        wc.combine_before_insert,
        wc.insert_dup_policy,
        wc.null_ordering,
        wc.log_block_format,
        wc.key_conflict_check,
        wc.native_keys,
        wc.index_type,
    ) == (False, None, None, False, "none", "warn", "avro", True, True, "SIMPLE")
    wc = resolve_write_config(
        s,
        {
            "hoodie.payload.delete.field": "op",
            "hoodie.payload.delete.marker": "D",
            "hoodie.combine.before.insert": "true",
            "hoodie.datasource.insert.dup.policy": "FAIL",
            "hoodie.hudilite.write.null.ordering.value": "allow",
            "hoodie.logfile.data.block.format": "parquet",
            "hoodie.hudilite.write.conflict.check.keys": "false",
            "hudilite.keygen.native": "false",
            "hoodie.index.type": "global_bloom",
        },
    )
    assert (
        wc.delete_field,
        wc.delete_marker,
        wc.combine_before_insert,
        wc.insert_dup_policy,
        wc.null_ordering,
        wc.log_block_format,
        wc.key_conflict_check,
        wc.native_keys,
        wc.index_type,
    ) == ("op", "D", True, "fail", "allow", "parquet", False, False, "GLOBAL_BLOOM")
    # Hudi's older spelling of the drop policy feeds the policy.
    dropping = {"hoodie.datasource.write.insert.drop.duplicates": "true"}
    assert resolve_write_config(s, dropping).insert_dup_policy == "drop"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.hudilite.write.null.ordering.value", "ignore"),
        ("hoodie.datasource.insert.dup.policy", "skip"),
        ("hoodie.logfile.data.block.format", "orc"),
        ("hoodie.combine.before.insert", "maybe"),
        ("hoodie.hudilite.write.conflict.check.keys", "2"),
    ],
)
def test_bad_write_job_switch_refused_by_key(tmp_path: Path, key: str, value: str) -> None:
    s = state(tmp_path / "t")
    with pytest.raises(ConfigError) as err:
        resolve_write_config(s, {key: value})
    message = str(err.value)
    assert message.startswith(f"invalid value {value!r} for option {key!r}: ")
    assert "\n" not in message
