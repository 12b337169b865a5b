"""Timeline loading against real Hudi tables, and TimelineWriter round trips for both layouts."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hudilite.config import TableConfig, parse_properties
from hudilite.errors import InstantNotFoundError, TimelineError
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter

R, INF, D = State.REQUESTED, State.INFLIGHT, State.COMPLETED
V6_COMPLEX = "sample_table/cow/v6_complexkeygen_hivestyle.zip"
V6_EMPTY = "sample_table/cow/v6_empty.zip"
V8_COW = "sample_table/cow/v8_nonpartitioned.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"
V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"


def _open(base: Path) -> tuple[FileSystemGateway, TableConfig]:
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    return FileSystemGateway(str(base)), TableConfig.from_properties(props)


def _load(shared_fixture, rel: str) -> tuple[Timeline, FileSystemGateway, TableConfig, Path]:
    base = shared_fixture(rel)
    gw, cfg = _open(base)
    return Timeline.load(gw, cfg), gw, cfg, base


def _new_table(tmp_path: Path, version: int) -> tuple[FileSystemGateway, TableConfig]:
    cfg = TableConfig.new("t", table_version=version, record_key_fields=["id"])
    base = tmp_path / f"t{version}"
    base.mkdir()
    return FileSystemGateway(str(base)), cfg


# -- real timelines -------------------------------------------------------------------------------


def test_v6_cow_timeline(shared_fixture) -> None:
    tl, _, cfg, _ = _load(shared_fixture, V6_COMPLEX)
    assert cfg.layout_version == 1
    assert tl.instants == [
        Instant("20240418173213674", COMMIT, D),
        Instant("20240418173235694", COMMIT, D),
    ]
    assert tl.commits() == tl.completed() == tl.instants and tl.pending() == []
    # v6 records no completion time: the requested time orders commits.
    assert tl.completion_time("20240418173235694") == "20240418173235694"
    assert tl.completion_time("20240418173235695") is None
    assert tl.last_commit() == tl.last_completed() == Instant("20240418173235694", COMMIT, D)
    assert tl.first_active() == Instant("20240418173213674", COMMIT, D)
    assert tl.is_archived("20240101000000000") and not tl.is_archived("20240418173213674")
    assert tl.is_completed_or_archived("20240101000000000")
    assert not tl.is_completed_or_archived("20240418173213675")
    assert tl.replaced_file_ids() == set()
    assert tl.max_instant_time() == "20240418173235694"
    meta = tl.commit_metadata(tl.instants[1])
    assert meta.operation_type == "UPSERT" and meta.total_inserts == 1
    inflight = tl.commit_metadata(Instant("20240418173235694", COMMIT, INF))
    assert inflight.total_updates == 1 and inflight.file_ids() == {
        ("byteField=10/shortField=300", "a22e8257-e249-45e9-ba46-115bc85adcba-0")
    }
    assert tl.instant_content(Instant("20240418173235694", COMMIT, R)) == b""


def test_v6_empty_timeline(shared_fixture) -> None:
    tl, *_ = _load(shared_fixture, V6_EMPTY)
    assert len(tl) == 0 and tl.instants == [] and tl.commits() == []
    assert tl.first_active() is None and tl.last_completed() is None and tl.last_commit() is None
    assert tl.max_instant_time() is None and not tl.is_archived("20240101000000000")


def test_v8_cow_timeline_has_completion_times(shared_fixture) -> None:
    tl, _, cfg, _ = _load(shared_fixture, V8_COW)
    assert cfg.layout_version == 2
    assert tl.instants == [
        Instant("20250713010535797", COMMIT, D, "20250713010536200"),
        Instant("20250713010536861", COMMIT, D, "20250713010537206"),
    ]
    assert tl.completion_time("20250713010535797") == "20250713010536200"
    assert tl.file_name(Instant("20250713010535797", COMMIT, D)) == (
        "20250713010535797_20250713010536200.commit"
    )
    assert tl.max_instant_time() == "20250713010537206"
    assert "20250713010536861" in tl and tl.get("20250713010536861") == tl.instants[1]
    stat = tl.commit_metadata(tl.instants[0]).partition_to_write_stats[""][0]
    assert stat.file_id == "2746610d-ad02-4adb-a038-5cbb99cbd455-0"


def test_v9_mor_timeline_with_table_services(shared_fixture) -> None:
    tl, *_ = _load(shared_fixture, V9_MOR)
    actions = [(i.requested_time[-6:], i.action) for i in tl]
    assert actions == [
        ("827749", DELTA_COMMIT),
        ("830801", DELTA_COMMIT),
        ("832616", DELTA_COMMIT),
        ("833781", DELTA_COMMIT),
        ("834808", DELTA_COMMIT),
        ("835748", DELTA_COMMIT),
        ("836605", DELTA_COMMIT),
        ("837782", REPLACE_COMMIT),  # insert overwrite
        ("838542", DELTA_COMMIT),
        ("839205", DELTA_COMMIT),
        ("839895", COMMIT),  # compaction, completed as commit
        ("840454", REPLACE_COMMIT),  # clustering, completed as replacecommit
        ("840975", DELTA_COMMIT),
    ]
    assert all(i.is_completed for i in tl) and len(tl.commits()) == 13
    assert tl.completion_time("20260307135839895") == "20260307135840408"
    assert tl.filter(actions=REPLACE_COMMIT) == [
        Instant("20260307135837782", REPLACE_COMMIT, D, "20260307135838045"),
        Instant("20260307135840454", REPLACE_COMMIT, D, "20260307135840902"),
    ]
    assert tl.filter(actions=[COMMIT, CLEAN], states=D) == [
        Instant("20260307135839895", COMMIT, D, "20260307135840408")
    ]
    assert tl.filter(states=[R, INF]) == []
    # Replaced file groups: insert overwrite first, clustering added later.
    assert tl.replaced_file_ids(as_of="20260307135840000") == {
        ("region=eu", "c06fe141-9f11-46fb-aa70-d7f9d2dcca2f-0"),
        ("region=eu", "be8660fe-da4e-43c3-80cf-4fccb89ab0cc-0"),
    }
    assert tl.replaced_file_ids(as_of="20260307135837781") == set()
    assert len(tl.replaced_file_ids()) == 7
    assert ("region=us", "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0") in tl.replaced_file_ids()
    # The plans of completed table services are still readable.
    plan = read_avro_record(tl.instant_content(Instant("20260307135839895", COMPACTION, R)))
    assert len(plan["operations"]) == 2
    assert tl.instant_content(Instant("20260307135839895", COMPACTION, INF)) == b""
    clustering = read_avro_record(tl.instant_content(Instant("20260307135840454", CLUSTERING, R)))
    assert clustering["operationType"] == "CLUSTER"
    with pytest.raises(InstantNotFoundError):
        tl.instant_content(Instant("20260307135840454", CLEAN, R))
    # Incremental ranges go by completion time on layout 2.
    in_range = tl.commits_in_range("20260307135838045", "20260307135840408")
    assert [i.requested_time[-6:] for i in in_range] == ["838542", "839205", "839895"]
    assert tl.commits_in_range(None, "20260307135829538") == [tl.instants[0]]
    assert tl.commits_in_range("20260307135841179", None) == []


def test_v9_cow_counts(shared_fixture) -> None:
    tl, *_ = _load(shared_fixture, V9_COW)
    assert len(tl) == 12
    assert [i.action for i in tl].count(REPLACE_COMMIT) == 2
    assert tl.first_active() == Instant("20260307135657661", COMMIT, D, "20260307135659468")
    assert len(tl.replaced_file_ids()) == 7


def test_most_advanced_state_wins(shared_fixture) -> None:
    """Dropping completed files of a real timeline turns those instants back into pending."""
    _, gw, cfg, base = _load(shared_fixture, V9_MOR)
    tl_dir = base / ".hoodie/timeline"
    (tl_dir / "20260307135840975_20260307135841179.deltacommit").unlink()
    (tl_dir / "20260307135840454_20260307135840902.replacecommit").unlink()
    (tl_dir / "20260307135840454.clustering.inflight").unlink()
    tl = Timeline.load(gw, cfg)
    assert tl.pending() == [
        Instant("20260307135840454", CLUSTERING, R),
        Instant("20260307135840975", DELTA_COMMIT, INF),
    ]
    assert not tl.is_completed("20260307135840975")
    assert tl.completion_time("20260307135840975") is None
    assert tl.last_commit() == Instant("20260307135839895", COMMIT, D, "20260307135840408")
    assert tl.first_active() == tl.instants[0]
    # A pending write's files are not committed, although the instant is on the timeline.
    assert not tl.is_completed_or_archived("20260307135840975")


# -- writing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 8])
def test_write_cycle_round_trips(tmp_path: Path, version: int) -> None:
    gw, cfg = _new_table(tmp_path, version)
    w = TimelineWriter(gw, cfg)
    folder = Path(gw.abs_path(cfg.timeline_dir))
    meta = CommitMetadata(
        {"": [WriteStat("f1-0", "f1-0_0-1-2_x.parquet", "", num_inserts=3, num_writes=3)]},
        "INSERT",
        {"schema": "{}"},
    )
    req = w.create_requested(COMMIT)
    t = req.requested_time
    assert req == Instant(t, COMMIT, R)
    inflight = w.transition_inflight(req, meta.to_bytes(cfg.layout_version))
    assert inflight == Instant(t, COMMIT, INF)
    assert Timeline.load(gw, cfg).pending() == [inflight]
    done = w.complete(inflight, meta.to_bytes(cfg.layout_version))
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name[0].isdigit())
    if version == 6:
        assert done == Instant(t, COMMIT, D)
        assert names == [f"{t}.commit", f"{t}.commit.requested", f"{t}.inflight"]
    else:
        c = done.completion_time
        assert c is not None and c > t
        assert names == [f"{t}.commit.requested", f"{t}.inflight", f"{t}_{c}.commit"]
    tl = Timeline.load(gw, cfg)
    assert tl.instants == [done] and tl.commits() == [done]
    assert tl.commit_metadata(done) == meta
    # Never overwrite, never complete twice, never roll back a completed instant.
    with pytest.raises(TimelineError):
        w.complete(inflight, b"")
    with pytest.raises(TimelineError):
        w.transition_inflight(req)
    with pytest.raises(TimelineError):
        w.delete_instant_files(inflight)


@pytest.mark.parametrize("version", [6, 8])
def test_table_services_complete_under_the_read_action(tmp_path: Path, version: int) -> None:
    gw, cfg = _new_table(tmp_path, version)
    w = TimelineWriter(gw, cfg)
    comp = w.transition_inflight(w.create_requested(COMPACTION, content=b"plan"))
    comp_done = w.complete(comp, b"")
    assert comp_done.action == COMMIT
    clus = w.transition_inflight(w.create_requested(CLUSTERING))
    clus_done = w.complete(clus, b"")
    assert clus_done.action == REPLACE_COMMIT
    sp = w.create_requested(SAVEPOINT)
    assert sp.state is INF  # a savepoint starts inflight
    tl = Timeline.load(gw, cfg)
    assert [i.action for i in tl] == [COMMIT, REPLACE_COMMIT, SAVEPOINT]
    assert tl.instant_content(Instant(comp.requested_time, COMPACTION, R)) == b"plan"
    files = sorted(p.name for p in Path(gw.abs_path(cfg.timeline_dir)).iterdir() if p.is_file())
    t1, t2 = comp.requested_time, clus.requested_time
    if version == 6:
        assert f"{t1}.commit" in files and f"{t2}.replacecommit.requested" in files
        assert f"{t2}.replacecommit" in files
    else:
        assert f"{t1}_{comp_done.completion_time}.commit" in files
        assert f"{t2}.clustering.requested" in files
        assert f"{t2}_{clus_done.completion_time}.replacecommit" in files


def test_new_instant_time_is_above_everything_on_the_timeline(tmp_path: Path) -> None:
    gw, cfg = _new_table(tmp_path, 8)
    w = TimelineWriter(gw, cfg)
    assert w.new_instant_time() < w.new_instant_time()  # also above earlier calls
    # A pending instant and a completion time from the "future" (clock skew).
    gw.create_exclusive(".hoodie/timeline/29990101000000000.deltacommit.requested", b"")
    assert w.new_instant_time() == "29990101000000001"
    gw.create_exclusive(".hoodie/timeline/29990101000000002_29990101000000100.commit", b"")
    assert w.new_instant_time() == "29990101000000101"
    assert w.create_requested(ROLLBACK).requested_time == "29990101000000102"


def test_create_requested_skips_a_taken_time(tmp_path: Path) -> None:
    gw, cfg = _new_table(tmp_path, 6)
    w = TimelineWriter(gw, cfg)
    t = "29990101000000000"
    # Same action: the exclusive create fails, the next millisecond is taken.
    gw.create_exclusive(f".hoodie/{t}.commit.requested", b"")
    assert w.create_requested(COMMIT, t).requested_time == "29990101000000001"
    # Other action at the same time: detected by the re-listing; our file is removed again.
    gw.create_exclusive(".hoodie/29990101000000005.deltacommit.requested", b"")
    got = w.create_requested(COMMIT, "29990101000000005")
    assert got.requested_time == "29990101000000006"
    assert not gw.exists(".hoodie/29990101000000005.commit.requested")


def test_concurrent_writers_never_share_a_time(tmp_path: Path) -> None:
    gw, cfg = _new_table(tmp_path, 8)
    got: list[str] = []
    lock = threading.Lock()

    def run(action: str) -> None:
        w = TimelineWriter(FileSystemGateway(gw.base_uri), cfg)  # like separate processes
        for _ in range(10):
            inst = w.create_requested(action)
            with lock:
                got.append(inst.requested_time)

    threads = [threading.Thread(target=run, args=(a,)) for a in [COMMIT, DELTA_COMMIT, CLEAN] * 2]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(got) == 60 and len(set(got)) == 60
    assert len(Timeline.load(gw, cfg)) == 60


@pytest.mark.parametrize("version", [6, 8])
def test_delete_instant_files_of_a_pending_instant(tmp_path: Path, version: int) -> None:
    gw, cfg = _new_table(tmp_path, version)
    w = TimelineWriter(gw, cfg)
    keep = w.complete(w.transition_inflight(w.create_requested(DELTA_COMMIT)), b"")
    failed = w.transition_inflight(w.create_requested(DELTA_COMMIT), b"x")
    deleted = w.delete_instant_files(failed)
    t = failed.requested_time
    assert deleted == [
        f"{cfg.timeline_dir}/{t}.deltacommit.inflight",
        f"{cfg.timeline_dir}/{t}.deltacommit.requested",
    ]
    assert Timeline.load(gw, cfg).instants == [keep]
    assert w.delete_instant_files(failed) == []  # idempotent


def test_complete_refuses_an_instant_completed_elsewhere(tmp_path: Path) -> None:
    gw, cfg = _new_table(tmp_path, 8)
    w = TimelineWriter(gw, cfg)
    inflight = w.transition_inflight(w.create_requested(COMMIT))
    other = TimelineWriter(FileSystemGateway(gw.base_uri), cfg)
    other.complete(inflight, b"")
    with pytest.raises(TimelineError, match="already completed"):
        w.complete(inflight, b"")


def test_writer_on_a_real_v8_table(shared_fixture) -> None:
    _, gw, cfg, _ = _load(shared_fixture, V8_COW)
    w = TimelineWriter(gw, cfg)
    req = w.create_requested(COMMIT)
    assert req.requested_time > "20250713010537206"
    done = w.complete(
        w.transition_inflight(req), CommitMetadata({"": []}, "UPSERT", {}).to_avro_bytes()
    )
    tl = Timeline.load(gw, cfg)
    assert len(tl) == 3 and tl.last_commit() == done
    assert tl.commit_metadata(done).operation_type == "UPSERT"


def test_writers_in_different_processes_get_unique_increasing_times(tmp_path: Path) -> None:
    import subprocess
    import sys

    from hudilite.config import render_properties

    gw, cfg = _new_table(tmp_path, 8)
    gw.write_bytes(".hoodie/hoodie.properties", render_properties(cfg.to_properties()).encode())
    script = (
        "import sys\n"
        "from hudilite.storage.fs import FileSystemGateway\n"
        "from hudilite.tablestate.state import load_config\n"
        "from hudilite.timeline.timeline import TimelineWriter\n"
        "gw = FileSystemGateway(sys.argv[1])\n"
        "w = TimelineWriter(gw, load_config(gw))\n"
        "print(' '.join(w.create_requested('commit').requested_time for _ in range(15)))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, gw.base_uri], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    for times in outputs:
        assert times == sorted(times) and len(set(times)) == 15  # increasing per writer
    every = [t for times in outputs for t in times]
    assert len(set(every)) == 45
    assert len(Timeline.load(gw, cfg)) == 45
