"""GLOBAL_BLOOM reading bloom filters from the metadata table (issue 29), through the Spark
index job (``hudilite.spark.index_job``, where global indexes run): a copy-on-write v9 table
with ``hoodie.metadata.index.bloom.filter.enable`` and ``hoodie.bloom.index.use.metadata``
gets two inserts (two partitions, one file group each), then an upsert updating a key in
place, moving one to the other partition and adding one. The driver hands the lookup tasks
both stored files' filters from the bloom_filters partition (the tasks then open no footer
for them); hudi-rs reads exactly the expected rows, and the partition holds the footer filter
of every live base file. On MOR, a compaction's base files get their records and a BLOOM
upsert after it (the driver-side path) opens no footer for a filter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite import config as cfg
from hudilite.index import bloom_index
from hudilite.metadata import bloom_filters as bf
from hudilite.metadata import table as mt
from hudilite.spark import index_job
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from tests.helpers import hudi_rs_read, rows
from tests.tables import ID_TS_V_P

COLS = ID_TS_V_P.columns


def test_global_bloom_upsert_with_filters_from_the_metadata_table(
    spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    served: list[dict[str, Any]] = []  # the filters the driver hands the lookup tasks
    real = index_job.metadata_filters
    monkeypatch.setattr(
        index_job, "metadata_filters", lambda *a: served.append(real(*a)) or served[-1]
    )
    t = ID_TS_V_P.create(
        spark,
        str(tmp_path / "t"),
        table_type="cow",
        table_version=9,
        options={
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.bloom.filter.enable": "true",
            "hoodie.index.type": "GLOBAL_BLOOM",
            "hoodie.bloom.index.use.metadata": "true",
            "hoodie.parquet.small.file.limit": "0",
        },
    )

    def batch(*recs: tuple[str, int, str, str]) -> pa.Table:
        return pa.Table.from_pylist(
            [dict(zip(COLS, r, strict=True)) for r in recs], ID_TS_V_P.schema
        )

    t.write(batch(("a", 1, "a1", "p1"), ("b", 1, "b1", "p1")), "insert")  # type: ignore[arg-type]
    t.write(batch(("c", 1, "c1", "p2")), "insert")  # type: ignore[arg-type]
    t.write(
        batch(("a", 2, "a2", "p1"), ("b", 2, "b2", "p2"), ("d", 2, "d2", "p2")),
        "upsert",  # type: ignore[arg-type]
    )
    # both stored base files were candidates; both filters came from bloom_filters
    assert [sorted(f.rsplit("/", 1)[0] for f in s) for s in served] == [["p=p1", "p=p2"]]
    assert rows(hudi_rs_read(t.path), COLS) == [
        ("a", 2, "a2", "p1"),
        ("b", 2, "b2", "p2"),
        ("c", 1, "c1", "p2"),
        ("d", 2, "d2", "p2"),
    ]
    gw = FileSystemGateway(t.path)
    props = properties_file.load(gw)
    assert props["hoodie.table.metadata.partitions"] == "bloom_filters,files"
    live = {
        bf.record_key(p, n): pq.read_metadata(gw.abs_path(f"{p}/{n}")).metadata[
            b"org.apache.hudi.bloomfilter"
        ]
        for p, files in mt.live_files(gw, cfg.TableConfig.from_properties(props)).items()
        for n in files
    }
    stored = {k: r.bloom for k, r in bf.read_partition(gw).items() if not r.deleted}
    assert stored == live


def test_mor_compaction_keeps_the_filters_and_bloom_finds_keys_through_them(
    spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """MOR: an upsert logs its changes, a compaction writes new base files (their filters
    recorded, the replaced slices' files still live until cleaned), and a BLOOM upsert
    after it finds every stored key through the partition without a footer read."""
    t = ID_TS_V_P.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        table_version=9,
        options={
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.bloom.filter.enable": "true",
            "hoodie.index.type": "BLOOM",
            "hoodie.bloom.index.use.metadata": "true",
        },
    )

    def batch(ts: int, *ids: str) -> pa.Table:
        return pa.Table.from_pylist(
            [{"id": i, "ts": ts, "v": f"{i}{ts}", "p": "p1"} for i in ids], ID_TS_V_P.schema
        )

    t.write(batch(1, "a", "b", "c"), "insert")  # type: ignore[arg-type]
    t.write(batch(2, "a"), "upsert")  # type: ignore[arg-type]
    gw = FileSystemGateway(t.path)
    assert any(".log." in e.name for e in gw.list_dir("p=p1"))
    assert t.compact()
    props = properties_file.load(gw)
    live = mt.live_files(gw, cfg.TableConfig.from_properties(props))["p=p1"]
    bases = sorted(n for n in live if n.endswith(".parquet"))
    assert len(bases) == 2  # the insert's and the compaction's
    stored = {k: r.bloom for k, r in bf.read_partition(gw).items() if not r.deleted}
    assert stored == {
        bf.record_key("p=p1", n): pq.read_metadata(gw.abs_path(f"p=p1/{n}")).metadata[
            b"org.apache.hudi.bloomfilter"
        ]
        for n in bases
    }
    footer_reads: list[str] = []
    real = bloom_index.read_bloom_filter
    monkeypatch.setattr(
        bloom_index, "read_bloom_filter", lambda g, rel: footer_reads.append(rel) or real(g, rel)
    )
    result = t.write(batch(3, "b", "d"), "upsert")  # type: ignore[arg-type]
    assert (result.num_updates, result.num_inserts) == (1, 1)
    assert footer_reads == []
    assert rows(hudi_rs_read(t.path), COLS) == [
        ("a", 2, "a2", "p1"),
        ("b", 3, "b3", "p1"),
        ("c", 1, "c1", "p1"),
        ("d", 3, "d3", "p1"),
    ]
