"""Operational CALL procedures end to end through SQL on COW and MOR tables: cleaning,
savepoints and restores, rollbacks, partition drops and truncation, copies to Spark
tables and views, partition-metadata repair and invalid Parquet detection.

Every case checks the procedure's exact rows (times compared against the timeline) and
its effect on the table, read by hudilite and by hudi-rs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.services._common import partition_of
from hudilite.sqlext.statements import TableName
from hudilite.storage.layout import read_partition_metadata
from hudilite.timeline.instant import CLEAN, DELTA_COMMIT, REPLACE_COMMIT, RESTORE, ROLLBACK
from tests.helpers import call, hudi_rs_read
from tests.tables import INT_ID_TS_V_P

COLS = ["id", "ts", "v", "p"]


@pytest.fixture(params=[("cow", 6), ("mor", 8)], ids=["cow-v6", "mor-v8"])
def kind(request: pytest.FixtureRequest) -> tuple[str, int]:
    return request.param  # type: ignore[no-any-return]


def create(s: Any, kind: tuple[str, int], name: str = "t") -> hudilite.Table:
    table_type, version = kind
    INT_ID_TS_V_P.create_sql(
        s,
        name,
        table_type=table_type,
        table_version=version,
        properties={"hoodie.clean.automatic": "false", "hoodie.parquet.small.file.limit": "0"},
    )
    # The updates below are INSERT INTOs of stored keys: run them as upserts.
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    return s.table(TableName(None, name))


def ours(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in tbl.read(**read).select(*COLS).collect())


def theirs(tbl: hudilite.Table, **read: Any) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(tbl.path, **read)
    if table.num_columns == 0:
        return []
    return sorted(zip(*(table.column(c).to_pylist() for c in COLS), strict=True))


def last_instant(tbl: hudilite.Table, action: str | None = None) -> Any:
    insts = [i for i in tbl.timeline() if action is None or i.action == action]
    return insts[-1]


def write_times(tbl: hudilite.Table) -> list[str]:
    return [i.requested_time for i in tbl.state().timeline.commits()]


# ------------------------------------------------------------------------------ cleaning


def test_run_clean_keep_latest_commits_deletes_old_versions(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x')")
    if kind[0] == "mor":  # updates go to logs: compact so the group gets a second slice
        call(s, "run_compaction(op => 'run', table => 't')")
    s.sql("INSERT INTO t VALUES (1, 3, 'a3', 'x')")
    if kind[0] == "mor":
        call(s, "run_compaction(op => 'run', table => 't')")
    view = tbl.state().view
    x_group = next(g for g in view.file_groups() if g.partition == "p=x")
    oldest = x_group.slices[0].paths
    assert len(x_group.slices) == 3
    before = ours(tbl)
    commits = write_times(tbl)

    got = call(s, "run_clean(table => 't', retain_commits => 1)")

    clean = last_instant(tbl, CLEAN)
    assert clean.is_completed
    assert len(got) == 1
    start, millis, deleted, earliest, bootstrap, version = got[0]
    assert (start, deleted, earliest, bootstrap, version) == (
        clean.requested_time,
        len(oldest),
        commits[-1],
        "{}",
        2,
    )
    assert millis >= 0
    assert not any(tbl.gw.exists(p) for p in oldest)
    assert ours(tbl) == before == theirs(tbl)
    assert before == [(1, 3, "a3", "x"), (2, 1, "b", "y")]
    # Nothing committed since: the NUM_COMMITS trigger (1 commit) does not fire.
    assert call(s, "run_clean(table => 't', retain_commits => 1)") == []
    s.sql("INSERT INTO t VALUES (3, 1, 'c', 'y')")
    assert call(s, "run_clean(table => 't', retain_commits => 1, trigger_max_commits => 2)") == []
    assert [i.requested_time for i in tbl.timeline() if i.action == CLEAN] == [clean.requested_time]

    # show_cleans: the one completed clean, its metadata.
    state = tbl.state()
    done = state.timeline.get(clean.requested_time)
    shown = call(s, "show_cleans(table => 't')")
    assert len(shown) == 1
    row = shown[0]
    assert row[0] == clean.requested_time and row[2:4] == ("clean", clean.requested_time)
    if kind[1] == 8:
        assert row[1] == done.completion_time
    else:  # version 6 has no completion time: the file's modification time
        assert len(row[1]) == 17 and row[1] >= clean.requested_time[:14]
    assert row[4] == millis and row[5:] == (len(oldest), commits[-1], commits[-1], 2)
    meta_rows = call(s, "show_cleans_metadata(table => 't')")
    assert [r[:4] + r[4:] for r in meta_rows] == [
        (
            clean.requested_time,
            row[1],
            "clean",
            clean.requested_time,
            "p=x",
            "KEEP_LATEST_COMMITS",
            len(oldest),
            len(oldest),
            0,
            False,
            millis,
            len(oldest),
        )
    ]
    plans = call(s, "show_clean_plans(table => 't')")
    assert plans == [
        (
            clean.requested_time,
            "COMPLETED",
            "clean",
            commits[-1],
            commits[-1],
            "KEEP_LATEST_COMMITS",
            2,
            1,
            0,
            None,
        )
    ]
    assert call(s, "show_cleans(table => 't', filter => \"total_files_deleted > 100\")") == []
    assert len(call(s, "show_cleans(table => 't', filter => 'total_files_deleted > 0')")) == 1
    with pytest.raises(hudilite.HudiliteError, match="invalid filter 'nope > 1'"):
        call(s, "show_cleans(table => 't', filter => 'nope > 1')")


def test_run_clean_file_versions_policy_and_bad_values(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x')")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x')")
    if kind[0] == "mor":
        call(s, "run_compaction(op => 'run', table => 't')")
    group = next(iter(tbl.state().view.file_groups()))
    old = group.slices[0].paths
    with pytest.raises(hudilite.HudiliteError, match="invalid clean_policy 'KEEP_NOTHING'"):
        call(s, "run_clean(table => 't', clean_policy => 'KEEP_NOTHING')")
    with pytest.raises(hudilite.HudiliteError, match="invalid trigger_strategy 'BY_TIME'"):
        call(s, "run_clean(table => 't', trigger_strategy => 'BY_TIME')")
    # schedule_in_line => false only runs pending cleans: there are none.
    assert call(s, "run_clean(table => 't', schedule_in_line => false)") == []
    got = call(
        s,
        "run_clean(table => 't', clean_policy => 'keep_latest_file_versions', "
        "file_versions_retained => 1, skip_locking => true)",
    )
    clean = last_instant(tbl, CLEAN)
    assert [(r[0], r[2], r[3], r[4], r[5]) for r in got] == [
        (clean.requested_time, len(old), "", "{}", 2)
    ]
    assert not any(tbl.gw.exists(p) for p in old)
    assert ours(tbl) == theirs(tbl) == [(1, 2, "a2", "x")]


# ------------------------------------------------------------------------------ savepoints


def test_savepoint_then_rollback_to_savepoint_restores_rows(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (2, 2, 'b2', 'y'), (3, 1, 'c', 'x')")
    saved_rows = ours(tbl)
    sp_time = write_times(tbl)[-1]
    assert call(s, "show_savepoints(table => 't')") == []
    assert call(s, "create_savepoint(table => 't', user => 'me', comments => 'before')") == [
        (True,)
    ]
    assert call(s, "show_savepoints(table => 't')") == [(sp_time,)]
    [info] = tbl.savepoints()
    assert (info.instant_time, info.user, info.comments) == (sp_time, "me", "before")
    # Savepointing it again is Hudi's HoodieSavepointException: false, not an error.
    assert call(s, f"create_savepoint(table => 't', commit_time => '{sp_time}')") == [(False,)]
    with pytest.raises(hudilite.HudiliteError, match="commit 20990101000000000 not found"):
        call(s, "create_savepoint(table => 't', commit_time => '20990101000000000')")

    s.sql("INSERT INTO t VALUES (1, 5, 'a5', 'x'), (4, 1, 'd', 'z')")
    s.sql("DELETE FROM t WHERE id = 3")
    later = write_times(tbl)[-2:]
    assert ours(tbl) != saved_rows
    with pytest.raises(hudilite.HudiliteError, match="no savepoint at 20990101000000000"):
        call(s, "rollback_to_savepoint(table => 't', instant_time => '20990101000000000')")

    assert call(s, "rollback_to_savepoint(table => 't')") == [(True,)]
    assert ours(tbl) == saved_rows == theirs(tbl)
    assert saved_rows == [(1, 1, "a", "x"), (2, 2, "b2", "y"), (3, 1, "c", "x")]
    timeline = tbl.timeline()
    assert not any(i.requested_time in later for i in timeline)
    restore = last_instant(tbl)
    assert restore.action == RESTORE and restore.is_completed
    # The savepoint stays; the table keeps working after the restore.
    assert call(s, "show_savepoints(path => '" + tbl.path + "')") == [(sp_time,)]
    s.sql("INSERT INTO t VALUES (5, 1, 'e', 'x')")
    assert ours(tbl) == theirs(tbl) == sorted([*saved_rows, (5, 1, "e", "x")])

    assert call(s, f"delete_savepoint(table => 't', instant_time => '{sp_time}')") == [(True,)]
    assert call(s, "show_savepoints(table => 't')") == []
    with pytest.raises(hudilite.HudiliteError, match="has no completed savepoint"):
        call(s, "delete_savepoint(table => 't')")
    with pytest.raises(hudilite.HudiliteError, match="has no completed savepoint"):
        call(s, "rollback_to_savepoint(table => 't')")


def test_delete_savepoint_list_and_unknown(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x')")
    s.sql("INSERT INTO t VALUES (2, 1, 'b', 'x')")
    first, second = write_times(tbl)
    assert call(s, f"create_savepoint(table => 't', commit_time => '{first}')") == [(True,)]
    assert call(s, "create_savepoint(table => 't')") == [(True,)]
    assert call(s, "show_savepoints(table => 't')") == [(second,), (first,)]
    with pytest.raises(hudilite.HudiliteError, match=f"no savepoint at 2099 in t .*{second}"):
        call(s, f"delete_savepoint(table => 't', instant_time => '{first},2099')")
    assert call(s, f"delete_savepoint(table => 't', instant_time => '{first},{second}')") == [
        (True,)
    ]
    assert call(s, "show_savepoints(table => 't')") == []
    assert ours(tbl) == theirs(tbl) == [(1, 1, "a", "x"), (2, 1, "b", "x")]


# ------------------------------------------------------------------------------ rollbacks


def test_rollback_to_instant_latest_only_and_show_rollbacks(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (2, 2, 'b2', 'y')")
    kept = ours(tbl)
    s.sql("INSERT INTO t VALUES (1, 3, 'a3', 'x'), (3, 1, 'c', 'z')")
    first, second, third = write_times(tbl)
    target = tbl.state().timeline.get(third)
    written = sorted(tbl.state().timeline.commit_metadata(target).written_paths())
    assert written

    with pytest.raises(hudilite.HudiliteError, match=f"cannot roll back {second}: only the latest"):
        call(s, f"rollback_to_instant(table => 't', instant_time => '{second}')")
    with pytest.raises(hudilite.HudiliteError, match="instant 20990101000000000 not found"):
        call(s, "rollback_to_instant(table => 't', instant_time => '20990101000000000')")
    assert call(s, "show_rollbacks(table => 't')") == []

    assert call(s, f"rollback_to_instant(table => 't', instant_time => '{third}')") == [(True,)]
    assert ours(tbl) == kept == theirs(tbl)
    assert write_times(tbl) == [first, second]
    assert not any(tbl.gw.exists(p) for p in written)

    rollback = last_instant(tbl, ROLLBACK)
    shown = call(s, "show_rollbacks(table => 't')")
    partitions = sorted({partition_of(p) for p in written})
    assert len(shown) == 1
    assert shown[0][:3] == (rollback.requested_time, third, len(written))
    assert shown[0][3] >= 0 and shown[0][4] == len(partitions)
    detail = call(
        s, f"show_rollback_detail(table => 't', instant_time => '{rollback.requested_time}')"
    )
    assert sorted(detail) == sorted(
        (rollback.requested_time, f"[{third}]", partition_of(p), tbl.gw.uri(p), True)
        for p in written
    )
    assert call(s, f"show_rollback_detail('t', 1, '{rollback.requested_time}')") == detail[:1]
    with pytest.raises(hudilite.HudiliteError, match=f"no completed rollback {third}"):
        call(s, f"show_rollback_detail(table => 't', instant_time => '{third}')")
    # The next latest can be rolled back in turn.
    assert call(s, f"rollback_to_instant(table => 't', instant_time => '{second}')") == [(True,)]
    assert ours(tbl) == theirs(tbl) == [(1, 1, "a", "x"), (2, 1, "b", "y")]
    assert [r[1] for r in call(s, "show_rollbacks(table => 't')")] == [third, second]
    assert len(call(s, "show_rollbacks(table => 't', limit => 1)")) == 1


# ------------------------------------------------------------------------------ partitions


def test_drop_partition_and_truncate(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql(
        "INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y'), (3, 1, 'c', 'z'), "
        "(4, 1, 'd', 'y')"
    )
    s.sql("INSERT INTO t VALUES (2, 2, 'b2', 'y')")
    n = len(tbl.timeline())
    with pytest.raises(hudilite.HudiliteError, match="'p=nope' not found"):
        call(s, "drop_partition(table => 't', partition => 'p=x,p=nope')")
    with pytest.raises(hudilite.HudiliteError, match="did you mean 'p=x'"):
        call(s, "drop_partition(table => 't', partition => 'x')")
    assert len(tbl.timeline()) == n

    assert call(s, "drop_partition(table => 't', partition => 'p=x, p=z')") == [("Success",)]
    replace = last_instant(tbl)
    assert replace.action == REPLACE_COMMIT and replace.is_completed
    meta = tbl.state().timeline.commit_metadata(replace)
    assert sorted(meta.partition_to_replace_file_ids) == ["p=x", "p=z"]
    assert ours(tbl) == theirs(tbl) == [(2, 2, "b2", "y"), (4, 1, "d", "y")]

    got = call(s, "truncate_table(table => 't')")
    assert len(got) == 1 and got[0][0] == "SUCCESS" and got[0][1] >= 0
    assert last_instant(tbl).action == REPLACE_COMMIT
    assert ours(tbl) == theirs(tbl) == []
    s.sql("INSERT INTO t VALUES (9, 1, 'i', 'x')")
    assert ours(tbl) == theirs(tbl) == [(9, 1, "i", "x")]
    assert call(s, "truncate_table(table => 't', partitions => 'p=x')")[0][0] == "SUCCESS"
    assert ours(tbl) == theirs(tbl) == []


def test_truncate_partitions_of_unpartitioned_table_is_an_error(s: Any) -> None:
    s.sql(
        "CREATE TABLE u (id INT, ts BIGINT) USING hudi "
        "TBLPROPERTIES (primaryKey='id', preCombineField='ts')"
    )
    s.sql("INSERT INTO u VALUES (1, 1)")
    with pytest.raises(hudilite.HudiliteError, match="non-partitioned table u"):
        call(s, "truncate_table(table => 'u', partitions => 'a')")
    assert call(s, "truncate_table('u')")[0][0] == "SUCCESS"
    assert s.sql("SELECT * FROM u").count() == 0


# ------------------------------------------------------------------------------ copies


@pytest.fixture
def spark_db(spark: Any, tmp_path: Path) -> Iterator[str]:
    """A Spark (not hudilite) database under tmp_path for copy_to_table's targets."""
    name = f"proc_copy_{abs(hash(str(tmp_path))) % 10**8}"
    spark.sql(f"CREATE DATABASE {name} LOCATION '{tmp_path / 'spark_db'}'")
    yield name
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


def test_copy_to_table_and_temp_view(
    s: Any, spark: Any, spark_db: str, kind: tuple[str, int]
) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (2, 2, 'b2', 'y'), (3, 1, 'c', 'x')")
    first, second = write_times(tbl)
    # Incremental ranges are on completion times (version 8) or requested times (6).
    timeline = tbl.state().timeline
    begin, end = timeline.completion_time(first), timeline.completion_time(second)
    snapshot = [(1, 1, "a", "x"), (2, 2, "b2", "y"), (3, 1, "c", "x")]
    target = f"{spark_db}.copy"

    assert call(s, f"copy_to_table(table => 't', new_table => '{target}')") == [(0,)]
    copied = spark.table(target)
    assert copied.columns[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    assert sorted(tuple(r) for r in copied.select(*COLS).collect()) == snapshot
    # Through hudilite SQL too: the Spark table is not a hudilite table.
    assert sorted(tuple(r) for r in s.sql(f"SELECT id, ts, v, p FROM {target}").collect()) == (
        snapshot
    )
    # An existing target keeps its columns; append adds rows.
    assert call(
        s,
        f"copy_to_table(table => 't', new_table => '{target}', query_type => 'incremental', "
        f"begin_instance_time => '{begin}', save_mode => 'append')",
    ) == [(0,)]
    got = sorted(tuple(r) for r in spark.table(target).select(*COLS).collect())
    assert got == sorted([*snapshot, (2, 2, "b2", "y"), (3, 1, "c", "x")])

    other = f"{spark_db}.asof"
    assert call(
        s,
        f"copy_to_table(table => 't', new_table => '{other}', as_of_instant => '{first}', "
        "columns => 'id,v')",
    ) == [(0,)]
    assert spark.table(other).columns == ["id", "v"]
    assert sorted(tuple(r) for r in spark.table(other).collect()) == [(1, "a"), (2, "b")]

    with pytest.raises(hudilite.HudiliteError, match="invalid query_type 'latest'"):
        call(s, f"copy_to_table(table => 't', new_table => '{other}', query_type => 'latest')")
    with pytest.raises(hudilite.HudiliteError, match="invalid save_mode 'ignore'"):
        call(s, f"copy_to_table(table => 't', new_table => '{other}', save_mode => 'ignore')")
    with pytest.raises(hudilite.HudiliteError, match=r"column\(s\) nope not in t"):
        call(s, f"copy_to_table(table => 't', new_table => '{spark_db}.x', columns => 'id,nope')")
    with pytest.raises(hudilite.HudiliteError, match="new_table 't' is a hudilite table"):
        call(s, "copy_to_table(table => 't', new_table => 't')")

    # Temp views: snapshot, read-optimized, global; existing names need replace.
    assert call(s, "copy_to_temp_view(table => 't', view_name => 'proc_v')") == [(0,)]
    try:
        view_rows = s.sql("SELECT id, ts, v, p FROM proc_v").collect()
        assert sorted(tuple(r) for r in view_rows) == snapshot
        with pytest.raises(hudilite.HudiliteError, match="cannot create view 'proc_v'"):
            call(s, "copy_to_temp_view(table => 't', view_name => 'proc_v')")
        assert call(
            s,
            "copy_to_temp_view(table => 't', view_name => 'proc_v', replace => true, "
            "query_type => 'read_optimized')",
        ) == [(0,)]
        ro = sorted(tuple(r) for r in spark.table("proc_v").select(*COLS).collect())
        assert ro == ours(tbl, query_type="read_optimized")
        if kind[0] == "mor":  # the update of id 2 is still in a log
            assert (2, 1, "b", "y") in ro
        assert call(
            s,
            "copy_to_temp_view(table => 't', view_name => 'proc_gv', global => true, "
            f"query_type => 'incremental', begin_instance_time => '{begin}', "
            f"end_instance_time => '{end}')",
        ) == [(0,)]
        inc = spark.table("global_temp.proc_gv").select(*COLS).collect()
        assert sorted(tuple(r) for r in inc) == [(2, 2, "b2", "y"), (3, 1, "c", "x")]
    finally:
        spark.catalog.dropTempView("proc_v")
        spark.catalog.dropGlobalTempView("proc_gv")


# ------------------------------------------------------------------------------ repairs


def test_repair_add_partition_meta_dry_run_then_real(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (3, 1, 'c', 'y')")
    latest = write_times(tbl)[-1]
    tbl.gw.delete_file("p=y/.hoodie_partition_metadata")
    assert ours(tbl) == [(1, 1, "a", "x")]  # without the file p=y is not a partition

    assert call(s, "repair_add_partition_meta(table => 't')") == [
        ("p=x", "Yes", "None"),
        ("p=y", "No", "None"),
    ]
    assert not tbl.gw.exists("p=y/.hoodie_partition_metadata")
    assert call(s, "repair_add_partition_meta(table => 't', dry_run => false)") == [
        ("p=x", "Yes", "None"),
        ("p=y", "No", "Repaired"),
    ]
    meta = read_partition_metadata(tbl.gw, "p=y")
    assert meta == {"commitTime": latest, "partitionDepth": "1"}
    expected = [(1, 1, "a", "x"), (2, 1, "b", "y"), (3, 1, "c", "y")]
    assert ours(tbl) == theirs(tbl) == expected
    assert call(s, "repair_add_partition_meta('t', false)") == [
        ("p=x", "Yes", "None"),
        ("p=y", "Yes", "None"),
    ]


def test_show_invalid_parquet_finds_and_deletes_garbage(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    tbl.gw.write_bytes("p=x/garbage.parquet", b"this is not parquet at all")
    tbl.gw.write_bytes("p=y/empty.parquet", b"")
    garbage, empty = tbl.gw.uri("p=x/garbage.parquet"), tbl.gw.uri("p=y/empty.parquet")
    path = tbl.path

    assert call(s, f"show_invalid_parquet(path => '{path}')") == [(garbage,), (empty,)]
    assert call(s, f"show_invalid_parquet(path => '{path}', limit => 1)") == [(garbage,)]
    assert call(s, f"show_invalid_parquet(path => '{path}', partitions => 'p=y')") == [(empty,)]
    latest = write_times(tbl)[-1]
    assert call(s, f"show_invalid_parquet(path => '{path}', instants => '{latest}')") == []
    assert ours(tbl) == [(1, 1, "a", "x"), (2, 1, "b", "y")]

    # Deleted files are not reported (as Hudi); afterwards nothing is invalid.
    assert call(s, f"show_invalid_parquet(path => '{path}', needDelete => true)") == []
    assert not tbl.gw.exists("p=x/garbage.parquet")
    assert not tbl.gw.exists("p=y/empty.parquet")
    tbl.gw.write_bytes("p=x/more.parquet", b"PAR1")
    assert call(s, f"show_invalid_parquet(path => '{path}', need_delete => true)") == []
    assert call(s, f"show_invalid_parquet('{path}')") == []
    assert ours(tbl) == theirs(tbl) == [(1, 1, "a", "x"), (2, 1, "b", "y")]


def test_procedures_name_missing_tables(s: Any) -> None:
    with pytest.raises(hudilite.HudiliteError, match=r"table default\.nope not found"):
        call(s, "run_clean(table => 'nope')")
    with pytest.raises(hudilite.HudiliteError, match="missing required parameter 'instant_time'"):
        call(s, "rollback_to_instant(table => 'nope')")
    with pytest.raises(hudilite.HudiliteError, match="give the table"):
        call(s, "drop_partition(partition => 'a')")


def test_delta_commit_rollback_on_mor_keeps_base_files(s: Any) -> None:
    tbl = create(s, ("mor", 6))
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x')")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x')")
    latest = last_instant(tbl)
    assert latest.action == DELTA_COMMIT
    assert call(s, f"rollback_to_instant('t', '{latest.requested_time}')") == [(True,)]
    assert ours(tbl) == theirs(tbl) == [(1, 1, "a", "x")]
