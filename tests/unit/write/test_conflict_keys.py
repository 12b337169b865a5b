"""Concurrent upserts of the same new keys: one commits, the other gets a ConflictError.

Both writers miss the new keys in the index and put them in new file groups of their
own, so the file-group check alone lets both commit and every key is stored twice.
The steps of the two transactions are interleaved by hand: both start, both write
their files, then they commit one after the other.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudilite.errors import ConflictError
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import write_partition_metadata
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata
from hudilite.write.file_group_writer import (
    ExistingFile,
    WriteContext,
    write_file_group,
    write_stat_from_row,
)
from hudilite.write.keying import key_batch
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows
from tests.tables import K_TS_V_P

DATA = K_TS_V_P.columns
KEYS = [f"key-{i:04d}" for i in range(1000)]


@pytest.fixture
def gw(tmp_path: Path) -> FileSystemGateway:
    return K_TS_V_P.create_engine(tmp_path / "t")[0]


def start(
    gw: FileSystemGateway,
    keys: list[str],
    value: str,
    file_id: str,
    operation: str = "UPSERT",
    existing: ExistingFile | None = None,
) -> tuple[WriteTransaction, CommitMetadata]:
    """Begin a write of ``keys`` into the new file group ``file_id`` of partition ``x`` and
    write its file; returns the open transaction and the metadata to commit."""
    state = TableState.load(gw)
    txn = WriteTransaction(gw, state.config, COMMIT).__enter__()
    ctx = WriteContext(
        gw=gw,
        instant_time=txn.instant_time,
        storage_schema=state.storage_schema,
        merge_spec=state.merge_spec(state.options()),
        operation=operation.lower(),
        existing={("x", file_id): existing} if existing else {},
    )
    write_partition_metadata(gw, "x", txn.instant_time, 1)
    txn.start_inflight()
    batch = K_TS_V_P.record_batch(*((k, 1, value, "x") for k in keys))
    incoming = pa.Table.from_batches([key_batch(K_TS_V_P.keying(), batch, 0)])
    row = write_file_group(ctx, "x", file_id, incoming, "0-1-0", 0).to_pylist()[0]
    meta = CommitMetadata(
        partition_to_write_stats={"x": [write_stat_from_row(row)]},
        operation_type=operation,
        extra_metadata={"schema": state.config.create_schema or ""},
    )
    return txn, meta


def read(gw: FileSystemGateway) -> list[tuple]:
    state = TableState.load(gw)
    return rows(read_plan_arrow(gw, plan_snapshot(state.view), state.storage_schema), DATA)


def test_second_upsert_of_the_same_new_keys_conflicts(gw):
    a, a_meta = start(gw, KEYS, "a", "a-0")
    b, b_meta = start(gw, KEYS, "b", "b-0")
    a.commit(a_meta)
    with pytest.raises(ConflictError) as info:
        b.commit(b_meta)
    b.__exit__(ConflictError, info.value, None)  # rolls b back
    a.__exit__(None, None, None)
    assert b.completed is None
    msg = str(info.value)
    assert f"write {b.instant_time} conflicts with commit(s) {a.instant_time}" in msg
    assert "inserted 1000 of the same new keys: x/key-0000, x/key-0001" in msg
    assert "and 995 more" in msg
    expected = [(k, 1, "a", "x") for k in KEYS]
    assert read(gw) == expected
    assert rows(hudi_rs_read(gw.abs_path("")), DATA) == expected
    completed = [i.requested_time for i in TableState.load(gw).timeline.commits()]
    assert completed == [a.instant_time]


def test_disjoint_keys_in_overlapping_ranges_both_commit(gw):
    evens, odds = KEYS[::2], KEYS[1::2]
    a, a_meta = start(gw, evens, "a", "a-0")
    b, b_meta = start(gw, odds, "b", "b-0")
    a.commit(a_meta)
    b.commit(b_meta)  # footer ranges overlap, the exact key check finds no duplicate
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert read(gw) == sorted(
        [(k, 1, "a", "x") for k in evens] + [(k, 1, "b", "x") for k in odds], key=repr
    )


@pytest.mark.parametrize("operation", ["INSERT", "BULK_INSERT"])
def test_inserts_keep_duplicates_by_design(gw, operation):
    """Hudi's insert does not look keys up: either order of the two inserts stores the key
    twice, so there is nothing to detect."""
    a, a_meta = start(gw, KEYS[:10], "a", "a-0", operation)
    b, b_meta = start(gw, KEYS[:10], "b", "b-0", operation)
    a.commit(a_meta)
    b.commit(b_meta)
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert len(read(gw)) == 20


def test_the_key_check_can_be_turned_off(gw):
    a, a_meta = start(gw, KEYS[:10], "a", "a-0")
    b, b_meta = start(gw, KEYS[:10], "b", "b-0")
    a.commit(a_meta)
    b.check_keys = False  # file-group OCC only: both commit
    b.commit(b_meta)
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert len(read(gw)) == 20


def test_inserts_into_a_small_file_count_but_its_carried_over_rows_do_not(gw):
    """Inserts may go to an existing small file (rewritten with its old rows): its new rows
    are checked; the rows it carried over keep their commit time and are not new keys."""
    first, meta = start(gw, ["key-0500"], "old", "a-0")
    first.commit(meta)
    first.__exit__(None, None, None)
    small = TableState.load(gw).view.latest_slices()[0].base_file
    assert small is not None
    a, a_meta = start(
        gw, ["key-0001"], "a", "a-0", existing=ExistingFile(small.path, small.instant_time)
    )
    # (b also writes key-0500 to show that a's carried-over copy is not counted)
    b, b_meta = start(gw, ["key-0001", "key-0500"], "b", "b-0")
    a.commit(a_meta)
    with pytest.raises(ConflictError, match=r"it inserted 1 of the same new keys: x/key-0001\)"):
        b.commit(b_meta)
    b.rollback()
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert read(gw) == [("key-0001", 1, "a", "x"), ("key-0500", 1, "old", "x")]
