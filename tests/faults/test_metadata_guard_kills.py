"""SIGKILL between the steps of the metadata-table guard (issue 25).

A real writer process (a clean, which takes the table lock and so runs the guard) is killed
after the guard cleared hoodie.properties and after it deleted ``.hoodie/metadata``. Each time
every reader still reads the table's rows, and the next write (in the test process) finishes
the guard and is seen by hudi-rs, which lists files through the metadata table while
hoodie.properties names one.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import hudilite
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file as pf
from hudilite.write import metadata_guard as mg
from tests.conftest import FIXTURES, unzip_table
from tests.faults.harness import run_writer
from tests.helpers import hudi_rs_read, rows

META_ZIPS = (
    [FIXTURES / "sample_table" / k / "v9_txns_simple_meta.zip" for k in ("cow", "mor/avro")]
    if FIXTURES.is_dir()
    else []
)


def _readers(spark, base: Path) -> dict[str, list[tuple]]:
    t = hudilite.Table.load(spark, str(base))
    cols = [f.name for f in t.schema]
    return {
        "hudi-rs": rows(hudi_rs_read(str(base)), cols),
        "arrow": rows(t.to_arrow(), cols),
    }


@pytest.mark.skipif(not META_ZIPS, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", META_ZIPS, ids=lambda z: z.parent.name)
@pytest.mark.parametrize("point", [mg.AFTER_PROPERTIES, mg.AFTER_DELETE])
def test_a_kill_inside_the_guard_loses_nothing(spark, tmp_path, zip_path, point):
    base = unzip_table(zip_path, tmp_path)
    before = _readers(spark, base)
    assert before["hudi-rs"] == before["arrow"] and before["arrow"]

    outcome = run_writer(
        {
            "spark": False,
            "steps": [{"op": "clean", "path": str(base), "fail_point": f"kill:{point}"}],
        }
    )
    assert outcome.killed, outcome.describe()
    gw = FileSystemGateway(str(base))
    props = pf.load(gw)
    assert props["hoodie.table.metadata.partitions"] == ""
    assert gw.exists(mg.METADATA_TABLE_DIR) == (point == mg.AFTER_PROPERTIES)
    assert gw.exists(mg.DEFAULT_INDEX_DEFS)
    assert _readers(spark, base) == before

    # The next write finishes the guard, and every reader sees it.
    t = hudilite.Table.load(spark, str(base))
    row = t.to_arrow().select([f.name for f in t.schema]).slice(0, 1).to_pylist()[0]
    row["txn_id"] = "TXN-AFTER-KILL"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mg.MetadataTableRemoved)
        assert t.write(pa.Table.from_pylist([row], t.schema)).num_inserts == 1
    assert not mg.needs_guard(gw, pf.load(gw))
    after = _readers(spark, base)
    assert after["hudi-rs"] == after["arrow"]
    assert len(after["hudi-rs"]) == len(before["hudi-rs"]) + 1
