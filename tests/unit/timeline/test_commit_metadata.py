"""Commit metadata (v6 JSON, v8+ Avro) and the Avro helpers, against real Hudi files."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from hudilite.errors import CorruptFileError
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import (
    AVRO_DIR,
    CommitMetadata,
    WriteStat,
    avro_schema,
    avro_schema_names,
    read_avro_container,
    read_avro_record,
    write_avro_record,
)

V6_COMPLEX = "sample_table/cow/v6_complexkeygen_hivestyle.zip"
V6_TRIPS = "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip"
V8_COW = "sample_table/cow/v8_nonpartitioned.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"


def _read(base: Path, rel: str) -> bytes:
    return (base / rel).read_bytes()


# -- decoding real files --------------------------------------------------------------------------


def test_decode_v6_json_commit(shared_fixture) -> None:
    base = shared_fixture(V6_COMPLEX)
    meta = CommitMetadata.from_bytes(_read(base, ".hoodie/20240418173235694.commit"))
    assert meta.operation_type == "UPSERT"
    assert not meta.compacted and not meta.is_replace
    assert meta.partitions() == ["byteField=10/shortField=300", "byteField=30/shortField=100"]
    assert meta.file_ids() == {
        ("byteField=10/shortField=300", "a22e8257-e249-45e9-ba46-115bc85adcba-0"),
        ("byteField=30/shortField=100", "4668e35e-bff8-4be9-9ff2-e7fb17ecb1a7-0"),
    }
    updated, inserted = meta.write_stats()
    assert updated.prev_commit == "20240418173213674" and not updated.is_new_file_group
    assert (updated.num_writes, updated.num_update_writes, updated.num_inserts) == (2, 1, 0)
    assert updated.total_write_bytes == updated.file_size_in_bytes == 441655
    assert updated.runtime_stats == {
        "totalScanTime": 0,
        "totalUpsertTime": 102,
        "totalCreateTime": 0,
    }
    assert inserted.prev_commit == "null" and inserted.is_new_file_group
    assert inserted.path == (
        "byteField=30/shortField=100/"
        "4668e35e-bff8-4be9-9ff2-e7fb17ecb1a7-0_1-161-224_20240418173235694.parquet"
    )
    assert (meta.total_inserts, meta.total_updates, meta.total_deletes) == (1, 1, 0)
    assert (meta.total_records_written, meta.total_bytes_written) == (3, 441655 + 441457)
    assert meta.schema is not None
    assert json.loads(meta.schema)["name"] == "v6_complexkeygen_hivestyle_record"


def test_decode_v6_json_delta_commit_with_log_write(shared_fixture) -> None:
    base = shared_fixture(V6_TRIPS)
    meta = CommitMetadata.from_bytes(_read(base, ".hoodie/20250331030645735.deltacommit"))
    assert meta.operation_type == "UPSERT_PREPPED"
    (stat,) = meta.write_stats()
    assert stat.is_delta
    assert (
        stat.base_file == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_0-13-60_20250331030642808.parquet"
    )
    assert stat.log_files == [
        ".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"
    ]
    assert (stat.log_version, stat.log_offset, stat.total_write_bytes) == (1, 0, 1148)
    assert meta.extra_metadata["_hoodie.spark.sql.writes.prepped"] == "true"


def test_decode_v8_avro_commit(shared_fixture) -> None:
    base = shared_fixture(V8_COW)
    data = _read(base, ".hoodie/timeline/20250713010535797_20250713010536200.commit")
    assert data.startswith(b"Obj\x01")
    meta = CommitMetadata.from_bytes(data)
    assert meta.operation_type == "UPSERT"
    assert meta.partitions() == [""]
    (stat,) = meta.partition_to_write_stats[""]
    assert stat.file_id == "2746610d-ad02-4adb-a038-5cbb99cbd455-0"
    assert stat.path == "2746610d-ad02-4adb-a038-5cbb99cbd455-0_0-54-79_20250713010535797.parquet"
    assert (stat.num_inserts, stat.num_writes, stat.total_write_bytes) == (3, 3, 441374)
    assert stat.runtime_stats == {"totalScanTime": 0, "totalCreateTime": 76, "totalUpsertTime": 0}
    assert not stat.is_delta
    # The inflight file holds a planning profile: one placeholder stat with an empty id.
    inflight = CommitMetadata.from_bytes(_read(base, ".hoodie/timeline/20250713010535797.inflight"))
    assert inflight.total_inserts == 3 and inflight.file_ids() == set()


def test_decode_v9_replace_compaction_and_clustering(shared_fixture) -> None:
    base = shared_fixture(V9_MOR)
    tl = base / ".hoodie/timeline"
    replace = CommitMetadata.from_bytes(
        (tl / "20260307135837782_20260307135838045.replacecommit").read_bytes()
    )
    assert replace.operation_type == "INSERT_OVERWRITE" and replace.is_replace
    assert replace.partition_to_replace_file_ids == {
        "region=eu": [
            "c06fe141-9f11-46fb-aa70-d7f9d2dcca2f-0",
            "be8660fe-da4e-43c3-80cf-4fccb89ab0cc-0",
        ]
    }
    assert replace.file_ids() == {("region=eu", "7a277c43-3eaf-43af-ac23-8b8fd5af50be-0")}

    compaction = CommitMetadata.from_bytes(
        (tl / "20260307135839895_20260307135840408.commit").read_bytes()
    )
    assert compaction.operation_type == "COMPACT" and compaction.compacted
    us = compaction.partition_to_write_stats["region=us"][0]
    assert (
        us.prev_base_file
        == "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_1-3-7_20260307135827749.parquet"
    )
    assert (us.total_log_files_compacted, us.total_log_size_compacted, us.num_deletes) == (
        2,
        3879,
        1,
    )

    cluster = CommitMetadata.from_bytes(
        (tl / "20260307135840454_20260307135840902.replacecommit").read_bytes()
    )
    assert cluster.operation_type == "CLUSTER" and cluster.total_inserts == 10
    assert sorted(cluster.replaced_file_groups()) == [
        ("region=apac", "6c49c37a-faf6-4ab2-a4a7-d66e4ea05a2f-0"),
        ("region=apac", "9c6ed25b-6c9d-4793-ad27-1c8518086b6a-0"),
        ("region=eu", "7a277c43-3eaf-43af-ac23-8b8fd5af50be-0"),
        ("region=us", "8fbe3fc8-a15f-4ffe-aac5-20024bdc863d-0"),
        ("region=us", "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0"),
    ]

    log_write = CommitMetadata.from_bytes(
        (tl / "20260307135830801_20260307135831753.deltacommit").read_bytes()
    )
    (stat,) = log_write.write_stats()
    assert stat.is_delta and stat.base_file == "" and stat.log_version == 1
    assert stat.log_files == [
        ".db2fca8f-03b7-4da7-b042-4b617ab79b9d-0_20260307135830801.log.1_0-10-23"
    ]


def test_decode_v9_plans(shared_fixture) -> None:
    tl = shared_fixture(V9_MOR) / ".hoodie/timeline"
    name, plan = read_avro_container((tl / "20260307135839895.compaction.requested").read_bytes())
    assert name == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    assert [op["fileId"] for op in plan["operations"]] == [
        "db2fca8f-03b7-4da7-b042-4b617ab79b9d-0",
        "9c6ed25b-6c9d-4793-ad27-1c8518086b6a-0",
    ]
    assert plan["operations"][0]["metrics"]["TOTAL_LOG_FILES_SIZE"] == 3879.0
    clustering = read_avro_record((tl / "20260307135840454.clustering.requested").read_bytes())
    assert clustering["operationType"] == "CLUSTER"
    groups = clustering["clusteringPlan"]["inputGroups"]
    assert [len(g["slices"]) for g in groups] == [2, 1, 2]


# -- exact round trips over every fixture commit file ---------------------------------------------

ALL_TABLES = [
    V6_COMPLEX,
    V6_TRIPS,
    V8_COW,
    V9_MOR,
    "sample_table/cow/v6_nonpartitioned.zip",
    "sample_table/cow/v8_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v9_txns_simple_nometa.zip",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
]


@pytest.mark.parametrize("table", ALL_TABLES)
def test_every_commit_file_round_trips_exactly(shared_fixture, table: str) -> None:
    base = shared_fixture(table)
    layout = 2 if (base / ".hoodie/timeline").is_dir() else 1
    folder = base / (".hoodie/timeline" if layout == 2 else ".hoodie")
    checked = 0
    for path in sorted(folder.iterdir()):
        inst = Instant.parse(path.name, layout)
        data = path.read_bytes() if inst is not None else b""
        if inst is None or not data or inst.is_requested or not inst.is_write:
            continue
        meta = CommitMetadata.from_bytes(data)
        if layout == 1:
            # Same document, field for field (key order included), as Jackson wrote it.
            assert list(meta.to_dict().items()) == list(json.loads(data).items()), path.name
            assert CommitMetadata.from_bytes(meta.to_json_bytes()) == meta
        else:
            writer_name, record = read_avro_container(data)
            ours = meta.to_avro_bytes(replace=writer_name.endswith("HoodieReplaceCommitMetadata"))
            our_name, our_record = read_avro_container(ours)
            assert our_name == writer_name
            assert our_record == record, path.name
        checked += 1
    assert checked >= 2


def test_our_avro_has_hudis_writer_schema(shared_fixture) -> None:
    """The schema we embed has the same fields (names and order) as Hudi 1.1's."""
    tl = shared_fixture(V9_MOR) / ".hoodie/timeline"
    for name in (
        "20260307135837782_20260307135838045.replacecommit",
        "20260307135839895_20260307135840408.commit",
    ):
        data = (tl / name).read_bytes()
        theirs: dict[str, Any] = fastavro.reader(io.BytesIO(data)).writer_schema  # type: ignore[assignment]
        ours_bytes = CommitMetadata.from_bytes(data).to_avro_bytes()
        reader = fastavro.reader(io.BytesIO(ours_bytes))
        assert reader.codec == "null"
        ours: dict[str, Any] = reader.writer_schema  # type: ignore[assignment]
        assert ours["name"] == theirs["name"]
        assert [f["name"] for f in ours["fields"]] == [f["name"] for f in theirs["fields"]]
        assert _stat_fields(ours) == _stat_fields(theirs)


def _stat_fields(schema: dict[str, Any]) -> list[str]:
    """Field names of the HoodieWriteStat record inside a commit metadata schema."""
    stat = schema["fields"][0]["type"][1]["values"]["items"]
    return [f["name"] for f in stat["fields"]]


def test_hudi_rs_reads_tables_whose_commits_we_re_encoded(shared_fixture, tmp_path: Path) -> None:
    """Replace every completed commit of real tables by our encoding: hudi-rs sees the same data."""
    hudi = pytest.importorskip("hudi")
    for table in (V9_MOR, V6_COMPLEX):
        original = shared_fixture(table)
        copy = tmp_path / f"copy_{original.name}"
        shutil.copytree(original, copy)
        layout = 2 if (copy / ".hoodie/timeline").is_dir() else 1
        folder = copy / (".hoodie/timeline" if layout == 2 else ".hoodie")
        rewritten = 0
        for path in folder.iterdir():
            inst = Instant.parse(path.name, layout)
            if inst is not None and inst.is_completed and inst.is_write:
                meta = CommitMetadata.from_bytes(path.read_bytes())
                path.write_bytes(meta.to_bytes(layout))
                rewritten += 1
        assert rewritten >= 2

        def snapshot(p: Path) -> list[tuple]:
            t = hudi.HudiTableBuilder.from_base_uri(str(p)).build()
            tab = pa.Table.from_batches(t.read(hudi.HudiReadOptions()))
            return sorted(
                zip(*(tab.column(c).to_pylist() for c in tab.column_names[:5]), strict=True)
            )

        expected = snapshot(original)
        assert expected and snapshot(copy) == expected


# -- encoding -------------------------------------------------------------------------------------


def _stat(**kw) -> WriteStat:
    base = dict(file_id="f1-0", path="p/f1-0_0-1-2_20240101000000000.parquet", partition_path="p")
    base.update(kw)
    return WriteStat(**base)  # type: ignore[arg-type]


def test_new_commit_round_trips_in_both_encodings() -> None:
    meta = CommitMetadata(
        partition_to_write_stats={
            "p": [
                _stat(num_inserts=5, num_writes=5, total_write_bytes=100, file_size_in_bytes=100)
            ],
            "q": [
                _stat(
                    file_id="f2-0",
                    path="q/.f2-0_20240101000000000.log.1_0-1-2",
                    partition_path="q",
                    prev_commit="20240101000000000",
                    base_file="f2-0_0-1-2_20240101000000000.parquet",
                    log_files=[".f2-0_20240101000000000.log.1_0-1-2"],
                    log_version=1,
                    log_offset=0,
                    num_update_writes=2,
                    num_deletes=1,
                )
            ],
        },
        operation_type="UPSERT",
        extra_metadata={"schema": '{"type":"record"}'},
    )
    for data in (meta.to_json_bytes(), meta.to_avro_bytes(), meta.to_bytes(1), meta.to_bytes(2)):
        assert CommitMetadata.from_bytes(data) == meta
    doc = json.loads(meta.to_json_bytes())
    assert list(doc) == ["partitionToWriteStats", "compacted", "extraMetadata", "operationType"]
    p_stat, q_stat = doc["partitionToWriteStats"]["p"][0], doc["partitionToWriteStats"]["q"][0]
    assert "logVersion" not in p_stat and p_stat["prevCommit"] == "null"
    assert q_stat["logFiles"] == [".f2-0_20240101000000000.log.1_0-1-2"]
    assert q_stat["recordsStats"] == {"val": None}
    record = read_avro_record(meta.to_avro_bytes())
    assert record["version"] is None and "partitionToReplaceFileIds" not in record
    assert record["partitionToWriteStats"]["p"][0]["logFiles"] is None
    assert (
        record["partitionToWriteStats"]["q"][0]["baseFile"]
        == "f2-0_0-1-2_20240101000000000.parquet"
    )
    assert (meta.file_ids(), meta.written_paths()) == (
        {("p", "f1-0"), ("q", "f2-0")},
        ["p/f1-0_0-1-2_20240101000000000.parquet", "q/.f2-0_20240101000000000.log.1_0-1-2"],
    )


def test_replace_commit_encoding() -> None:
    meta = CommitMetadata(
        partition_to_write_stats={"p": [_stat()]},
        operation_type="INSERT_OVERWRITE",
        extra_metadata={},
        partition_to_replace_file_ids={"p": ["old-0", "older-0"]},
    )
    assert meta.is_replace
    name, record = read_avro_container(meta.to_avro_bytes())
    assert name == "org.apache.hudi.avro.model.HoodieReplaceCommitMetadata"
    assert record["partitionToReplaceFileIds"] == {"p": ["old-0", "older-0"]}
    assert json.loads(meta.to_json_bytes())["partitionToReplaceFileIds"] == {
        "p": ["old-0", "older-0"]
    }
    assert CommitMetadata.from_bytes(meta.to_avro_bytes()) == meta
    # Overwriting an empty table replaces nothing but is still a replacecommit.
    empty = CommitMetadata({}, "INSERT_OVERWRITE_TABLE", {})
    assert empty.is_replace
    assert read_avro_container(empty.to_avro_bytes())[0].endswith("HoodieReplaceCommitMetadata")
    assert read_avro_container(empty.to_avro_bytes(replace=False))[0].endswith(
        ".HoodieCommitMetadata"
    )


def test_from_bytes_edge_cases() -> None:
    assert CommitMetadata.from_bytes(b"") == CommitMetadata()
    assert CommitMetadata.from_bytes(b"  \n") == CommitMetadata()
    assert CommitMetadata.from_bytes(b"{}").operation_type == "UNKNOWN"
    for bad in (b"not json", b"[1, 2]", b"\xff\xfe", b"Obj\x01garbage"):
        with pytest.raises(CorruptFileError):
            CommitMetadata.from_bytes(bad)


# -- Avro helpers for every instant content schema ------------------------------------------------

RECORDS: dict[str, dict[str, Any]] = {
    "HoodieRollbackPlan": {
        "instantToRollback": {"commitTime": "20240101000000000", "action": "commit"},
        "RollbackRequests": [
            {
                "partitionPath": "p",
                "fileId": "f1-0",
                "latestBaseInstant": "20240101000000000",
                "filesToBeDeleted": ["p/f1-0_0-1-2_20240101000000000.parquet"],
                "logBlocksToBeDeleted": None,
            }
        ],
        "version": 1,
    },
    "HoodieRollbackMetadata": {
        "startRollbackTime": "20240101000000005",
        "timeTakenInMillis": 12,
        "totalFilesDeleted": 1,
        "commitsRollback": ["20240101000000000"],
        "partitionMetadata": {
            "p": {
                "partitionPath": "p",
                "successDeleteFiles": ["p/f1-0_0-1-2_20240101000000000.parquet"],
                "failedDeleteFiles": [],
                "rollbackLogFiles": None,
                "logFilesFromFailedCommit": None,
            }
        },
        "version": 1,
        "instantsRollback": [{"commitTime": "20240101000000000", "action": "commit"}],
    },
    "HoodieCleanerPlan": {
        "earliestInstantToRetain": {
            "timestamp": "20240101000000000",
            "action": "commit",
            "state": "COMPLETED",
        },
        "lastCompletedCommitTimestamp": "20240102000000000",
        "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": None,
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            "p": [
                {
                    "filePath": "/t/p/f1-0_0-1-2_20231231000000000.parquet",
                    "isBootstrapBaseFile": False,
                }
            ]
        },
        "partitionsToBeDeleted": [],
        "extraMetadata": None,
    },
    "HoodieCleanMetadata": {
        "startCleanTime": "20240103000000000",
        "timeTakenInMillis": 3,
        "totalFilesDeleted": 1,
        "earliestCommitToRetain": "20240101000000000",
        "lastCompletedCommitTimestamp": "20240102000000000",
        "partitionMetadata": {
            "p": {
                "partitionPath": "p",
                "policy": "KEEP_LATEST_COMMITS",
                "deletePathPatterns": ["f1-0_0-1-2_20231231000000000.parquet"],
                "successDeleteFiles": ["f1-0_0-1-2_20231231000000000.parquet"],
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            }
        },
        "version": 2,
        "bootstrapPartitionMetadata": None,
        "extraMetadata": None,
    },
    "HoodieSavepointMetadata": {
        "savepointedBy": "hudilite",
        "savepointedAt": 1704067200,
        "comments": "before migration",
        "partitionMetadata": {
            "p": {"partitionPath": "p", "savepointDataFile": ["f1-0_0-1-2_1.parquet"]}
        },
        "version": 1,
    },
}


@pytest.mark.parametrize("schema_name", sorted(RECORDS))
def test_avro_records_round_trip(schema_name: str) -> None:
    data = write_avro_record(schema_name, RECORDS[schema_name])
    name, record = read_avro_container(data)
    assert name == f"org.apache.hudi.avro.model.{schema_name}"
    assert record == RECORDS[schema_name]
    # The embedded writer schema is self-contained: it parses without our .avsc files.
    fastavro.parse_schema(fastavro.reader(io.BytesIO(data)).writer_schema)


def test_plans_from_hudi_re_encode_identically(shared_fixture) -> None:
    tl = shared_fixture(V9_MOR) / ".hoodie/timeline"
    for name, schema in (
        ("20260307135839895.compaction.requested", "HoodieCompactionPlan"),
        ("20260307135840454.clustering.requested", "HoodieRequestedReplaceMetadata"),
        ("20260307135837782.replacecommit.requested", "HoodieRequestedReplaceMetadata"),
    ):
        record = read_avro_record((tl / name).read_bytes())
        assert read_avro_record(write_avro_record(schema, record)) == record


def test_avro_helpers_defaults_and_errors() -> None:
    # Missing fields with defaults take them; "version" defaults to 1.
    record = read_avro_record(
        write_avro_record("HoodieInstantInfo", {"commitTime": "1", "action": "x"})
    )
    assert record == {"commitTime": "1", "action": "x"}
    plan = read_avro_record(write_avro_record("HoodieCompactionPlan", {"operations": []}))
    assert plan["version"] == 1 and plan["operations"] == []
    with pytest.raises(ValueError):
        write_avro_record("HoodieInstantInfo", {"commitTime": "1", "action": "x", "oops": 1})
    with pytest.raises(KeyError):
        write_avro_record("HoodieNoSuchThing", {})
    with pytest.raises(CorruptFileError):
        read_avro_record(b"{}")
    schema = avro_schema("HoodieReplaceCommitMetadata")
    stat = schema["fields"][0]["type"][1]["values"]["items"]
    assert stat["name"] == "org.apache.hudi.avro.model.HoodieWriteStat"  # reference resolved
    expected = {
        "HoodieActionInstant",
        "HoodieCleanFileInfo",
        "HoodieCleanMetadata",
        "HoodieCleanPartitionMetadata",
        "HoodieCleanerPlan",
        "HoodieClusteringGroup",
        "HoodieClusteringPlan",
        "HoodieClusteringStrategy",
        "HoodieCommitMetadata",
        "HoodieCompactionOperation",
        "HoodieCompactionPlan",
        "HoodieCompactionStrategy",
        "HoodieInstantInfo",
        "HoodieReplaceCommitMetadata",
        "HoodieRequestedReplaceMetadata",
        "HoodieRollbackMetadata",
        "HoodieRollbackPartitionMetadata",
        "HoodieRollbackPlan",
        "HoodieSavepointMetadata",
        "HoodieSavepointPartitionMetadata",
        "HoodieSliceInfo",
    }
    assert {p.stem for p in AVRO_DIR.glob("*.avsc")} == expected
    names = set(avro_schema_names())
    assert {f"org.apache.hudi.avro.model.{n}" for n in expected} <= names
    assert "org.apache.hudi.avro.model.HoodieWriteStat" in names
