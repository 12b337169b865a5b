"""Inspection procedures over the archived timeline, through SQL: ``show_timeline
(showArchived)``, ``show_commits[_metadata](show_archived)`` and ``show_cleans`` /
``show_cleans_metadata`` / ``show_clean_plans`` (``showArchived``) on a COW table of version 8
and a MOR table of version 6.

Expected rows come from the same procedures before archiving: archived instants must come
back with the metadata they had on the active timeline, and without the flag the
procedures show exactly what is still active. ``show_timeline`` rows of archived instants
carry ``timeline_type`` ``ARCHIVED`` and, as in Hudi, state times taken from the instant
(requested and inflight: its requested time; completed: its completion time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

import hudilite
from hudilite.sqlext.statements import TableName
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.timeline.instant_time import epoch_ms_to_instant
from tests.helpers import call, hudi_rs_read
from tests.tables import INT_ID_TS_V_P

# Enough commits (and, on MOR, compactions) for the default cleaner retention to matter:
# run with Hudi's automatic clean/archive defaults, as before (tests/spark/conftest.py).
pytestmark = pytest.mark.services

COLS = ["id", "ts", "v", "p"]
ARCHIVE_OPTIONS = {
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
}


# Both timeline versions and both table types, one case each (the other two pairs run in
# test_proc_archive.py): archived cleans on v6, the LSM archive on v8, compactions on MOR.
@pytest.fixture(params=[("cow", 8), ("mor", 6)], ids=["cow-v8", "mor-v6"])
def kind(request: pytest.FixtureRequest) -> tuple[str, int]:
    return request.param  # type: ignore[no-any-return]


def rows_of(tbl: hudilite.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in tbl.read().select(*COLS).collect())


def rs_rows(tbl: hudilite.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in COLS) for r in hudi_rs_read(tbl.path).to_pylist())


def build(s: Any, kind: tuple[str, int]) -> hudilite.Table:
    """7 writes (each inserts a row and updates row 1), a clean after each from the third
    on (a MOR table compacts first, so there are old file slices to clean)."""
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
        s.sql(f"INSERT INTO t VALUES ({n}, {n}, 'v{n}', 'x'), (1, {n}, 'a{n}', 'x')")
        if n >= 3:
            if table_type == "mor":
                call(s, "run_compaction(op => 'run', table => 't')")
            call(s, "run_clean(table => 't', retain_commits => 1)")
    return s.table(TableName(None, "t"))


def fmt(instant_time: str) -> str:
    """An instant time as show_timeline shows an archived instant's state time."""
    return datetime.strptime(instant_time[:14], "%Y%m%d%H%M%S").strftime("%m-%d %H:%M:%S")


def completion_times(tbl: hudilite.Table) -> dict[str, str]:
    """Completion time of every completed instant: the ``_C`` of a v8 name, the completed
    file's modification time on v6 (UTC: the zone hudilite's tables keep time in)."""
    state = tbl.state()
    assert state.config.props.get("hoodie.table.timeline.timezone") == "UTC"
    out = {}
    for inst in state.timeline.completed():
        if inst.completion_time:
            out[inst.requested_time] = inst.completion_time
        else:
            name = state.timeline.file_name(inst)
            ms = state.gw.mtime_ms(f"{state.config.timeline_dir}/{name}")
            out[inst.requested_time] = epoch_ms_to_instant(ms)
    return out


def test_inspection_procedures_show_archived_instants(s: Any, kind: tuple[str, int]) -> None:
    tbl = build(s, kind)
    everything = "limit => 100"
    timeline = call(s, f"show_timeline(table => 't', {everything})")
    commits = call(s, f"show_commits(table => 't', {everything})")
    commit_stats = call(s, f"show_commits_metadata(table => 't', {everything})")
    cleans = call(s, f"show_cleans(table => 't', {everything})")
    clean_parts = call(s, f"show_cleans_metadata(table => 't', {everything})")
    plans = call(s, f"show_clean_plans(table => 't', {everything})")
    done_at = completion_times(tbl)
    snapshot = rows_of(tbl)
    assert len(cleans) >= 4  # enough for version 6 to archive cleans (more than max)
    # Nothing archived yet: the flag changes nothing.
    assert call(s, f"show_timeline(table => 't', showArchived => true, {everything})") == timeline
    assert call(s, f"show_commits(table => 't', {everything}, show_archived => true)") == commits
    assert call(s, f"show_cleans(table => 't', showArchived => true, {everything})") == cleans

    result = tbl.archive(options=ARCHIVE_OPTIONS)
    archived = {t for t, _ in result.archived}
    assert {a for _, a in result.archived} >= {"clean"}
    assert any(a in (COMMIT, DELTA_COMMIT) for _, a in result.archived)
    assert {(i.requested_time, i.action) for i in tbl.archived_timeline()} == set(result.archived)
    kept = [r for r in timeline if r[0] not in archived]
    assert len(kept) < len(timeline)

    # --- show_timeline
    assert call(s, f"show_timeline(table => 't', {everything})") == kept
    merged = [
        (t, a, st, fmt(t), fmt(t), fmt(done_at[t]), "ARCHIVED", None)
        if t in archived
        else (t, a, st, rq, inf, done, tt, info)
        for t, a, st, rq, inf, done, tt, info in timeline
    ]
    assert call(s, f"show_timeline(table => 't', showArchived => true, {everything})") == merged
    assert call(s, f"show_timeline(table => 't', show_archived => true, {everything})") == merged
    assert call(s, "show_timeline(table => 't', showArchived => true)") == merged[:20]
    newest_archived = max(archived)
    pos = next(i for i, r in enumerate(merged) if r[0] == newest_archived)
    assert (
        call(s, f"show_timeline(table => 't', showArchived => true, limit => {pos + 1})")
        == (merged[: pos + 1])
    )
    # A closed time range ignores limit and covers both timelines.
    lo, hi = sorted(archived)[1], kept[-1][0]
    window = [r for r in merged if lo <= r[0] <= hi]
    assert any(r[6] == "ACTIVE" for r in window) and any(r[6] == "ARCHIVED" for r in window)
    got = call(
        s,
        f"show_timeline(table => 't', showArchived => true, limit => 1, "
        f"startTime => '{lo}', endTime => '{hi}')",
    )
    assert got == window
    got = call(s, f"show_timeline(table => 't', showArchived => true, endTime => '{lo}')")
    assert got == [r for r in merged if r[0] <= lo]
    got = call(
        s,
        "show_timeline(table => 't', showArchived => true, limit => 100, "
        "filter => \"timeline_type = 'ARCHIVED' AND action = 'clean'\")",
    )
    assert got == [r for r in merged if r[6] == "ARCHIVED" and r[1] == "clean"] != []

    # --- show_commits / show_commits_metadata (show_archived appended last)
    active_commits = [r for r in commits if r[0] not in archived]
    assert call(s, f"show_commits(table => 't', {everything})") == active_commits
    assert call(s, f"show_commits(table => 't', {everything}, show_archived => true)") == commits
    assert call(s, f"show_commits(table => 't', {everything}, showArchived => true)") == commits
    assert call(s, "show_commits(table => 't', show_archived => true)") == commits[:10]
    assert call(s, f"show_commits('t', 100, '{tbl.path}', true)") == commits  # positional
    assert call(s, "show_commits('t', 100)") == active_commits
    active_stats = [r for r in commit_stats if r[0] not in archived]
    assert call(s, f"show_commits_metadata(table => 't', {everything})") == active_stats
    got = call(s, f"show_commits_metadata(table => 't', {everything}, show_archived => true)")
    assert got == commit_stats
    got = call(s, "show_commits_metadata(table => 't', show_archived => true)")
    assert got == commit_stats[:10]

    # --- show_cleans / show_cleans_metadata / show_clean_plans
    assert any(r[0] in archived for r in cleans)
    assert call(s, f"show_cleans(table => 't', {everything})") == [
        r for r in cleans if r[0] not in archived
    ]
    assert call(s, f"show_cleans(table => 't', showArchived => true, {everything})") == cleans
    assert call(s, f"show_cleans(table => 't', show_archived => true, {everything})") == cleans
    assert call(s, "show_cleans(table => 't', showArchived => true, limit => 2)") == cleans[:2]
    oldest = min(r[0] for r in cleans)
    got = call(
        s, f"show_cleans(table => 't', showArchived => true, filter => \"clean_time = '{oldest}'\")"
    )
    assert got == [r for r in cleans if r[0] == oldest]
    assert call(s, f"show_cleans_metadata(table => 't', {everything})") == [
        r for r in clean_parts if r[0] not in archived
    ]
    got = call(s, f"show_cleans_metadata(table => 't', showArchived => true, {everything})")
    assert got == clean_parts
    assert call(s, f"show_clean_plans(table => 't', {everything})") == [
        r for r in plans if r[0] not in archived
    ]
    got = call(s, f"show_clean_plans(table => 't', showArchived => true, {everything})")
    assert got == plans

    # Read-only: both readers still see the same table.
    assert rows_of(tbl) == rs_rows(tbl) == snapshot
