"""Lazy rollback of failed writes never touches a committed write (issue 9, items 1 and 7).

The races are made deterministic with hooks: the rolling-back process ``A`` uses its own
gateway object whose ``delete_file`` runs the other writer's step at the moment ``A``
deletes the dead write's data file (outside the table lock, where the race lives).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hudilite.errors import ConflictError
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName
from hudilite.timeline.heartbeat import heartbeat_path
from hudilite.timeline.instant import COMMIT, ROLLBACK
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.write.rollback import rollback_failed_writes
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows
from tests.unit.test_compaction_plan import DATA, MiniTable

A = ("x", "a-0")
EXPIRY = {"heartbeat_interval_ms": 1000, "tolerable_misses": 1}


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
