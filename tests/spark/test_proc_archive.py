"""Archival procedures end to end through SQL: ``archive_commits``, ``show_archived_commits``
and ``show_archived_commits_metadata`` on a COW table of version 6 and a MOR table of version 8.

Expected rows come from the timeline read before archiving (commit metadata, completion
times: the ``_C`` of v8 names, the completed file's modification time on v6). After
archiving, hudilite and hudi-rs must read the table exactly as before (snapshot and time
travel to instants still on the timeline), and reads that would need archived commits fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.errors import InstantNotFoundError
from hudilite.services.archive import mtime_instant
from hudilite.sqlext.statements import TableName
from hudilite.storage.fs import join
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT, Instant
from tests.helpers import call, hudi_rs_read
from tests.tables import INT_ID_TS_V_P

# Enough commits (and, on MOR, compactions) for the default cleaner retention to matter:
# run with Hudi's automatic clean/archive defaults, as before (tests/spark/conftest.py).
pytestmark = pytest.mark.services

COLS = ["id", "ts", "v", "p"]
ALL_TIME = "start_ts => '0', end_ts => '99999999999999999'"
ARCHIVE = "archive_commits(table => 't', min_commits => 2, max_commits => 3, retain_commits => 1)"


# Both timeline versions (their archives differ: one .commits_.archive file on v6, an LSM
# tree of parquet files on v8) and both table types (MOR archives by its compaction
# trigger), one case each: cow-v8 and mor-v6 run in test_proc_archived_views.py.
@pytest.fixture(params=[("cow", 6), ("mor", 8)], ids=["cow-v6", "mor-v8"])
def kind(request: pytest.FixtureRequest) -> tuple[str, int]:
    return request.param  # type: ignore[no-any-return]


def ours(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in tbl.read(**read).select(*COLS).collect())


def theirs(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(tbl.path, **read)
    return sorted(tuple(r[c] for c in COLS) for r in table.to_pylist())


def build(s: Any, kind: tuple[str, int]) -> hudilite.Table:
    """7 writes (each inserts a row and updates row 1); a MOR table compacts after the 5th."""
    table_type, version = kind
    INT_ID_TS_V_P.create_sql(
        s,
        table_type=table_type,
        table_version=version,
        properties={"hoodie.parquet.small.file.limit": "0"},
    )
    # The updates below are INSERT INTOs of stored keys: run them as upserts.
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    s.sql("INSERT INTO t VALUES (1, 0, 'a0', 'x')")
    for n in range(2, 8):
        s.sql(f"INSERT INTO t VALUES ({n}, {n}, 'v{n}', '{'xy'[n % 2]}'), (1, {n}, 'a{n}', 'x')")
        if table_type == "mor" and n == 5:
            call(s, "run_compaction(op => 'run', table => 't')")
    return s.table(TableName(None, "t"))


def expected_rows(tbl: hudilite.Table, instants: list[Instant]) -> tuple[list[Any], list[Any]]:
    """show_archived_commits and _metadata rows for ``instants`` from the live timeline."""
    state = tbl.state()
    utc = state.config.props.get("hoodie.table.timeline.timezone") == "UTC"
    commits, stats = [], []
    for inst in sorted(instants, reverse=True):
        meta = state.timeline.commit_metadata(inst)
        done = inst.completion_time or mtime_instant(
            state.gw, join(state.config.timeline_dir, state.timeline.file_name(inst)), utc
        )
        ws = meta.write_stats()
        commits.append(
            (
                inst.requested_time,
                done,
                sum(w.total_write_bytes for w in ws),
                sum(1 for w in ws if w.prev_commit == "null"),
                sum(1 for w in ws if w.prev_commit not in (None, "null")),
                len(meta.partition_to_write_stats),
                sum(w.num_writes for w in ws),
                sum(w.num_update_writes for w in ws),
                sum(w.total_write_errors for w in ws),
            )
        )
        for w in ws:
            stats.append(
                (
                    *(inst.requested_time, done, inst.action, w.partition_path, w.file_id),
                    *(w.prev_commit, w.num_writes, w.num_inserts, w.num_deletes),
                    *(w.num_update_writes, w.total_write_errors, w.total_log_blocks),
                    *(w.total_corrupt_log_block, w.total_rollback_blocks, w.total_log_records),
                    *(w.total_updated_records_compacted, w.total_write_bytes),
                )
            )
    return commits, stats


def test_archive_commits_and_show_archived(s: Any, kind: tuple[str, int]) -> None:
    table_type, version = kind
    tbl = build(s, kind)
    before = tbl.timeline()
    writes = [i for i in before if i.action in (COMMIT, DELTA_COMMIT)]
    # COW: 7 commits, 2 kept. MOR: the compaction trigger still counts from the compaction,
    # so only the 5 delta commits before it go.
    archived = writes[:5]
    kept = [i for i in before if i not in archived]
    snapshot = ours(tbl)
    first_kept = kept[0].requested_time
    as_of_kept = ours(tbl, as_of=first_kept)
    rows, stat_rows = expected_rows(tbl, archived)

    assert call(s, "show_archived_commits(table => 't', " + ALL_TIME + ")") == []
    assert call(s, ARCHIVE) == [(0,)]
    assert tbl.timeline() == kept
    archive_dir = Path(tbl.path) / tbl.config.archive_dir
    if version == 6:
        assert sorted(p.name for p in archive_dir.iterdir()) == [".commits_.archive.1_1-0-1"]
    else:
        names = sorted(p.name for p in archive_dir.iterdir())
        lsm = f"{archived[0].requested_time}_{archived[-1].requested_time}_0.parquet"
        assert names == [lsm, "_version_", "manifest_1"]

    # Archived instants are listed with the metadata they had on the timeline.
    assert call(s, "show_archived_commits(table => 't', " + ALL_TIME + ")") == rows
    assert call(s, "show_archived_commits(table => 't', limit => 2, " + ALL_TIME + ")") == rows[:2]
    lo, hi = archived[0].requested_time, archived[2].requested_time
    window = f"startTs => '{lo}', endTs => '{hi}'"  # the 0.12 spellings; (start, end]
    assert call(s, f"show_archived_commits(path => '{tbl.path}', {window})") == rows[2:4]
    assert call(s, "show_archived_commits(table => 't')") == []  # Hudi: 10 to 1 days ago
    got = call(s, "show_archived_commits_metadata(table => 't', limit => 100, " + ALL_TIME + ")")
    assert got == stat_rows
    limited = call(s, "show_archived_commits_metadata(table => 't', " + ALL_TIME + ")")
    assert limited == stat_rows[:10]  # limit (default 10) counts files, not commits

    # Reads: unchanged for both readers; archived history is not readable any more.
    assert ours(tbl) == theirs(tbl) == snapshot
    assert ours(tbl, as_of=first_kept) == theirs(tbl, as_of=first_kept) == as_of_kept
    with pytest.raises(InstantNotFoundError, match="archived"):
        tbl.read(as_of=archived[-1].requested_time)
    with pytest.raises(InstantNotFoundError, match="archived"):
        tbl.read(query_type="incremental", start=archived[0].requested_time)
    last = kept[-1]
    start = last.completion_time if version == 8 else last.requested_time
    assert ours(tbl, query_type="incremental", start=start) == []

    # Later writes and a second archival append to the archive.
    s.sql("INSERT INTO t VALUES (9, 9, 'v9', 'x'), (1, 9, 'a9', 'x')")
    s.sql("INSERT INTO t VALUES (10, 10, 'v10', 'y')")
    assert ours(tbl) == theirs(tbl)
    assert {(9, 9, "v9", "x"), (1, 9, "a9", "x")} <= set(ours(tbl))
    newer = tbl.timeline()
    more, _ = expected_rows(tbl, newer[:2] if table_type == "cow" else [])
    assert call(s, ARCHIVE) == [(0,)]
    # MOR: the compaction trigger still counts the 4 delta commits since the compaction.
    assert tbl.timeline() == (newer[2:] if table_type == "cow" else newer)
    listed = call(s, "show_archived_commits(table => 't', limit => 50, " + ALL_TIME + ")")
    assert listed == more + rows
    assert ours(tbl) == theirs(tbl)


def test_archive_commits_defaults_keep_short_timelines(s: Any) -> None:
    tbl = build(s, ("cow", 6))
    before = tbl.timeline()
    assert call(s, "archive_commits(table => 't')") == [(0,)]  # 7 commits <= 30: nothing
    assert call(s, f"archive_commits(path => '{tbl.path}', min_commits => 20)") == [(0,)]
    assert tbl.timeline() == before
    assert not any((Path(tbl.path) / ".hoodie/archived").iterdir())
    with pytest.raises(hudilite.HudiliteError, match=r"hoodie\.keep\.max\.commits=3"):
        call(s, "archive_commits(table => 't', min_commits => 5, max_commits => 3)")
