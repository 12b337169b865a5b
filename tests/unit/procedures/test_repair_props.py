"""``repair_overwrite_hoodie_props`` and ``repair_migrate_partition_meta`` (issue 30) on an
engine-built table, without Spark: exact rows, what is on disk after, what hudi-rs reads,
and the one-line refusals that write nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudilite.procedures import ProcedureArgumentError
from hudilite.tablestate import properties_file
from tests.helpers import hudi_rs_read, rows
from tests.unit.procedures.repair_calls import DATA, MiniTable, call


def two_partitions(tmp_path: Path) -> tuple[MiniTable, list[str]]:
    t = MiniTable(tmp_path / "t", mor=False)
    times = [
        t.write({("x", "a-0"): [("k1", 1, "v1")], ("y", "b-0"): [("k2", 1, "v2")]}),
        t.write({("x", "a-0"): [("k1", 2, "v3")]}),
    ]
    return t, times


def test_overwrite_hoodie_props(tmp_path: Path) -> None:
    t, _ = two_partitions(tmp_path)
    old = properties_file.load(t.gw)
    new = {
        k: v
        for k, v in old.items()
        if k not in ("hoodie.table.checksum", "hoodie.table.create.schema")
    }
    new["hoodie.archivelog.folder"] = "history"
    new["hoodie.table.comment"] = "repaired"
    src = tmp_path / "new.properties"
    src.write_bytes(properties_file.encode(new))
    before = rows(hudi_rs_read(t.path), DATA)

    got = call("repair_overwrite_hoodie_props", path=t.path, new_props_file_path=str(src))

    stored = properties_file.load(t.gw)
    keys = sorted({*old, *stored})
    assert got == [(k, old.get(k, "null"), stored.get(k, "null")) for k in keys]
    changed = {(k, o, n) for k, o, n in got if o != n}
    assert changed == {
        ("hoodie.archivelog.folder", old["hoodie.archivelog.folder"], "history"),
        ("hoodie.table.comment", "null", "repaired"),
        ("hoodie.table.create.schema", old["hoodie.table.create.schema"], "null"),
    }
    # the checksum is the one the table name gives (unchanged name, unchanged checksum)
    assert stored["hoodie.table.checksum"] == old["hoodie.table.checksum"]
    assert rows(hudi_rs_read(t.path), DATA) == before == t.read()


def test_overwrite_hoodie_props_refusals_write_nothing(tmp_path: Path) -> None:
    t, _ = two_partitions(tmp_path)
    original = (Path(t.path) / ".hoodie" / "hoodie.properties").read_bytes()
    missing = tmp_path / "nope.properties"
    nameless = tmp_path / "nameless.properties"
    nameless.write_bytes(properties_file.encode({"hoodie.table.type": "COPY_ON_WRITE"}))
    bad_type = tmp_path / "bad.properties"
    props = {k: v for k, v in properties_file.load(t.gw).items() if k != "hoodie.table.checksum"}
    bad_type.write_bytes(properties_file.encode({**props, "hoodie.table.type": "SOMETIMES"}))
    with pytest.raises(ProcedureArgumentError) as e1:
        call("repair_overwrite_hoodie_props", path=t.path, new_props_file_path=str(missing))
    assert str(e1.value) == (
        f"repair_overwrite_hoodie_props: new_props_file_path '{missing}' does not exist"
    )
    with pytest.raises(ProcedureArgumentError) as e2:
        call("repair_overwrite_hoodie_props", path=t.path, new_props_file_path=str(nameless))
    assert str(e2.value) == (
        f"repair_overwrite_hoodie_props: {nameless} lacks hoodie.table.name (the table's "
        "name is required)"
    )
    with pytest.raises(ProcedureArgumentError) as e3:
        call("repair_overwrite_hoodie_props", path=t.path, new_props_file_path=str(bad_type))
    message = str(e3.value)
    assert message.startswith(
        f"repair_overwrite_hoodie_props: {bad_type} is not a table config hudilite can load: "
    )
    assert "SOMETIMES" in message and "\n" not in message
    assert (Path(t.path) / ".hoodie" / "hoodie.properties").read_bytes() == original


def test_migrate_partition_meta(tmp_path: Path) -> None:
    t, times = two_partitions(tmp_path)
    base = Path(t.path)
    text = [base / p / ".hoodie_partition_metadata" for p in ("x", "y")]
    before = rows(hudi_rs_read(t.path), DATA)

    dry = call("repair_migrate_partition_meta", path=t.path)
    assert dry == [("x", "true", "false", "MIGRATE"), ("y", "true", "false", "MIGRATE")]
    assert all(f.exists() for f in text)
    assert "hoodie.partition.metafile.use.base.format" not in properties_file.load(t.gw)

    done = call("repair_migrate_partition_meta", path=t.path, dry_run=False)
    assert done == [("x", "true", "false", "MIGRATED"), ("y", "true", "false", "MIGRATED")]
    assert not any(f.exists() for f in text)
    for p in ("x", "y"):
        meta = pq.read_metadata(
            io.BytesIO((base / p / ".hoodie_partition_metadata.parquet").read_bytes())
        )
        assert meta.num_rows == 0
        assert {k.decode(): v.decode() for k, v in meta.metadata.items()} == {
            "commitTime": times[-1],
            "partitionDepth": "1",
        }
    assert properties_file.load(t.gw)["hoodie.partition.metafile.use.base.format"] == "true"
    assert rows(hudi_rs_read(t.path), DATA) == before == t.read()

    again = call("repair_migrate_partition_meta", path=t.path, dry_run="true")
    assert again == [("x", "false", "true", "NONE"), ("y", "false", "true", "NONE")]
    # a later write keeps the partition's one metadata file (no text file beside it)
    t.write({("x", "a-0"): [("k1", 3, "v4")]})
    assert not any(f.exists() for f in text)
    assert rows(hudi_rs_read(t.path), DATA) == t.read() == [("k1", 3, "v4", "x"), before[-1]]
