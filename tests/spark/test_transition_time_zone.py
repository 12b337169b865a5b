"""One state transition time for one instant (issue 28): on a version 6 table, whose file
names carry no completion time, every procedure derives it from the timeline file's
modification time in the table's timeline zone. On a ``LOCAL`` table that is the machine's
wall-clock time; ``show_cleans`` once printed UTC while ``show_commits`` printed local."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from hudilite.sqlext.statements import TableName
from hudilite.timeline.instant import CLEAN
from tests.helpers import call

#: A zone whose wall clock differs from UTC by a non-whole hour (05:30, no DST).
ZONE = "Asia/Kolkata"


@pytest.fixture
def kolkata_local_zone() -> Iterator[None]:
    """The process's local zone is Asia/Kolkata while the test runs."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = ZONE
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_show_commits_and_show_cleans_print_one_local_time(
    s: Any, kolkata_local_zone: None
) -> None:
    s.sql(
        "CREATE TABLE t (id INT, ts BIGINT, v STRING) USING hudi TBLPROPERTIES "
        "(primaryKey='id', preCombineField='ts', 'hoodie.write.table.version'='6', "
        "'hoodie.parquet.small.file.limit'='0')"
    )
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    for n in range(3):
        s.sql(f"INSERT INTO t VALUES (1, {n}, 'v{n}')")
    assert len(call(s, "run_clean(table => 't', retain_commits => 1)")) == 1
    tbl = s.table(TableName(None, "t"))
    # The table's instants are LOCAL wall-clock times (Java's default zone).
    props = os.path.join(tbl.path, ".hoodie", "hoodie.properties")
    with open(props, encoding="utf-8") as f:
        text = f.read()
    assert "hoodie.table.timeline.timezone=UTC\n" in text
    with open(props, "w", encoding="utf-8") as f:
        f.write(text.replace("timeline.timezone=UTC", "timeline.timezone=LOCAL"))
    state = tbl.state()
    assert not state.config.timeline_utc
    commit = state.timeline.commits()[-1]
    clean = next(i for i in state.timeline.completed() if i.action == CLEAN)
    # One modification time on both completed files: 2024-01-01 00:00:00.123 UTC.
    ms = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp() * 1000) + 123
    for inst in (commit, clean):
        path = os.path.join(tbl.path, ".hoodie", state.timeline.file_name(inst))
        os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))

    shown_commit = next(
        r for r in call(s, "show_commits(table => 't')") if r[0] == commit.requested_time
    )
    shown_clean = call(s, "show_cleans(table => 't')")
    assert [r[0] for r in shown_clean] == [clean.requested_time]
    # 00:00:00.123 UTC is 05:30:00.123 in Kolkata.
    assert shown_commit[1] == shown_clean[0][1] == "20240101053000123"
