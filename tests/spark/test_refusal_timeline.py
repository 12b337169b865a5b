"""A write refused for a missing file leaves the timeline as it was (issue 26).

The check that refuses to build on a file slice whose committed file is missing ran inside
the write transaction: the refused write left a requested and an inflight instant and a
rollback behind. It now runs on the planned file groups before any instant exists, so
``.hoodie`` is byte-for-byte what it was; with the file put back the table reads as
committed (hudilite and hudi-rs).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hudilite.errors import MissingFileError
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_P

COLS = ID_TS_P.columns


batch = ID_TS_P.batch


def hoodie_files(base: str) -> dict[str, bytes]:
    """Every file under ``.hoodie`` (heartbeats, markers and locks included) and its bytes."""
    root = Path(base) / ".hoodie"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind, where", [("cow", "driver"), ("cow", "spark"), ("mor", "spark")])
def test_a_refused_write_leaves_the_timeline_untouched(spark, tmp_path, kind, where):
    t = ID_TS_P.create(spark, str(tmp_path / "t"), table_type=kind)
    t.write(batch(("a", 1, "x"), ("b", 1, "x")))
    t.write(batch(("a", 2, "x")))
    if kind == "mor":
        t.compact()  # the update now lives in the compacted base file only
    folder = tmp_path / "t" / "p=x"
    newest = max(
        (f for f in os.listdir(folder) if f.endswith(".parquet")),
        key=lambda f: f.rsplit("_", 1)[1],
    )
    kept = tmp_path / "kept.parquet"
    shutil.move(folder / newest, kept)
    before = hoodie_files(t.path)
    listing = sorted(os.listdir(folder))
    options = {"hoodie.hudilite.write.local.max.rows": "0"} if where == "spark" else {}
    with pytest.raises(MissingFileError, match=f"base file {folder / newest} .* is missing"):
        t.write(batch(("a", 3, "x"), ("c", 1, "x")), options=options)
    assert hoodie_files(t.path) == before
    assert sorted(os.listdir(folder)) == listing
    shutil.move(kept, folder / newest)
    committed = [("a", 2, "x"), ("b", 1, "x")]
    assert rows(hudi_rs_read(t.path), COLS) == committed
    assert spark_rows(t.read(), COLS) == committed
