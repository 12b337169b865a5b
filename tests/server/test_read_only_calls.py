"""CALL by role: the procedures that write nothing (the registry's ``read_only`` flag:
``show_*``, ``stats_*``, ``help``) for readers and writers too; every other procedure for
admins only; a table named by a folder outside the warehouse for admins only."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyhive import exc as hive_exc

from hudilite.procedures import REGISTRY, procedure_names
from hudilite.thriftserver import Server
from tests.server.clients import connect

pytestmark = pytest.mark.spark


def test_read_only_procedures_of_the_registry() -> None:
    procedure_names()  # loads every procedure module
    assert sorted(name for name, spec in REGISTRY.items() if spec.read_only) == [
        "commits_compare",
        "help",
        "show_archived_commits",
        "show_archived_commits_metadata",
        "show_clean_plans",
        "show_cleans",
        "show_cleans_metadata",
        "show_clustering",
        "show_commit_extra_metadata",
        "show_commit_files",
        "show_commit_partitions",
        "show_commit_write_stats",
        "show_commits",
        "show_commits_metadata",
        "show_compaction",
        "show_file_group_history",
        "show_file_slice_history",
        "show_file_status",
        "show_fs_path_detail",
        "show_fsview_all",
        "show_fsview_latest",
        "show_logfile_metadata",
        "show_logfile_records",
        "show_metadata_table_column_stats",
        "show_metadata_table_files",
        "show_metadata_table_partitions",
        "show_metadata_table_stats",
        "show_rollback_detail",
        "show_rollbacks",
        "show_savepoints",
        "show_table_properties",
        "show_timeline",
        "stats_file_sizes",
        "stats_wa",
        "validate_metadata_table_files",
    ]
    # show_invalid_parquet may delete what it finds (need_delete): not read-only.
    assert REGISTRY["show_invalid_parquet"].read_only is False


def _refused(cur: object, sql: str) -> tuple[str, str]:
    with pytest.raises(hive_exc.OperationalError) as err:
        cur.execute(sql)  # type: ignore[attr-defined]
    status = err.value.args[0].status
    return status.sqlState, status.errorMessage


def test_call_by_role(server: Server, tmp_path: Path) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE default.ro_calls (id INT, v STRING) USING hudi "
            "TBLPROPERTIES (primaryKey = 'id')"
        )
        cur.execute("INSERT INTO default.ro_calls VALUES (1, 'a')")
    warehouse = Path(server.registry.warehouse).resolve()
    folder = warehouse / "default.db" / "ro_calls"
    outside = tmp_path / "elsewhere"
    for user in ("rita", "wendy"):
        with connect(server, user) as conn:
            cur = conn.cursor()
            cur.execute("CALL show_commits(table => 'ro_calls')")
            assert [row[2] for row in cur.fetchall()] == ["commit"], user
            cur.execute(f"CALL show_commits(path => '{folder}')")  # inside the warehouse
            assert len(cur.fetchall()) == 1
            cur.execute("CALL help(cmd => 'show_savepoints')")
            assert cur.fetchall()
            cur.execute("CALL system.stats_wa('ro_calls')")
            assert [row[0] for row in cur.fetchall()][-1] == "Total"
            role = "reader" if user == "rita" else "writer"
            assert _refused(cur, "CALL run_clean(table => 'ro_calls')") == (
                "42501",
                f"permission denied: role {role!r} may not run CALL statements (run_clean); "
                "it needs role 'admin'",
            )
            assert _refused(cur, f"CALL show_commits(path => '{outside}')") == (
                "42501",
                f"permission denied: CALL show_commits(path => '{outside}') names a path "
                f"outside the warehouse {warehouse}; role {role!r} may "
                "read and write paths only inside it",
            )
            # path by position: show_table_properties(table, path, limit)
            assert _refused(cur, f"CALL show_table_properties('ro_calls', '{outside}')") == (
                "42501",
                f"permission denied: CALL show_table_properties(path => '{outside}') names a path "
                f"outside the warehouse {warehouse}; role {role!r} may "
                "read and write paths only inside it",
            )
    with connect(server) as conn:  # admins: every procedure, as before
        cur = conn.cursor()
        cur.execute("CALL run_clean(table => 'ro_calls')")
        cur.execute("CALL show_commits(table => 'ro_calls')")
        assert [row[2] for row in cur.fetchall()] == ["commit"]
