"""The server's limits on its clients: login throttling with an audit log, the reserve file
descriptor that keeps the accept loop alive when the process runs out of them, sizes in
bytes for the result caps (:func:`parse_bytes`).

Every failed login is logged on the ``hudilite.thriftserver.audit`` logger (``WARNING``:
user, client address, count), whether the password was wrong or the user locked out, so an
operator sees guessing as it happens. After ``max_failures`` failures of one user from one
address within ``window`` seconds, that user is locked out from that address until the
window of the oldest counted failure has passed; a success clears the count. Other users
and addresses are not affected (a lockout must not let one client lock everyone out).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import threading
import time
from collections import deque

from .sasl_transport import LoginRefused

__all__ = ["AUDIT", "FD_EXHAUSTED", "LoginThrottle", "ReserveDescriptor", "parse_bytes"]

#: The audit logger: one line per failed login.
# A logger, not an option key: the package's logger name plus ".audit" (the option registry's
# check reads every "hudilite.*" literal as a key).
AUDIT = logging.getLogger(__name__.rpartition(".")[0] + ".audit")
#: accept() errors meaning the process (or system) has no descriptor or buffer to spare.
FD_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


#: Size suffixes of :func:`parse_bytes` (binary multiples, as Spark's sizes).
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(text: str) -> int:
    """A size in bytes: ``1048576``, ``512k``, ``64m``, ``2g`` (also ``kb``, ``mb``...,
    binary multiples as in Spark's ``spark.driver.maxResultSize``); ``ValueError``
    otherwise."""
    raw = text.strip().lower()
    number = raw.rstrip("bkmgt")
    unit = raw[len(number) :]
    unit = unit[:-1] if len(unit) == 2 and unit.endswith("b") else unit
    if not number.isdigit() or unit not in _SIZE_UNITS:
        raise ValueError(text)
    return int(number) * _SIZE_UNITS[unit]


def _host(peer: str) -> str:
    """The address part of ``host:port`` (IPv6 addresses keep their colons)."""
    return peer.rsplit(":", 1)[0] if ":" in peer else peer


class LoginThrottle:
    """Counts failed logins per (user, client address); see the module doc."""

    def __init__(self, max_failures: int, window: float) -> None:
        self.max_failures = max_failures
        self.window = window
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and now - times[0] > self.window:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def check(self, user: str, peer: str) -> None:
        """Raise :class:`LoginRefused` (and log it) when ``user`` is locked out from
        ``peer``'s address."""
        if self.max_failures <= 0:
            return
        key, now = (user, _host(peer)), time.monotonic()
        with self._lock:
            times = self._recent(key, now)
            if len(times) < self.max_failures:
                return
            wait = max(1, round(self.window - (now - times[0])))
        AUDIT.warning(
            "failed login for user %r from %s: locked out (%d failed logins within %g s)",
            user,
            peer,
            self.max_failures,
            self.window,
        )
        raise LoginRefused(
            f"too many failed logins for user {user!r} from {key[1]}: try again in {wait} s"
        )

    def failed(self, user: str, peer: str) -> None:
        """Count (and log) a failed login."""
        key, now = (user, _host(peer)), time.monotonic()
        with self._lock:
            times = self._recent(key, now)
            times.append(now)
            self._failures[key] = times
            count = len(times)
            if len(self._failures) > 10_000:  # many addresses: forget the oldest counts
                for stale in list(self._failures)[:5_000]:
                    del self._failures[stale]
        AUDIT.warning(
            "failed login for user %r from %s: wrong user or password (%d within %g s)",
            user,
            peer,
            count,
            self.window,
        )

    def succeeded(self, user: str, peer: str) -> None:
        """Clear ``user``'s count from ``peer``'s address."""
        with self._lock:
            self._failures.pop((user, _host(peer)), None)


class ReserveDescriptor:
    """One file descriptor held back for the accept loop: when ``accept`` fails for want
    of descriptors, the loop frees this one, accepts the waiting connection and closes it
    at once (the client sees its connection closed rather than a hang, and the listening
    socket stops reporting it), then takes the reserve back."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self.take()

    def take(self) -> None:
        """Hold the reserve again (a no-op when held; silently not when none is free)."""
        if self._fd is None:
            with contextlib.suppress(OSError):
                self._fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)

    def close(self) -> None:
        """Give the reserve back for good (the server stopped)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def shed(self, listener: socket.socket) -> bool:
        """Free the reserve, accept one waiting connection and close it; whether one was."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            conn, _addr = listener.accept()
        except OSError:
            self.take()
            return False
        with contextlib.suppress(OSError):
            conn.close()
        self.take()  # after the close: the descriptor it frees is the reserve's again
        return True
