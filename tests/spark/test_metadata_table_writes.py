"""The metadata table kept by the Spark write paths (issue 29): a v8 copy-on-write and a v9
merge-on-read table created with ``hoodie.metadata.enable=true`` take inserts, upserts,
deletes, an insert_overwrite, a compaction (MOR), a clustering, a clean, a failed write and a
savepoint restore, with the metadata table compacted every three deltacommits. After each
action:

* the files partition, read through hudilite's reader (base file merged with the log blocks
  of completed metadata deltacommits whose data instant completed), equals the live data
  files of a storage listing (hudi==0.5.0 lists storage, so it cannot check this itself);
* hudilite's Spark read and hudi-rs read exactly the rows of a dict oracle;
* every completed data write, table service and clean has a metadata deltacommit of the same
  instant time.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite import config as cfg
from hudilite import failpoints
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from hudilite.timeline.timeline import Timeline
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_V_P

SCHEMA = ID_TS_V_P.schema
COLS = ID_TS_V_P.columns
MDT_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN)


def recs(*r: tuple[str, int, str, str]) -> list[dict[str, Any]]:
    return [dict(zip(COLS, x, strict=True)) for x in r]


def check(t: hudilite.Table, oracle: DictOracle, since: str = "") -> None:
    """The files partition lists the live files, every data instant requested after
    ``since`` has its metadata deltacommit, and the readers read the oracle's rows."""
    gw = FileSystemGateway(t.path)
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    timeline = Timeline.load(gw, config)
    assert sync.listed_partitions(properties_file.load(gw)) == ["files"]
    assert mt.listing_of(mt.read_files_partition(gw, timeline)) == mt.live_files(gw, config)
    data = {
        i.requested_time
        for i in timeline.completed()
        if i.action in MDT_ACTIONS and i.requested_time > since
    }
    assert data <= mt.completed_deltacommits(gw)
    # No metadata deltacommit outlives its data instant (the failed write's was rolled back).
    done = {i.requested_time for i in timeline.completed()}
    assert set(sync.deltacommit_times(gw)) - {mt.INIT_INSTANT} <= done
    expected = oracle.rows(COLS)
    assert spark_rows(t.read(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected


@pytest.mark.parametrize(("version", "table_type"), [(8, "cow"), (9, "mor")])
def test_every_action_keeps_the_files_partition(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int, table_type: str
) -> None:
    t = ID_TS_V_P.create(
        spark,
        str(tmp_path / "t"),
        table_type=table_type,
        table_version=version,
        # Compacting the metadata table every 3 deltacommits: the reads below list the
        # table through compacted slices.
        options={
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.compact.max.delta.commits": "3",
        },
    )
    oracle = DictOracle(["id"], "ts")

    def write(batch: list[dict[str, Any]], op: str = "upsert") -> None:
        t.write(pa.Table.from_pylist(batch, SCHEMA), op)  # type: ignore[arg-type]
        if op == "delete":
            oracle.delete(oracle.key(r) for r in batch)
        elif op == "insert_overwrite":
            parts = {r["p"] for r in batch}
            oracle.delete([k for k, r in oracle.state.items() if r["p"] in parts])
            oracle.upsert(batch)
        else:
            oracle.upsert(batch)
        check(t, oracle)

    write(recs(("a", 1, "x", "p1"), ("b", 1, "y", "p2"), ("c", 1, "z", "p1")), "insert")
    saved = t.savepoint()
    restored = copy.deepcopy(oracle)
    write(recs(("a", 2, "x2", "p1"), ("d", 1, "w", "p2")))
    write(recs(("c", 3, "z", "p1")), "delete")
    if table_type == "mor":
        assert t.compact()
        check(t, oracle)
    write(recs(("e", 1, "o", "p2")), "insert_overwrite")
    assert t.cluster(options={"hoodie.clustering.plan.strategy.small.file.limit": str(10**9)})
    check(t, oracle)
    assert t.clean(options={"hoodie.cleaner.commits.retained": "1"}) is not None
    check(t, oracle)
    assert len(mt.load_timeline(FileSystemGateway(t.path)).compactions) >= 2

    # A write failing after its metadata deltacommit: its own rollback rolls that back too.
    monkeypatch.setenv(failpoints.ENV_VAR, sync.AFTER_DELTACOMMIT)
    with pytest.raises(Exception, match="simulated failure"):
        t.write(pa.Table.from_pylist(recs(("f", 1, "lost", "p1")), SCHEMA))
    monkeypatch.delenv(failpoints.ENV_VAR)
    check(t, oracle)

    # The restore rebuilds the files partition from a listing (one base file, no log).
    restore = t.restore(saved.instant_time)
    check(t, restored, since=restore.instant_time)
    assert sync.deltacommit_times(FileSystemGateway(t.path)) == [mt.INIT_INSTANT]
    after = recs(("a", 5, "after", "p1"), ("g", 1, "new", "p2"))
    t.write(pa.Table.from_pylist(after, SCHEMA))
    restored.upsert(after)
    check(t, restored, since=restore.instant_time)
