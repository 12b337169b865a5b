"""CDC rows of one file group for one commit (``hudilite.read.cdc``), no JVM."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

from hudilite.read.cdc import CDC_SCHEMA, cdc_rows, json_value, row_json

T1, T2 = "20260101000000000", "20260102000000000"
SCHEMA = pa.schema(
    [
        ("_hoodie_commit_time", pa.string()),
        ("_hoodie_commit_seqno", pa.string()),
        ("_hoodie_record_key", pa.string()),
        ("v", pa.int64()),
    ]
)


def _t(*rows: tuple[str, str, str, int]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(SCHEMA.names, r, strict=True)) for r in rows], schema=SCHEMA
    )


def _img(commit: str, seq: str, key: str, v: int) -> str:
    return json.dumps(
        {
            "_hoodie_commit_time": commit,
            "_hoodie_commit_seqno": seq,
            "_hoodie_record_key": key,
            "v": v,
        },
        separators=(",", ":"),
    )


def test_update_insert_delete_and_unchanged() -> None:
    before = _t((T1, "1_0", "a", 1), (T1, "1_1", "b", 2), (T1, "1_2", "c", 3))
    after = _t((T2, "2_0", "a", 10), (T1, "1_1", "b", 2), (T2, "2_1", "d", 4))
    got = cdc_rows(before, after, T2)
    assert got.schema == CDC_SCHEMA
    a1, a2 = _img(T1, "1_0", "a", 1), _img(T2, "2_0", "a", 10)
    assert got.to_pylist() == [
        {"op": "u", "ts_ms": T2, "before": a1, "after": a2},
        {"op": "i", "ts_ms": T2, "before": None, "after": _img(T2, "2_1", "d", 4)},
        {"op": "d", "ts_ms": T2, "before": _img(T1, "1_2", "c", 3), "after": None},
    ]


def test_new_group_and_replaced_group() -> None:
    rows = _t((T1, "1_0", "a", 1))
    assert cdc_rows(None, rows, T1).column("op").to_pylist() == ["i"]
    assert cdc_rows(rows, None, T2).to_pylist() == [
        {"op": "d", "ts_ms": T2, "before": _img(T1, "1_0", "a", 1), "after": None}
    ]
    # A record the commit did not win (older ordering value) keeps its commit time.
    assert cdc_rows(rows, rows, T2).num_rows == 0


def test_duplicate_keys_insert_is_not_an_update() -> None:
    before = _t((T1, "1_0", "a", 1))
    after = _t((T1, "1_0", "a", 1), (T2, "2_0", "a", 2))
    assert cdc_rows(before, after, T2).to_pylist() == [
        {"op": "i", "ts_ms": T2, "before": None, "after": _img(T2, "2_0", "a", 2)}
    ]


def test_json_values_follow_spark_internal_values() -> None:
    assert json_value(dt.datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=dt.UTC)) == 1_000_005
    assert json_value(dt.datetime(1969, 12, 31, 23, 59, 59)) == -1_000_000
    assert json_value(dt.date(1970, 1, 3)) == 2
    assert json_value(decimal.Decimal("1.10")) == "1.10"
    assert json_value(b"\x00\x01") == "AAE="
    assert json_value([("k", 1)]) == {"k": 1}
    assert json_value({"s": [1, None]}) == {"s": [1, None]}
    assert row_json({"x": None, "y": 1.5}) == '{"x":null,"y":1.5}'
    with pytest.raises(TypeError, match="cannot write object value"):
        json_value(object())
