"""The CALL procedure registry: names, argument binding, errors and help (no JVM)."""

from __future__ import annotations

from typing import Any

import pytest

from hudilite.procedures import (
    REGISTRY,
    ProcedureArgumentError,
    UnknownProcedureError,
    _load_all,
)
from hudilite.procedures.registry import bind, lookup, parse_options

_load_all()

HUDI_PROCEDURES = [
    "help",
    "show_table_properties",
    "show_commits",
    "show_commits_metadata",
    "show_commit_files",
    "show_commit_partitions",
    "show_commit_write_stats",
    "show_timeline",
    "run_compaction",
    "show_compaction",
    "run_clustering",
    "show_clustering",
    "run_clean",
    "show_cleans",
    "create_savepoint",
    "show_savepoints",
    "delete_savepoint",
    "rollback_to_savepoint",
    "rollback_to_instant",
    "show_rollbacks",
    "drop_partition",
    "truncate_table",
    "copy_to_table",
    "copy_to_temp_view",
    "show_fsview_all",
    "show_fsview_latest",
    "show_logfile_metadata",
    "show_logfile_records",
    "stats_file_sizes",
    "stats_wa",
    "repair_add_partition_meta",
    "show_invalid_parquet",
    "archive_commits",
    "show_archived_commits",
    "upgrade_table",
    "downgrade_table",
    "show_commit_extra_metadata",
    "commits_compare",
    "delete_marker",
    "show_file_status",
    "show_fs_path_detail",
    "export_instants",
    "show_file_group_history",
    "create_metadata_table",
    "init_metadata_table",
    "delete_metadata_table",
    "show_metadata_table_partitions",
    "show_metadata_table_files",
    "show_metadata_table_column_stats",
    "show_metadata_table_stats",
    "validate_metadata_table_files",
    "run_rollback_inflight_tableservice",
    "cleanup_stale_inflight_commits",
    "repair_corrupted_clean_files",
    "repair_overwrite_hoodie_props",
    "repair_migrate_partition_meta",
    "repair_orphan_files",
    "repair_clustering_plan",
    "repair_deduplicate",
    "show_file_slice_history",
    "restore_to_instant",
    "run_timeline_compaction",
    "run_ttl",
    "run_bootstrap",
    "hdfs_parquet_import",
]


def test_every_procedure_of_the_issue_is_registered() -> None:
    assert [n for n in HUDI_PROCEDURES if n not in REGISTRY] == []


def test_names_resolve_with_prefix_and_any_case() -> None:
    assert lookup("system.run_compaction") is REGISTRY["run_compaction"]
    assert lookup("SHOW_COMMITS") is REGISTRY["show_commits"]


def test_unknown_procedure_names_the_closest() -> None:
    with pytest.raises(UnknownProcedureError) as info:
        lookup("show_comits")
    assert str(info.value).startswith("unknown procedure 'show_comits'; did you mean show_commits")
    with pytest.raises(UnknownProcedureError, match=r"CALL help\(\) lists them"):
        lookup("zzz")


def test_binding_positional_named_defaults_and_types() -> None:
    spec = REGISTRY["run_compaction"]
    got = bind(spec, ["run", "t"], {"timestamp": "20240101000000000", "LIMIT": 2})
    assert got == {
        "op": "run",
        "table": "t",
        "path": None,
        "timestamp": 20240101000000000,
        "options": None,
        "instants": None,
        "limit": 2,
    }
    assert bind(REGISTRY["show_compaction"], [], {"table": "t"})["limit"] == 20


@pytest.mark.parametrize(
    ("args", "named", "message"),
    [
        ([], {"table": "t"}, "run_compaction: missing required parameter 'op' (string)"),
        ([], {"op": "run", "limit": "ten"}, "parameter 'limit' expects integer, got str 'ten'"),
        ([], {"op": "run", "tabel": "t"}, "unknown parameter 'tabel' (parameters: op, table,"),
        (["run"], {"op": "run"}, "parameter 'op' given twice"),
        (["a"] * 8, {}, "takes at most 7 argument(s), got 8"),
    ],
)
def test_binding_errors_name_the_parameter(
    args: list[Any], named: dict[str, Any], message: str
) -> None:
    with pytest.raises(ProcedureArgumentError) as info:
        bind(REGISTRY["run_compaction"], args, named)
    assert message in str(info.value)


def test_parse_options() -> None:
    assert parse_options("a=1, b = x=y") == {"a": "1", "b": "x=y"}
    assert parse_options(None) == {}
    with pytest.raises(ProcedureArgumentError, match="'oops' is not key=value"):
        parse_options("a=1,oops")


def test_help_lists_every_procedure_and_describes_one() -> None:
    spec = REGISTRY["help"]
    text = spec.func(None, bind(spec, [], {}))[0][0]  # type: ignore[arg-type]
    listed = [
        line.split("\t")[1]
        for line in text.splitlines()
        if line.startswith("\t") and line.count("\t") == 2
    ]
    assert listed == sorted(REGISTRY)
    one = spec.func(None, bind(spec, [], {"cmd": "show_compaction"}))[0][0]  # type: ignore[arg-type]
    lines = one.splitlines()
    assert lines[0] == "parameters:"
    assert lines[2].split("\t")[1:] == [f"{v:<30}" for v in ("table", "string", "None", "false")]
    assert lines[4].split("\t")[1:] == [f"{v:<30}" for v in ("limit", "integer", "20", "false")]
    assert "outputType:" in lines
    assert lines[-1].split("\t")[1:] == [f"{v:<30}" for v in ("state", "string", "true", "{}")]
