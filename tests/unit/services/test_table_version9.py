"""Table version 9 without Spark: the ``hoodie.properties`` hudilite creates (as Hudi 1.1
writes them), the 8 -> 9 and 9 -> 8 property changes of Hudi's handlers key by key, the
index definitions, the features refused by name before anything is written, and real
fixture tables changed between 8 and 9 reading the same rows in hudi-rs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.config import Options, TableConfig, parse_properties, render_properties
from hudilite.errors import ConfigError
from hudilite.merge import MergeSpec
from hudilite.services.upgrade import change_table_version, parse_table_version
from hudilite.services.upgrade_nine import (
    downgrade_index_defs,
    downgrade_properties,
    upgrade_index_defs,
    upgrade_properties,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT
from hudilite.timeline.timeline import TimelineWriter
from tests.conftest import FIXTURES, fixture_id, unzip_table
from tests.helpers import hudi_rs_read, rows

PKG = "org.apache.hudi.common.model."
EVENT_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
PAYLOAD_ID = "00000000-0000-0000-0000-000000000000"
NO_OPTS = Options({})

#: The keys of a v9 table hudilite creates that Hudi 1.1 writes too (v9_txns_*_nometa).
HUDI_KEYS = {
    "hoodie.table.name",
    "hoodie.table.type",
    "hoodie.table.version",
    "hoodie.table.initial.version",
    "hoodie.timeline.layout.version",
    "hoodie.table.recordkey.fields",
    "hoodie.table.ordering.fields",
    "hoodie.table.partition.fields",
    "hoodie.table.keygenerator.type",
    "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.datasource.write.partitionpath.urlencode",
    "hoodie.table.create.schema",
    "hoodie.database.name",
    "hoodie.record.merge.mode",
    "hoodie.timeline.path",
    "hoodie.timeline.history.path",
    "hoodie.archivelog.folder",
    "hoodie.datasource.write.drop.partition.columns",
    "hoodie.table.format",
    "hoodie.table.checksum",
}
#: What hudilite writes beyond Hudi 1.1's keys (Hudi's defaults, spelled out).
HUDILITE_EXTRA = {
    "hoodie.table.base.file.format": "PARQUET",
    "hoodie.populate.meta.fields": "true",
    "hoodie.table.timeline.timezone": "UTC",
}


def v9(**kw: object) -> TableConfig:
    args: dict = {"record_key_fields": ("id",), "table_version": 9, **kw}
    return TableConfig.new("t", **args)


def test_new_v9_table_has_the_keys_hudi_1_1_writes() -> None:
    c = v9(
        table_type="MERGE_ON_READ",
        partition_fields=("region",),
        ordering_fields=("ts",),
        hive_style=True,
        create_schema='{"type":"record"}',
    )
    assert c.to_properties() == {
        "hoodie.table.name": "t",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "9",
        "hoodie.table.initial.version": "9",
        "hoodie.timeline.layout.version": "2",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.ordering.fields": "ts",
        "hoodie.table.partition.fields": "region",
        "hoodie.table.keygenerator.type": "SIMPLE",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.create.schema": '{"type":"record"}',
        "hoodie.database.name": "default",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.archivelog.folder": "archived",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.format": "native",
        "hoodie.table.checksum": str(c.checksum),
    }
    assert set(c.to_properties()) == HUDI_KEYS | set(HUDILITE_EXTRA)
    # No ordering field: commit-time merging, still no strategy id nor payload class.
    plain = v9().to_properties()
    assert plain["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert not {"hoodie.record.merge.strategy.id", "hoodie.compaction.payload.class"} & set(plain)
    assert "hoodie.table.ordering.fields" not in plain


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="needs ../shared fixtures")
@pytest.mark.parametrize("kind", ["cow", "mor/avro"])
def test_fixture_v9_tables_have_the_same_keys(tmp_path: Path, kind: str) -> None:
    base = unzip_table(FIXTURES / "sample_table" / kind / "v9_txns_simple_nometa.zip", tmp_path)
    theirs = parse_properties((base / ".hoodie/hoodie.properties").read_text())
    assert set(theirs) == HUDI_KEYS
    ours = TableConfig.new(
        theirs["hoodie.table.name"],
        table_type=theirs["hoodie.table.type"],
        table_version=9,
        record_key_fields=("txn_id",),
        partition_fields=("region",),
        ordering_fields=("txn_ts",),
        hive_style=True,
        create_schema=theirs["hoodie.table.create.schema"],
    ).to_properties()
    assert {k: v for k, v in ours.items() if k not in HUDILITE_EXTRA} == theirs


@pytest.mark.parametrize(
    ("payload", "mode", "partial", "merge_props"),
    [
        ("DefaultHoodieRecordPayload", "EVENT_TIME_ORDERING", None, {}),
        ("EventTimeAvroPayload", "EVENT_TIME_ORDERING", None, {}),
        ("OverwriteWithLatestAvroPayload", "COMMIT_TIME_ORDERING", None, {}),
        ("PartialUpdateAvroPayload", "EVENT_TIME_ORDERING", "IGNORE_DEFAULTS", {}),
        (
            "OverwriteNonDefaultsWithLatestAvroPayload",
            "COMMIT_TIME_ORDERING",
            "IGNORE_DEFAULTS",
            {},
        ),
        (
            "AWSDmsAvroPayload",
            "COMMIT_TIME_ORDERING",
            None,
            {
                "hoodie.record.merge.property.hoodie.payload.delete.field": "Op",
                "hoodie.record.merge.property.hoodie.payload.delete.marker": "D",
            },
        ),
    ],
)
def test_new_v9_table_replaces_a_deprecated_payload(
    payload: str, mode: str, partial: str | None, merge_props: dict[str, str]
) -> None:
    props = v9(ordering_fields=("ts",), payload_class=PKG + payload).to_properties()
    assert props["hoodie.record.merge.mode"] == mode
    assert props["hoodie.table.legacy.payload.class"] == PKG + payload
    assert props.get("hoodie.table.partial.update.mode") == partial
    got = {k: v for k, v in props.items() if k.startswith("hoodie.record.merge.property.")}
    assert got == merge_props
    assert "hoodie.compaction.payload.class" not in props
    assert "hoodie.record.merge.strategy.id" not in props


def test_new_v9_table_keeps_a_custom_payload() -> None:
    props = v9(payload_class="com.acme.MyPayload").to_properties()
    assert props["hoodie.record.merge.mode"] == "CUSTOM"
    assert props["hoodie.compaction.payload.class"] == "com.acme.MyPayload"
    assert props["hoodie.record.merge.strategy.id"] == PAYLOAD_ID
    assert "hoodie.table.legacy.payload.class" not in props


def test_v8_creation_records_a_custom_payload_strategy() -> None:
    props = TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), payload_class="com.acme.MyPayload"
    ).to_properties()
    assert props["hoodie.record.merge.mode"] == "CUSTOM"
    assert props["hoodie.record.merge.strategy.id"] == PAYLOAD_ID
    assert props["hoodie.compaction.payload.class"] == "com.acme.MyPayload"


# ------------------------------------------------------------------ 8 -> 9 and 9 -> 8 keys


def v8_props(**extra: str) -> dict[str, str]:
    """A hudilite v8 table's properties (event time on ``ts``), with ``extra`` over them."""
    props = TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), ordering_fields=("ts",)
    ).to_properties()
    props.update(extra)
    return props


def changed(before: dict[str, str], after: dict[str, str]) -> tuple[dict, set]:
    """``(keys added or changed with their values, keys removed)``."""
    return {k: v for k, v in after.items() if before.get(k) != v}, set(before) - set(after)


def test_upgrade_of_an_event_time_table_keys() -> None:
    before = v8_props()
    assert before["hoodie.compaction.payload.class"] == PKG + "DefaultHoodieRecordPayload"
    assert before["hoodie.record.merge.strategy.id"] == EVENT_ID
    after = upgrade_properties(before, NO_OPTS)
    assert changed(before, after) == (
        {
            "hoodie.table.version": "9",
            "hoodie.table.legacy.payload.class": PKG + "DefaultHoodieRecordPayload",
            "hoodie.table.ordering.fields": "ts",
        },
        {
            "hoodie.table.precombine.field",
            "hoodie.record.merge.strategy.id",
            "hoodie.compaction.payload.class",
        },
    )
    back = downgrade_properties(after, NO_OPTS)
    # Hudi's downgrade restores the payload and precombine keys, not the strategy id.
    assert changed(after, back) == (
        {
            "hoodie.table.version": "8",
            "hoodie.compaction.payload.class": PKG + "DefaultHoodieRecordPayload",
            "hoodie.table.precombine.field": "ts",
        },
        {"hoodie.table.legacy.payload.class", "hoodie.table.ordering.fields"},
    )


def test_upgrade_without_a_payload_class_records_the_one_hudi_infers() -> None:
    # Hudi's getPayloadClass: none set -> the merge mode's (overwrite for commit time).
    before = v8_props()
    del before["hoodie.compaction.payload.class"]
    before["hoodie.record.merge.mode"] = "COMMIT_TIME_ORDERING"
    after = upgrade_properties(before, NO_OPTS)
    assert after["hoodie.table.legacy.payload.class"] == PKG + "OverwriteWithLatestAvroPayload"


@pytest.mark.parametrize(
    ("payload", "v8_mode", "add9", "add8"),
    [
        # A CUSTOM v8 table (as Hudi 1.0 records these payloads) gets the payload's mode and
        # its built-in strategy (both strategy keys); the downgrade makes it CUSTOM again.
        (
            "PartialUpdateAvroPayload",
            "CUSTOM",
            {
                "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
                "hoodie.record.merge.strategy.id": EVENT_ID,
                "hoodie.compaction.record.merger.strategy": EVENT_ID,
                "hoodie.table.partial.update.mode": "IGNORE_DEFAULTS",
            },
            {
                "hoodie.record.merge.mode": "CUSTOM",
                "hoodie.record.merge.strategy.id": PAYLOAD_ID,
                "hoodie.compaction.record.merger.strategy": PAYLOAD_ID,
            },
        ),
        # hudilite's v8 tables record these payloads with their merge mode: no strategy left.
        (
            "OverwriteNonDefaultsWithLatestAvroPayload",
            "COMMIT_TIME_ORDERING",
            {"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"},
            {
                "hoodie.record.merge.mode": "CUSTOM",
                "hoodie.record.merge.strategy.id": PAYLOAD_ID,
                "hoodie.compaction.record.merger.strategy": PAYLOAD_ID,
            },
        ),
        (
            "AWSDmsAvroPayload",
            "CUSTOM",
            {
                "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
                "hoodie.record.merge.strategy.id": COMMIT_ID,
                "hoodie.compaction.record.merger.strategy": COMMIT_ID,
                "hoodie.record.merge.property.hoodie.payload.delete.field": "Op",
                "hoodie.record.merge.property.hoodie.payload.delete.marker": "D",
            },
            {
                "hoodie.record.merge.mode": "CUSTOM",
                "hoodie.record.merge.strategy.id": PAYLOAD_ID,
                "hoodie.compaction.record.merger.strategy": PAYLOAD_ID,
            },
        ),
    ],
)
def test_upgrade_and_downgrade_of_payload_tables(
    payload: str, v8_mode: str, add9: dict[str, str], add8: dict[str, str]
) -> None:
    before = v8_props(
        **{
            "hoodie.compaction.payload.class": PKG + payload,
            "hoodie.record.merge.mode": v8_mode,
            "hoodie.record.merge.strategy.id": PAYLOAD_ID if v8_mode == "CUSTOM" else EVENT_ID,
        }
    )
    after = upgrade_properties(before, NO_OPTS)
    added, removed = changed(before, after)
    assert added == {
        "hoodie.table.version": "9",
        "hoodie.table.legacy.payload.class": PKG + payload,
        "hoodie.table.ordering.fields": "ts",
        **add9,
    }
    expected_removed = {"hoodie.table.precombine.field", "hoodie.compaction.payload.class"}
    if v8_mode != "CUSTOM":
        expected_removed.add("hoodie.record.merge.strategy.id")
    assert removed == expected_removed
    back = downgrade_properties(after, NO_OPTS)
    added, removed = changed(after, back)
    assert added == {
        "hoodie.table.version": "8",
        "hoodie.compaction.payload.class": PKG + payload,
        "hoodie.table.precombine.field": "ts",
        **add8,
    }
    assert removed == {
        "hoodie.table.legacy.payload.class",
        "hoodie.table.ordering.fields",
        *(k for k in add9 if k.startswith(("hoodie.table.partial", "hoodie.record.merge.prop"))),
    }


def test_upgrade_records_the_delete_options_given_to_it() -> None:
    opts = Options({"hoodie.payload.delete.field": "op", "hoodie.payload.delete.marker": "d"})
    after = upgrade_properties(v8_props(), opts)
    assert after["hoodie.record.merge.property.hoodie.payload.delete.field"] == "op"
    assert after["hoodie.record.merge.property.hoodie.payload.delete.marker"] == "d"
    # ... which are the table's delete settings from then on (a write option still wins).
    table_opts = Options(TableConfig.from_properties(after).props)
    assert (table_opts.get(cfg.DELETE_FIELD), table_opts.get(cfg.DELETE_MARKER)) == ("op", "d")
    assert (
        table_opts.with_overrides({"hoodie.payload.delete.field": "x"}).get(cfg.DELETE_FIELD) == "x"
    )


def test_complex_key_generator_with_one_key_field_is_refused_unless_disabled() -> None:
    before = v8_props(**{"hoodie.table.keygenerator.type": "COMPLEX"})
    with pytest.raises(
        ConfigError, match=r"complex key generator with one record key field \(id\)"
    ):
        upgrade_properties(before, NO_OPTS)
    off = Options({"hoodie.write.complex.keygen.validation.enable": "false"})
    after = upgrade_properties(before, off)
    with pytest.raises(ConfigError, match="cannot downgrade to table version 8"):
        downgrade_properties(after, NO_OPTS)
    assert downgrade_properties(after, off)["hoodie.table.version"] == "8"


def test_postgres_debezium_table_upgrades_as_hudi_11_and_back() -> None:
    payload = PKG + "debezium.PostgresDebeziumAvroPayload"
    v8 = TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), payload_class=payload
    ).to_properties()
    assert (v8["hoodie.record.merge.mode"], v8["hoodie.table.precombine.field"]) == (
        "CUSTOM",
        "_event_lsn",
    )
    nine = upgrade_properties(v8, NO_OPTS)
    changed = {k: v for k, v in nine.items() if v8.get(k) != v}
    assert changed == {  # EightToNineUpgradeHandler's change set
        "hoodie.table.version": "9",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.table.legacy.payload.class": payload,
        "hoodie.table.partial.update.mode": "FILL_UNAVAILABLE",
        "hoodie.record.merge.property.partial.update.unavailable.value": (
            "__debezium_unavailable_value"
        ),
        "hoodie.record.merge.property.hoodie.payload.delete.field": "_change_operation_type",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "d",
        "hoodie.table.ordering.fields": "_event_lsn",
    }
    assert not {"hoodie.compaction.payload.class", "hoodie.table.precombine.field"} & set(nine)
    spec = MergeSpec.from_config(TableConfig.from_properties(nine))
    assert (spec.ordering_field, spec.unavailable_value) == (
        "_event_lsn",
        "__debezium_unavailable_value",
    )
    back = downgrade_properties(nine, NO_OPTS)
    for key in ("hoodie.compaction.payload.class", "hoodie.record.merge.mode"):
        assert back[key] == v8[key]
    assert back["hoodie.table.precombine.field"] == "_event_lsn"
    assert not [k for k in back if "partial.update" in k or "merge.property" in k]
    assert "hoodie.table.legacy.payload.class" not in back


def test_mysql_debezium_table_upgrades_as_hudi_11_and_back() -> None:
    payload = PKG + "debezium.MySqlDebeziumAvroPayload"
    v8 = TableConfig.new(
        "t", table_version=8, record_key_fields=("id",), payload_class=payload
    ).to_properties()
    assert (v8["hoodie.record.merge.mode"], v8["hoodie.table.precombine.field"]) == (
        "CUSTOM",
        "_event_seq",
    )
    nine = upgrade_properties(v8, NO_OPTS)
    changed = {k: v for k, v in nine.items() if v8.get(k) != v}
    assert changed == {  # EightToNineUpgradeHandler's change set
        "hoodie.table.version": "9",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.table.legacy.payload.class": payload,
        "hoodie.record.merge.property.hoodie.payload.delete.field": "_change_operation_type",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "d",
        "hoodie.table.ordering.fields": "_event_bin_file,_event_pos",
    }
    assert not {"hoodie.compaction.payload.class", "hoodie.table.precombine.field"} & set(nine)
    spec = MergeSpec.from_config(TableConfig.from_properties(nine))
    assert (spec.ordering_field, spec.binlog_pos_field, spec.delete_marker) == (
        "_event_bin_file",
        "_event_pos",
        "d",
    )
    back = downgrade_properties(nine, NO_OPTS)
    for key in ("hoodie.compaction.payload.class", "hoodie.record.merge.mode"):
        assert back[key] == v8[key]
    assert back["hoodie.record.merge.strategy.id"] == PAYLOAD_ID
    # NineToEightDowngradeHandler: the payload's own precombine field; it leaves the delete
    # merge properties (it removes only AWS DMS's and Postgres' unavailable value).
    assert back["hoodie.table.precombine.field"] == "_event_seq"
    assert "hoodie.table.ordering.fields" not in back
    assert "hoodie.table.legacy.payload.class" not in back
    assert [k for k in back if "merge.property" in k] == [
        "hoodie.record.merge.property.hoodie.payload.delete.field",
        "hoodie.record.merge.property.hoodie.payload.delete.marker",
    ]
    spec8 = MergeSpec.from_config(TableConfig.from_properties(back))
    assert (spec8.ordering_field, spec8.binlog_seq, spec8.binlog_pos_field) == (
        "_event_seq",
        True,
        None,
    )
    assert (spec8.delete_field, spec8.delete_marker, spec8.cdc_deletes) == (
        "_change_operation_type",
        "d",
        True,  # the payload's rule (any case, _hoodie_is_deleted too), as before the upgrade
    )


def test_version_names() -> None:
    assert [parse_table_version(v) for v in ("NINE", "nine", "9", 9)] == [9, 9, 9, 9]
    with pytest.raises(ConfigError, match=r"use a number \(6, 8, 9\) or Hudi's name"):
        parse_table_version("TEN-ISH")


# ---------------------------------------------------------------------- index definitions


def test_index_definitions_get_a_version_on_upgrade_and_lose_v2_ones_on_downgrade(
    tmp_path: Path,
) -> None:
    gw = FileSystemGateway(str(tmp_path))
    props = {"hoodie.table.index.defs.path": ".hoodie/.index_defs/index.json"}
    defs = {
        "indexDefinitions": {
            "record_index": {"indexName": "record_index", "indexType": "record_index"},
            "column_stats": {"indexName": "column_stats", "version": "V2"},
            "secondary_index_m": {"indexName": "secondary_index_m", "version": "V1"},
        }
    }
    gw.write_bytes(".hoodie/.index_defs/index.json", json.dumps(defs).encode())
    assert upgrade_index_defs(gw, props) == ["record_index"]
    stored = json.loads(gw.read_bytes(".hoodie/.index_defs/index.json"))["indexDefinitions"]
    assert {n: d.get("version") for n, d in stored.items()} == {
        "record_index": "V1",
        "column_stats": "V2",
        "secondary_index_m": "V1",
    }
    assert downgrade_index_defs(gw, props) == ["column_stats"]
    stored = json.loads(gw.read_bytes(".hoodie/.index_defs/index.json"))["indexDefinitions"]
    assert sorted(stored) == ["record_index", "secondary_index_m"]
    # Nothing to do without the file (hudilite's metadata-table guard removes it).
    assert upgrade_index_defs(FileSystemGateway(str(tmp_path / "none")), {}) == []


# ------------------------------------------------------------------- refused before writing


def make_table(
    root: Path, merge_mode: str | None = None, payload_class: str | None = None, **extra: str
) -> TableState:
    ordering = tuple(extra.pop("ordering", "ts").split(","))
    config = TableConfig.new(
        "t",
        table_version=9,
        record_key_fields=("id",),
        ordering_fields=ordering,
        merge_mode=merge_mode,
        payload_class=payload_class,
        extra=extra,
    )
    gw = FileSystemGateway(str(root))
    gw.mkdirs(config.timeline_dir)
    gw.write_bytes(".hoodie/hoodie.properties", render_properties(config.to_properties()).encode())
    return TableState.load(gw)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"hoodie.table.format": "iceberg"}, "hoodie.table.format='iceberg'"),
        ({"ordering": "ts,seq"}, "hoodie.table.ordering.fields='ts,seq'"),
        (
            {"hoodie.table.partial.update.mode": "FILL_UNAVAILABLE"},
            "hoodie.table.partial.update.mode='FILL_UNAVAILABLE'",
        ),
        (
            {"hoodie.table.partial.update.mode": "KEEP_VALUES"},
            "hoodie.table.partial.update.mode='KEEP_VALUES'",
        ),
        (
            {"hoodie.record.merge.property.partial.update.custom.marker": "__x"},
            "hoodie.record.merge.property.partial.update.custom.marker='__x'",
        ),
        ({"hoodie.table.merge.properties": "a=b"}, "hoodie.table.merge.properties='a=b'"),
        (
            {"hoodie.table.legacy.payload.class": "com.acme.P"},
            "hoodie.table.legacy.payload.class='com.acme.P'",
        ),
    ],
)
def test_unsupported_v9_features_are_refused_before_anything_is_written(
    tmp_path: Path, extra: dict[str, str], named: str
) -> None:
    state = make_table(tmp_path, **extra)
    assert [named in p for p in state.config.unsupported_features()] == [True]
    listing = sorted(p.name for p in (tmp_path / ".hoodie/timeline").iterdir())
    writer = TimelineWriter(state.gw, state.config)
    for action in (COMMIT, DELTA_COMMIT, COMPACTION):
        with pytest.raises(ConfigError, match=f"uses {re.escape(named)}.*refuses to write"):
            writer.create_requested(action)
    assert sorted(p.name for p in (tmp_path / ".hoodie/timeline").iterdir()) == listing
    writer.create_requested(CLEAN)  # a clean writes no records


def test_custom_merge_strategy_is_refused_and_supported_features_are_not(tmp_path: Path) -> None:
    state = make_table(tmp_path / "a", "CUSTOM", **{"hoodie.record.merge.strategy.id": "my-id"})
    assert state.config.merge_mode == "CUSTOM"
    with pytest.raises(ConfigError, match=re.escape("hoodie.record.merge.strategy.id='my-id'")):
        state.config.check_writable()
    custom = make_table(tmp_path / "c", payload_class="com.acme.MyPayload")
    with pytest.raises(
        ConfigError,
        match=re.escape("hoodie.record.merge.mode=CUSTOM with hoodie.compaction.payload.class="),
    ):
        custom.config.check_writable()
    ok = make_table(
        tmp_path / "b",
        **{
            "hoodie.table.partial.update.mode": "IGNORE_DEFAULTS",
            "hoodie.record.merge.property.hoodie.payload.delete.field": "op",
            "hoodie.table.legacy.payload.class": PKG + "PartialUpdateAvroPayload",
        },
    )
    assert ok.config.unsupported_features() == []
    ok.config.check_writable()


# ---------------------------------------------------------------- real tables, 8 <-> 9


def props_of(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie/hoodie.properties").read_text())


CHANGE_ZIPS = (
    sorted(FIXTURES.rglob("v8_*.zip")) + sorted(FIXTURES.rglob("v9_*.zip"))
    if FIXTURES.is_dir()
    else []
)


@pytest.mark.parametrize("zip_path", CHANGE_ZIPS, ids=[fixture_id(z) for z in CHANGE_ZIPS])
def test_fixture_tables_read_the_same_after_8_to_9_and_back(tmp_path: Path, zip_path: Path) -> None:
    base = unzip_table(zip_path, tmp_path)
    state = TableState.load(FileSystemGateway(str(base)))
    version = state.config.table_version
    other = 9 if version == 8 else 8
    before_rows = hudi_rs_read(str(base))
    cols = [c for c in before_rows.column_names if c != "_hoodie_file_name"]
    opts = {"hoodie.write.complex.keygen.validation.enable": "false"}
    result = change_table_version(state, other, opts)
    assert (result.from_version, result.to_version, result.timeline_files) == (version, other, ())
    after = props_of(base)
    # hudilite's metadata-table guard removed the metadata table and its index definitions.
    start = {k: v for k, v in TableState.load(FileSystemGateway(str(base))).config.props.items()}
    assert after == start
    assert after["hoodie.table.version"] == str(other)
    assert ("hoodie.table.ordering.fields" in after) == (other == 9)
    assert ("hoodie.table.precombine.field" in after) == (other == 8)
    assert rows(hudi_rs_read(str(base)), cols) == rows(before_rows, cols)
    change_table_version(TableState.load(FileSystemGateway(str(base))), version, opts)
    assert props_of(base)["hoodie.table.version"] == str(version)
    assert rows(hudi_rs_read(str(base)), cols) == rows(before_rows, cols)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="needs ../shared fixtures")
def test_v8_fixture_upgrade_is_the_handlers_change_set(tmp_path: Path) -> None:
    base = unzip_table(FIXTURES / "sample_table/cow/v8_nonpartitioned.zip", tmp_path)
    before = props_of(base)
    change_table_version(TableState.load(FileSystemGateway(str(base))), "NINE")
    after = props_of(base)
    assert changed(before, after) == (
        {
            "hoodie.table.version": "9",
            "hoodie.table.legacy.payload.class": PKG + "DefaultHoodieRecordPayload",
            "hoodie.table.ordering.fields": "longField",
        },
        {
            "hoodie.table.precombine.field",
            "hoodie.record.merge.strategy.id",
            "hoodie.compaction.payload.class",
        },
    )


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="needs ../shared fixtures")
@pytest.mark.parametrize(
    "name",
    [
        "sample_table/cow/v6_complexkeygen_hivestyle",
        "quickstart_trips_table/mor/avro/v6_trips_8i1u",
    ],
)
def test_v6_fixture_upgrades_to_9_in_two_steps_and_back(tmp_path: Path, name: str) -> None:
    zips = list(FIXTURES.glob(f"{name}.zip"))
    if not zips:
        pytest.skip(f"no fixture {name}")
    base = unzip_table(zips[0], tmp_path)
    before_rows = hudi_rs_read(str(base))
    cols = [c for c in before_rows.column_names if c != "_hoodie_file_name"]
    result = change_table_version(TableState.load(FileSystemGateway(str(base))), 9)
    assert (result.from_version, result.to_version) == (6, 9)
    assert result.timeline_files  # the 6 -> 8 step moved the timeline
    after = props_of(base)
    assert (after["hoodie.table.version"], after["hoodie.table.initial.version"]) == ("9", "6")
    assert "hoodie.compaction.payload.class" not in after
    assert rows(hudi_rs_read(str(base)), cols) == rows(before_rows, cols)
    result = change_table_version(TableState.load(FileSystemGateway(str(base))), "SIX")
    assert (result.from_version, result.to_version) == (9, 6)
    assert props_of(base)["hoodie.timeline.layout.version"] == "1"
    assert rows(hudi_rs_read(str(base)), cols) == rows(before_rows, cols)


def test_show_create_table_of_a_v9_table_recreates_its_merge_keys() -> None:
    from hudilite.sqlext.ddl_show import create_table_properties  # the SQL layer

    made = v9(
        ordering_fields=("ts",), payload_class=PKG + "OverwriteNonDefaultsWithLatestAvroPayload"
    )
    shown = create_table_properties(made, {})
    assert shown == {
        "type": "cow",
        "primaryKey": "id",
        "preCombineField": "ts",
        "hoodie.write.table.version": "9",
        "recordMergeMode": "COMMIT_TIME_ORDERING",
        "payloadClass": PKG + "OverwriteNonDefaultsWithLatestAvroPayload",
    }
    again = v9(
        ordering_fields=("ts",),
        merge_mode=shown["recordMergeMode"],
        payload_class=shown["payloadClass"],
    )
    assert again.to_properties() == made.to_properties()
    assert "payloadClass" not in create_table_properties(v9(ordering_fields=("ts",)), {})
