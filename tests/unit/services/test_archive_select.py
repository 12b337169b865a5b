"""Which instants archival takes (Hudi's rules for v6 and v8), what it leaves on disk, and
the archived timeline read back -- on hand-made timelines, no Spark."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudilite.config import TableConfig, render_properties
from hudilite.errors import ConfigError, InstantNotFoundError
from hudilite.read.planner import plan_incremental
from hudilite.services.archive import archive, archived_commits, archived_timeline, select_instants
from hudilite.services.clean import CleanPlan
from hudilite.services.savepoint import create_savepoint
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import PROPERTIES_FILE, TableState
from hudilite.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.instant_time import instant_to_epoch_ms
from hudilite.timeline.metadata import CommitMetadata, WriteStat, write_avro_record

KEEP = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


def T(n: int) -> str:
    return f"20240101000000{n:03d}"


def C(n: int) -> str:
    """A completion time: one second after ``T(n)``."""
    return f"20240101000001{n:03d}"


class Table:
    """A table folder whose timeline is written file by file (every state of an instant)."""

    def __init__(self, root: Path, version: int = 6, table_type: str = "COPY_ON_WRITE") -> None:
        self.config = TableConfig.new(
            "t", table_type=table_type, table_version=version, record_key_fields=("id",)
        )
        self.gw = FileSystemGateway(str(root))
        self.gw.mkdirs(self.config.timeline_dir)
        self.gw.write_bytes(
            PROPERTIES_FILE, render_properties(self.config.to_properties()).encode()
        )

    @property
    def layout(self) -> int:
        return self.config.layout_version

    def put(self, inst: Instant, content: bytes = b"") -> None:
        path = f"{self.config.timeline_dir}/{inst.file_name(self.layout)}"
        self.gw.write_bytes(path, content)
        if inst.completion_time and self.layout == 1:  # v6 completion = modification time
            ns = instant_to_epoch_ms(inst.completion_time) * 1_000_000
            os.utime(self.gw.abs_path(path), ns=(ns, ns))

    def write(self, n: int, action: str = COMMIT, op: str = "UPSERT", done: bool = True) -> None:
        stat = WriteStat(f"f{n}-0", f"p/f{n}-0_0-1-2_{T(n)}.parquet", "p", "null", num_writes=n)
        replaced = {"p": [f"f{n - 1}-0"]} if action == REPLACE_COMMIT else {}
        meta = CommitMetadata({"p": [stat]}, op, {}, partition_to_replace_file_ids=replaced)
        body = meta.to_bytes(self.layout, replace=bool(replaced))
        self.put(Instant(T(n), action, State.REQUESTED))
        self.put(Instant(T(n), action, State.INFLIGHT), body)
        if done:
            self.put(Instant(T(n), action, State.COMPLETED, C(n)), body)

    def compaction(self, n: int) -> None:
        plan = write_avro_record("HoodieCompactionPlan", {"operations": [], "version": 2})
        self.put(Instant(T(n), COMPACTION, State.REQUESTED), plan)
        self.put(Instant(T(n), COMPACTION, State.INFLIGHT))
        body = CommitMetadata({}, "COMPACT", compacted=True).to_bytes(self.layout)
        self.put(Instant(T(n), COMMIT, State.COMPLETED, C(n)), body)

    def clean(self, n: int, etr: int) -> None:
        plan = CleanPlan("KEEP_LATEST_COMMITS", Instant(T(etr), COMMIT, State.COMPLETED), T(n), {})
        self.put(Instant(T(n), CLEAN, State.REQUESTED), plan.to_avro_bytes(self.gw))
        meta = {
            "startCleanTime": T(n),
            "timeTakenInMillis": 1,
            "totalFilesDeleted": 0,
            "earliestCommitToRetain": T(etr),
            "partitionMetadata": {},
        }
        self.put(
            Instant(T(n), CLEAN, State.COMPLETED, C(n)),
            write_avro_record("HoodieCleanMetadata", meta),
        )

    def rollback(self, n: int) -> None:
        meta = {
            "startRollbackTime": T(n),
            "timeTakenInMillis": 1,
            "totalFilesDeleted": 0,
            "commitsRollback": [],
            "partitionMetadata": {},
        }
        self.put(Instant(T(n), ROLLBACK, State.REQUESTED))
        body = write_avro_record("HoodieRollbackMetadata", meta)
        self.put(Instant(T(n), ROLLBACK, State.COMPLETED, C(n)), body)

    def state(self) -> TableState:
        return TableState.load(self.gw)

    def times(self, archived: bool = False) -> list[str]:
        if archived:
            return [i.requested_time for i in archived_timeline(self.state())]
        return [i.requested_time for i in self.state().timeline.instants]

    def chosen(self, **opts: str) -> list[tuple[str, str]]:
        insts, _, _ = select_instants(self.state(), {**KEEP, **opts})
        return [(i.requested_time, i.action) for i in insts]


@pytest.mark.parametrize("version", [6, 8])
def test_commits_beyond_max_are_archived_down_to_min(tmp_path: Path, version: int) -> None:
    t = Table(tmp_path, version)
    for n in range(1, 4):
        t.write(n)
    assert t.chosen() == []  # 3 commits: not more than max
    t.write(4)
    assert t.chosen() == [(T(1), COMMIT), (T(2), COMMIT)]
    result = archive(t.state(), KEEP)
    assert result.archived == ((T(1), COMMIT), (T(2), COMMIT))
    assert (result.min_commits, result.max_commits) == (2, 3)
    assert t.times() == [T(3), T(4)]
    names = [e.name for e in t.gw.list_dir(t.config.timeline_dir) if not e.is_dir]
    assert not any(n.startswith((T(1), T(2))) for n in names)  # every state is gone
    assert t.times(archived=True) == [T(1), T(2)]
    rows = archived_commits(t.state(), None, None)
    assert [(i.requested_time, i.completion_time, m.total_records_written) for i, m in rows] == [
        (T(2), C(2), 2),
        (T(1), C(1), 1),
    ]
    assert archived_commits(t.state(), T(1), T(2))[0][0].requested_time == T(2)
    if version == 6:  # every state is an entry of the archive log
        (path,) = result.files_written
        assert path == ".hoodie/archived/.commits_.archive.1_1-0-1"
    else:
        assert result.files_written == (f".hoodie/timeline/history/{T(1)}_{T(2)}_0.parquet",)
    assert archive(t.state(), KEEP).archived == ()  # 2 left: nothing more


@pytest.mark.parametrize("version", [6, 8])
def test_never_past_the_earliest_pending_write_or_first_savepoint(
    tmp_path: Path, version: int
) -> None:
    t = Table(tmp_path, version)
    for n in (1, 2, 4, 5, 6):
        t.write(n)
    t.write(3, done=False)  # pending: the completed commit before it (2) is retained
    assert t.chosen() == [(T(1), COMMIT)]
    t.gw.delete_file(
        f"{t.config.timeline_dir}/{Instant(T(3), COMMIT, State.INFLIGHT).file_name(t.layout)}"
    )
    t.gw.delete_file(
        f"{t.config.timeline_dir}/{Instant(T(3), COMMIT, State.REQUESTED).file_name(t.layout)}"
    )
    create_savepoint(t.state(), T(2))
    assert t.chosen() == [(T(1), COMMIT)]  # stops at the savepointed commit
    archive(t.state(), KEEP)
    assert t.times() == [T(2), T(4), T(5), T(6)]


def test_cleaner_needs_raise_the_minimum(tmp_path: Path) -> None:
    t = Table(tmp_path)
    for n in range(1, 7):
        t.write(n)
    # KEEP_LATEST_COMMITS retaining 3: the earliest commit to retain is 4, so 2 commits
    # after it + 2 = 4 are kept (max moves up by as much).
    insts, lo, hi = select_instants(t.state(), {**KEEP, "hoodie.cleaner.commits.retained": "3"})
    assert (lo, hi) == (4, 5) and [i.requested_time for i in insts] == [T(1), T(2)]


def test_min_and_max_are_validated(tmp_path: Path) -> None:
    t = Table(tmp_path)
    t.write(1)
    with pytest.raises(
        ConfigError, match=r"hoodie\.keep\.min\.commits=3, hoodie\.keep\.max\.commits=3"
    ):
        select_instants(t.state(), {"hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "3"})


def test_v6_archives_cleans_and_rollbacks_by_their_own_count(tmp_path: Path) -> None:
    t = Table(tmp_path, 6)
    for n in range(1, 4):
        t.write(n * 10)
    for n in (11, 12, 13, 14):
        t.clean(n, etr=10)
    t.rollback(15)
    # No commit goes (3 <= max) but 4 cleans > max: the oldest 2 go; 1 rollback stays.
    assert t.chosen() == [(T(11), CLEAN), (T(12), CLEAN)]


def test_v8_archives_cleans_and_rollbacks_older_than_the_newest_commit_archived(
    tmp_path: Path,
) -> None:
    t = Table(tmp_path, 8)
    for n in range(1, 5):
        t.write(n * 10)
    t.clean(15, etr=10)
    t.rollback(16)
    t.clean(35, etr=10)
    assert t.chosen() == [(T(10), COMMIT), (T(15), CLEAN), (T(16), ROLLBACK), (T(20), COMMIT)]
    archive(t.state(), KEEP)
    got = [(i.requested_time, i.action, i.plan is not None) for i in archived_timeline(t.state())]
    assert got == [
        (T(10), COMMIT, False),
        (T(15), CLEAN, True),
        (T(16), ROLLBACK, False),
        (T(20), COMMIT, False),
    ]


def test_replacecommit_waits_for_the_clean_that_retires_its_files(tmp_path: Path) -> None:
    t = Table(tmp_path, 8)
    t.write(1)
    t.write(2, REPLACE_COMMIT, "INSERT_OVERWRITE")
    for n in range(3, 7):
        t.write(n)
    assert t.chosen() == [(T(1), COMMIT)]  # no clean yet: the replacecommit stays
    t.clean(7, etr=3)  # the cleaner moved past it: its replaced files are gone
    assert t.chosen() == [(T(1), COMMIT), (T(2), REPLACE_COMMIT), (T(3), COMMIT), (T(4), COMMIT)]


def test_mor_keeps_the_delta_commits_the_compaction_trigger_counts(tmp_path: Path) -> None:
    t = Table(tmp_path, 6, "MERGE_ON_READ")
    for n in range(1, 8):
        t.write(n, DELTA_COMMIT)
    # 7 delta commits, no compaction: the 5 latest stay for NUM_COMMITS (5).
    assert t.chosen() == [(T(1), DELTA_COMMIT), (T(2), DELTA_COMMIT)]
    assert t.chosen(**{"hoodie.compact.inline.max.delta.commits": "2"}) == [
        (T(n), DELTA_COMMIT) for n in range(1, 6)
    ]
    t.compaction(8)
    t.write(9, DELTA_COMMIT)
    # After a compaction with fewer than 5 delta commits since, it is the bound itself.
    assert t.chosen() == [(T(n), DELTA_COMMIT) for n in range(1, 8)]
    archive(t.state(), KEEP)
    assert t.times() == [T(8), T(9)]
    assert [i.action for i in t.state().timeline.instants] == [COMMIT, DELTA_COMMIT]


@pytest.mark.parametrize("version", [6, 8])
def test_incremental_reads_from_before_the_archive_fail(tmp_path: Path, version: int) -> None:
    t = Table(tmp_path, version)
    for n in range(1, 5):
        t.write(n)
    plan_incremental(t.state(), T(1), None)  # nothing archived yet: reads from the start
    archive(t.state(), KEEP)
    with pytest.raises(InstantNotFoundError, match="older commits are archived"):
        plan_incremental(t.state(), T(1), None)
    start = C(3) if version == 8 else T(3)  # v8 ranges are in completion time
    assert plan_incremental(t.state(), start, None).commit_times == frozenset({T(4)})
