"""SIGKILL between the metadata table's deltacommit and the data instant's completion
(issue 29): a real process clustering a v9 table whose files partition hudilite keeps is
killed right after it completed the metadata deltacommit of its replacecommit. The
deltacommit is invisible to hudilite's reader of the files partition (it checks the data
timeline), and the next action, under the table lock, rolls it back and leaves the files
partition listing exactly the live files; hudi-rs reads the same rows throughout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.services.clustering import cluster
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.timeline import Timeline
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.faults.harness import HEARTBEAT, pending, run_writer, wait_dead
from tests.helpers import hudi_rs_read, rows

SEED = FIXTURES / "sample_table" / "cow" / "v9_txns_simple_nometa.zip"
SMALL = {"hoodie.clustering.plan.strategy.small.file.limit": str(10**9), **HEARTBEAT}


def _data_rows(base: Path) -> list[tuple]:
    table = hudi_rs_read(str(base))
    return rows(table.select([c for c in table.column_names if not c.startswith("_hoodie")]))


def _completed_files(gw: FileSystemGateway, instant_time: str) -> list[str]:
    """The metadata table's completed deltacommit file names of ``instant_time``."""
    names = [e.name for e in gw.list_dir(mt.TIMELINE_DIR)]
    return [n for n in names if n.startswith(f"{instant_time}_") and n.endswith(".deltacommit")]


def _listing(gw: FileSystemGateway) -> tuple[dict, dict]:
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    got = mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, config)))
    return got, mt.live_files(gw, config)


@pytest.mark.skipif(not SEED.exists(), reason="../shared/fixtures is absent")
def test_a_kill_after_the_metadata_deltacommit_is_repaired_by_the_next_action(
    tmp_path: Path,
) -> None:
    base = unzip_table(SEED, tmp_path)
    gw = FileSystemGateway(str(base))
    stored = {cfg.METADATA_ENABLED.name: "true"}
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass  # the guard builds the files partition
    before = _data_rows(base)
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT]

    outcome = run_writer(
        {
            "spark": False,
            "steps": [
                {
                    "op": "cluster",
                    "path": str(base),
                    "options": SMALL,
                    "fail_point": f"kill:{sync.AFTER_DELTACOMMIT}",
                }
            ],
        }
    )
    assert outcome.killed, outcome.describe()
    (stray,) = [t for t in sync.deltacommit_times(gw) if t != mt.INIT_INSTANT]
    (stray_file,) = _completed_files(gw, stray)
    assert pending(base) == [f"clustering/INFLIGHT@{stray}"]
    got, live = _listing(gw)
    assert got == live  # the stray deltacommit is not read
    assert _data_rows(base) == before

    wait_dead(base)
    done = cluster(TableState.load(gw), SMALL)  # the next action, under the table lock
    # It rolled the stray deltacommit back, then finished the killed clustering, whose
    # completion wrote a new metadata deltacommit of the same instant.
    assert [r.instant_time for r in done] == [stray]
    assert sync.deltacommit_times(gw) == [mt.INIT_INSTANT, stray]
    (new_file,) = _completed_files(gw, stray)
    assert new_file != stray_file
    logs = [e.name for e in gw.list_dir(f"{mt.METADATA_DIR}/files") if stray in e.name]
    assert len(logs) == 1
    got, live = _listing(gw)
    assert got == live
    assert any(stray in n for files in got.values() for n in files)
    assert pending(base) == []
    assert _data_rows(base) == before
