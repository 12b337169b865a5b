"""FileSystemView on hand-made table layouts: partitions, visibility, slicing (v6 and v8).

Files are empty placeholders (the view never reads data files); instants are written
directly as timeline files so every requested and completion time is exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.config import TableConfig
from hudilite.errors import CorruptFileError
from hudilite.filegroup import BaseFile, FileGroup, FileSlice, FileSystemView, LogFile
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.timeline.instant import (
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudilite.timeline.metadata import CommitMetadata, WriteStat, write_avro_record
from hudilite.timeline.timeline import Timeline

TOKEN = "0-1-2"


def T(n: int) -> str:
    """The instant time ``n`` milliseconds after 2024-01-01 00:00:00 (17 digits)."""
    return f"20240101000000{n:03d}"


class TableLayout:
    """A table folder built file by file: timeline instants, partitions, data files."""

    def __init__(self, root: Path, version: int = 6, table_type: str = "MERGE_ON_READ") -> None:
        self.config = TableConfig.new(
            "t", table_type=table_type, table_version=version, record_key_fields=("id",)
        )
        self.gw = FileSystemGateway(str(root))
        self.gw.mkdirs(self.config.timeline_dir)

    def instant(
        self,
        t: str,
        action: str,
        state: State = State.COMPLETED,
        completion: str | None = None,
        content: bytes = b"",
    ) -> None:
        """Write one timeline file (only the most advanced state matters to the view)."""
        inst = Instant(t, action, state, completion)
        name = inst.file_name(self.config.layout_version)
        self.gw.write_bytes(f"{self.config.timeline_dir}/{name}", content)

    def metadata(
        self,
        stats: dict[str, list[WriteStat]] | None = None,
        replaced: dict[str, list[str]] | None = None,
    ) -> bytes:
        """Commit metadata in the table's encoding (JSON for v6, Avro for v8)."""
        meta = CommitMetadata(
            partition_to_write_stats=stats or {},
            operation_type="INSERT_OVERWRITE" if replaced else "UPSERT",
            partition_to_replace_file_ids=replaced or {},
        )
        return meta.to_bytes(self.config.layout_version, replace=bool(replaced))

    def partition(self, p: str) -> None:
        self.gw.write_bytes(
            f"{p}/.hoodie_partition_metadata" if p else ".hoodie_partition_metadata", b""
        )

    def touch(self, rel: str, size: int = 0) -> str:
        self.gw.write_bytes(rel, b"x" * size)
        return rel

    def base(self, p: str, fid: str, t: str, size: int = 100, token: str = TOKEN) -> str:
        name = f"{fid}_{token}_{t}.parquet"
        return self.touch(f"{p}/{name}" if p else name, size)

    def log(self, p: str, fid: str, t: str, version: int = 1, size: int = 10) -> str:
        name = f".{fid}_{t}.log.{version}_{TOKEN}"
        return self.touch(f"{p}/{name}" if p else name, size)

    def view(self) -> FileSystemView:
        return FileSystemView(self.gw, self.config, Timeline.load(self.gw, self.config))


def compaction_plan(*groups: tuple[str, str, str]) -> bytes:
    """A HoodieCompactionPlan over ``(partition, file_id, base_instant)`` groups."""
    ops = [
        {"baseInstantTime": t, "fileId": fid, "partitionPath": p, "deltaFilePaths": []}
        for p, fid, t in groups
    ]
    return write_avro_record("HoodieCompactionPlan", {"operations": ops, "version": 2})


def shape(slices: list[FileSlice]) -> list[tuple[str, str | None, list[str]]]:
    """(base instant, base path, log paths) of each slice: compact exact comparisons."""
    return [(s.base_instant, s.base_path, s.log_paths) for s in slices]


# ---------------------------------------------------------------------------------- listing


def test_partitions_nested_hidden_and_unmarked(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    for p in ("a=1/b=2", "a=1/b=3", "x"):
        t.partition(p)
    t.touch("y/.hoodie_partition_metadata.parquet")  # Hudi's base-format variant
    t.base("nometa", "fg1-0", T(1))  # a folder without partition metadata is no partition
    t.touch(".hidden/.hoodie_partition_metadata")
    t.touch(".hoodie/metadata/files/.hoodie_partition_metadata")
    assert t.view().partitions() == ["a=1/b=2", "a=1/b=3", "x", "y"]


def test_non_partitioned_table_is_partition_empty_string(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("")
    t.instant(T(1), COMMIT)
    path = t.base("", "fg1-0", T(1), size=7)
    view = t.view()
    assert view.partitions() == [""]
    assert view.latest_slices() == [
        FileSlice("", "fg1-0", T(1), BaseFile("", BaseFileName("fg1-0", TOKEN, T(1)), 7))
    ]
    assert view.latest_slices()[0].base_path == path == f"fg1-0_0-1-2_{T(1)}.parquet"


def test_junk_files_are_ignored(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    t.partition("p")
    t.instant(T(1), DELTA_COMMIT)
    base = t.base("p", "fg1-0", T(1))
    log = t.log("p", "fg1-0", T(1))
    for junk in (
        f"p/.fg1-0_{TOKEN}_{T(1)}.parquet.crc",
        f"p/.fg1-0_{T(1)}.log.1_{TOKEN}.crc",
        f"p/.fg1-0_{T(1)}.log.2_{TOKEN}.cdc",  # change-data-capture log, not table data
        f"p/.fg1-0_{T(1)}.archive.3_{TOKEN}",
        f"p/fg1-0_{TOKEN}_{T(1)}.parquet.crc",
        f"p/.fg1-0_{TOKEN}_{T(1)}.parquet.0af3.tmp",
        f"p/fg2-0_{TOKEN}_{T(1)}.orc",  # not the table's base file format
        "p/.DS_Store",
        "p/_SUCCESS",
        "p/notes.txt",
    ):
        t.touch(junk)
    [only] = t.view().latest_slices(partitions="p")  # a single partition as a string
    assert (only.base_path, only.log_paths) == (base, [log])


# ------------------------------------------------------------------------------ version 6


def test_v6_pending_failed_and_archived_instants(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.instant(T(10), COMMIT)
    t.instant(T(20), COMMIT, State.INFLIGHT)  # running or crashed
    t.instant(T(30), COMMIT, State.REQUESTED)  # failed before writing inflight
    archived = t.base("p", "old-0", T(5))  # before the active timeline: committed
    b10 = t.base("p", "fg1-0", T(10))
    t.base("p", "fg1-0", T(20))
    t.base("p", "fg2-0", T(30))
    t.base("p", "fg3-0", T(40))  # instant not on the timeline at all, newer than its start
    view = t.view()
    assert [s.base_path for s in view.latest_slices()] == [b10, archived]
    assert [s.base_path for s in view.latest_slices(as_of=T(9))] == [archived]


def test_v6_cow_versions_and_time_travel(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.instant(T(10), COMMIT)
    t.instant(T(20), COMMIT)
    b10 = t.base("p", "fg1-0", T(10))
    b20 = t.base("p", "fg1-0", T(20))
    view = t.view()
    [group] = view.file_groups()
    assert group.group_key == ("p", "fg1-0")
    assert [s.base_path for s in group.slices] == [b10, b20]
    assert shape(view.latest_slices()) == [(T(20), b20, [])]
    assert shape(view.latest_slices(as_of=T(15))) == [(T(10), b10, [])]
    assert view.slice_as_of("p", "fg1-0", T(10)).base_path == b10  # type: ignore[union-attr]
    assert view.slice_as_of("p", "fg1-0", T(9)) is None
    assert view.slice_as_of("p", "nope-0", None) is None


def test_v6_replaced_file_groups(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.instant(T(10), COMMIT)
    a = t.base("p", "fgA-0", T(10))
    b = t.base("p", "fgB-0", T(10))
    t.instant(T(20), REPLACE_COMMIT, content=t.metadata(replaced={"p": ["fgA-0"]}))
    c = t.base("p", "fgC-0", T(20))
    # A pending insert overwrite changes nothing yet.
    t.instant(T(30), REPLACE_COMMIT, State.INFLIGHT)
    t.base("p", "fgD-0", T(30))
    view = t.view()
    assert [s.base_path for s in view.latest_slices()] == [b, c]
    assert [s.base_path for s in view.latest_slices(as_of=T(10))] == [a, b]
    assert view.replaced_file_groups() == {("p", "fgA-0")}
    assert view.replaced_file_groups(as_of=T(19)) == set()
    assert [g.file_id for g in view.file_groups(include_replaced=True)] == [
        "fgA-0",
        "fgB-0",
        "fgC-0",
    ]
    assert view.slice_as_of("p", "fgA-0") is None


def test_v6_logs_join_the_slice_named_in_them(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT)
    t.instant(T(20), DELTA_COMMIT)
    t.instant(T(30), DELTA_COMMIT)
    b10 = t.base("p", "fg1-0", T(10))
    l2 = t.log("p", "fg1-0", T(10), version=2)
    l1 = t.log("p", "fg1-0", T(10), version=1)
    t.instant(T(40), DELTA_COMMIT, State.INFLIGHT)
    t.log("p", "fg9-0", T(40))  # log-only group of a pending write: invisible
    only_logs = t.log("p", "fg8-0", T(30))  # log-only group of a completed write
    view = t.view()
    assert shape(view.latest_slices()) == [(T(10), b10, [l1, l2]), (T(30), None, [only_logs])]
    [s] = view.latest_slices(partitions=lambda p: p == "p", as_of=T(10))
    # v6 logs do not say which delta commit wrote them: the log reader filters blocks.
    assert s.log_paths == [l1, l2]
    assert s.log_files[0].completion_time is None


def v6_pending_compaction(t: TableLayout) -> tuple[str, str, str]:
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT)
    b10 = t.base("p", "fg1-0", T(10))
    t.instant(T(20), DELTA_COMMIT)
    l10 = t.log("p", "fg1-0", T(10))
    t.instant(T(30), COMPACTION, State.REQUESTED, content=compaction_plan(("p", "fg1-0", T(10))))
    t.instant(T(40), DELTA_COMMIT)
    l30 = t.log("p", "fg1-0", T(30))  # written after the plan: names the compaction
    return b10, l10, l30


def testv6_pending_compaction_merges_previous_slice(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    b10, l10, l30 = v6_pending_compaction(t)
    view = t.view()
    [group] = view.file_groups()
    assert shape(list(group.slices)) == [(T(10), b10, [l10]), (T(30), None, [l30])]
    assert shape(view.latest_slices()) == [(T(10), b10, [l10, l30])]
    assert shape(view.latest_slices(as_of=T(25))) == [(T(10), b10, [l10])]
    assert view.pending_file_groups() == {("p", "fg1-0")}
    assert view.files_of_instant(T(30)) == []  # logs named T30 were written by T40


def test_v6_completed_compaction_starts_new_slice(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    b10, l10, l30 = v6_pending_compaction(t)
    t.instant(T(30), COMMIT)
    b30 = t.base("p", "fg1-0", T(30))
    view = t.view()
    assert shape(view.latest_slices()) == [(T(30), b30, [l30])]
    assert shape(view.latest_slices(as_of=T(25))) == [(T(10), b10, [l10])]
    assert view.pending_file_groups() == set()


def test_v6_files_of_instant(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    t.partition("p")
    t.partition("q")
    t.instant(T(10), DELTA_COMMIT)
    t.base("p", "fg1-0", T(10))
    appended = t.log("p", "fg1-0", T(10))
    stat = WriteStat("fg1-0", appended, "p", prev_commit=T(10), log_files=[appended[2:]])
    t.instant(T(20), DELTA_COMMIT, content=t.metadata({"p": [stat]}))
    t.instant(T(30), DELTA_COMMIT, State.INFLIGHT)
    new_base = t.base("q", "fg2-0", T(30))
    new_log = t.log("q", "fg3-0", T(30))
    t.base("nometa", "fg4-0", T(30))  # a partition folder the crash left without metadata
    view = t.view()
    assert view.files_of_instant(T(20)) == [appended]
    assert view.files_of_instant(T(30)) == [
        f"nometa/fg4-0_{TOKEN}_{T(30)}.parquet",
        new_log,  # "q/.fg3-0..." sorts before "q/fg2-0..."
        new_base,
    ]
    assert view.files_of_instant(T(99)) == []


def test_small_files(tmp_path: Path) -> None:
    t = TableLayout(tmp_path)
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT)
    small = t.base("p", "fgA-0", T(10), size=10)
    t.base("p", "fgB-0", T(10), size=1000)  # too big
    t.base("p", "fgC-0", T(10), size=10)
    t.log("p", "fgC-0", T(10))  # has logs
    t.base("p", "fgD-0", T(10), size=10)
    t.instant(T(20), COMPACTION, State.REQUESTED, content=compaction_plan(("p", "fgD-0", T(10))))
    t.base("p", "fgE-0", T(10), size=10)
    t.instant(T(30), DELTA_COMMIT, State.INFLIGHT)
    t.base("p", "fgE-0", T(30), size=10)  # an inflight write is rewriting it
    view = t.view()
    [found] = view.small_files("p", 100)
    assert found.path == small and found.size == 10
    assert view.small_files("p", 10) == []
    assert view.small_files("elsewhere", 100) == []


# ------------------------------------------------------------------------------ version 8


def v8_mor_table(tmp_path: Path) -> tuple[TableLayout, dict[str, str]]:
    """fg1: base@10; logs of E (T20, done 25), D (T30, done 60), G (T70, done 90),
    F (T75, done 80); compaction T40 (done 50) includes only E's log; H (T100) pending."""
    t = TableLayout(tmp_path, version=8)
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT, completion=T(11))
    t.instant(T(20), DELTA_COMMIT, completion=T(25))
    t.instant(T(30), DELTA_COMMIT, completion=T(60))
    t.instant(T(40), COMMIT, completion=T(50))  # the completed compaction
    t.instant(T(70), DELTA_COMMIT, completion=T(90))
    t.instant(T(75), DELTA_COMMIT, completion=T(80))
    t.instant(T(100), DELTA_COMMIT, State.INFLIGHT)
    files = {
        "b10": t.base("p", "fg1-0", T(10)),
        "b40": t.base("p", "fg1-0", T(40)),
        "E": t.log("p", "fg1-0", T(20)),
        "D": t.log("p", "fg1-0", T(30)),
        "G": t.log("p", "fg1-0", T(70)),
        "F": t.log("p", "fg1-0", T(75)),
        "H": t.log("p", "fg1-0", T(100)),
    }
    return t, files


def test_v8_logs_attach_by_completion_time_and_order_by_it(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    view = t.view()
    [group] = view.file_groups()
    assert shape(list(group.slices)) == [
        (T(10), f["b10"], [f["E"]]),
        (T(40), f["b40"], [f["D"], f["F"], f["G"]]),  # completion order 60, 80, 90
    ]
    [latest] = view.latest_slices()
    assert [log.completion_time for log in latest.log_files] == [T(60), T(80), T(90)]
    assert latest.base_file is not None and latest.base_file.completion_time == T(50)


def test_v8_as_of_compares_requested_times(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    view = t.view()
    # The compaction (requested 40) is visible as of 45 although it completed at 50.
    assert shape(view.latest_slices(as_of=T(45))) == [(T(40), f["b40"], [f["D"]])]
    # As of 35 base@40 does not exist yet: D's log (done 60) joins the slice of base@10.
    assert shape(view.latest_slices(as_of=T(35))) == [(T(10), f["b10"], [f["E"], f["D"]])]
    assert shape(view.latest_slices(as_of=T(10))) == [(T(10), f["b10"], [])]


def test_v8_completed_by_compares_completion_times(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    view = t.view()
    assert shape(view.latest_slices(completed_by=T(55))) == [(T(40), f["b40"], [])]
    assert shape(view.latest_slices(completed_by=T(85))) == [(T(40), f["b40"], [f["D"], f["F"]])]
    assert shape(view.latest_slices(completed_by=T(45))) == [(T(10), f["b10"], [f["E"]])]


def test_v8_files_of_instant_and_pending_work(tmp_path: Path) -> None:
    t, f = v8_mor_table(tmp_path)
    view = t.view()
    assert view.files_of_instant(T(100)) == [f["H"]]
    assert view.files_of_instant(T(40)) == [f["b40"]]
    assert view.pending_file_groups() == {("p", "fg1-0")}


def test_v8_pending_compaction_needs_no_special_slice(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, version=8)
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT, completion=T(11))
    b10 = t.base("p", "fg2-0", T(10))
    t.instant(T(40), COMPACTION, State.REQUESTED, content=compaction_plan(("p", "fg2-0", T(10))))
    t.instant(T(50), DELTA_COMMIT, completion=T(55))
    l50 = t.log("p", "fg2-0", T(50))
    view = t.view()
    assert shape(view.latest_slices()) == [(T(10), b10, [l50])]
    assert view.small_files("p", 10**9) == []


def test_v8_log_only_file_group(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, version=8)
    t.partition("p")
    t.instant(T(10), DELTA_COMMIT, completion=T(12))
    t.instant(T(20), DELTA_COMMIT, completion=T(22))
    l10 = t.log("p", "fg3-0", T(10))
    l20 = t.log("p", "fg3-0", T(20))
    view = t.view()
    assert view.latest_slices() == [
        FileSlice(
            "p",
            "fg3-0",
            T(10),
            None,
            (
                LogFile("p", LogFileName("fg3-0", T(10), 1, TOKEN), 10, T(12)),
                LogFile("p", LogFileName("fg3-0", T(20), 1, TOKEN), 10, T(22)),
            ),
        )
    ]
    assert view.latest_slices()[0].log_paths == [l10, l20]


def test_v8_clustering_replaces_groups(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, version=8, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.instant(T(10), COMMIT, completion=T(11))
    a = t.base("p", "fgA-0", T(10))
    b = t.base("p", "fgB-0", T(10))
    replaced = t.metadata(replaced={"p": ["fgA-0", "fgB-0"]})
    t.instant(T(20), REPLACE_COMMIT, completion=T(30), content=replaced)
    c = t.base("p", "fgC-0", T(20), size=5)
    plan = write_avro_record(
        "HoodieRequestedReplaceMetadata",
        {
            "operationType": "CLUSTER",
            "clusteringPlan": {
                "inputGroups": [{"slices": [{"fileId": "fgC-0", "partitionPath": "p"}]}],
            },
        },
    )
    t.instant(T(40), CLUSTERING, State.REQUESTED, content=plan)
    view = t.view()
    assert [s.base_path for s in view.latest_slices()] == [c]
    assert [s.base_path for s in view.latest_slices(as_of=T(15))] == [a, b]
    assert [s.base_path for s in view.latest_slices(completed_by=T(25))] == [a, b]
    assert view.pending_file_groups() == {("p", "fgC-0")}
    assert view.small_files("p", 100) == []


def test_file_group_helpers() -> None:
    name = BaseFileName("fg-0", TOKEN, T(1))
    base = BaseFile("a=1/b=2", name, 3)
    log = LogFile("a=1/b=2", LogFileName("fg-0", T(1), 2, TOKEN), 4)
    first = FileSlice("a=1/b=2", "fg-0", T(1), base, (log,))
    second = FileSlice("a=1/b=2", "fg-0", T(2), None, ())
    group = FileGroup("a=1/b=2", "fg-0", (first, second))
    assert first.paths == [
        f"a=1/b=2/fg-0_0-1-2_{T(1)}.parquet",
        f"a=1/b=2/.fg-0_{T(1)}.log.2_0-1-2",
    ]
    assert first.total_size == 7 and first.has_logs and not first.is_empty
    assert second.is_empty and second.base_path is None
    assert group.latest_slice is second and group.slice_at(T(1)) is first
    assert group.base_files() == [base]
    assert base.group_key == log.group_key == group.group_key == ("a=1/b=2", "fg-0")


@pytest.mark.parametrize("version", [6, 8])
def test_empty_table(tmp_path: Path, version: int) -> None:
    view = TableLayout(tmp_path, version=version).view()
    assert view.partitions() == []
    assert view.latest_slices() == []
    assert view.file_groups() == []
    assert view.visibility().timeline_start is None


def test_duplicate_base_files_prefer_the_committed_one(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.base("p", "fg1-0", T(10), token="0-1-2")  # a retried task's leftover
    kept = t.base("p", "fg1-0", T(10), token="1-1-3")
    t.base("p", "fg2-0", T(10), token="0-1-2")
    t.base("p", "fg2-0", T(10), token="1-1-3")
    stat = WriteStat("fg1-0", kept, "p")
    t.instant(T(10), COMMIT, content=t.metadata({"p": [stat]}))
    assert [s.base_path for s in t.view().latest_slices()] == [
        kept,
        f"p/fg2-0_0-1-2_{T(10)}.parquet",  # not in the metadata: first by name
    ]


def test_corrupt_replace_metadata_raises(tmp_path: Path) -> None:
    t = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    t.partition("p")
    t.instant(T(10), COMMIT)
    t.base("p", "fgA-0", T(10))
    t.instant(T(20), REPLACE_COMMIT, content=b"{not json")
    with pytest.raises(CorruptFileError):
        t.view().latest_slices()
