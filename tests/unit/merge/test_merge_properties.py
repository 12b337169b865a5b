"""hudilite.merge against a plain-dict model, with hypothesis.

The model is the merge rule written the obvious way -- one record at a time, in
write order -- so the vectorised Arrow implementation has to agree with it on
every random sequence of batches, in both merge modes, with and without partial
update and sequence groups, and for changelogs.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudilite.merge import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_ORDERING,
    MergeSpec,
    changelog_rows,
    merge_file_group,
    parse_sequence_groups,
    precombine,
)
from hudilite.schema import (
    CHANGED_COL,
    COMMIT_TIME_COL,
    DELETE_COL,
    OPERATION_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)

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
        # Layout: base rows the batch did not change keep their order and come first; the
        # rows the batch wrote (updates, then inserts) follow them.
        keys = table[RECORD_KEY_COL].to_pylist()
        changed = outcome.table[CHANGED_COL].to_pylist()
        n_kept = changed.count(False)
        assert changed == [False] * n_kept + [True] * (len(keys) - n_kept)
        kept = keys[:n_kept]
        assert kept == [k for k in previous if k in kept]
        assert set(keys[n_kept:]) | set(kept) == set(state)


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


# === partial update, sequence groups, changelog ============================================
#
# The general model: a state is a dict of column values plus a delete flag; ``combine``
# applies one newer record to it exactly as the module docstring of hudilite.merge.merger
# says, one column at a time.

COLS = ("ts", "x", "y", "gts", "gv")  # ts: record ordering; gts orders the group (gts, gv)
GROUP = "gts:gv"

# (key, ts, x, y, gts, gv, delete)
WideRecord = tuple[str, int | None, int | None, int | None, int | None, int | None, bool]
small = st.none() | st.integers(-2, 2)
wide_records = st.tuples(
    st.sampled_from("abc"),
    small,
    st.none() | st.integers(0, 3),
    st.none() | st.integers(0, 3),
    small,
    st.none() | st.integers(0, 3),
    st.booleans(),
)
wide_batches = st.lists(st.lists(wide_records, max_size=8), min_size=1, max_size=4)


@st.composite
def general_specs(draw: Any) -> MergeSpec:
    mode = draw(modes)
    return MergeSpec(
        mode,
        "ts",
        partial_update=draw(st.booleans()),
        sequence_groups=parse_sequence_groups(GROUP) if draw(st.booleans()) else (),
    )


State = dict[str, Any]  # COLS + "del"


def as_record(r: WideRecord) -> State:
    return {**dict(zip(COLS, r[1:6], strict=True)), "del": r[6]}


def combine(spec: MergeSpec, old: State | None, new: State) -> tuple[State | None, bool]:
    """The state after ``new``, and whether ``new`` changed it."""
    groups = [(g.ordering_field, g.all_columns) for g in spec.sequence_groups]
    grouped = {c for _, cols in groups for c in cols}
    plain = [c for c in COLS if c not in grouped]

    def fresh(rec: State) -> State:
        out = dict(rec)
        for order, cols in groups:
            if rec[order] is None:
                out.update(dict.fromkeys(cols))
        return out

    if old is None:
        return (dict(new) if new["del"] else fresh(new)), True
    new_wins = newer_wins(spec.mode, old["ts"], new["ts"], new["del"])
    if new_wins and new["del"]:
        return dict(new), True
    if new_wins and old["del"]:
        return fresh(new), True
    if not new_wins and (old["del"] or new["del"]):
        return old, False
    winner, loser = (new, old) if new_wins else (old, new)
    out: State = {"del": False}
    touched = new_wins
    for c in plain:
        out[c] = winner[c]
        if spec.partial_update and winner[c] is None:
            out[c] = loser[c]
            touched = touched or (loser is new and new[c] is not None)
    for order, cols in groups:
        takes = new[order] is not None and (old[order] is None or new[order] >= old[order])
        for c in cols:
            out[c] = new[c] if takes else old[c]
        touched = touched or takes
    return out, touched


def model_fold(spec: MergeSpec, batch: list[WideRecord]) -> dict[str, State]:
    states: dict[str, State] = {}
    for r in batch:
        state, _ = combine(spec, states.get(r[0]), as_record(r))
        assert state is not None
        states[r[0]] = state
    return states


def wide_table(batch: list[WideRecord]) -> pa.Table:
    return pa.table(
        {
            RECORD_KEY_COL: pa.array([r[0] for r in batch], pa.string()),
            "_hoodie_partition_path": pa.array([""] * len(batch), pa.string()),
            **{c: pa.array([r[i + 1] for r in batch], pa.int64()) for i, c in enumerate(COLS)},
            SEQ_COL: pa.array(range(len(batch)), pa.int64()),
            DELETE_COL: pa.array([r[6] for r in batch], pa.bool_()),
        }
    )


def wide_state(row: dict[str, Any]) -> State:
    return {**{c: row[c] for c in COLS}, "del": bool(row.get(DELETE_COL) or False)}


@SETTINGS
@given(spec=general_specs(), batch=st.lists(wide_records, max_size=12))
def test_general_precombine_matches_model(spec: MergeSpec, batch: list[WideRecord]) -> None:
    out = precombine(spec, wide_table(batch))
    expected = model_fold(spec, batch)
    assert {r[RECORD_KEY_COL]: wide_state(r) for r in out.to_pylist()} == expected
    assert out[RECORD_KEY_COL].to_pylist() == sorted(expected)
    # A key that ends deleted comes back as its delete record, as written.
    for r in out.to_pylist():
        if r[DELETE_COL]:
            assert (r[RECORD_KEY_COL], *(r[c] for c in COLS), True) in batch


@SETTINGS
@given(spec=general_specs(), history=wide_batches)
def test_general_batches_merged_one_by_one_match_model(
    spec: MergeSpec, history: list[list[WideRecord]]
) -> None:
    """Each batch is precombined, then combined with the stored rows (two levels, as Hudi)."""
    stored: dict[str, State] = {}
    table: pa.Table | None = None
    for number, batch in enumerate(history):
        commit = f"c{number}"
        inserts = updates = deletes = 0
        changed_keys = set()
        for key, record in model_fold(spec, batch).items():
            if key not in stored:
                if not record["del"]:
                    stored[key] = record
                    inserts += 1
                    changed_keys.add(key)
                continue
            state, touched = combine(spec, stored[key], record)
            assert state is not None
            if state["del"]:
                del stored[key]
                deletes += 1
            elif touched:
                stored[key] = state
                updates += 1
                changed_keys.add(key)
        before = 0 if table is None else table.num_rows
        previous = {} if table is None else as_commits(table)
        outcome = merge_file_group(spec, table, precombine(spec, wide_table(batch)))
        assert (outcome.inserts, outcome.updates, outcome.deletes, outcome.unchanged_rows) == (
            inserts,
            updates,
            deletes,
            before - updates - deletes,
        )
        table = stamp(outcome.table, commit)
        rows = table.to_pylist()
        assert {r[RECORD_KEY_COL]: wide_state(r) for r in rows} == stored
        assert len(rows) == len(stored)
        # Untouched rows keep their commit time; changed rows carry this commit's.
        for key, committed in as_commits(table).items():
            assert committed == (commit if key in changed_keys else previous[key])


def as_commits(table: pa.Table) -> dict[str, str]:
    return {r[RECORD_KEY_COL]: r[COMMIT_TIME_COL] for r in table.to_pylist()}


def model_changelog(
    spec: MergeSpec, stored: dict[str, State], batch: list[WideRecord]
) -> list[tuple[str, str, State]]:
    states: dict[str, State | None] = dict(stored)
    events: dict[str, list[tuple[str, str, State]]] = {}
    for r in batch:
        key = r[0]
        old = states.get(key)
        new, touched = combine(spec, old, as_record(r))
        states[key] = new
        was = old is not None and not old["del"]
        now = new is not None and not new["del"]
        out = events.setdefault(key, [])
        assert new is not None
        if was and now and touched:
            assert old is not None
            out += [("-U", key, old), ("U", key, new)]
        elif not was and now:
            out.append(("I", key, new))
        elif was and not now:
            assert old is not None
            out.append(("D", key, old))
    return [e for key in sorted(events) for e in events[key]]


def stored_table(stored: dict[str, State]) -> pa.Table:
    keys = sorted(stored)
    return pa.table(
        {
            COMMIT_TIME_COL: pa.array(["c0"] * len(keys), pa.string()),
            "_hoodie_commit_seqno": pa.array(["s"] * len(keys), pa.string()),
            RECORD_KEY_COL: pa.array(keys, pa.string()),
            "_hoodie_partition_path": pa.array([""] * len(keys), pa.string()),
            "_hoodie_file_name": pa.array(["f"] * len(keys), pa.string()),
            **{c: pa.array([stored[k][c] for k in keys], pa.int64()) for c in COLS},
        }
    )


stored_states = st.dictionaries(
    st.sampled_from("abc"),
    st.tuples(*[small] * 5).map(lambda t: {**dict(zip(COLS, t, strict=True)), "del": False}),
)


@SETTINGS
@given(spec=general_specs(), stored=stored_states, batch=st.lists(wide_records, max_size=10))
def test_changelog_rows_match_record_by_record_model(
    spec: MergeSpec, stored: dict[str, State], batch: list[WideRecord]
) -> None:
    base = stored_table(stored) if stored else None
    out = changelog_rows(spec, base, wide_table(batch))
    got = [
        (r[OPERATION_COL], r[RECORD_KEY_COL], {**{c: r[c] for c in COLS}, "del": False})
        for r in out.to_pylist()
    ]
    expected = [
        (op, key, {**state, "del": False})
        for op, key, state in model_changelog(spec, stored, batch)
    ]
    assert got == expected
    # The record that caused each change, in write order within a key.
    for key in {k for _, k, _ in got}:
        seqs = [r[SEQ_COL] for r in out.to_pylist() if r[RECORD_KEY_COL] == key]
        assert seqs == sorted(seqs)


@SETTINGS
@given(mode=modes, stored=stored_states, batch=st.lists(wide_records, max_size=10))
def test_changelog_ends_where_merge_file_group_ends(
    mode: str, stored: dict[str, State], batch: list[WideRecord]
) -> None:
    """Without partial update or groups, replaying the changelog gives the merged file.

    Deletes carry an ordering value here: a natural-order delete followed by a record of
    its key is the documented exception (test_merge.test_changelog_natural_delete_then_record).
    """
    spec = MergeSpec(mode, "ts")
    batch = [(*r[:1], 0 if r[6] and r[1] is None else r[1], *r[2:]) for r in batch]
    base = stored_table(stored) if stored else None
    replay = {k: {c: v[c] for c in COLS} for k, v in stored.items()}
    for r in changelog_rows(spec, base, wide_table(batch)).to_pylist():
        if r[OPERATION_COL] in ("I", "U"):
            replay[r[RECORD_KEY_COL]] = {c: r[c] for c in COLS}
        elif r[OPERATION_COL] == "D":
            del replay[r[RECORD_KEY_COL]]
    merged = merge_file_group(spec, base, precombine(spec, wide_table(batch))).table
    assert {r[RECORD_KEY_COL]: {c: r[c] for c in COLS} for r in merged.to_pylist()} == replay


# --- three writers of one wide table ---------------------------------------------------------
#
# A writes only (id, name), B only (id, age), C only (id, sex); the other columns of their
# rows are null. Their rows arrive interleaved in any order and are cut into batches at
# random; every batch is precombined and merged into the stored rows. The table must end as
# the left join on id of each writer's latest value.

WRITERS = {"A": "name", "B": "age", "C": "sex"}


@st.composite
def writer_rows(draw: Any, one_per_writer: bool = False) -> list[tuple[str, int, int, int]]:
    """(writer, id, value, ts) in arrival order."""
    if one_per_writer:
        pairs = draw(
            st.lists(st.tuples(st.sampled_from("ABC"), st.integers(1, 4)), unique=True, max_size=12)
        )
    else:
        pairs = draw(st.lists(st.tuples(st.sampled_from("ABC"), st.integers(1, 4)), max_size=16))
    return [
        (w, i, draw(st.integers(0, 99)), draw(st.integers(0, 5)))
        for w, i in draw(st.permutations(pairs))
    ]


def writer_table(rows: list[tuple[str, int, int, int]], grouped: bool) -> pa.Table:
    data: dict[str, Any] = {
        RECORD_KEY_COL: pa.array([str(r[1]) for r in rows], pa.string()),
        "_hoodie_partition_path": pa.array([""] * len(rows), pa.string()),
        "id": pa.array([r[1] for r in rows], pa.int64()),
        "ts": pa.array([r[3] for r in rows], pa.int64()),
    }
    for writer, column in WRITERS.items():
        data[column] = pa.array([r[2] if r[0] == writer else None for r in rows], pa.int64())
        if grouped:
            data[f"ts_{column}"] = pa.array(
                [r[3] if r[0] == writer else None for r in rows], pa.int64()
            )
    data[SEQ_COL] = pa.array(range(len(rows)), pa.int64())
    return pa.table(data)


def write_in_batches(
    spec: MergeSpec, table: pa.Table, cuts: list[int]
) -> dict[int, tuple[Any, ...]]:
    stored: pa.Table | None = None
    bounds = sorted({0, table.num_rows, *(c for c in cuts if c < table.num_rows)})
    for start, end in itertools.pairwise(bounds):
        batch = table.slice(start, end - start)
        stored = stamp(merge_file_group(spec, stored, precombine(spec, batch)).table, "c")
    rows = [] if stored is None else stored.to_pylist()
    assert len({r["id"] for r in rows}) == len(rows)
    return {r["id"]: tuple(r[c] for c in WRITERS.values()) for r in rows}


def left_join_of_latest(
    rows: list[tuple[str, int, int, int]], latest: Any
) -> dict[int, tuple[Any, ...]]:
    ids = {r[1] for r in rows}
    out = {}
    for i in ids:
        values = []
        for writer in WRITERS:
            mine = [(n, r) for n, r in enumerate(rows) if r[0] == writer and r[1] == i]
            values.append(latest(mine)[1][2] if mine else None)
        out[i] = tuple(values)
    return out


cuts = st.lists(st.integers(0, 16), max_size=4)


@SETTINGS
@given(rows=writer_rows(), cuts=cuts)
def test_three_writers_commit_time_partial_update(
    rows: list[tuple[str, int, int, int]], cuts: list[int]
) -> None:
    """Commit time + partial update: each writer's last row wins its column."""
    spec = MergeSpec(COMMIT_TIME_ORDERING, None, partial_update=True)
    got = write_in_batches(spec, writer_table(rows, grouped=False), cuts)
    assert got == left_join_of_latest(rows, lambda mine: mine[-1])


@SETTINGS
@given(rows=writer_rows(one_per_writer=True), cuts=cuts)
def test_three_writers_event_time_partial_update(
    rows: list[tuple[str, int, int, int]], cuts: list[int]
) -> None:
    """Event time + partial update (PartialUpdateAvroPayload), one row per writer and id.

    Whatever the ordering values and arrival order, nothing is lost: the winner's nulls are
    filled from the loser in both directions. (With several rows of one writer arriving out
    of order, one ordering field cannot protect them -- see
    test_merge.test_partial_update_out_of_order_rows_of_one_writer -- which is what sequence
    groups are for.)
    """
    spec = MergeSpec(EVENT_TIME_ORDERING, "ts", partial_update=True)
    got = write_in_batches(spec, writer_table(rows, grouped=False), cuts)
    assert got == left_join_of_latest(rows, lambda mine: mine[-1])


@SETTINGS
@given(rows=writer_rows(), cuts=cuts, event=st.booleans())
def test_three_writers_with_sequence_groups(
    rows: list[tuple[str, int, int, int]], cuts: list[int], event: bool
) -> None:
    """Each writer's column is a sequence group ordered by its own ts: greatest ts wins.

    Several rows per writer, any arrival order, any batch cuts; ties go to the later row.
    """
    spec = MergeSpec(
        EVENT_TIME_ORDERING if event else COMMIT_TIME_ORDERING,
        "ts" if event else None,
        sequence_groups=parse_sequence_groups("ts_name:name;ts_age:age;ts_sex:sex"),
    )
    got = write_in_batches(spec, writer_table(rows, grouped=True), cuts)
    expected = left_join_of_latest(rows, lambda mine: max(mine, key=lambda m: (m[1][3], m[0])))
    assert got == expected


# --- merge-on-read slices read as the copy-on-write history ------------------------------

wide_updates = wide_records.map(lambda r: (*r[:6], False))


@SETTINGS
@given(
    spec=general_specs(),
    first=st.lists(wide_updates, min_size=1, max_size=6),
    later=st.lists(st.lists(wide_updates, max_size=6), min_size=1, max_size=4),
)
def test_merge_on_read_slice_reads_as_the_copy_on_write_history(
    spec: MergeSpec, first: list[WideRecord], later: list[list[WideRecord]]
) -> None:
    """A merge-on-read slice -- the first commit as base file, then one log block per
    commit holding that commit's combined records -- reads (and compacts) to the rows a
    copy-on-write table gets by merging the commits one by one, and to the plain-dict model:
    late events and partial updates included (the records of a key are applied to the
    stored row in write order, never combined among themselves first)."""
    base = merge_file_group(spec, None, precombine(spec, wide_table(first))).table
    base = base.drop_columns([CHANGED_COL])
    cow = base
    stored = model_fold(spec, first)
    blocks = []
    offset = 0
    for batch in later:
        block = precombine(spec, wide_table(batch))  # what the log writer writes
        cow = merge_file_group(spec, cow, block).table.drop_columns([CHANGED_COL])
        seq = pc.add(block[SEQ_COL], offset)
        blocks.append(block.set_column(block.column_names.index(SEQ_COL), SEQ_COL, seq))
        offset += len(batch)
        for key, record in model_fold(spec, batch).items():
            state = combine(spec, stored[key], record)[0] if key in stored else record
            assert state is not None
            stored[key] = state
    mor = merge_file_group(spec, base, pa.concat_tables(blocks)).table
    assert {r[RECORD_KEY_COL]: wide_state(r) for r in mor.to_pylist()} == stored
    assert {r[RECORD_KEY_COL]: wide_state(r) for r in cow.to_pylist()} == stored
    assert mor.num_rows == len(stored)
