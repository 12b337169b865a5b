"""CALL run_compaction / show_compaction, Hudi's compaction sugar and CALL help() through SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.procedures import ProcedureArgumentError, ProcedureError, UnknownProcedureError
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read, sql_rows


@pytest.fixture
def session(spark: Any, tmp_path: Path) -> Any:
    s = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    for name, kind in (("m", "mor"), ("c", "cow")):
        s.sql(
            f"CREATE TABLE {name} (id INT, ts BIGINT, v STRING) USING hudi "
            f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{kind}')"
        )
    s.sql("INSERT INTO m VALUES (1, 1, 'a'), (2, 1, 'b')")
    s.sql("UPDATE m SET v = 'z' WHERE id = 1")
    return s


def pending(session: Any) -> list[str]:
    tbl = session.table(TableName(None, "m"))
    return [i.requested_time for i in tbl.timeline() if i.action == "compaction"]


def test_schedule_show_and_run(session: Any) -> None:
    scheduled = sql_rows(session, "CALL run_compaction(op => 'schedule', table => 'm')")
    assert len(scheduled) == 1
    instant = scheduled[0][0]
    assert scheduled == [(instant, 1, "REQUESTED")]
    assert pending(session) == [instant]
    assert sql_rows(session, "CALL show_compaction(table => 'm')") == [(instant, 1, "REQUESTED")]
    assert sql_rows(session, "SHOW COMPACTION ON m LIMIT 1") == [(instant, 1, "REQUESTED")]
    # 'run' with a pending plan and nothing new to plan: runs the pending one.
    assert sql_rows(session, "CALL system.run_compaction('execute', 'm')") == [
        (instant, 1, "COMPLETED")
    ]
    assert sql_rows(session, "CALL show_compaction(table => 'm')") == [(instant, 1, "COMPLETED")]
    assert sql_rows(session, "SELECT id, v FROM m ORDER BY id") == [(1, "z"), (2, "b")]
    location = session.entry(TableName(None, "m")).location
    got = hudi_rs_read(location)
    assert sorted(zip(got["id"].to_pylist(), got["v"].to_pylist(), strict=True)) == [
        (1, "z"),
        (2, "b"),
    ]
    # The read-optimized view now sees the compacted update.
    assert sql_rows(session, "SELECT v FROM m_ro WHERE id = 1") == [("z",)]


def test_sugar_and_execute_by_timestamp(session: Any) -> None:
    assert sql_rows(session, "SCHEDULE COMPACTION ON m") != []
    (instant,) = pending(session)
    out = sql_rows(session, f"RUN COMPACTION ON m AT {instant}")
    assert out == [(instant, 1, "COMPLETED")]
    # Nothing left to compact: scheduling again plans nothing and runs nothing.
    assert sql_rows(session, "RUN COMPACTION ON m") == []


def test_errors_name_the_problem(session: Any) -> None:
    with pytest.raises(ProcedureArgumentError, match="invalid op 'compact'"):
        session.sql("CALL run_compaction(op => 'compact', table => 'm')")
    with pytest.raises(ProcedureError, match="copy-on-write table"):
        session.sql("CALL run_compaction(op => 'run', table => 'c')")
    with pytest.raises(ProcedureError, match="no pending compaction at 20200101000000000"):
        session.sql(
            "CALL run_compaction(op => 'execute', table => 'm', timestamp => 20200101000000000)"
        )
    with pytest.raises(hudilite.TableNotFoundError, match=r"table default\.nope not found"):
        session.sql("CALL show_compaction(table => 'nope')")
    with pytest.raises(UnknownProcedureError, match="did you mean run_compaction"):
        session.sql("CALL run_compactoin(op => 'run', table => 'm')")
    assert pending(session) == []


def test_help_through_sql(session: Any) -> None:
    text = sql_rows(session, "CALL help()")[0][0]
    assert "\trun_compaction\t" in text and "\tshow_commits\t" in text
    detail = sql_rows(session, "CALL help(cmd => 'run_compaction')")[0][0]
    assert detail.startswith("parameters:\n")
    assert "op" in detail.splitlines()[2]
