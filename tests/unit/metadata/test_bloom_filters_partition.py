"""The bloom_filters partition (hudilite/metadata/bloom_filters.py), without a JVM.

* Keys: Hudi's column_stats keys in its own v9_txns_*_meta tables end with the
  ``PartitionIndexID + FileIndexID`` of their file, which is the whole bloom_filters key
  (``getBloomFilterIndexKey``); a key's file group is Java's ``String.hashCode`` modulo 4,
  recomputed here independently.
* Kept exact: a table with the option turned on goes through a seeded history of commits,
  clustering, clean, rollback and restore (on COW and MOR), the metadata table compacted
  every three deltacommits (every bloom_filters group gets compacted base files); after each
  action the live records equal a dict oracle of the live base files' footer filters (read
  with pyarrow), no deleted file keeps a live record, and hudi-rs reads the rows hudilite
  reads.
* Turned on for a table whose metadata table has only files: built from its listing. A
  write dying between its metadata deltacommit and its completion: its filters are read by
  no reader, and the next lock removes them with the deltacommit.
* Turning the option off drops the partition; a bad file group count is refused by name.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import ConfigError
from hudilite.metadata import bloom_filters as bf
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import sync
from hudilite.metadata import table as mt
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.services.clean import clean
from hudilite.services.clustering import cluster
from hudilite.services.restore import restore
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import create_savepoint
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read, rows

HUDI_META = "sample_table/cow/v9_txns_simple_meta.zip"
V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"


def _unzip(zip_rel: str, tmp_path: Path) -> FileSystemGateway:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    return FileSystemGateway(str(unzip_table(zp, tmp_path)))


def _set(gw: FileSystemGateway, **values: str) -> None:
    """Store write options and take the table lock (the guard builds or drops partitions)."""
    stored = properties_file.read_write_defaults(gw)
    stored.update(values)
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass


def _enable(gw: FileSystemGateway) -> None:
    _set(
        gw,
        **{
            cfg.METADATA_ENABLED.name: "true",
            cfg.METADATA_BLOOM_FILTER_ENABLED.name: "true",
            cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name: "3",
        },
    )


def _java_hash(text: str) -> int:
    """``String.hashCode`` written out: s[0]*31^(n-1) + ... + s[n-1], as a signed int."""
    h = sum(ord(c) * 31 ** (len(text) - 1 - i) for i, c in enumerate(text)) % 2**32
    return h - 2**32 if h >= 2**31 else h


def test_keys_are_hudis_partition_and_file_ids(tmp_path: Path) -> None:
    gw = _unzip(HUDI_META, tmp_path)
    partition_of = {
        e.name: e.path.rpartition("/")[0]
        for e in gw.list_recursive("")
        if not e.path.startswith(".hoodie") and e.name.endswith(".parquet")
    }
    compared = 0
    for key, record in cs.read_partition(gw).items():  # Hudi's own records
        if record.file_name not in partition_of:
            continue  # a log file's statistics
        column_id = csr.hash64_id(record.column)
        assert key.startswith(column_id)
        mine = bf.record_key(partition_of[record.file_name], record.file_name)
        assert key[len(column_id) :] == mine
        assert len(mine) == 12 + 24  # base64 of 8 and of 16 bytes
        compared += 1
    assert compared > 50


def test_file_group_of_a_key_is_hudis(tmp_path: Path) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _enable(gw)
    seen = 0
    for entry in gw.list_dir(bf.PART_DIR):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName):
            group = int(parsed.file_id.split("-")[2])
            for record in bf.decode_hfile(gw.read_bytes(entry.path)):
                assert abs(_java_hash(record.key)) % bf.FILE_GROUPS == group
                assert record.timestamp == bf.INIT_INSTANT
                seen += 1
    assert seen > 10
    assert sorted(e.name for e in gw.list_dir(bf.PART_DIR) if e.name.endswith(".hfile")) == [
        f"bloom-filters-000{i}-0_0-0-0_00000000000000004.hfile" for i in range(4)
    ]


# ------------------------------------------------------------------ kept exact: the oracle


def _oracle(gw: FileSystemGateway) -> dict[str, tuple[str, bytes]]:
    """key -> (type code, footer filter bytes) of every live base file, read with pyarrow."""
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    out = {}
    for partition, files in mt.live_files(gw, config).items():
        for name in files:
            if not name.endswith(".parquet"):
                continue
            rel = f"{partition}/{name}" if partition else name
            footer = pq.read_metadata(gw.abs_path(rel)).metadata
            code = footer.get(b"hoodie_bloom_filter_type_code", b"SIMPLE").decode()
            out[bf.record_key(partition, name)] = (code, footer[b"org.apache.hudi.bloomfilter"])
    return out


def _indexed(gw: FileSystemGateway) -> dict[str, tuple[str, bytes]]:
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    records = bf.read_partition(gw, Timeline.load(gw, config))
    return {k: (r.type_code, r.bloom) for k, r in records.items() if not r.deleted}


def _commit_copy(gw: FileSystemGateway, rng: random.Random) -> str:
    """A commit adding a copy of a live base file as a new file group; its instant time."""
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    files = sorted(
        (p, n) for p, fs in mt.live_files(gw, config).items() for n in fs if n.endswith(".parquet")
    )
    partition, name = rng.choice(files)
    writer = TimelineWriter(gw, config)
    inst = writer.transition_inflight(writer.create_requested(COMMIT))
    file_id = f"{rng.randrange(16**8):08x}-0000-0000-0000-000000000000-0"
    new = BaseFileName(file_id, "0-1-0", inst.requested_time, ".parquet").render()
    rel = f"{partition}/{new}" if partition else new
    shutil.copyfile(gw.abs_path(f"{partition}/{name}" if partition else name), gw.abs_path(rel))
    size = os.path.getsize(gw.abs_path(rel))
    stat = WriteStat(
        file_id=file_id,
        path=rel,
        partition_path=partition,
        num_writes=1,
        num_inserts=1,
        total_write_bytes=size,
        file_size_in_bytes=size,
    )
    content = CommitMetadata(
        partition_to_write_stats={partition: [stat]}, operation_type="INSERT"
    ).to_bytes(config.layout_version)
    with table_lock(gw):
        writer.complete(inst, content)
    return inst.requested_time


def _snapshot_rows(gw: FileSystemGateway) -> list[tuple]:
    state = TableState.load(gw)
    table = read_plan_arrow(gw, plan_snapshot(state.view), state.storage_schema)
    return sorted(rows(table, ["_hoodie_record_key", "_hoodie_file_name"]))


@pytest.mark.parametrize(("zip_rel", "seed"), [(V9_COW, 3), (V9_MOR, 5)])
def test_random_history_keeps_filters_exact(zip_rel: str, seed: int, tmp_path: Path) -> None:
    gw = _unzip(zip_rel, tmp_path)
    _enable(gw)
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "bloom_filters,files"
    assert _indexed(gw) == _oracle(gw) != {}
    rng = random.Random(seed)
    saved = last = None
    actions = ["commit", "commit", "cluster", "clean", "savepoint", "commit"]
    rng.shuffle(actions)
    actions += ["commit", "rollback", "restore", "commit", "clean"]
    done = []
    compacted: set[str] = set()
    for action in actions:
        state = TableState.load(gw)
        if action == "commit":
            last = _commit_copy(gw, rng)
        elif action == "cluster":
            cluster(state, {"hoodie.clustering.plan.strategy.small.file.limit": str(10**9)})
        elif action == "clean":
            clean(state, {"hoodie.cleaner.commits.retained": "1"})
        elif action == "rollback":
            assert last is not None
            rollback_instant(state, last)
        elif action == "savepoint":
            saved = create_savepoint(state).instant_time
        elif action == "restore":
            assert saved is not None
            restore(state, saved)
        if action not in ("commit", "savepoint"):
            last = None  # only the latest commit is rolled back
        done.append(action)
        assert _indexed(gw) == _oracle(gw), done
        compactions = mt.load_timeline(gw).compactions
        compacted |= {
            p.file_id
            for e in gw.list_dir(bf.PART_DIR)
            if isinstance(p := parse_data_file_name(e.name), BaseFileName)
            and p.instant_time in compactions
        }
    # the metadata table's compactions (every three deltacommits) compacted the groups too
    assert compacted == {bf.file_id(i) for i in range(bf.FILE_GROUPS)}
    # the deleted files' records are there, deleted (cleaned, replaced, rolled back)
    deleted = [r for r in bf.read_partition(gw).values() if r.deleted]
    assert deleted and all((r.bloom, r.type_code) == (b"", "DYNAMIC_V0") for r in deleted)
    read = hudi_rs_read(gw.abs_path(""))
    assert sorted(rows(read, ["_hoodie_record_key", "_hoodie_file_name"])) == _snapshot_rows(gw)


def test_turning_the_option_off_drops_the_partition(tmp_path: Path) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _enable(gw)
    assert gw.exists(bf.PART_DIR)
    _set(gw, **{cfg.METADATA_BLOOM_FILTER_ENABLED.name: "false"})
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    assert not gw.exists(bf.PART_DIR)
    assert not [e for e in gw.list_dir(mt.TIMELINE_DIR) if e.name.startswith(bf.INIT_INSTANT)]


def test_a_bad_file_group_count_is_refused(tmp_path: Path) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _enable(gw)
    _set(gw, **{cfg.METADATA_BLOOM_FILTER_ENABLED.name: "false"})
    key = cfg.METADATA_BLOOM_FILTER_FILE_GROUP_COUNT.name
    stored = properties_file.read_write_defaults(gw)
    stored.update({key: "0", cfg.METADATA_BLOOM_FILTER_ENABLED.name: "true"})
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with pytest.raises(ConfigError, match=f"^{key} must be at least 1, got 0$"), table_lock(gw):
        pass
    assert "bloom_filters" not in properties_file.load(gw)["hoodie.table.metadata.partitions"]


def test_turned_on_for_a_table_with_a_metadata_table_and_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _set(gw, **{cfg.METADATA_ENABLED.name: "true"})
    _commit_copy(gw, random.Random(1))  # a deltacommit of the files partition alone
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    _enable(gw)  # built from the files partition's listing, the copy's file included
    assert _indexed(gw) == _oracle(gw) != {}
    # A write dying between its metadata deltacommit and its completion: the filters it
    # wrote are read by no one, and the next lock removes them with the deltacommit.
    monkeypatch.setenv(failpoints.ENV_VAR, sync.AFTER_DELTACOMMIT)
    with pytest.raises(Exception, match="simulated failure"):
        _commit_copy(gw, random.Random(2))
    monkeypatch.delenv(failpoints.ENV_VAR)
    stray = max(sync.deltacommit_times(gw))
    assert any(stray in e.name for e in gw.list_dir(bf.PART_DIR))
    assert _indexed(gw) == _oracle(gw)
    with table_lock(gw):
        pass
    assert not any(stray in e.name for e in gw.list_dir(bf.PART_DIR))
    assert stray not in sync.deltacommit_times(gw)
    assert _indexed(gw) == _oracle(gw)
