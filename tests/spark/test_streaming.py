"""Structured Streaming with hudilite: the exactly-once sink (``Table.write_stream``,
``foreach_batch``) and the ``hudilite`` stream reader."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

import hudilite
from hudilite.spark.streaming import (
    SINK_CHECKPOINT_KEY,
    foreach_batch,
    last_committed_batch,
)
from tests.helpers import DictOracle, spark_rows

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
DDL = "id STRING, ts BIGINT, v STRING"
COLS = ["id", "ts", "v"]


def _recs(keys: range, ts: int, v: str) -> list[dict]:
    return [{"id": f"k{k:03d}", "ts": ts, "v": v} for k in keys]


def _table(spark: Any, path: Path, kind: str = "cow", version: int = 6) -> Any:
    return hudilite.Table.create(
        spark,
        str(path),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        table_type=kind,
        table_version=version,
    )


def _data_rows(t: Any) -> list[tuple]:
    return spark_rows(t.read(), COLS)


def _checkpoints(t: Any) -> list[dict]:
    state = t.state()
    out = []
    for i in state.timeline.commits():
        value = state.timeline.commit_metadata(i).extra_metadata.get(SINK_CHECKPOINT_KEY)
        if value:
            out.append(json.loads(value))
    return out


def test_write_stream_from_json_files_exactly_once(spark: Any, tmp_path: Path) -> None:
    t = _table(spark, tmp_path / "t", "mor", 8)
    landing = tmp_path / "landing"
    landing.mkdir()
    oracle = DictOracle(["id"], "ts")
    for n, batch in enumerate([_recs(range(6), 1, "a"), _recs(range(3, 9), 2, "b")]):
        (landing / f"f{n}.json").write_text("\n".join(json.dumps(r) for r in batch))
        oracle.upsert(batch)
    source = spark.readStream.schema(DDL).option("maxFilesPerTrigger", 1).json(str(landing))
    chk = str(tmp_path / "chk")
    q = t.write_stream(source, checkpoint_location=chk, trigger={"availableNow": True})
    q.awaitTermination()
    assert q.exception() is None
    assert _data_rows(t) == oracle.rows(COLS)
    assert _checkpoints(t) == [{"default_single_writer": "0"}, {"default_single_writer": "1"}]

    # Restarted from its checkpoint, the query writes only the new file.
    later = _recs(range(8, 10), 3, "c")
    (landing / "f2.json").write_text("\n".join(json.dumps(r) for r in later))
    oracle.upsert(later)
    source = spark.readStream.schema(DDL).json(str(landing))
    t.write_stream(
        source, checkpoint_location=chk, trigger={"availableNow": True}
    ).awaitTermination()
    assert _data_rows(t) == oracle.rows(COLS)
    assert len(t.state().timeline.commits()) == 3


def test_replayed_batches_write_once_per_identifier(spark: Any, tmp_path: Path) -> None:
    """Spark replays a batch after a crash between the commit and its checkpoint: the
    replay is skipped, for insert and bulk_insert too; two queries (identifiers) share
    the table; an empty batch commits nothing."""
    t = _table(spark, tmp_path / "t")
    first = spark.createDataFrame(_recs(range(4), 1, "a"), DDL)
    second = spark.createDataFrame(_recs(range(4, 6), 1, "b"), DDL)
    empty = spark.createDataFrame([], DDL)

    a = foreach_batch(t, "insert", {"hoodie.datasource.write.streaming.checkpoint.identifier": "a"})
    b = foreach_batch(
        t, "bulk_insert", {"hoodie.datasource.write.streaming.checkpoint.identifier": "b"}
    )
    a(first, 0)
    a(first, 0)  # replay
    b(second, 0)  # the other query's batch 0
    b(second, 0)  # replay
    a(empty, 1)
    assert len(t.state().timeline.commits()) == 2
    assert last_committed_batch(t.state(), "a") == 0
    assert last_committed_batch(t.state(), "b") == 0
    assert last_committed_batch(t.state(), "default_single_writer") is None
    assert _data_rows(t) == sorted(
        (r["id"], r["ts"], r["v"]) for r in _recs(range(4), 1, "a") + _recs(range(4, 6), 1, "b")
    )


def test_stream_reader_delivers_each_commit_once_across_restart(spark: Any, tmp_path: Path) -> None:
    t = _table(spark, tmp_path / "t", "mor", 8)
    t.write(pa.Table.from_pylist(_recs(range(5), 1, "a"), schema=SCHEMA), "insert")
    t.write(pa.Table.from_pylist(_recs(range(3, 7), 2, "b"), schema=SCHEMA))
    seen: list[tuple[int, list[tuple]]] = []

    def collect(df: Any, batch_id: int) -> None:
        seen.append((batch_id, sorted(tuple(r) for r in df.select(*COLS).collect())))

    chk = str(tmp_path / "chk")

    def run(**options: str) -> None:
        reader = spark.readStream.format("hudilite")
        for k, v in options.items():
            reader = reader.option(k, v)
        q = (
            reader.load(t.path)
            .writeStream.foreachBatch(collect)
            .option("checkpointLocation", chk)
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        assert q.exception() is None

    run(**{"hoodie.datasource.streaming.startOffset": "earliest"})
    # earliest: the table as of the latest commit, in one batch.
    assert [b for b, _ in seen] == [0]
    assert seen[0][1] == _data_rows(t)

    c3 = t.write(pa.Table.from_pylist(_recs(range(6, 8), 3, "c"), schema=SCHEMA))
    c4 = t.write(pa.Table.from_pylist(_recs(range(0, 2), 4, "d"), schema=SCHEMA))
    seen.clear()
    # Restart from the checkpoint: the two new commits, one per batch (rate limit).
    run(**{"hoodie.datasource.read.streaming.max.instants.per.batch": "1"})
    assert [rows for _, rows in seen] == [
        sorted((r["id"], r["ts"], r["v"]) for r in _recs(range(6, 8), 3, "c")),
        sorted((r["id"], r["ts"], r["v"]) for r in _recs(range(0, 2), 4, "d")),
    ], (c3.instant_time, c4.instant_time)
    seen.clear()
    run()
    assert seen == []  # nothing new: no batch at all


def test_stream_reader_cleaned_commits_fail_or_fall_back(spark: Any, tmp_path: Path) -> None:
    """Commits whose files the cleaner removed: a clear error, or with Hudi's
    ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` the snapshot's rows
    committed after the offset. (The reader is driven directly, as Spark would.)"""
    from hudilite.errors import InstantNotFoundError
    from hudilite.spark.datasource import HudiliteDataSource

    t = _table(spark, tmp_path / "t")
    times = [t.write(pa.Table.from_pylist(_recs(range(4), 1, "a"), schema=SCHEMA)).instant_time]
    for k in range(3):
        batch = pa.Table.from_pylist(_recs(range(k, k + 1), 2 + k, "b"), schema=SCHEMA)
        times.append(t.write(batch).instant_time)
    assert t.clean(options={"hoodie.cleaner.commits.retained": "1"}) is not None

    def reader(**options: str) -> Any:
        opts = {"path": t.path, "hoodie.datasource.streaming.startOffset": times[0], **options}
        source = HudiliteDataSource(opts)
        return source.streamReader(source.schema())

    plain = reader()
    start = plain.initialOffset()
    end = plain.latestOffset(start, None)
    assert end == {"completion_time": times[-1]}
    try:
        plain.partitions(start, end)
        raise AssertionError("expected InstantNotFoundError")
    except InstantNotFoundError as exc:
        assert "fulltablescan" in str(exc)

    fallback = reader(**{"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    parts = fallback.partitions(start, end)
    got = pa.Table.from_batches([b for p in parts for b in fallback.read(p)])
    assert sorted(zip(got["id"].to_pylist(), got["ts"].to_pylist(), strict=True)) == [
        ("k000", 2),
        ("k001", 3),
        ("k002", 4),
    ]


def test_failed_batch_write_is_rolled_back_and_retried(
    spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """A micro-batch whose write fails is retried (Hudi's streaming retry options); the
    failed attempt leaves nothing visible and the batch commits once."""
    from hudilite.errors import WriteError
    from hudilite.table.api import Table

    t = _table(spark, tmp_path / "t")
    real_write = Table.write
    calls: list[int] = []

    def flaky_write(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise WriteError("simulated failure of the first attempt")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Table, "write", flaky_write)
    run = foreach_batch(t, "insert", {"hoodie.datasource.write.streaming.retry.interval.ms": "1"})
    run(spark.createDataFrame(_recs(range(3), 1, "a"), DDL), 0)
    assert len(calls) == 2
    assert len(t.state().timeline.commits()) == 1
    assert last_committed_batch(t.state(), "default_single_writer") == 0
    assert _data_rows(t) == [(r["id"], r["ts"], r["v"]) for r in _recs(range(3), 1, "a")]


def test_stream_offsets_never_skip_a_late_commit(spark: Any, tmp_path: Path) -> None:
    """A write requested before another but completing after it: on table version 8 the
    stream's completion-time offsets deliver it after the other; on version 6 (no
    completion times) the stream waits at the pending write. (Offsets driven directly.)"""
    from hudilite.spark.datasource import HudiliteDataSource
    from hudilite.timeline.heartbeat import Heartbeat
    from hudilite.timeline.timeline import TimelineWriter
    from hudilite.write.transaction import commit_metadata

    for version in (8, 6):
        t = _table(spark, tmp_path / f"v{version}", "cow", version)
        t.write(pa.Table.from_pylist(_recs(range(2), 1, "a"), schema=SCHEMA))
        source = HudiliteDataSource({"path": t.path})
        reader = source.streamReader(source.schema())
        first = reader.latestOffset(reader.initialOffset(), None)

        config = t.state().config
        writer = TimelineWriter(t.gw, config)
        late = writer.create_requested("commit")  # a slow writer starts ...
        with Heartbeat(t.gw, late.requested_time, 60000).start():
            done = t.write(pa.Table.from_pylist(_recs(range(2, 4), 2, "b"), schema=SCHEMA))
            second = reader.latestOffset(first, None)
            if version == 8:
                assert second == {"completion_time": done.completion_time}
            else:
                assert second == first  # held back behind the pending write
            # ... and completes last (an empty commit is enough for the offsets).
            meta = commit_metadata(config, config.create_schema or "", [], "UPSERT")
            inflight = writer.transition_inflight(late)
            completed = writer.complete(inflight, meta.to_bytes(config.layout_version))
        third = reader.latestOffset(second, None)
        if version == 8:
            assert third == {"completion_time": completed.completion_time}
        else:
            assert third == {"completion_time": done.instant_time}
        assert reader.latestOffset(third, None) == third


def test_stream_of_a_changelog_table_carries_every_change(spark: Any, tmp_path: Path) -> None:
    """Changelog mode: each micro-batch after the first holds every change of its commits
    with ``_hoodie_operation`` (``-U``/``U``/``D``). (Reader driven directly.)"""
    from pyspark.sql.datasource import CaseInsensitiveDict

    from hudilite.spark.datasource import HudiliteDataSource

    t = hudilite.Table.create(
        spark,
        str(tmp_path / "cl"),
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        table_type="mor",
        table_version=8,
        options={"changelog.enabled": "true"},
    )
    t.write(pa.Table.from_pylist(_recs(range(2), 1, "a"), schema=SCHEMA))
    # As Spark passes options: a case-insensitive map with lower-case keys.
    source = HudiliteDataSource(
        CaseInsensitiveDict({"path": t.path, "hoodie.datasource.streaming.startOffset": "latest"})
    )
    reader = source.streamReader(source.schema())
    start = reader.initialOffset()
    t.write(pa.Table.from_pylist(_recs(range(1), 2, "b"), schema=SCHEMA))
    t.write(pa.Table.from_pylist(_recs(range(1, 2), 0, "x"), schema=SCHEMA), "delete")
    end = reader.latestOffset(start, None)
    got = pa.Table.from_batches(
        [b for p in reader.partitions(start, end) for b in reader.read(p)]
    ).to_pylist()
    assert sorted((r["_hoodie_operation"], r["id"], r["ts"]) for r in got) == [
        ("-U", "k000", 1),
        ("D", "k001", 1),
        ("U", "k000", 2),
    ]


def _land(folder: Path, name: str, records: list[dict]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("\n".join(json.dumps(r) for r in records))


def test_mor_stream_compacts_beside_ingestion(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """A streamed MOR table (async compaction on by default, a plan every 2 delta
    commits): the plan's execution is held until one more batch committed, so ingestion
    demonstrably does not wait for it; the plan then completes beside the stream and the
    rows equal the oracle for hudilite and hudi-rs."""
    from hudilite.spark import async_compaction
    from hudilite.spark.streaming import compactor_of
    from tests.helpers import hudi_rs_read, rows

    t = _table(spark, tmp_path / "t", "mor", 8)
    landing = tmp_path / "landing"
    oracle = DictOracle(["id"], "ts")
    for n in range(3):  # inserts, then updates only (logs, the compaction's input)
        batch = _recs(range(6) if n == 0 else range(n, n + 3), n + 1, f"b{n}")
        _land(landing, f"f{n}.json", batch)
        oracle.upsert(batch)

    def deltas_after(instant_time: str) -> int:
        timeline = t.state().timeline
        return sum(
            1
            for i in timeline.completed()
            if i.action == "deltacommit" and i.requested_time > instant_time
        )

    real = async_compaction.execute_compaction_spark
    held: list[str] = []

    def held_back(spark_: Any, state: Any, instant_time: str, options: Any = None) -> Any:
        if not held:  # the first plan waits until a later batch committed (or 60 s)
            held.append(instant_time)
            deadline = time.monotonic() + 60
            while deltas_after(instant_time) < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
        return real(spark_, state, instant_time, options)

    monkeypatch.setattr(async_compaction, "execute_compaction_spark", held_back)
    source = spark.readStream.schema(DDL).option("maxFilesPerTrigger", 1).json(str(landing))
    q = t.write_stream(
        source,
        checkpoint_location=str(tmp_path / "chk"),
        trigger={"availableNow": True},
        options={"compaction.delta_commits": "2"},
    )
    q.awaitTermination()
    assert q.exception() is None
    compactor = compactor_of(q)
    assert compactor is not None
    compactor.stop(finish_pending=True)

    timeline = t.state().timeline
    compactions = [i for i in timeline.completed() if i.action == "commit"]
    assert len(compactions) == 1 and held == [compactions[0].requested_time]
    first = compactions[0]
    during = [
        i
        for i in timeline.completed()
        if i.action == "deltacommit"
        and first.requested_time < i.requested_time
        and i.completion_time < first.completion_time
    ]
    assert len(during) == 1  # batch 3 committed while the plan was pending
    assert [c.instant_time for c in compactor.completed] == [first.requested_time]
    assert not timeline.pending()
    assert _data_rows(t) == oracle.rows(COLS)
    assert rows(hudi_rs_read(t.path), COLS) == oracle.rows(COLS)


def test_two_streams_one_table_replay_only_their_own_batches(spark: Any, tmp_path: Path) -> None:
    """Two queries with their own checkpoint identifiers write one table (``insert``: a
    batch written twice would duplicate rows). Both progress; when Spark replays query
    a's last batch (its checkpoint lost the batch's commit), only a's entry decides and
    the replay is skipped, whatever b committed since."""
    t = _table(spark, tmp_path / "t")
    a_in, b_in = tmp_path / "a", tmp_path / "b"
    a_rows = [_recs(range(0, 3), 1, "a0"), _recs(range(3, 5), 1, "a1")]
    b_rows = [_recs(range(10, 12), 1, "b0"), _recs(range(12, 13), 1, "b1")]
    _land(a_in, "0.json", a_rows[0])
    _land(a_in, "1.json", a_rows[1])
    _land(b_in, "0.json", b_rows[0])

    def run(name: str, folder: Path) -> None:
        source = spark.readStream.schema(DDL).option("maxFilesPerTrigger", 1).json(str(folder))
        q = t.write_stream(
            source,
            checkpoint_location=str(tmp_path / f"chk-{name}"),
            operation="insert",
            trigger={"availableNow": True},
            options={"hoodie.datasource.write.streaming.checkpoint.identifier": name},
        )
        q.awaitTermination()
        assert q.exception() is None

    run("a", a_in)
    run("b", b_in)
    for name in ("1", ".1.crc"):  # as if a crashed before Spark checkpointed batch 1
        (tmp_path / "chk-a" / "commits" / name).unlink()
    _land(b_in, "1.json", b_rows[1])
    run("a", a_in)  # replays a's batch 1: skipped
    run("b", b_in)  # b's new batch 1
    assert _checkpoints(t) == [{"a": "0"}, {"a": "1"}, {"b": "0"}, {"b": "1"}]
    assert (tmp_path / "chk-a" / "commits" / "1").exists()
    expected = sorted((r["id"], r["ts"], r["v"]) for b in a_rows + b_rows for r in b)
    assert _data_rows(t) == expected


def test_union_of_sources_updates_each_column_group(spark: Any, tmp_path: Path) -> None:
    """Several sources, one row: two streams carry the key, their own columns and their
    own ordering column; their union is written with sequence groups, so each column
    takes its source's latest value (late, older events ignored) with no join and no
    state store."""
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("name", pa.string()),
            ("ts_a", pa.int64()),
            ("age", pa.int64()),
            ("ts_b", pa.int64()),
        ]
    )
    t = hudilite.Table.create(
        spark,
        str(tmp_path / "t"),
        schema,
        record_key="id",
        table_type="mor",
        table_version=8,
        options={"hoodie.hudilite.sequence.groups": "ts_a:name;ts_b:age"},
    )
    a_in, b_in = tmp_path / "a", tmp_path / "b"
    _land(
        a_in,
        "0.json",
        [{"id": "x", "name": "ann", "ts_a": 2}, {"id": "y", "name": "yo", "ts_a": 1}],
    )
    _land(a_in, "1.json", [{"id": "x", "name": "old", "ts_a": 1}])  # late and older: ignored
    _land(b_in, "0.json", [{"id": "x", "age": 30, "ts_b": 5}, {"id": "x", "age": 31, "ts_b": 7}])
    _land(b_in, "1.json", [{"id": "z", "age": 9, "ts_b": 1}])
    a = spark.readStream.schema("id STRING, name STRING, ts_a BIGINT").json(str(a_in))
    b = spark.readStream.schema("id STRING, age BIGINT, ts_b BIGINT").json(str(b_in))
    q = t.write_stream(
        a.unionByName(b, allowMissingColumns=True),
        checkpoint_location=str(tmp_path / "chk"),
        trigger={"availableNow": True},
    )
    q.awaitTermination()
    assert q.exception() is None
    cols = ["id", "name", "ts_a", "age", "ts_b"]
    assert spark_rows(t.read(), cols) == [
        ("x", "ann", 2, 31, 7),
        ("y", "yo", 1, None, None),
        ("z", None, None, 9, 1),
    ]
