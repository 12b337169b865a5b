"""Change rows of one file group for one commit, in Hudi's CDC query format.

Hudi's Spark CDC query (``hoodie.datasource.query.incremental.format=cdc``) returns four
string columns, Debezium style (``HoodieCDCFileIndex.FULL_CDC_SPARK_SCHEMA``):

* ``op``: ``i`` (insert), ``u`` (update) or ``d`` (delete);
* ``ts_ms``: the commit's instant time (its requested time, 17 digits), as Hudi gives it;
* ``before``: the record before the commit as a JSON object (null for an insert);
* ``after``: the record after the commit as a JSON object (null for a delete).

The JSON objects hold every column of the table, the ``_hoodie_*`` meta columns included
(Hudi converts the whole row). Hudi's object key order is not defined (a hash map); here
it is the table's column order. Values: strings, numbers and booleans as JSON; null as
null; timestamps as microseconds since the epoch and dates as days since the epoch
(Spark's internal values, which Hudi writes); decimals as strings (no precision lost);
binary as base64; structs, maps and lists as objects and arrays.

How the rows are found without change logs: the file group's merged records just before
the commit (``before``) and just after it (``after``) are compared. A record of ``after``
whose ``_hoodie_commit_time`` is the commit's is new or changed; a record of ``before``
whose identity (``_hoodie_record_key``, ``_hoodie_commit_seqno``) is not in ``after`` is
gone. A new record whose key matches a gone one is an update (``u``, both images);
otherwise it is an insert (``i``); a gone record no new record replaces is a delete
(``d``). A record a commit did not change keeps its commit time and gives no row.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.schema import COMMIT_SEQNO_COL as SEQNO_COL
from hudilite.schema import COMMIT_TIME_COL, RECORD_KEY_COL

OP_INSERT, OP_UPDATE, OP_DELETE = "i", "u", "d"
CDC_COLUMNS = ("op", "ts_ms", "before", "after")
#: The CDC output: four nullable strings.
CDC_SCHEMA = pa.schema([(c, pa.string()) for c in CDC_COLUMNS])

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)


def json_value(value: Any) -> Any:
    """A Python value from ``pyarrow``'s ``to_pylist`` as the JSON Hudi writes for it."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        delta = moment - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        # Arrow maps come back as lists of (key, value) pairs: make them objects.
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {str(k): json_value(v) for k, v in value}
        return [json_value(v) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as CDC JSON")


def row_json(row: dict[str, Any]) -> str:
    """One record as a CDC image (see the module docstring)."""
    return json.dumps({k: json_value(v) for k, v in row.items()}, separators=(",", ":"))


def _identities(table: pa.Table) -> set[tuple[Any, Any]]:
    return set(zip(table[RECORD_KEY_COL].to_pylist(), table[SEQNO_COL].to_pylist(), strict=True))


def cdc_rows(before: pa.Table | None, after: pa.Table | None, instant: str) -> pa.Table:
    """The change rows (:data:`CDC_SCHEMA`) of one file group for the commit ``instant``:
    ``before`` / ``after`` are the group's merged records just before and just after it
    (None: the group did not exist then, or the commit replaced it). Updates first, then
    inserts, then deletes, each in the order of the records."""
    before_ids = _identities(before) if before is not None else set()
    after_ids = _identities(after) if after is not None else set()
    new_rows: list[dict[str, Any]] = []
    if after is not None and after.num_rows:
        mine = pc.fill_null(pc.equal(after[COMMIT_TIME_COL], instant), False)
        new_rows = [
            r
            for r in after.filter(mine).to_pylist()
            if (r[RECORD_KEY_COL], r[SEQNO_COL]) not in before_ids
        ]
    gone: dict[Any, list[dict[str, Any]]] = {}
    if before is not None and before.num_rows:
        for r in before.to_pylist():
            if (r[RECORD_KEY_COL], r[SEQNO_COL]) not in after_ids:
                gone.setdefault(r[RECORD_KEY_COL], []).append(r)
    updates: list[tuple[str, str | None, str | None]] = []
    inserts: list[tuple[str, str | None, str | None]] = []
    for r in new_rows:
        old = gone.get(r[RECORD_KEY_COL])
        if old:
            updates.append((OP_UPDATE, row_json(old.pop(0)), row_json(r)))
        else:
            inserts.append((OP_INSERT, None, row_json(r)))
    deletes = [(OP_DELETE, row_json(r), None) for rows in gone.values() for r in rows]
    changes = updates + inserts + deletes
    return pa.table(
        {
            "op": pa.array([c[0] for c in changes], pa.string()),
            "ts_ms": pa.array([instant] * len(changes), pa.string()),
            "before": pa.array([c[1] for c in changes], pa.string()),
            "after": pa.array([c[2] for c in changes], pa.string()),
        },
        schema=CDC_SCHEMA,
    )
