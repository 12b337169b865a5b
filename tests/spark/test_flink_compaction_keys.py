"""Flink's compaction keys on a merge-on-read table created in SQL (issue 25, point 6).

``'compaction.schedule.enabled' = 'true', 'compaction.async.enabled' = 'true',
'compaction.trigger.strategy' = 'num_commits', 'compaction.delta_commits' = '2'`` given as
table options reach the compaction after every write: Flink's asynchronous compaction runs
beside its stream, and a batch write has none to run beside, so ``compaction.async.enabled``
stands for ``hoodie.compact.inline`` (a plan is made when the trigger fires and run at
once); ``compaction.async.enabled = 'false'`` with ``compaction.schedule.enabled = 'true'``
only plans, as Flink leaves its plans to the offline compactor.

A compaction merges log files into base files, and only writes that leave log files give it
anything to do: updates of stored keys. Records with new keys go into small base files,
rewritten whole (Hudi's Spark writer does the same when its index cannot look into logs;
Flink's writer logs every record), so INSERTs of new keys alone trigger the plan with
nothing in it: :func:`test_new_keys_alone_leave_nothing_to_compact`.

The writes name their operation (``hoodie.spark.sql.insert.into.operation``), so what
INSERT INTO does by default on a keyed table does not change what is tested here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read, rows

FLINK_KEYS = (
    "'compaction.schedule.enabled' = 'true', 'compaction.async.enabled' = '{run}', "
    "'compaction.trigger.strategy' = 'num_commits', 'compaction.delta_commits' = '2'"
)
COLS = ["id", "name", "ts", "city"]


def _create(session: Any, run: str = "true") -> str:
    session.sql(
        "CREATE TABLE f (id INT, name STRING, ts BIGINT, city STRING) USING hudi "
        "PARTITIONED BY (city) TBLPROPERTIES (type = 'mor', primaryKey = 'id', "
        f"preCombineField = 'ts', {FLINK_KEYS.format(run=run)})"
    )
    session.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    return str(session.entry(TableName(None, "f")).location)


def _timeline(path: str) -> list[str]:
    """The table's instants in time order as ``action`` or ``action.state`` (pending)."""
    out = []
    for f in sorted((Path(path) / ".hoodie").iterdir()):
        parts = f.name.split(".")
        if not parts[0].isdigit():
            continue
        out.append((parts[0], ".".join(parts[1:])))
    completed = {t for t, a in out if a in ("deltacommit", "commit")}
    return [a for t, a in out if t in completed and a in ("deltacommit", "commit")] + [
        a for t, a in out if t not in completed and a.endswith("requested")
    ]


def _rows(session: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql("SELECT id, name, ts, city FROM f ORDER BY id").collect()]


def _log_files(path: str) -> list[Path]:
    return [p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts]


@pytest.mark.parametrize("local_rows", ["100000", "0"], ids=["driver-side", "spark-tasks"])
def test_flink_keys_compact_every_two_delta_commits(session: Any, local_rows: str) -> None:
    path = _create(session)
    session.sql(f"SET hoodie.hudilite.write.local.max.rows = {local_rows}")
    session.sql("INSERT INTO f VALUES (1, 'a0', 0, 'sf'), (2, 'b0', 0, 'nyc')")
    assert _timeline(path) == ["deltacommit"]
    session.sql("INSERT INTO f VALUES (1, 'a1', 1, 'sf')")
    # Two delta commits: a compaction was planned and run (a completed commit).
    assert _timeline(path) == ["deltacommit", "deltacommit", "commit"]
    assert _log_files(path) != []  # the update's log, merged into a new base file
    session.sql("INSERT INTO f VALUES (2, 'b2', 2, 'nyc')")
    assert _timeline(path) == ["deltacommit", "deltacommit", "commit", "deltacommit"]
    session.sql("INSERT INTO f VALUES (1, 'a3', 3, 'sf'), (2, 'b3', 3, 'nyc')")
    assert _timeline(path) == [
        "deltacommit",
        "deltacommit",
        "commit",
        "deltacommit",
        "deltacommit",
        "commit",
    ]
    expected = [(1, "a3", 3, "sf"), (2, "b3", 3, "nyc")]
    assert _rows(session) == expected
    assert rows(hudi_rs_read(path), COLS) == expected
    # After the last compaction every row is in a base file: read-optimized reads them all.
    assert rows(hudi_rs_read(path, read_optimized="true"), COLS) == expected


def test_schedule_without_async_only_plans(session: Any) -> None:
    path = _create(session, run="false")
    session.sql("INSERT INTO f VALUES (1, 'a0', 0, 'sf')")
    session.sql("INSERT INTO f VALUES (1, 'a1', 1, 'sf')")
    # The plan waits for a separate run (Flink's offline compactor; here CALL run_compaction).
    assert _timeline(path) == ["deltacommit", "deltacommit", "compaction.requested"]
    assert _rows(session) == [(1, "a1", 1, "sf")]
    session.sql("CALL run_compaction(op => 'execute', table => 'f')")
    assert _timeline(path) == ["deltacommit", "deltacommit", "commit"]
    assert rows(hudi_rs_read(path, read_optimized="true"), COLS) == [(1, "a1", 1, "sf")]


def test_new_keys_alone_leave_nothing_to_compact(session: Any) -> None:
    path = _create(session)
    for i in range(4):
        session.sql(f"INSERT INTO f VALUES ({i}, 'n{i}', {i}, 'sf')")
    # The trigger fired after the second write, but every record went into the partition's
    # small base file (rewritten), so no log file holds anything to compact: no plan.
    assert _timeline(path) == ["deltacommit"] * 4
    assert _log_files(path) == []
    expected = [(i, f"n{i}", i, "sf") for i in range(4)]
    assert _rows(session) == expected
    assert rows(hudi_rs_read(path), COLS) == expected
