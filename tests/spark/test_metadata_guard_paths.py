"""Every way hudilite changes a table leaves no stale Hudi metadata table (issue 25).

Each action runs on a fresh copy of a table Hudi 1.1 wrote with its metadata table on
(``v9_txns_simple_meta``: files, column and partition stats, record index, two secondary
indexes). Afterwards the metadata table, its partitions in hoodie.properties and its index
definitions are gone, and hudi-rs -- which lists files through the metadata table whenever
hoodie.properties names one -- reads exactly what hudilite reads.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file as pf
from hudilite.write import metadata_guard as mg
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read, rows

COW = FIXTURES / "sample_table" / "cow" / "v9_txns_simple_meta.zip"
MOR = FIXTURES / "sample_table" / "mor" / "avro" / "v9_txns_simple_meta.zip"


def _one_row(t: Any, **changes: Any) -> pa.Table:
    data = t.to_arrow().select([f.name for f in t.schema])
    row = sorted(data.to_pylist(), key=lambda r: r["txn_id"])[0]
    row.update(changes)
    return pa.Table.from_pylist([row], t.schema)


def _latest_commit(t: Any) -> str:
    writes = ("commit", "deltacommit", "replacecommit")
    done = [i for i in t.timeline() if i.state.name == "COMPLETED" and i.action in writes]
    return done[-1].requested_time


def _sql(spark: Any, base: Path, tmp: Path, statement: str) -> None:
    s = hudilite.connect(str(tmp / "wh"), spark=spark)
    s.sql(f"CREATE TABLE txns USING hudi LOCATION '{base}'")
    s.sql(statement)


def _restore(t: Any) -> None:
    sp = t.savepoint(_latest_commit(t))
    t.write(_one_row(t, txn_id="TXN-GONE"))
    t.restore(sp.instant_time)


ACTIONS: dict[str, tuple[Path, Callable[[Any, Any, Path, Path], object]]] = {
    "upsert": (COW, lambda s, t, b, d: t.write(_one_row(t, merchant_name="X", txn_ts=2**62))),
    "insert": (COW, lambda s, t, b, d: t.write(_one_row(t, txn_id="TXN-NEW"), "insert")),
    "bulk_insert": (
        COW,
        lambda s, t, b, d: t.write(_one_row(t, txn_id="TXN-NEW"), "bulk_insert"),
    ),
    "delete": (COW, lambda s, t, b, d: t.write(_one_row(t), "delete")),
    "insert_overwrite": (
        COW,
        lambda s, t, b, d: t.write(_one_row(t, txn_id="TXN-NEW"), "insert_overwrite"),
    ),
    "delete_partitions": (COW, lambda s, t, b, d: t.delete_partitions(["region=us"])),
    "cluster": (COW, lambda s, t, b, d: t.cluster()),
    "clean": (COW, lambda s, t, b, d: t.clean(options={"hoodie.clean.commits.retained": "1"})),
    "rollback": (COW, lambda s, t, b, d: t.rollback(_latest_commit(t))),
    "restore": (COW, lambda s, t, b, d: _restore(t)),
    "archive": (
        COW,
        lambda s, t, b, d: t.archive(
            options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
        ),
    ),
    "add_columns": (COW, lambda s, t, b, d: t.add_columns([pa.field("tip", pa.float64())])),
    "set_properties": (
        COW,
        lambda s, t, b, d: t.set_properties({"hoodie.parquet.small.file.limit": "0"}),
    ),
    "sql_update": (
        COW,
        lambda s, t, b, d: _sql(s, b, d, "UPDATE txns SET fee_amount = 1 WHERE txn_id = 'TXN-001'"),
    ),
    "mor_upsert": (MOR, lambda s, t, b, d: t.write(_one_row(t, merchant_name="X", txn_ts=2**62))),
    "mor_compact": (
        MOR,
        lambda s, t, b, d: (t.write(_one_row(t, merchant_name="Y", txn_ts=2**62)), t.compact()),
    ),
}


@pytest.mark.skipif(not COW.exists(), reason="../shared/fixtures is absent")
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_no_action_leaves_a_stale_metadata_table(spark, tmp_path, action):
    zip_path, run = ACTIONS[action]
    base = unzip_table(zip_path, tmp_path / "table")
    t = hudilite.Table.load(spark, str(base))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(spark, t, base, tmp_path)
    assert any(issubclass(w.category, mg.MetadataTableRemoved) for w in caught), action
    gw = FileSystemGateway(str(base))
    props = pf.load(gw)
    assert props["hoodie.table.metadata.partitions"] == ""
    assert props["hoodie.table.metadata.partitions.inflight"] == ""
    assert not gw.exists(mg.METADATA_TABLE_DIR)
    assert not gw.exists(mg.DEFAULT_INDEX_DEFS)
    t = hudilite.Table.load(spark, str(base))
    cols = [f.name for f in t.schema]
    theirs = hudi_rs_read(str(base))
    assert (rows(theirs, cols) if theirs.num_rows else []) == rows(t.to_arrow(), cols)


@pytest.mark.skipif(not COW.exists(), reason="../shared/fixtures is absent")
def test_reads_leave_the_metadata_table_alone(spark, tmp_path):
    base = unzip_table(COW, tmp_path)
    before = pf.load(FileSystemGateway(str(base)))
    t = hudilite.Table.load(spark, str(base))
    t.read().count()
    t.to_arrow()
    t.timeline()
    assert pf.load(FileSystemGateway(str(base))) == before
    assert (base / ".hoodie" / "metadata" / "files").is_dir()
