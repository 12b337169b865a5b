"""The Spark upsert builds the window over the record key only for a batch that needs it.

A delete of a key the table does not hold is dropped before the file groups' merge, unless
another record of the batch inserts that key (then the merge decides: a newer delete
leaves nothing). Finding those keys takes a window over the key, a shuffle of every record
(1.1-3.3 s per 1M records), so the write decides from its key stats: no delete, no window
(``"none"``); only deletes, a filter (``"filter"``); both, the window (``"window"``).
``WriteResult.extra["unknown_deletes"]`` says which ran, and a spy on the window's builder
checks that it was (not) built. Written through the executors' path (local writes off).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudilite.spark import write_job
from tests.helpers import hudi_rs_read, rows
from tests.tables import TRIPS

SCHEMA = TRIPS.schema
MARKED = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
DATA = TRIPS.columns
SPARK = {"hoodie.hudilite.write.local.max.rows": "0"}


def marked(*recs: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(MARKED.names, r, strict=True)) for r in recs], MARKED)


def test_window_only_for_a_batch_of_deletes_and_inserts(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    window = write_job._drop_unknown_deletes

    def spy(tagged: Any) -> Any:
        built.append(1)
        return window(tagged)

    monkeypatch.setattr(write_job, "_drop_unknown_deletes", spy)
    t = TRIPS.create(spark, str(tmp_path / "t"))
    t.write(marked(("a", 1, 1.0, "sf", False), ("b", 1, 2.0, "la", False)), options=SPARK)

    # An ordinary upsert (the flag column all false or null): no window, no filter.
    r = t.write(marked(("a", 2, 3.0, "sf", False), ("c", 2, 4.0, "la", None)), options=SPARK)
    assert (r.extra["driver_side"], r.extra["unknown_deletes"], built) == (False, "none", [])
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 1, 0)

    # Deletes only, one of a key the table does not hold: a filter drops that one.
    r = t.write(marked(("b", 3, None, "la", True), ("x", 3, None, "sf", True)), options=SPARK)
    assert (r.extra["unknown_deletes"], built) == ("filter", [])
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (0, 0, 1)

    # A new key inserted then deleted by a newer record of the same batch: the window keeps
    # the delete and the merge leaves nothing; the delete of y (never inserted) is dropped.
    r = t.write(
        marked(
            ("n", 4, 5.0, "sf", False),
            ("n", 5, None, "sf", True),
            ("y", 4, None, "la", True),
            ("c", 4, 6.0, "la", False),
        ),
        options=SPARK,
    )
    assert (r.extra["unknown_deletes"], built) == ("window", [1])
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (0, 1, 0)
    expected = [("a", 2, 3.0, "sf"), ("c", 4, 6.0, "la")]
    assert rows(t.to_arrow(), DATA) == expected
    assert rows(hudi_rs_read(t.path), DATA) == expected
