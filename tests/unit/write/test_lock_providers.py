"""Table lock providers: in-process threads, the file lock with owner/lease/heartbeat (a lock
left by a SIGKILLed process is taken at once), the storage-based lock's JSON layout, the
fail-fast check before a write, and the compare-and-swap primitives they rest on."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hudilite.config import TableConfig, render_properties
from hudilite.errors import ConfigError, ConflictError, LockError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import PROPERTIES_FILE
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.timeline import Timeline
from hudilite.write import lock as lk
from hudilite.write.transaction import WriteTransaction
from tests.staged_write import create_table, read_rows, upsert

FS_LOCK = ".hoodie/lock"
HOST = socket.gethostname()
FAST = {"hoodie.write.lock.wait_time_ms": "0", "hoodie.write.lock.wait_time_ms_between_retry": "20"}


def _holder_script(base: str, options: dict[str, str], host: str | None = None) -> str:
    """A child process that takes the table lock, says so, and holds it until killed."""
    return textwrap.dedent(
        f"""
        import sys, time
        from hudilite.storage.fs import FileSystemGateway
        from hudilite.write import lock as lk
        if {host!r} is not None:
            lk._HOST = {host!r}
        gw = FileSystemGateway({base!r})
        with lk.table_lock(gw, {options!r}):
            print("locked", flush=True)
            time.sleep(120)
        """
    )


def _spawn_holder(base: str, options: dict[str, str], host: str | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _holder_script(base, options, host)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(Path(__file__).resolve().parents[3]),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.fixture
def gw(tmp_path: Path) -> FileSystemGateway:
    g = FileSystemGateway(str(tmp_path / "t"))
    g.mkdirs(".hoodie")
    return g


# ---- options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("org.apache.hudi.client.transaction.lock.InProcessLockProvider", lk.IN_PROCESS),
        ("org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider", lk.FILESYSTEM),
        ("org.apache.hudi.client.transaction.lock.StorageBasedLockProvider", lk.STORAGE),
        ("in_process", lk.IN_PROCESS),
        ("filesystem", lk.FILESYSTEM),
        ("Storage", lk.STORAGE),
    ],
)
def test_provider_names_follow_hudi_classes_and_short_names(value, expected, gw):
    assert lk.LockConfig.resolve(gw, {"hoodie.write.lock.provider": value}).provider == expected


def test_unknown_provider_is_a_config_error_naming_it(gw):
    with pytest.raises(ConfigError, match=r"unknown lock provider 'org\.example\.ZkLock'"):
        lk.LockConfig.resolve(gw, {"hoodie.write.lock.provider": "org.example.ZkLock"})
    with pytest.raises(ConfigError, match=r"'hoodie\.write\.concurrency\.mode'"):
        lk.LockConfig.resolve(gw, {"hoodie.write.concurrency.mode": "whatever"})


def test_defaults_and_leases(gw):
    c = lk.LockConfig.resolve(gw, {})
    assert (c.provider, c.concurrency_mode, c.wait_ms) == (lk.FILESYSTEM, "single_writer", 60000)
    assert (c.renew_ms, c.lease_ms) == (60000, 300000)
    c = lk.LockConfig.resolve(gw, {"hoodie.write.lock.filesystem.expire": "2"})
    assert c.lease_ms == 120000
    c = lk.LockConfig.resolve(
        gw,
        {
            "hoodie.write.lock.provider": "storage",
            "hoodie.write.lock.storage.validity.timeout.secs": "2",
            "hoodie.write.lock.storage.heartbeat.poll.secs": "0.5",
        },
    )
    assert (c.lease_ms, c.renew_ms) == (2000, 500)
    with pytest.raises(ConfigError, match="lease of 1000 ms must be longer"):
        lk.LockConfig.resolve(
            gw,
            {
                "hoodie.write.lock.provider": "storage",
                "hoodie.write.lock.storage.validity.timeout.secs": "1",
                "hoodie.write.lock.storage.renew.interval.secs": "1",
            },
        )


def test_stored_table_options_choose_the_provider_for_callers_without_options(gw):
    gw.write_bytes(".hoodie/hudilite.properties", b"hoodie.write.lock.provider=storage\n")
    with lk.table_lock(gw):
        assert gw.exists(lk.STORAGE_LOCK_FILE)
        assert not gw.exists(FS_LOCK)


# ---- in-process ----------------------------------------------------------------------------


def test_in_process_provider_serialises_threads_and_writes_no_file(gw):
    opts = {"hoodie.write.lock.provider": "in_process"}
    inside, peak, order = [0], [0], []
    guard = threading.Lock()

    def work(i: int) -> None:
        with lk.table_lock(gw, opts):
            with guard:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.02)
            order.append(i)
            with guard:
                inside[0] -= 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1
    assert sorted(order) == list(range(6))
    assert [e.name for e in gw.list_dir(".hoodie")] == []


def test_in_process_holder_is_named_after_the_wait(gw):
    opts = {**FAST, "hoodie.write.lock.provider": "in_process"}
    opts["hoodie.write.lock.wait_time_ms"] = "100"
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lk.table_lock(gw, opts):
            held.set()
            done.wait(5)

    t = threading.Thread(target=hold, name="holder-thread")
    t.start()
    held.wait(5)
    try:
        with pytest.raises(LockError) as err, lk.table_lock(gw, opts):
            pass
    finally:
        done.set()
        t.join()
    msg = str(err.value)
    assert msg.startswith(
        f"table {gw.uri('')} is locked by {HOST} pid {os.getpid()} thread 'holder-thread'"
    )
    assert " since 20" in msg and "held in this process" in msg
    assert isinstance(err.value, ConflictError)


def test_lock_is_reentrant_for_its_thread(gw):
    with lk.table_lock(gw, FAST), lk.table_lock(gw, FAST):
        assert gw.exists(FS_LOCK)
    assert not gw.exists(FS_LOCK)


# ---- file-based: owner, dead holders, leases ------------------------------------------------


def test_file_lock_records_its_owner_and_is_deleted_on_release(gw):
    with lk.table_lock(gw, FAST):
        d = json.loads(gw.read_bytes(FS_LOCK))
        assert (d["host"], d["pid"], d["lockThreadName"], d["expired"]) == (
            HOST,
            os.getpid(),
            threading.current_thread().name,
            False,
        )
        assert d["owner"].startswith(f"{HOST}/{os.getpid()}/")
        assert d["validUntil"] - d["acquiredAt"] == 300000
    assert not gw.exists(FS_LOCK)


@pytest.mark.parametrize("reap", [True, False], ids=["reaped", "zombie"])
def test_lock_of_a_sigkilled_process_is_taken_at_once(gw, reap):
    proc = _spawn_holder(gw.base_path, {})
    holder = json.loads(gw.read_bytes(FS_LOCK))
    assert holder["pid"] == proc.pid
    os.kill(proc.pid, signal.SIGKILL)
    if reap:
        proc.wait()
    else:
        time.sleep(0.2)  # dead but not reaped: /proc shows a zombie
    try:
        with lk.table_lock(gw, FAST):  # wait_time_ms 0: one attempt, no waiting at all
            mine = json.loads(gw.read_bytes(FS_LOCK))
        assert mine["pid"] == os.getpid()
    finally:
        proc.wait()


def test_live_holder_makes_the_next_writer_fail_with_its_name(gw):
    proc = _spawn_holder(gw.base_path, {})
    try:
        opts = {**FAST, "hoodie.write.lock.wait_time_ms": "300"}
        started = time.monotonic()
        with pytest.raises(LockError) as err, lk.table_lock(gw, opts):
            pass
        waited = time.monotonic() - started
    finally:
        proc.kill()
        proc.wait()
    assert 0.3 <= waited < 10.0  # generous: the test machine may be loaded
    msg = str(err.value)
    who = f"{HOST} pid {proc.pid} thread 'MainThread'"
    assert msg.startswith(f"table {gw.uri('')} is locked by {who}")
    assert f"lock file {gw.abs_path(FS_LOCK)}" in msg and "conflict" not in msg


def test_other_hosts_lock_is_honoured_until_its_lease_ends(gw):
    now = int(time.time() * 1000)
    foreign = lk.LockOwner("other/1/x", "other-host", 1, "", "main", now, now + 1500)
    gw.write_bytes(FS_LOCK, foreign.to_bytes())
    with (
        pytest.raises(LockError, match="locked by other-host pid 1 thread 'main'"),
        lk.table_lock(gw, FAST),
    ):
        pass
    time.sleep(1.5 + lk.CLOCK_DRIFT_MS / 1000 + 0.1)
    with lk.table_lock(gw, FAST):
        assert json.loads(gw.read_bytes(FS_LOCK))["pid"] == os.getpid()


def test_heartbeat_renews_the_lease_while_held(gw):
    opts = {**FAST, "hoodie.write.lock.heartbeat_interval_ms": "200"}  # lease 1 s
    with lk.table_lock(gw, opts):
        first = json.loads(gw.read_bytes(FS_LOCK))["validUntil"]
        time.sleep(1.6)  # past the first lease (+ drift allowance)
        second = json.loads(gw.read_bytes(FS_LOCK))["validUntil"]
        assert second > first + 600
        # Another writer (judged only by the lease, as from another host) must still wait.
        other = lk.LeaseLock(gw, FS_LOCK, lease_ms=1000, renew_ms=200, release_by_expiry=False)
        owner, _ = other.current() or (None, None)
        assert owner is not None and not owner.is_abandoned(int(time.time() * 1000))


def test_foreign_lock_file_is_judged_by_its_age(gw):
    gw.write_bytes(FS_LOCK, b'{"lockCreateTime":"2026-01-01 00:00:00.000","lockThreadName":"x"}')
    opts = {**FAST, "hoodie.write.lock.heartbeat_interval_ms": "200"}  # lease 1 s
    with pytest.raises(LockError, match="lockCreateTime"), lk.table_lock(gw, opts):
        pass
    time.sleep(1.7)
    with lk.table_lock(gw, opts):
        pass


# ---- storage-based (local conditional writes) -----------------------------------------------


def test_storage_lock_follows_hudi_layout_and_releases_by_expiry(gw):
    opts = {**FAST, "hoodie.write.lock.provider": "StorageBasedLockProvider"}
    with lk.table_lock(gw, opts):
        held = json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))
        assert held["expired"] is False and held["owner"].startswith(f"{HOST}/")
    released = json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))
    assert released["expired"] is True and released["owner"] == held["owner"]
    with lk.table_lock(gw, opts):  # an expired lock object is taken over by compare-and-swap
        again = json.loads(gw.read_bytes(lk.STORAGE_LOCK_FILE))
    assert again["owner"] != held["owner"]


def test_compare_and_swap_primitives_refuse_stale_versions(gw):
    v1 = gw.create_versioned("x/lock.json", b"1")
    assert v1 is not None
    assert gw.create_versioned("x/lock.json", b"2") is None
    assert gw.create_exclusive("x/lock.json", b"2") is False
    v2 = gw.replace_if_version("x/lock.json", b"2", v1)
    assert v2 is not None and v2 != v1
    assert gw.replace_if_version("x/lock.json", b"3", v1) is None
    assert gw.delete_if_version("x/lock.json", v1) is False
    assert gw.read_versioned("x/lock.json") == (b"2", v2)
    assert gw.delete_if_version("x/lock.json", v2) is True
    assert gw.read_versioned("x/lock.json") is None
    assert gw.replace_if_version("x/lock.json", b"4", v2) is None


def test_compare_and_swap_race_has_one_winner(gw):
    v0 = gw.create_versioned("race", b"0")
    assert v0 is not None
    results: list[str | None] = []
    barrier = threading.Barrier(8)

    def swap(i: int) -> None:
        barrier.wait()
        results.append(gw.replace_if_version("race", str(i).encode(), v0))

    threads = [threading.Thread(target=swap, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 1


# ---- the check before a write --------------------------------------------------------------


def _table(root: Path) -> tuple[FileSystemGateway, TableConfig]:
    g = FileSystemGateway(str(root))
    config = TableConfig.new(
        name="t",
        table_type="COPY_ON_WRITE",
        table_version=6,
        record_key_fields=("k",),
        partition_fields=(),
        ordering_fields=(),
    )
    g.mkdirs(config.timeline_dir)
    g.write_bytes(PROPERTIES_FILE, render_properties(config.to_properties()).encode())
    return g, config


def test_write_fails_fast_before_reserving_an_instant_when_the_lock_is_held(tmp_path):
    g, config = _table(tmp_path / "t")
    proc = _spawn_holder(g.base_path, {})
    try:
        opts = {**FAST, "hoodie.write.lock.wait_time_ms": "200"}
        with (
            pytest.raises(LockError, match=f"is locked by {HOST} pid {proc.pid} "),
            WriteTransaction(g, config, COMMIT, lock_options=opts),
        ):
            pytest.fail("the write must not start")
        assert Timeline.load(g, config).instants == []
    finally:
        proc.kill()
        proc.wait()
    # With the holder gone the same write starts at once.
    with WriteTransaction(g, config, COMMIT, lock_options=FAST) as txn:
        assert txn.instant_time


def test_writer_killed_inside_the_commit_step_does_not_block_the_next_one(tmp_path):
    """Issue 9 item 6: SIGKILL while holding the lock in the commit step; the next writer
    commits at once instead of failing after minutes."""
    g = FileSystemGateway(str(tmp_path / "t"))
    create_table(g)
    upsert(g, [("a", "0"), ("b", "0")], FAST)
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hudilite.storage.fs import FileSystemGateway\n"
            "from tests.staged_write import upsert\n"
            f"upsert(FileSystemGateway({g.base_path!r}), [('a', 'dead')])\n",
        ],
        cwd=str(Path(__file__).resolve().parents[3]),
        env={**os.environ, "HUDILITE_FAIL_POINT": "kill:before_complete"},
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL
    left = json.loads(g.read_bytes(FS_LOCK))
    assert left["pid"] != os.getpid() and left["expired"] is False
    upsert(g, [("a", "1")], FAST)  # wait_time_ms 0: must not wait for the dead holder
    assert read_rows(g) == [("a", "1"), ("b", "0")]
    assert not g.exists(FS_LOCK)


def test_bad_lock_options_fail_the_write_before_it_starts(tmp_path):
    g, config = _table(tmp_path / "t")
    bad = {"hoodie.write.lock.provider": "ZookeeperBasedLockProvider"}
    with (
        pytest.raises(ConfigError, match="unknown lock provider 'ZookeeperBasedLockProvider'"),
        WriteTransaction(g, config, COMMIT, lock_options=bad),
    ):
        pytest.fail("the write must not start")
    assert Timeline.load(g, config).instants == []


def test_filesystem_lock_path_option_moves_the_lock_file(gw, tmp_path):
    where = tmp_path / "locks"
    with lk.table_lock(gw, {**FAST, "hoodie.write.lock.filesystem.path": str(where)}):
        assert json.loads((where / "lock").read_bytes())["pid"] == os.getpid()
        assert not gw.exists(FS_LOCK)
    assert not (where / "lock").exists()


def test_num_retries_repeats_the_wait(gw):
    opts = {
        "hoodie.write.lock.provider": "in_process",
        "hoodie.write.lock.wait_time_ms": "150",
        "hoodie.write.lock.num_retries": "2",
        "hoodie.write.lock.wait_time_ms_between_retry": "50",
    }
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lk.table_lock(gw, opts):
            held.set()
            done.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    started = time.monotonic()
    try:
        with pytest.raises(LockError), lk.table_lock(gw, opts):
            pass
    finally:
        done.set()
        t.join()
    assert time.monotonic() - started >= 3 * 0.15 + 2 * 0.05


def test_a_lost_lease_is_reported_before_anything_is_completed(gw, monkeypatch):
    opts = {**FAST, "hoodie.write.lock.heartbeat_interval_ms": "100"}  # lease 500 ms
    with lk.table_lock(gw, opts) as held:
        held.check()  # fresh lease: fine
        # Another writer takes the lock over: every renewal now fails its compare-and-swap.
        monkeypatch.setattr(gw, "replace_if_version", lambda *a, **k: None)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                held.check()
            except LockError as err:
                assert "taken over by another writer" in str(err)
                assert str(err).startswith(f"lost the table lock {gw.abs_path(FS_LOCK)} ")
                break
            time.sleep(0.05)
        else:
            pytest.fail("the lost lease was never noticed")
        monkeypatch.undo()


def test_a_lease_that_ran_out_unrenewed_is_reported(gw, monkeypatch):
    opts = {**FAST, "hoodie.write.lock.heartbeat_interval_ms": "100"}  # lease 500 ms
    with lk.table_lock(gw, opts) as held:
        # This process stalls: the heartbeat never gets to renew before the lease ends.
        monkeypatch.setattr(gw, "replace_if_version", lambda *a, **k: time.sleep(0.8))
        time.sleep(0.7)
        with pytest.raises(LockError, match=r"lost the table lock .* \(lease ended 20"):
            held.check()
        monkeypatch.undo()


def test_table_services_honour_the_lock_options_they_are_called_with(tmp_path):
    from hudilite.services.archive import archive
    from hudilite.tablestate.state import TableState

    g = FileSystemGateway(str(tmp_path / "t"))
    create_table(g)
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lk.table_lock(g, FAST):
            held.set()
            done.wait(30)

    t = threading.Thread(target=hold, name="service-blocker")
    t.start()
    held.wait(5)
    started = time.monotonic()
    try:
        with pytest.raises(LockError, match="thread 'service-blocker'"):
            archive(TableState.load(g), {"hoodie.write.lock.wait_time_ms": "200"})
    finally:
        done.set()
        t.join()
    assert time.monotonic() - started < 10  # not the 60 s default wait


def test_a_garbage_lock_file_is_named_without_raw_bytes(gw):
    # Issue 26: it printed as "pid 0 (owner \x00\xff...)".
    gw.write_bytes(FS_LOCK, b"\x00\xff\xfe garbage \x01")
    with pytest.raises(LockError) as err, lk.table_lock(gw, FAST):
        pass
    assert (
        "is locked by a lock file hudilite did not write "
        "(13 bytes, not text: b'\\x00\\xff\\xfe garbage \\x01') since " in str(err.value)
    )


def test_a_lease_recorded_decades_ahead_holds_one_lease_after_its_last_write(gw):
    # Issue 26: a lock valid until 2100 was trusted forever; no holder renews that far ahead.
    now = int(time.time() * 1000)
    far = lk.LockOwner("other/1/x", "other-host", 1, "", "main", now, 4_102_444_800_000)
    gw.write_bytes(FS_LOCK, far.to_bytes())
    opts = {**FAST, "hoodie.write.lock.heartbeat_interval_ms": "200"}  # lease 1 s
    with pytest.raises(LockError, match="locked by other-host pid 1"), lk.table_lock(gw, opts):
        pass
    time.sleep(1.0 + lk.CLOCK_DRIFT_MS / 1000 + 0.2)
    with lk.table_lock(gw, opts):
        assert json.loads(gw.read_bytes(FS_LOCK))["pid"] == os.getpid()
