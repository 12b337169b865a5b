"""Fail points: named places where a test can make hudilite fail or die.

A fail point is a call ``check(active, "after_file_write")`` at a place where a
crash matters (a file written but not committed, a commit written but markers
not removed, ...). ``active`` is the value of the write option
:data:`FAIL_POINT_KEY` (``None`` when unset); the environment variable
:data:`ENV_VAR` is consulted as well, so a test can arm a point in a driver
process it starts (and in that driver's Spark workers, which inherit it).

A spec is a comma-separated list of entries, each one of:

``<point>``
    raise :class:`~hudilite.errors.WriteError` ("simulated failure at ...");
``kill:<point>``
    SIGKILL the current process: a real crash, nothing runs after it (no
    ``finally``, no heartbeat stop). Inside a Spark task this kills the Python
    worker, as an out-of-memory kill would;
``fail_once:<point>``
    raise only in the first attempt of a Spark task (attempt number 0), so the
    retried task succeeds;
``delay:<point>``
    sleep :data:`DELAY_S` seconds and go on: holds a write at the point so that a
    second writer's write overlaps it (race tests).

The engine never imports pyspark: inside a Spark task pyspark is already loaded,
so the attempt number is read from its ``TaskContext`` when the caller does not
pass one.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from hudilite.config import FAIL_POINT
from hudilite.errors import WriteError

#: Write / service option naming the fail point(s) to arm (test hook, not a Hudi key).
FAIL_POINT_KEY = FAIL_POINT.name
#: Environment variable with the same syntax, read at every check.
ENV_VAR = "HUDILITE_FAIL_POINT"

RAISE, KILL, FAIL_ONCE, DELAY = "raise", "kill", "fail_once", "delay"
_MODES = (KILL, FAIL_ONCE, DELAY)
#: How long a ``delay:`` point holds the write.
DELAY_S = 2.0


def parse(spec: str | None) -> list[tuple[str, str]]:
    """The ``(mode, point)`` entries of a spec (see the module docstring)."""
    entries = []
    for raw in (spec or "").split(","):
        raw = raw.strip()
        if not raw:
            continue
        mode, sep, point = raw.partition(":")
        if sep and mode in _MODES:
            entries.append((mode, point.strip()))
        else:
            entries.append((RAISE, raw))
    return entries


def task_attempt() -> int:
    """The attempt number of the running Spark task (0 outside Spark)."""
    pyspark = sys.modules.get("pyspark")
    if pyspark is None:
        return 0
    ctx = pyspark.TaskContext.get()
    return int(ctx.attemptNumber()) if ctx is not None else 0


def check(active: str | None, name: str, attempt: int | None = None) -> None:
    """Fail (raise or die) if ``active`` or the environment arms the point ``name``.

    ``attempt`` is the Spark task attempt for ``fail_once`` points (default: read from
    the running task, 0 outside Spark).
    """
    for mode, point in (*parse(active), *parse(os.environ.get(ENV_VAR))):
        if point != name:
            continue
        if mode == KILL:
            sys.stdout.flush()
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == DELAY:
            time.sleep(DELAY_S)
            continue
        if mode == FAIL_ONCE and (task_attempt() if attempt is None else attempt) > 0:
            continue
        raise WriteError(f"simulated failure at {name!r}")
