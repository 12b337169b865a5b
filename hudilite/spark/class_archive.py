"""A class-data-sharing archive for the Spark JVMs hudilite starts: half their start-up.

Most of a local Spark driver's start is the JVM loading, parsing and verifying some ten
thousand classes (about 20 of the 30 CPU-seconds ``hudilite sql -e "SELECT 1"`` took on a
two-core machine, docs/benchmarks.md). Java's application class-data sharing (JDK 13+; Spark 4
needs 17) maps them from an archive instead. When :func:`spark_session` launches a JVM and
there is no archive yet, it starts a recorder in the background (``python -m
hudilite.spark.class_recorder PATH``, detached, its output discarded): a local Spark JVM with
``-XX:ArchiveClassesAtExit`` that starts, runs a first query and exits, writing the archive
into a temporary file renamed into place. The JVM that asked starts as before; every JVM
launched after the recording maps the archive (``-XX:SharedArchiveFile``).

The archive lives in ``$XDG_CACHE_HOME/hudilite/jvm`` (``~/.cache/hudilite/jvm``), one per
Java runtime and pyspark installation (its name hashes them). It changes how fast classes
load, nothing of what runs: a JVM whose class path or runtime no longer matches it ignores it
(the JVM checks; the warning it would print is turned off). Only one process records at a
time (an exclusive ``.lock`` file; one older than 15 minutes is taken over, with the file its
recorder left).

``$HUDILITE_JVM_ARCHIVE``: ``off`` never uses or records one; a file path uses that archive
(recorded there when missing). Nothing is added when the JVM's options already name an
archive (``-XX:SharedArchiveFile``, ``-XX:ArchiveClassesAtExit``, ``-Xshare``), in
``spark.driver.extraJavaOptions``, ``$SPARK_SUBMIT_OPTS`` or ``$JAVA_TOOL_OPTIONS``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyspark

__all__ = [
    "ARCHIVE_ENV",
    "abandon_recording",
    "archive_options",
    "archive_path",
    "begin_recording",
    "finish_dump",
]

ARCHIVE_ENV = "HUDILITE_JVM_ARCHIVE"
#: The recorder's module (``python -m``).
RECORDER = "hudilite.spark.class_recorder"
#: A recording older than this (seconds) is taken to have died with its process.
STALE_LOCK = 900.0
#: How long the process's exit waits for its JVM to write the archive (seconds).
DUMP_WAIT = 120.0
#: The JVM's own CDS messages (an archive it cannot use; the classes a recording skips) go
#: to standard output, where they would mix with query results: off.
QUIET_CDS = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_OWN_OPTIONS = ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare")


def _java_binary() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        return Path(home) / "bin" / "java"
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / "java"
        with contextlib.suppress(OSError):  # a folder this user may not look into
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def archive_path() -> Path | None:
    """Where the archive of this Java runtime and pyspark installation lives (it may not
    exist yet); None when switched off, or no Java or pyspark 4 is found."""
    setting = os.environ.get(ARCHIVE_ENV, "").strip()
    if setting.lower() in ("off", "0", "false", "no"):
        return None
    if setting:
        return Path(setting).expanduser()
    if int(pyspark.__version__.split(".")[0]) < 4:  # may run on Java 11 (no dynamic CDS)
        return None
    java = _java_binary()
    if java is None:
        return None
    try:
        real = java.resolve(strict=True)
        stamp = real.stat().st_mtime_ns
    except OSError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    key = f"{real}|{stamp}|{pyspark.__version__}|{jars.resolve()}|{sys.platform}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hudilite" / "jvm" / f"spark-{pyspark.__version__}-{digest}.jsa"


#: The recording this process runs (the recorder only): (temporary file, archive, lock).
_pending: tuple[Path, Path, Path] | None = None


def archive_options(java_options: str | None) -> str:
    """The options to add to the driver JVM's (``java_options``): map the archive when
    there is one; else start the recorder in the background (unless another process
    records it) and add nothing; "" too when the archive is off or the options already
    name one."""
    given = " ".join(
        [java_options or "", os.environ.get("SPARK_SUBMIT_OPTS", ""),
         os.environ.get("JAVA_TOOL_OPTIONS", "")]
    )  # fmt: skip
    if any(opt in given for opt in _OWN_OPTIONS):
        return ""
    try:
        path = archive_path()
        if path is None:
            return ""
        if path.is_file() and path.stat().st_size > 0:
            return f"-XX:SharedArchiveFile={path} {QUIET_CDS}"
    except OSError:  # a cache or a Java this user may not read: start without
        return ""
    lock = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if time.time() - lock.stat().st_mtime > STALE_LOCK:
                # Its recorder died (killed): its half-written file goes too.
                for left in path.parent.glob(f"{path.name}.*.tmp"):
                    left.unlink(missing_ok=True)
                lock.unlink()
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:  # another process records it, or the cache cannot be written
        return ""
    try:
        _start_recorder(path)
    except OSError:
        with contextlib.suppress(OSError):
            lock.unlink()
    return ""


def _start_recorder(path: Path) -> None:
    """``python -m hudilite.spark.class_recorder PATH`` in the background, detached, its
    output discarded: whatever its JVM says (a file it cannot write...) reaches no one's
    terminal or results, and this process's own start and exit wait for nothing."""
    devnull = os.devnull
    pid = os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", RECORDER, str(path)],
        {**os.environ, ARCHIVE_ENV: "off"},
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
        ],
        setsid=True,
    )
    # Reaped when it ends, so a long-lived parent (the Thrift server) keeps no zombie.
    threading.Thread(target=_reap, args=(pid,), name="hudilite-jvm-archive", daemon=True).start()


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def finish_dump(jvm: Any) -> None:
    """Let the recording JVM ``jvm`` (a ``Popen``) exit, wait for it to write the archive,
    and put the archive in place; the lock is released either way (at most once)."""
    global _pending
    if _pending is None:
        return
    temporary, path, lock = _pending
    _pending = None
    try:
        with contextlib.suppress(OSError, ValueError):
            jvm.stdin.close()  # pyspark's gateway exits when its standard input closes
        with contextlib.suppress(Exception):
            jvm.wait(timeout=DUMP_WAIT)
        if temporary.is_file() and temporary.stat().st_size > 0 and jvm.poll() == 0:
            os.replace(temporary, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
        with contextlib.suppress(OSError):
            lock.unlink()


def begin_recording(path: Path) -> Path:
    """In the recorder (the lock already taken): the temporary file its JVM writes; the
    next :func:`finish_dump` puts it in place as ``path`` and releases the lock."""
    global _pending
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    _pending = (temporary, path, path.with_name(path.name + ".lock"))
    return temporary


def abandon_recording() -> None:
    """In the recorder, when its JVM did not start: release the lock, keep nothing."""
    global _pending
    if _pending is not None:
        temporary, _path, lock = _pending
        _pending = None
        for left in (temporary, lock):
            with contextlib.suppress(OSError):
                left.unlink()
