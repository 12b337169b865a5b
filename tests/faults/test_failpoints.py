"""The fail-point seam itself: raise, kill, fail once, armed by option or environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from hudilite import failpoints
from hudilite.errors import WriteError

pytestmark = pytest.mark.faults


def test_plain_point_raises_only_at_its_name() -> None:
    failpoints.check("after_file_write", "before_file_write")
    failpoints.check(None, "after_file_write")
    with pytest.raises(WriteError, match="simulated failure at 'after_file_write'"):
        failpoints.check("before_commit, after_file_write", "after_file_write")


def test_fail_once_raises_in_the_first_attempt_only() -> None:
    with pytest.raises(WriteError, match="'after_file_write'"):
        failpoints.check("fail_once:after_file_write", "after_file_write", attempt=0)
    failpoints.check("fail_once:after_file_write", "after_file_write", attempt=1)
    with pytest.raises(WriteError):  # outside Spark the attempt is 0
        failpoints.check("fail_once:after_file_write", "after_file_write")


def test_delay_point_holds_the_caller_and_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(failpoints.time, "sleep", slept.append)
    failpoints.check("delay:before_commit", "after_file_write")
    assert slept == []
    failpoints.check("delay:before_commit", "before_commit")  # no error: it only waits
    assert slept == [failpoints.DELAY_S]


def test_environment_arms_a_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV_VAR, "rollback_after_plan")
    with pytest.raises(WriteError, match="rollback_after_plan"):
        failpoints.check(None, "rollback_after_plan")
    failpoints.check(None, "clean_after_plan")


@pytest.mark.parametrize("how", ["option", "env"])
def test_kill_point_sigkills_the_process(how: str) -> None:
    code = (
        "from hudilite import failpoints\n"
        "failpoints.check(None, 'other')\n"
        "print('before', flush=True)\n"
        f"failpoints.check({'None' if how == 'env' else repr('kill:here')}, 'here')\n"
        "print('survived', flush=True)\n"
    )
    env = {failpoints.ENV_VAR: "kill:here"} if how == "env" else {}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout == "before\n"
