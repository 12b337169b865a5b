"""An edited hoodie.properties that contradicts the table's data is refused before a write
(issue 26): key fields, partitioning, key generator and table type; see
hudilite/write/config_drift.py. An engine-built table (tests/staged_write.py) and Hudi's own
fixture tables (skipped without ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import load_config
from hudilite.write.config_drift import TableConfigDriftError, check_table_config
from tests.staged_write import create_table, upsert

PROPS = ".hoodie/hoodie.properties"


def edit(base: Path, old: str, new: str) -> None:
    """Replace one line of hoodie.properties as a user with an editor would."""
    path = base / PROPS
    text = path.read_text()
    assert text.count(old + "\n") == 1, old
    path.write_text(text.replace(old + "\n", new + "\n"))


def listing(base: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.name != "hoodie.properties"
    }


@pytest.fixture
def engine_table(tmp_path: Path) -> tuple[Path, FileSystemGateway, str]:
    """A copy-on-write table keyed by ``k`` with rows a, b; its base file's path."""
    gw = FileSystemGateway(str(tmp_path))
    create_table(gw)
    upsert(gw, [("a", "1"), ("b", "2")])
    (base_file,) = [p for p in tmp_path.glob("*.parquet")]
    return tmp_path, gw, str(base_file)


def test_an_edited_record_key_field_is_refused_before_any_instant(engine_table):
    base, gw, base_file = engine_table
    edit(base, "hoodie.table.recordkey.fields=k", "hoodie.table.recordkey.fields=v")
    before = listing(base)
    with pytest.raises(TableConfigDriftError) as err:
        upsert(gw, [("a", "3")])
    assert str(err.value) == (
        "hoodie.properties does not match the table's data: hoodie.table.recordkey.fields='v' "
        f"there, but it gives record key '1' to a row {base_file} stores with record key "
        "'a'; restore the value the table was written with (a write now would corrupt the "
        "table)"
    )
    assert listing(base) == before  # no instant, no heartbeat, no lock file


def test_a_record_key_field_the_files_lack_is_refused(engine_table):
    base, gw, base_file = engine_table
    edit(base, "hoodie.table.recordkey.fields=k", "hoodie.table.recordkey.fields=nope")
    with pytest.raises(TableConfigDriftError) as err:
        check_table_config(gw, load_config(gw))
    assert str(err.value).startswith(
        "hoodie.properties does not match the table's data: hoodie.table.recordkey.fields="
        f"'nope' there, but the table's files have no column 'nope' ({base_file} stores the "
        "row with record key 'a'); restore"
    )


def test_unedited_and_restored_properties_pass(engine_table):
    base, gw, _ = engine_table
    check_table_config(gw, load_config(gw))
    edit(base, "hoodie.table.recordkey.fields=k", "hoodie.table.recordkey.fields=v")
    with pytest.raises(TableConfigDriftError):
        check_table_config(gw, load_config(gw))
    edit(base, "hoodie.table.recordkey.fields=v", "hoodie.table.recordkey.fields=k")
    upsert(gw, [("a", "3")])  # the write goes ahead again


def test_copy_on_write_to_merge_on_read_is_a_valid_edit(engine_table):
    # Hudi's CLI converts COW to MOR by changing the property alone.
    base, gw, _ = engine_table
    edit(base, "hoodie.table.type=COPY_ON_WRITE", "hoodie.table.type=MERGE_ON_READ")
    check_table_config(gw, load_config(gw))


def test_hudi_tables_edited(shared_fixture):
    mor = shared_fixture("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip")
    gw = FileSystemGateway(str(mor))
    check_table_config(gw, load_config(gw))
    # MOR -> COW with log files still live: Hudi's CLI compacts them all first.
    edit(mor, "hoodie.table.type=MERGE_ON_READ", "hoodie.table.type=COPY_ON_WRITE")
    with pytest.raises(TableConfigDriftError) as err:
        check_table_config(gw, load_config(gw))
    assert str(err.value).startswith(
        "hoodie.properties does not match the table's data: hoodie.table.type='COPY_ON_WRITE' "
        "there, but the live log file "
    )
    assert "makes it a MERGE_ON_READ table" in str(err.value)

    cow = shared_fixture("sample_table/cow/v6_complexkeygen_hivestyle.zip")
    gw = FileSystemGateway(str(cow))
    check_table_config(gw, load_config(gw))
    for old, new, named in [
        (
            "hoodie.table.partition.fields=byteField,shortField",
            "hoodie.table.partition.fields=shortField,byteField",
            "hoodie.table.partition.fields='shortField,byteField' there, but it gives "
            "partition path 'shortField=",
        ),
        (
            "hoodie.datasource.write.hive_style_partitioning=true",
            "hoodie.datasource.write.hive_style_partitioning=false",
            "hoodie.datasource.write.hive_style_partitioning='false' there, but it gives "
            "partition path '",
        ),
        (
            "hoodie.table.recordkey.fields=id,name",
            "hoodie.table.recordkey.fields=name,id",
            "hoodie.table.recordkey.fields='name,id' there, but it gives record key 'name:",
        ),
    ]:
        edit(cow, old, new)
        with pytest.raises(TableConfigDriftError) as err:
            check_table_config(gw, load_config(gw))
        assert named in str(err.value)
        edit(cow, new, old)
    check_table_config(gw, load_config(gw))
