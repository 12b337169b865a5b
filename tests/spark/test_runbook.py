"""The README's runbook (examples/runbook.sql) runs through ``hudilite sql -f``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hudilite.cli import main
from tests.conftest import REPO_ROOT
from tests.helpers import hudi_rs_read

RUNBOOK = REPO_ROOT / "examples" / "runbook.sql"


def test_readme_links_the_runbook() -> None:
    # The README is a front page: it links the runbook (run below through the CLI, as
    # `make demo` does) instead of copying it.
    assert "](examples/runbook.sql)" in (REPO_ROOT / "README.md").read_text()


def test_runbook_runs_through_the_cli(spark: Any, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    result = CliRunner().invoke(
        main, ["sql", "--warehouse", str(wh), "-f", str(RUNBOOK), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    # After the mistaken DELETE only nyc is left; the rollback brings sf back.
    assert {"ride_id": "r2", "fare": 20.0} in lines
    restored = [r for r in lines if set(r) == {"ride_id", "fare", "city"}]
    assert restored == [
        {"ride_id": "r1", "fare": 11.0, "city": "sf"},
        {"ride_id": "r2", "fare": 20.0, "city": "nyc"},
        {"ride_id": "r3", "fare": 31.0, "city": "sf"},
    ]
    compactions = [r for r in lines if set(r) == {"timestamp", "operation_size", "state"}]
    assert [r["state"] for r in compactions] == ["REQUESTED", "REQUESTED", "COMPLETED"]
    assert len({r["timestamp"] for r in compactions}) == 1
    commits = [r for r in lines if "commit_time" in r and "total_records_written" in r]
    assert [r["action"] for r in commits] == ["commit", "deltacommit", "deltacommit"]
    assert {"rollback_savepoint_result": True} in lines
    (cleaned,) = [r for r in lines if "total_files_deleted" in r]
    assert cleaned["total_files_deleted"] == 2  # sf's first base file and its log file
    table = hudi_rs_read(str(wh / "default.db" / "rides"))
    got = sorted(zip(table["ride_id"].to_pylist(), table["fare"].to_pylist(), strict=True))
    assert got == [("r1", 11.0), ("r2", 20.0), ("r3", 31.0)]
