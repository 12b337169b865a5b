"""The metadata-table guard (issue 25): before hudilite changes a table that has a Hudi
metadata table, it clears the partitions in hoodie.properties, deletes ``.hoodie/metadata`` and
then the index definitions, under the table lock; a crash between any two steps leaves the
table reading the same rows in hudi-rs, and the next action finishes the job.

No JVM here: the real Hudi 1.1 tables of ../shared are read with hudi-rs, and a synthetic
table covers the rules when ../shared is absent.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import WriteError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file as pf
from hudilite.write import metadata_guard as mg
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read, rows

META_ZIPS = sorted(FIXTURES.rglob("v9_txns_*_meta.zip")) if FIXTURES.is_dir() else []
PARTITIONS = "column_stats,files,partition_stats,record_index"


def synthetic(tmp_path: Path) -> FileSystemGateway:
    """A v8 table whose properties list metadata partitions, with a metadata folder and an
    index definitions file, as a Hudi 1.x writer leaves them."""
    gw = FileSystemGateway(str(tmp_path / "t"))
    config = cfg.TableConfig.new("t", table_version=8, record_key_fields=["id"])
    props = dict(config.to_properties())
    pf.create(gw, props)
    # create() keeps what it is given except the metadata keys; write them as Hudi would.
    raw = gw.read_bytes(pf.PROPERTIES_FILE).decode("latin-1")
    raw += f"hoodie.table.metadata.partitions={PARTITIONS}\n"
    raw += "hoodie.table.metadata.partitions.inflight=secondary_index_x\n"
    raw += "hoodie.table.index.defs.path=.hoodie/.index_defs/index.json\n"
    gw.write_bytes(pf.PROPERTIES_FILE, raw.encode("latin-1"))
    gw.write_bytes(".hoodie/metadata/.hoodie/hoodie.properties", b"hoodie.table.name=t_metadata\n")
    gw.write_bytes(".hoodie/metadata/files/files-0000-0_0-1-1_00000000000000000.hfile", b"x")
    gw.write_bytes(".hoodie/.index_defs/index.json", b'{"indexDefinitions": {}}')
    return gw


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(mg, "_warned", set())


def test_the_guard_removes_every_trace_in_order(tmp_path):
    gw = synthetic(tmp_path)
    assert mg.needs_guard(gw, pf.load(gw))
    with pytest.warns(
        mg.MetadataTableRemoved, match=r"table t \(file://.*/t\) had a Hudi metadata"
    ):
        assert mg.apply_guard(gw) is True
    props = pf.load(gw)
    # Blank, as Hudi's clearMetadataPartitions leaves them; the checksum still holds.
    assert props["hoodie.table.metadata.partitions"] == ""
    assert props["hoodie.table.metadata.partitions.inflight"] == ""
    assert pf.problem(props) is None
    assert not gw.exists(".hoodie/metadata")
    assert not gw.exists(".hoodie/.index_defs/index.json")
    assert not mg.needs_guard(gw, props)
    # Nothing left: the second pass changes nothing and warns no more.
    before = gw.read_bytes(pf.PROPERTIES_FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mg.apply_guard(gw) is False
    assert gw.read_bytes(pf.PROPERTIES_FILE) == before


def test_taking_the_table_lock_applies_the_guard_once(tmp_path):
    gw = synthetic(tmp_path)
    with pytest.warns(mg.MetadataTableRemoved), table_lock(gw):
        assert not gw.exists(".hoodie/metadata")
        # Re-entering the held lock does not run it again.
        gw.write_bytes(".hoodie/metadata/late", b"x")
        with table_lock(gw):
            assert gw.exists(".hoodie/metadata/late")
    with table_lock(gw):
        assert not gw.exists(".hoodie/metadata")


def test_a_folder_without_a_table_is_left_alone(tmp_path):
    gw = FileSystemGateway(str(tmp_path / "empty"))
    gw.write_bytes(".hoodie/metadata/x", b"x")  # no hoodie.properties: not a table (yet)
    assert mg.apply_guard(gw) is False
    assert gw.exists(".hoodie/metadata/x")


def test_any_rewrite_of_the_properties_blanks_the_partitions(tmp_path):
    gw = synthetic(tmp_path)
    stored = pf.store(gw, pf.load(gw))
    assert stored["hoodie.table.metadata.partitions"] == ""
    assert pf.load(gw)["hoodie.table.metadata.partitions.inflight"] == ""


@pytest.mark.parametrize("point", [mg.AFTER_PROPERTIES, mg.AFTER_DELETE])
def test_an_interrupted_guard_is_finished_by_the_next_action(tmp_path, monkeypatch, point):
    gw = synthetic(tmp_path)
    monkeypatch.setenv(failpoints.ENV_VAR, point)
    with pytest.warns(mg.MetadataTableRemoved), pytest.raises(WriteError, match=point):
        mg.apply_guard(gw)
    props = pf.load(gw)
    assert props["hoodie.table.metadata.partitions"] == ""  # step 1 is on disk
    assert gw.exists(".hoodie/metadata") == (point == mg.AFTER_PROPERTIES)
    assert gw.exists(".hoodie/.index_defs/index.json")
    assert mg.needs_guard(gw, props)
    monkeypatch.delenv(failpoints.ENV_VAR)
    assert mg.apply_guard(gw) is True
    assert not mg.needs_guard(gw, pf.load(gw))


@pytest.mark.skipif(not META_ZIPS, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", META_ZIPS, ids=lambda z: f"{z.parent.name}/{z.stem}")
@pytest.mark.parametrize("point", [mg.AFTER_PROPERTIES, mg.AFTER_DELETE, None])
def test_hudi_rs_reads_the_same_rows_after_every_step(tmp_path, monkeypatch, zip_path, point):
    base = unzip_table(zip_path, tmp_path)
    gw = FileSystemGateway(str(base))
    expected = hudi_rs_read(str(base))
    assert expected.num_rows > 0
    if point is not None:
        monkeypatch.setenv(failpoints.ENV_VAR, point)
    with pytest.warns(mg.MetadataTableRemoved, match=pf.load(gw)["hoodie.table.name"]):
        if point is None:
            mg.apply_guard(gw)
        else:
            with pytest.raises(WriteError):
                mg.apply_guard(gw)
    assert rows(hudi_rs_read(str(base))) == rows(expected)
    if point is None:
        assert not gw.exists(".hoodie/metadata")
        assert not gw.exists(".hoodie/.index_defs/index.json")


def test_a_refused_write_leaves_the_metadata_table_in_place(tmp_path):
    """A v9 table hudilite cannot write (here another table format) is refused by name
    before the guard touches anything."""
    from hudilite.errors import ConfigError
    from hudilite.services.clustering import schedule_clustering
    from hudilite.tablestate.state import TableState
    from hudilite.write.transaction import WriteTransaction

    gw = FileSystemGateway(str(tmp_path / "t"))
    config = cfg.TableConfig.new("t", table_version=9, record_key_fields=["id"])
    props = {**config.to_properties(), "hoodie.table.format": "iceberg"}
    props[mg.INDEX_DEFS_KEY] = mg.DEFAULT_INDEX_DEFS
    pf.create(gw, props)
    gw.write_bytes(".hoodie/metadata/files/x", b"x")
    gw.write_bytes(mg.DEFAULT_INDEX_DEFS, b"{}")
    state = TableState.load(gw)
    with (
        pytest.raises(ConfigError, match=r"hoodie.table.format='iceberg'"),
        WriteTransaction(gw, state.config, "commit"),
    ):
        pass
    with pytest.raises(ConfigError, match=r"hoodie.table.format='iceberg'"):
        schedule_clustering(state)
    assert gw.exists(".hoodie/metadata/files/x") and gw.exists(mg.DEFAULT_INDEX_DEFS)
    assert TableState.load(gw).timeline.pending() == []
