"""Re-running a conflicting read-modify-write statement (issue 26,
``hoodie.hudilite.sql.conflict.retries``).

Two SQL clients (real processes) run ``UPDATE t SET n = n + 1`` at the same moment (a file
barrier). Client A holds its write for 2 s between its read and its transaction
(``delay:before_transaction``), so client B commits inside that window and A's write
conflicts with a commit its snapshot did not see. Without re-runs A fails with a retryable
ConflictError (tests/faults/test_read_modify_write.py); with ``SET
hoodie.hudilite.sql.conflict.retries=3`` both clients' statements are acknowledged and the
table holds both increments: A's statement ran again on the snapshot that holds B's commit.
The same for MERGE INTO on a merge-on-read table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.faults.harness import REPO_ROOT, finish, pending, writer_env
from tests.helpers import hudi_rs_read, rows

pytestmark = [pytest.mark.faults, pytest.mark.spark]

KEYS = 8  # ids 0..7; the increments touch ids below 5
STATEMENTS = {
    "t_update": ("cow", "UPDATE t_update SET n = n + 1 WHERE id < 5"),
    "t_merge": (
        "mor",
        "MERGE INTO t_merge USING (SELECT id FROM t_merge WHERE id < 5) s "
        "ON t_merge.id = s.id WHEN MATCHED THEN UPDATE SET n = t_merge.n + 1",
    ),
}


def test_three_reruns_make_every_concurrent_increment_apply(
    spark: Any, jvm_archive: None, tmp_path: Path
) -> None:
    import hudilite
    from hudilite.sqlext.statements import TableName

    warehouse = str(tmp_path / "wh")
    session = hudilite.connect(warehouse, spark=spark)
    for name, (kind, _) in STATEMENTS.items():
        session.sql(
            f"CREATE TABLE {name} (id INT, n BIGINT) USING hudi "
            f"TBLPROPERTIES ('primaryKey'='id', 'type'='{kind}')"
        )
        session.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"({i}, 0)" for i in range(KEYS)))
    barrier = tmp_path / "barrier"
    barrier.mkdir()

    def spec(me: str, other: str, fail_point: str | None) -> dict[str, Any]:
        steps: list[dict[str, Any]] = [{"sql": "SET hoodie.hudilite.sql.conflict.retries=3"}]
        for name, (_, statement) in STATEMENTS.items():
            steps.append(
                {"sql": statement, "barrier": [str(barrier), f"{me}-{name}", f"{other}-{name}"]}
            )
        return {"warehouse": warehouse, "fail_point": fail_point, "steps": steps}

    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.faults.sql_client", json.dumps(s)],
            cwd=REPO_ROOT,
            env=writer_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for s in (spec("a", "b", "delay:before_transaction"), spec("b", "a", None))
    ]
    out_a, out_b = (finish(p, timeout=420) for p in procs)
    for out in (out_a, out_b):
        assert [s["ok"] for s in out.steps] == [True, True, True], out.describe()
    for name in STATEMENTS:
        got = [tuple(r) for r in session.sql(f"SELECT id, n FROM {name} ORDER BY id").collect()]
        assert got == [(i, 2 if i < 5 else 0) for i in range(KEYS)]
        location = str(session.entry(TableName(None, name)).location)
        assert sorted(rows(hudi_rs_read(location), ["id", "n"])) == got
        assert pending(Path(location)) == []
        # A's first run conflicted with B's commit and was rolled back: a rollback instant
        # on the timeline shows the re-run happened (not B committing after A by chance).
        assert list((Path(location) / ".hoodie").rglob("*.rollback")), name
