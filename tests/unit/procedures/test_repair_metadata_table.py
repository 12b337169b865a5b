"""The repair procedures (issue 30) on a version-8 table that keeps its metadata table
(``hoodie.metadata.enable=true``), without Spark: after each repair the files partition
lists exactly the table's live files, ``hoodie.properties`` still lists it, and hudi-rs
reads what hudilite reads."""

from __future__ import annotations

from pathlib import Path

from hudilite import config as cfg
from hudilite.metadata import table as mt
from hudilite.services.clustering import schedule_clustering
from hudilite.tablestate import properties_file
from hudilite.timeline.instant import COMMIT, Instant, State
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from hudilite.write.markers import create_marker
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call


def exact(t: MiniTable) -> list[tuple]:
    """The files partition lists the live files; returns the rows both readers read."""
    props = properties_file.load(t.gw)
    assert props[cfg.METADATA_PARTITION_KEYS[0]] == mt.FILES_PARTITION
    config = cfg.TableConfig.from_properties(props)
    listed = mt.listing_of(mt.read_files_partition(t.gw, Timeline.load(t.gw, config)))
    assert listed == mt.live_files(t.gw, config)
    got = t.read()
    assert rows(hudi_rs_read(t.path), DATA) == got
    return got


def test_repairs_keep_the_metadata_table_exact(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    defaults = properties_file.read_write_defaults(t.gw)
    defaults[cfg.METADATA_ENABLED.name] = "true"
    t.gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(defaults))
    with table_lock(t.gw):
        pass  # the guard builds the files partition
    c1 = t.write({("x", "a-0"): [("k1", 1, "v1")], ("y", "b-0"): [("k2", 1, "v2")]})
    t.write({("x", "c-0"): [("k1", 2, "v3")]})  # k1 again, in another file group
    assert [r[0] for r in exact(t)] == ["k1", "k1", "k2"]

    out = str(tmp_path / "out")
    call(
        "repair_deduplicate",
        path=t.path,
        duplicated_partition_path="x",
        repaired_output_path=out,
        dry_run=False,
    )
    assert exact(t) == [("k1", 2, "v3", "x"), ("k2", 1, "v2", "y")]
    good = exact(t)

    # a stale failed write with a file, rolled back
    writer = TimelineWriter(t.gw, t.config)
    stale = writer.create_requested(COMMIT, "20200101000000000")
    writer.transition_inflight(stale)
    stray = "x/s-0_0-1-0_20200101000000000.parquet"
    create_marker(t.gw, stale.requested_time, stray, "CREATE")
    t.gw.write_bytes(stray, b"partial")
    assert call("cleanup_stale_inflight_commits", path=t.path, include_ingestion_commits=True) == [
        ("20200101000000000", "commit", True)
    ]
    assert exact(t) == good

    # an inflight clustering whose attempt died, rolled back and its plan dropped
    plan = schedule_clustering(
        t.state(), {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "true"}
    )
    assert plan is not None
    writer.transition_inflight(Instant(plan.instant_time, "clustering", State.REQUESTED))
    assert [
        r[0]
        for r in call(
            "run_rollback_inflight_tableservice",
            path=t.path,
            pending_instant=plan.instant_time,
            delete_request_instant_file=True,
        )
    ] == [plan.instant_time]
    assert exact(t) == good

    # an orphan copy of a committed base file: never listed, moved aside
    base = next(f for f in t.files("b-0_") if f.endswith(".parquet"))
    orphan = f"y/dup-0_9-9-9_{c1}.parquet"
    t.gw.write_bytes(orphan, t.gw.read_bytes(base))
    moved = call(
        "repair_orphan_files", path=t.path, dry_run=False, backup_path=str(tmp_path / "bak")
    )
    assert [(r[1], r[4]) for r in moved] == [(orphan.split("/")[1], "BACKED_UP")]
    assert exact(t) == good

    # partition metadata to Parquet, and hoodie.properties rewritten
    call("repair_migrate_partition_meta", path=t.path, dry_run=False)
    assert exact(t) == good
    props = {k: v for k, v in properties_file.load(t.gw).items() if k != "hoodie.table.checksum"}
    src = tmp_path / "p.properties"
    src.write_bytes(properties_file.encode({**props, "hoodie.table.comment": "kept"}))
    got = call("repair_overwrite_hoodie_props", path=t.path, new_props_file_path=str(src))
    assert [r for r in got if r[1] != r[2]] == [("hoodie.table.comment", "null", "kept")]
    assert exact(t) == good
