"""Merge-on-read tables end to end: log files readers agree on, before and after compaction."""

from __future__ import annotations

import os

import pytest

import hudilite
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows
from tests.tables import TRIPS

DATA = TRIPS.columns


batch = TRIPS.batch


def log_files(path: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".hoodie")]
        out += [os.path.relpath(os.path.join(root, f), path) for f in files if ".log." in f]
    return sorted(out)


@pytest.fixture(params=[(6, "avro"), (8, "avro"), (6, "parquet")], ids=["v6", "v8", "v6-parquet"])
def mor(request, spark, tmp_path) -> hudilite.Table:
    version, block_format = request.param
    return TRIPS.create(
        spark,
        str(tmp_path / "trips"),
        table_type="mor",
        table_version=version,
        options={"hoodie.logfile.data.block.format": block_format},
    )


def test_mor_upserts_and_deletes_go_to_logs(mor):
    oracle = DictOracle(["uuid"], "ts")
    b1 = batch(("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 1, 3.0, "la"))
    r1 = mor.write(b1)
    oracle.upsert(b1.to_pylist())
    assert (r1.num_inserts, r1.files_written) == (3, 2)
    assert log_files(mor.path) == []
    b2 = batch(("a", 2, 10.0, "sf"), ("b", 0, 20.0, "sf"), ("d", 1, 4.0, "la"))
    r2 = mor.write(b2)
    oracle.upsert(b2.to_pylist())
    assert (r2.num_updates, r2.num_inserts) == (2, 1)
    assert len(log_files(mor.path)) == 1  # the sf file group's changes; d went to a base file
    r3 = mor.write(batch(("c", 5, None, "la")), operation="delete")
    oracle.delete([("c",)])
    assert r3.num_deletes == 1
    assert [i.action for i in mor.timeline()] == ["deltacommit"] * 3
    expected = oracle.rows(DATA)
    assert rows(hudi_rs_read(mor.path), DATA) == expected
    assert spark_rows(mor.read(), DATA) == expected
    assert rows(mor.to_arrow(), DATA) == expected
    assert spark_rows(mor.read(query_type="read_optimized"), DATA) == rows(
        hudi_rs_read(mor.path, read_optimized=True), DATA
    )
    assert spark_rows(mor.read(as_of=r2.instant_time), DATA) == rows(
        hudi_rs_read(mor.path, as_of=r2.instant_time), DATA
    )
    start = r1.completion_time or r1.instant_time
    assert spark_rows(mor.read(query_type="incremental", start=start), DATA) == rows(
        hudi_rs_read(mor.path, start=start), DATA
    )
    # Read-optimized sees base files only: the first commit's rows plus d.
    ro = rows(hudi_rs_read(mor.path, read_optimized=True), DATA)
    assert ro == [
        ("a", 1, 1.0, "sf"),
        ("b", 1, 2.0, "sf"),
        ("c", 1, 3.0, "la"),
        ("d", 1, 4.0, "la"),
    ]
    # Time travel to the first deltacommit.
    assert rows(hudi_rs_read(mor.path, as_of=r1.instant_time), DATA) == [
        ("a", 1, 1.0, "sf"),
        ("b", 1, 2.0, "sf"),
        ("c", 1, 3.0, "la"),
    ]


def _forget_base_files(t: hudilite.Table) -> None:
    """Drop the base files' write stats from the commits too: a log-only file group never
    had a base file on the timeline (one the timeline names but that is gone is damage,
    which reads refuse)."""
    state = t.state()
    timeline = state.timeline
    for inst in timeline.commits():
        meta = timeline.commit_metadata(inst)
        meta.partition_to_write_stats = {
            p: [w for w in stats if not (w.path or "").endswith(".parquet")]
            for p, stats in meta.partition_to_write_stats.items()
        }
        rel = f"{state.config.timeline_dir}/{timeline.file_name(inst)}"
        state.gw.write_bytes(rel, meta.to_bytes(state.config.layout_version))


@pytest.mark.parametrize("local_rows", ["10000", "0"], ids=["driver", "spark"])
def test_index_finds_keys_living_only_in_logs(mor, local_rows):
    mor.write(batch(("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf")))
    mor.write(batch(("a", 2, 3.0, "sf")))  # a log for the sf file group
    # Make the file group log-only, as Hudi writers with log-indexing indexes leave them.
    for root, _, files in os.walk(mor.path):
        for f in files:
            if f.endswith(".parquet"):
                os.remove(os.path.join(root, f))
    _forget_base_files(mor)
    assert rows(hudi_rs_read(mor.path), DATA) == [("a", 2, 3.0, "sf")]
    r = mor.write(
        batch(("a", 3, 4.0, "sf"), ("c", 1, 5.0, "sf")),
        options={"hoodie.hudilite.write.local.max.rows": local_rows},
    )
    assert r.extra["driver_side"] is (local_rows != "0")
    assert (r.num_updates, r.num_inserts) == (1, 1)
    expected = [("a", 3, 4.0, "sf"), ("c", 1, 5.0, "sf")]
    assert spark_rows(mor.read(), DATA) == expected
    assert rows(hudi_rs_read(mor.path), DATA) == expected


@pytest.mark.parametrize("version", [6, 8])
def test_changelog_mode_keeps_every_change(spark, tmp_path, version):
    t = TRIPS.create(
        spark,
        str(tmp_path / "cl"),
        table_type="mor",
        table_version=version,
        options={"changelog.enabled": "true"},
    )
    r1 = t.write(batch(("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf")))
    r2 = t.write(batch(("a", 2, 10.0, "sf"), ("a", 3, 11.0, "sf")))
    r3 = t.write(batch(("b", 0, None, "sf")), operation="delete")
    assert (r2.num_updates, r3.num_deletes) == (2, 1)
    # Snapshot reads merge the changes.
    snap = spark_rows(t.read(), ["_hoodie_operation", *DATA])
    assert snap == [("U", "a", 3, 11.0, "sf")]
    assert rows(hudi_rs_read(t.path), DATA) == [("a", 3, 11.0, "sf")]
    # An incremental read returns every intermediate change with its operation.
    start = r1.completion_time or r1.instant_time
    changes = t.read(query_type="incremental", start=start).orderBy("_hoodie_commit_seqno")
    got = [
        (r["_hoodie_operation"], r["uuid"], r["ts"])
        for r in changes.select(
            "_hoodie_operation", "uuid", "ts", "_hoodie_commit_time", "_hoodie_commit_seqno"
        ).collect()
    ]
    assert sorted(got) == sorted(
        [("-U", "a", 1), ("U", "a", 2), ("-U", "a", 2), ("U", "a", 3), ("D", "b", 1)]
    )
    first = spark_rows(
        t.read(
            query_type="incremental",
            start="20000101000000000",
            end=r1.completion_time or r1.instant_time,
        ),
        ["_hoodie_operation", "uuid"],
    )
    assert first == [("I", "a"), ("I", "b")]
    # Compaction folds the changes into base files.
    t.compact()
    assert spark_rows(t.read(), DATA) == [("a", 3, 11.0, "sf")]


def test_changelog_write_that_changes_nothing_names_no_log_file(spark, tmp_path):
    t = TRIPS.create(
        spark, str(tmp_path / "cl0"), table_type="mor", options={"changelog.enabled": "true"}
    )
    t.write(batch(("a", 5, 1.0, "sf")))
    r = t.write(batch(("a", 1, 9.0, "sf")))  # older than the stored record: no change
    assert (r.files_written, r.num_updates) == (0, 0)
    assert log_files(t.path) == []
    assert spark_rows(t.read(), DATA) == [("a", 5, 1.0, "sf")]
    assert rows(hudi_rs_read(t.path), DATA) == [("a", 5, 1.0, "sf")]
