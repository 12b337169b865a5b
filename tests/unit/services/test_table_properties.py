"""SET/UNSET TBLPROPERTIES and RENAME on tables Hudi wrote, without a JVM."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.errors import ConfigError, CorruptFileError
from hudilite.services.properties import (
    BACKUP_FILE,
    read_table_properties,
    read_write_defaults,
    rename_table,
    set_properties,
    store_table_properties,
    unset_properties,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import PROPERTIES_FILE, TableState, load_config

COW_V6 = "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"
COW_V8 = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
EMPTY = "sample_table/cow/v6_empty.zip"


def _state(base: Path | str) -> TableState:
    return TableState.load(FileSystemGateway(str(base)))


def on_disk(state: TableState) -> dict[str, str]:
    return cfg.parse_properties(state.gw.read_bytes(PROPERTIES_FILE).decode("latin-1"))


@pytest.mark.parametrize("fixture", [COW_V6, COW_V8], ids=["v6", "v8"])
def test_set_keeps_hudi_keys_verbatim_and_the_checksum_valid(shared_fixture, fixture):
    state = _state(shared_fixture(fixture))
    original = on_disk(state)
    set_properties(
        state,
        {
            "hoodie.table.comment": "trips: a=b",  # escaping round-trips
            "hoodie.parquet.small.file.limit": "0",
            "hoodie.cleaner.commits.retained": 3,
        },
    )
    props = on_disk(state)
    assert props == {**original, "hoodie.table.comment": "trips: a=b"}
    assert props["hoodie.table.checksum"] == str(
        cfg.table_checksum(props.get("hoodie.database.name", ""), props["hoodie.table.name"])
    )
    assert read_write_defaults(state.gw) == {
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.cleaner.commits.retained": "3",
    }
    opts = _state(state.gw.abs_path("")).options()
    assert opts.get(cfg.SMALL_FILE_LIMIT) == 0
    assert opts.get(cfg.CLEANER_COMMITS_RETAINED) == 3
    assert not state.gw.exists(BACKUP_FILE)
    hudi = pytest.importorskip("hudi")
    assert (
        hudi.HudiTableBuilder.from_base_uri(state.gw.abs_path(""))
        .build()
        .read(hudi.HudiReadOptions())
    )


@pytest.mark.parametrize(
    ("key", "value", "shown", "current"),
    [
        ("primaryKey", "name", "'primaryKey' (hoodie.datasource.write.recordkey.field)", "id"),
        ("hoodie.table.recordkey.fields", "id,name", "hoodie.table.recordkey.fields", "id"),
        ("preCombineField", "id", "preCombineField", "longField"),
        ("precombine.field", "id", "precombine.field", "longField"),
        ("hoodie.datasource.write.partitionpath.field", "name", "partitionpath", "byteField"),
        ("type", "mor", "'type'", "COPY_ON_WRITE"),
        ("table.type", "MERGE_ON_READ", "table.type", "COPY_ON_WRITE"),
        ("hoodie.table.version", "8", "hoodie.table.version", "6"),
        ("hoodie.datasource.write.keygenerator.class", "x.ComplexKeyGenerator", "keygen", "org"),
        ("hoodie.datasource.write.hive_style_partitioning", "true", "hive_style", "false"),
        ("hoodie.table.base.file.format", "ORC", "base.file.format", "PARQUET"),
        ("hoodie.table.checksum", "1", "checksum", "616688896"),
        ("hoodie.index.type", "BUCKET", "hoodie.index.type", "SIMPLE"),
        ("hoodie.table.name", "x", "rename", "v6_simplekeygen_nonhivestyle"),
    ],
)
def test_fixed_properties_are_refused_with_their_current_value(
    shared_fixture, key, value, shown, current
):
    state = _state(shared_fixture(COW_V6))
    original = on_disk(state)
    pattern = rf"(?s){re.escape(shown)}.*current value: '{re.escape(current)}"
    with pytest.raises(ConfigError, match=pattern):
        set_properties(state, {"hoodie.table.comment": "x", key: value})
    assert on_disk(state) == original  # nothing of the batch was written
    assert read_write_defaults(state.gw) == {}


def test_same_value_and_aliases(shared_fixture):
    state = _state(shared_fixture(COW_V6))
    original = on_disk(state)
    set_properties(state, {"primaryKey": "id", "type": "cow", "preCombineField": "longField"})
    assert on_disk(state) == original
    # An alias is stored under the canonical name, replacing every other spelling.
    set_properties(state, {"compaction.async.enabled": "true"})
    assert read_write_defaults(state.gw) == {"hoodie.datasource.compaction.async.enable": "true"}
    set_properties(state, {"hoodie.compact.inline": "false", "hoodie.parquet.small.file.limit": 1})
    set_properties(state, {"HOODIE.COMPACT.INLINE": "true"})
    assert read_write_defaults(state.gw) == {
        "hoodie.datasource.compaction.async.enable": "true",
        "hoodie.parquet.small.file.limit": "1",
        "hoodie.compact.inline": "true",
    }
    with pytest.raises(ConfigError, match=r"hoodie\.compact\.inline.*'maybe'"):
        set_properties(state, {"hoodie.compact.inline": "maybe"})


def test_index_settings_are_free_until_the_table_has_data(shared_fixture):
    state = _state(shared_fixture(EMPTY))
    set_properties(state, {"index.type": "bucket", "hoodie.bucket.index.num.buckets": "8"})
    props = on_disk(state)
    assert (props["hoodie.index.type"], props["hoodie.bucket.index.num.buckets"]) == ("bucket", "8")
    opts = _state(state.gw.abs_path("")).options()
    assert (opts.get(cfg.INDEX_TYPE), opts.get(cfg.BUCKET_NUM)) == ("BUCKET", 8)
    unset_properties(state, ["hoodie.index.type"])
    assert "hoodie.index.type" not in on_disk(state)


def test_unset(shared_fixture):
    state = _state(shared_fixture(COW_V6))
    set_properties(state, {"hoodie.table.comment": "c", "hoodie.parquet.small.file.limit": "0"})
    unset_properties(state, ["hoodie.table.comment", "hoodie.parquet.small.file.limit", "nope"])
    assert "hoodie.table.comment" not in on_disk(state)
    assert not state.gw.exists(".hoodie/hudilite.properties")
    with pytest.raises(ConfigError, match=r"hoodie\.table\.recordkey\.fields.*'id'"):
        unset_properties(state, "hoodie.table.recordkey.fields")
    unset_properties(state, [])  # nothing to do


def test_rename_updates_name_and_checksum(shared_fixture):
    state = _state(shared_fixture(COW_V8))
    before = on_disk(state)
    rename_table(state, "renamed_table")
    props = on_disk(state)
    assert props["hoodie.table.name"] == "renamed_table"
    assert props["hoodie.table.checksum"] == str(cfg.table_checksum("default", "renamed_table"))
    renamed = ("hoodie.table.name", "hoodie.table.checksum")
    assert {k: v for k, v in props.items() if k not in renamed} == {
        k: v for k, v in before.items() if k not in renamed
    }
    assert load_config(state.gw).name == "renamed_table"
    for bad in ("", "a b", "x.y"):
        with pytest.raises(ConfigError, match=r"hoodie\.table\.name"):
            rename_table(state, bad)


def test_interrupted_rewrite_recovers_from_the_backup(shared_fixture):
    state = _state(shared_fixture(COW_V6))
    gw = state.gw
    original = on_disk(state)
    # A writer died after removing hoodie.properties: readers use the backup...
    gw.write_bytes(BACKUP_FILE, gw.read_bytes(PROPERTIES_FILE))
    gw.delete_file(PROPERTIES_FILE)
    assert load_config(gw).name == original["hoodie.table.name"]
    # ...and the next change restores it first.
    assert read_table_properties(gw) == original
    assert gw.exists(PROPERTIES_FILE) and not gw.exists(BACKUP_FILE)


def test_a_rewrite_that_does_not_read_back_is_undone(shared_fixture, monkeypatch):
    state = _state(shared_fixture(COW_V6))
    gw = state.gw
    original = gw.read_bytes(PROPERTIES_FILE)
    real_write = type(gw).write_bytes

    def torn(self, rel, data):  # the new hoodie.properties loses its tail
        if rel == PROPERTIES_FILE and b"comment" in data:
            data = data[: data.index(b"hoodie.table.checksum")]
        real_write(self, rel, data)

    monkeypatch.setattr(type(gw), "write_bytes", torn)
    with pytest.raises(CorruptFileError, match="checksum"):
        store_table_properties(gw, {**on_disk(state), "hoodie.table.comment": "x"})
    monkeypatch.undo()
    assert gw.read_bytes(PROPERTIES_FILE) == original
    assert not gw.exists(BACKUP_FILE)
