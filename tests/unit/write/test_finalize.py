"""Finalize (Hudi's finalizeWrite): a commit deletes the files its markers name but it does not.

A retried task's first attempt wrote a file of the same file group and instant under
another write token; the commit names only the retry's file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.schema import arrow_to_avro_schema
from hudilite.services.compaction import (
    compact_operation,
    execute_compaction,
    run_locally,
    schedule_compaction,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import write_partition_metadata
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.write.file_group_writer import (
    ExistingFile,
    LogTarget,
    WriteContext,
    write_file_group,
    write_stat_from_row,
)
from hudilite.write.finalize import committed_paths, finalize_write, stray_files
from hudilite.write.keying import key_batch
from hudilite.write.markers import create_marker, marked_files
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows
from tests.tables import K_TS_V_P

DATA = K_TS_V_P.columns


def new_table(root: Path, *, mor: bool = False) -> FileSystemGateway:
    return K_TS_V_P.create_engine(root, table_type="MERGE_ON_READ" if mor else "COPY_ON_WRITE")[0]


def write(gw: FileSystemGateway, recs: list[tuple], attempts: int = 1) -> list[str]:
    """One commit of ``recs`` into file group ``f-0`` of partition ``x``; the group's task
    runs ``attempts`` times (each attempt writes its file), the commit names the last
    attempt's file. Returns the paths the attempts wrote."""
    state = TableState.load(gw)
    mor = state.config.is_mor
    with WriteTransaction(gw, state.config, DELTA_COMMIT if mor else COMMIT) as txn:
        latest = {s.group_key: s for s in state.view.latest_slices()}.get(("x", "f-0"))
        existing, targets = {}, {}
        if latest is not None and latest.base_file is not None:
            existing[("x", "f-0")] = ExistingFile(latest.base_file.path, latest.base_instant)
            if mor:
                targets[("x", "f-0")] = LogTarget(
                    latest.base_instant, latest.base_file.file_name, 1
                )
        storage = state.storage_schema
        ctx = WriteContext(
            gw=gw,
            instant_time=txn.instant_time,
            storage_schema=storage,
            merge_spec=state.merge_spec(state.options()),
            operation="upsert",
            existing=existing,
            log_targets=targets,
            log_schema_json=json.dumps(arrow_to_avro_schema(storage, "t_record", "hoodie.t")),
        )
        write_partition_metadata(gw, "x", txn.instant_time, 1)
        txn.start_inflight()
        incoming = pa.Table.from_batches(
            [key_batch(K_TS_V_P.keying(), K_TS_V_P.record_batch(*recs), 0)]
        )
        written = []
        for attempt in range(attempts):
            row = write_file_group(ctx, "x", "f-0", incoming, f"0-1-{attempt}", 0).to_pylist()[0]
            written.append(row["path"])
        stat = write_stat_from_row(row)
        meta = CommitMetadata(
            partition_to_write_stats={"x": [stat]},
            operation_type="UPSERT",
            extra_metadata={"schema": state.config.create_schema or ""},
        )
        txn.commit(meta)
    return written


def data_files(gw: FileSystemGateway) -> list[str]:
    return sorted(
        e.path
        for e in gw.list_recursive("x")
        if not e.is_dir and not e.name.startswith(".hoodie_partition")
    )


def read(gw: FileSystemGateway) -> list[tuple]:
    state = TableState.load(gw)
    return rows(read_plan_arrow(gw, plan_snapshot(state.view), state.storage_schema), DATA)


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_commit_deletes_the_failed_attempts_file(tmp_path, mor):
    gw = new_table(tmp_path / "t", mor=mor)
    write(gw, [("k1", 1, "a", "x"), ("k2", 1, "a", "x")])
    # The update's task ran twice: attempt 0 wrote its file and failed, attempt 1 committed.
    first, retry = write(gw, [("k1", 2, "b", "x")], attempts=2)
    assert not gw.exists(first) and gw.exists(retry)
    assert retry in data_files(gw) and first not in data_files(gw)
    expected = [("k1", 2, "b", "x"), ("k2", 1, "a", "x")]
    assert read(gw) == expected
    # hudi-rs lists the partition: with the leftover it refused the table
    # ("Timestamp ... is already present in File Group") or read the log twice.
    assert rows(hudi_rs_read(gw.abs_path("")), DATA) == expected


def test_finalize_keeps_named_and_unmarked_files(tmp_path):
    gw = FileSystemGateway(str(tmp_path))
    for name in ("x/a_0-1-0_1.parquet", "x/a_0-1-1_1.parquet", "x/.a_1.log.1_0-1-0"):
        gw.write_bytes(name, b"data")
        create_marker(gw, "1", name, "CREATE")
    gw.write_bytes("x/other_0-1-0_0.parquet", b"committed earlier, never marked by 1")
    create_marker(gw, "1", "x/never_written_0-1-2_1.parquet", "CREATE")  # failed before writing
    stats = [
        WriteStat(file_id="a", path="x/a_0-1-1_1.parquet", partition_path="x"),
        WriteStat(file_id="a", path="x/.a_1.log.1_0-1-0", partition_path="x"),
    ]
    assert stray_files(gw, "1", stats) == ["x/a_0-1-0_1.parquet"]
    assert finalize_write(gw, "1", stats) == ["x/a_0-1-0_1.parquet"]
    assert sorted(e.path for e in gw.list_recursive("x")) == [
        "x/.a_1.log.1_0-1-0",
        "x/a_0-1-1_1.parquet",
        "x/other_0-1-0_0.parquet",
    ]
    assert len(marked_files(gw, "1")) == 4  # markers stay until the instant completes


def test_committed_paths_include_log_files_relative_to_partition():
    stats = [
        WriteStat(file_id="f", path="p/q/.f_1.log.2_0-1-0", partition_path="p/q"),
        WriteStat(file_id="g", path=None, partition_path="", log_files=[".g_1.log.1_0-1-0"]),
        WriteStat(file_id="f", path=None, partition_path="p/q", log_files=[".f_1.log.1_0-1-0"]),
    ]
    assert committed_paths(stats) == {
        "p/q/.f_1.log.2_0-1-0",
        ".g_1.log.1_0-1-0",
        "p/q/.f_1.log.1_0-1-0",
    }


def test_compaction_commit_deletes_a_duplicate_attempts_base_file(tmp_path):
    gw = new_table(tmp_path / "t", mor=True)
    write(gw, [("k1", 1, "a", "x")])
    write(gw, [("k1", 2, "b", "x")])
    planned = schedule_compaction(TableState.load(gw), force=True)
    assert planned is not None
    leftovers = []

    def retried(ctx, ops):
        # The first attempt of every operation wrote its base file, then was lost.
        leftovers.extend(compact_operation(ctx, op, f"{i}-9-9").path for i, op in enumerate(ops))
        return run_locally(ctx, ops)

    execute_compaction(TableState.load(gw), planned.instant_time, runner=retried)
    assert leftovers and not any(gw.exists(p) for p in leftovers)
    assert rows(hudi_rs_read(gw.abs_path("")), DATA) == [("k1", 2, "b", "x")]
