"""Locks and instant reservation on S3 (moto server on 127.0.0.1): conditional PUTs make
``create_exclusive`` atomic, the storage-based lock lives in ``.hoodie/.locks/table_lock.json``
with a lease renewed by compare-and-swap, a SIGKILLed holder loses its lease within the
configured time, and two writers racing on one file group end with one commit and one
ConflictError, nothing lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from hudilite.errors import LockError
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write import lock as lk
from tests.moto_s3 import S3Server
from tests.staged_write import create_table, read_rows, upsert

ROOT = str(Path(__file__).resolve().parents[2])
LEASE = {
    "hoodie.write.lock.provider": lk._HUDI_PACKAGE + lk.STORAGE,
    "hoodie.write.lock.storage.validity.timeout.secs": "3",
    "hoodie.write.lock.storage.renew.interval.secs": "0.3",
    "hoodie.write.lock.wait_time_ms": "0",
    "hoodie.write.lock.wait_time_ms_between_retry": "50",
}


def s3_gateway(server: S3Server, uri: str) -> FileSystemGateway:
    # With an explicit filesystem the base is the path inside it: bucket/prefix.
    return FileSystemGateway(uri.removeprefix("s3://"), filesystem=server.filesystem())


def _child(server: S3Server, uri: str, body: str) -> subprocess.Popen:
    """A Python child with ``gw`` (the table on S3) and ``lk`` defined, running ``body``."""
    head = f"""
        import sys, time
        import pyarrow.fs as pafs
        from hudilite.storage.fs import FileSystemGateway
        from hudilite.write import lock as lk
        fs = pafs.S3FileSystem(access_key={server.access_key!r}, secret_key={server.secret_key!r},
            region={server.region!r}, endpoint_override={server.endpoint_url.split("://")[1]!r},
            scheme="http")
        gw = FileSystemGateway({uri.removeprefix("s3://")!r}, filesystem=fs)
        """
    code = textwrap.dedent(head) + textwrap.dedent(body)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


# ---- the primitives ------------------------------------------------------------------------


def test_moto_honours_conditional_puts(s3_server: S3Server, s3_uri: str) -> None:
    """The server under test must refuse a second If-None-Match create and a stale If-Match,
    or every other test here would pass for the wrong reason."""
    c, key = s3_server.client(), s3_uri.split("/", 3)[3] + "/probe"
    etag = c.put_object(Bucket=s3_server.bucket, Key=key, Body=b"1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError, match="PreconditionFailed"):
        c.put_object(Bucket=s3_server.bucket, Key=key, Body=b"2", IfNoneMatch="*")
    c.put_object(Bucket=s3_server.bucket, Key=key, Body=b"3", IfMatch=etag)
    with pytest.raises(ClientError, match="PreconditionFailed"):
        c.put_object(Bucket=s3_server.bucket, Key=key, Body=b"4", IfMatch=etag)


def test_create_exclusive_has_one_winner_on_s3(s3_server: S3Server, s3_uri: str) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    barrier, won = threading.Barrier(8), []

    def create(i: int) -> None:
        barrier.wait()
        if gw.create_exclusive(".hoodie/001.commit.requested", str(i).encode()):
            won.append(i)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    assert gw.read_bytes(".hoodie/001.commit.requested") == str(won[0]).encode()


def test_compare_and_swap_on_s3(s3_server: S3Server, s3_uri: str) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    v1 = gw.create_versioned("l.json", b"1")
    assert v1 is not None and gw.create_versioned("l.json", b"x") is None
    v2 = gw.replace_if_version("l.json", b"2", v1)
    assert v2 is not None and v2 != v1
    assert gw.replace_if_version("l.json", b"3", v1) is None
    assert gw.delete_if_version("l.json", v1) is False
    assert gw.read_versioned("l.json") == (b"2", v2)
    assert gw.delete_if_version("l.json", v2) is True
    assert gw.read_versioned("l.json") is None


def test_instant_reservation_on_s3_never_hands_one_time_to_two_writers(
    s3_server: S3Server, s3_uri: str
) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    config = create_table(gw)
    barrier, got = threading.Barrier(4), []

    def reserve() -> None:
        writer = TimelineWriter(gw, config)  # one writer per thread, like separate processes
        barrier.wait()
        got.append(writer.create_requested(COMMIT, "20260101000000000").requested_time)

    threads = [threading.Thread(target=reserve) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 4 and "20260101000000000" in got


# ---- the storage-based lock ----------------------------------------------------------------


def test_storage_lock_is_the_default_on_s3_and_follows_hudi_layout(
    s3_server: S3Server, s3_uri: str
) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    assert lk.LockConfig.resolve(gw, {}).provider == lk.STORAGE
    with lk.table_lock(gw, {"hoodie.write.lock.wait_time_ms": "0"}):
        held = json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))
        assert held["expired"] is False and held["pid"] == os.getpid()
        assert held["validUntil"] - held["acquiredAt"] == 300000
    released = json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))
    assert released["expired"] is True and released["owner"] == held["owner"]


def test_sigkilled_holder_loses_its_lease_within_the_validity(
    s3_server: S3Server, s3_uri: str
) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    # The child claims another host, so only its lease (not its pid) can free the lock.
    proc = _child(
        s3_server,
        s3_uri,
        f"""
        lk._HOST = "other-host"
        with lk.table_lock(gw, {LEASE!r}):
            print("locked", flush=True)
            time.sleep(120)
        """,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        time.sleep(3.5)  # longer than the 3 s lease: only the heartbeat keeps it held
        with (
            pytest.raises(LockError, match="is locked by other-host pid"),
            lk.table_lock(gw, LEASE),
        ):
            pass
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        with lk.table_lock(gw, {**LEASE, "hoodie.write.lock.wait_time_ms": "15000"}):
            took = time.monotonic() - killed
            assert json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))["pid"] == os.getpid()
    finally:
        proc.kill()
        proc.wait()
    # The rest of a lease renewed at most 0.3 s before the kill, plus the clock-drift
    # allowance (upper bound generous: the test machine may be loaded).
    assert 1.5 < took < 3 + lk.CLOCK_DRIFT_MS / 1000 + 3


def test_sigkilled_holder_on_this_host_is_replaced_at_once(
    s3_server: S3Server, s3_uri: str
) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    opts = {**LEASE, "hoodie.write.lock.storage.validity.timeout.secs": "60"}
    proc = _child(
        s3_server,
        s3_uri,
        f"""
        with lk.table_lock(gw, {opts!r}):
            print("locked", flush=True)
            time.sleep(120)
        """,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with lk.table_lock(gw, opts):  # wait_time_ms 0: no waiting for the 60 s lease
        assert json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))["pid"] == os.getpid()


# ---- two writers racing on one file group ---------------------------------------------------


def test_two_writers_racing_on_s3_one_commits_one_conflicts(
    s3_server: S3Server, s3_uri: str, tmp_path: Path
) -> None:
    gw = s3_gateway(s3_server, s3_uri)
    config = create_table(gw)
    upsert(gw, [("a", "0"), ("b", "0")], LEASE)
    sync = str(tmp_path)
    opts = {**LEASE, "hoodie.write.lock.wait_time_ms": "20000"}
    writers = [
        _child(
            s3_server,
            s3_uri,
            f"""
            import os
            from hudilite.errors import ConflictError
            from tests.staged_write import upsert
            def ready():
                open(os.path.join({sync!r}, "ready-{i}"), "w").close()
            def go():
                deadline = time.monotonic() + 60
                while len([n for n in os.listdir({sync!r}) if n.startswith("ready-")]) < 2:
                    assert time.monotonic() < deadline, "the other writer never got ready"
                    time.sleep(0.02)
            try:
                t = upsert(gw, [("a", "w{i}"), ("c{i}", "w{i}")], {opts!r}, ready=ready, go=go)
                print("committed", t, flush=True)
            except ConflictError as e:
                print("conflict", type(e).__name__, e, flush=True)
            """,
        )
        for i in (1, 2)
    ]
    outs = []
    for w in writers:
        out, _ = w.communicate(timeout=150)
        outs.append(out.strip())
    committed = [o for o in outs if o.startswith("committed")]
    conflicted = [o for o in outs if o.startswith("conflict ConflictError")]
    assert len(committed) == 1 and len(conflicted) == 1, outs
    winner = "w1" if outs[0].startswith("committed") else "w2"
    c = f"c{winner[1]}"
    assert read_rows(gw) == [("a", winner), ("b", "0"), (c, winner)]
    completed = [i.requested_time for i in Timeline.load(gw, config).commits()]
    assert len(completed) == 2 and completed[1] == committed[0].split()[1]
    # The loser was rolled back: every data file left is one a completed commit names.
    timeline = Timeline.load(gw, config)
    named = {
        s.path
        for i in timeline.commits()
        for s in timeline.commit_metadata(i).write_stats()
        if s.path
    }
    files = {e.path for e in gw.list_recursive("") if not e.is_dir and e.path.endswith(".parquet")}
    assert files == named
