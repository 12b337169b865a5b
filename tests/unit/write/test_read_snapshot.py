"""Which commits a write's read snapshot saw (``hudilite.write.conflict.ReadSnapshot``) and
which unseen commits removed rows under it (``removed_in``).

Timelines are folders of instant files made by hand, so the completion order can differ
from the requested order, as it does with concurrent writers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudilite.errors import ConfigError
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline
from hudilite.write.conflict import ReadSnapshot, removed_in


class _Layout:
    def __init__(self, layout_version: int, timeline_dir: str) -> None:
        self.layout_version = layout_version
        self.timeline_dir = timeline_dir


V6 = _Layout(1, ".hoodie")
V8 = _Layout(2, ".hoodie/timeline")
A, B, C, D = (f"2026010100000{i}000" for i in (1, 2, 3, 4))


def timeline(tmp_path: Path, layout: _Layout, files: dict[str, float]) -> Timeline:
    """A timeline of ``files`` (name -> modification time, seconds)."""
    folder = tmp_path / layout.timeline_dir
    folder.mkdir(parents=True, exist_ok=True)
    for name, mtime in files.items():
        (folder / name).write_bytes(b"")
        os.utime(folder / name, (mtime, mtime))
    gw = FileSystemGateway(str(tmp_path))
    return Timeline.load(gw, layout)


def test_v8_snapshot_is_the_latest_by_completion_time(tmp_path):
    # B was requested after A but completed first: a read between the two saw B only.
    files = {f"{A}_{C}.commit": 1, f"{B}_{B[:-3]}500.commit": 1, f"{D}.commit.requested": 1}
    tl = timeline(tmp_path, V8, files)
    snap = ReadSnapshot.of(tl)
    assert snap.instant == A
    assert snap.seen == frozenset({A, B})
    assert snap.saw(tl.gw, tl) == {A, B}
    # Named by its instant: everything completed no later than it.
    assert ReadSnapshot.from_instant(tl, A).saw(tl.gw, tl) == {A, B}
    assert ReadSnapshot.from_instant(tl, B).saw(tl.gw, tl) == {B}


def test_v8_exact_snapshot_ignores_commits_completed_after_it(tmp_path):
    tl = timeline(tmp_path, V8, {f"{A}_{B}.commit": 1})
    snap = ReadSnapshot.of(tl)
    later = timeline(tmp_path, V8, {f"{C}_{D}.commit": 1})
    assert snap.saw(later.gw, later) == {A}
    assert ReadSnapshot.from_instant(tl, A).saw(later.gw, later) == {A}


def test_v6_snapshot_named_by_instant_orders_completions_by_file_time(tmp_path):
    """Version 6 records no completion time: A (requested first) completed after B, so a
    read that saw B as its latest instant did not see A."""
    tl = timeline(tmp_path, V6, {f"{A}.commit": 2000, f"{B}.commit": 1000, f"{C}.commit": 500})
    assert ReadSnapshot.of(tl).instant == C
    assert ReadSnapshot.from_instant(tl, B).saw(tl.gw, tl) == {B}
    # Instants requested after the snapshot's count as unseen whatever their file times:
    # a read as of A (time travel) does not read them.
    assert ReadSnapshot.from_instant(tl, A).saw(tl.gw, tl) == {A}
    assert ReadSnapshot.from_instant(tl, C).saw(tl.gw, tl) == {C}
    # A tie of modification times counts as unseen (never a missed conflict).
    tied = timeline(tmp_path / "tied", V6, {f"{A}.commit": 1000, f"{B}.commit": 1000})
    assert ReadSnapshot.from_instant(tied, B).saw(tied.gw, tied) == {B}


def test_empty_table_snapshot_saw_nothing(tmp_path):
    tl = timeline(tmp_path, V8, {})
    snap = ReadSnapshot.of(tl)
    assert snap == ReadSnapshot(None, frozenset())
    later = timeline(tmp_path, V8, {f"{A}_{B}.commit": 1})
    assert snap.saw(later.gw, later) == set()


@pytest.mark.parametrize("bad", [D, "yesterday", ""])
def test_read_snapshot_must_be_a_completed_instant(tmp_path, bad):
    tl = timeline(tmp_path, V8, {f"{A}_{B}.commit": 1, f"{D}.commit.requested": 1})
    with pytest.raises(ConfigError) as info:
        ReadSnapshot.from_instant(tl, bad)
    assert str(info.value) == (
        f"read_snapshot {bad!r} is not a completed instant of the table (its latest is {A})"
    )


def _meta(op: str, stats: dict[str, list[WriteStat]], replaced=None) -> CommitMetadata:
    return CommitMetadata(
        partition_to_write_stats=stats,
        operation_type=op,
        extra_metadata={},
        partition_to_replace_file_ids=replaced or {},
    )


def test_removed_in_counts_deletes_and_replaced_groups_of_the_written_partitions():
    deleting = _meta(
        "UPSERT",
        {
            "p1": [WriteStat("f1", "p1/f1.parquet", "p1", num_deletes=2)],
            "p2": [WriteStat("f2", "p2/f2.parquet", "p2", num_updates=3)],
        },
    )
    assert removed_in(deleting, {"p1", "p2"}) == ["p1"]
    assert removed_in(deleting, {"p2"}) == []
    overwrite = _meta("INSERT_OVERWRITE", {"p3": []}, {"p3": ["f3"], "p4": []})
    assert removed_in(overwrite, {"p1", "p3", "p4"}) == ["p3"]
    # Table services move rows without removing any.
    clustering = _meta("CLUSTER", {"p1": []}, {"p1": ["f1"]})
    compaction = _meta("COMPACT", {"p1": [WriteStat("f1", "p1/f.parquet", "p1", num_deletes=4)]})
    assert removed_in(clustering, {"p1"}) == removed_in(compaction, {"p1"}) == []
