"""Clustering procedures end to end through SQL on COW and MOR tables (v6 and v8):
``run_clustering`` and ``show_clustering``.

Every case checks the exact rows (instant times compared against the timeline) and the
effect on the table: the same rows read by hudilite and by hudi-rs, fewer base files,
rows sorted by ``order`` inside the new files.
"""

from __future__ import annotations

from typing import Any

import pytest

import hudilite
from hudilite.services.clustering_plan import clustering_instants, read_clustering_plan
from hudilite.sqlext.statements import TableName
from hudilite.storage.parquet_io import read_base_file
from hudilite.timeline.instant import REPLACE_COMMIT
from tests.helpers import call, hudi_rs_read
from tests.tables import INT_ID_TS_V_P

COLS = ["id", "ts", "v", "p"]
RUN_KINDS = [("mor", 6), ("cow", 8)]


def create(s: Any, kind: tuple[str, int], name: str = "t") -> hudilite.Table:
    """A table whose every insert opens new file groups (small-file packing off)."""
    table_type, version = kind
    INT_ID_TS_V_P.create_sql(
        s,
        name,
        table_type=table_type,
        table_version=version,
        properties={"hoodie.clean.automatic": "false", "hoodie.parquet.small.file.limit": "0"},
    )
    return s.table(TableName(None, name))


def fill(s: Any, name: str = "t") -> None:
    """Three file groups in x, two in y; on MOR the update and delete go to log files."""
    s.sql(f"INSERT INTO {name} VALUES (1, 1, 'm', 'x'), (2, 1, 'c', 'x'), (3, 1, 'q', 'y')")
    s.sql(f"INSERT INTO {name} VALUES (4, 1, 'a', 'x'), (5, 1, NULL, 'y')")
    s.sql(f"INSERT INTO {name} VALUES (6, 1, 'k', 'x')")
    s.sql(f"UPDATE {name} SET v = 'z', ts = 2 WHERE id = 2")
    s.sql(f"DELETE FROM {name} WHERE id = 6")


def ours(tbl: hudilite.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in tbl.read().select(*COLS).collect())


def theirs(tbl: hudilite.Table) -> list[tuple[Any, ...]]:
    table = hudi_rs_read(tbl.path)
    return sorted(zip(*(table.column(c).to_pylist() for c in COLS), strict=True))


def live(tbl: hudilite.Table) -> list[Any]:
    return tbl.state().view.latest_slices()


def clusterings(tbl: hudilite.Table) -> list[tuple[str, str, int, str]]:
    """(time, state, groups, involved partitions) of every clustering, newest first."""
    found = clustering_instants(tbl.state().timeline)
    return [
        (i.requested_time, i.state.name, len(p.groups), p.involved_partitions)
        for i, p in sorted(found, key=lambda f: f[0].requested_time, reverse=True)
    ]


EXPECTED = [
    (1, 1, "m", "x"),
    (2, 2, "z", "x"),
    (3, 1, "q", "y"),
    (4, 1, "a", "x"),
    (5, 1, None, "y"),
]


# One table per type and per version; with the other tests here every pair runs: cow-v6
# and mor-v8 (schedule/execute), mor-v8 (predicate), mor-v6 and cow-v8 (failed clustering).
@pytest.mark.parametrize("kind", RUN_KINDS, ids=[f"{t}-v{v}" for t, v in RUN_KINDS])
def test_run_clustering_rewrites_small_files_keeping_every_row(
    s: Any, kind: tuple[str, int]
) -> None:
    tbl = create(s, kind)
    fill(s)
    assert ours(tbl) == theirs(tbl) == EXPECTED
    before = live(tbl)
    assert len(before) == 5
    if kind[0] == "mor":
        assert any(sl.log_files for sl in before)

    rows = call(s, "run_clustering(table => 't', order => 'V', show_involved_partition => true)")
    (T, state, groups, _) = clusterings(tbl)[0]
    assert rows == [(T, 2, "COMPLETED", "p=x,p=x,p=x,p=y,p=y")] and (state, groups) == (
        "COMPLETED",
        2,
    )
    inst = tbl.state().timeline.get(T)
    assert inst is not None and inst.action == REPLACE_COMMIT and inst.is_completed
    meta = tbl.state().timeline.commit_metadata(inst)
    assert meta.operation_type == "CLUSTER"
    assert sum(len(ids) for ids in meta.partition_to_replace_file_ids.values()) == 5
    after = live(tbl)
    assert [(sl.partition, sl.base_instant, sl.log_files) for sl in after] == [
        ("p=x", T, ()),
        ("p=y", T, ()),
    ]
    assert ours(tbl) == theirs(tbl) == EXPECTED
    # Inside each new file the rows follow `order` (nulls first, as Spark sorts).
    by_partition = {
        sl.partition: read_base_file(tbl.gw, sl.base_file.path).to_pylist() for sl in after
    }
    assert [r["v"] for r in by_partition["p=x"]] == ["a", "m", "z"]
    assert [r["v"] for r in by_partition["p=y"]] == [None, "q"]
    assert read_clustering_plan(tbl.state(), T).sort_columns == ("v",)
    assert call(s, "show_clustering(table => 't')") == [(T, 2, "COMPLETED", "*")]
    # Writes after the clustering land in the new file groups and read back the same.
    s.sql("UPDATE t SET v = 'w', ts = 3 WHERE id = 3")
    s.sql("INSERT INTO t VALUES (7, 1, 'n', 'x')")
    assert ours(tbl) == theirs(tbl)
    assert (3, 3, "w", "y") in ours(tbl) and (7, 1, "n", "x") in ours(tbl)


@pytest.mark.parametrize("kind", [("cow", 6), ("mor", 8)], ids=["cow-v6", "mor-v8"])
def test_schedule_then_execute_and_show_clustering(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    fill(s)
    scheduled = call(s, "run_clustering(table => 't', op => 'schedule')")
    ((T, _, _, _),) = [c for c in clusterings(tbl)]
    assert scheduled == [(T, 2, "REQUESTED", "*")]
    assert call(s, "show_clustering(table => 't', show_involved_partition => true)") == [
        (T, 2, "REQUESTED", "p=x,p=x,p=x,p=y,p=y")
    ]
    assert len(live(tbl)) == 5  # nothing changes before execution
    assert ours(tbl) == theirs(tbl) == EXPECTED
    assert call(s, "run_clustering(table => 't', op => 'EXECUTE')") == [(T, 2, "COMPLETED", "*")]
    assert len(live(tbl)) == 2
    assert ours(tbl) == theirs(tbl) == EXPECTED
    # Two plans, one per partition; `instants` runs just the named one, `limit` the oldest.
    s.sql("INSERT INTO t VALUES (8, 1, 'b', 'x'), (9, 1, 'r', 'y')")
    x = call(s, "run_clustering(table => 't', op => 'schedule', selected_partitions => 'p=x')")
    y = call(s, "run_clustering(table => 't', op => 'schedule', selected_partitions => 'p=y')")
    tx, ty = x[0][0], y[0][0]
    assert (x, y) == ([(tx, 1, "REQUESTED", "*")], [(ty, 1, "REQUESTED", "*")]) and tx < ty
    assert call(s, f"run_clustering(table => 't', instants => '{ty}')") == [
        (ty, 1, "COMPLETED", "*")
    ]
    assert call(s, "run_clustering(table => 't', op => 'execute', limit => 1)") == [
        (tx, 1, "COMPLETED", "*")
    ]
    assert call(s, "show_clustering(table => 't', limit => 2)") == [
        (ty, 1, "COMPLETED", "*"),
        (tx, 1, "COMPLETED", "*"),
    ]
    assert len(call(s, "show_clustering(table => 't')")) == 3
    assert call(s, "run_clustering(table => 't', op => 'execute')") == []  # nothing pending
    assert ours(tbl) == theirs(tbl) == sorted([*EXPECTED, (8, 1, "b", "x"), (9, 1, "r", "y")])
    with pytest.raises(hudilite.HudiliteError, match="only be used with op => 'execute'"):
        call(s, f"run_clustering(table => 't', op => 'schedule', instants => '{tx}')")
    with pytest.raises(hudilite.HudiliteError, match=f"no pending clustering at {tx}"):
        call(s, f"run_clustering(table => 't', instants => '{tx}')")


def test_predicate_selects_partitions_and_arguments_are_checked(s: Any) -> None:
    tbl = create(s, ("mor", 8))
    fill(s)
    rows = call(
        s,
        "run_clustering(table => 't', predicate => \"p = 'x'\", show_involved_partition => true)",
    )
    ((T, _, _, _),) = clusterings(tbl)
    assert rows == [(T, 1, "COMPLETED", "p=x,p=x,p=x")]
    assert [sl.partition for sl in live(tbl)] == ["p=x", "p=y", "p=y"]
    assert ours(tbl) == theirs(tbl) == EXPECTED
    # A predicate matching no partition schedules nothing.
    assert call(s, "run_clustering(table => 't', predicate => \"p = 'nowhere'\")") == []
    assert call(s, "run_clustering(table => 't', selected_partitions => '')") == []
    assert len(clusterings(tbl)) == 1
    errors = {
        "predicate => \"v = 'a'\"": "Only partition predicates are allowed",
        "predicate => \"p = 'x' and ts > 0\"": "Only partition predicates are allowed",
        "predicate => 'nope = 1'": "cannot resolve predicate",
        "order => 'v,nope'": "Order column not exist:nope",
        "order => 'v', order_strategy => 'z-order'": "'z-order' is not supported",
        "order_strategy => 'spiral'": "invalid order_strategy 'spiral'",
        "op => 'run'": "invalid op 'run'",
    }
    for args, message in errors.items():
        with pytest.raises(hudilite.HudiliteError, match=message):
            call(s, f"run_clustering(table => 't', {args})")
    assert len(clusterings(tbl)) == 1  # no failed call scheduled anything
    # `path` works like `table`; insert overwrite replace commits are no clusterings.
    s.sql("INSERT OVERWRITE t PARTITION (p = 'y') SELECT 10, 1, 'o'")
    assert call(s, f"show_clustering(path => '{tbl.path}')") == [(T, 1, "COMPLETED", "*")]
    rows = call(s, f"run_clustering(path => '{tbl.path}', order => 'id')")
    assert rows == [(clusterings(tbl)[0][0], 2, "COMPLETED", "*")]
    assert (
        ours(tbl)
        == theirs(tbl)
        == [(1, 1, "m", "x"), (2, 2, "z", "x"), (4, 1, "a", "x"), (10, 1, "o", "y")]
    )


@pytest.mark.parametrize("kind", [("mor", 6), ("cow", 8)], ids=["mor-v6", "cow-v8"])
def test_failed_clustering_leaves_the_table_readable(s: Any, kind: tuple[str, int]) -> None:
    tbl = create(s, kind)
    fill(s)
    with pytest.raises(hudilite.HudiliteError, match="simulated failure"):
        call(
            s,
            "run_clustering(table => 't', "
            "options => 'hudilite.internal.fail.point=after_file_write')",
        )
    ((T, state, groups, _),) = clusterings(tbl)
    assert (state, groups) == ("REQUESTED", 2)  # the plan stays, the attempt is undone
    assert not [p for p in tbl.state().view.files_of_instant(T)]
    assert len(live(tbl)) == 5
    assert ours(tbl) == theirs(tbl) == EXPECTED
    assert call(s, "show_clustering(table => 't')") == [(T, 2, "REQUESTED", "*")]
    assert call(s, "run_clustering(table => 't', op => 'execute')") == [(T, 2, "COMPLETED", "*")]
    assert ours(tbl) == theirs(tbl) == EXPECTED and len(live(tbl)) == 2
