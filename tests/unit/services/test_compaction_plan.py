"""Compaction without Spark: plans as Hudi writes them, triggers, execution, failure, order.

``MiniTable`` builds real Hudi tables (v6/v8, COW/MOR) with the executor-side writers and
the timeline writer, one commit per call with explicit file groups; ``test_clean.py`` and
``test_savepoint.py`` reuse it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from hudilite.errors import ConfigError, ConflictError, WriteError
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.schema import arrow_to_avro_schema
from hudilite.services import compaction as comp
from hudilite.services.compaction import (
    CompactionPlan,
    compact,
    delta_commits_since_compaction,
    execute_compaction,
    log_base_instants,
    pending_compactions,
    read_compaction_plan,
    schedule_compaction,
)
from hudilite.storage.layout import BaseFileName, LogFileName, write_partition_metadata
from hudilite.storage.parquet_io import read_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.heartbeat import Heartbeat
from hudilite.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import TimelineWriter
from hudilite.write.file_group_writer import (
    ExistingFile,
    LogTarget,
    WriteContext,
    write_file_group,
    write_stat_from_row,
)
from hudilite.write.keying import key_batch
from hudilite.write.transaction import WriteTransaction
from tests.helpers import hudi_rs_read, rows
from tests.tables import K_TS_V_P

FIXTURE_TIMELINE = Path("/tmp/fx/avro_v9_txns_simple_nometa/v9_txns_simple_nometa/.hoodie/timeline")
DATA = K_TS_V_P.columns


class MiniTable:
    """A Hudi table written commit by commit without Spark (keys ``k``, partition ``p``)."""

    def __init__(self, root: Path, *, version: int = 6, mor: bool = True) -> None:
        self.mor = mor
        self.gw, self.config = K_TS_V_P.create_engine(
            root, table_type="MERGE_ON_READ" if mor else "COPY_ON_WRITE", table_version=version
        )
        self.schema_json = self.config.create_schema or ""

    @property
    def path(self) -> str:
        return self.gw.abs_path("")

    def state(self) -> TableState:
        return TableState.load(self.gw)

    def write(
        self,
        groups: dict[tuple[str, str], list[tuple[Any, ...]]],
        *,
        delete: bool = False,
        replace: dict[str, list[str]] | None = None,
    ) -> str:
        """One commit writing ``rows`` (k, ts, v) into each ``(partition, file_id)``.

        Merge-on-read groups that exist get a new log file; new groups (and every group
        of a copy-on-write table) get a base file. ``replace`` makes it a replacecommit.
        """
        action = REPLACE_COMMIT if replace else (DELTA_COMMIT if self.mor else COMMIT)
        with WriteTransaction(self.gw, self.config, action) as txn:
            state = self.state()
            slices = {s.group_key: s for s in state.view.latest_slices()}
            compacting = log_base_instants(state) if self.config.table_version < 8 else {}
            existing, targets = {}, {}
            for key in groups:
                s = slices.get(key)
                if s is None:
                    continue
                if s.base_file is not None:
                    existing[key] = ExistingFile(s.base_file.path, s.base_file.instant_time)
                if self.mor and not replace:
                    base_instant = compacting.get(key, s.base_instant)
                    versions = [x.version for x in s.log_files if x.instant_time == base_instant]
                    own_base = s.base_file is not None and base_instant == s.base_instant
                    targets[key] = LogTarget(
                        base_instant,
                        s.base_file.file_name if own_base and s.base_file else None,
                        max(versions, default=0) + 1,
                    )
            storage = state.storage_schema
            ctx = WriteContext(
                gw=self.gw,
                instant_time=txn.instant_time,
                storage_schema=storage,
                merge_spec=state.merge_spec(state.options()),
                operation="delete" if delete else "upsert",
                existing=existing,
                log_targets=targets,
                table_version=self.config.table_version,
                log_schema_json=json.dumps(arrow_to_avro_schema(storage, "t_record", "hoodie.t")),
            )
            for p, _ in groups:
                write_partition_metadata(self.gw, p, txn.instant_time, 1)
            txn.start_inflight()
            by_partition: dict[str, list[WriteStat]] = {}
            for i, ((p, fid), recs) in enumerate(groups.items()):
                batch = K_TS_V_P.record_batch(*((*r, p) for r in recs))
                spec = K_TS_V_P.keying(delete_all=delete)
                incoming = pa.Table.from_batches([key_batch(spec, batch, i * 1000)])
                s = write_file_group(ctx, p, fid, incoming, f"{i}-1-{i}", i).to_pylist()[0]
                by_partition.setdefault(p, []).append(write_stat_from_row(s))
            txn.commit(
                CommitMetadata(
                    partition_to_write_stats=by_partition,
                    operation_type="INSERT_OVERWRITE" if replace else "UPSERT",
                    extra_metadata={"schema": self.schema_json},
                    partition_to_replace_file_ids=replace or {},
                )
            )
            return txn.instant_time

    def read(self, as_of: str | None = None) -> list[tuple[Any, ...]]:
        state = self.state()
        table = read_plan_arrow(
            self.gw, plan_snapshot(state.view, as_of=as_of), state.storage_schema
        )
        return rows(table, DATA)

    def files(self, part: str = "") -> list[str]:
        """Data files whose name contains ``part`` (table-relative, sorted)."""
        out = []
        for e in self.gw.list_recursive(""):
            if e.is_dir or e.path.startswith(".hoodie") or e.name.startswith(".hoodie_"):
                continue
            if part in e.name:
                out.append(e.path)
        return sorted(out)

    def timeline_names(self) -> list[str]:
        return sorted(e.name for e in self.gw.list_dir(self.config.timeline_dir) if not e.is_dir)


def mor_with_logs(root: Path, version: int, deltas: int = 2) -> tuple[MiniTable, list[str]]:
    """A MOR table: groups a (p=x) and b (p=y) inserted, then ``deltas`` updates to a, one to b."""
    t = MiniTable(root, version=version)
    times = [
        t.write({("x", "a-0"): [("k1", 1, "v1"), ("k2", 1, "v2")], ("y", "b-0"): [("k3", 1, "v3")]})
    ]
    for i in range(deltas):
        times.append(t.write({("x", "a-0"): [("k1", 10 + i, f"u{i}"), ("k9", 5, "new")]}))
    times.append(t.write({("x", "a-0"): [("k2", None, None)]}, delete=True))
    return t, times


# ------------------------------------------------------------------------- plan encoding


@pytest.mark.skipif(not FIXTURE_TIMELINE.is_dir(), reason="fixture table not unzipped")
def test_plan_round_trips_hudi_fixture_field_by_field():
    raw = (FIXTURE_TIMELINE / "20260307135839895.compaction.requested").read_bytes()
    plan = CompactionPlan.from_bytes("20260307135839895", raw)
    assert [op.file_id for op in plan.operations] == [
        "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0",
        "9c6ed25b-6c9d-4793-ad27-1c8518086b6a-0",
    ]
    op = plan.operations[0]
    assert op.partition_path == "region=us" and op.base_instant == "20260307135827749"
    assert op.data_file == "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_1-3-7_20260307135827749.parquet"
    assert len(op.delta_files) == 2 and plan.version == 2
    theirs = next(fastavro.reader(io.BytesIO(raw)))
    reader = fastavro.reader(io.BytesIO(plan.to_avro_bytes()))
    ours = next(reader)
    assert ours == theirs  # the same record, field for field
    schema = reader.writer_schema
    assert isinstance(schema, dict)
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"


def test_metrics_follow_hudi_capture_metrics():
    from hudilite.filegroup.slices import BaseFile, LogFile

    base = BaseFile("p", BaseFileName("f-0", "0-1-2", "1"), 3 * 1024 * 1024 + 5)
    logs = [LogFile("p", LogFileName("f-0", "1", 1, "0-1-2"), 1024 * 1024)]
    m = comp._metrics(base, logs, 120 * 1024 * 1024)
    assert m == {
        "TOTAL_LOG_FILES": 1.0,
        "TOTAL_IO_MB": 7.0,
        "TOTAL_IO_READ_MB": 4.0,
        "TOTAL_LOG_FILES_SIZE": float(1024 * 1024),
        "TOTAL_IO_WRITE_MB": 3.0,
    }
    assert comp._metrics(None, logs, 120 * 1024 * 1024)["TOTAL_IO_WRITE_MB"] == 120.0


# ------------------------------------------------------------------------------ triggers


def test_num_commits_trigger_counts_delta_commits_since_last_compaction(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 6, deltas=2)  # 4 delta commits
    assert delta_commits_since_compaction(t.state().timeline)[0] == 4
    assert schedule_compaction(t.state()) is None  # default: 5
    planned = schedule_compaction(t.state(), {"hoodie.compact.inline.max.delta.commits": "4"})
    assert planned is not None and planned.trigger == "NUM_COMMITS" and planned.delta_commits == 4
    execute_compaction(t.state(), planned.instant_time)
    assert delta_commits_since_compaction(t.state().timeline)[0] == 0
    t.write({("y", "b-0"): [("k3", 2, "w")]})
    count, ref = delta_commits_since_compaction(t.state().timeline)
    assert (count, ref) == (1, planned.instant_time)


def test_time_and_combined_triggers(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 8, deltas=1)  # 3 delta commits
    state = t.state()
    now = "99991231000000000"
    opts = comp.resolve_options(state, {"hoodie.compact.inline.max.delta.seconds": "60"})
    count, ref = delta_commits_since_compaction(state.timeline)
    assert comp._triggered("TIME_ELAPSED", count, ref, now, opts)
    assert not comp._triggered("TIME_ELAPSED", count, ref, ref or "", opts)
    assert comp._triggered("NUM_OR_TIME", count, ref, now, opts)
    assert not comp._triggered("NUM_AND_TIME", count, ref, now, opts)  # 3 < 5 commits
    assert comp._triggered("NUM_AND_TIME", 5, ref, now, opts)
    quick = {"hoodie.compact.inline.trigger.strategy": "time_elapsed"}
    assert schedule_compaction(state, {**quick, "hoodie.compact.inline.max.delta.seconds": "0"})
    with pytest.raises(ConfigError, match=r"trigger\.strategy"):
        schedule_compaction(state, {"hoodie.compact.inline.trigger.strategy": "SOMETIMES"})


def test_copy_on_write_tables_have_no_compaction(tmp_path):
    t = MiniTable(tmp_path / "t", mor=False)
    t.write({("x", "a-0"): [("k1", 1, "v")]})
    with pytest.raises(ConfigError, match="merge-on-read"):
        schedule_compaction(t.state(), force=True)


# ---------------------------------------------------------------------- schedule + execute


@pytest.mark.parametrize("version", [6, 8])
def test_compaction_rewrites_slices_with_logs_and_reads_stay_equal(tmp_path, version):
    t, times = mor_with_logs(tmp_path / "t", version)
    before = t.read()
    assert before == [
        ("k1", 11, "u1", "x"),
        ("k3", 1, "v3", "y"),
        ("k9", 5, "new", "x"),
    ]
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None and planned.trigger == "force"
    (op,) = planned.plan.operations  # b-0 has no logs: not compacted
    assert (op.partition_path, op.file_id, op.base_instant) == ("x", "a-0", times[0])
    assert op.data_file is not None and op.data_file.endswith(f"_{times[0]}.parquet")
    assert len(op.delta_files) == 3 and op.metrics["TOTAL_LOG_FILES"] == 3.0
    T = planned.instant_time
    assert f"{T}.compaction.requested" in t.timeline_names()
    assert read_compaction_plan(t.state(), T) == planned.plan
    assert t.read() == before  # a pending plan changes nothing

    result = execute_compaction(t.state(), T)
    assert (result.num_file_groups, result.num_log_files_compacted) == (1, 3)
    assert (result.num_inserts, result.num_updates, result.num_deletes) == (1, 1, 1)
    assert result.num_records_written == 2
    (path,) = result.file_paths
    assert path.startswith("x/a-0_") and path.endswith(f"_{T}.parquet")
    names = t.timeline_names()
    assert f"{T}.compaction.inflight" in names
    assert any(n.startswith(T) and n.endswith(".commit") for n in names)
    inst = t.state().timeline.get(T)
    assert inst is not None and inst.action == COMMIT and inst.is_completed
    meta = t.state().timeline.commit_metadata(inst)
    assert meta.operation_type == "COMPACT" and meta.compacted
    (stat,) = meta.write_stats()
    assert stat.prev_commit == times[0] and stat.prev_base_file == op.data_file
    assert stat.total_log_files_compacted == 3 and stat.num_writes == 2
    assert meta.extra_metadata["schema"] == t.schema_json
    # Records keep their commit time and sequence number; only the file name changes.
    new = read_base_file(t.gw, path).to_pylist()
    by_key = {r["k"]: r for r in new}
    assert by_key["k1"]["_hoodie_commit_time"] == times[2]
    assert {r["_hoodie_file_name"] for r in new} == {path.rsplit("/", 1)[1]}
    assert t.read() == before
    assert rows(hudi_rs_read(t.path), DATA) == before
    assert rows(hudi_rs_read(t.path, read_optimized="true"), DATA) == before
    assert t.read(as_of=times[1]) == [
        ("k1", 10, "u0", "x"),
        ("k2", 1, "v2", "x"),
        ("k3", 1, "v3", "y"),
        ("k9", 5, "new", "x"),
    ]
    assert schedule_compaction(t.state(), force=True) is None  # nothing has logs now


@pytest.mark.parametrize("version", [6, 8])
def test_writes_while_compaction_is_pending_land_in_the_new_slice(tmp_path, version):
    t, _ = mor_with_logs(tmp_path / "t", version)
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    T = planned.instant_time
    late = t.write({("x", "a-0"): [("k1", 99, "late"), ("k5", 1, "five")]})
    expected = [
        ("k1", 99, "late", "x"),
        ("k3", 1, "v3", "y"),
        ("k5", 1, "five", "x"),
        ("k9", 5, "new", "x"),
    ]
    assert t.read() == expected
    if version == 6:  # the new log names the compaction's slice
        names = [LogFileName.parse(f.rsplit("/", 1)[1]) for f in t.files(".log.")]
        assert any(n is not None and n.base_instant == T for n in names)
    execute_compaction(t.state(), T)
    assert t.read() == expected
    assert rows(hudi_rs_read(t.path), DATA) == expected
    latest = {s.group_key: s for s in t.state().view.latest_slices()}[("x", "a-0")]
    assert latest.base_instant == T and len(latest.log_files) == 1
    assert latest.log_files[0].name.base_instant == (T if version == 6 else late)
    # The next plan picks up the late log file.
    again = schedule_compaction(t.state(), force=True)
    assert again is not None and again.plan.operations[0].base_instant == T


def test_plan_skips_file_groups_of_pending_plans(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 8)
    first = schedule_compaction(t.state(), force=True)
    t.write({("y", "b-0"): [("k3", 7, "b")]})
    second = schedule_compaction(t.state(), force=True)
    assert first is not None and second is not None
    assert first.plan.file_groups == {("x", "a-0")}
    assert second.plan.file_groups == {("y", "b-0")}
    assert [i.requested_time for i in pending_compactions(t.state())] == [
        first.instant_time,
        second.instant_time,
    ]
    results = compact(t.state(), {"hoodie.compaction.order": "LIFO"}, schedule=False)
    assert [r.instant_time for r in results] == [second.instant_time, first.instant_time]
    assert pending_compactions(t.state()) == []
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


def test_version6_refuses_to_plan_while_a_write_is_in_flight(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 6)
    writer = TimelineWriter(t.gw, t.config)
    with Heartbeat(t.gw, "29990101000000000", 60000):
        writer.create_requested(DELTA_COMMIT, "29990101000000000")
        with pytest.raises(ConflictError, match="in flight"):
            schedule_compaction(t.state(), force=True)


def test_version8_plans_past_a_write_in_flight(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 8)
    writer = TimelineWriter(t.gw, t.config)
    inst = writer.create_requested(DELTA_COMMIT)
    with Heartbeat(t.gw, inst.requested_time, 60000):
        planned = schedule_compaction(t.state(), force=True)
    assert planned is not None and planned.instant_time > inst.requested_time


# ------------------------------------------------------------------------------- failures


@pytest.mark.parametrize("point", ["after_file_write", "before_commit"])
def test_failed_compaction_is_rolled_back_and_can_be_retried(tmp_path, point):
    t, _ = mor_with_logs(tmp_path / "t", 6)
    before = t.read()
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    T = planned.instant_time
    with pytest.raises(WriteError, match="simulated failure"):
        execute_compaction(t.state(), T, options={"hudilite.internal.fail.point": point})
    names = t.timeline_names()
    assert f"{T}.compaction.requested" in names and f"{T}.compaction.inflight" not in names
    assert any(n.endswith(".rollback") for n in names)
    assert not [f for f in t.files(".parquet") if f.endswith(f"_{T}.parquet")]
    assert not t.gw.exists(f".hoodie/.temp/{T}")
    assert t.read() == before
    result = execute_compaction(t.state(), T)
    assert result.rolled_back_attempt is None and t.read() == before


def test_abandoned_inflight_attempt_is_rolled_back_first(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 8)
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    T = planned.instant_time
    writer = TimelineWriter(t.gw, t.config)
    writer.transition_inflight(Instant(T, COMPACTION, State.REQUESTED))
    junk = f"x/a-0_9-9-9_{T}.parquet"
    t.gw.write_bytes(junk, b"half a file")
    with Heartbeat(t.gw, T, 60000), pytest.raises(ConflictError, match="another process"):
        execute_compaction(t.state(), T)
    result = execute_compaction(t.state(), T)
    assert result.rolled_back_attempt is not None
    assert not t.gw.exists(junk)
    rollbacks = t.state().timeline.filter(actions=ROLLBACK)
    assert [r.requested_time for r in rollbacks] == [result.rolled_back_attempt]
    assert rows(hudi_rs_read(t.path), DATA) == t.read()


def test_missing_planned_log_file_fails_cleanly(tmp_path):
    t, _ = mor_with_logs(tmp_path / "t", 6)
    planned = schedule_compaction(t.state(), force=True)
    assert planned is not None
    op = planned.plan.operations[0]
    t.gw.delete_file(f"{op.partition_path}/{op.delta_files[0]}")
    with pytest.raises(Exception, match="missing"):
        execute_compaction(t.state(), planned.instant_time)
    assert f"{planned.instant_time}.compaction.requested" in t.timeline_names()
