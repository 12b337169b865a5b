"""The column_stats partition (hudilite/metadata/column_stats*.py), without a JVM.

* Records: for every data file of Hudi 1.1's own v9_txns_*_meta tables, the record hudilite
  computes for each indexed column has the key of Hudi's record and the same Avro datum byte
  for byte (min/max wrappers, value type, counts, sizes; log files' records included).
* Kept exact: a table with the option on goes through a seeded random history of commits,
  clustering, clean, rollback and restore; after each action the live records equal a dict
  oracle recomputed from the live data files (min, max, null and value counts, read with
  pyarrow), and no deleted file keeps a live record; partition_stats' record of each
  partition and column bounds the rows hudi-rs reads there (min, max, nulls, values).
* partition_stats records equal Hudi's byte for byte where Hudi computed them after the
  partition's last replacecommit completed (Hudi's record of a partition last touched by a
  clustering still counts the replaced file groups: it is computed before the clustering
  completes, as hudilite's is at write time).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_compact, sync
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import partition_stats as ps
from hudilite.metadata import table as mt
from hudilite.services.clean import clean
from hudilite.services.clustering import cluster
from hudilite.services.restore import restore
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import create_savepoint
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.storage.log_format import block_records, read_log_file
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read

HUDI_META = [
    "sample_table/cow/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
]
V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"
V9_MOR = "sample_table/mor/avro/v9_txns_simple_nometa.zip"


def _unzip(zip_rel: str, tmp_path: Path) -> FileSystemGateway:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    return FileSystemGateway(str(unzip_table(zp, tmp_path)))


def _data_files(gw: FileSystemGateway) -> list[tuple[str, str]]:
    return sorted(
        (e.path.rpartition("/")[0], e.name)
        for e in gw.list_recursive("")
        if not e.path.startswith(".hoodie") and (e.name.endswith(".parquet") or ".log." in e.name)
    )


@pytest.mark.parametrize("zip_rel", HUDI_META)
def test_records_equal_hudis(zip_rel: str, tmp_path: Path) -> None:
    gw = _unzip(zip_rel, tmp_path)
    hudi = cs.read_partition(gw)  # Hudi's compaction base files and logs, merged
    props = properties_file.load(gw)
    schema, columns = cs.table_columns(gw, props)
    assert columns[:3] == ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key"]
    compared = 0
    for partition, name in _data_files(gw):
        for mine in cs.file_stats(gw, partition, name, schema, columns):
            theirs = hudi[mine.key]  # the same key: column, partition and file hashes
            assert (theirs.file_name, theirs.column) == (name, mine.column)
            assert csr.encode_datum(mine) == csr.encode_datum(theirs), (name, mine.column)
            assert csr.file_group_index(mine.key, cs.FILE_GROUPS) in (0, 1)
            compared += 1
    # every file x column Hudi indexed (no file of these tables was cleaned)
    assert compared == len(hudi) > 100


def test_file_group_of_a_key_is_hudis(tmp_path: Path) -> None:
    gw = _unzip(HUDI_META[0], tmp_path)
    seen = 0
    for entry in gw.list_dir(cs.PART_DIR):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName):
            group = int(parsed.file_id.split("-")[2])
            for record in cs.decode_hfile(gw.read_bytes(entry.path)):
                assert csr.file_group_index(record.key, cs.FILE_GROUPS) == group
                seen += 1
    assert seen > 0


# ------------------------------------------------------------------ kept exact: the oracle


def _enable(gw: FileSystemGateway) -> None:
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    stored[cfg.METADATA_COLUMN_STATS_ENABLED.name] = "true"
    stored[cfg.METADATA_PARTITION_STATS_ENABLED.name] = "true"
    # compacted every four deltacommits (three after a compaction allow a clean): the history
    # reads compacted stats slices, and cleans old ones
    stored[cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name] = "4"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass


def _check_partition_stats(gw: FileSystemGateway) -> None:
    """Each partition's record bounds the rows hudi-rs reads in it."""
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    records = ps.read_partition(gw, Timeline.load(gw, config))
    _, columns = cs.table_columns(gw, properties_file.load(gw))
    table = hudi_rs_read(gw.abs_path(""))
    for partition in set(table["_hoodie_partition_path"].to_pylist()):
        rows = table.filter(pc.equal(table["_hoodie_partition_path"], partition))
        found = ps.by_partition(records, [partition], columns)[partition]
        assert set(found) == set(columns), partition
        for column in columns:
            col, r = rows[column], found[column]
            if col.null_count:
                assert r.null_count > 0, (partition, column)
            if col.null_count < len(col):
                mm = pc.min_max(col)
                assert r.value_count > r.null_count, (partition, column)
                assert r.value(r.min) <= _value(mm["min"]), (partition, column)
                assert r.value(r.max) >= _value(mm["max"]), (partition, column)


def test_partition_stats_equal_hudis(tmp_path: Path) -> None:
    gw = _unzip(HUDI_META[0], tmp_path)
    props = properties_file.load(gw)
    config = cfg.TableConfig.from_properties(props)
    timeline = Timeline.load(gw, config)
    hudi = ps.read_partition(gw)
    listing = mt.listing_of(mt.read_files_partition(gw, timeline))
    mine = ps.compute(gw, props, ["region=us", "region=eu"], listing, cs.read_partition(gw))
    assert len(mine) == 2 * 16
    for record in mine:
        theirs = hudi[record.key]
        assert (theirs.file_name, theirs.column, theirs.tight) == (
            record.partition,
            record.column,
            True,
        )
        assert csr.encode_datum(record) == csr.encode_datum(theirs), record


def _value(scalar: pa.Scalar) -> Any:
    t = scalar.type
    if pa.types.is_date32(t):
        return scalar.cast(pa.int32()).as_py()
    if pa.types.is_timestamp(t):
        return scalar.cast(pa.int64()).as_py()
    if pa.types.is_decimal(t):
        return Decimal(scalar.as_py())
    return scalar.as_py()


def _oracle(gw: FileSystemGateway) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    """(partition, file, column) -> (min, max, values, nulls) of every live data file,
    recomputed from the rows."""
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    _, columns = cs.table_columns(gw, properties_file.load(gw))
    out = {}
    for partition, files in mt.live_files(gw, config).items():
        for name in files:
            rel = f"{partition}/{name}" if partition else name
            if name.endswith(".parquet"):
                table = pq.read_table(gw.abs_path(rel))
            else:
                parts = [block_records(b) for b in read_log_file(gw, rel) if b.is_data]
                if not parts:
                    continue  # a log of deletes only: no values to check
                table = pa.concat_tables(parts, promote_options="permissive")
            for column in columns:
                col = table[column]
                if col.null_count == len(col):
                    bounds = (None, None)
                else:
                    mm = pc.min_max(col)
                    bounds = (_value(mm["min"]), _value(mm["max"]))
                out[(partition, name, column)] = (*bounds, len(col), col.null_count)
    return out


def _indexed(gw: FileSystemGateway) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    records = cs.live(cs.read_partition(gw, Timeline.load(gw, config)))
    oracle_keys = {}
    for partition, files in mt.live_files(gw, config).items():
        for name in files:
            for column in cs.table_columns(gw, properties_file.load(gw))[1]:
                oracle_keys[csr.stats_key(partition, name, column)] = (partition, name, column)
    out = {}
    for key, r in records.items():
        assert key in oracle_keys, f"live stats of a deleted file: {r.file_name} {r.column}"
        if r.value_count == 0:
            continue  # a log of deletes only
        out[oracle_keys[key]] = (r.value(r.min), r.value(r.max), r.value_count, r.null_count)
    return out


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


@pytest.mark.parametrize(("zip_rel", "seed"), [(V9_COW, 7), (V9_MOR, 11)])
def test_random_history_keeps_stats_exact(zip_rel: str, seed: int, tmp_path: Path) -> None:
    gw = _unzip(zip_rel, tmp_path)
    _enable(gw)
    props = properties_file.load(gw)
    assert props["hoodie.table.metadata.partitions"] == "column_stats,files,partition_stats"
    # Hudi 1.1's index definition of column_stats, which its readers take the columns from
    defs = json.loads(gw.read_bytes(props["hoodie.table.index.defs.path"]))["indexDefinitions"]
    assert defs == {"column_stats": cs.definition(cs.table_columns(gw, props)[1])}
    assert defs["column_stats"]["sourceFields"][:4] == [
        "_hoodie_commit_time",
        "_hoodie_partition_path",
        "_hoodie_record_key",
        "txn_id",
    ]
    assert _indexed(gw) == _oracle(gw) != {}
    _check_partition_stats(gw)
    rng = random.Random(seed)
    saved = None
    last = None
    # every action, the order of the first six drawn by the seed
    actions = ["commit", "commit", "cluster", "clean", "savepoint", "commit"]
    rng.shuffle(actions)
    actions += ["commit", "rollback", "restore", "commit", "clean"]
    done = []
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
        _check_partition_stats(gw)

    # the metadata table's clean deleted the stats groups' slices older than the latest two,
    # the initialization's first, as it does the files partition's
    def cleans() -> list[str]:
        return [e.name for e in gw.list_dir(mt.TIMELINE_DIR) if e.name.endswith(".clean")]

    for _ in range(8):  # commits until the metadata table's clean is due
        if cleans():
            break
        _commit_copy(gw, rng)
    assert cleans()
    assert _indexed(gw) == _oracle(gw)
    # the stats partitions were compacted with the files partition (tombstones dropped)
    compactions = mt.load_timeline(gw).compactions
    bases = {
        p.file_id
        for part in (cs.PART_DIR, ps.PART_DIR)
        for e in gw.list_dir(part)
        if isinstance(p := parse_data_file_name(e.name), BaseFileName)
        and p.instant_time in compactions
    }
    assert {"col-stats-0000-0", "col-stats-0001-0", "partition-stats-0000-0"} <= bases

    left = {e.name for e in gw.list_dir(cs.PART_DIR)}
    assert not any(cs.INIT_INSTANT in name for name in left), left
    assert column_stats_compact.stale_files(gw, mt.load_timeline(gw)) == {}


def test_turning_the_option_off_drops_the_partition(tmp_path: Path) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _enable(gw)
    assert gw.exists(cs.PART_DIR)
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_PARTITION_STATS_ENABLED.name] = "false"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "column_stats,files"
    assert not gw.exists(ps.PART_DIR)
    stored[cfg.METADATA_COLUMN_STATS_ENABLED.name] = "false"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    assert not gw.exists(cs.PART_DIR)
    assert not gw.exists(cs.DEFAULT_INDEX_DEFS)


def test_turned_on_for_a_table_with_a_metadata_table_and_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw = _unzip(V9_COW, tmp_path)
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass
    _commit_copy(gw, random.Random(1))  # a deltacommit of the files partition alone
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    _enable(gw)  # built from the files partition's listing, the copy's file included
    assert _indexed(gw) == _oracle(gw) != {}
    # A write dying between its metadata deltacommit and its completion: the stats it wrote
    # are read by no one, and the next lock removes them with the deltacommit.
    monkeypatch.setenv(failpoints.ENV_VAR, sync.AFTER_DELTACOMMIT)
    with pytest.raises(Exception, match="simulated failure"):
        _commit_copy(gw, random.Random(2))
    monkeypatch.delenv(failpoints.ENV_VAR)
    stray = max(sync.deltacommit_times(gw))
    assert any(stray in e.name for e in gw.list_dir(cs.PART_DIR))
    assert _indexed(gw) == _oracle(gw)
    with table_lock(gw):
        pass
    assert not any(stray in e.name for e in gw.list_dir(cs.PART_DIR) + gw.list_dir(ps.PART_DIR))
    assert stray not in sync.deltacommit_times(gw)
    assert _indexed(gw) == _oracle(gw)
