"""Archival with a metadata table (hudilite/services/metadata_archive.py), without a JVM.

A v8 COW fixture gets hudilite's metadata table (compacted every four deltacommits, so its
clean runs too) and fifteen commits through the timeline writer, with
``hoodie.keep.min.commits=1``/``max=2`` and a cleaner that raises neither. The data timeline
then keeps every commit from the first that completed after the metadata table's latest
compaction (Hudi's rule 4), and the metadata table archives into its own LSM history exactly
the instants whose files its clean deleted; the files partition still lists the live files,
and hudilite's read (through it) and hudi-rs's read (of storage) return the same rows. On a
synthetic metadata timeline, each of the metadata table's bounds in turn decides what is
archived.
"""

from __future__ import annotations

from pathlib import Path

from hudilite import config as cfg
from hudilite.metadata import listing
from hudilite.metadata import table as mt
from hudilite.read.planner import plan_snapshot
from hudilite.services import archive_formats as fmt
from hudilite.services import metadata_archive as mda
from hudilite.services.archive import archive
from hudilite.storage.fs import FileSystemGateway
from hudilite.table.api import Table
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLEAN, COMMIT, Instant, State
from tests.helpers import hudi_rs_read
from tests.unit.metadata.test_metadata_compact import V8_COW, _gw, commit_copy, guard, listed, live
from tests.unit.metadata.test_metadata_listing import assert_plans_the_walks_slices

KEEP = {
    "hoodie.keep.min.commits": "1",
    "hoodie.keep.max.commits": "2",
    # No earliest commit to retain, so the cleaner does not raise the bounds.
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
}


def _table(tmp_path: Path, *, metadata: bool = True) -> FileSystemGateway:
    gw = _gw(V8_COW, tmp_path, "4")
    stored = properties_file.read_write_defaults(gw)
    stored.update(KEEP)
    if not metadata:
        stored.pop("hoodie.metadata.enable")
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    guard(gw)  # builds the metadata table (or not)
    return gw


def _rows(table: object) -> list[str]:
    cols = ["_hoodie_record_key", "_hoodie_file_name", "id", "byteField"]
    return sorted(map(str, table.select(cols).to_pylist()))  # type: ignore[attr-defined]


def test_data_and_metadata_timelines_archive_to_hudis_bounds(tmp_path: Path) -> None:
    gw = _table(tmp_path)
    old = [c.requested_time for c in TableState.load(gw).timeline.commits()]
    times = [commit_copy(gw, n)[0] for n in range(15)]
    mdt = mt.load_timeline(gw)
    compactions = sorted(mdt.compactions)
    # Compactions while completing commits 4, 8 and 12 (four deltacommits each), cleans at
    # 11 and 15 (three deltacommits after a compaction).
    assert len(compactions) == 3 and times[10] < compactions[2] < times[12]
    # Commit 12 was requested before the last compaction and completed after it.
    state = TableState.load(gw)
    done = {c.requested_time: c.completion_time for c in state.timeline.commits()}
    assert times[11] < compactions[2] < str(done[times[11]])

    result = archive(state)

    # Data: everything before commit 12 (keep.min.commits=1 alone would keep one commit).
    assert [t for t, _ in result.archived] == old + times[:11]
    after = TableState.load(gw)
    assert [c.requested_time for c in after.timeline.commits()] == times[11:]
    # Metadata table: the instants whose files its two cleans deleted: the initialization,
    # the deltacommits of commits 1-7 and the first compaction. Commit 8's deltacommit
    # completed after the second compaction: its log is in a kept slice, so it stays.
    expected = sorted(
        [(mt.INIT_INSTANT, "deltacommit"), (compactions[0], "commit")]
        + [(t, "deltacommit") for t in times[:7]]
    )
    assert list(result.extra["metadata_table"]) == expected
    assert min(mda.live_file_instants(gw)) == times[7]
    left = mda.metadata_timeline_files(gw)
    assert not {i.requested_time for i, _ in left} & {t for t, _ in expected}
    assert min(i.requested_time for i, _ in left) == times[7]
    # Each archived instant is one LSM row with its completion time, in Hudi's layout.
    rows = fmt.read_lsm_rows(gw, mda.HISTORY_DIR)
    assert [(r["instantTime"], r["action"]) for r in rows] == expected
    completions = {t: c for t, c in {**mdt.deltacommits, **mdt.compactions}.items()}
    assert all(r["completionTime"] == completions[r["instantTime"]] for r in rows)

    # The listing stays exact, reads list through it and read what hudi-rs reads.
    assert listed(gw) == live(gw)
    state = TableState.load(gw)
    plan = plan_snapshot(state)
    assert listing.usable(gw, state.config.props) is not None
    assert_plans_the_walks_slices(gw, plan)
    assert _rows(Table(None, gw).to_arrow()) == _rows(hudi_rs_read(gw.abs_path("")))  # type: ignore[arg-type]
    # The next commit syncs on top of the archived timelines and keeps the listing exact.
    commit_copy(gw, 99)
    assert listed(gw) == live(gw)


def test_nothing_is_archived_before_the_metadata_tables_first_compaction(
    tmp_path: Path,
) -> None:
    with_metadata = _table(tmp_path / "on")
    without = _table(tmp_path / "off", metadata=False)
    for gw in (with_metadata, without):
        for n in range(3):
            commit_copy(gw, n)
    assert not mt.load_timeline(with_metadata).compactions
    on = archive(TableState.load(with_metadata))
    assert on.archived == () and on.extra["metadata_table"] == ()
    assert len(TableState.load(with_metadata).timeline.commits()) == 5
    # The same timeline without a metadata table archives down to keep.min.commits.
    off = archive(TableState.load(without))
    assert len(off.archived) == 4 and off.extra["metadata_table"] == ()


def _t(n: int) -> str:
    return f"2026010100000{n:04d}"


class _DataTimeline:
    """The two things the metadata table's archive reads of the data timeline."""

    def __init__(self, instants: list[Instant]) -> None:
        self.instants = instants

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]


def _synthetic(tmp_path: Path, *, pending: int | None = None) -> FileSystemGateway:
    """A metadata timeline only: the initialization, deltacommits 1-8 (requested at 10*i,
    completed at 10*i+5), a compaction requested at 47 (completed 48), a clean at 57."""
    gw = FileSystemGateway(str(tmp_path))
    gw.write_bytes(mt.PROPERTIES, b"")
    names = [f"{mt.INIT_INSTANT}.deltacommit.requested", f"{mt.INIT_INSTANT}_{_t(1)}.deltacommit"]
    for i in range(1, 9):
        names += [
            f"{_t(10 * i)}.deltacommit.requested",
            f"{_t(10 * i)}_{_t(10 * i + 5)}.deltacommit",
        ]
    names += [f"{_t(47)}.compaction.requested", f"{_t(47)}_{_t(48)}.commit"]
    names += [f"{_t(57)}.clean.requested", f"{_t(57)}_{_t(58)}.clean"]
    if pending is not None:
        names.append(f"{_t(pending)}.deltacommit.inflight")
    for name in names:
        gw.write_bytes(f"{mt.TIMELINE_DIR}/{name}", b"")
    return gw


def _chosen(gw: FileSystemGateway, data: list[Instant], max_deltas: int = 10) -> list[str]:
    opts = cfg.Options({**KEEP, cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name: str(max_deltas)})
    chosen, lo, hi = mda.select_metadata_instants(gw, _DataTimeline(data), opts)  # type: ignore[arg-type]
    assert (lo, hi) == (2, 3)  # the data table's keep.min/max.commits + 1
    return [f"{i.requested_time}.{i.action}" for i in chosen]


def test_each_bound_of_the_metadata_tables_archive(tmp_path: Path) -> None:
    deltas = [f"{_t(10 * i)}.deltacommit" for i in range(1, 9)]
    init = f"{mt.INIT_INSTANT}.deltacommit"
    # The compaction trigger: fewer than max deltacommits after the compaction keep it.
    gw = _synthetic(tmp_path / "a")
    assert _chosen(gw, []) == [init, *deltas[:4]]
    # Two deltacommits to keep for the trigger: the oldest 8 of 10 commits (keep.min + 1)
    # and the clean older than the newest of them.
    assert _chosen(gw, [], max_deltas=2) == [
        init,
        *deltas[:4],
        f"{_t(47)}.commit",
        deltas[4],
        f"{_t(57)}.clean",
        deltas[5],
    ]
    # The data table's earliest commit, or its earliest pending instant if earlier.
    commit = Instant(_t(30), COMMIT, State.COMPLETED, _t(31))
    later, earlier = (
        Instant(_t(40), CLEAN, State.REQUESTED),
        Instant(_t(20), CLEAN, State.REQUESTED),
    )
    assert _chosen(gw, [commit, later], max_deltas=2) == [init, *deltas[:2]]
    assert _chosen(gw, [commit, earlier], max_deltas=2) == [init, deltas[0]]
    # The metadata table's own pending write (at 25): the completed commit before it stays.
    assert _chosen(_synthetic(tmp_path / "b", pending=25), [], max_deltas=2) == [init, deltas[0]]
    # A file the metadata table still holds: its instant and everything after it stays.
    gw.write_bytes(f"{mt.METADATA_DIR}/files/.files-0000-0_{_t(40)}.log.1_0-0-0", b"")
    assert _chosen(gw, [], max_deltas=2) == [init, *deltas[:3]]
