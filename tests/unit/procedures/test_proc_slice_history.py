"""``show_file_slice_history`` (Hudi's ShowFileSliceHistoryProcedure) on a table written
without Spark: exact rows for a file group's writes, a clean, a rollback and a pending
write; the table is left as it was (hudi-rs reads the same rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.procedures import REGISTRY, _load_all
from hudilite.procedures.registry import ProcedureArgumentError, ProcedureContext, bind
from hudilite.services.clean import clean
from hudilite.services.rollback_completed import rollback_instant
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.timeline import TimelineWriter
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable

_load_all()
A = ("x", "a-0")
B = ("y", "b-0")


def call(name: str, **named: Any) -> list[tuple[Any, ...]]:
    """Run a procedure as CALL does, without Spark (no filter)."""
    spec = REGISTRY[name]
    ctx = ProcedureContext(None, None, "default", {}, name)  # type: ignore[arg-type]
    return spec.func(ctx, bind(spec, [], named))


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A v8 copy-on-write table: insert, two updates of group a-0, a clean keeping one
    commit, an update rolled back, then a pending commit."""
    t = MiniTable(Path(tmp_path_factory.mktemp("slice")) / "t", version=8, mor=False)
    t1 = t.write({A: [("k1", 1, "v1"), ("k2", 1, "v2")], B: [("k3", 1, "v3")]})
    t2 = t.write({A: [("k1", 2, "u1")]})
    t3 = t.write({A: [("k2", 2, "u2")]})
    cleaned = clean(t.state(), {"hoodie.cleaner.commits.retained": "1"})
    assert cleaned is not None
    t4 = t.write({A: [("k1", 3, "w1")]})
    rb = rollback_instant(t.state(), t4)
    pending = TimelineWriter(t.gw, t.config).create_requested(COMMIT)
    return {
        "t": t,
        "times": (t1, t2, t3, t4),
        "clean": cleaned.instant_time,
        "rollback": rb.rollback_instant,
        "pending": pending.requested_time,
    }


def _done(t: MiniTable, time: str) -> str | None:
    return t.state().timeline.completion_time(time)


def test_rows_of_a_file_group(table: dict[str, Any]) -> None:
    t = table["t"]
    t1, t2, t3, _ = table["times"]
    names = {time: f"a-0_0-1-0_{time}.parquet" for time in (t1, t2, t3)}
    before = sorted(e.name for e in t.gw.list_dir(".hoodie/timeline") if not e.is_dir)
    got = call("show_file_slice_history", path=t.path, file_name="a-0")
    # The pending commit, the rollback of t4, the clean, then t3, t2, t1 (newest first).
    assert [(r[0], r[2], r[4], r[8]) for r in got] == [
        (table["pending"], "commit", "REQUESTED", "UNKNOWN"),
        (table["rollback"], "rollback", "COMPLETED", "rollback"),
        (table["clean"], "clean", "COMPLETED", "clean"),
        (t3, "commit", "COMPLETED", "UPDATE"),
        (t2, "commit", "COMPLETED", "UPDATE"),
        (t1, "commit", "COMPLETED", "INSERT"),
    ]
    pending, rolled, cleaned, w3, w2, w1 = got
    # Pending: Hudi cannot know its files; the asked text is its file_name.
    assert pending == (
        table["pending"], None, "commit", "ACTIVE", "REQUESTED", "", "", "a-0", "UNKNOWN",
        -1, -1, -1, -1, -1, -1, "", True, "rollback", table["rollback"], -1, -1, -1, -1,
        None, False,
    )  # fmt: skip
    # Clean and rollback rows: file_name is the asked text, so they carry the deletion,
    # and the rollback wins over the clean (Hudi's map takes rollbacks last).
    assert rolled == (
        table["rollback"], _done(t, table["rollback"]), "rollback", "ACTIVE", "COMPLETED",
        "ALL_PARTITIONS", "", "a-0", "rollback", 0, 0, 0, 1, 0, 0, table["rollback"],
        True, "rollback", table["rollback"], 0, 0, 0, 0, None, False,
    )  # fmt: skip
    assert cleaned[:16] == (
        table["clean"], _done(t, table["clean"]), "clean", "ACTIVE", "COMPLETED",
        "ALL_PARTITIONS", "", "a-0", "clean", 0, 0, 0, 1, 0, 0, table["clean"],
    )  # fmt: skip
    # Write-stat rows: exact counts; their file names are not the asked text, so no
    # deletion is shown (Hudi keys deletions by the asked text).
    size = {n: t.gw.size(f"x/{n}") if t.gw.exists(f"x/{n}") else None for n in names.values()}
    assert w3[:16] == (
        t3, _done(t, t3), "commit", "ACTIVE", "COMPLETED", "x", "a-0", names[t3], "UPDATE",
        2, 0, 1, 0, size[names[t3]], size[names[t3]], t2,
    )  # fmt: skip
    assert w3[16:19] == (False, None, None) and w3[-2:] == (None, False)
    assert w2[5:13] == ("x", "a-0", names[t2], "UPDATE", 2, 0, 1, 0) and w2[15] == t1
    assert w1[5:13] == ("x", "a-0", names[t1], "INSERT", 2, 2, 0, 0) and w1[15] == "null"
    # A read-only procedure: the timeline and the rows read are unchanged.
    after = sorted(e.name for e in t.gw.list_dir(".hoodie/timeline") if not e.is_dir)
    assert after == before
    assert rows(hudi_rs_read(t.path), DATA) == [
        ("k1", 2, "u1", "x"), ("k2", 2, "u2", "x"), ("k3", 1, "v3", "y"),
    ]  # fmt: skip


def test_an_exact_file_name_carries_its_deletion(table: dict[str, Any]) -> None:
    t = table["t"]
    t1, _, _, _ = table["times"]
    name = f"a-0_0-1-0_{t1}.parquet"
    got = call("show_file_slice_history", path=t.path, file_name=name, partition="x")
    # The pending commit, the clean that deleted it, and its own insert.
    assert [(r[0], r[2], r[5], r[7], r[16], r[17], r[18]) for r in got] == [
        (table["pending"], "commit", "x", name, True, "clean", table["clean"]),
        (table["clean"], "clean", "x", name, True, "clean", table["clean"]),
        (t1, "commit", "x", name, True, "clean", table["clean"]),
    ]
    # Another partition: only the pending instant, which Hudi lists whatever is asked.
    assert [r[2] for r in call("show_file_slice_history", path=t.path, file_name=name,
                               partition="y")] == ["commit"]  # fmt: skip
    # limit bounds the instants looked at, then the rows.
    assert len(call("show_file_slice_history", path=t.path, file_name="a-0", limit=2)) == 2


def test_bad_arguments_name_the_value(table: dict[str, Any]) -> None:
    path = table["t"].path
    with pytest.raises(ProcedureArgumentError, match="limit must be positive, got 0"):
        call("show_file_slice_history", path=path, file_name="a-0", limit=0)
    with pytest.raises(ProcedureArgumentError, match="file_name names no file"):
        call("show_file_slice_history", path=path, file_name="  ")
    assert REGISTRY["show_file_slice_history"].read_only
