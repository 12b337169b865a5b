"""``hoodie.index.type=RECORD_INDEX`` in the Spark write (issue 29).

Upserts and deletes locate keys in the metadata table's record_index partition: the same
rows as GLOBAL_SIMPLE (partition moves with ``hoodie.record.index.update.partition.path``
true, updates in place with false), no footer key range or base file key read for the
lookup (the driver's calls are counted; the index metrics report no file read), and the
record index afterwards places every key where hudi-rs reads it. Without the partition the
index type is refused by name and nothing is written.
"""

from __future__ import annotations

from typing import Any

import pytest

import hudilite
from hudilite.metadata import record_index as ri
from hudilite.spark import index_job
from hudilite.storage.fs import FileSystemGateway
from tests.helpers import hudi_rs_read, rows
from tests.tables import TRIPS

WITH_PATH = [*TRIPS.columns, "_hoodie_partition_path"]
ON = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.record.index.min.filegroup.count": "2",
    "hoodie.metadata.record.index.max.filegroup.count": "2",
}


def _create(spark: Any, path: str, table_type: str, **options: str) -> hudilite.Table:
    return TRIPS.create(spark, path, table_type=table_type, table_version=8, options=options)


def test_record_index_upserts_as_global_simple_without_reading_files(
    spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_type, move = "mor", "true"  # (COW and every action: tests/unit/metadata)
    rec = _create(
        spark,
        str(tmp_path / "ri"),
        table_type,
        **ON,
        **{"hoodie.index.type": "RECORD_INDEX", "hoodie.record.index.update.partition.path": move},
    )
    simple = _create(
        spark,
        str(tmp_path / "simple"),
        table_type,
        **{"hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": move},
    )
    reads: list[str] = []
    for name in ("read_key_range", "base_file_keys"):
        real = getattr(index_job, name)
        monkeypatch.setattr(
            index_job, name, lambda *a, _r=real, _n=name, **k: reads.append(_n) or _r(*a, **k)
        )
    batches = [
        ("upsert", [("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 1, 3.0, "la")]),
        # a moves sf -> nyc, b is updated in place, d is new; then c is deleted
        ("upsert", [("a", 2, 10.0, "nyc"), ("b", 2, 20.0, "sf"), ("d", 2, 4.0, "la")]),
        ("delete", [("c", 3, 0.0, "la")]),
    ]
    for op, recs in batches:
        simple.write(TRIPS.batch(*recs), operation=op)
        reads.clear()
        r = rec.write(TRIPS.batch(*recs), operation=op)
        assert reads == []  # no footer key range, no base file's keys
        assert r.extra["index"]["type"] == "RECORD_INDEX"
        assert r.extra["index"]["files_read"] == 0
        assert r.extra["index"]["files_after_range_pruning"] == 0
        assert rows(hudi_rs_read(rec.path), WITH_PATH) == rows(hudi_rs_read(simple.path), WITH_PATH)
    expected = rows(hudi_rs_read(simple.path), WITH_PATH)
    assert expected == [
        ("a", 2, 10.0, "nyc", "city=nyc"),
        ("b", 2, 20.0, "sf", "city=sf"),
        ("d", 2, 4.0, "la", "city=la"),
    ]
    # the record index places every key where it is read
    got = hudi_rs_read(rec.path)
    gw = FileSystemGateway(rec.path)
    located = {k: (v.partition, v.file_id) for k, v in ri.read_all(gw).items()}
    assert located == {
        k: (p, f.split("_", 1)[0])
        for k, p, f in zip(
            got["_hoodie_record_key"].to_pylist(),
            got["_hoodie_partition_path"].to_pylist(),
            got["_hoodie_file_name"].to_pylist(),
            strict=True,
        )
    }


def test_record_index_is_refused_without_the_partition(spark: Any, tmp_path: Any) -> None:
    t = _create(spark, str(tmp_path / "t"), "cow", **{"hoodie.metadata.enable": "true"})
    t.write(TRIPS.batch(("a", 1, 1.0, "sf")))
    timeline = sorted(p.name for p in (tmp_path / "t" / ".hoodie" / "timeline").iterdir())
    with pytest.raises(hudilite.ConfigError) as err:
        t.write(
            TRIPS.batch(("a", 2, 2.0, "sf")),
            operation="upsert",
            options={"hoodie.index.type": "RECORD_INDEX"},
        )
    assert "hoodie.metadata.record.index.enable=true" in str(err.value)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie" / "timeline").iterdir()) == timeline
