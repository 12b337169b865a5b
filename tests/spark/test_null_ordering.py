"""Upserts whose ordering (precombine) value is null or missing (issue 27.9).

They were written without a word, and under event-time ordering (a null orders lowest)
such a record silently lost to the stored one it was meant to update. Hudi 1.x accepts
them (``OrderingValues``), Hudi 0.x's payloads refuse them ("Ordering value is null");
``hoodie.hudilite.write.null.ordering.value`` picks: warn (default), fail, allow. COW
through the driver-side write, MOR through the Spark write; hudi-rs reads the same rows.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import WriteError
from hudilite.write.null_ordering import NullOrderingWarning
from tests.helpers import hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
COLS = ["id", "ts", "v"]
MODE = "hoodie.hudilite.write.null.ordering.value"


def _batch(*recs: tuple, schema: pa.Schema = SCHEMA) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in recs], schema)


@pytest.fixture(params=["cow", "mor"])
def table(request, spark, tmp_path):
    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), SCHEMA, record_key="id", ordering_field="ts",
        table_type=request.param,
    )  # fmt: skip
    t.write(_batch(("a", 1, "a1"), ("b", 1, "b1")))
    # Merge-on-read through the Spark write's key statistics, copy-on-write in the driver.
    local = {"hoodie.hudilite.write.local.max.rows": "0"} if request.param == "mor" else {}
    return t, local


def _check(t: hudilite.Table, expected: list[tuple]) -> None:
    assert spark_rows(t.read(), COLS) == expected
    assert rows(hudi_rs_read(t.path), COLS) == expected


def test_warn_by_default_names_the_field_and_count(table):
    t, local = table
    with pytest.warns(NullOrderingWarning) as caught:
        t.write(_batch(("a", None, "a2"), ("c", None, "c1"), ("b", 2, "b2")), options=local)
    (warning,) = [w for w in caught if w.category is NullOrderingWarning]
    assert str(warning.message).startswith(
        "ordering field 'ts' is null (or missing) in 2 record(s) of the upsert: written"
    )
    # a's null orders lowest: the stored a1 stays; c is new; b is updated.
    _check(t, [("a", 1, "a1"), ("b", 2, "b2"), ("c", None, "c1")])
    # A column missing from the input is null too (set.null.for.missing.columns).
    no_ts = pa.schema([("id", pa.string()), ("v", pa.string())])
    with pytest.warns(NullOrderingWarning, match=r"'ts' is null \(or missing\) in 1 record"):
        t.write(
            _batch(("d", "d1"), schema=no_ts),
            options={**local, "hoodie.write.set.null.for.missing.columns": "true"},
        )
    _check(t, [("a", 1, "a1"), ("b", 2, "b2"), ("c", None, "c1"), ("d", None, "d1")])


def test_fail_refuses_naming_the_field_and_a_key(table):
    t, local = table
    before = [i.requested_time for i in t.timeline()]
    with pytest.raises(WriteError) as err:
        t.write(_batch(("b", 5, "b5"), ("e", None, "e1")), options={**local, MODE: "fail"})
    assert str(err.value) == (
        "ordering field 'ts' is null (or missing) in 1 record(s) of the upsert, e.g. record "
        f"key 'e'; give every record a value, or set {MODE}=warn to write them (a null "
        "orders lowest)"
    )
    assert [i.requested_time for i in t.timeline()] == before
    _check(t, [("a", 1, "a1"), ("b", 1, "b1")])


def test_allow_writes_silently_and_deletes_are_not_counted(table):
    t, local = table
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullOrderingWarning)
        t.write(_batch(("a", None, "a2")), options={**local, MODE: "allow"})
        # A delete needs no ordering value (Hudi's natural-order delete), even under fail.
        t.write(_batch(("b", None, "b1")), "delete", options={**local, MODE: "fail"})
    _check(t, [("a", 1, "a1")])
