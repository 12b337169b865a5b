"""Table creation without Spark (hudilite/tablestate/create.py): the layout Hudi's
``HoodieTableMetaClient`` makes, hoodie.properties, the write defaults file, and refusals
that write nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudilite import config as cfg
from hudilite.errors import ConfigError, SchemaError, TableExistsError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.create import create_table
from hudilite.tablestate.state import TableState

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_v6_table_gets_hudis_folders_and_properties(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "trips"))
    config = create_table(
        gw,
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        partition_by=["city"],
        table_type="mor",
        options={"hoodie.parquet.small.file.limit": "0"},
    )
    assert _files(tmp_path / "trips") == [
        ".hoodie",
        ".hoodie/.aux",
        ".hoodie/.schema",
        ".hoodie/.temp",
        ".hoodie/archived",
        ".hoodie/hoodie.properties",
        ".hoodie/hudilite.properties",
    ]
    props = properties_file.load(gw)
    assert props["hoodie.table.name"] == "trips"
    assert props["hoodie.table.type"] == "MERGE_ON_READ"
    assert props["hoodie.table.version"] == "6"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.precombine.field"] == "ts"
    assert props["hoodie.table.partition.fields"] == "city"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert "hoodie.parquet.small.file.limit" not in props  # a write default, not a property
    assert properties_file.read_write_defaults(gw) == {"hoodie.parquet.small.file.limit": "0"}
    state = TableState.load(gw)
    assert state.config == config
    assert state.data_schema.names == ["id", "ts", "city"]
    small_file_limit = cfg.find_key("hoodie.parquet.small.file.limit")
    assert small_file_limit is not None
    assert state.options().get_raw(small_file_limit) == "0"


def test_a_v8_table_gets_the_timeline_folder_and_its_history(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "t"))
    create_table(gw, SCHEMA, record_key=["id"], table_version=8, name="named")
    assert _files(tmp_path / "t") == [
        ".hoodie",
        ".hoodie/.aux",
        ".hoodie/.schema",
        ".hoodie/.temp",
        ".hoodie/hoodie.properties",
        ".hoodie/timeline",
        ".hoodie/timeline/history",
    ]
    assert properties_file.load(gw)["hoodie.table.name"] == "named"


COLUMNS = "(city, id, ts)"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"record_key": "nope"},
            SchemaError,
            f"record key field 'nope' is not a column of the schema {COLUMNS}",
        ),
        (
            {"record_key": " , "},
            SchemaError,
            "record_key ' , ' names no column (None makes a table without a record key)",
        ),
        (
            {"record_key": None, "options": {"hoodie.populate.meta.fields": "false"}},
            ConfigError,
            "table 't' has no record key: hoodie.populate.meta.fields=false is not supported "
            "with generated record keys",
        ),
        (
            {"record_key": "id", "partition_by": ["x"]},
            SchemaError,
            f"partition field 'x' is not a column of the schema {COLUMNS}",
        ),
        (
            {"record_key": "id", "table_type": "heap"},
            ConfigError,
            "table_type must be 'cow' or 'mor', got 'heap'",
        ),
        (
            {"record_key": "id", "table_version": 7},
            ConfigError,
            "table_version must be 6, 8 or 9, got 7",
        ),
    ],
)
def test_a_refused_table_writes_nothing(
    tmp_path: Path, kwargs: dict, error: type[Exception], message: str
) -> None:
    gw = FileSystemGateway(str(tmp_path / "t"))
    with pytest.raises(error) as info:
        create_table(gw, SCHEMA, **kwargs)
    assert str(info.value) == message
    assert not (tmp_path / "t").exists()


def test_an_existing_table_is_refused_and_kept(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "t"))
    create_table(gw, SCHEMA, record_key="id")
    before = (tmp_path / "t/.hoodie/hoodie.properties").read_bytes()
    with pytest.raises(TableExistsError) as info:
        create_table(gw, SCHEMA, record_key="ts", table_type="mor")
    assert str(info.value) == f"a Hudi table already exists at {gw.abs_path('')}"
    assert (tmp_path / "t/.hoodie/hoodie.properties").read_bytes() == before
