"""Archived-timeline codecs: v6 archive log files (HoodieArchivedMetaEntry in AVRO_DATA
blocks) and the v8 LSM timeline (Parquet files, manifests, version file), round trips,
Java-written shapes, and every real fixture's (empty) archive."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import pyarrow.parquet as pq
import pytest

from hudilite.services import archive_formats as fmt
from hudilite.services.archive import legacy_entry, lsm_row
from hudilite.services.upgrade import legacy_group_to_lsm, lsm_to_legacy
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.log_format import BlockType, HeaderKey, LogBlock, read_log_file
from hudilite.storage.log_format import write_log_file as write_log
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    Instant,
    State,
)
from hudilite.timeline.metadata import (
    CommitMetadata,
    WriteStat,
    read_avro_record,
    write_avro_record,
)
from tests.conftest import fixture_id, fixture_zips, unzip_table

T1, T2, T3 = "20240101000000001", "20240101000000002", "20240101000000003"


def commit_json(op: str = "UPSERT") -> bytes:
    stat = WriteStat("f1-0", "p/f1-0_0-1-2_x.parquet", "p", "null", num_writes=3, num_inserts=3)
    meta = CommitMetadata({"p": [stat]}, op, {"schema": '{"type":"record"}'})
    return meta.to_json_bytes()


def clean_metadata(t: str) -> bytes:
    return write_avro_record(
        "HoodieCleanMetadata",
        {
            "startCleanTime": t,
            "timeTakenInMillis": 5,
            "totalFilesDeleted": 0,
            "earliestCommitToRetain": T1,
            "partitionMetadata": {},
        },
    )


def rollback_metadata(t: str) -> bytes:
    return write_avro_record(
        "HoodieRollbackMetadata",
        {
            "startRollbackTime": t,
            "timeTakenInMillis": 1,
            "totalFilesDeleted": 0,
            "commitsRollback": [T1],
            "partitionMetadata": {},
        },
    )


def compaction_plan() -> bytes:
    ops = [{"baseInstantTime": T1, "fileId": "f1-0", "partitionPath": "p", "deltaFilePaths": []}]
    return write_avro_record("HoodieCompactionPlan", {"operations": ops, "version": 2})


# ------------------------------------------------------------------------------ schemas


def test_entry_schema_is_hudis_field_list_with_each_type_defined_once() -> None:
    schema = fmt.archived_entry_schema()
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieArchivedMetaEntry"
    assert [f["name"] for f in schema["fields"]] == [
        "hoodieCommitMetadata",
        "hoodieCleanMetadata",
        "hoodieCompactionMetadata",
        "hoodieRollbackMetadata",
        "hoodieSavePointMetadata",
        "commitTime",
        "actionType",
        "version",
        "hoodieCompactionPlan",
        "hoodieCleanerPlan",
        "actionState",
        "hoodieReplaceCommitMetadata",
        "hoodieRequestedReplaceMetadata",
        "HoodieInflightReplaceMetadata",
        "hoodieIndexCommitMetadata",
        "stateTransitionTime",
    ]
    text = json.dumps(schema)
    for name in ("HoodieWriteStat", "HoodieCommitMetadata", "HoodieInstantInfo"):
        assert text.count(f'"name": "org.apache.hudi.avro.model.{name}"') == 1
    fastavro.parse_schema(schema)  # self-contained: Java's Schema.Parser needs no other file


# ------------------------------------------------------------------- v6: archive logs


def test_legacy_entries_round_trip_through_an_archive_log_file(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path))
    replace_meta = CommitMetadata(
        {"p": []}, "INSERT_OVERWRITE", {}, partition_to_replace_file_ids={"p": ["f0-0"]}
    )
    states = [
        (Instant(T1, COMMIT, State.REQUESTED), b"", None),
        (Instant(T1, COMMIT, State.INFLIGHT), commit_json(), None),
        (Instant(T1, COMMIT, State.COMPLETED), commit_json(), T2),
        (Instant(T2, CLEAN, State.REQUESTED), b"", None),
        (Instant(T2, CLEAN, State.COMPLETED), clean_metadata(T2), T3),
        (Instant(T3, ROLLBACK, State.COMPLETED), rollback_metadata(T3), T3),
        (Instant(T3, COMPACTION, State.REQUESTED), compaction_plan(), None),
        (Instant(T3, REPLACE_COMMIT, State.COMPLETED), replace_meta.to_json_bytes(), T3),
    ]
    entries = [legacy_entry(i, c, done) for i, c, done in states]
    path = fmt.next_archive_file(gw, ".hoodie/archived")
    assert path == ".hoodie/archived/.commits_.archive.1_1-0-1"
    blocks = [fmt.encode_entries_block(entries[:3]), fmt.encode_entries_block(entries[3:])]
    write_log(gw, path, blocks)
    assert fmt.next_archive_file(gw, ".hoodie/archived").endswith(".commits_.archive.2_1-0-1")

    (block, *_rest) = read_log_file(gw, path)
    assert block.block_type == BlockType.AVRO_DATA
    assert list(block.header) == [HeaderKey.SCHEMA]  # what Hudi's archiver writes
    back = fmt.read_archive_entries(gw, ".hoodie/archived")
    assert [(e["commitTime"], e["actionType"], e["actionState"]) for e in back] == [
        (i.requested_time, i.action, i.state.name) for i, _, _ in states
    ]
    decoded = [fmt.entry_to_instant(e) for e in back]
    assert decoded[0].metadata is not None and decoded[0].metadata["partitionToWriteStats"] == {}
    done = decoded[2]
    assert (done.state, done.completion_time) == (State.COMPLETED, T2)
    meta = done.commit_metadata()
    assert meta is not None and meta.operation_type == "UPSERT"
    assert [(s.file_id, s.num_inserts) for s in meta.write_stats()] == [("f1-0", 3)]
    assert decoded[4].metadata is not None and decoded[4].metadata["startCleanTime"] == T2
    assert decoded[5].metadata is not None and decoded[5].metadata["commitsRollback"] == [T1]
    assert decoded[6].plan is not None and decoded[6].plan["operations"][0]["fileId"] == "f1-0"
    replace = decoded[7].commit_metadata()
    assert replace is not None and replace.replaced_file_groups() == {("p", "f0-0")}


def java_block(records: list[dict[str, Any]], schema: dict[str, Any], version: int = 3) -> LogBlock:
    """A data block as an older Hudi writes it: its own (smaller) writer schema."""
    parsed = fastavro.parse_schema(schema)
    parts = [struct.pack(">i", version), struct.pack(">i", len(records))]
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        parts += (
            [struct.pack(">i", buf.tell()), buf.getvalue()] if version >= 3 else [buf.getvalue()]
        )
    return LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, b"".join(parts))


OLD_SCHEMA = {  # a 0.x-era wrapper: no actionState/stateTransitionTime, lean commit metadata
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {
            "name": "hoodieCommitMetadata",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "HoodieCommitMetadata",
                    "fields": [
                        {"name": "operationType", "type": ["null", "string"], "default": None},
                        {"name": "legacyOnly", "type": ["null", "string"], "default": None},
                    ],
                },
            ],
            "default": None,
        },
        {"name": "commitTime", "type": ["null", "string"], "default": None},
        {"name": "actionType", "type": ["null", "string"], "default": None},
    ],
}


@pytest.mark.parametrize("version", [2, 3])
def test_entries_written_with_an_older_schema_resolve_to_ours(tmp_path: Path, version: int) -> None:
    gw = FileSystemGateway(str(tmp_path))
    rec = {
        "hoodieCommitMetadata": {"operationType": "INSERT", "legacyOnly": "x"},
        "commitTime": T1,
        "actionType": DELTA_COMMIT,
    }
    write_log(
        gw, ".hoodie/archived/.commits_.archive.3_1-0-1", [java_block([rec], OLD_SCHEMA, version)]
    )
    (entry,) = fmt.read_archive_entries(gw, ".hoodie/archived")
    assert entry["actionState"] is None and entry["stateTransitionTime"] is None
    assert "legacyOnly" not in entry["hoodieCommitMetadata"]
    inst = fmt.entry_to_instant(entry)
    assert (inst.requested_time, inst.action, inst.state) == (T1, DELTA_COMMIT, State.COMPLETED)
    meta = inst.commit_metadata()
    assert meta is not None and meta.operation_type == "INSERT"
    assert fmt.next_archive_file(gw, ".hoodie/archived").endswith(".archive.4_1-0-1")


# ------------------------------------------------------------------ v8: LSM timeline


def rows_for(*times: str) -> list[dict[str, Any]]:
    meta = CommitMetadata({}, "UPSERT").to_avro_bytes()
    return [
        {"instantTime": t, "completionTime": t[:-3] + "999", "action": COMMIT, "metadata": meta}
        for t in times
    ]


def test_lsm_file_manifest_and_version_as_hudi_writes_them(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path))
    hist = ".hoodie/timeline/history"
    assert fmt.read_lsm_rows(gw, hist) == [] and fmt.latest_lsm_version(gw, hist) == -1
    name = fmt.write_lsm_file(gw, hist, rows_for(T1, T2))
    assert name == f"{T1}_{T2}_0.parquet"
    assert fmt.write_lsm_file(gw, hist, rows_for(T1, T2)) is None  # already committed
    size = gw.size(f"{hist}/{name}")
    assert gw.read_bytes(f"{hist}/_version_") == b"1"
    assert gw.read_bytes(f"{hist}/manifest_1").decode() == (
        '{\n  "files" : [ {\n    "fileName" : "'
        + name
        + '",\n    "fileLen" : '
        + str(size)
        + "\n  } ]\n}"
    )
    pf = pq.ParquetFile(gw.abs_path(f"{hist}/{name}"))
    assert str(pf.schema).count("optional binary") == 5 and "required int32" in str(pf.schema)
    footer = pf.metadata.metadata or {}
    assert json.loads(footer[b"parquet.avro.schema"])["name"] == "HoodieLSMTimelineInstant"
    (r1, r2) = fmt.read_lsm_rows(gw, hist)
    assert (r1["instantTime"], r1["completionTime"], r1["version"]) == (T1, T1[:-3] + "999", 1)
    inst = fmt.lsm_row_to_instant(r2)
    assert inst.is_completed and inst.completion_time == T2[:-3] + "999"
    assert inst.commit_metadata() == CommitMetadata({}, "UPSERT")
    assert fmt.render_manifest([]) == '{\n  "files" : [ ]\n}'


def test_lsm_compaction_merges_a_full_level_and_cleans_old_snapshots(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path))
    hist = "h"
    times = [f"202401010000000{n:02d}" for n in range(10)]
    for a, b in zip(times[::2], times[1::2], strict=True):
        fmt.write_lsm_file(gw, hist, rows_for(a, b))
        fmt.compact_lsm(gw, hist, batch_size=3)
    live = [f.name for f in fmt.read_manifest(gw, hist)]
    # The first 3 L0 files became one L1 file; the 2 newer L0 files remain.
    assert live == [
        f"{times[0]}_{times[5]}_1.parquet",
        f"{times[6]}_{times[7]}_0.parquet",
        f"{times[8]}_{times[9]}_0.parquet",
    ]
    assert [f.level for f in fmt.read_manifest(gw, hist)] == [1, 0, 0]
    assert [r["instantTime"] for r in fmt.read_lsm_rows(gw, hist)] == times
    manifests = [e.name for e in gw.list_dir(hist) if e.name.startswith("manifest_")]
    assert len(manifests) == fmt.MANIFEST_VERSIONS_RETAINED
    parquet = {e.name for e in gw.list_dir(hist) if e.name.endswith(".parquet")}
    kept = {f.name for v in fmt.lsm_versions(gw, hist) for f in fmt.read_manifest(gw, hist, v)}
    assert parquet == kept  # the merged L0 files are gone once no kept snapshot lists them


def test_active_instants_become_lsm_rows_and_legacy_entries_and_back() -> None:
    plan = compaction_plan()
    group = [
        (Instant(T1, COMPACTION, State.REQUESTED), plan),
        (Instant(T1, COMPACTION, State.INFLIGHT), b""),
        (Instant(T1, COMMIT, State.COMPLETED, T2), CommitMetadata({}, "COMPACT").to_avro_bytes()),
    ]
    row = lsm_row(group)
    assert (row["instantTime"], row["completionTime"], row["action"]) == (T1, T2, COMMIT)
    assert row["plan"] == plan
    legacy = lsm_to_legacy(row)
    assert legacy["actionState"] == "COMPLETED" and legacy["stateTransitionTime"] == T2
    assert legacy["hoodieCommitMetadata"]["operationType"] == "COMPACT"
    assert legacy["hoodieCompactionPlan"]["operations"][0]["fileId"] == "f1-0"
    again = legacy_group_to_lsm([legacy])
    assert again is not None
    assert read_avro_record(again["metadata"])["operationType"] == "COMPACT"
    assert read_avro_record(again["plan"])["operations"][0]["fileId"] == "f1-0"
    clean = legacy_group_to_lsm(
        [
            legacy_entry(Instant(T3, CLEAN, State.REQUESTED), b"", None),
            legacy_entry(Instant(T3, CLEAN, State.COMPLETED), clean_metadata(T3), T3),
        ]
    )
    assert clean is not None and read_avro_record(clean["metadata"])["startCleanTime"] == T3
    assert (
        legacy_group_to_lsm([legacy_entry(Instant(T1, COMMIT, State.INFLIGHT), b"", None)]) is None
    )


# -------------------------------------------------------------------- real fixtures

ZIPS = fixture_zips()


@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_fixture_archives_read(tmp_path: Path, zip_path: Path) -> None:
    """Every fixture's archive folder (``archived``/``timeline/history``, created by Hudi
    and empty in all of them) reads as an empty archived timeline."""
    from hudilite.services.archive import archived_timeline

    base = unzip_table(zip_path, tmp_path)
    state = TableState.load(FileSystemGateway(str(base)))
    expected = [
        (i["commitTime"], i["actionType"])
        for i in fmt.read_archive_entries(state.gw, ".hoodie/archived")
    ]
    assert [(i.requested_time, i.action) for i in archived_timeline(state)] == expected
