"""The Hudi timeline: instants, their file names, their contents, heartbeats.

``instant`` and ``instant_time`` are pure value code; ``metadata`` encodes instant contents
(JSON for v6 commits, Avro for everything else); ``timeline`` reads and appends to the
timeline folder through a ``FileSystemGateway``; ``heartbeat`` keeps writers' liveness files.
"""

from hudilite.timeline.heartbeat import Heartbeat, is_expired
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import format_instant, next_instant_time, parse_instant
from hudilite.timeline.metadata import (
    CommitMetadata,
    WriteStat,
    read_avro_record,
    write_avro_record,
)
from hudilite.timeline.timeline import Timeline, TimelineWriter

__all__ = [
    "CLEAN",
    "CLUSTERING",
    "COMMIT",
    "COMPACTION",
    "DELTA_COMMIT",
    "LOG_COMPACTION",
    "REPLACE_COMMIT",
    "RESTORE",
    "ROLLBACK",
    "SAVEPOINT",
    "CommitMetadata",
    "Heartbeat",
    "Instant",
    "State",
    "Timeline",
    "TimelineWriter",
    "WriteStat",
    "format_instant",
    "is_expired",
    "next_instant_time",
    "parse_instant",
    "read_avro_record",
    "write_avro_record",
]
