"""Hostile partition values through Table.write: refused with nothing written, or stored safely.

Issue 9 item 4: ``..``, ``../../outside`` and ``.hoodie`` wrote files outside the table or
into its metadata folder (reported "1 inserted", invisible to every reader), and ``\\``
broke every later read and upsert. Every reader (Table.read, Table.to_arrow, hudi-rs) must
see exactly the committed rows afterwards.
"""

from __future__ import annotations

import os

import pytest

import hudilite
from hudilite.errors import KeyGenerationError
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import ID_TS_P

pytestmark = pytest.mark.spark

COLS = ID_TS_P.columns


batch = ID_TS_P.batch


def all_readers(t: hudilite.Table) -> tuple[list, list, list]:
    return (
        spark_rows(t.read(), COLS),
        rows(t.to_arrow(), COLS),
        rows(hudi_rs_read(t.path), COLS),
    )


def files_under(root) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
def test_hostile_values_are_refused_and_nothing_is_written(spark, tmp_path, hive):
    root = tmp_path / "box"
    t = ID_TS_P.create(
        spark,
        str(root / "a" / "t"),
        options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower()},
    )
    t.write(batch(("k0", 1, "ok")))
    before = files_under(root)
    hostile = ["../../outside", "a/../../b", "a\\b"]
    if not hive:
        hostile += ["..", ".hoodie"]
    for value in hostile:
        with pytest.raises(KeyGenerationError, match=r"partition field 'p'"):
            t.write(batch(("k1", 2, value)))
    # Nothing outside the table, nothing new inside it but rolled-back timeline leftovers.
    after = files_under(root)
    assert not [f for f in after - before if not f.startswith(os.path.join("a", "t", ".hoodie"))]
    assert all(".parquet" not in f for f in after - before)
    got = rows(batch(("k0", 1, "ok")), COLS)
    assert all_readers(t) == (got, got, got)
    # The table still takes ordinary writes.
    t.write(batch(("k0", 3, "ok"), ("k2", 1, "x.y")))
    got = rows(batch(("k0", 3, "ok"), ("k2", 1, "x.y")), COLS)
    assert all_readers(t) == (got, got, got)


def test_hive_style_and_url_encoding_store_unusual_values_readably(spark, tmp_path):
    hive = ID_TS_P.create(
        spark,
        str(tmp_path / "hive"),
        options={"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    hive.write(batch(("k1", 1, ".."), ("k2", 1, ".hoodie"), ("k3", 1, ""), ("k4", 1, None)))
    expected = [("k1", 1, ".."), ("k2", 1, ".hoodie"), ("k3", 1, ""), ("k4", 1, None)]
    assert sorted(os.listdir(hive.path)) == [
        ".hoodie", "p=..", "p=.hoodie", "p=__HIVE_DEFAULT_PARTITION__"
    ]  # fmt: skip
    got = rows(batch(*expected), COLS)
    assert all_readers(hive) == (got, got, got)

    enc = ID_TS_P.create(
        spark,
        str(tmp_path / "enc"),
        options={
            "hoodie.datasource.write.partitionpath.urlencode": "true",
            "hoodie.datasource.write.hive_style_partitioning": "false",
        },
    )
    enc.write(batch(("k1", 1, "a\\b"), ("k2", 1, "a/../../b")))
    assert sorted(os.listdir(enc.path)) == [".hoodie", "a%2F..%2F..%2Fb", "a%5Cb"]
    got = rows(batch(("k1", 1, "a\\b"), ("k2", 1, "a/../../b")), COLS)
    assert all_readers(enc) == (got, got, got)
