"""Incoming records without an ordering value (issue 27.9).

An upsert under event-time ordering decides between two records of one key by the
ordering (precombine) field. A record whose value is null -- or whose input lacks the
column, filled with nulls by ``hoodie.write.set.null.for.missing.columns`` -- was written
without a word, and under the merge rules (:mod:`hudilite.merge.merger`: a null sorts
lowest) it silently loses to the stored record it was meant to update.

What Hudi does:

* 0.x (and 1.x tables whose writes go through a payload class): every payload's constructor
  (``BaseAvroPayload``) throws ``HoodieException("Ordering value is null for record: ...")``;
  a field missing from the record fails ``HoodieAvroUtils.getNestedFieldVal`` (``field not
  found in record``).
* 1.x with a merge mode (table version 8+): ``HoodieCreateRecordUtils`` builds the record
  with whatever ``OrderingValues.create`` gives, null included, and the merge compares it
  as ``OrderingValues.getDefault()``: the write succeeds.

``hoodie.hudilite.write.null.ordering.value`` chooses: ``warn`` (the default: Hudi 1.x's
acceptance, plus a :class:`NullOrderingWarning` naming the field and how many records),
``fail`` (Hudi 0.x's refusal, a :class:`~hudilite.errors.WriteError` naming the field and
one record key, before any instant exists) or ``allow`` (silent).

Only upserts under event-time ordering with an ordering field are checked: commit-time
ordering never reads the value, and a delete (``_hoodie_is_deleted``, a MERGE's delete
clause) without one is Hudi's natural-order delete, which is meant to win. The counting
runs on the keyed records before the write's transaction: in Arrow for a write the driver
holds, and for a Spark write in the aggregation that already computes the key statistics
(no extra job): :func:`spark_counts` names the two values that query adds.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import HudiliteWarning, WriteError, warn_at_caller
from hudilite.merge import MergeSpec
from hudilite.schema import DELETE_COL, RECORD_KEY_COL

__all__ = [
    "NULLS_COUNT",
    "NULLS_EXAMPLE",
    "NullOrderingWarning",
    "checked_field",
    "count_nulls",
    "report",
]

#: Result columns of the Spark write's key-statistics query (see :func:`checked_field`).
NULLS_COUNT = "null_ordering"
NULLS_EXAMPLE = "null_ordering_key"


class NullOrderingWarning(HudiliteWarning):
    """An upsert wrote records whose ordering field is null (or missing from the input)."""


def checked_field(spec: MergeSpec, operation: str, policy: str) -> str | None:
    """The ordering field whose nulls this write counts, or None when nothing is checked
    (``policy`` -- the write's resolved ``WriteConfig.null_ordering`` -- ``allow``, not an
    upsert, commit-time ordering, no ordering field)."""
    if operation != "upsert" or policy == "allow":
        return None
    return spec.ordering_field if spec.event_time else None


def count_nulls(keyed: pa.Table, field: str) -> tuple[int, str | None]:
    """``(records with a null field, the first such record's key)`` among the records of
    ``keyed`` that are not deletes. A field the keyed records lack (a nested path) counts
    nothing: its value is read by the merge, not checked here."""
    if field not in keyed.column_names or keyed.num_rows == 0:
        return 0, None
    missing = pc.is_null(keyed[field])
    if DELETE_COL in keyed.column_names:
        missing = pc.and_(missing, pc.invert(pc.fill_null(keyed[DELETE_COL], False)))
    hits = keyed.filter(missing)
    if hits.num_rows == 0:
        return 0, None
    return hits.num_rows, str(hits[RECORD_KEY_COL][0].as_py())


def report(field: str, count: int, example: str | None, policy: str) -> None:
    """Warn about, or refuse (``policy`` ``fail``: the write's resolved
    ``WriteConfig.null_ordering``), ``count`` records whose ``field`` is null; nothing when
    ``count`` is 0."""
    if count <= 0:
        return
    key = cfg.NULL_ORDERING_VALUE.name
    if policy == "fail":
        raise WriteError(
            f"ordering field {field!r} is null (or missing) in {count} record(s) of the "
            f"upsert, e.g. record key {example!r}; give every record a value, or set "
            f"{key}=warn to write them (a null orders lowest)"
        )
    warn_at_caller(
        NullOrderingWarning(
            f"ordering field {field!r} is null (or missing) in {count} record(s) of the "
            f"upsert: written with a null ordering value, which orders lowest, so they do not "
            f"replace stored records with a value ({key}=fail refuses such writes)"
        )
    )
