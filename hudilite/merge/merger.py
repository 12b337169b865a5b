"""The one merge function: which version of each record survives, over Arrow tables.

Used for de-duplicating a batch (:func:`precombine`), merging a batch into a COW
base file (:func:`merge_file_group`), and later compaction and MOR snapshot
reads, so the four places agree exactly (``docs/hudi-format.md`` §7).

Records are Arrow tables with ``_hoodie_record_key`` plus two internal columns:
``_hl_seq`` (int64 write order; larger = later) and ``_hl_delete`` (bool). The
rule for an older record ``a`` and a newer record ``b`` of the same key:

* COMMIT_TIME_ORDERING: ``b`` wins.
* EVENT_TIME_ORDERING: ``b`` wins unless ``a``'s ordering value is greater. A
  null ordering value sorts lowest (Hudi 0.x ``DefaultHoodieRecordPayload``: a
  stored null loses to any incoming value, an incoming null loses to a stored
  value), so on a tie -- including null vs null -- the later write wins. NaN is
  the greatest float (Java's ``Double.compareTo``).
* A delete is a record like any other under these rules (a
  ``_hoodie_is_deleted`` row carries its ordering value), except a delete whose
  ordering value is null: that is Hudi's "natural order" delete (the DELETE
  operation, delete blocks with no ordering value) and beats every older record
  regardless of event time.
* When the winner is a delete, the key is gone.

Inside one batch the rule is applied as a fold in ``_hl_seq`` order; vectorised,
that is "drop the records before the key's last natural-order delete, then take
the greatest ``(ordering, seq)``". Against a base file the precombined winner of
the batch is compared with the stored row, as Hudi's merge handle does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import KeyGenerationError, SchemaError
from hudilite.merge.spec import MergeSpec
from hudilite.schema import (
    CHANGED_COL,
    DELETE_COL,
    FILE_ID_COL,
    IS_DELETED_COL,
    META_COLUMNS,
    RECORD_KEY_COL,
    SEQ_COL,
)

_INTERNAL = (SEQ_COL, DELETE_COL, FILE_ID_COL, CHANGED_COL)


@dataclass(frozen=True)
class MergeOutcome:
    """Result of merging incoming records into one file group's base file.

    ``table``: the new content (meta + data columns + ``_hl_changed``); rows of
    the base file that were not replaced come first in base order, with their
    meta columns untouched and ``_hl_changed`` False; replaced rows stay at
    their base position; inserts follow in incoming order. Rows from incoming
    have ``_hl_changed`` True and carry the meta values incoming had (null from
    a writer: it stamps commit time, seqno and file name afterwards).
    Counts are per base row (``updates``, ``deletes``, ``unchanged_rows``) and
    per incoming record (``inserts``).
    """

    table: pa.Table
    inserts: int
    updates: int
    deletes: int
    unchanged_rows: int

    @property
    def unchanged(self) -> int:
        """Alias of :attr:`unchanged_rows`."""
        return self.unchanged_rows


def apply_delete_markers(
    table: pa.Table, delete_field: str = IS_DELETED_COL, marker_value: Any = True
) -> pa.Table:
    """``table`` with ``_hl_delete`` set where ``delete_field`` equals ``marker_value``.

    An existing ``_hl_delete`` is kept (OR-ed), so a DELETE operation's flags
    survive. A missing ``delete_field`` marks nothing. A string marker is
    compared with the value's text, as Hudi's ``hoodie.payload.delete.marker``.
    """
    flags = _deletes(table)
    if delete_field in table.column_names:
        column = table[delete_field]
        if isinstance(marker_value, str) and not pa.types.is_string(column.type):
            column = column.cast(pa.string())
        marked = pc.fill_null(pc.equal(column, pa.scalar(marker_value, column.type)), False)
        flags = pc.or_(flags, marked)
    return _set_column(table, DELETE_COL, _as_array(flags))


def precombine(spec: MergeSpec, incoming: pa.Table) -> pa.Table:
    """One row per ``_hoodie_record_key``: the batch's winner under ``spec``.

    Rows come back sorted by key (with all columns, internal ones included). A
    missing ``_hl_seq`` means row order; a missing ``_hl_delete``, no deletes.
    Ties in ``_hl_seq`` fall back to row order (the sort is stable).
    """
    n = incoming.num_rows
    if n == 0:
        return incoming
    keys = _keys(incoming)
    seq = _seq(incoming)
    columns: dict[str, Any] = {"k": keys, "s": seq, "i": _arange(n)}
    sort_keys = [("k", "ascending"), ("s", "ascending"), ("i", "ascending")]
    if spec.event_time:
        order = _ordering(incoming, spec.ordering_field, required=True)
        # "has a value" before the value: nulls sort lowest without relying on
        # null_placement (whose API moved between pyarrow versions).
        columns["v"] = pc.is_valid(order)
        columns["o"] = order
        sort_keys[1:1] = [("v", "ascending"), ("o", "ascending")]
    narrow = pa.table(columns)
    if spec.event_time:
        keep = _after_last_natural_delete(keys, seq, columns["o"], _deletes(incoming))
        if keep is not None:
            narrow = narrow.filter(keep)
    try:
        order_idx = pc.sort_indices(narrow, sort_keys=sort_keys)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(
            f"ordering field {spec.ordering_field!r} is not comparable: {exc}"
        ) from exc
    ranked = narrow.take(order_idx)
    winners = ranked["i"].filter(_last_of_runs(ranked["k"]))
    return incoming.take(winners)


def merge_file_group(spec: MergeSpec, base: pa.Table | None, incoming: pa.Table) -> MergeOutcome:
    """Merge precombined ``incoming`` records into the rows of a base file.

    ``base`` is the file group's current base file (meta + data columns) or
    None for a new file group. ``incoming`` holds ``_hoodie_record_key``,
    ``_hoodie_partition_path``, the data columns, ``_hl_seq`` and ``_hl_delete``;
    it should be :func:`precombine`'s output (duplicates are precombined here).
    Base rows are the older writes: an incoming record replaces a base row
    unless event time says the base row's ordering value is greater; a winning
    delete removes the row; a delete of an unknown key is ignored. Duplicate keys
    in ``base`` (left by ``insert``) are each merged with the incoming record.
    Columns are unified by name (Arrow's permissive promotion, e.g. int32+int64);
    a column in only one side is null in the other's rows.
    """
    if incoming.num_rows and pc.count_distinct(_keys(incoming)).as_py() != incoming.num_rows:
        incoming = precombine(spec, incoming)
    inc_keys = _keys(incoming)
    inc_delete = _deletes(incoming)
    if base is None or base.num_rows == 0:
        live = pc.invert(inc_delete)
        rows = _output([incoming], pc.indices_nonzero(live), changed_from=0)
        return MergeOutcome(rows, inserts=rows.num_rows, updates=0, deletes=0, unchanged_rows=0)

    nb = base.num_rows
    base_keys = _keys(base)
    # For every base row: the position of its key among the incoming records (or null).
    match = pc.index_in(base_keys, value_set=inc_keys)
    matched = pc.is_valid(match)
    incoming_wins = matched
    if spec.event_time:
        inc_order = _ordering(incoming, spec.ordering_field, required=True)
        base_order = _ordering(base, spec.ordering_field, required=False)
        winner_order = inc_order.take(match)
        natural = pc.and_(inc_delete, pc.is_null(inc_order)).take(match)
        base_greater = _greater_nulls_lowest(base_order, winner_order)
        incoming_wins = pc.and_(
            matched, pc.or_(pc.fill_null(natural, False), pc.invert(base_greater))
        )
    incoming_wins = pc.fill_null(incoming_wins, False)
    deleted = pc.and_(incoming_wins, pc.fill_null(inc_delete.take(match), False))
    base_pos = _arange(nb)
    replaced_pos = pc.add(match.cast(pa.int64()), nb)
    kept = pc.if_else(incoming_wins, replaced_pos, base_pos).filter(pc.invert(deleted))
    new_keys = pc.and_(pc.invert(pc.is_in(inc_keys, value_set=base_keys)), pc.invert(inc_delete))
    inserted = pc.add(pc.indices_nonzero(new_keys), nb)
    take = pa.concat_arrays([_as_array(kept), _as_array(inserted).cast(pa.int64())])
    rows = _output([base, incoming], take, changed_from=nb)
    n_deleted = pc.sum(deleted).as_py() or 0
    n_updated = (pc.sum(incoming_wins).as_py() or 0) - n_deleted
    return MergeOutcome(
        rows,
        inserts=len(inserted),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=nb - n_updated - n_deleted,
    )


# --- helpers -------------------------------------------------------------------------------


def _output(parts: list[pa.Table], take: pa.Array, changed_from: int) -> pa.Table:
    """Rows ``take`` of the concatenated ``parts``, meta columns first, ``_hl_changed`` last.

    Indices ``>= changed_from`` address rows of the last part (the incoming records).
    """
    cleaned = []
    for part in parts:
        part = part.drop_columns([c for c in _INTERNAL if c in part.column_names])
        for name in META_COLUMNS:
            if name not in part.column_names:
                part = part.append_column(name, pa.nulls(part.num_rows, pa.string()))
        cleaned.append(part)
    try:
        combined = pa.concat_tables(cleaned, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"incoming records do not fit the base file's columns: {exc}") from exc
    rest = [c for c in combined.column_names if c not in META_COLUMNS]
    rows = combined.select([*META_COLUMNS, *rest]).take(take)
    changed = pc.greater_equal(take, changed_from) if len(take) else pa.array([], pa.bool_())
    return rows.append_column(CHANGED_COL, _as_array(changed))


def _keys(table: pa.Table) -> pa.Array:
    if RECORD_KEY_COL not in table.column_names:
        raise SchemaError(f"records lack the {RECORD_KEY_COL} column")
    keys = _as_array(table[RECORD_KEY_COL])
    if keys.type != pa.string():  # large_string, or null-typed in an empty table
        keys = keys.cast(pa.string())
    if keys.null_count:
        row = pc.index(pc.is_null(keys), True).as_py()
        raise KeyGenerationError(f"{RECORD_KEY_COL} is null in row {row}")
    return keys


def _seq(table: pa.Table) -> pa.Array:
    if SEQ_COL not in table.column_names:
        return _arange(table.num_rows)
    return pc.fill_null(_as_array(table[SEQ_COL]).cast(pa.int64()), -1)


def _deletes(table: pa.Table) -> pa.Array:
    if DELETE_COL not in table.column_names:
        return pa.repeat(False, table.num_rows)
    return pc.fill_null(_as_array(table[DELETE_COL]).cast(pa.bool_()), False)


def _ordering(table: pa.Table, field: str | None, required: bool) -> pa.Array:
    if field is not None and field in table.column_names:
        return _as_array(table[field])
    if required:
        raise SchemaError(f"ordering field {field!r} is not in the records")
    # A base file written before the ordering field existed: every stored value is null.
    return pa.nulls(table.num_rows)


def _after_last_natural_delete(
    keys: pa.Array, seq: pa.Array, order: pa.Array, deletes: pa.Array
) -> pa.Array | None:
    """Mask of records not older than their key's last null-ordering delete (None: all)."""
    natural = pc.and_(deletes, pc.is_null(order))
    if not pc.any(natural).as_py():
        return None
    marks = pa.table({"k": keys.filter(natural), "s": seq.filter(natural)})
    last = marks.group_by("k").aggregate([("s", "max")])
    cutoff = last["s_max"].take(pc.index_in(keys, value_set=last["k"]))
    return pc.fill_null(pc.or_kleene(pc.is_null(cutoff), pc.greater_equal(seq, cutoff)), True)


def _greater_nulls_lowest(a: pa.Array, b: pa.Array) -> pa.Array:
    """Element-wise ``a > b`` where null is below every value and NaN above every number."""
    if a.type != b.type:
        if pa.types.is_null(a.type):
            a = a.cast(b.type)
        elif pa.types.is_null(b.type):
            b = b.cast(a.type)
        else:
            common = _common_type(a.type, b.type)
            a, b = a.cast(common), b.cast(common)
    try:
        greater = pc.greater(a, b)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"ordering values of type {a.type} are not comparable: {exc}") from exc
    if pa.types.is_floating(a.type):
        a_nan, b_nan = pc.is_nan(a), pc.is_nan(b)
        greater = pc.or_(greater, pc.and_(a_nan, pc.invert(b_nan)))
    # a wins iff a is a value and (b is null or a > b).
    return pc.fill_null(pc.and_kleene(pc.is_valid(a), pc.or_kleene(pc.is_null(b), greater)), False)


def _common_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    try:
        schema = pa.unify_schemas(
            [pa.schema([("o", a)]), pa.schema([("o", b)])], promote_options="permissive"
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"ordering values of types {a} and {b} cannot be compared") from exc
    return schema.field("o").type


def _last_of_runs(sorted_keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Mask of the last element of every run of equal values in a sorted array."""
    keys = _as_array(sorted_keys)
    n = len(keys)
    if n == 0:
        return pa.array([], pa.bool_())
    differs = pc.not_equal(keys.slice(0, n - 1), keys.slice(1))
    return pa.concat_arrays([_as_array(differs), pa.array([True])])


def _arange(n: int) -> pa.Array:
    """0..n-1 as int64, built in Arrow (``pa.array(range(n))`` walks Python ints)."""
    if n == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


def _set_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, values)
    return table.append_column(name, values)


def _as_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


__all__ = ["MergeOutcome", "apply_delete_markers", "merge_file_group", "precombine"]
