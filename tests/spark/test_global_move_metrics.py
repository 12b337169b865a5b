"""A global index's partition moves, counted and left without empty folders (issue 26).

``records_moved`` in the index metrics was always 0, even when a key moved partition
(``update.partition.path=true``); it is now the number of records routed to a new
partition, and the commit records it in its extraMetadata (``hudilite.index.records.moved``)
where the write stats show a move only as a delete and an insert. With
``update.partition.path=false`` the record stays in its stored partition, but the
partition its new value names got a folder holding only ``.hoodie_partition_metadata``: a
partition's metadata file is now written with its first data file.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.spark.write_job import RECORDS_MOVED_KEY
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import UUID_TS_CITY

COLS = ["uuid", "ts", "city", "_hoodie_partition_path"]


def _batch(*recs: tuple[str, int, str]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(["uuid", "ts", "city"], r, strict=True)) for r in recs])


def _table(spark: Any, path: str, kind: str, update_path: str) -> hudilite.Table:
    return UUID_TS_CITY.create(
        spark,
        path,
        table_type=kind,
        options={
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": update_path,
        },
    )


def _moved_in_commit(t: hudilite.Table, instant: str) -> str | None:
    metadata = t.state().timeline.commit_metadata(t.state().timeline.get(instant))
    return metadata.extra_metadata.get(RECORDS_MOVED_KEY)


def _check(t: hudilite.Table, expected: list[tuple]) -> None:
    assert spark_rows(t.read(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_moves_are_counted_in_the_metrics_and_the_commit(spark, tmp_path, kind):
    t = _table(spark, str(tmp_path / "t"), kind, "true")
    t.write(_batch(("a", 1, "sf"), ("b", 1, "sf"), ("c", 1, "la")))
    # a and c move, b is updated in place, d is new.
    r = t.write(_batch(("a", 2, "nyc"), ("b", 2, "sf"), ("c", 2, "sf"), ("d", 1, "la")))
    assert r.extra["index"]["records_moved"] == 2
    assert _moved_in_commit(t, r.instant_time) == "2"
    _check(
        t,
        [
            ("a", 2, "nyc", "city=nyc"),
            ("b", 2, "sf", "city=sf"),
            ("c", 2, "sf", "city=sf"),
            ("d", 1, "la", "city=la"),
        ],
    )
    r = t.write(_batch(("b", 3, "sf")))  # in place: nothing moved, and the commit says so
    assert r.extra["index"]["records_moved"] == 0
    assert _moved_in_commit(t, r.instant_time) == "0"


def test_a_record_kept_in_its_partition_leaves_no_folder_for_the_new_value(spark, tmp_path):
    t = _table(spark, str(tmp_path / "t"), "mor", "false")
    t.write(_batch(("a", 1, "sf"), ("b", 1, "sf")))
    r = t.write(_batch(("a", 2, "nyc")))
    assert r.extra["index"]["records_moved"] == 0
    assert _moved_in_commit(t, r.instant_time) == "0"
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [".hoodie", "city=sf"]
    _check(t, [("a", 2, "nyc", "city=sf"), ("b", 1, "sf", "city=sf")])
    # A delete of a key no partition holds creates no folder either (non-global index).
    plain = UUID_TS_CITY.create(spark, str(tmp_path / "p"))
    plain.write(_batch(("a", 1, "sf")))
    plain.write(_batch(("z", 1, "la")), operation="delete")
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [".hoodie", "city=sf"]
    assert sorted((tmp_path / "p" / "city=sf").glob(".hoodie_partition_metadata"))
