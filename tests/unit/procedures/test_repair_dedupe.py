"""``repair_deduplicate`` (issue 30) on engine-built tables, without Spark: Hudi's three
dedupe types, the repaired files of a dry run, the repair committed as new versions of the
file groups (commit metadata, what hudilite and hudi-rs read), and the refusals."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.procedures.repair_dedupe import plan_drops
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call


def test_dedupe_types_pick_hudis_losers() -> None:
    copies = {"k": [("a", "1"), ("b", "2"), ("c", "2")], "j": [("a", "1"), ("c", "1")]}
    assert plan_drops(copies, "insert_type") == {"a": {"k"}}
    assert plan_drops(copies, "update_type") == {"a": {"k", "j"}, "b": {"k"}}
    assert plan_drops(copies, "upsert_type") == {"a": {"k", "j"}, "b": {"k"}}


def duplicated(tmp_path: Path) -> tuple[MiniTable, str, str]:
    """k1 inserted into a-0 (c1) and again into b-0 (c2)."""
    t = MiniTable(tmp_path / "t", mor=False)
    c1 = t.write(
        {("x", "a-0"): [("k1", 1, "v1"), ("k2", 1, "v2")], ("y", "c-0"): [("k4", 1, "v4")]}
    )
    c2 = t.write({("x", "b-0"): [("k1", 2, "v1b"), ("k3", 1, "v3")]})
    return t, c1, c2


def test_repair_deduplicate(tmp_path: Path) -> None:
    t, c1, c2 = duplicated(tmp_path)
    assert (
        rows(hudi_rs_read(t.path), DATA)
        == t.read()
        == [
            ("k1", 1, "v1", "x"),
            ("k1", 2, "v1b", "x"),
            ("k2", 1, "v2", "x"),
            ("k3", 1, "v3", "x"),
            ("k4", 1, "v4", "y"),
        ]
    )
    names = t.timeline_names()
    out = tmp_path / "repaired"
    base_a = next(f for f in t.files("a-0_")).split("/")[-1]
    base_b = next(f for f in t.files("b-0_")).split("/")[-1]

    got = call(
        "repair_deduplicate",
        path=t.path,
        duplicated_partition_path="x",
        repaired_output_path=str(out),
    )
    assert got == [(f"Deduplicated files placed in: {out}.",)]
    assert sorted(p.name for p in out.iterdir()) == sorted([base_a, base_b])
    assert pq.read_table(out / base_a).column("_hoodie_record_key").to_pylist() == ["k2"]
    assert (out / base_b).read_bytes() == (Path(t.path) / "x" / base_b).read_bytes()
    assert t.timeline_names() == names  # a dry run changes nothing

    got = call(
        "repair_deduplicate",
        path=t.path,
        duplicated_partition_path="x/",
        repaired_output_path=str(out),
        dry_run=False,
    )
    assert got == [("Deduplicated files placed in: x/.",)]
    state = t.state()
    last = state.timeline.last_commit()
    assert last is not None and last.requested_time not in (c1, c2)
    meta = state.timeline.commit_metadata(last)
    assert meta.operation_type == "DELETE"
    [stat] = meta.write_stats()
    assert (stat.file_id, stat.prev_commit, stat.num_writes, stat.num_deletes) == (
        "a-0",
        c1,
        1,
        1,
    )
    assert stat.path == f"x/a-0_0-0-0_{last.requested_time}.parquet"
    assert t.gw.size(stat.path) == stat.file_size_in_bytes
    expected = [
        ("k1", 2, "v1b", "x"),
        ("k2", 1, "v2", "x"),
        ("k3", 1, "v3", "x"),
        ("k4", 1, "v4", "y"),
    ]
    assert t.read() == expected == rows(hudi_rs_read(t.path), DATA)
    # the untouched copy keeps its commit time; the repaired file names itself
    new = pq.read_table(Path(t.path) / stat.path)
    assert new.column("_hoodie_commit_time").to_pylist() == [c1]
    assert new.column("_hoodie_file_name").to_pylist() == [stat.path.split("/")[-1]]


def test_repair_deduplicate_refusals(tmp_path: Path) -> None:
    t, _, _ = duplicated(tmp_path)
    t.write({("x", "d-0"): [("k9", 1, "a")], ("x", "e-0"): [("k9", 1, "b")]})  # one commit
    out = str(tmp_path / "out")
    names = t.timeline_names()
    with pytest.raises(ProcedureError) as same_commit:
        call(
            "repair_deduplicate",
            path=t.path,
            duplicated_partition_path="x",
            repaired_output_path=out,
            dry_run=False,
        )
    assert str(same_commit.value) == (
        "repair_deduplicate: duplicates remain after the repair (keys k9): their copies "
        "share the latest commit time; try dedupe_type => 'upsert_type'"
    )
    with pytest.raises(ProcedureArgumentError) as bad_type:
        call(
            "repair_deduplicate",
            path=t.path,
            duplicated_partition_path="x",
            repaired_output_path=out,
            dedupe_type="INSERT",
        )
    assert str(bad_type.value) == (
        "repair_deduplicate: dedupe_type 'INSERT' is not one of insert_type, update_type, "
        "upsert_type"
    )
    with pytest.raises(ProcedureArgumentError) as bad_partition:
        call(
            "repair_deduplicate",
            path=t.path,
            duplicated_partition_path="z",
            repaired_output_path=out,
        )
    assert str(bad_partition.value) == (
        "repair_deduplicate: duplicated_partition_path 'z' is not a partition folder of the table"
    )
    inside = str(Path(t.path) / "x")
    with pytest.raises(ProcedureArgumentError) as in_table:
        call(
            "repair_deduplicate",
            path=t.path,
            duplicated_partition_path="x",
            repaired_output_path=inside,
        )
    assert str(in_table.value) == (
        f"repair_deduplicate: repaired_output_path {inside!r} is inside the table; give a "
        "folder outside it"
    )
    assert t.timeline_names() == names
    assert call(
        "repair_deduplicate",
        path=t.path,
        duplicated_partition_path="x",
        repaired_output_path=out,
        dry_run=False,
        dedupe_type="upsert_type",
    ) == [("Deduplicated files placed in: x.",)]
    keys = [r[0] for r in rows(hudi_rs_read(t.path), DATA)]
    assert sorted(keys) == ["k1", "k2", "k3", "k4", "k9"] == [r[0] for r in t.read()]


def test_repair_deduplicate_refuses_groups_with_logs(tmp_path: Path) -> None:
    t = MiniTable(tmp_path / "m", version=6)
    t.write({("x", "a-0"): [("k1", 1, "v1")]})
    t.write({("x", "b-0"): [("k1", 2, "v2")]})
    t.write({("x", "a-0"): [("k2", 1, "v3")]})  # a log file on a-0
    [log] = [f.split("/")[-1] for f in t.files(".log.")]
    with pytest.raises(ProcedureError) as err:
        call(
            "repair_deduplicate",
            path=t.path,
            duplicated_partition_path="x",
            repaired_output_path=str(tmp_path / "out"),
        )
    assert str(err.value) == (
        f"repair_deduplicate: file group x/a-0 has log files after its base file ({log}); "
        "compact the table first"
    )
