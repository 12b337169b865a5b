"""``hdfs_parquet_import`` and ``run_bootstrap`` (FULL_RECORD) through SQL ``CALL`` (issue
30): tiny Parquet sources written with pyarrow become Hudi tables through Spark; exact rows
read by hudi-rs, the table's keys and partition folders, the commits written, and the
refusals (by name, writing nothing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from tests.helpers import hudi_rs_read, rows

FULL = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
SCHEMA = pa.schema(
    [("id", pa.string()), ("v", pa.int64()), ("dt", pa.string()), ("sec", pa.int64())]
)
AVRO = {
    "type": "record",
    "name": "src",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "v", "type": ["null", "long"], "default": None},
        {"name": "dt", "type": "string"},
        {"name": "sec", "type": "long"},
    ],
}
DAY = 86400


def call(s: Any, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in s.sql(f"CALL {text}").collect()]


def _parquet(path: Path, recs: list[tuple]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in recs], SCHEMA)
    pq.write_table(table, path)


def _table(path: Path) -> TableState:
    return TableState.load(FileSystemGateway(str(path)))


def _commits(path: Path) -> list[tuple[str, str]]:
    state = _table(path)
    return [
        (i.action, state.timeline.commit_metadata(i).operation_type)
        for i in state.timeline.completed()
    ]


def test_hdfs_parquet_import(session: Any, tmp_path: Path) -> None:
    s = session
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    # Two files in nested folders, read recursively; the extra column is not imported.
    _parquet(
        src / "a" / "part-0.parquet",
        [("k1", 1, "2024-01-01", DAY), ("k2", 2, "2024-01-02", 2 * DAY)],
    )
    _parquet(src / "b" / "c" / "part-1.parquet", [("k3", 3, "2024-01-01", 3 * DAY)])
    schema_file = tmp_path / "src.avsc"
    schema_file.write_text(json.dumps({**AVRO, "fields": AVRO["fields"][:3]}))
    args = (
        f"table => 'imp', table_type => 'COPY_ON_WRITE', src_path => '{src}', "
        f"target_path => '{tgt}', row_key => 'id', partition_key => 'dt', "
        f"schema_file_path => '{schema_file}'"
    )
    assert call(s, f"hdfs_parquet_import({args})") == [(0,)]
    cols = ["id", "v", "dt"]
    assert rows(hudi_rs_read(str(tgt)), cols) == [
        ("k1", 1, "2024-01-01"), ("k2", 2, "2024-01-02"), ("k3", 3, "2024-01-01"),
    ]  # fmt: skip
    assert "sec" not in hudi_rs_read(str(tgt)).column_names
    config = _table(tgt).config
    assert (config.name, config.record_key_fields, config.partition_fields) == (
        "imp", ("id",), ("dt",),
    )  # fmt: skip
    assert sorted(p.name for p in tgt.iterdir() if not p.name.startswith(".")) == [
        "2024-01-01", "2024-01-02",
    ]  # fmt: skip
    assert _commits(tgt) == [("commit", "INSERT")]
    # An insert needs a new target; an upsert writes into the existing table.
    with pytest.raises(ProcedureError, match=f"make sure {tgt} is not present"):
        call(s, f"hdfs_parquet_import({args})")
    _parquet(
        tmp_path / "src2" / "p.parquet", [("k2", 20, "2024-01-02", 0), ("k4", 4, "2024-01-03", 0)]
    )
    up = args.replace(f"'{src}'", f"'{tmp_path / 'src2'}'")
    assert call(s, f"hdfs_parquet_import({up}, command => 'upsert')") == [(0,)]
    assert rows(hudi_rs_read(str(tgt)), cols) == [
        ("k1", 1, "2024-01-01"), ("k2", 20, "2024-01-02"), ("k3", 3, "2024-01-01"),
        ("k4", 4, "2024-01-03"),
    ]  # fmt: skip
    assert _commits(tgt) == [("commit", "INSERT"), ("commit", "UPSERT")]
    other_key = up.replace("row_key => 'id'", "row_key => 'v'")
    with pytest.raises(ProcedureArgumentError, match="row_key 'v' / partition_key 'dt' differ"):
        call(s, f"hdfs_parquet_import({other_key}, command => 'upsert')")
    # An integer partition key: epoch seconds as yyyy/MM/dd folders (Hudi's formatter).
    schema_file.write_text(json.dumps(AVRO))
    epoch = (
        f"table => 'ep', table_type => 'COPY_ON_WRITE', src_path => '{src}', "
        f"target_path => '{tmp_path / 'ep'}', row_key => 'id', partition_key => 'sec', "
        f"schema_file_path => '{schema_file}', command => 'bulkinsert'"
    )
    assert call(s, f"hdfs_parquet_import({epoch})") == [(0,)]
    got = hudi_rs_read(str(tmp_path / "ep"))
    assert rows(got, ["id", "_hoodie_partition_path"]) == [
        ("k1", "1970/01/02"), ("k2", "1970/01/03"), ("k3", "1970/01/04"),
    ]  # fmt: skip
    assert _commits(tmp_path / "ep") == [("commit", "BULK_INSERT")]


@pytest.mark.parametrize(
    ("extra", "error", "message"),
    [
        ("command => 'merge'", ProcedureArgumentError, "invalid command 'merge'"),
        ("partition_key => 'nope'", ProcedureArgumentError, "partition_key 'nope' is not a column"),
        ("retry => -1", ProcedureArgumentError, "retry must be >= 0, got -1"),
    ],
)
def test_hdfs_parquet_import_refusals(
    session: Any, tmp_path: Path, extra: str, error: type, message: str
) -> None:
    src = tmp_path / "src"
    _parquet(src / "part-0.parquet", [("k1", 1, "2024-01-01", DAY)])
    schema_file = tmp_path / "src.avsc"
    schema_file.write_text(json.dumps(AVRO))
    base = (
        f"table => 'imp', table_type => 'COPY_ON_WRITE', src_path => '{src}', "
        f"target_path => '{tmp_path / 'tgt'}', row_key => 'id', schema_file_path => "
        f"'{schema_file}'"
    )
    args = base + (
        ", " + extra if "partition_key" in extra else ", partition_key => 'dt', " + extra
    )
    with pytest.raises(error, match=message):
        call(session, f"hdfs_parquet_import({args})")
    assert not (tmp_path / "tgt").exists()


def test_run_bootstrap_full_record(session: Any, tmp_path: Path) -> None:
    s = session
    src, dst = tmp_path / "legacy", tmp_path / "boot"
    _parquet(src / "region=us" / "part-0.parquet", [("k1", 1, "d", 0), ("k2", 2, "d", 0)])
    _parquet(src / "region=eu" / "part-0.parquet", [("k3", 3, "d", 0)])
    (src / "region=eu" / "_SUCCESS").write_text("")
    args = (
        f"table => 'boot', table_type => 'MERGE_ON_READ', bootstrap_path => '{src}', "
        f"base_path => '{dst}', rowKey_field => 'id', partition_path_field => 'region'"
    )
    # The default selector is Hudi's METADATA_ONLY one: refused by name, nothing written.
    with pytest.raises(
        ProcedureArgumentError, match=r"METADATA_ONLY bootstrap .* is not supported"
    ):
        call(s, f"run_bootstrap({args})")
    assert not dst.exists()
    assert call(s, f"run_bootstrap({args}, selector_class => '{FULL}')") == [(0,)]
    got = hudi_rs_read(str(dst))
    assert rows(got, ["id", "v", "region", "_hoodie_partition_path"]) == [
        ("k1", 1, "us", "us"), ("k2", 2, "us", "us"), ("k3", 3, "eu", "eu"),
    ]  # fmt: skip
    config = _table(dst).config
    assert (config.name, config.is_mor, config.record_key_fields, config.partition_fields) == (
        "boot", True, ("id",), ("region",),
    )  # fmt: skip
    assert _commits(dst) == [("deltacommit", "BULK_INSERT")]
    # An existing base path: refused, then replaced with bootstrap_overwrite.
    with pytest.raises(ProcedureError, match=f"target base path already exists at {dst}"):
        call(s, f"run_bootstrap({args}, selector_class => '{FULL}')")
    _parquet(src / "region=us" / "part-0.parquet", [("k1", 10, "d", 0)])
    assert call(
        s, f"run_bootstrap({args}, selector_class => '{FULL}', bootstrap_overwrite => true)"
    ) == [(0,)]
    assert rows(hudi_rs_read(str(dst)), ["id", "v"]) == [("k1", 10), ("k3", 3)]
    assert _commits(dst) == [("deltacommit", "BULK_INSERT")]
    with pytest.raises(ProcedureArgumentError, match="base_file_format 'ORC' is not supported"):
        call(s, f"run_bootstrap({args}, base_file_format => 'ORC')")
