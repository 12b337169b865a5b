"""The BLOOM index reading filters from the metadata table's bloom_filters partition
(hudilite/index/bloom_index.py with hoodie.bloom.index.use.metadata), without a JVM.

On Hudi 1.1's v9 COW fixture with the partition built, the driver-side BLOOM lookup of an
upsert (``small_write.locate``: range pruning, bloom filters, key reads) of stored and new
keys tags every key with the file group hudi-rs reads it from (new keys untagged), the same
with and without the metadata table; with it, no base file's footer is opened for its bloom
filter (counted), without it one per candidate file. Without the partition listed, or with
the option off, the footers are read.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite import config as cfg
from hudilite.index import bloom_index
from hudilite.index.bloom_index import IndexSettings
from hudilite.schema import DELETE_COL, FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.write.file_group_writer import ExistingFile
from hudilite.write.lock import table_lock
from hudilite.write.small_write import key_stats, locate
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read

V9_COW = "sample_table/cow/v9_txns_simple_nometa.zip"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> FileSystemGateway:
    zp = FIXTURES / V9_COW
    if not zp.exists():
        pytest.skip(f"fixture {V9_COW} is absent")
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path_factory.mktemp("bloom"))))
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    stored[cfg.METADATA_BLOOM_FILTER_ENABLED.name] = "true"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass
    return gw


def _oracle(gw: FileSystemGateway) -> dict[tuple[str, str], str]:
    """(partition, key) -> file group id of every row hudi-rs reads."""
    t = hudi_rs_read(gw.abs_path(""))
    return {
        (p, k): f.split("_", 1)[0]
        for p, k, f in zip(
            t["_hoodie_partition_path"].to_pylist(),
            t["_hoodie_record_key"].to_pylist(),
            t["_hoodie_file_name"].to_pylist(),
            strict=True,
        )
    }


def _locate(gw: FileSystemGateway, keys: list[tuple[str, str]], use_metadata: bool) -> tuple:
    """Tag ``keys`` (partition, key) with the BLOOM index; (tags, footer filter reads)."""
    state = TableState.load(gw)
    existing = {
        s.group_key: ExistingFile(s.base_file.path, s.base_file.instant_time)
        for s in state.view.latest_slices()
        if s.base_file is not None
    }
    keyed = pa.table(
        {
            RECORD_KEY_COL: [k for _, k in keys],
            PARTITION_PATH_COL: [p for p, _ in keys],
            DELETE_COL: pa.array([False] * len(keys)),
        }
    )
    settings = IndexSettings(cfg.INDEX_BLOOM, use_metadata=use_metadata)
    reads: list[str] = []
    real = bloom_index.read_bloom_filter

    def counted(gw_: FileSystemGateway, rel: str):  # type: ignore[no-untyped-def]
        reads.append(rel)
        return real(gw_, rel)

    bloom_index.read_bloom_filter = counted  # type: ignore[assignment]
    try:
        tagged, metrics = locate(state, keyed, existing, key_stats(keyed).key_ranges, settings)
    finally:
        bloom_index.read_bloom_filter = real  # type: ignore[assignment]
    located = zip(
        tagged[PARTITION_PATH_COL].to_pylist(), tagged[RECORD_KEY_COL].to_pylist(), strict=True
    )
    tags = dict(zip(located, tagged[FILE_ID_COL].to_pylist(), strict=True))
    return tags, reads, metrics


def test_bloom_lookup_reads_filters_from_the_metadata_table(table: FileSystemGateway) -> None:
    oracle = _oracle(table)
    stored = sorted(oracle)[::3]
    new = [(p, f"{k}-new") for p, k in sorted(oracle)[1::4]]
    keys = stored + new
    with_mdt, reads_mdt, metrics = _locate(table, keys, use_metadata=True)
    footers, reads_footers, _ = _locate(table, keys, use_metadata=False)
    expected = {**{k: oracle[k] for k in stored}, **dict.fromkeys(new)}
    assert with_mdt == footers == expected
    assert reads_mdt == []
    assert len(reads_footers) == metrics["files_after_range_pruning"] > 0


def test_without_the_partition_footers_are_read(table: FileSystemGateway) -> None:
    oracle = _oracle(table)
    keys = sorted(oracle)[:5]
    props = properties_file.load(table)
    properties_file.store(table, props, metadata_partitions="files")  # as if never built
    try:
        tags, reads, metrics = _locate(table, keys, use_metadata=True)
    finally:
        properties_file.store(table, props)
    assert tags == {k: oracle[k] for k in keys}
    assert len(reads) == metrics["files_after_range_pruning"] > 0
