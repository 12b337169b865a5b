"""The table lock: the short critical section in which commits and table services
decide and complete their instants.

Every caller goes through :func:`table_lock`; which lock provider backs it is decided here.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hudilite.errors import ConflictError
from hudilite.storage.fs import FileSystemGateway

LOCK_FILE = ".hoodie/.hudilite.lock"


@contextmanager
def table_lock(
    gw: FileSystemGateway, *, timeout_s: float = 120.0, stale_s: float = 300.0
) -> Iterator[None]:
    """Hold the table's commit lock (an exclusively created file) for a short critical section.

    A lock file older than ``stale_s`` is taken to belong to a dead process and
    is broken. Only the commit step (conflict check + completing the instant)
    runs under the lock; data files are written without it.
    """
    deadline = time.monotonic() + timeout_s
    while not gw.create_exclusive(LOCK_FILE, str(time.time()).encode()):
        try:
            age_s = time.time() - gw.mtime_ms(LOCK_FILE) / 1000.0
        except FileNotFoundError:
            continue
        if age_s > stale_s:
            gw.delete_file(LOCK_FILE)
            continue
        if time.monotonic() > deadline:
            raise ConflictError(f"timed out waiting for the table lock {gw.abs_path(LOCK_FILE)}")
        time.sleep(0.05)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            gw.delete_file(LOCK_FILE)
