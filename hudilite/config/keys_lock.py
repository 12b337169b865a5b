"""Concurrency keys: writer heartbeats, concurrency mode and the table lock."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_int,
    parse_seconds,
)
from hudilite.config.registry import _key

HEARTBEAT_INTERVAL_MS = _key(
    "hoodie.client.heartbeat.interval_in_ms",
    60000,
    "Writer heartbeat period.",
    parse=parse_int,
    scope="service",
)
HEARTBEAT_TOLERABLE_MISSES = _key(
    "hoodie.client.heartbeat.tolerable.misses",
    2,
    "Missed heartbeats before a writer counts as dead.",
    parse=parse_int,
    scope="service",
)
# Table lock (Hudi's HoodieLockConfig / StorageBasedLockConfig names; see hudilite/write/lock.py).


CONCURRENCY_MODE = _key(
    "hoodie.write.concurrency.mode",
    "single_writer",
    "single_writer|optimistic_concurrency_control (commits are locked and checked in both).",
    parse=choice("single_writer", "optimistic_concurrency_control", upper=False),
    scope="service",
)
LOCK_PROVIDER = _key(
    "hoodie.write.lock.provider",
    None,
    "InProcess|FileSystemBased|StorageBased LockProvider (Hudi class or short name); "
    "default: StorageBased on S3, FileSystemBased elsewhere.",
    scope="service",
)
LOCK_WAIT_MS = _key(
    "hoodie.write.lock.wait_time_ms",
    60000,
    "How long one attempt waits for a lock held by a live holder.",
    parse=parse_int,
    scope="service",
)
LOCK_NUM_RETRIES = _key(
    "hoodie.write.lock.num_retries",
    0,
    "Further attempts after a timed-out one (Hudi: 15; hudilite fails after one wait).",
    parse=parse_int,
    scope="service",
)
LOCK_RETRY_WAIT_MS = _key(
    "hoodie.write.lock.wait_time_ms_between_retry",
    100,
    "Pause between polls of a held lock (and between attempts).",
    parse=parse_int,
    scope="service",
)
LOCK_HEARTBEAT_INTERVAL_MS = _key(
    "hoodie.write.lock.heartbeat_interval_ms",
    60000,
    "File-based lock: lease renewal period; the lease lasts 5 periods.",
    parse=parse_int,
    scope="service",
)
LOCK_FILESYSTEM_PATH = _key(
    "hoodie.write.lock.filesystem.path",
    None,
    "File-based lock: folder of the lock file (default: the table's .hoodie).",
    scope="service",
)
LOCK_FILESYSTEM_EXPIRE = _key(
    "hoodie.write.lock.filesystem.expire",
    0,
    "File-based lock: lease in minutes (0: 5 heartbeat intervals).",
    parse=parse_int,
    scope="service",
)
LOCK_STORAGE_VALIDITY_SECS = _key(
    "hoodie.write.lock.storage.validity.timeout.secs",
    300.0,
    "Storage-based lock: lease length in seconds.",
    parse=parse_seconds,
    scope="service",
)
LOCK_STORAGE_RENEW_SECS = _key(
    "hoodie.write.lock.storage.renew.interval.secs",
    30.0,
    "Storage-based lock: lease renewal period in seconds.",
    aliases=("hoodie.write.lock.storage.heartbeat.poll.secs",),
    parse=parse_seconds,
    scope="service",
)
