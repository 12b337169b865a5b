"""Facts with one owner: each is decided in one engine function that every caller uses."""

from __future__ import annotations

from hudilite import config as cfg
from hudilite.config import TableConfig


def test_composite_key_without_partitions_is_non_partition() -> None:
    # Hudi's KeyGenUtils.inferKeyGeneratorType: no partition fields -> NON_PARTITION even for
    # a composite record key (COMPLEX only when partitioned by one or more fields).
    assert cfg.infer_keygen_type(["id", "name"], []) == "NON_PARTITION"
    tc = TableConfig.new("t", record_key_fields=("id", "name"))
    assert tc.keygen_type == "NON_PARTITION"
    assert cfg.infer_keygen_type(["id", "name"], ["city"]) == "COMPLEX"


def test_latest_schema_json_takes_newest_recorded_else_create_schema() -> None:
    from hudilite.schema import latest_schema_json

    read: list[str | None] = []

    def recorded(values: list[str | None]):  # newest first, records what was read
        for v in values:
            read.append(v)
            yield v

    assert latest_schema_json(recorded([None, "", "s2", "s1"]), "c") == "s2"
    assert read == [None, "", "s2"]  # metadata past the first recorded schema is never read
    assert latest_schema_json(recorded([None]), "c") == "c"
    assert latest_schema_json(recorded([]), None) is None


OVERWRITE_NON_DEFAULTS = "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"


def test_overwrite_non_defaults_payload_is_commit_time_with_partial_update() -> None:
    from hudilite.merge import MergeSpec, payload_semantics

    # Hudi 1.1 (EightToNineUpgradeHandler): COMMIT_TIME_ORDERING + partial update
    # IGNORE_DEFAULTS; table config inference and the merge spec read one mapping.
    assert payload_semantics(OVERWRITE_NON_DEFAULTS) == ("COMMIT_TIME_ORDERING", True)
    assert cfg.merge_mode_for_payload(OVERWRITE_NON_DEFAULTS) == "COMMIT_TIME_ORDERING"
    props = {
        "hoodie.table.name": "t",
        "hoodie.table.version": "6",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.compaction.payload.class": OVERWRITE_NON_DEFAULTS,
    }
    tc = TableConfig.from_properties(props)
    assert tc.merge_mode == "COMMIT_TIME_ORDERING"
    spec = MergeSpec.from_config(tc)
    assert (spec.mode, spec.partial_update) == ("COMMIT_TIME_ORDERING", True)
    for name, (mode, _) in cfg.PAYLOADS.items():
        assert cfg.merge_mode_for_payload(name) == mode
    assert cfg.merge_mode_for_payload("com.example.MyPayload") == "CUSTOM"


def test_compaction_and_clustering_plug_into_one_table_service_runner() -> None:
    import pytest

    from hudilite.errors import CorruptFileError
    from hudilite.services import clustering, clustering_plan, compaction, table_service
    from hudilite.services._common import encode_unit

    assert compaction.COMPACTION_SERVICE.kind == "compaction"
    assert clustering.CLUSTERING_SERVICE.kind == "clustering"
    # One plan-unit codec: a unit of the other service is refused, naming what was expected.
    group = clustering_plan.ClusteringGroup(slices=(), num_output_file_groups=1)
    with pytest.raises(CorruptFileError, match="not a compaction operation: ClusteringGroup"):
        compaction.decode_operation(encode_unit(group))
    assert clustering.decode_group(clustering.encode_group(group)) == group
    # One set of Hudi's plan metric names, and one place computing them.
    assert table_service.io_metrics(2, 3 * 1024 * 1024, 4, 120) == {
        "TOTAL_LOG_FILES": 2.0,
        "TOTAL_IO_MB": 124.0,
        "TOTAL_IO_READ_MB": 4.0,
        "TOTAL_LOG_FILES_SIZE": float(3 * 1024 * 1024),
        "TOTAL_IO_WRITE_MB": 120.0,
    }


# ---------------------------------------------------------------------------------------
# Facts found by their text: a second copy shows up as a second file matching a pattern.

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
_SOURCES = ("hudilite", "sqlext", "catalog", "procedures")


def _files_matching(pattern: str) -> set[str]:
    """Source files (repo-relative, ``/``-separated) whose text matches ``pattern``."""
    import re

    rx = re.compile(pattern, re.MULTILINE)
    return {
        path.relative_to(_ROOT).as_posix()
        for top in _SOURCES
        for path in (_ROOT / top).rglob("*.py")
        if rx.search(path.read_text(encoding="utf-8"))
    }


def test_timeline_time_zone_is_read_and_applied_in_one_place() -> None:
    # The key is declared in the registry and read by TableConfig.timeline_utc only.
    assert _files_matching(r"hoodie\.table\.timeline\.timezone\"") == {
        "hudilite/config/keys_table.py",
        "hudilite/config/table_config.py",
    }
    # One state transition time for the procedures and SHOW statements.
    assert _files_matching(r"^def transition_time\(") == {"procedures/commits.py"}
    # Local wall-clock digits are made (and read back) only by the instant time module.
    assert _files_matching(r"fromtimestamp\([^)]*\)\.replace\(tzinfo=None\)") == set()


def test_instant_digits_in_a_local_time_zone_round_trip() -> None:
    import os
    import time

    from hudilite.config import TableConfig
    from hudilite.timeline.instant_time import epoch_ms_to_instant, instant_to_epoch_ms

    ms = 1704067200123  # 2024-01-01 00:00:00.123 UTC
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        assert epoch_ms_to_instant(ms) == "20240101000000123"
        assert epoch_ms_to_instant(ms, utc=False) == "20240101053000123"
        assert instant_to_epoch_ms("20240101053000123", utc=False) == ms
        assert instant_to_epoch_ms("20240101000000123") == ms
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    base = {"hoodie.table.name": "t", "hoodie.table.version": "6"}
    key = "hoodie.table.timeline.timezone"
    assert not TableConfig.from_properties(base).timeline_utc  # Java's default: LOCAL
    assert TableConfig.from_properties({**base, key: "utc"}).timeline_utc
    assert not TableConfig.from_properties({**base, key: "LOCAL"}).timeline_utc


def test_latest_schema_is_the_newest_requested_write_in_state_planner_and_hudi_rs(
    tmp_path: __import__("pathlib").Path,
) -> None:
    # Hudi (ActiveTimelineV2.getCommitMetadataStream) and hudi-rs take the newest write by
    # requested time on v8 too, skipping table services (WriteOperationType.canUpdateSchema).
    # Here the write requested first completes last with the old schema: completion order
    # (the read planner's old rule) would bring that schema back.
    import json

    import pyarrow as pa

    from hudilite.read.planner import plan_snapshot
    from hudilite.schema import arrow_to_avro_schema
    from hudilite.storage.fs import FileSystemGateway
    from hudilite.tablestate.state import PROPERTIES_FILE, TableState
    from hudilite.timeline.instant import COMMIT, REPLACE_COMMIT
    from hudilite.timeline.metadata import CommitMetadata
    from hudilite.timeline.timeline import TimelineWriter

    def avro(*cols: str) -> str:
        arrow = pa.schema([(c, pa.string()) for c in cols])
        return json.dumps(arrow_to_avro_schema(arrow, "t_record", "hoodie.t"))

    old, new = avro("id"), avro("id", "v")
    gw = FileSystemGateway(str(tmp_path))
    config = TableConfig.new("t", table_version=8, record_key_fields=("id",), create_schema=old)
    gw.mkdirs(config.timeline_dir)
    gw.write_bytes(PROPERTIES_FILE, cfg.render_properties(config.to_properties()).encode())

    def content(schema: str, operation: str = "UPSERT") -> bytes:
        meta = CommitMetadata(operation_type=operation, extra_metadata={"schema": schema})
        return meta.to_bytes(config.layout_version)

    w = TimelineWriter(gw, config)
    first = w.transition_inflight(w.create_requested(COMMIT))
    second = w.transition_inflight(w.create_requested(COMMIT))
    second = w.complete(second, content(new))
    first = w.complete(first, content(old))
    assert first.requested_time < second.requested_time
    assert first.completion_time > second.completion_time  # type: ignore[operator]

    def resolved() -> tuple[str | None, str | None]:
        state = TableState.load(gw)
        return state.schema_json, plan_snapshot(state).schema

    assert resolved() == (new, new)
    from hudi import HudiTableBuilder

    hudi_rs = HudiTableBuilder.from_base_uri(str(tmp_path)).build()
    assert hudi_rs.get_timeline().get_latest_avro_schema() == new
    # A clustering requested last, recording the schema it was planned with, is skipped.
    cluster = w.transition_inflight(w.create_requested(REPLACE_COMMIT))
    w.complete(cluster, content(old, "CLUSTER"))
    assert resolved() == (new, new)
    # One owner: the table state and the planner call Timeline.schema_json.
    assert _files_matching(r"latest_schema_json\(") == {
        "hudilite/schema.py",
        "hudilite/timeline/timeline.py",
    }


def test_write_defaults_file_has_one_reader(tmp_path: __import__("pathlib").Path) -> None:
    from hudilite.storage.fs import FileSystemGateway
    from hudilite.tablestate.properties_file import WRITE_DEFAULTS_FILE, read_write_defaults
    from hudilite.write.lock import LockConfig

    assert _files_matching(r"[\"']\.hoodie/hudilite\.properties[\"']") == {
        "hudilite/tablestate/properties_file.py"
    }
    gw = FileSystemGateway(str(tmp_path))
    assert read_write_defaults(gw) == {}
    # The lock settings come from the stored write options, read by the one reader.
    gw.write_bytes(WRITE_DEFAULTS_FILE, b"hoodie.write.lock.wait_time_ms=1234\n")
    assert read_write_defaults(gw) == {"hoodie.write.lock.wait_time_ms": "1234"}
    assert LockConfig.resolve(gw).wait_ms == 1234


def test_clean_bound_is_the_last_clean_of_any_state_for_savepoints_and_reads(
    tmp_path: __import__("pathlib").Path,
) -> None:
    import pytest

    from hudilite.errors import HudiliteError, InstantNotFoundError
    from hudilite.read.planner import validate_as_of
    from hudilite.services.clean import CLEAN_METADATA_VERSION, CleanPlan
    from hudilite.services.savepoint import create_savepoint
    from hudilite.storage.fs import FileSystemGateway
    from hudilite.tablestate.state import PROPERTIES_FILE, TableState
    from hudilite.timeline.instant import CLEAN, COMMIT, Instant, State
    from hudilite.timeline.metadata import CommitMetadata, write_avro_record
    from hudilite.timeline.plans import clean_bound
    from hudilite.timeline.timeline import TimelineWriter

    gw = FileSystemGateway(str(tmp_path))
    config = TableConfig.new("t", table_version=6, record_key_fields=("id",))
    gw.mkdirs(config.timeline_dir)
    gw.write_bytes(PROPERTIES_FILE, cfg.render_properties(config.to_properties()).encode())
    w = TimelineWriter(gw, config)
    commits = []
    for _ in range(3):
        inst = w.transition_inflight(w.create_requested(COMMIT))
        commits.append(w.complete(inst, CommitMetadata().to_bytes(1)).requested_time)
    c1, c2, c3 = commits

    def plan(earliest: str) -> bytes:
        keep = Instant(earliest, COMMIT, State.COMPLETED)
        return CleanPlan("KEEP_LATEST_COMMITS", keep, c3, {}).to_avro_bytes(gw)

    done = w.transition_inflight(w.create_requested(CLEAN, content=plan(c2)))
    meta = {
        "startCleanTime": done.requested_time,
        "timeTakenInMillis": 1,
        "totalFilesDeleted": 0,
        "earliestCommitToRetain": c2,
        "lastCompletedCommitTimestamp": c3,
        "partitionMetadata": {},
        "version": CLEAN_METADATA_VERSION,
    }
    w.complete(done, write_avro_record("HoodieCleanMetadata", meta))
    state = TableState.load(gw)
    assert clean_bound(state.timeline) == c2
    with pytest.raises(
        InstantNotFoundError, match=f"removed the file versions of instants before {c2}"
    ):
        validate_as_of(state.view, c1)
    assert validate_as_of(state.view, c2) == c2
    # A clean still pending (it may have deleted files already) bounds both, by its plan.
    w.create_requested(CLEAN, content=plan(c3))
    state = TableState.load(gw)
    assert clean_bound(state.timeline) == c3
    with pytest.raises(InstantNotFoundError, match=f"instants before {c3}"):
        validate_as_of(state.view, c2)
    with pytest.raises(HudiliteError, match=f"cannot savepoint {c2}: .* retains commits from {c3}"):
        create_savepoint(state, c2)
    # The bound is read in one engine module.
    readers = _files_matching(r"get\(\"earliest(Commit|Instant)ToRetain\"\)")
    assert {p for p in readers if p.startswith("hudilite/")} == {
        "hudilite/services/clean.py",  # CleanPlan.from_bytes: the plan the cleaner executes
        "hudilite/timeline/plans.py",
        # the metadata table's own clean (its files partition's old slices), not the data
        # table's bound: it copies its plan's instant into its clean metadata
        "hudilite/metadata/clean.py",
    }


def test_archive_folder_layout_is_decided_by_table_config() -> None:
    base = {"hoodie.table.name": "t", "hoodie.table.recordkey.fields": "id"}

    def config(version: int, **props: str) -> TableConfig:
        return TableConfig.from_properties({**base, "hoodie.table.version": str(version), **props})

    v6, v8 = config(6), config(8)
    assert (v6.archive_dir, v8.archive_dir) == (".hoodie/archived", ".hoodie/timeline/history")
    # Both folders are known whatever the version (a version change converts between them).
    assert v6.legacy_archive_dir == v8.legacy_archive_dir == ".hoodie/archived"
    assert v6.history_dir == v8.history_dir == ".hoodie/timeline/history"
    custom = {"hoodie.archivelog.folder": "old", "hoodie.timeline.history.path": "hist"}
    assert config(6, **custom).archive_dir == ".hoodie/old"
    assert config(8, **custom).archive_dir == ".hoodie/timeline/hist"
    assert config(8, **custom).to_properties()["hoodie.timeline.history.path"] == "hist"
    assert config(6).to_properties()["hoodie.archivelog.folder"] == "archived"
    # Nothing else reads the two keys.
    pattern = r"get\(\s*\"hoodie\.(archivelog\.folder|timeline\.history\.path)\""
    assert _files_matching(pattern) == set()
    assert _files_matching(r"\"\.hoodie/(archived|timeline/history)\"") == set()


def test_session_set_up_has_one_owner() -> None:
    # Active-or-create and the UTC session time zone: hudilite.spark.session only.
    assert _files_matching(r"getActiveSession\(") == {"hudilite/spark/session.py"}
    assert _files_matching(r"conf\.set\(\s*\"spark\.sql\.session\.timeZone\"") == {
        "hudilite/spark/session.py"
    }


def test_cli_and_thrift_server_word_errors_in_one_line_alike() -> None:
    from hudilite.cli.commands import error_message
    from hudilite.errors import ConfigError
    from hudilite.thriftserver.errors import client_message

    cases = [
        (ConfigError("bad value 'x'\n  for key k"), "bad value 'x' for key k"),
        (ValueError("not a date: '2024-13-01'"), "not a date: '2024-13-01'"),
        (PermissionError(13, "Permission denied"), "[Errno 13] Permission denied"),
        (RuntimeError("a bug\nat line 2"), "internal error: RuntimeError: a bug at line 2"),
        (KeyError(), "internal error: KeyError"),
    ]
    for exc, line in cases:
        assert error_message(exc) == client_message(exc) == line
    assert _files_matching(r"internal error: ") == {"hudilite/spark/task_errors.py"}


def test_the_registry_decides_which_keys_are_table_properties() -> None:
    # A key the registry gives another scope is never stored in hoodie.properties, whatever
    # its name (the name prefixes once made this service key a table property).
    for key in cfg.all_keys():
        for name in key.all_names():
            if cfg.is_table_property(name):
                assert key.scope == "table", name
    batch = "hoodie.timeline.compaction.batch.size"
    assert cfg.find_key(batch).scope == "service"  # type: ignore[union-attr]
    assert not cfg.is_table_property(batch)
    assert cfg.is_table_property("hoodie.keygen.timebased.timestamp.type")
    assert cfg.is_table_property("hoodie.table.some.future.key")  # undeclared: Hudi's name
    extra = {batch: "5", "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS"}
    stored = TableConfig.new("t", record_key_fields=("id",), extra=extra).to_properties()
    assert stored["hoodie.keygen.timebased.timestamp.type"] == "EPOCHMILLISECONDS"
    assert batch not in stored
    assert _files_matching(r"\"hoodie\.compaction\.record\.merger\.\"") == {
        "hudilite/config/registry.py"
    }


def test_key_generator_and_index_type_names_live_in_the_vocabulary() -> None:
    from hudilite import keygen
    from hudilite.index.bloom_index import index_settings

    assert keygen.KINDS == cfg.KEYGEN_TYPES
    assert cfg.INDEX_TYPES == (
        "SIMPLE",
        "BLOOM",
        "GLOBAL_SIMPLE",
        "GLOBAL_BLOOM",
        "BUCKET",
        "RECORD_INDEX",
    )
    record_index_on = {
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
    }
    for name in cfg.INDEX_TYPES:
        settings = index_settings(
            cfg.Options({"hoodie.index.type": name.lower(), **record_index_on})
        )
        assert settings.kind in (
            cfg.INDEX_SIMPLE,
            cfg.INDEX_BLOOM,
            cfg.INDEX_BUCKET,
            cfg.INDEX_RECORD,
        )
        # RECORD_INDEX is global by nature (Hudi has no GLOBAL_ spelling of it)
        is_global = name.startswith(cfg.GLOBAL_INDEX_PREFIX) or name == cfg.INDEX_RECORD
        assert settings.is_global == is_global
    # No module spells the names again: no literal of a name only these vocabularies use,
    # no comparison of a key generator or index kind with a literal.
    names = r"\"(GLOBAL_SIMPLE|GLOBAL_BLOOM|BLOOM|BUCKET|RECORD_INDEX|GLOBAL_)\""
    assert _files_matching(names) == {"hudilite/config/vocab.py"}
    compared = r"(\.kind|\bkeygen_type|\bindex_type|\bkg)\b[^\n]*(==|!=|\bin\b)\s*\(?\s*\"[A-Z_]+\""
    assert _files_matching(compared) == set()


def test_write_operations_and_their_operation_types_live_in_the_vocabulary() -> None:
    import pytest

    from hudilite.errors import ConfigError
    from hudilite.services import partitions
    from hudilite.timeline.metadata import REPLACE_OPERATIONS, SCHEMA_KEEPING_OPERATIONS

    assert cfg.OPERATION_TYPES["bulk_insert"] == "BULK_INSERT"
    assert tuple(cfg.OPERATION_TYPES) == cfg.WRITE_OPERATIONS
    for op in cfg.WRITE_OPERATIONS:
        assert cfg.Options({"hoodie.datasource.write.operation": op}).get(cfg.OPERATION) == op
    with pytest.raises(ConfigError, match="'merge'"):
        cfg.Options({"hoodie.datasource.write.operation": "merge"}).get(cfg.OPERATION)
    assert (partitions.OPERATION, partitions.DELETE_PARTITION) == (
        "delete_partition",
        "DELETE_PARTITION",
    )
    assert {
        "INSERT_OVERWRITE",
        "INSERT_OVERWRITE_TABLE",
        "DELETE_PARTITION",
        "CLUSTER",
    } == REPLACE_OPERATIONS
    assert {"CLUSTER", "COMPACT", "LOG_COMPACT", "INDEX"} == SCHEMA_KEEPING_OPERATIONS
    # The operation types and the table of operations are spelled in the vocabulary only.
    types = r"\"(UPSERT|BULK_INSERT|INSERT_OVERWRITE(_TABLE)?|DELETE_PARTITION|CLUSTER)\""
    assert _files_matching(types) == {"hudilite/config/vocab.py"}
    assert _files_matching(r"\"insert_overwrite_table\",\s*\n") == set()  # a list of them


def test_write_options_are_resolved_at_the_door_only() -> None:
    # Issue 28, options resolved once: the index settings and the record size estimate are
    # parsed by hudilite.write.write_config (called where a write enters: Table.write, the
    # data source writer); no module below calls their resolvers (only their owners
    # define them).
    calls = r"(?<!def )\b(index_settings|avg_record_size)\("
    assert _files_matching(calls) == {"hudilite/write/write_config.py"}
    assert _files_matching(r"\bresolve_write_config\(") == {
        "hudilite/write/write_config.py",
        "hudilite/table/api.py",
        "hudilite/spark/datasource_writer.py",
    }


def test_layers_below_the_door_read_no_option_strings() -> None:
    # Issue 28: the write job and its helpers read the WriteConfig's typed fields. The only
    # raw reads left are two test-only internals the facade hands down as strings (the fail
    # points and INSERT OVERWRITE's JSON partition list), which no user sets.
    import inspect
    import re

    below = (
        "hudilite/spark/write_job.py",
        "hudilite/write/small_write.py",
        "hudilite/spark/insert_dedup.py",
        "hudilite/write/null_ordering.py",
        "hudilite/spark/index_job.py",
    )
    reads = re.compile(r"(\bopts|\boptions|\.raw)\.get\(\s*([\w.]*)|\.get\(\s*(cfg\.\w+)")
    allowed = {"FAIL_POINT_KEY", "OVERWRITE_PARTITIONS_KEY"}
    found = {
        (path, m.group(2) or m.group(3))
        for path in below
        for m in reads.finditer((_ROOT / path).read_text(encoding="utf-8"))
        if (m.group(2) or m.group(3)) not in allowed
    }
    assert found == set()
    # And the checks that once took the options take the resolved values.
    from hudilite.spark import insert_dedup
    from hudilite.write import null_ordering

    assert list(inspect.signature(null_ordering.checked_field).parameters) == [
        "spec",
        "operation",
        "policy",
    ]
    assert list(inspect.signature(null_ordering.report).parameters)[-1] == "policy"
    assert list(inspect.signature(insert_dedup.dup_policy).parameters) == ["wc", "operation"]
