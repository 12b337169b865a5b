"""``repair_orphan_files`` (issue 30) on an engine-built version-6 merge-on-read table,
without Spark: exact rows of a dry run, a scoped run and a move to the backup folder; a
copy of a committed base file under another file id (which readers saw as duplicates) and a
file of an instant found nowhere are orphans, while live log files (whose names carry their
slice's base instant, not their writer) and the files of a pending write are not; the
one-line refusals; what hudi-rs and hudilite read before and after."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.timeline.instant_time import plus_millis
from hudilite.timeline.timeline import TimelineWriter
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call


def test_repair_orphan_files(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", version=6)
    c1 = t.write({("x", "a-0"): [("k1", 1, "v1")], ("y", "b-0"): [("k2", 1, "v2")]})
    t.write({("x", "a-0"): [("k1", 2, "v3")]})
    t.write({("x", "a-0"): [("k3", 1, "v4")]})
    good = t.read()
    assert [c1 in f for f in t.files(".log.")] == [True, True]  # named after c1, not writers

    base_a = next(f for f in t.files("a-0_") if f.endswith(".parquet"))
    dup = f"x/dup-0_9-9-9_{c1}.parquet"
    t.gw.write_bytes(dup, t.gw.read_bytes(base_a))  # a retried task's copy, never committed
    nowhere = plus_millis(c1, 1)  # on no timeline, within the active one
    lost = f"y/zz-0_0-1-0_{nowhere}.parquet"
    t.gw.write_bytes(lost, b"half a file")
    writer = TimelineWriter(t.gw, t.config)
    pending = writer.create_requested(DELTA_COMMIT)
    running = f"x/new-0_0-1-0_{pending.requested_time}.parquet"
    t.gw.write_bytes(running, b"being written")
    assert rows(hudi_rs_read(t.path), DATA) != good  # the copy shows k1 twice

    both = [
        ("x", f"dup-0_9-9-9_{c1}.parquet", c1, "", "IDENTIFIED"),
        ("y", f"zz-0_0-1-0_{nowhere}.parquet", nowhere, "", "IDENTIFIED"),
    ]
    assert call("repair_orphan_files", path=t.path) == both
    assert call("repair_orphan_files", path=t.path, partition="y") == both[1:]
    assert call("repair_orphan_files", path=t.path, archived_start_ts=nowhere) == both[1:]
    assert call("repair_orphan_files", path=t.path, archived_end_ts=c1) == both[:1]

    with pytest.raises(ProcedureArgumentError) as no_backup:
        call("repair_orphan_files", path=t.path, dry_run=False)
    assert str(no_backup.value) == (
        "repair_orphan_files: backup_path is required when dry_run is false"
    )
    with pytest.raises(ProcedureArgumentError) as bad_partition:
        call("repair_orphan_files", path=t.path, partition="z")
    assert str(bad_partition.value) == (
        "repair_orphan_files: partition 'z' is not a partition folder of the table"
    )
    with pytest.raises(ProcedureError) as too_many:
        call("repair_orphan_files", path=t.path, max_orphans=1)
    assert str(too_many.value) == (
        "repair_orphan_files: found 2 orphan candidates, which exceeds max_orphans=1; "
        "re-run with partition => '<partition>' or raise max_orphans"
    )
    inside = str(Path(t.path) / "bak")
    with pytest.raises(ProcedureArgumentError) as in_table:
        call("repair_orphan_files", path=t.path, dry_run=False, backup_path=inside)
    assert str(in_table.value) == (
        f"repair_orphan_files: backup_path {inside!r} is inside the table; give a folder outside it"
    )
    dup_bytes = t.gw.read_bytes(dup)
    assert all(t.gw.exists(p) for p in (dup, lost))  # refusals and dry runs move nothing

    backup = tmp_path / "backup"
    moved = call("repair_orphan_files", path=t.path, dry_run=False, backup_path=str(backup))
    assert moved == [
        ("x", f"dup-0_9-9-9_{c1}.parquet", c1, str(backup / "t" / dup), "BACKED_UP"),
        ("y", f"zz-0_0-1-0_{nowhere}.parquet", nowhere, str(backup / "t" / lost), "BACKED_UP"),
    ]
    assert (backup / "t" / dup).read_bytes() == dup_bytes
    assert (backup / "t" / lost).read_bytes() == b"half a file"
    assert not t.gw.exists(dup) and not t.gw.exists(lost)
    assert t.gw.exists(running)
    assert t.read() == good == rows(hudi_rs_read(t.path), DATA)
    assert call("repair_orphan_files", path=t.path) == []
    assert t.state().timeline.get(pending.requested_time) == pending
    assert COMMIT not in {i.action for i in t.state().timeline}  # the repair commits nothing
