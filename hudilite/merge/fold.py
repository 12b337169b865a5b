"""The record-by-record fold of the merge rule (:mod:`hudilite.merge.merger`), in Arrow.

Records of a key, sorted by (key, write order), are folded as Hudi's merger applies them one
after another: the record-level winner is a running maximum of the ordering rank that
restarts at every key and every natural-order delete; partial-update columns and sequence
groups take their values from the latest record that supplied one inside the winner's
epoch. :func:`fold` returns every key's state after each record (:class:`Fold`), from which
the merger takes the final rows or, for the change log, the before and after images.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.merge import ordering
from hudilite.merge.delete_markers import as_array as _as_array
from hudilite.merge.delete_markers import delete_flags as _deletes
from hudilite.merge.spec import MergeSpec, SequenceGroup
from hudilite.schema import (
    CHANGED_COL,
    DELETE_COL,
    FILE_ID_COL,
    META_COLUMNS,
    OPERATION_COL,
    SEQ_COL,
)

#: The merge's working columns, dropped from its output.
INTERNAL_COLUMNS = (SEQ_COL, DELETE_COL, FILE_ID_COL, CHANGED_COL)
#: Columns a partial update or a sequence group never takes from another record.
NOT_DATA = frozenset((*META_COLUMNS, OPERATION_COL, *INTERNAL_COLUMNS))


@dataclass(frozen=True)
class Fold:
    """The state of every key after each record, records in fold order.

    ``winner``: position of the record that won the record-level comparison so
    far (its row gives the meta and internal columns, and the columns that are
    not in ``sources``); ``live``: the key exists (the winner is not a delete);
    ``sources``: per column whose value may come from another record, the
    position holding its current value (null: the value is null); ``touched``:
    the record changed the state (it won, or supplied a column).
    """

    table: pa.Table
    winner: pa.Array
    live: pa.Array
    sources: dict[str, pa.Array]
    touched: pa.Array

    def images(self, positions: pa.Array) -> pa.Table:
        """The state rows after the records at ``positions``."""
        rows = self.table.take(self.winner.take(positions))
        for name, src in self.sources.items():
            column = _as_array(self.table[name]).take(src.take(positions))
            rows = rows.set_column(rows.schema.get_field_index(name), name, column)
        return rows


def fold(spec: MergeSpec, table: pa.Table, first: pa.Array, stored: pa.Array | None = None) -> Fold:
    """Apply the merge rule record by record; ``table`` is sorted by (key, write order).

    ``first`` marks the first record of every key; ``stored`` the rows that are a
    key's stored state rather than a record (a base row: taken as it is, so its
    groups keep their values even where their ordering value is null). The record-level winner is a
    running maximum of the ordering rank that restarts at every key and every
    natural-order delete (``segment * R + rank`` compared with its cumulative
    maximum; ties go to the later record). A winning delete starts a new
    "epoch": values from before it are gone, and records that lose to it are
    discarded. Partial-update and group values are then chosen inside the
    current epoch with more cumulative maxima (see :func:`partial_source`,
    :func:`group_source`).
    """
    n = table.num_rows
    pos = ordering.arange(n)
    deletes = _deletes(table)
    if spec.event_time:
        order = ordering.spec_ordering(table, spec, required=True)
        rank = ordering.rank(order, spec.ordering_field)
        reset = pc.or_(first, pc.and_(deletes, pc.is_null(order)))
    else:
        rank = ordering.zeros(n)
        reset = first
    is_max = ordering.running_max(ordering.cumcount(reset), rank)
    winner = ordering.cummax(pc.if_else(is_max, pos, -1))
    live = pc.invert(deletes.take(winner))
    epoch_flag = pc.or_(first, pc.and_(is_max, deletes))
    epoch = ordering.cumcount(epoch_flag)
    epoch_start = ordering.cummax(pc.if_else(epoch_flag, pos, 0))
    # Records whose values count: live records arriving at a live state (or winning).
    part = pc.and_(pc.invert(deletes), live)
    sources: dict[str, pa.Array] = {}
    grouped = spec.grouped_columns
    if spec.partial_update:
        for name in table.column_names:
            if name not in NOT_DATA and name not in grouped:
                present = present_mask(spec, table[name])
                src = partial_source(present, part, is_max, epoch, epoch_start)
                # No record of the epoch has a value: the winner's own (a null, or the
                # unavailable value when there is nothing to fill it from).
                sources[name] = _as_array(pc.coalesce(src, winner))
    for group in spec.sequence_groups:
        src = group_source(table, group, part, epoch, epoch_start, stored)
        for name in group.all_columns:
            if name in table.column_names:
                sources[name] = src
    touched = is_max
    for src in sources.values():
        touched = pc.or_(touched, pc.fill_null(pc.equal(src, pos), False))
    # A deleted key shows its delete record as it was written.
    sources = {name: pc.if_else(live, src, winner) for name, src in sources.items()}
    return Fold(table, winner, live, sources, _as_array(touched))


def partial_source(
    present: pa.Array,
    part: pa.Array,
    is_max: pa.Array,
    epoch: pa.Array,
    epoch_start: pa.Array,
) -> pa.Array:
    """Where a partially updated column's value comes from after each record.

    Folding "winner's value, else loser's" record by record: a winning record
    with a value overrides; a losing one only fills a null. So the value is the
    last winning record's with a value in the epoch, else the first record's
    with a value in the epoch (the first record of an epoch is a winner; a value
    a loser filled in is kept until a winner overrides it).
    """
    n = len(part)
    pos = ordering.arange(n)
    valid = pc.and_(part, present)
    last_winner = ordering.cummax(pc.if_else(pc.and_(valid, is_max), pos, -1))
    # First valid position of the epoch so far: a running max of n - position.
    big = n + 1
    offset = pc.multiply(epoch, big)
    distance = pc.subtract(n, pc.if_else(valid, pos, n))
    first_valid = pc.subtract(n, pc.subtract(ordering.cummax(pc.add(offset, distance)), offset))
    src = pc.if_else(
        pc.greater_equal(last_winner, epoch_start),
        last_winner,
        pc.if_else(pc.less(first_valid, n), first_valid, pa.scalar(None, pa.int64())),
    )
    return _as_array(src)


def group_source(
    table: pa.Table,
    group: SequenceGroup,
    part: pa.Array,
    epoch: pa.Array,
    epoch_start: pa.Array,
    stored: pa.Array | None,
) -> pa.Array:
    """Where a sequence group's columns come from after each record.

    The last record of the epoch with a group ordering value not below every
    earlier one (a running maximum; ties to the later record); null if no
    record of the epoch had a group ordering value. A ``stored`` row counts
    even with a null ordering value (it ranks lowest).
    """
    n = len(part)
    if group.ordering_field in table.column_names:
        order = _as_array(table[group.ordering_field])
    else:
        order = pa.nulls(n, pa.int64())
    has_order = pc.is_valid(order)
    if stored is not None:
        has_order = pc.or_(has_order, stored)
    valid = pc.and_(part, has_order)
    rank = pc.if_else(valid, ordering.rank(order, group.ordering_field), 0)
    marks = pc.and_(valid, ordering.running_max(epoch, rank))
    src = ordering.cummax(pc.if_else(marks, ordering.arange(n), -1))
    return _as_array(
        pc.if_else(pc.greater_equal(src, epoch_start), src, pa.scalar(None, pa.int64()))
    )


def present_mask(spec: MergeSpec, column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Per row: does a partially updated ``column`` hold a value (else it takes the other
    version's)? Not null; with ``spec.unavailable_value``, not that text (any other
    value, null included, counts, and non-text columns always do)."""
    values = _as_array(column)
    if spec.unavailable_value is None:
        return _as_array(pc.is_valid(values))
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return pa.repeat(True, len(values))
    same = pc.equal(values, pa.scalar(spec.unavailable_value, values.type))
    return _as_array(pc.invert(pc.fill_null(same, False)))


__all__ = [
    "INTERNAL_COLUMNS",
    "NOT_DATA",
    "Fold",
    "fold",
    "group_source",
    "partial_source",
    "present_mask",
]
