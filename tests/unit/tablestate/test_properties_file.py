"""hoodie.properties: checksum verified on load, recovery from the backup, refusal otherwise.

Issue 9 item 5: a truncated ``hoodie.properties`` (the payload class line lost) was accepted
and silently turned event-time ordering into commit-time ordering.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.errors import CorruptFileError, TableExistsError, TableNotFoundError
from hudilite.services.properties import set_properties
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file as pf
from hudilite.tablestate.state import TableState, load_config

PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def new_table(tmp_path: Path) -> tuple[FileSystemGateway, bytes]:
    """A v6 table whose payload class means event-time ordering; returns its file bytes."""
    gw = FileSystemGateway(str(tmp_path / "t"))
    config = cfg.TableConfig.new(
        "t", table_version=6, record_key_fields=["id"], ordering_fields=["ts"],
        payload_class=PAYLOAD,
    )  # fmt: skip
    pf.create(gw, config.to_properties())
    gw.mkdirs(".hoodie/archived")
    return gw, gw.read_bytes(pf.PROPERTIES_FILE)


def truncated(data: bytes) -> bytes:
    """The file cut just before its payload class line (and so without the checksum)."""
    return data[: data.index(b"hoodie.compaction.payload.class")]


def test_a_new_table_loads_with_event_time_ordering(tmp_path):
    gw, data = new_table(tmp_path)
    assert data.isascii() and data.rstrip().splitlines()[-1].startswith(b"hoodie.table.checksum=")
    assert load_config(gw).merge_mode == cfg.EVENT_TIME_ORDERING
    with pytest.raises(TableExistsError):
        pf.create(gw, pf.load(gw))


def test_a_truncated_file_is_refused_naming_it(tmp_path):
    gw, data = new_table(tmp_path)
    gw.write_bytes(pf.PROPERTIES_FILE, truncated(data))
    with pytest.raises(CorruptFileError) as err:
        load_config(gw)
    assert gw.abs_path(pf.PROPERTIES_FILE) in str(err.value)
    assert "lacks hoodie.table.checksum" in str(err.value)
    # Writers refuse too, and leave the file as it is.
    with pytest.raises(CorruptFileError):
        pf.store(gw, {"hoodie.table.name": "t"})
    assert gw.read_bytes(pf.PROPERTIES_FILE) == truncated(data)


def test_a_wrong_checksum_is_refused(tmp_path):
    gw, data = new_table(tmp_path)
    gw.write_bytes(pf.PROPERTIES_FILE, data.replace(b"hoodie.table.name=t", b"hoodie.table.name=u"))
    with pytest.raises(CorruptFileError, match=r"does not match the table name"):
        load_config(gw)


@pytest.mark.parametrize(
    "garbage", [b"", b"\n\n", b"\xff\xfe\x00garbage\x80\x81", b"\\uD800=\\uZZZZ\n\x00\x01"]
)
def test_garbage_or_empty_is_a_clear_error_not_a_decode_error(tmp_path, garbage):
    gw, _ = new_table(tmp_path)
    gw.write_bytes(pf.PROPERTIES_FILE, garbage)
    with pytest.raises(CorruptFileError, match=r"hoodie\.properties"):
        TableState.load(gw)


def test_readers_fall_back_to_a_valid_backup_and_writers_restore_it(tmp_path):
    gw, data = new_table(tmp_path)
    # A rewrite died after copying the backup and tearing the new file.
    gw.write_bytes(pf.BACKUP_FILE, data)
    gw.write_bytes(pf.PROPERTIES_FILE, truncated(data))
    assert load_config(gw).merge_mode == cfg.EVENT_TIME_ORDERING
    assert gw.read_bytes(pf.PROPERTIES_FILE) == truncated(data)  # loading never writes
    # The next change recovers first, then applies itself.
    set_properties(TableState.load(gw), {"hoodie.table.comment": "x"})
    assert not gw.exists(pf.BACKUP_FILE)
    stored = pf.load(gw)
    assert stored == {**pf.decode(data), "hoodie.table.comment": "x"}
    assert load_config(gw).merge_mode == cfg.EVENT_TIME_ORDERING


def test_an_invalid_backup_is_not_used(tmp_path):
    gw, data = new_table(tmp_path)
    gw.write_bytes(pf.BACKUP_FILE, truncated(data))
    gw.delete_file(pf.PROPERTIES_FILE)
    with pytest.raises(CorruptFileError) as err:
        load_config(gw)
    assert gw.abs_path(pf.BACKUP_FILE) in str(err.value)
    with pytest.raises(CorruptFileError):
        pf.recover(gw)
    assert not gw.exists(pf.PROPERTIES_FILE) and gw.exists(pf.BACKUP_FILE)


def test_no_file_at_all_is_table_not_found(tmp_path):
    with pytest.raises(TableNotFoundError):
        load_config(FileSystemGateway(str(tmp_path)))


def test_iso_8859_1_with_unicode_escapes_as_java(tmp_path):
    gw, _ = new_table(tmp_path)
    stored = pf.store(gw, {**pf.load(gw), "hoodie.table.comment": "café €"})
    raw = gw.read_bytes(pf.PROPERTIES_FILE)
    assert raw.isascii() and b"hoodie.table.comment=caf\\u00E9 \\u20AC" in raw
    assert pf.load(gw) == stored
    # A file Java wrote with a raw ISO-8859-1 byte reads as that character.
    gw.write_bytes(pf.PROPERTIES_FILE, raw.replace(b"caf\\u00E9", b"caf\xe9"))
    assert pf.load(gw)["hoodie.table.comment"] == "café €"


def test_store_reads_back_and_restores_the_old_file_on_mismatch(tmp_path, monkeypatch):
    gw, data = new_table(tmp_path)
    real = FileSystemGateway.write_bytes

    def lossy(self, rel, blob):  # storage silently drops a line of the new file
        if rel == pf.PROPERTIES_FILE and b"comment" in blob:
            blob = blob.replace(b"hoodie.table.type=COPY_ON_WRITE\n", b"")
        real(self, rel, blob)

    monkeypatch.setattr(FileSystemGateway, "write_bytes", lossy)
    with pytest.raises(CorruptFileError, match=r"did not read back"):
        pf.store(gw, {**pf.load(gw), "hoodie.table.comment": "x"})
    monkeypatch.undo()
    assert gw.read_bytes(pf.PROPERTIES_FILE) == data and not gw.exists(pf.BACKUP_FILE)
