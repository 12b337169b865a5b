"""Table's grouped methods (``t.services``, ``t.savepoints``, ``t.alter``, ``t.inspect``)
and their flat aliases reach one implementation (issue 28). No Spark session: a
``Table`` handle on an engine-built table runs everything but the Spark jobs, whose entry
points are replaced by recorders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.table import groups
from hudilite.table.api import Table
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable

#: (flat name, group, the group's name, arguments, the engine function the group calls)
ALIASES: list[tuple[str, str, str, tuple[Any, ...], dict[str, Any], str]] = [
    ("compact", "services", "compact", (), {"instant_time": "1"}, "run_compaction"),
    (
        "schedule_compaction",
        "services",
        "schedule_compaction",
        (),
        {"force": True},
        "schedule_compaction",
    ),
    ("cluster", "services", "cluster", (), {"schedule": False}, "run_clustering"),
    ("schedule_clustering", "services", "schedule_clustering", (), {}, "schedule_clustering"),
    ("clean", "services", "clean", (), {}, "clean"),
    ("archive", "services", "archive", (), {}, "archive"),
    ("rollback", "services", "rollback", ("2",), {}, "rollback_instant"),
    ("upgrade", "services", "upgrade", (9,), {}, "upgrade_table"),
    ("downgrade", "services", "downgrade", (6,), {}, "downgrade_table"),
    ("savepoint", "savepoints", "create", ("3",), {"user": "u"}, "create_savepoint"),
    ("savepoints", "savepoints", "list", (), {}, "list_savepoints"),
    ("delete_savepoint", "savepoints", "delete", ("3",), {}, "delete_savepoint"),
    ("restore", "savepoints", "restore", ("3",), {}, "restore"),
    ("add_columns", "alter", "add_columns", ([],), {}, "add_columns"),
    (
        "set_properties",
        "alter",
        "set_properties",
        ({"hoodie.parquet.small.file.limit": "0"},),
        {},
        "set_properties",
    ),
    (
        "unset_properties",
        "alter",
        "unset_properties",
        (["hoodie.parquet.small.file.limit"],),
        {},
        "unset_properties",
    ),
    ("rename", "alter", "rename", ("n",), {}, "rename_table"),
    ("archived_timeline", "inspect", "archived_timeline", (), {}, "archived_timeline"),
]


def _table(root: Path) -> tuple[Table, MiniTable, list[str]]:
    mini = MiniTable(root, version=8, mor=False)
    times = [mini.write({("x", "a-0"): [("k1", i, f"v{i}")]}) for i in range(2)]
    return Table(None, mini.gw), mini, times  # type: ignore[arg-type]


@pytest.fixture
def table(tmp_path) -> tuple[Table, MiniTable, list[str]]:
    return _table(tmp_path / "t")


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[Table, MiniTable, list[str]]:
    # The calls below reach recorders only: one table serves them all.
    return _table(tmp_path_factory.mktemp("groups") / "t")


@pytest.mark.parametrize("flat,group,name,args,kwargs,target", ALIASES, ids=[a[0] for a in ALIASES])
def test_flat_and_grouped_names_call_one_implementation(
    shared, monkeypatch, flat, group, name, args, kwargs, target
):
    t, _, _ = shared
    calls: list[tuple[Any, ...]] = []
    done = object()

    def record(*given: Any, **named: Any) -> Any:
        # The state (loaded per call) and the Spark session differ by identity only.
        shown = [a if isinstance(a, str | int | list | dict) else type(a).__name__ for a in given]
        calls.append((tuple(shown), {k: v for k, v in named.items() if k != "runner"}))
        return done

    monkeypatch.setattr(groups, target, record)
    expected = None if group == "alter" and name != "add_columns" else done  # ALTERs: None
    assert getattr(t, flat)(*args, **kwargs) is expected
    assert getattr(getattr(t, group), name)(*args, **kwargs) is expected
    assert len(calls) == 2 and calls[0] == calls[1]
    assert "TableState" in calls[0][0]  # the table's state, loaded for the call


def test_savepoints_through_both_names(table):
    t, mini, times = table
    first = t.savepoint(times[0], user="u", comments="c")
    second = t.savepoints.create(times[1])
    assert (first.instant_time, first.user, first.comments) == (times[0], "u", "c")
    assert t.savepoints() == t.savepoints.list() == [first, second]
    assert t.savepoints.delete(times[0]) is True
    assert t.delete_savepoint(times[0]) is False  # already gone, by the other name
    assert [s.instant_time for s in t.savepoints()] == [times[1]]
    assert repr(t.savepoints) == f"Savepoints({mini.path!r})"


def test_inspect_and_alter_through_both_names(table):
    t, mini, times = table
    assert t.timeline() == t.inspect.timeline()
    assert [i.requested_time for i in t.inspect.timeline()] == times
    t.alter.set_properties({"hoodie.parquet.small.file.limit": "0"})
    assert t.properties() == t.inspect.properties()
    assert t.properties()["hoodie.parquet.small.file.limit"] == "0"
    t.unset_properties(["hoodie.parquet.small.file.limit"])
    assert "hoodie.parquet.small.file.limit" not in t.inspect.properties()
    t.alter.rename("trips")
    assert t.config.name == "trips" and t.properties()["hoodie.table.name"] == "trips"
    assert t.inspect.archived_timeline() == t.archived_timeline() == []
    assert rows(hudi_rs_read(mini.path), DATA) == mini.read()  # renamed, still read alike
