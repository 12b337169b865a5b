"""hudilite.merge against a plain-dict model, with hypothesis.

The model is the merge rule written the obvious way -- one record at a time, in
write order -- so the vectorised Arrow implementation has to agree with it on
every random sequence of batches, in both merge modes.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudilite.merge import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_ORDERING,
    MergeSpec,
    merge_file_group,
    precombine,
)
from hudilite.schema import CHANGED_COL, COMMIT_TIME_COL, DELETE_COL, RECORD_KEY_COL, SEQ_COL

# (key, ordering value or None, payload, delete flag)
Record = tuple[str, int | None, int, bool]

records = st.tuples(
    st.sampled_from("abcde"),
    st.none() | st.integers(-3, 3),  # a small range: ties are common
    st.integers(0, 1000),
    st.booleans(),
)
batches = st.lists(st.lists(records, max_size=8), min_size=1, max_size=5)
modes = st.sampled_from([COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING])
SETTINGS = settings(max_examples=200, deadline=None)


# --- the model ------------------------------------------------------------------------------


def newer_wins(mode: str, older: int | None, newer: int | None, newer_is_delete: bool) -> bool:
    """Does the later write replace the earlier one?"""
    if mode == COMMIT_TIME_ORDERING:
        return True
    if newer_is_delete and newer is None:  # natural-order delete
        return True
    older_greater = older is not None and (newer is None or older > newer)
    return not older_greater


def model_precombine(mode: str, batch: list[Record]) -> dict[str, tuple[int | None, int, bool]]:
    winners: dict[str, tuple[int | None, int, bool]] = {}
    for key, order, payload, delete in batch:
        if key not in winners or newer_wins(mode, winners[key][0], order, delete):
            winners[key] = (order, payload, delete)
    return winners


def model_merge(
    mode: str, state: dict[str, tuple[int | None, int, str]], batch: list[Record], commit: str
) -> tuple[int, int, int, int]:
    """Apply one batch to ``state`` (key -> ordering, payload, commit); return the counts."""
    inserts = updates = deletes = 0
    before = len(state)
    for key, (order, payload, delete) in model_precombine(mode, batch).items():
        if key in state:
            if newer_wins(mode, state[key][0], order, delete):
                if delete:
                    del state[key]
                    deletes += 1
                else:
                    state[key] = (order, payload, commit)
                    updates += 1
        elif not delete:
            state[key] = (order, payload, commit)
            inserts += 1
    return inserts, updates, deletes, before - updates - deletes


# --- the implementation under test ----------------------------------------------------------


def to_table(batch: list[Record]) -> pa.Table:
    return pa.table(
        {
            RECORD_KEY_COL: pa.array([r[0] for r in batch], pa.string()),
            "_hoodie_partition_path": pa.array([""] * len(batch), pa.string()),
            "ts": pa.array([r[1] for r in batch], pa.int64()),
            "payload": pa.array([r[2] for r in batch], pa.int64()),
            SEQ_COL: pa.array(range(len(batch)), pa.int64()),
            DELETE_COL: pa.array([r[3] for r in batch], pa.bool_()),
        }
    )


def stamp(table: pa.Table, commit: str) -> pa.Table:
    """What the writer does with a merge result: stamp the changed rows' commit time."""
    changed = table[CHANGED_COL]
    stamped = pc.if_else(changed, pa.scalar(commit), table[COMMIT_TIME_COL])
    table = table.set_column(table.column_names.index(COMMIT_TIME_COL), COMMIT_TIME_COL, stamped)
    return table.drop_columns([CHANGED_COL])


def as_state(table: pa.Table) -> dict[str, tuple[Any, Any, Any]]:
    rows = table.to_pylist()
    state = {r[RECORD_KEY_COL]: (r["ts"], r["payload"], r[COMMIT_TIME_COL]) for r in rows}
    assert len(state) == len(rows), "keys must stay unique"
    return state


# --- properties -----------------------------------------------------------------------------


@SETTINGS
@given(mode=modes, batch=st.lists(records, max_size=12))
def test_precombine_matches_model(mode: str, batch: list[Record]) -> None:
    out = precombine(MergeSpec(mode, "ts"), to_table(batch))
    expected = model_precombine(mode, batch)
    got = {r[RECORD_KEY_COL]: (r["ts"], r["payload"], r[DELETE_COL]) for r in out.to_pylist()}
    assert got == expected
    assert out[RECORD_KEY_COL].to_pylist() == sorted(expected)


@SETTINGS
@given(mode=modes, batch=st.lists(records, max_size=12), data=st.data())
def test_precombine_ignores_row_order_given_seq(mode: str, batch: list[Record], data: Any) -> None:
    table = to_table(batch)
    order = data.draw(st.permutations(range(len(batch))))
    shuffled = table.take(pa.array(order, pa.int64()))
    spec = MergeSpec(mode, "ts")
    assert precombine(spec, shuffled).equals(precombine(spec, table))


@SETTINGS
@given(mode=modes, history=batches)
def test_batches_merged_one_by_one_match_model(mode: str, history: list[list[Record]]) -> None:
    spec = MergeSpec(mode, "ts")
    state: dict[str, tuple[int | None, int, str]] = {}
    table: pa.Table | None = None
    for number, batch in enumerate(history):
        commit = f"c{number}"
        expected_counts = model_merge(mode, state, batch, commit)
        previous = [] if table is None else table[RECORD_KEY_COL].to_pylist()
        outcome = merge_file_group(spec, table, precombine(spec, to_table(batch)))
        got_counts = (outcome.inserts, outcome.updates, outcome.deletes, outcome.unchanged_rows)
        assert got_counts == expected_counts
        table = stamp(outcome.table, commit)
        assert as_state(table) == state
        # Layout: surviving base rows keep their order, inserts come after them.
        keys = table[RECORD_KEY_COL].to_pylist()
        survivors = [k for k in previous if k in state]
        assert keys[: len(survivors)] == survivors
        assert set(keys[len(survivors) :]) == set(state) - set(previous)


@SETTINGS
@given(mode=modes, history=batches)
def test_merge_precombines_raw_batches_itself(mode: str, history: list[list[Record]]) -> None:
    spec = MergeSpec(mode, "ts")
    table: pa.Table | None = None
    for batch in history:
        raw = merge_file_group(spec, table, to_table(batch))
        combined = merge_file_group(spec, table, precombine(spec, to_table(batch)))
        # Inserts follow incoming order, which precombine sorts by key: compare as sets.
        assert sorted(raw.table.to_pylist(), key=repr) == sorted(
            combined.table.to_pylist(), key=repr
        )
        assert raw.inserts == combined.inserts and raw.updates == combined.updates
        table = stamp(raw.table, "c")
