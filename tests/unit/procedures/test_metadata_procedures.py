"""The metadata-table procedures (procedures/metadata_table.py, metadata_column_stats.py),
called through the registry without a JVM (``filter`` left empty, so no Spark is needed).

On Hudi 1.1's own ``v9_txns_simple_meta`` fixture: the partitions and files the procedures
show are the table's partition folders and data files (its metadata table lists every file of
them), validation finds no difference, the stats count the latest slices' files of every
partition, and the column statistics equal the minimum, maximum and null count read from each
base file's Parquet data. On a v8 fixture without one: create (the files partition built,
``hoodie.metadata.enable`` stored, a later commit kept in it), init, the validation rows of a
file removed behind the table's back and of a stray file, delete (nothing rebuilt afterwards),
and the errors.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudilite import config as cfg
from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import table as mt
from hudilite.procedures import ProcedureContext, procedure_spec
from hudilite.procedures.metadata_column_stats import java_float_text
from hudilite.procedures.metadata_table import STAT_KEYS
from hudilite.procedures.registry import ProcedureError, bind
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from tests.conftest import FIXTURES, unzip_table
from tests.unit.metadata.test_metadata_compact import commit_copy

V9_META = "sample_table/cow/v9_txns_simple_meta.zip"
V8_COW = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
V6_COW = "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"


def call(name: str, **args: Any) -> Any:
    spec = procedure_spec(name)
    assert spec is not None
    ctx = ProcedureContext(None, None, "default", procedure=spec.name)  # type: ignore[arg-type]
    return spec.func(ctx, bind(spec, [], args))


def _unzip(rel: str, tmp_path: Path) -> Path:
    zp = FIXTURES / rel
    if not zp.exists():
        pytest.skip(f"fixture {rel} is absent")
    return unzip_table(zp, tmp_path)


def _data_files(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".parquet") or ".log." in n)


def test_hudis_metadata_table_as_the_procedures_show_it(tmp_path: Path) -> None:
    base = _unzip(V9_META, tmp_path)
    path = str(base)
    folders = sorted(
        str(p.parent.relative_to(base)) for p in base.glob("*/.hoodie_partition_metadata")
    )
    assert folders == ["region=apac", "region=eu", "region=us"]
    assert call("show_metadata_table_partitions", path=path) == [(p,) for p in folders]
    for folder in folders:
        files = _data_files(base / folder)
        assert call("show_metadata_table_files", path=path, partition=folder) == [
            (f,) for f in files
        ]
        assert call("show_metadata_table_files", path=path, partition=folder, limit=2) == [
            (f,) for f in files[:2]
        ]
    assert call("validate_metadata_table_files", path=path) == []
    verbose = call("validate_metadata_table_files", path=path, verbose=True)
    assert verbose == [
        (p, f, True, True, os.path.getsize(base / p / f), os.path.getsize(base / p / f))
        for p in folders
        for f in _data_files(base / p)
    ]
    # Stats: every partition hoodie.properties lists, by name; files's latest slice is
    # Hudi's compaction base file and the six logs completed after it.
    stats = dict(call("show_metadata_table_stats", path=path))
    listed = properties_file.load(FileSystemGateway(path))["hoodie.table.metadata.partitions"]
    assert [k for k in stats if k != "partitionCount"] == [
        f"{p}.{k}" for p in sorted(listed.split(",")) for k in STAT_KEYS
    ]
    files_dir = base / ".hoodie/metadata/files"
    compaction = max(n for n in os.listdir(files_dir) if n.endswith(".hfile"))
    assert stats["files.baseFileCount"] == "1"
    assert stats["files.totalBaseFileSizeInBytes"] == str(os.path.getsize(files_dir / compaction))
    assert stats["files.logFileCount"] == "6"
    assert stats["partitionCount"] == "3"
    with pytest.raises(ProcedureError, match=r"table \S+ is partitioned; give the partition"):
        call("show_metadata_table_files", path=path)
    with pytest.raises(ProcedureError, match=r"lists no partition 'region=xx' \(3 partitions"):
        call("show_metadata_table_files", path=path, partition="region=xx")
    # Hudi's rollback of its metadata table: hudilite's reader does not follow it.
    rollback = "20990101000000000.rollback.requested"
    (base / ".hoodie/metadata/.hoodie/timeline" / rollback).write_bytes(b"")
    with pytest.raises(
        ProcedureError, match=rf"holds actions hudilite does not read \({rollback}\)"
    ):
        call("show_metadata_table_partitions", path=path)


def _expected_stats(base: Path, file_name: str, column: str) -> tuple[str, str, int]:
    """Min, max and null count of one column of a base file, printed as Hudi's procedure
    prints them, computed from the Parquet data."""
    part = next(base.glob(f"*/{file_name}"))
    col = pq.read_table(part, columns=[column]).column(0)
    nulls = col.null_count
    low, high = pc.min_max(col).values()

    def text(v: Any) -> str:
        if col.type == "bool":
            return "true" if v.as_py() else "false"
        if col.type == "date32[day]":
            return str(v.cast("int32").as_py())
        # decimals: the unscaled value's shortest two's-complement bytes, signed
        unscaled = int(v.as_py().scaleb(col.type.scale))
        size = (unscaled.bit_length() + 8) // 8
        raw = unscaled.to_bytes(size, "big", signed=True)
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in raw) + "]"

    return text(low), text(high), nulls


def test_column_stats_are_the_parquet_files_statistics(tmp_path: Path) -> None:
    base = _unzip(V9_META, tmp_path)
    rows = call(
        "show_metadata_table_column_stats",
        path=str(base),
        targetColumns="amount,txn_date,is_international",
    )
    state = TableState.load(FileSystemGateway(str(base)))
    view = FileSystemView(state.gw, state.config, state.timeline).latest_slices()
    names = sorted(s.base_file.path.rsplit("/", 1)[-1] for s in view if s.base_file is not None)
    assert (
        len(names) == 5
        and [r[1] for r in rows] == ["amount"] * 5 + ["is_international"] * 5 + ["txn_date"] * 5
    )
    assert rows == [
        (name, column, *_expected_stats(base, name, column))
        for column in ("amount", "is_international", "txn_date")
        for name in names
    ]
    # One partition only; every column without targetColumns.
    apac = call("show_metadata_table_column_stats", path=str(base), partition="region=apac")
    in_apac = set(_data_files(base / "region=apac"))
    assert apac and {r[0] for r in apac} <= in_apac
    assert {r[1] for r in apac} >= {"amount", "txn_id", "txn_ts", "_hoodie_record_key"}


def test_java_float_text() -> None:
    assert [
        java_float_text(v)
        for v in (1e10, 1e-4, 0.001, 1234567.0, 12345678.0, 100.0, -0.5, 0.0, 1.25e-7)
    ] == [
        "1.0E10",
        "1.0E-4",
        "0.001",
        "1234567.0",
        "1.2345678E7",
        "100.0",
        "-0.5",
        "0.0",
        "1.25E-7",
    ]
    assert java_float_text(1.1, single=True) == "1.1"
    assert java_float_text(3.4028234663852886e38, single=True) == "3.4028235E38"


def _v8(tmp_path: Path) -> tuple[Path, FileSystemGateway]:
    base = _unzip(V8_COW, tmp_path)
    return base, FileSystemGateway(str(base))


def test_create_init_validate_and_delete(tmp_path: Path) -> None:
    base, gw = _v8(tmp_path)
    path = str(base)
    not_enabled = r"Metadata Table not enabled/initialized for table \S+ at file:"
    with pytest.raises(ProcedureError, match=not_enabled):
        call("show_metadata_table_partitions", path=path)
    with pytest.raises(ProcedureError, match=r"Metadata directory \(\S+\) does not exist\."):
        call("init_metadata_table", path=path)

    (row,) = call("create_metadata_table", path=path)
    where = gw.uri(mt.METADATA_DIR)
    assert re.fullmatch(
        rf"Created Metadata Table in {re.escape(where)} \(duration=\d+\.\d{{3}}secs\)", row[0]
    )
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    assert properties_file.read_write_defaults(gw)[cfg.METADATA_ENABLED.name] == "true"
    folders = sorted(
        str(p.parent.relative_to(base)) for p in base.glob("*/.hoodie_partition_metadata")
    )
    assert call("show_metadata_table_partitions", path=path) == [(p,) for p in folders]
    assert call("validate_metadata_table_files", path=path) == []
    with pytest.raises(ProcedureError, match=r"Metadata directory \(\S+\) not empty\."):
        call("create_metadata_table", path=path)

    # A later commit is kept in it (the option is stored), and init opens or initializes it.
    _, rel = commit_copy(gw, 1)
    partition, name = rel.rsplit("/", 1)
    assert (name,) in call("show_metadata_table_files", path=path, partition=partition)
    (opened,) = call("init_metadata_table", path=path, read_only=True)
    assert re.fullmatch(
        rf"Opened Metadata Table in {re.escape(where)} \(duration=\S+sec\)", opened[0]
    )
    (init,) = call("init_metadata_table", path=path)
    assert init[0].startswith(f"Initialized Metadata Table in {where} (duration=")
    assert call("validate_metadata_table_files", path=path) == []

    # Files changed behind the table's back: one removed, one stray data file added.
    gone = base / rel
    gone_size = gone.stat().st_size
    gone.unlink()
    stray = "00000000-0000-0000-0000-000000000000-0_0-0-0_20990101000000000.parquet"
    (base / partition / stray).write_bytes(b"x" * 7)
    assert call("validate_metadata_table_files", path=path) == [
        (partition, stray, True, False, 7, 0),
        (partition, name, False, True, 0, gone_size),
    ]
    with pytest.raises(ProcedureError, match=r"has no column_stats partition"):
        call("show_metadata_table_column_stats", path=path)

    (deleted,) = call("delete_metadata_table", path=path)
    assert deleted == (f"Deleted Metadata Table at '{where}'",)
    assert not gw.exists(mt.METADATA_DIR)
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == ""
    assert properties_file.read_write_defaults(gw)[cfg.METADATA_ENABLED.name] == "false"
    (base / partition / stray).unlink()
    commit_copy(gw, 2)  # the guard builds nothing: the option is off
    assert not gw.exists(mt.METADATA_DIR)
    assert call("delete_metadata_table", path=path) == [("Deleted Metadata Table at 'null'",)]


def test_a_version_6_table_is_refused_by_name(tmp_path: Path) -> None:
    base = _unzip(V6_COW, tmp_path)
    for name in ("create_metadata_table", "show_metadata_table_files"):
        with pytest.raises(ProcedureError, match=rf"{name}: .*table versions 8 and 9; .*version 6"):
            call(name, path=str(base))
