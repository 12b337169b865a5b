"""The record_index partition (hudilite/metadata/record_index*.py), without a JVM.

* Hudi's own: Hudi 1.1's v9_txns_*_meta tables' record_index, read by hudilite, places every
  key where hudi-rs reads it (partition and file id), in the file group Hudi's hash picks
  among its 10 groups; each of Hudi's entries is, byte for byte, the datum hudilite writes
  for its key and location; the file-id encodings and the group count estimate are Hudi's.
* Kept exact: a COW table with the option on (built by hudilite, or Hudi 1.1's own with its
  ten groups and entries) goes through a random history (hypothesis) of
  inserts, updates, deletes and partition moves (commits of Parquet files written here),
  clustering, clean, rollback and restore, and a MOR table through log deletes and
  compaction; after each action the index equals a dict oracle {key: (partition, file id,
  instant)} recomputed from the rows hudi-rs reads (a key keeps its instant while it stays
  in its file group, else takes the action's; a rebuilt index takes each slice's base
  instant), and hudi-rs reads each live key exactly once.
"""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudilite import config as cfg
from hudilite.metadata import record_index as ri
from hudilite.metadata import record_index_records as rir
from hudilite.metadata import table as mt
from hudilite.services.clean import clean
from hudilite.services.clustering import cluster
from hudilite.services.compaction import compact
from hudilite.services.restore import restore
from hudilite.services.rollback_completed import rollback_instant
from hudilite.services.savepoint import create_savepoint
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.hfile import HFileReader
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.storage.log_blocks import DeleteKey
from hudilite.storage.log_format import BlockType, delete_block, read_log_file, write_log_file
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.timeline.instant_time import epoch_ms_to_instant
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
KEY = "_hoodie_record_key"


def _unzip(zip_rel: str, tmp_path: Path) -> FileSystemGateway:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    return FileSystemGateway(str(unzip_table(zp, tmp_path)))


def _config(gw: FileSystemGateway) -> cfg.TableConfig:
    return cfg.TableConfig.from_properties(properties_file.load(gw))


def _rows(gw: FileSystemGateway) -> dict[str, tuple[str, str]]:
    """key -> (partition, file id) of the rows hudi-rs reads (each key once)."""
    t = hudi_rs_read(gw.abs_path(""))
    keys = t[KEY].to_pylist()
    assert len(keys) == len(set(keys)), "hudi-rs read a key twice"
    files = [f.split("_", 1)[0] for f in t["_hoodie_file_name"].to_pylist()]
    parts = t["_hoodie_partition_path"].to_pylist()
    return dict(zip(keys, zip(parts, files, strict=True), strict=True))


def _indexed(gw: FileSystemGateway) -> dict[str, tuple[str, str, str]]:
    config = _config(gw)
    return {
        k: (loc.partition, loc.file_id, epoch_ms_to_instant(loc.instant_ms, config.timeline_utc))
        for k, loc in ri.read_all(gw, Timeline.load(gw, config)).items()
    }


# ------------------------------------------------------------------------- Hudi's own


def _file_name_of(datum: bytes) -> str | None:
    """The ``_hoodie_file_name`` of a datum (Hudi's compaction fills it in base files)."""
    schema = fastavro.parse_schema(json.loads(rir.schema_json()))
    value = fastavro.schemaless_reader(io.BytesIO(datum), schema, None)
    assert isinstance(value, dict)
    return value["_hoodie_file_name"]


@pytest.mark.parametrize("zip_rel", HUDI_META)
def test_hudis_record_index_places_every_key_where_it_lives(zip_rel: str, tmp_path: Path) -> None:
    gw = _unzip(zip_rel, tmp_path)
    assert "record_index" in properties_file.load(gw)["hoodie.table.metadata.partitions"]
    groups = ri.slices(gw, Timeline.load(gw, _config(gw)))
    assert [g.file_id for g in groups] == [ri.file_id(i) for i in range(10)]
    located = {k: (p, f) for k, (p, f, _) in _indexed(gw).items()}
    assert located == _rows(gw) != {}
    # each key sits in the file group Hudi's hash picks
    for group in groups:
        for key in ri.read_group(gw, group, None):
            assert ri.file_group_index(key, 10) == int(group.file_id.split("-")[2])
    # every entry Hudi wrote (base files and log blocks) is the datum hudilite writes for it
    seen = 0
    for group in groups:
        contents = [gw.read_bytes(group.base)] if group.base else []
        for path in group.logs:
            blocks = read_log_file(gw, path)
            contents += [b.content for b in blocks if b.block_type == BlockType.HFILE]
        for content in contents:
            for k, v in HFileReader(content).entries():
                key = k.decode("utf-8")
                name = _file_name_of(v)
                assert rir.encode_datum(key, rir.decode_datum(key, v), file_name=name) == v
                seen += 1
    assert seen >= len(located)
    # point lookups answer the same, and leave out keys the table does not hold
    keys = [*sorted(located)[:3], "no-such-key"]
    found = ri.lookup(gw, keys, Timeline.load(gw, _config(gw)))
    assert {k: (v.partition, v.file_id) for k, v in found.items()} == {
        k: located[k] for k in keys[:3]
    }


def test_hash_encoding_and_file_group_count_are_hudis() -> None:
    # Java: "Aa".hashCode() == "BB".hashCode() == 2112; MIN_VALUE's abs stays negative
    assert ri.file_group_index("Aa", 10) == ri.file_group_index("BB", 10) == 2
    assert rir.java_string_hash("polygenelubricants") == -(2**31)
    assert ri.file_group_index("polygenelubricants", 10) == 8  # abs(-2147483648 % 10)
    fid = "07838327-b037-4532-a9df-3c5b05dd823d-0"
    enc = rir.encode_file_id(fid)
    assert (enc["fileIdEncoding"], enc["fileIndex"], enc["fileId"]) == (0, 0, "")
    assert rir.decode_file_id(enc) == fid
    assert rir.decode_file_id(rir.encode_file_id(fid[:36])) == fid[:36]
    assert rir.encode_file_id("files-0000-0")["fileIdEncoding"] == 1
    assert rir.decode_file_id(rir.encode_file_id("files-0000-0")) == "files-0000-0"
    est = {"min_count": 10, "max_count": 10000, "growth_factor": 2.0}
    size = {"max_file_group_bytes": 1073741824}
    assert ri.estimate_file_group_count(100, **est, **size) == 10
    # 2e9 keys grown to 4e9, 22369621 a group of 1 GiB: 178 groups
    assert ri.estimate_file_group_count(2_000_000_000, **est, **size) == 178
    assert ri.estimate_file_group_count(10**12, **est, **size) == 10000
    assert (
        ri.estimate_file_group_count(10**12, min_count=4, max_count=4, growth_factor=2.0, **size)
        == 4
    )


# ------------------------------------------------------------------------- kept exact


def _enable(gw: FileSystemGateway, **extra: str) -> None:
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    stored[cfg.METADATA_RECORD_INDEX_ENABLED.name] = "true"
    stored[cfg.RECORD_INDEX_MIN_FILE_GROUPS.name] = "3"
    stored[cfg.RECORD_INDEX_MAX_FILE_GROUPS.name] = "3"
    # compacted every three deltacommits: the history reads compacted record_index slices too
    stored[cfg.METADATA_COMPACT_MAX_DELTA_COMMITS.name] = "3"
    stored.update(extra)
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass


def _slice_instants(gw: FileSystemGateway) -> dict[tuple[str, str], str]:
    state = TableState.load(gw)
    return {(s.partition, s.file_id): s.base_instant for s in state.view.latest_slices()}


def _rebuilt_oracle(gw: FileSystemGateway) -> dict[str, tuple[str, str, str]]:
    """What a freshly built index holds: each key with its slice's base instant."""
    base = _slice_instants(gw)
    return {k: (p, f, base[(p, f)]) for k, (p, f) in _rows(gw).items()}


def _next_oracle(
    gw: FileSystemGateway, before: dict[str, tuple[str, str, str]], instant: str
) -> dict[str, tuple[str, str, str]]:
    out = {}
    for k, (p, f) in _rows(gw).items():
        old = before.get(k)
        out[k] = old if old is not None and old[:2] == (p, f) else (p, f, instant)
    return out


def _live_base_files(gw: FileSystemGateway) -> list[tuple[str, str, str]]:
    """(partition, file id, table-relative path) of the latest base files."""
    state = TableState.load(gw)
    return sorted(
        (s.partition, s.file_id, s.base_file.path)
        for s in state.view.latest_slices()
        if s.base_file is not None
    )


class _Commit:
    """A commit of Parquet base files written here (new versions of file groups or new
    file groups), with Hudi's write stats."""

    def __init__(self, gw: FileSystemGateway, action: str = COMMIT) -> None:
        self.gw = gw
        self.config = _config(gw)
        self.writer = TimelineWriter(gw, self.config)
        self.inst = self.writer.transition_inflight(self.writer.create_requested(action))
        self.time = self.inst.requested_time
        self.stats: dict[str, list[WriteStat]] = {}

    def base(self, partition: str, fid: str, rows: pa.Table, prev: str | None) -> None:
        name = BaseFileName(fid, "0-1-0", self.time, ".parquet").render()
        rel = f"{partition}/{name}" if partition else name
        n = rows.num_rows
        rows = rows.set_column(
            rows.schema.get_field_index("_hoodie_file_name"),
            "_hoodie_file_name",
            pa.array([name] * n, pa.string()),
        ).set_column(
            rows.schema.get_field_index("_hoodie_commit_time"),
            "_hoodie_commit_time",
            pa.array([self.time] * n, pa.string()),
        )
        pq.write_table(rows, self.gw.abs_path(rel))
        size = os.path.getsize(self.gw.abs_path(rel))
        self.stats.setdefault(partition, []).append(
            WriteStat(
                file_id=fid,
                path=rel,
                partition_path=partition,
                prev_commit=prev or "null",
                num_writes=n,
                num_inserts=n,
                total_write_bytes=size,
                file_size_in_bytes=size,
            )
        )

    def log_deletes(self, partition: str, fid: str, base_instant: str, keys: list[str]) -> None:
        name = LogFileName(fid, self.time, 1, "0-1-0").render()
        rel = f"{partition}/{name}" if partition else name
        size = write_log_file(
            self.gw, rel, [delete_block([DeleteKey(k, partition, None) for k in keys], self.time)]
        )
        self.stats.setdefault(partition, []).append(
            WriteStat(
                file_id=fid,
                path=rel,
                partition_path=partition,
                prev_commit=base_instant,
                num_deletes=len(keys),
                total_write_bytes=size,
                file_size_in_bytes=size,
                base_file="",
                log_files=[name],
                log_version=1,
            )
        )

    def complete(self, operation: str = "UPSERT") -> str:
        schema = Timeline.load(self.gw, self.config).schema_json(self.config.create_schema)
        content = CommitMetadata(
            partition_to_write_stats=self.stats,
            operation_type=operation,
            extra_metadata={"schema": schema or ""},
        ).to_bytes(self.config.layout_version)
        with table_lock(self.gw):
            self.writer.complete(self.inst, content)
        return self.time


def _with_keys(rows: pa.Table, keys: list[str], partition: str) -> pa.Table:
    rows = rows.set_column(rows.schema.get_field_index(KEY), KEY, pa.array(keys, pa.string()))
    rows = rows.set_column(
        rows.schema.get_field_index("txn_id"), "txn_id", pa.array(keys, pa.string())
    )
    i = rows.schema.get_field_index("_hoodie_partition_path")
    return rows.set_column(
        i, "_hoodie_partition_path", pa.array([partition] * len(keys), pa.string())
    )


def _write_action(gw: FileSystemGateway, kind: str, rng: random.Random, serial: list[int]) -> str:
    """One commit of ``kind`` (insert, update, delete, move); its instant time."""
    files = _live_base_files(gw)
    c = _Commit(gw)
    p, fid, rel = rng.choice(files)
    rows = pq.read_table(gw.abs_path(rel))
    if kind == "insert":
        serial[0] += 1
        keys = [f"NEW-{serial[0]}-{i}" for i in range(rng.randint(1, 3))]
        template = rows.slice(0, 1).take([0] * len(keys))
        new_fid = f"{rng.randrange(16**8):08x}-0000-4000-8000-000000000000-0"
        c.base(p, new_fid, _with_keys(template, keys, p), None)
    elif kind == "update":
        c.base(p, fid, rows, rel.rsplit("_", 1)[-1].split(".")[0])
    elif kind in ("delete", "move"):
        if rows.num_rows < 2:
            c.base(p, fid, rows, rel.rsplit("_", 1)[-1].split(".")[0])  # an update instead
            return c.complete()
        victim = rng.randrange(rows.num_rows)
        key = rows[KEY][victim].as_py()
        kept = rows.filter(pc.not_equal(rows[KEY], key))
        c.base(p, fid, kept, rel.rsplit("_", 1)[-1].split(".")[0])
        if kind == "move":
            others = sorted({q for q, _, _ in files if q != p})
            if others:
                q = rng.choice(others)
                new_fid = f"{rng.randrange(16**8):08x}-0000-4000-8000-000000000001-0"
                c.base(q, new_fid, _with_keys(rows.slice(victim, 1), [key], q), None)
    return c.complete()


ACTIONS = st.lists(
    st.sampled_from(["insert", "update", "delete", "move", "cluster", "clean", "rollback"]),
    min_size=4,
    max_size=8,
)


@pytest.mark.parametrize("zip_rel", [V9_COW, HUDI_META[0]])
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(actions=ACTIONS, seed=st.integers(0, 2**16))
def test_random_history_keeps_the_record_index_exact(
    zip_rel: str, actions: list[str], seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """On a table hudilite built the index of, and on Hudi's own (its ten groups and
    entries continued)."""
    gw = _unzip(zip_rel, tmp_path_factory.mktemp("ri"))
    _enable(gw)
    listed = properties_file.load(gw)["hoodie.table.metadata.partitions"]
    assert listed.split(",")[-1] == "record_index"
    if zip_rel == V9_COW:
        oracle = _rebuilt_oracle(gw)
    else:  # Hudi's entries: each key with the instant that put it in its group
        oracle = _indexed(gw)
        assert len(ri.slices(gw)) == 10
    assert _indexed(gw) == oracle != {}
    assert {k: v[:2] for k, v in oracle.items()} == _rows(gw)
    rng = random.Random(seed)
    serial = [0]
    history: list[tuple[str, dict[str, tuple[str, str, str]]]] = []  # (instant, oracle before)
    saved: tuple[str, dict[str, tuple[str, str, str]]] | None = None
    done = []
    compacted: set[str] = set()
    for action in ["savepoint", *actions, "restore"]:
        state = TableState.load(gw)
        if action in ("insert", "update", "delete", "move"):
            before = oracle
            t = _write_action(gw, action, rng, serial)
            oracle = _next_oracle(gw, before, t)
            history.append((t, before))
        elif action == "cluster":
            before = oracle
            results = cluster(
                state, {"hoodie.clustering.plan.strategy.small.file.limit": str(10**9)}
            )
            if results:
                t = results[-1].instant_time
                oracle = _next_oracle(gw, before, t)
                history.append((t, before))
        elif action == "clean":
            clean(state, {"hoodie.cleaner.commits.retained": "1"})
        elif action == "rollback" and history:
            t, before = history.pop()
            rollback_instant(state, t)
            oracle = before
        elif action == "savepoint":
            saved = (create_savepoint(state).instant_time, oracle)
        elif action == "restore":
            assert saved is not None
            restore(state, saved[0])
            oracle = _rebuilt_oracle(gw)  # a restore rebuilds the index from the slices
            assert {k: v[:2] for k, v in oracle.items()} == {k: v[:2] for k, v in saved[1].items()}
        done.append(action)
        assert _indexed(gw) == oracle, done
        assert {k: v[:2] for k, v in oracle.items()} == _rows(gw), done
        compacted |= {
            p.file_id
            for e in gw.list_dir(ri.PART_DIR)
            if isinstance(p := parse_data_file_name(e.name), BaseFileName)
            and p.instant_time in mt.load_timeline(gw).compactions
        }
    # the record_index groups with logs were compacted with the files partition
    assert len(done) < 6 or compacted


def test_mor_log_deletes_and_compaction_keep_the_index(tmp_path: Path) -> None:
    gw = _unzip(V9_MOR, tmp_path)
    _enable(gw)
    oracle = _rebuilt_oracle(gw)
    assert _indexed(gw) == oracle != {}
    # a deltacommit deleting one key of a file group through a log delete block
    p, fid, rel = _live_base_files(gw)[0]
    victim = pq.read_table(gw.abs_path(rel))[KEY][0].as_py()
    c = _Commit(gw, DELTA_COMMIT)
    c.log_deletes(p, fid, rel.rsplit("_", 1)[-1].split(".")[0], [victim])
    c.complete("DELETE")
    assert victim not in _rows(gw)
    oracle = _next_oracle(gw, oracle, "unused")
    assert victim not in oracle
    assert _indexed(gw) == oracle
    # compaction rewrites the slices: every key stays in its file group with its instant
    done = compact(TableState.load(gw), force=True)
    assert done
    assert _indexed(gw) == _next_oracle(gw, oracle, "unused") == oracle


def test_turning_the_option_on_builds_and_off_drops_the_partition(tmp_path: Path) -> None:
    gw = _unzip(V9_COW, tmp_path)
    _enable(gw, **{cfg.METADATA_RECORD_INDEX_ENABLED.name: "false"})
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    assert not gw.exists(ri.PART_DIR)
    _enable(gw)  # on: built from the latest slices, ten groups by default's floor (3 here)
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files,record_index"
    assert len(ri.slices(gw)) == 3
    assert _indexed(gw) == _rebuilt_oracle(gw)
    _enable(gw, **{cfg.METADATA_RECORD_INDEX_ENABLED.name: "false"})
    assert properties_file.load(gw)["hoodie.table.metadata.partitions"] == "files"
    assert not gw.exists(ri.PART_DIR)
