"""Savepoints: pin the files of one commit so the cleaner keeps them and a restore can return.

A savepoint of commit ``T`` is the instant ``T.savepoint.inflight`` (empty) followed by the
completed ``T.savepoint`` (v6) / ``T_C.savepoint`` (v8) holding an Avro
``HoodieSavepointMetadata``: per partition, the names of the base *and log* files of the
latest file slices as of ``T`` (what Hudi 1.x's ``SavepointActionExecutor`` lists; Hudi
0.x listed base files only, and the cleaner checks both). The savepoint carries the
commit's own requested time -- Hudi identifies savepoints by the commit they protect --
so its files are created here directly: ``TimelineWriter`` reserves *fresh* times.

Savepoints are listed straight from the timeline folder because they share their time
with the commit (``Timeline`` keeps one instant per requested time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hudilite.config import TableConfig
from hudilite.errors import HudiliteError, InstantNotFoundError, TimelineError
from hudilite.filegroup.slices import join_path
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import SAVEPOINT, Instant, State
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.plans import clean_bound
from hudilite.timeline.timeline import TimelineWriter
from hudilite.timeline.timeline import savepoint_instants as _savepoint_instants
from hudilite.timeline.timeline import savepoint_times as savepoint_times  # re-exported

SAVEPOINT_METADATA_VERSION = 1


@dataclass(frozen=True)
class SavepointInfo:
    """One completed savepoint.

    ``partitions`` maps partition path to the file names pinned there; ``files`` gives
    them as table-relative paths. ``savepointed_at`` is epoch milliseconds.
    """

    instant_time: str
    completion_time: str | None
    user: str
    comments: str
    savepointed_at: int
    partitions: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def files(self) -> frozenset[str]:
        """Every pinned file as a table-relative path."""
        return frozenset(join_path(p, n) for p, names in self.partitions.items() for n in names)

    @property
    def file_names(self) -> frozenset[str]:
        """Every pinned file name (what Hudi's cleaner compares)."""
        return frozenset(n for names in self.partitions.values() for n in names)

    @property
    def num_files(self) -> int:
        """How many files the savepoint pins."""
        return sum(len(v) for v in self.partitions.values())


def _read(gw: FileSystemGateway, config: TableConfig, inst: Instant) -> SavepointInfo:
    path = join(config.timeline_dir, inst.file_name(config.layout_version))
    record = read_avro_record(gw.read_bytes(path))
    partitions = {
        str(p): tuple(str(n) for n in (meta or {}).get("savepointDataFile") or [])
        for p, meta in (record.get("partitionMetadata") or {}).items()
    }
    return SavepointInfo(
        instant_time=inst.requested_time,
        completion_time=inst.completion_time,
        user=str(record.get("savepointedBy") or ""),
        comments=str(record.get("comments") or ""),
        savepointed_at=int(record.get("savepointedAt") or 0),
        partitions=partitions,
    )


def list_savepoints(state: TableState) -> list[SavepointInfo]:
    """The completed savepoints of the table, oldest first."""
    return [
        _read(state.gw, state.config, i)
        for i in _savepoint_instants(state.gw, state.config)
        if i.is_completed
    ]


def get_savepoint(state: TableState, instant_time: str) -> SavepointInfo:
    """The completed savepoint of ``instant_time``; :class:`InstantNotFoundError` if none."""
    for inst in _savepoint_instants(state.gw, state.config):
        if inst.requested_time == instant_time and inst.is_completed:
            return _read(state.gw, state.config, inst)
    raise InstantNotFoundError(f"no savepoint {instant_time} on the timeline")


def savepointed_file_names(state: TableState) -> frozenset[str]:
    """Names of every file any savepoint pins (the cleaner never deletes them)."""
    names: set[str] = set()
    for sp in list_savepoints(state):
        names |= sp.file_names
    return frozenset(names)


def create_savepoint(
    state: TableState,
    instant_time: str | None = None,
    *,
    user: str = "",
    comments: str = "",
) -> SavepointInfo:
    """Savepoint the completed commit ``instant_time`` (default: the latest one).

    Lists the latest file slices as of that commit and writes the savepoint instant.
    Raises :class:`InstantNotFoundError` when the commit is not a completed write,
    :class:`TimelineError` when it is already savepointed and :class:`HudiliteError`
    when the cleaner may already have removed files of that commit (Hudi's rule: a
    savepoint must not predate the last clean's ``earliestCommitToRetain``).
    """
    gw, config = state.gw, state.config
    state = TableState.load(gw)
    commits = state.timeline.commits()
    if instant_time is None:
        if not commits:
            raise InstantNotFoundError("the table has no completed commit to savepoint")
        instant_time = commits[-1].requested_time
    if any(i.requested_time == instant_time for i in _savepoint_instants(gw, config)):
        raise TimelineError(f"{instant_time} is already savepointed")
    if instant_time not in {c.requested_time for c in commits}:
        raise InstantNotFoundError(f"{instant_time} is not a completed commit on the timeline")
    bound = clean_bound(state.timeline)
    if bound is not None and instant_time < bound:
        raise HudiliteError(
            f"cannot savepoint {instant_time}: the cleaner only retains commits from {bound}"
        )
    files: dict[str, list[str]] = {p: [] for p in state.view.partitions()}
    for s in state.view.latest_slices(as_of=instant_time):
        names = files.setdefault(s.partition, [])
        if s.base_file is not None:
            names.append(s.base_file.file_name)
        names.extend(log.file_name for log in s.log_files)
    saved_at = time.time_ns() // 1_000_000
    record = {
        "savepointedBy": user,
        "savepointedAt": saved_at,
        "comments": comments,
        "partitionMetadata": {
            p: {"partitionPath": p, "savepointDataFile": sorted(names)}
            for p, names in sorted(files.items())
        },
        "version": SAVEPOINT_METADATA_VERSION,
    }
    writer = TimelineWriter(gw, config)
    writer.create_file(Instant(instant_time, SAVEPOINT, State.INFLIGHT))
    completion = writer.new_instant_time() if config.layout_version >= 2 else None
    done = Instant(instant_time, SAVEPOINT, State.COMPLETED, completion)
    writer.create_file(done, write_avro_record("HoodieSavepointMetadata", record))
    return SavepointInfo(
        instant_time=instant_time,
        completion_time=completion,
        user=user,
        comments=comments,
        savepointed_at=saved_at,
        partitions={p: tuple(sorted(n)) for p, n in sorted(files.items())},
    )


def delete_savepoint(state: TableState, instant_time: str) -> bool:
    """Delete the savepoint of ``instant_time`` (completed file first, then inflight);
    False when there is none. The commit itself is untouched."""
    deleted = TimelineWriter(state.gw, state.config).delete_files(instant_time, [SAVEPOINT])
    return bool(deleted)
