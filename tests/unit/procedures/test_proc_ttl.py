"""``run_ttl`` (Hudi's RunTTLProcedure) on a partitioned copy-on-write table written without
Spark: which partitions each strategy expires, the DELETE_PARTITION replacecommit, the
options that bound it, and what hudi-rs reads afterwards. The TTL run's clock is moved a
day ahead (the strategies compare instant times)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from hudilite.procedures import REGISTRY, _load_all
from hudilite.procedures.registry import ProcedureArgumentError, ProcedureContext, bind
from hudilite.timeline.instant import REPLACE_COMMIT
from hudilite.timeline.instant_time import plus_millis
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable

_load_all()
ttl = importlib.import_module("hudilite.procedures.ttl")
DAY_MS = 24 * 3600 * 1000


def call(**named: Any) -> list[tuple[Any, ...]]:
    spec = REGISTRY["run_ttl"]
    ctx = ProcedureContext(None, None, "default", {}, "run_ttl")  # type: ignore[arg-type]
    return spec.func(ctx, bind(spec, [], named))


def _table(root: Path) -> tuple[MiniTable, list[str]]:
    """x and y created at t1, z at t2, x rewritten at t3."""
    t = MiniTable(root, mor=False)
    t1 = t.write({("x", "x-0"): [("k1", 1, "a")], ("y", "y-0"): [("k2", 1, "b")]})
    t2 = t.write({("z", "z-0"): [("k3", 1, "c")]})
    t3 = t.write({("x", "x-0"): [("k1", 2, "a2")]})
    assert plus_millis(t1, 1) < t2 < t3
    return t, [t1, t2, t3]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The TTL run's instant time, set by the test."""
    now: list[str] = []
    monkeypatch.setattr(ttl, "ttl_instant_time", lambda state: now[0])
    return now


def _replacecommits(t: MiniTable) -> list[dict[str, Any]]:
    timeline = t.state().timeline
    return [
        {
            "op": (meta := timeline.commit_metadata(i)).operation_type,
            "replaced": meta.partition_to_replace_file_ids,
        }
        for i in timeline.completed()
        if i.action == REPLACE_COMMIT
    ]


def test_keep_by_time_expires_partitions_not_written_for_a_day(tmp_path: Path, clock) -> None:
    t, (t1, _, _) = _table(tmp_path / "t")
    clock.append(plus_millis(t1, DAY_MS + 1))  # one day and 1 ms after t1
    assert call(path=t.path, retain_days=1) == [("y",)]
    assert _replacecommits(t) == [{"op": "DELETE_PARTITION", "replaced": {"y": ["y-0"]}}]
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 2, "a2", "x"), ("k3", 1, "c", "z")]
    # y has no live file group any more: a second run finds nothing and writes nothing.
    names = sorted(e.name for e in t.gw.list_dir(".hoodie") if not e.is_dir)
    assert call(path=t.path, retain_days=1) == []
    assert sorted(e.name for e in t.gw.list_dir(".hoodie") if not e.is_dir) == names


def test_keep_by_creation_time_and_the_bounds(tmp_path: Path, clock) -> None:
    t, (_, t2, _) = _table(tmp_path / "t")
    clock.append(plus_millis(t2, DAY_MS + 1))
    # Capped at one partition per run, restricted to a selection, then all.
    max1 = "hoodie.partition.ttl.strategy.max.delete.partitions=1"
    assert call(path=t.path, ttl_policy="keep_by_creation_time", retain_days=1, options=max1) == [
        ("x",)
    ]
    sel = "hoodie.partition.ttl.strategy.partition.selected=z"
    assert call(path=t.path, ttl_policy="KEEP_BY_CREATION_TIME", retain_days=1, options=sel) == [
        ("z",)
    ]
    # retain_days 2: nothing has expired yet.
    assert call(path=t.path, ttl_policy="KEEP_BY_CREATION_TIME", retain_days=2) == []
    strategy = "hoodie.partition.ttl.strategy.class=" + ttl._STRATEGY_PACKAGE
    assert call(path=t.path, retain_days=1, options=strategy + "KeepByCreationTimeStrategy") == [
        ("y",)
    ]
    assert [r["replaced"] for r in _replacecommits(t)] == [
        {"x": ["x-0"]},
        {"z": ["z-0"]},
        {"y": ["y-0"]},
    ]
    assert hudi_rs_read(t.path).num_rows == 0


def test_nothing_expires_without_retain_days_or_partitions(tmp_path: Path, clock) -> None:
    t, (_, _, t3) = _table(tmp_path / "t")
    clock.append(plus_millis(t3, 10 * DAY_MS))
    assert call(path=t.path) == []  # days.retain defaults to -1
    assert call(path=t.path, retain_days=0) == []
    flat = MiniTable(tmp_path / "flat", mor=False)
    assert call(path=flat.path, retain_days=1) == []
    assert _replacecommits(t) == []


def test_bad_arguments_name_the_value(tmp_path: Path, clock) -> None:
    t, (t1, _, _) = _table(tmp_path / "t")
    clock.append(plus_millis(t1, 10 * DAY_MS))
    with pytest.raises(ProcedureArgumentError, match="unknown ttl_policy 'KEEP_FOREVER'"):
        call(path=t.path, ttl_policy="KEEP_FOREVER", retain_days=1)
    with pytest.raises(ProcedureArgumentError, match=r"strategy\.class 'com\.acme\.Ttl'"):
        call(path=t.path, retain_days=1, options="hoodie.partition.ttl.strategy.class=com.acme.Ttl")
    with pytest.raises(ProcedureArgumentError, match="'oops' is not key=value"):
        call(path=t.path, retain_days=1, options="oops")
    assert _replacecommits(t) == []
