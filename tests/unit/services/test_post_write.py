"""The inline services policy after a write (hudilite/services/post_write.py), run without
the Table facade and without Spark: compaction in this process, cleaning and archival."""

from __future__ import annotations

import pytest

from hudilite.services.post_write import after_write
from hudilite.write.result import WriteResult
from tests.helpers import hudi_rs_read, rows
from tests.unit.services.test_compaction_plan import DATA, MiniTable, mor_with_logs

#: The services this test is not about, turned off.
NO_CLEAN = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


def _actions(t: MiniTable) -> list[tuple[str, str]]:
    return [(i.action, i.state.name) for i in t.state().timeline.instants]


@pytest.mark.parametrize("version", [6, 8])
def test_inline_compaction_runs_in_process_and_keeps_earlier_extras(tmp_path, version):
    t, times = mor_with_logs(tmp_path / "t", version)
    before = t.read()
    written = WriteResult(times[-1], "upsert", extra={"note": "kept"})
    opts = {
        **NO_CLEAN,
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "1",
    }
    out = after_write(t.gw, written, opts)
    assert set(out.extra) == {"note", "compactions"}
    assert out.extra["note"] == "kept"
    (done,) = out.extra["compactions"]
    # Only group a-0 (partition x) has log files: one operation, its live rows k1 and k9
    # (k2 was deleted).
    assert (done.num_file_groups, done.partitions, done.num_records_written) == (1, ("x",), 2)
    assert _actions(t)[-1] == ("commit", "COMPLETED")
    assert out.instant_time == times[-1] and written.extra == {"note": "kept"}
    assert t.read() == before
    assert rows(hudi_rs_read(t.path, read_optimized=True), DATA) == before


def test_schedule_inline_only_plans(tmp_path):
    t, times = mor_with_logs(tmp_path / "t", 8)
    opts = {
        **NO_CLEAN,
        "hoodie.compact.schedule.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "1",
    }
    out = after_write(t.gw, WriteResult(times[-1], "upsert"), opts)
    plan = out.extra["scheduled_compaction"]
    assert set(out.extra) == {"scheduled_compaction"}
    assert _actions(t)[-1] == ("compaction", "REQUESTED")
    assert t.state().timeline.instants[-1].requested_time == plan.instant_time


def test_clean_and_archive_after_a_write(tmp_path):
    t = MiniTable(tmp_path / "t", version=6, mor=False)
    times = [t.write({("x", "a-0"): [("k1", i, f"v{i}")]}) for i in range(5)]
    opts = {
        "hoodie.cleaner.commits.retained": "1",
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
    }
    out = after_write(t.gw, WriteResult(times[-1], "upsert"), opts)
    clean, archived = out.extra["clean"], out.extra["archive"]
    # Retaining one commit keeps the two newest versions of the file group: three go.
    assert clean.num_files_deleted == 3
    assert len(t.files("a-0")) == 2
    # Six completed instants (five commits, one clean) beyond keep.max.commits=3: the
    # archiver keeps the two newest commits and the clean.
    assert archived.num_archived == 3
    assert [i.requested_time for i in t.state().timeline.commits()] == times[3:]
    assert t.read() == [("k1", 4, "v4", "x")]
    assert rows(hudi_rs_read(t.path), DATA) == [("k1", 4, "v4", "x")]


def test_services_off_leave_the_result_alone(tmp_path):
    t = MiniTable(tmp_path / "t", version=8, mor=False)
    times = [t.write({("x", "a-0"): [("k1", i, f"v{i}")]}) for i in range(3)]
    written = WriteResult(times[-1], "upsert")
    out = after_write(t.gw, written, NO_CLEAN)
    assert out == written
    assert [a for a, _ in _actions(t)] == ["commit"] * 3
