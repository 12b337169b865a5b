"""``upgrade_table`` / ``downgrade_table`` end to end through SQL on COW and MOR tables:
6 -> 8 -> 6 and 8 -> 6 -> 8, with archived instants, pending compactions and writes after
each change. hudi-rs and hudilite must read the same rows before and after every change
(for MOR the full compaction Hudi runs first renames the files, so ``_hoodie_file_name``
is left out), and the table's files must be those of the target version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.config import parse_properties
from hudilite.sqlext.statements import TableName
from hudilite.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, State
from tests.helpers import call, hudi_rs_read
from tests.tables import INT_ID_TS_V_P

COLS = ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path", "id", "ts", "v", "p"]
ALL_TIME = "start_ts => '0', end_ts => '99999999999999999'"


@pytest.fixture(params=["cow", "mor"])
def table_type(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


def ours(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in tbl.read(**read).select(*COLS).collect())


def theirs(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(tbl.path, **read)
    return sorted(tuple(r[c] for c in COLS) for r in table.to_pylist())


def props(tbl: hudilite.Table) -> dict[str, str]:
    return parse_properties((Path(tbl.path) / ".hoodie/hoodie.properties").read_text())


def build(s: Any, table_type: str, version: int) -> hudilite.Table:
    INT_ID_TS_V_P.create_sql(
        s,
        table_type=table_type,
        table_version=version,
        properties={"hoodie.parquet.small.file.limit": "0"},
    )
    # The updates below are INSERT INTOs of stored keys: run them as upserts.
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    for n in range(2, 7):
        s.sql(f"INSERT INTO t VALUES (1, {n}, 'a{n}', 'x'), ({n + 10}, {n}, 'n{n}', 'y')")
    return s.table(TableName(None, "t"))


def timeline_files(tbl: hudilite.Table, folder: str) -> list[str]:
    return sorted(p.name for p in (Path(tbl.path) / folder).iterdir() if p.is_file())


def check_reads(tbl: hudilite.Table, expected: list[Any], as_of: str, then: list[Any]) -> None:
    assert ours(tbl) == theirs(tbl) == expected
    assert ours(tbl, as_of=as_of) == theirs(tbl, as_of=as_of) == then


def test_upgrade_and_downgrade_v6_table(s: Any, table_type: str) -> None:
    tbl = build(s, table_type, 6)
    call(
        s, "archive_commits(table => 't', min_commits => 2, max_commits => 3, retain_commits => 1)"
    )
    archived = call(s, "show_archived_commits(table => 't', " + ALL_TIME + ")")
    assert archived  # some history is archived before the upgrade
    if table_type == "mor":  # a pending plan: the upgrade must run it (Hudi compacts first)
        s.sql("INSERT INTO t VALUES (1, 9, 'a9', 'x')")
        call(s, "run_compaction(op => 'schedule', table => 't')")
        pending = [i for i in tbl.timeline() if i.action == COMPACTION]
        assert len(pending) == 1 and pending[0].is_pending
    snapshot = ours(tbl)
    mid = tbl.timeline()[-2].requested_time
    at_mid = ours(tbl, as_of=mid)
    check_reads(tbl, snapshot, mid, at_mid)

    assert call(s, "upgrade_table(table => 't', to_version => 'EIGHT')") == [(True,)]
    p = props(tbl)
    assert (p["hoodie.table.version"], p["hoodie.timeline.layout.version"]) == ("8", "2")
    assert p["hoodie.table.initial.version"] == "6" and p["hoodie.timeline.path"] == "timeline"
    assert p["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert not [n for n in timeline_files(tbl, ".hoodie") if n[:1].isdigit()]
    done = [i for i in tbl.timeline() if i.is_completed]
    assert done and all(i.completion_time for i in done)
    if table_type == "mor":  # every plan ran; the latest slices have no logs any more
        assert all(i.is_completed for i in tbl.timeline() if i.action in (COMMIT, COMPACTION))
        assert tbl.timeline()[-1] == pending[0].as_state(State.COMPLETED, done[-1].completion_time)
        assert not any(sl.has_logs for sl in tbl.state().view.latest_slices())
    check_reads(tbl, snapshot, mid, at_mid)
    assert call(s, "show_archived_commits(table => 't', " + ALL_TIME + ")") == archived
    history = timeline_files(tbl, ".hoodie/timeline/history")
    assert "_version_" in history and any(n.endswith("_0.parquet") for n in history)

    s.sql("INSERT INTO t VALUES (1, 20, 'a20', 'x'), (30, 20, 'n30', 'x')")
    after = ours(tbl)
    assert after == theirs(tbl) and (30, 20, "n30", "x") in [r[3:] for r in after]
    assert tbl.timeline()[-1].action == (DELTA_COMMIT if table_type == "mor" else COMMIT)

    assert call(s, "downgrade_table(table => 't', to_version => '6')") == [(True,)]
    p = props(tbl)
    assert (p["hoodie.table.version"], p["hoodie.timeline.layout.version"]) == ("6", "1")
    assert "hoodie.record.merge.mode" not in p and "hoodie.table.initial.version" not in p
    assert p["hoodie.compaction.payload.class"].endswith("DefaultHoodieRecordPayload")
    assert not timeline_files(tbl, ".hoodie/timeline")
    assert all(i.completion_time is None for i in tbl.timeline())
    check_reads(tbl, after, mid, at_mid)
    assert call(s, "show_archived_commits(table => 't', " + ALL_TIME + ")") == archived
    s.sql("INSERT INTO t VALUES (31, 21, 'n31', 'y')")
    assert ours(tbl) == theirs(tbl) and len(ours(tbl)) == len(after) + 1


def test_downgrade_and_upgrade_v8_table(s: Any, table_type: str) -> None:
    tbl = build(s, table_type, 8)
    snapshot = ours(tbl)
    first = tbl.timeline()[0].requested_time
    at_first = ours(tbl, as_of=first)
    check_reads(tbl, snapshot, first, at_first)
    # upgrade_table is the same procedure: a lower version downgrades (Hudi's enum name).
    assert call(s, "upgrade_table(table => 't', to_version => 'SIX')") == [(True,)]
    assert props(tbl)["hoodie.table.version"] == "6"
    assert props(tbl)["hoodie.table.keygenerator.class"].endswith(".SimpleKeyGenerator")
    check_reads(tbl, snapshot, first, at_first)
    s.sql("INSERT INTO t VALUES (40, 40, 'n40', 'y')")
    snapshot = ours(tbl)
    assert snapshot == theirs(tbl)
    assert call(s, "downgrade_table(table => 't', to_version => 8)") == [(True,)]
    assert props(tbl)["hoodie.table.version"] == "8"
    check_reads(tbl, snapshot, first, at_first)
    before = tbl.timeline()
    assert call(s, "upgrade_table(table => 't', to_version => '8')") == [(True,)]  # no-op
    assert tbl.timeline() == before


def test_bad_versions_are_named(s: Any) -> None:
    build(s, "cow", 6)
    with pytest.raises(hudilite.HudiliteError, match="invalid table version 'SEVENTEEN'"):
        call(s, "upgrade_table(table => 't', to_version => 'SEVENTEEN')")
    with pytest.raises(hudilite.HudiliteError, match="cannot change table version 6 to 7"):
        call(s, "upgrade_table(table => 't', to_version => 'SEVEN')")
    with pytest.raises(hudilite.HudiliteError, match="to_version"):
        call(s, "downgrade_table(table => 't')")
