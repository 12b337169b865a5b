"""``restore_to_instant`` and ``run_timeline_compaction`` (Hudi's RestoreToInstantProcedure
and RunTimelineCompactionProcedure) on tables written without Spark: exact rows, the
timeline and LSM files left behind, the metadata table's listing, and what hudi-rs reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite import config as cfg
from hudilite.procedures import REGISTRY, _load_all
from hudilite.procedures.registry import (
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    bind,
)
from hudilite.services import archive_formats as fmt
from hudilite.services.archive import archive, archived_timeline
from hudilite.tablestate import properties_file
from hudilite.timeline.metadata import read_avro_record
from tests.helpers import hudi_rs_read, rows
from tests.unit.metadata.test_metadata_sync import listed, live
from tests.unit.services.test_compaction_plan import DATA, MiniTable

_load_all()
A = ("x", "a-0")
B = ("y", "b-0")


def call(name: str, options: dict[str, str] | None = None, **named: Any) -> list[tuple[Any, ...]]:
    """Run a procedure as CALL does, without Spark."""
    spec = REGISTRY[name]
    ctx = ProcedureContext(None, None, "default", options or {}, name)  # type: ignore[arg-type]
    return spec.func(ctx, bind(spec, [], named))


def _three_commits(root: Path, version: int, *, metadata: bool = False) -> tuple[MiniTable, list]:
    t = MiniTable(root, version=version, mor=False)
    if metadata:
        stored = {cfg.METADATA_ENABLED.name: "true"}
        t.gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    times = [t.write({A: [("k1", 1, "v1")], B: [("k3", 1, "v3")]})]
    times.append(t.write({A: [("k1", 2, "u1"), ("k2", 2, "n2")]}))
    times.append(t.write({B: [("k3", 3, "u3")]}))
    return t, times


@pytest.mark.parametrize("version", [6, 8])
def test_restore_to_an_unsavepointed_instant(tmp_path: Path, version: int) -> None:
    t, (t1, t2, t3) = _three_commits(tmp_path / "t", version)
    files_t1 = t.files(f"_{t1}.parquet")
    got = call("restore_to_instant", path=t.path, instant_time=t1, audit_post_restore=True)
    [(ok, restore_time, millis, undone, audit)] = got
    timeline = t.state().timeline
    meta = read_avro_record(timeline.instant_content(timeline.get(restore_time)))
    assert (ok, undone, audit) == (True, 2, "PASSED")
    assert millis == meta["timeTakenInMillis"] and meta["instantsToRollback"] == [t3, t2]
    # The restore instant is all that is left after t1 (its rollbacks were folded in).
    assert [(i.requested_time, i.action) for i in timeline.completed()] == [
        (t1, "commit"),
        (restore_time, "restore"),
    ]
    assert t.files() == files_t1
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 1, "v1", "x"), ("k3", 1, "v3", "y")]
    # Audit only, later: the same restore still passes; a deleted file coming back fails it.
    again = call(
        "restore_to_instant", path=t.path, audit_only=True, start_restore_time=restore_time
    )
    assert again == [(None, None, None, None, "PASSED")]
    gone = f"x/a-0_0-1-0_{t2}.parquet"
    t.gw.write_bytes(gone, b"back")
    again = call(
        "restore_to_instant", path=t.path, audit_only=True, start_restore_time=restore_time
    )
    assert again == [(None, None, None, None, "FAILED")]


def test_restore_keeps_the_metadata_table_exact(tmp_path: Path) -> None:
    t, (t1, _, _) = _three_commits(tmp_path / "t", 8, metadata=True)
    assert listed(t.gw) == live(t.gw)  # the guard built it, the commits kept it
    assert len(listed(t.gw)["x"]) == 2
    [(ok, _, _, undone, audit)] = call("restore_to_instant", path=t.path, instant_time=t1)
    assert (ok, undone, audit) == (True, 2, None)
    assert listed(t.gw) == live(t.gw)
    assert sorted(listed(t.gw)["x"]) == [f"a-0_0-1-0_{t1}.parquet"]
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 1, "v1", "x"), ("k3", 1, "v3", "y")]
    with pytest.raises(ProcedureArgumentError, match="enable_metadata => false would delete"):
        call("restore_to_instant", path=t.path, instant_time=t1, enable_metadata=False)


@pytest.fixture(scope="module")
def refusals_table(tmp_path_factory: pytest.TempPathFactory) -> MiniTable:
    """One table for the refusals (each writes nothing)."""
    return _three_commits(tmp_path_factory.mktemp("refusals") / "t", 6)[0]


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({}, "instant_time is required when audit_only=false"),
        ({"audit_only": True}, "start_restore_time is required when audit_only=true"),
        ({"instant_time": "1", "start_restore_time": "2"}, "start_restore_time may only be"),
        ({"audit_only": True, "start_restore_time": "2", "instant_time": "1"}, "instant_time may"),
        ({"instant_time": "1", "rollback_parallelism": 0}, "rollback_parallelism must be positive"),
    ],
)
def test_restore_argument_errors(
    refusals_table: MiniTable, named: dict[str, Any], message: str
) -> None:
    t = refusals_table
    before = sorted(e.name for e in t.gw.list_dir(".hoodie"))
    with pytest.raises(ProcedureArgumentError, match=message):
        call("restore_to_instant", path=t.path, **named)
    with pytest.raises(ProcedureError, match="cannot restore to 20000101000000000: no completed"):
        call("restore_to_instant", path=t.path, instant_time="20000101000000000")
    with pytest.raises(ProcedureError, match="no completed restore instant found for 2"):
        call("restore_to_instant", path=t.path, audit_only=True, start_restore_time="2")
    assert sorted(e.name for e in t.gw.list_dir(".hoodie")) == before


def test_timeline_compaction_merges_a_full_level(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    keep = {
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
        "hoodie.cleaner.commits.retained": "1",
    }
    history = t.config.archive_dir
    for i in range(8):
        t.write({A: [("k1", i, f"v{i}")]})
        archive(t.state(), keep)
    level0 = sorted(f.name for f in fmt.read_manifest(t.gw, history))
    assert len(level0) >= 3 and all(n.endswith("_0.parquet") for n in level0)
    archived = [(a.requested_time, a.action) for a in archived_timeline(t.state())]
    version = fmt.latest_lsm_version(t.gw, history)
    [(start, millis)] = call(
        "run_timeline_compaction", {"hoodie.timeline.compaction.batch.size": "3"}, path=t.path
    )
    assert len(start) == 17 and start.isdigit() and millis >= 0
    lows = [n.split("_")[0] for n in level0[:3]]
    highs = [n.split("_")[1] for n in level0[:3]]
    merged = f"{min(lows)}_{max(highs)}_1.parquet"
    assert sorted(f.name for f in fmt.read_manifest(t.gw, history)) == sorted([merged, *level0[3:]])
    assert fmt.latest_lsm_version(t.gw, history) == version + 1
    assert [(a.requested_time, a.action) for a in archived_timeline(t.state())] == archived
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 7, "v7", "x")]
    # Below a full level there is nothing to merge: the row, and no new manifest.
    call("run_timeline_compaction", path=t.path)
    assert fmt.latest_lsm_version(t.gw, history) == version + 1


def test_timeline_compaction_refuses_a_version_6_table(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "t", version=6, mor=False)
    with pytest.raises(ProcedureError, match=r"is table version 6, whose archived timeline"):
        call("run_timeline_compaction", path=t.path)
    assert not t.gw.exists(".hoodie/archived")
