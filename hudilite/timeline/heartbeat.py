"""Writer heartbeats: how other writers tell a running write from a crashed one.

While a write is in flight its writer keeps touching ``.hoodie/.heartbeat/<instant time>``
(the same file Hudi's ``HoodieHeartbeatClient`` maintains, for every table version). A
pending instant whose heartbeat file has not been touched for ``interval x tolerable misses``
is presumed to belong to a dead writer; a missing file counts as expired too. That is only
a safe basis for a rollback while the instant is pending on a timeline read under the
table lock (commits complete under the same lock): a writer deletes its heartbeat once its
completed instant is visible, so a stale list of pending instants plus a missing heartbeat
describes a write that just committed. ``hudilite.write.rollback`` decides that way, and a
writer whose heartbeat merely stalled is refused at commit.

Freshness is judged by the file's modification time against this host's clock, like Hudi
does, so hosts sharing a table need roughly synchronised clocks.
"""

from __future__ import annotations

import logging
import threading
import time
from types import TracebackType

from hudilite.storage.fs import FileSystemGateway, join

HEARTBEAT_DIR = ".hoodie/.heartbeat"

_log = logging.getLogger(__name__)


def heartbeat_path(instant_time: str) -> str:
    """Table-relative path of the heartbeat file of ``instant_time``."""
    return join(HEARTBEAT_DIR, instant_time)


class Heartbeat:
    """Context manager that keeps the heartbeat of one instant alive.

    On enter it creates the heartbeat file, then a daemon thread touches it every
    ``interval_ms``; on exit the thread stops and the file is deleted. Touch failures are
    logged and retried at the next beat rather than raised: a missed beat only risks a
    rollback by another writer after several misses, while raising would kill the write.
    """

    def __init__(self, gw: FileSystemGateway, instant_time: str, interval_ms: int) -> None:
        if interval_ms <= 0:
            raise ValueError(f"heartbeat interval must be positive, got {interval_ms}")
        self.gw = gw
        self.instant_time = instant_time
        self.interval_ms = interval_ms
        self.path = heartbeat_path(instant_time)
        self.beats = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        """Create the file and start beating (idempotent)."""
        if self._thread is not None:
            return self
        self.gw.mkdirs(HEARTBEAT_DIR)
        self._beat()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"hudilite-heartbeat-{self.instant_time}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, delete: bool = True) -> None:
        """Stop beating and (by default) delete the heartbeat file."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None:
            thread.join()
        if delete:
            self.gw.delete_file(self.path)

    @property
    def is_running(self) -> bool:
        """True while the beating thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _beat(self) -> None:
        self.gw.touch(self.path)
        self.beats += 1

    def _run(self) -> None:
        while not self._stop.wait(self.interval_ms / 1000.0):
            try:
                self._beat()
            except Exception:  # keep beating; see the class docstring
                _log.warning("heartbeat of %s failed", self.instant_time, exc_info=True)

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def last_heartbeat_ms(gw: FileSystemGateway, instant_time: str) -> int | None:
    """Epoch ms of the last beat of ``instant_time``, or None when there is no file."""
    try:
        return gw.mtime_ms(heartbeat_path(instant_time))
    except FileNotFoundError:
        return None


def is_expired(
    gw: FileSystemGateway,
    instant_time: str,
    interval_ms: int,
    tolerable_misses: int = 2,
    now_ms: int | None = None,
) -> bool:
    """True when the writer of ``instant_time`` is presumed dead.

    Expired means the heartbeat file is missing, or older than ``interval_ms x
    tolerable_misses`` (Hudi's ``maxAllowableHeartbeatIntervalInMs``). ``now_ms`` defaults
    to this host's clock.
    """
    last = last_heartbeat_ms(gw, instant_time)
    if last is None:
        return True
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    return now - last > interval_ms * tolerable_misses
