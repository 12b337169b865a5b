"""The inline clean's "nothing to clean" memo (``may_clean``): after a plan found nothing,
later writes skip planning only while nothing can have become deletable. Checked against
the full planner after every step of seeded random histories (new file groups, updates,
log appends, replacecommits, savepoints created and deleted, rollbacks, cleans)."""

from __future__ import annotations

import contextlib
import importlib
import random

import pytest

from hudilite.errors import HudiliteError
from hudilite.services._common import resolve_options
from hudilite.services.clean import (
    CleanPlan,
    clean,
    forget_nothing_to_clean,
    may_clean,
    plan_clean,
)
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import create_savepoint, delete_savepoint, list_savepoints
from hudilite.tablestate.state import TableState
from tests.unit.services.test_compaction_plan import MiniTable

# The module (``hudilite.services.clean`` is also the name of the function it exports).
clean_mod = importlib.import_module("hudilite.services.clean")
RETAIN2 = {"hoodie.cleaner.commits.retained": "2"}
VERSIONS2 = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
             "hoodie.cleaner.fileversions.retained": "2"}  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_memo():
    forget_nothing_to_clean()
    yield
    forget_nothing_to_clean()


def full_plan(state: TableState, opts: dict[str, str]) -> CleanPlan | None:
    """What the cleaner deletes now, planned in full without touching the memo."""
    policy, versions, earliest = clean_mod._trigger(state, resolve_options(state, opts), None)
    if policy != clean_mod.KEEP_LATEST_FILE_VERSIONS and earliest is None:
        return None
    return clean_mod._plan(state, policy, versions, earliest)


def test_appends_skip_the_plan_and_updates_bring_it_back(tmp_path):
    t = MiniTable(tmp_path / "t", mor=False)
    for i in range(4):  # four commits, each a new file group
        t.write({("x", f"n{i}-0"): [(f"k{i}", 0, "v")]})
    assert may_clean(t.state(), RETAIN2)  # nothing remembered yet: plan
    assert plan_clean(t.state(), RETAIN2) is None  # one slice per group
    for i in range(4, 9):
        t.write({("x", f"n{i}-0"): [(f"k{i}", 0, "v")]})
        assert not may_clean(t.state(), RETAIN2)  # only new file groups since
        assert full_plan(t.state(), RETAIN2) is None
    # Updates of one group: the cleaner plans again, and deletes what the full plan does.
    deleted: list[str] = []
    for i in range(4):
        t.write({("x", "n0-0"): [("k0", i + 1, "w")]})
        state = t.state()
        expected = full_plan(state, RETAIN2)
        assert may_clean(state, RETAIN2)
        result = clean(state, RETAIN2)
        if expected is None:
            assert result is None
        else:
            assert result is not None
            assert sorted(result.files_deleted) == sorted(
                f for fs in expected.files.values() for f in fs
            )
            deleted += result.files_deleted
    assert deleted  # the oldest slices of n0 went
    assert all(not t.gw.exists(f) for f in deleted)


def test_a_deleted_savepoint_makes_the_cleaner_plan(tmp_path):
    t = MiniTable(tmp_path / "t", mor=False)
    first = t.write({("x", "a-0"): [("k1", 0, "v0")]})
    t.write({("x", "a-0"): [("k1", 1, "v1")]})
    create_savepoint(t.state(), first)
    for i in range(3):
        t.write({("x", "a-0"): [("k1", i + 2, f"v{i + 2}")]})
    for i in range(3):
        t.write({("x", f"n{i}-0"): [(f"n{i}", 0, "v")]})
    state = t.state()
    plan = plan_clean(state, RETAIN2)
    pinned = [f for f in t.files("a-0_") if f.endswith(f"_{first}.parquet")]
    assert plan is not None and not any(f in pinned for fs in plan.files.values() for f in fs)
    clean(state, RETAIN2)
    t.write({("x", "n8-0"): [("n8", 0, "v")]})
    assert may_clean(t.state(), RETAIN2)  # the last plan deleted files: plan again
    assert clean(t.state(), RETAIN2) is None  # nothing: remembered
    t.write({("x", "n9-0"): [("n9", 0, "v")]})
    assert not may_clean(t.state(), RETAIN2)  # the savepoint still pins the first slice
    assert delete_savepoint(t.state(), first)
    state = t.state()
    assert may_clean(state, RETAIN2)
    result = clean(state, RETAIN2)
    assert result is not None and result.files_deleted == tuple(pinned)


_OPS = ("new", "new", "update", "update2", "replace", "savepoint", "unsavepoint", "rollback")


@pytest.mark.parametrize("seed", range(12))
def test_skipped_plans_would_have_deleted_nothing(tmp_path, seed):
    """Random histories, the inline clean run as after a write: whenever ``may_clean``
    says no, the full planner finds nothing; whenever it plans, it deletes what the full
    planner names."""
    rng = random.Random(seed)
    mor = seed % 3 == 0
    opts = VERSIONS2 if seed % 4 == 1 else RETAIN2
    t = MiniTable(tmp_path / "t", mor=mor)
    groups: list[tuple[str, str]] = []
    skipped = planned = 0
    for step in range(28):
        op = rng.choice(_OPS) if groups else "new"
        state = t.state()
        if op == "new" or (op in ("update", "update2", "replace") and not groups):
            key = ("x" if rng.random() < 0.7 else "y", f"g{step}-0")
            groups.append(key)
            t.write({key: [(f"k{step}", step, "v")]})
        elif op == "update":
            key = rng.choice(groups)
            t.write({key: [(f"u{step}", step, "u")]})
        elif op == "update2":
            picked = rng.sample(groups, min(2, len(groups)))
            t.write({k: [(f"u{step}{k[1]}", step, "u")] for k in picked})
        elif op == "replace":
            old = rng.choice([g for g in groups if g[0] == "x"] or groups)
            key = (old[0], f"r{step}-0")
            groups.remove(old)
            groups.append(key)
            t.write({key: [(f"r{step}", step, "r")]}, replace={old[0]: [old[1]]})
        elif op == "savepoint":
            saved = {sp.instant_time for sp in list_savepoints(state)}
            last = state.timeline.last_commit()
            if last is not None and last.requested_time not in saved:
                # Refused when older than what the last clean kept (as Hudi does).
                with contextlib.suppress(HudiliteError):
                    create_savepoint(state)
        elif op == "unsavepoint":
            saved = list_savepoints(state)
            if saved:
                delete_savepoint(state, rng.choice(saved).instant_time)
        elif op == "rollback":
            last = state.timeline.last_commit()
            if last is not None and not list_savepoints(state) and step % 2:
                rollback_instant(state, last.requested_time)
        state = t.state()
        expected = full_plan(state, opts)
        if not may_clean(state, opts):
            skipped += 1
            assert expected is None, f"step {step} ({op}) skipped a clean of {expected}"
            continue
        planned += 1
        result = clean(state, opts)
        want = sorted(f for fs in (expected.files.values() if expected else ()) for f in fs)
        got = sorted(result.files_deleted) if result is not None else []
        assert got == want, f"step {step} ({op})"
    assert planned
    del skipped  # how many skipped depends on the history; the asserts above are the test


def test_max_commits_since_the_last_clean_trigger_the_plan(tmp_path):
    """Hudi's NUM_COMMITS trigger: ``hoodie.clean.max.commits`` commits after the last
    clean's latest commit before the inline clean plans again (default 1: every commit)."""
    opts = {**RETAIN2, "hoodie.clean.max.commits": "3"}
    t = MiniTable(tmp_path / "t", mor=False)
    for i in range(4):
        t.write({("x", "a-0"): [("k1", i, f"v{i}")]})
    assert may_clean(t.state(), opts)  # 4 commits, no clean yet
    assert clean(t.state(), opts) is not None
    for i in range(4, 6):
        t.write({("x", "a-0"): [("k1", i, f"v{i}")]})
        assert not may_clean(t.state(), opts)  # 1, then 2 commits since the clean
        assert full_plan(t.state(), opts) is not None  # (there is something to delete)
        assert may_clean(t.state(), RETAIN2)  # the default plans after every commit
    t.write({("x", "a-0"): [("k1", 6, "v6")]})
    assert may_clean(t.state(), opts)
    result = clean(t.state(), opts)
    assert result is not None and len(result.files_deleted) == 3
