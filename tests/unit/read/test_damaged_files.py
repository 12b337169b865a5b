"""Damaged files are never silently skipped (issue 9 item 8), without a JVM.

A base or log file a completed commit names that is missing or truncated fails the plan
naming the file (or, with ``hoodie.hudilite.read.ignore.missing.files``, leaves its file
group out with a warning); a garbage commit file names the file and instant.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from hudilite.errors import CorruptFileError, MissingFileError
from hudilite.filegroup import FileSystemView
from hudilite.read.file_group_reader import read_file_slice
from hudilite.read.planner import plan_incremental, plan_snapshot
from hudilite.spark.task_errors import read_error_from
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.timeline import Timeline
from tests.unit.filegroup.test_fs_view import T, TableLayout

COW = "sample_table/cow/v6_nonpartitioned.zip"
OLD_BASE = "a079bdb3-731c-4894-b855-abfcd6921007-0_0-182-253_20240418173550988.parquet"
NEW_BASE = "a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906.parquet"
MOR = "sample_table/mor/parquet/v6_nonpartitioned.zip"
LOG = ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43"
MOR_BASE = "d206069c-22c8-4532-b9ea-3cf4282342c4-0_0-13-23_20250117083125837.parquet"


def state_of(base: Path) -> TableState:
    return TableState.load(FileSystemGateway(str(base)))


def truncate(path: Path, keep: int) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:keep])


def test_intact_tables_plan_as_before(shared_fixture):
    cow = plan_snapshot(state_of(shared_fixture(COW)))
    assert cow.native_paths == [NEW_BASE]
    mor = plan_snapshot(state_of(shared_fixture(MOR)))
    assert [s.base_file.file_name for s in mor.merge_slices if s.base_file] == [MOR_BASE]


def test_missing_newest_base_fails_instead_of_showing_the_older_version(shared_fixture):
    base = shared_fixture(COW)
    (base / NEW_BASE).unlink()
    with pytest.raises(MissingFileError) as err:
        plan_snapshot(state_of(base))
    message = str(err.value)
    assert str(base / NEW_BASE) in message and "commit 20240418173551906" in message
    # Incremental reads check the groups they touch too.
    with pytest.raises(MissingFileError, match=NEW_BASE):
        plan_incremental(state_of(base), "20240418173550988")


def test_ignore_option_leaves_the_group_out_with_a_warning(shared_fixture, caplog):
    base = shared_fixture(COW)
    (base / NEW_BASE).unlink()
    with caplog.at_level(logging.WARNING, logger="hudilite.read.file_checks"):
        plan = plan_snapshot(state_of(base), ignore_missing_files=True)
    # Not the older version of the group: its rows are in the missing file.
    assert plan.native_paths == [] and plan.merge_slices == []
    assert NEW_BASE in caplog.text and "left out of the read" in caplog.text


def test_truncated_base_file_fails_naming_it(shared_fixture):
    base = shared_fixture(COW)
    truncate(base / NEW_BASE, 100)
    with pytest.raises(CorruptFileError, match=rf"{NEW_BASE} .*truncated: 100 of \d+ bytes"):
        plan_snapshot(state_of(base))


def test_missing_or_truncated_log_file_fails_naming_it(shared_fixture):
    base = shared_fixture(MOR)
    log = base / LOG
    size = log.stat().st_size
    truncate(log, size - 10)
    with pytest.raises(CorruptFileError, match=rf"log file .*{LOG}.*truncated: {size - 10} of"):
        plan_snapshot(state_of(base))
    log.unlink()
    with pytest.raises(MissingFileError, match=rf"log file .*{LOG} .*is missing"):
        plan_snapshot(state_of(base))


def test_a_file_vanishing_after_planning_is_named_by_the_slice_reader(shared_fixture):
    base = shared_fixture(MOR)
    state = state_of(base)
    plan = plan_snapshot(state)
    (base / MOR_BASE).unlink()
    (slice_,) = [s for s in plan.merge_slices if s.base_file is not None]
    with pytest.raises(MissingFileError, match=MOR_BASE):
        read_file_slice(
            state.gw,
            slice_,
            merge_spec=state.merge_spec(state.options()),
            schema=state.storage_schema,
            is_instant_visible=plan.is_instant_visible,
        )


@pytest.mark.parametrize(
    "content", [b"\x00\x01garbage{", b"[1, 2]", b'{"partitionToWriteStats": [1]}', b"Obj\x01"]
)
def test_garbage_commit_file_names_file_and_instant(shared_fixture, content):
    base = shared_fixture(COW)
    commit = base / ".hoodie" / "20240418173551906.commit"
    commit.write_bytes(content)
    with pytest.raises(CorruptFileError) as err:
        plan_snapshot(state_of(base))
    assert str(commit) in str(err.value) and "20240418173551906" in str(err.value)


@pytest.mark.parametrize(
    ("message", "error", "path"),
    [
        (
            "[PATH_NOT_FOUND] Path does not exist: file:/t/p/f-0_1-2-3_20240101000000000.parquet."
            " SQLSTATE: 42K03",
            MissingFileError,
            "file:/t/p/f-0_1-2-3_20240101000000000.parquet",
        ),
        (
            "org.apache.spark.SparkException: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] "
            "Could not read footer for file: file:///t/a_1-2-3_20240101000000000.parquet. ",
            CorruptFileError,
            "file:///t/a_1-2-3_20240101000000000.parquet",
        ),
    ],
)
def test_spark_file_errors_become_hudilite_errors_naming_the_file(message, error, path):
    mapped = read_error_from(RuntimeError(message))
    assert type(mapped) is error and path in str(mapped)
    assert read_error_from(RuntimeError("[DIVIDE_BY_ZERO] Division by zero")) is None


def test_writers_get_no_slice_of_a_group_whose_newest_base_is_missing(shared_fixture):
    # Issue 26: the listing-based view offered writers the group's previous version (an
    # INSERT packed into it, reverting the committed update). The latest slices refuse.
    base = shared_fixture(COW)
    kept = base.parent / "kept.parquet"
    shutil.move(base / NEW_BASE, kept)
    view = state_of(base).view
    expected = (
        f"base file {base / NEW_BASE} (written by commit 20240418173551906) is missing: a "
        "write cannot build on its file group (it would revert that commit); put the file "
        "back, or roll back or restore the table past that commit"
    )
    for call in (view.latest_slices, lambda: view.small_files("", 1 << 30)):
        with pytest.raises(MissingFileError) as err:
            call()
        assert str(err.value) == expected
    # Reads (which check with their own option), time travel and inspection still list.
    assert [s.base_file.file_name for s in view.latest_slices(check=False)] == [OLD_BASE]
    as_of = view.latest_slices(as_of="20240418173550988")
    assert [s.base_file.file_name for s in as_of] == [OLD_BASE]
    # Put back, the writers' slices are the table again.
    view.refresh()
    shutil.move(kept, base / NEW_BASE)
    assert [s.base_file.file_name for s in view.latest_slices()] == [NEW_BASE]


def test_damage_elsewhere_does_not_stop_a_write_to_other_partitions(tmp_path):
    # The refusal covers the partitions the caller selects, not the whole table.
    layout = TableLayout(tmp_path, table_type="COPY_ON_WRITE")
    stats = {}
    for p in ("a", "b"):
        layout.partition(p)
        name = f"{p}/f{p}-0_0-1-2_{T(1)}.parquet"
        layout.touch(name, 10)
        stats[p] = [WriteStat(file_id=f"f{p}-0", path=name, partition_path=p,
                              file_size_in_bytes=10)]  # fmt: skip
    layout.instant(T(1), COMMIT, content=layout.metadata(stats))
    (tmp_path / "b" / f"fb-0_0-1-2_{T(1)}.parquet").unlink()
    view = FileSystemView(layout.gw, layout.config, Timeline.load(layout.gw, layout.config))
    assert [s.file_id for s in view.latest_slices(partitions=["a"])] == ["fa-0"]
    with pytest.raises(MissingFileError, match=r"base file .*/b/fb-0_0-1-2_.* is missing"):
        view.latest_slices(partitions=["b"])
    with pytest.raises(MissingFileError, match="fb-0"):
        view.latest_slices()
