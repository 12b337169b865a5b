"""Option keys, Options alias resolution, the properties codec and TableConfig."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudilite import config as cfg
from hudilite.config import Options, TableConfig, parse_properties, render_properties
from hudilite.errors import ConfigError

# Every hoodie.properties among the shared fixtures, with what TableConfig must read from it:
# (zip, version, type, keygen, record keys, partition fields, ordering, hive, merge mode).
FIXTURE_CONFIGS = [
    (
        "sample_table/cow/v6_complexkeygen_hivestyle.zip",
        6,
        "COPY_ON_WRITE",
        "COMPLEX",
        ("id", "name"),
        ("byteField", "shortField"),
        ("longField",),
        True,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v6_empty.zip",
        6,
        "COPY_ON_WRITE",
        "NON_PARTITION",
        ("id",),
        (),
        (),
        True,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v6_nonpartitioned.zip",
        6,
        "COPY_ON_WRITE",
        "NON_PARTITION",
        ("id",),
        (),
        ("longField",),
        True,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v6_simplekeygen_nonhivestyle.zip",
        6,
        "COPY_ON_WRITE",
        "SIMPLE",
        ("id",),
        ("byteField",),
        ("longField",),
        False,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v8_nonpartitioned.zip",
        8,
        "COPY_ON_WRITE",
        "NON_PARTITION",
        ("id",),
        (),
        ("longField",),
        True,
        "EVENT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v8_simplekeygen_nonhivestyle.zip",
        8,
        "COPY_ON_WRITE",
        "SIMPLE",
        ("id",),
        ("byteField",),
        ("longField",),
        False,
        "EVENT_TIME_ORDERING",
    ),
    (
        "sample_table/cow/v9_txns_simple_nometa.zip",
        9,
        "COPY_ON_WRITE",
        "SIMPLE",
        ("txn_id",),
        ("region",),
        ("txn_ts",),
        True,
        "EVENT_TIME_ORDERING",
    ),
    (
        "sample_table/mor/avro/v9_txns_simple_nometa.zip",
        9,
        "MERGE_ON_READ",
        "SIMPLE",
        ("txn_id",),
        ("region",),
        ("txn_ts",),
        True,
        "EVENT_TIME_ORDERING",
    ),
    (
        "sample_table/mor/parquet/v6_nonpartitioned.zip",
        6,
        "MERGE_ON_READ",
        "NON_PARTITION",
        ("id",),
        (),
        ("longField",),
        True,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
        6,
        "MERGE_ON_READ",
        "SIMPLE",
        ("id",),
        ("byteField",),
        ("longField",),
        False,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
        6,
        "MERGE_ON_READ",
        "SIMPLE",
        ("uuid",),
        ("city",),
        ("ts",),
        True,
        "COMMIT_TIME_ORDERING",
    ),
    (
        "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip",
        6,
        "MERGE_ON_READ",
        "SIMPLE",
        ("uuid",),
        ("city",),
        ("ts",),
        True,
        "COMMIT_TIME_ORDERING",
    ),
]


def _props_text(base: Path) -> str:
    # Java writes hoodie.properties as ISO-8859-1.
    return (base / ".hoodie" / "hoodie.properties").read_text("latin-1")


# ---- parsers and Options ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("TRUE", True), ("1", True), ("on", True), ("false", False), ("No", False)],
)
def test_parse_bool(text: str, expected: bool) -> None:
    assert cfg.parse_bool(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("104857600", 104857600),
        ("128m", 134217728),
        ("128MB", 134217728),
        ("1.5g", 1610612736),
        ("64KiB", 65536),
        (" 10 ", 10),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert cfg.parse_size(text) == expected


def test_defaults_when_unset() -> None:
    opts = Options({})
    assert opts.get(cfg.SMALL_FILE_LIMIT) == 104857600
    assert opts.get(cfg.MAX_FILE_SIZE) == 125829120
    assert opts.get(cfg.INDEX_TYPE) == "SIMPLE"
    assert opts.get(cfg.BUCKET_NUM) == 4
    assert opts.get(cfg.RECORD_SIZE_ESTIMATE) == 1024
    assert opts.get(cfg.HEARTBEAT_INTERVAL_MS) == 60000
    assert opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES) == 2
    assert opts.get(cfg.HIVE_STYLE) is False
    assert opts.get(cfg.URL_ENCODE) is False
    assert opts.get(cfg.RECORDKEY_FIELDS) is None
    assert opts.get(cfg.TABLE_TYPE) == "COPY_ON_WRITE"
    assert opts.get(cfg.OPERATION) == "upsert"
    assert opts.get(cfg.MERGE_MODE) is None
    assert opts.get(cfg.RECORDKEY_FIELDS, ()) == ()


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        ({"primaryKey": "id, name"}, cfg.RECORDKEY_FIELDS, ("id", "name")),
        ({"recordkey.field": "uuid"}, cfg.RECORDKEY_FIELDS, ("uuid",)),
        ({"hoodie.table.recordkey.fields": "a,b"}, cfg.RECORDKEY_FIELDS, ("a", "b")),
        ({"preCombineField": "ts"}, cfg.ORDERING_FIELDS, ("ts",)),
        ({"orderingFields": "ts,seq"}, cfg.ORDERING_FIELDS, ("ts", "seq")),
        ({"precombine.field": "ts"}, cfg.ORDERING_FIELDS, ("ts",)),
        ({"hoodie.table.ordering.fields": "ts"}, cfg.ORDERING_FIELDS, ("ts",)),
        ({"type": "mor"}, cfg.TABLE_TYPE, "MERGE_ON_READ"),
        ({"type": "COW"}, cfg.TABLE_TYPE, "COPY_ON_WRITE"),
        ({"table.type": "MERGE_ON_READ"}, cfg.TABLE_TYPE, "MERGE_ON_READ"),
        ({"hoodie.table.type": "MERGE_ON_READ"}, cfg.TABLE_TYPE, "MERGE_ON_READ"),
        ({"payloadClass": "x.P"}, cfg.PAYLOAD_CLASS, "x.P"),
        ({"payload.class": "x.P"}, cfg.PAYLOAD_CLASS, "x.P"),
        ({"hoodie.compaction.payload.class": "x.P"}, cfg.PAYLOAD_CLASS, "x.P"),
        ({"recordMergeMode": "event_time_ordering"}, cfg.MERGE_MODE, "EVENT_TIME_ORDERING"),
        ({"write.operation": "BULK_INSERT"}, cfg.OPERATION, "bulk_insert"),
        ({"changelog.enabled": "true"}, cfg.CHANGELOG_ENABLED, True),
        ({"hoodie.parquet.max.file.size": "64m"}, cfg.MAX_FILE_SIZE, 67108864),
        ({"HOODIE.INDEX.TYPE": "bucket"}, cfg.INDEX_TYPE, "BUCKET"),
        ({"hoodie.datasource.write.keygenerator.type": "complex_avro"}, cfg.KEYGEN_TYPE, "COMPLEX"),
        ({"hoodie.table.partition.fields": ""}, cfg.PARTITION_FIELDS, ()),
    ],
)
def test_alias_resolution(raw: dict[str, str], key: cfg.ConfigKey, expected: object) -> None:
    assert Options(raw).get(key) == expected


def test_canonical_name_beats_alias_and_sql_name_beats_table_name() -> None:
    opts = Options(
        {
            "hoodie.table.precombine.field": "old",
            "preCombineField": "sql",
            "hoodie.datasource.write.recordkey.field": "canon",
            "primaryKey": "short",
        }
    )
    assert opts.get(cfg.ORDERING_FIELDS) == ("sql",)
    assert opts.get(cfg.RECORDKEY_FIELDS) == ("canon",)


def test_python_values_are_stored_as_hudi_text() -> None:
    opts = Options({"hoodie.datasource.write.hive_style_partitioning": True, "x": 3, "y": None})
    assert opts.raw == {"hoodie.datasource.write.hive_style_partitioning": "true", "x": "3"}
    assert opts.get(cfg.HIVE_STYLE) is True


def test_unknown_keys_pass_through_and_resolved_uses_canonical_names() -> None:
    opts = Options({"hoodie.some.future.key": "1", "primaryKey": "id", "type": "mor"})
    assert opts.raw["hoodie.some.future.key"] == "1"
    assert opts.resolved() == {
        "hoodie.some.future.key": "1",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.table.type": "mor",
    }
    assert "PRIMARYKEY" in opts
    assert opts.is_set(cfg.RECORDKEY_FIELDS)
    assert not opts.is_set(cfg.ORDERING_FIELDS)


def test_with_overrides_replaces_every_spelling() -> None:
    opts = Options({"primaryKey": "a", "hoodie.table.recordkey.fields": "b"})
    new = opts.with_overrides({"hoodie.datasource.write.recordkey.field": "c"})
    assert new.raw == {"hoodie.datasource.write.recordkey.field": "c"}
    assert opts.get(cfg.RECORDKEY_FIELDS) == ("a",)


@pytest.mark.parametrize(
    ("raw", "key", "bad"),
    [
        ({"hoodie.datasource.write.hive_style_partitioning": "maybe"}, cfg.HIVE_STYLE, "maybe"),
        ({"hoodie.bucket.index.num.buckets": "four"}, cfg.BUCKET_NUM, "four"),
        ({"hoodie.parquet.max.file.size": "big"}, cfg.MAX_FILE_SIZE, "big"),
        ({"type": "xyz"}, cfg.TABLE_TYPE, "xyz"),
        ({"hoodie.index.type": "HBASE"}, cfg.INDEX_TYPE, "HBASE"),
        ({"recordMergeMode": "latest"}, cfg.MERGE_MODE, "latest"),
        ({"hoodie.table.keygenerator.type": "FANCY"}, cfg.KEYGEN_TYPE, "FANCY"),
    ],
)
def test_bad_value_names_key_and_value(raw: dict[str, str], key: cfg.ConfigKey, bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        Options(raw).get(key)
    assert key.name in str(err.value)
    assert repr(bad) in str(err.value)


def test_find_key_and_registry() -> None:
    assert cfg.find_key("primarykey") is cfg.RECORDKEY_FIELDS
    assert cfg.find_key("hoodie.table.ordering.fields") is cfg.ORDERING_FIELDS
    assert cfg.find_key("nope") is None
    assert cfg.RECORDKEY_FIELDS in cfg.ALL_KEYS
    assert len({k.name for k in cfg.ALL_KEYS}) == len(cfg.ALL_KEYS)


# ---- properties codec ---------------------------------------------------------------------


def test_parse_properties_java_rules() -> None:
    text = (
        "# comment\n"
        "! also a comment\n"
        "\n"
        "a=1\n"
        "  b : two words \n"
        "c\\:d=e\\=f\n"
        "long=x\\\n"
        "    y\n"
        "empty=\n"
        "sp\\ key=v\n"
        "uni=caf\\u00e9\n"
        "tab=a\\tb\n"
        "bare\n"
    )
    assert parse_properties(text) == {
        "a": "1",
        "b": "two words ",
        "c:d": "e=f",
        "long": "xy",
        "empty": "",
        "sp key": "v",
        "uni": "café",
        "tab": "a\tb",
        "bare": "",
    }


def test_render_properties_escapes() -> None:
    props = {"k:1": 'v={"a":1}', "s p": " lead", "u": "é😀", "h": "#!\\"}
    text = render_properties(props, comment="Properties saved")
    assert text == (
        "#Properties saved\n"
        'k\\:1=v\\={"a"\\:1}\n'
        "s\\ p=\\ lead\n"
        "u=\\u00E9\\uD83D\\uDE00\n"
        "h=\\#\\!\\\\\n"
    )
    assert text.isascii()
    assert parse_properties(text) == props


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12),
        st.text(max_size=20),
        max_size=6,
    )
)
def test_properties_round_trip(props: dict[str, str]) -> None:
    assert parse_properties(render_properties(props)) == props


def test_table_checksum_matches_fixtures() -> None:
    assert cfg.table_checksum("default", "v6_complexkeygen_hivestyle") == 281415413
    assert cfg.table_checksum("default", "v8_nonpartitioned") == 1908876706
    assert cfg.table_checksum("default", "v9_txns_mor_simple_nometa") == 3914184242


@pytest.mark.parametrize("case", FIXTURE_CONFIGS, ids=lambda c: c[0].removesuffix(".zip"))
def test_fixture_properties_round_trip(shared_fixture: Callable[[str], Path], case) -> None:
    base = shared_fixture(case[0])
    text = _props_text(base)
    props = parse_properties(text)
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    # Re-rendering reproduces every line Java wrote (Java's order is a hash order).
    assert sorted(render_properties(props).splitlines()) == sorted(body)
    assert (
        str(cfg.table_checksum(props["hoodie.database.name"], props["hoodie.table.name"]))
        == (props["hoodie.table.checksum"])
    )


@pytest.mark.parametrize("case", FIXTURE_CONFIGS, ids=lambda c: c[0].removesuffix(".zip"))
def test_table_config_reads_fixture(shared_fixture: Callable[[str], Path], case) -> None:
    rel, version, ttype, keygen, keys, parts, order, hive, mode = case
    base = shared_fixture(rel)
    props = parse_properties(_props_text(base))
    tc = TableConfig.from_properties(props)
    assert (tc.table_version, tc.table_type, tc.keygen_type) == (version, ttype, keygen)
    assert (tc.record_key_fields, tc.partition_fields, tc.ordering_fields) == (keys, parts, order)
    assert (tc.hive_style, tc.url_encode, tc.merge_mode) == (hive, False, mode)
    assert tc.database == "default"
    assert tc.name == props["hoodie.table.name"]
    assert tc.create_schema == props["hoodie.table.create.schema"]
    assert tc.layout_version == (1 if version == 6 else 2)
    assert tc.timeline_dir == (".hoodie" if version == 6 else ".hoodie/timeline")
    assert tc.is_mor == (ttype == "MERGE_ON_READ")
    assert tc.props == props
    # Re-rendering keeps every value that was on disk (and only adds defaults).
    out = tc.to_properties()
    changed = {k: (v, out.get(k)) for k, v in props.items() if out.get(k) != v}
    assert changed == {}
    assert set(out) - set(props) <= {
        "hoodie.table.base.file.format",
        "hoodie.populate.meta.fields",
        "hoodie.table.partition.fields",
        "hoodie.record.merge.strategy.id",
    }
    assert TableConfig.from_properties(out) == tc


# ---- TableConfig.new / to_properties -------------------------------------------------------


def test_new_v6_properties_exact() -> None:
    tc = TableConfig.new(
        "trips",
        table_type="cow",
        table_version=6,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        ordering_fields=["ts"],
        hive_style=True,
        create_schema='{"type":"record"}',
    )
    assert tc.props == {
        "hoodie.table.name": "trips",
        "hoodie.table.type": "COPY_ON_WRITE",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.recordkey.fields": "uuid",
        "hoodie.table.precombine.field": "ts",
        "hoodie.table.partition.fields": "city",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.create.schema": '{"type":"record"}',
        "hoodie.database.name": "default",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.compaction.payload.class": (
            "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
        ),
        "hoodie.archivelog.folder": "archived",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.checksum": str(cfg.table_checksum("default", "trips")),
    }
    assert tc.merge_mode == "EVENT_TIME_ORDERING"
    assert tc.to_properties() == tc.props
    assert TableConfig.from_properties(tc.props) == tc


def test_new_v8_properties_exact() -> None:
    tc = TableConfig.new(
        "events",
        table_type="mor",
        table_version=8,
        record_key_fields=["id", "name"],
        partition_fields=[],
        database="db1",
    )
    assert tc.props == {
        "hoodie.table.name": "events",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "8",
        "hoodie.table.initial.version": "8",
        "hoodie.timeline.layout.version": "2",
        "hoodie.table.recordkey.fields": "id,name",
        "hoodie.table.partition.fields": "",
        "hoodie.table.keygenerator.type": "NON_PARTITION",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.populate.meta.fields": "true",
        "hoodie.database.name": "db1",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
        "hoodie.compaction.payload.class": (
            "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
        ),
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.archivelog.folder": "archived",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.checksum": str(cfg.table_checksum("db1", "events")),
    }
    assert (tc.layout_version, tc.timeline_dir, tc.is_mor) == (2, ".hoodie/timeline", True)
    assert tc.archive_dir == ".hoodie/timeline/history"


def test_new_v8_event_time_and_v9_ordering_key() -> None:
    v8 = TableConfig.new("t", table_version=8, record_key_fields=["id"], ordering_fields=["ts"])
    assert v8.props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert v8.props["hoodie.record.merge.strategy.id"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    assert v8.props["hoodie.table.precombine.field"] == "ts"
    v9 = TableConfig.new("t", table_version=9, record_key_fields=["id"], ordering_fields=["a", "b"])
    assert v9.props["hoodie.table.ordering.fields"] == "a,b"
    assert "hoodie.table.precombine.field" not in v9.props
    assert "hoodie.compaction.payload.class" not in v9.props


def test_new_explicit_payload_and_merge_mode() -> None:
    tc = TableConfig.new(
        "t",
        record_key_fields=["id"],
        ordering_fields=["ts"],
        payload_class="org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    )
    assert tc.merge_mode == "COMMIT_TIME_ORDERING"
    tc2 = TableConfig.new(
        "t", record_key_fields=["id"], ordering_fields=["ts"], merge_mode="commit_time_ordering"
    )
    assert tc2.props["hoodie.compaction.payload.class"].endswith("OverwriteWithLatestAvroPayload")


def test_new_extra_keeps_only_table_properties_and_never_metadata_partitions() -> None:
    tc = TableConfig.new(
        "t",
        record_key_fields=["id"],
        extra={
            "primaryKey": "id",
            "hoodie.upsert.shuffle.parallelism": "8",
            "hoodie.keygen.timebased.timezone": "UTC",
            "hoodie.table.metadata.partitions": "files",
            "hoodie.table.checksum": "1",
            "hoodie.bucket.index.num.buckets": "16",
        },
    )
    assert tc.props["hoodie.keygen.timebased.timezone"] == "UTC"
    assert tc.props["hoodie.bucket.index.num.buckets"] == "16"
    for absent in ("primaryKey", "hoodie.upsert.shuffle.parallelism"):
        assert absent not in tc.props
    assert "hoodie.table.metadata.partitions" not in tc.props
    assert tc.props["hoodie.table.checksum"] == str(cfg.table_checksum("default", "t"))


def test_to_properties_drops_metadata_partitions_from_disk_props() -> None:
    tc = TableConfig.new("t", record_key_fields=["id"])
    on_disk = dict(tc.props, **{"hoodie.table.metadata.partitions": "files"})
    out = TableConfig.from_properties(on_disk).to_properties()
    assert "hoodie.table.metadata.partitions" not in out
    assert out["hoodie.datasource.write.drop.partition.columns"] == "false"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table_version": 7}, "7"),
        ({"name": "bad name"}, "bad name"),
        ({"keygen_type": "NON_PARTITION", "partition_fields": ["a"]}, "NON_PARTITION"),
        ({"keygen_type": "SIMPLE", "record_key_fields": ["a", "b"]}, "SIMPLE"),
        ({"merge_mode": "EVENT_TIME_ORDERING"}, "ordering"),
        ({"table_type": "xyz"}, "xyz"),
    ],
)
def test_new_rejects(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"name": "t", "record_key_fields": ["id"], **kwargs}
    with pytest.raises(ConfigError, match=message):
        TableConfig.new(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keys", "parts", "expected"),
    [
        (["id"], [], "NON_PARTITION"),
        (["id"], ["city"], "SIMPLE"),
        (["id", "name"], ["city"], "COMPLEX"),
        (["id"], ["a", "b"], "COMPLEX"),
        (["id"], ["ts:timestamp"], "CUSTOM"),
    ],
)
def test_infer_keygen_type(keys: list[str], parts: list[str], expected: str) -> None:
    assert cfg.infer_keygen_type(keys, parts) == expected


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        ("org.apache.hudi.keygen.ComplexKeyGenerator", "COMPLEX"),
        ("org.apache.hudi.keygen.SimpleKeyGenerator", "SIMPLE"),
        ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", "NON_PARTITION"),
        ("org.apache.hudi.keygen.TimestampBasedKeyGenerator", "TIMESTAMP"),
        ("org.apache.hudi.keygen.CustomKeyGenerator", "CUSTOM"),
        ("org.apache.hudi.keygen.CustomAvroKeyGenerator", "CUSTOM"),
        ("com.example.Mine", None),
    ],
)
def test_keygen_type_from_class(cls: str, expected: str | None) -> None:
    assert cfg.keygen_type_from_class(cls) == expected


def test_from_properties_minimal_and_errors() -> None:
    tc = TableConfig.from_properties(
        {
            "hoodie.table.name": "x",
            "hoodie.table.version": "6",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.partition.fields": "a:simple,ts:timestamp",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
        }
    )
    assert tc.keygen_type == "CUSTOM"
    assert tc.partition_field_names == ("a", "ts")
    assert tc.ordering_field is None
    # Props without a checksum count as a new table: the timezone is pinned to UTC ...
    assert tc.to_properties()["hoodie.table.timeline.timezone"] == "UTC"
    # ... but an existing table without the key keeps Java's default (LOCAL).
    existing = TableConfig.from_properties(dict(tc.props, **{"hoodie.table.checksum": "1"}))
    assert "hoodie.table.timeline.timezone" not in existing.to_properties()
    with pytest.raises(ConfigError, match=r"hoodie\.table\.name"):
        TableConfig.from_properties({"hoodie.table.version": "6"})
    with pytest.raises(ConfigError, match="unsupported value 5 "):
        TableConfig.from_properties({"hoodie.table.name": "x", "hoodie.table.version": "5"})
    with pytest.raises(ConfigError, match="maybe"):
        TableConfig.from_properties(
            {"hoodie.table.name": "x", "hoodie.datasource.write.hive_style_partitioning": "maybe"}
        )
