"""``hudi_metadata(t)``: the metadata table's merged records as Hudi's relation shows them, on a
tiny v8 table built with ``hoodie.metadata.enable=true`` and on Hudi's v9 fixture with every
index partition; the refusal for a table without a metadata table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hudilite.metadata import listing
from hudilite.metadata import table as mt
from hudilite.sqlext.statements import TableName, UnsupportedStatementError
from hudilite.sqlext.table_function_metadata import metadata_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from tests.conftest import fixture_zips, unzip_table
from tests.helpers import hudi_rs_read, sql_rows

#: Hudi's columns of the metadata relation (no meta fields: the metadata table keeps none).
COLUMNS = [
    "key",
    "type",
    "filesystemMetadata",
    "BloomFilterMetadata",
    "ColumnStatsMetadata",
    "recordIndexMetadata",
    "SecondaryIndexMetadata",
]


def test_hudi_metadata_rows_of_a_v8_table(session: Any) -> None:
    session.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, v INT, p STRING) USING hudi PARTITIONED BY (p) "
        "WITH ('primaryKey'='id', 'preCombineField'='ts', 'hoodie.metadata.enable'='true', "
        "'hoodie.write.table.version'='8')"
    )
    session.sql("INSERT INTO t VALUES ('a', 1, 1, 'x'), ('b', 1, 2, 'y')")
    session.sql("INSERT INTO t VALUES ('a', 2, 3, 'x')")
    tbl = session.table(TableName(None, "t"))
    assert tbl.state().config.props["hoodie.table.version"] == "8"

    q = "SELECT key, type FROM hudi_metadata('{}') ORDER BY key"
    expected = [("__all_partitions__", 1), ("p=x", 2), ("p=y", 2)]
    assert sql_rows(session, q.format("t")) == expected
    assert sql_rows(session, q.format(tbl.path)) == expected
    df = session.sql("SELECT * FROM hudi_metadata('default.t')")
    assert df.columns == COLUMNS
    assert df.schema == metadata_schema()
    assert (
        df.schema["ColumnStatsMetadata"]
        .dataType["minValue"]
        .dataType.simpleString()
        .startswith("struct<member0:struct<value:boolean>,member1:struct<value:int>,")
    )

    # The files record of p=x lists the partition's data files as they are on storage (the
    # insert's base file and the upsert's rewrite: nothing cleaned yet).
    part = Path(tbl.path) / "p=x"
    on_disk = {
        name: (os.path.getsize(part / name), False)
        for name in os.listdir(part)
        if not name.startswith(".hoodie_partition_metadata")
    }
    assert len(on_disk) == 2
    got = sql_rows(
        session,
        "SELECT filesystemMetadata, BloomFilterMetadata, ColumnStatsMetadata "
        "FROM hudi_metadata('t') WHERE key = 'p=x'",
    )
    assert [({k: tuple(v) for k, v in fs.items()}, b, c) for fs, b, c in got] == [
        (on_disk, None, None)
    ]
    listed = sql_rows(session, "SELECT filesystemMetadata FROM hudi_metadata('t') WHERE type = 1")
    assert {k: tuple(v) for k, v in listed[0][0].items()} == {"p=x": (0, False), "p=y": (0, False)}


def test_hudi_metadata_refused_without_a_metadata_table(session: Any) -> None:
    session.sql(
        "CREATE TABLE plain (id STRING, ts BIGINT) USING hudi "
        "WITH ('primaryKey'='id', 'preCombineField'='ts', 'hoodie.metadata.enable'='false')"
    )
    session.sql("INSERT INTO plain VALUES ('a', 1)")
    path = Path(session.table(TableName(None, "plain")).path).as_uri().replace("file:///", "file:/")
    with pytest.raises(UnsupportedStatementError) as info:
        session.sql("SELECT * FROM hudi_metadata('plain')")
    assert str(info.value) == (
        "hudi_metadata: table plain has no metadata table (hoodie.table.metadata.partitions "
        f"is empty): Hoodie table not found in path {path}/.hoodie/metadata"
    )


_V9 = [z for z in fixture_zips() if z.name == "v9_txns_simple_meta.zip"]


@pytest.mark.skipif(not _V9, reason="needs ../shared/fixtures (Hudi's v9 fixtures)")
def test_hudi_metadata_of_hudis_v9_fixture(session: Any, tmp_path: Path) -> None:
    base = unzip_table(_V9[0], tmp_path / "v9")
    gw = FileSystemGateway(str(base))
    state = TableState.load(gw)
    keys = {r[0]: r[1] for r in sql_rows(session, f"SELECT key, type FROM hudi_metadata('{base}')")}
    # The files partition's keys: what the listing reads (its partitions, and the list).
    tree = listing.files_partition_tree(gw, state.timeline)
    files_keys = sorted(k for k, t in keys.items() if t in (1, 2))
    assert files_keys == sorted(["__all_partitions__", *tree])
    # Each partition's files map holds the files the listing reads, with their sizes.
    for partition, entries in tree.items():
        got = sql_rows(
            session,
            f"SELECT filesystemMetadata FROM hudi_metadata('{base}') WHERE key = '{partition}'",
        )
        assert {k: v.size for k, v in got[0][0].items()} == {e.name: e.size for e in entries}
    # The record index holds one key per record, the live records hudi-rs reads.
    record_keys = sorted(k for k, t in keys.items() if t == 5)
    merged = mt.read_files_partition(gw, state.timeline)
    assert len(merged) == len(files_keys)
    assert record_keys == sorted(hudi_rs_read(str(base))["txn_id"].to_pylist())
