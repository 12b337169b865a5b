"""Lazy rollback of failed writes never touches a committed write (issue 9, items 1 and 7).

The races are made deterministic with hooks: the rolling-back process ``A`` uses its own
gateway object whose ``delete_file`` runs the other writer's step at the moment ``A``
deletes the dead write's data file (outside the table lock, where the race lives).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hudilite.errors import ConflictError, TimelineError
from hudilite.services import compaction as comp
from hudilite.services.compaction import execute_compaction, schedule_compaction
from hudilite.services.rollback_completed import rollback_instant
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import Heartbeat, heartbeat_path
from hudilite.timeline.instant import COMMIT, ROLLBACK, SAVEPOINT, Instant, State
from hudilite.timeline.metadata import CommitMetadata, WriteStat, read_avro_record
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write import rollback as rb
from hudilite.write.markers import create_marker, marker_dir
from hudilite.write.rollback import rollback_failed_writes
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable, mor_with_logs

A = ("x", "a-0")
EXPIRY = {"heartbeat_interval_ms": 1000, "tolerable_misses": 1}
EXPIRY_OPTS = {"hoodie.client.heartbeat.interval_in_ms": "1000"}


def start_write(t: MiniTable, file_id: str) -> tuple[WriteTransaction, str]:
    """A write that entered its transaction, went inflight and wrote one data file (a copy
    of the table's first base file under a new file group) but did not commit yet."""
    txn = WriteTransaction(t.gw, t.config, COMMIT, heartbeat_interval_ms=60000)
    txn.__enter__()
    txn.start_inflight()
    src = t.files("a-0_")[0]
    rel = f"x/{BaseFileName(file_id, '0-1-2', txn.instant_time).render()}"
    t.gw.write_bytes(rel, t.gw.read_bytes(src))
    return txn, rel


def kill(t: MiniTable, txn: WriteTransaction) -> None:
    """The writer's process is gone: no more beats, and its last beat is long past."""
    assert txn._heartbeat is not None
    txn._heartbeat.stop(delete=False)
    path = t.gw.abs_path(heartbeat_path(txn.instant_time))
    os.utime(path, (1_000_000, 1_000_000))


def metadata_of(t: MiniTable, rel: str, file_id: str) -> CommitMetadata:
    stat = WriteStat(file_id=file_id, path=rel, partition_path="x", num_writes=1, num_inserts=1)
    return CommitMetadata(
        partition_to_write_stats={"x": [stat]},
        operation_type="INSERT",
        extra_metadata={"schema": t.schema_json},
    )


def hooked_gateway(t: MiniTable, path: str, action: Callable[[], None]) -> FileSystemGateway:
    """A second gateway on the table that runs ``action`` once, right before it deletes
    ``path`` (the rolling-back process, caught between its decisions and its deletes)."""
    gw = FileSystemGateway(str(Path(t.path)))
    real = gw.delete_file
    fired = {"done": False}

    def delete_file(rel: str) -> bool:
        if rel == path and not fired["done"]:
            fired["done"] = True
            action()
        return real(rel)

    gw.delete_file = delete_file  # type: ignore[method-assign]
    return gw


def states(t: MiniTable) -> list[tuple[str, str]]:
    return [(i.requested_time, i.action + ":" + i.state.name) for i in t.state().timeline]


@pytest.mark.parametrize("version", [6, 8])
def test_a_write_committing_during_a_rollback_keeps_its_files(tmp_path, version):
    """Issue 9 item 1: A rolls back dead write D; meanwhile B commits (and drops its
    heartbeat); A must neither delete B's files nor touch B's instant."""
    t = MiniTable(tmp_path / "t", version=version, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    d_txn, d_file = start_write(t, "dead-0")
    b_txn, b_file = start_write(t, "bbbb-0")
    kill(t, d_txn)

    def b_commits() -> None:
        b_txn.commit(metadata_of(t, b_file, "bbbb-0"))
        b_txn.__exit__(None, None, None)  # B is done: its heartbeat file goes

    gw_a = hooked_gateway(t, d_file, b_commits)
    results = rollback_failed_writes(gw_a, t.config, **EXPIRY)

    assert [r.rolled_back_instant for r in results] == [d_txn.instant_time]
    assert b_txn.completed is not None
    assert t.gw.exists(b_file), "the rollback deleted a committed write's file"
    assert not t.gw.exists(d_file)
    timeline = t.state().timeline
    assert timeline.is_completed(b_txn.instant_time)
    assert d_txn.instant_time not in timeline
    assert [i.action for i in timeline if i.action == ROLLBACK] == [ROLLBACK]
    # Every reader sees B's rows (B's file is a copy of the first commit's file group).
    assert t.read() == [("k1", 1, "v1", "x")] * 2
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 1, "v1", "x")] * 2


@pytest.mark.parametrize("version", [6, 8])
def test_a_write_whose_rollback_was_planned_cannot_commit(tmp_path, version):
    """A writer that only looked dead (its heartbeat stalled) tries to commit while A
    deletes its files: the commit is refused naming the rollback, and nothing of B stays."""
    t = MiniTable(tmp_path / "t", version=version, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    before = t.read()
    b_txn, b_file = start_write(t, "bbbb-0")
    kill(t, b_txn)
    refused: list[Exception] = []

    def b_tries_to_commit() -> None:
        try:
            b_txn.commit(metadata_of(t, b_file, "bbbb-0"))
        except ConflictError as exc:
            refused.append(exc)

    gw_a = hooked_gateway(t, b_file, b_tries_to_commit)
    results = rollback_failed_writes(gw_a, t.config, **EXPIRY)

    assert [r.rolled_back_instant for r in results] == [b_txn.instant_time]
    assert len(refused) == 1 and b_txn.completed is None
    assert f"rollback {results[0].rollback_instant}" in str(refused[0])
    assert b_txn.instant_time in str(refused[0])
    b_txn.__exit__(ConflictError, refused[0], None)  # B's own cleanup after the refusal
    assert not t.gw.exists(b_file)
    assert b_txn.instant_time not in t.state().timeline
    assert [a for _, a in states(t)] == ["commit:COMPLETED", "rollback:COMPLETED"]
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


def test_a_rolled_back_write_cannot_commit_afterwards(tmp_path):
    """Once the rollback completed (and the instant's files are gone) a late commit of the
    presumed-dead writer is refused too, instead of resurrecting a half-deleted write."""
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    b_txn, b_file = start_write(t, "bbbb-0")
    kill(t, b_txn)
    (done,) = rollback_failed_writes(t.gw, t.config, **EXPIRY)
    with pytest.raises(ConflictError, match=f"rollback {done.rollback_instant}"):
        b_txn.commit(metadata_of(t, b_file, "bbbb-0"))
    b_txn.__exit__(None, None, None)
    assert [a for _, a in states(t)] == ["commit:COMPLETED", "rollback:COMPLETED"]


def test_a_live_write_is_never_rolled_back(tmp_path):
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    b_txn, b_file = start_write(t, "bbbb-0")
    assert rollback_failed_writes(t.gw, t.config, **EXPIRY) == []
    b_txn.commit(metadata_of(t, b_file, "bbbb-0"))
    b_txn.__exit__(None, None, None)
    assert t.gw.exists(b_file)
    # Its heartbeat went after the completed instant became visible; a rollback pass now
    # sees a completed instant (not a pending one without heartbeat) and leaves it alone.
    assert not t.gw.exists(heartbeat_path(b_txn.instant_time))
    assert rollback_failed_writes(t.gw, t.config, **EXPIRY) == []
    assert t.state().timeline.is_completed(b_txn.instant_time)


# ------------------------------------------------------------- item 7: rollback leftovers


def crash_once(monkeypatch, name: str) -> None:
    """Make ``hudilite.write.rollback.<name>`` raise once: a rollback dies midway."""
    real = getattr(rb, name)
    calls = {"n": 0}

    def dying(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("process killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(rb, name, dying)


def rollbacks(t: MiniTable) -> list[tuple[str, str]]:
    return [(i.requested_time, i.state.name) for i in t.state().timeline if i.action == ROLLBACK]


def age(t: MiniTable, rel: str) -> None:
    """Make ``rel`` look untouched for a long time (its process died long ago)."""
    os.utime(t.gw.abs_path(rel), (1_000_000, 1_000_000))


@pytest.mark.parametrize("version", [6, 8])
def test_an_interrupted_rollback_is_finished_not_repeated(tmp_path, monkeypatch, version):
    t = MiniTable(tmp_path / "t", version=version, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    before = t.read()
    d_txn, d_file = start_write(t, "dead-0")
    kill(t, d_txn)
    crash_once(monkeypatch, "_complete_once")  # files deleted, rollback not completed
    with pytest.raises(OSError, match="process killed"):
        rollback_failed_writes(t.gw, t.config, **EXPIRY)
    ((pending, state),) = rollbacks(t)
    assert state == "INFLIGHT" and d_txn.instant_time in t.state().timeline
    # A rollback that is still running elsewhere (fresh heartbeat) is left to its owner,
    # and its target gets no second plan.
    Heartbeat(t.gw, pending, 60000).start().stop(delete=False)
    assert rollback_failed_writes(t.gw, t.config, **EXPIRY) == []
    assert rollbacks(t) == [(pending, "INFLIGHT")]
    age(t, heartbeat_path(pending))  # ... until that process is gone too
    (done,) = rollback_failed_writes(t.gw, t.config, **EXPIRY)
    assert (done.rollback_instant, done.rolled_back_instant) == (pending, d_txn.instant_time)
    assert done.files_deleted == (d_file,)
    assert rollbacks(t) == [(pending, "COMPLETED")]
    assert d_txn.instant_time not in t.state().timeline
    assert not t.gw.exists(heartbeat_path(pending))
    assert not t.gw.exists(heartbeat_path(d_txn.instant_time))
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


@pytest.mark.parametrize("version", [6, 8])
def test_a_rollback_killed_after_completing_is_not_repeated(tmp_path, monkeypatch, version):
    """Killed between completing the rollback and removing the dead write's own instant
    files: the next pass removes them and records no second rollback."""
    t = MiniTable(tmp_path / "t", version=version, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    before = t.read()
    d_txn, d_file = start_write(t, "dead-0")
    kill(t, d_txn)
    real = TimelineWriter.delete_files
    calls = {"n": 0}

    def dying(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("process killed")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TimelineWriter, "delete_files", dying)
    with pytest.raises(OSError, match="process killed"):
        rollback_failed_writes(t.gw, t.config, **EXPIRY)
    ((first, state),) = rollbacks(t)
    assert state == "COMPLETED" and d_txn.instant_time in t.state().timeline
    (done,) = rollback_failed_writes(t.gw, t.config, **EXPIRY)
    assert (done.rollback_instant, done.rolled_back_instant) == (first, d_txn.instant_time)
    assert rollbacks(t) == [(first, "COMPLETED")]
    assert d_txn.instant_time not in t.state().timeline
    assert not t.gw.exists(d_file)
    assert rollback_failed_writes(t.gw, t.config, **EXPIRY) == []
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


@pytest.mark.parametrize("point", ["execute_rollback", "_complete_once", "_delete_tmp_siblings"])
def test_an_interrupted_rollback_of_a_commit_is_finished_by_the_next_call(
    tmp_path, monkeypatch, point
):
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    before = t.read()
    last = t.write({A: [("k1", 2, "v2")]})
    crash_once(monkeypatch, point)
    with pytest.raises(OSError, match="process killed"):
        rollback_instant(t.state(), last)
    ((pending, _),) = rollbacks(t)
    result = rollback_instant(t.state(), last)
    assert (result.rollback_instant, result.rolled_back_instant) == (pending, last)
    assert rollbacks(t) == [(pending, "COMPLETED")]
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)


def test_rollback_removes_markers_tmp_files_and_heartbeats(tmp_path):
    t = MiniTable(tmp_path / "t", version=8, mor=True)
    first = t.write({A: [("k1", 1, "v1")]})
    d_txn, d_file = start_write(t, "dead-0")
    # The dead write was creating a log file when it died: marker and .tmp, no log file.
    log = f"x/.a-0_{d_txn.instant_time}.log.1_0-1-2"
    create_marker(t.gw, d_txn.instant_time, log, "APPEND")
    d_tmp = f"x/..a-0_{d_txn.instant_time}.log.1_0-1-2.{'a' * 32}.tmp"
    t.gw.write_bytes(d_tmp, b"half a log block")
    create_marker(t.gw, d_txn.instant_time, d_file, "CREATE")
    kill(t, d_txn)
    # Leftovers of the completed first write (a crash between completing and cleaning
    # up), of an instant rolled back long ago, and of interrupted timeline creates.
    timeline_dir = t.config.timeline_dir
    t.gw.write_bytes(heartbeat_path(first), b"")
    create_marker(t.gw, first, "x/whatever.parquet", "CREATE")
    gone = "20200101000000000"
    t.gw.write_bytes(heartbeat_path(gone), b"")
    age(t, heartbeat_path(gone))
    create_marker(t.gw, gone, "x/old.parquet", "CREATE")
    stale_tmp = f"{timeline_dir}/.{gone}.commit.requested.{'b' * 32}.tmp"
    t.gw.write_bytes(stale_tmp, b"")
    age(t, stale_tmp)
    # What may belong to a writer that is starting right now stays.
    starting = "29990101000000000"
    t.gw.write_bytes(heartbeat_path(starting), b"")
    fresh_tmp = f"{timeline_dir}/.{starting}.commit.requested.{'c' * 32}.tmp"
    t.gw.write_bytes(fresh_tmp, b"")

    (done,) = rollback_failed_writes(t.gw, t.config, **EXPIRY)
    assert done.files_deleted == (d_file,)  # the log file never existed
    for rel in (d_file, d_tmp, heartbeat_path(first), heartbeat_path(gone), stale_tmp):
        assert not t.gw.exists(rel), rel
    for instant_time in (d_txn.instant_time, first, gone, done.rollback_instant):
        assert not t.gw.exists(marker_dir(instant_time)), instant_time
        assert not t.gw.exists(heartbeat_path(instant_time)), instant_time
    assert t.gw.exists(heartbeat_path(starting)) and t.gw.exists(fresh_tmp)


def test_a_failed_delete_is_recorded_by_every_rollback(tmp_path):
    """One executor: the lazy rollback of a failed write records files it could not
    delete (``failedDeleteFiles``) like a user's rollback does."""
    t = MiniTable(tmp_path / "t", version=6, mor=False)
    t.write({A: [("k1", 1, "v1")]})
    d_txn, d_file = start_write(t, "dead-0")
    kill(t, d_txn)

    def refuse() -> None:
        raise PermissionError(f"cannot delete {d_file}")

    gw = hooked_gateway(t, d_file, refuse)
    (done,) = rollback_failed_writes(gw, t.config, **EXPIRY)
    assert done.files_failed == (d_file,) and done.files_deleted == ()
    raw = t.state().timeline.instant_content(
        Instant(done.rollback_instant, ROLLBACK, State.COMPLETED)
    )
    part = read_avro_record(raw)["partitionMetadata"]["x"]
    assert part["failedDeleteFiles"] == [t.gw.uri(d_file)]
    assert part["successDeleteFiles"] == []


def test_timeline_writer_creates_and_deletes_exact_files(tmp_path):
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    c = t.write({A: [("k1", 1, "v1")]})
    writer = TimelineWriter(t.gw, t.config)
    sp = Instant(c, SAVEPOINT, State.INFLIGHT)
    assert writer.create_file(sp) == sp  # shares the commit's time on purpose
    with pytest.raises(TimelineError, match="already exists"):
        writer.create_file(sp)
    deleted = writer.delete_files(c, [SAVEPOINT])
    assert deleted == [f"{t.config.timeline_dir}/{c}.savepoint.inflight"]
    assert t.state().timeline.is_completed(c)
    names = writer.delete_files(c, [COMMIT], [State.COMPLETED, State.INFLIGHT])
    assert [n.rsplit("/", 1)[1].split(".", 1)[1] for n in names] == ["commit", "inflight"]
    assert [i.state for i in t.state().timeline] == [State.REQUESTED]


# ------------------------------------------- a table-service attempt that only looked dead


@pytest.mark.parametrize("version", [6, 8])
def test_a_compaction_taken_over_while_it_commits_loses_nothing(tmp_path, version):
    """Compaction attempt P1 stalls (heartbeat expired) after writing its files; P2 takes
    the compaction over and rolls P1 back; P1 tries to commit while P2 deletes its files.
    P1 must be refused (not commit files that are being deleted), P2 completes."""
    t, _ = mor_with_logs(tmp_path / "t", version)
    before = t.read()
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    T = planned.instant_time
    stalled, go_commit = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def stalling_runner(ctx, ops):
        stats = comp.run_locally(ctx, ops)
        stalled.set()
        assert go_commit.wait(60)
        return stats

    def p1() -> None:
        try:
            outcome["p1"] = execute_compaction(t.state(), T, runner=stalling_runner)
        except Exception as exc:
            outcome["p1"] = exc

    worker = threading.Thread(target=p1)
    worker.start()
    assert stalled.wait(60)
    age(t, heartbeat_path(T))  # P1 looks dead

    def p1_commits() -> None:
        go_commit.set()
        worker.join(60)

    gw_p2 = FileSystemGateway(t.path)
    real = gw_p2.delete_file
    fired = {"done": False}

    def delete_file(rel: str) -> bool:
        if rel.endswith(f"_{T}.parquet") and not fired["done"]:
            fired["done"] = True
            p1_commits()
        return real(rel)

    gw_p2.delete_file = delete_file  # type: ignore[method-assign]
    result = execute_compaction(TableState.load(gw_p2), T, options={**EXPIRY_OPTS})
    assert fired["done"] and not worker.is_alive()
    assert isinstance(outcome["p1"], ConflictError), outcome["p1"]
    assert f"rollback {result.rolled_back_attempt}" in str(outcome["p1"])
    assert t.state().timeline.is_completed(T)
    assert rollbacks(t) == [(result.rolled_back_attempt, "COMPLETED")]
    assert all(t.gw.exists(p) for p in result.file_paths)
    assert not t.gw.exists(heartbeat_path(T)) and not t.gw.exists(marker_dir(T))
    assert t.read() == before == rows(hudi_rs_read(t.path), DATA)
