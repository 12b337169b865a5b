"""The re-run rule of SQL statements that read their target (issue 26,
``hoodie.hudilite.sql.conflict.retries``), on a stand-in statement handler: how many runs,
which errors re-run, and the final error naming the other commit. (Two real clients racing:
tests/faults/test_conflict_reruns.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from hudilite.errors import ConflictError, LockError
from hudilite.sqlext.dml import _rerun_on_conflict
from hudilite.sqlext.dml_common import StatementRun

CONFLICT = (
    "write 20260101000000002 conflicts with commit(s) 20260101000000001 (same file groups), "
    "completed after the snapshot it read (20260101000000000); it was rolled back, retry it "
    "(reading the table again)"
)


def handler(errors: list[Exception], retries: int, reads_target: bool = True) -> Any:
    """A statement whose runs raise ``errors`` in turn, then return 'done'."""
    runs: list[int] = []

    def run(session: Any, stmt: Any, attempt: StatementRun) -> Any:
        attempt.retries, attempt.reads_target = retries, reads_target
        runs.append(len(runs))
        if len(runs) <= len(errors):
            raise errors[len(runs) - 1]
        return "done"

    return _rerun_on_conflict(run), runs


def test_a_conflict_reruns_up_to_the_limit_then_succeeds():
    run, runs = handler([ConflictError(CONFLICT)] * 3, retries=3)
    assert run(None, None) == "done" and len(runs) == 4


def test_the_last_failure_names_the_other_commit_and_the_runs():
    run, runs = handler([ConflictError(CONFLICT)] * 5, retries=2)
    with pytest.raises(ConflictError) as err:
        run(None, None)
    assert len(runs) == 3
    assert str(err.value) == (
        f"{CONFLICT} (the statement ran 3 times, each on a fresh snapshot: "
        "hoodie.hudilite.sql.conflict.retries=2)"
    )


@pytest.mark.parametrize(
    "error, retries, reads_target",
    [
        (ConflictError(CONFLICT), 0, True),  # the default: no re-run, the error as it was
        (LockError("table lock held by pid 1"), 3, True),  # the lock's wait already ran out
        (ConflictError(CONFLICT), 3, False),  # an INSERT whose query does not read the target
    ],
)
def test_what_is_not_rerun(error, retries, reads_target):
    run, runs = handler([error], retries=retries, reads_target=reads_target)
    with pytest.raises(type(error)) as err:
        run(None, None)
    assert err.value is error and len(runs) == 1
