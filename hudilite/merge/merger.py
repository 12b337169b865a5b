"""The one merge function: which version of each record survives, over Arrow tables.

Used for de-duplicating a batch (:func:`precombine`), merging a batch into a COW
base file (:func:`merge_file_group`), emitting a changelog (:func:`changelog_rows`),
and later compaction and MOR snapshot reads, so all places agree exactly
(``docs/dev/hudi-format.md`` §7).

Records are Arrow tables with ``_hoodie_record_key`` plus two internal columns:
``_hl_seq`` (int64 write order; larger = later) and ``_hl_delete`` (bool; see
:meth:`MergeSpec.mark_deletes` for delete markers). The rule for an older record
``a`` and a newer record ``b`` of the same key ("``b`` wins" decides the record as
a whole; partial update and sequence groups then refine single columns):

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
  regardless of event time. When the winner is a delete, the key is gone; a
  delete that loses changes nothing.
* Partial update (``spec.partial_update``; Hudi's ``PartialUpdateAvroPayload``
  with event time, ``OverwriteNonDefaultsWithLatestAvroPayload`` with commit
  time): the result is the winner with each null field taken from the loser --
  when ``b`` wins, ``b``'s nulls keep ``a``'s values; when ``a`` wins (event
  time), ``a``'s nulls are filled from ``b``. That is exactly
  ``PartialUpdateAvroPayload.mergeOldRecord``/``mergeRecords``: the winner's
  non-null fields, else the loser's. The result keeps the winner's ordering value
  and meta columns. Deliberate differences from the Java payloads: a delete
  follows the delete rule above (``PartialUpdateAvroPayload`` lets any newer
  delete win and never lets an older delete win); a delete -- winning or losing --
  never supplies field values; and ``OverwriteNonDefaultsWithLatestAvroPayload``
  merges partially inside a batch too (its Java ``preCombine`` keeps only the
  latest record). Meta columns (``_hoodie_*``) and internal columns are never
  filled. With ``spec.unavailable_value`` (Hudi 1.1's ``FILL_UNAVAILABLE``, the
  Postgres Debezium mapping) a field is missing when it holds that text instead of
  when it is null: a null overrides like any value (:func:`folding.present_mask`).
* Sequence groups (``spec.sequence_groups``, beyond Hudi, like Paimon's
  ``fields.<seq>.sequence-group``): the columns of a group, its ordering column
  included, are replaced as a unit -- nulls included -- by ``b``'s when ``b`` is
  not a delete, ``b``'s group ordering value is not null, and ``a``'s is not
  greater (null lowest; a tie goes to ``b``). This is independent of who wins
  the record, so a record that loses under event time can still update a group;
  a record whose group ordering value is null never touches that group (a new
  key starts with the group all null). Columns in no group follow the record
  rule (with partial update if set). Deletes are whole-record: a winning delete
  removes every group, a record must beat a delete to bring the key back.

A batch is reduced with :func:`precombine`: the rule is applied as a fold in
``_hl_seq`` order, giving one record per key. :func:`merge_file_group` then
combines that record with the stored row (as Hudi's merge handle combines the
precombined payload with the stored record). Where batch boundaries show:

* Deletes (plain modes too, as in Hudi): inside a batch a delete keeps its
  ordering value and beats the older-ordered records that follow it, while the
  stored table keeps no tombstone (a later batch re-inserts the key); and a
  natural-order delete followed by another record of its key in the same batch
  is absorbed by that record, which is then compared with the stored row.
  Without deletes, commit and event time are associative.
* Partial update (like Hudi's payload) is order sensitive: the merged row keeps
  one ordering value, the winner's, so a value that came from an older record is
  protected by the winner's ordering value; a batch reduced first can give a
  different row than the same records applied one at a time. So that a table's
  type does not change its rows, records of several commits are applied to the
  stored row one at a time, in write order: a COW table merges commit after
  commit, and :func:`merge_file_group` given a key's records of several commits
  (a MOR slice's log records, one combined record per commit; a snapshot read and
  compaction) folds them into the stored row in the same order
  (``_merge_in_write_order``) instead of combining them among themselves first.
  An older event arriving late therefore only fills the stored row's nulls, on
  COW, on a MOR snapshot and after compaction alike. (Hudi's merged log scanner
  does combine the log records first and then merges the stored row, so Hudi's
  own COW and MOR tables can disagree there; hudilite follows the COW result,
  which is ``combineAndGetUpdateValue`` applied per commit.) Sequence groups
  take the same path.
* Sequence groups without deletes are associative (each group is a maximum),
  which is why they, not partial update, are the tool for several writers of
  one row that arrive out of order.

Vectorisation: the fold is computed with cumulative maxima over the records
sorted by (key, write order) -- composite integers ``segment * R + rank`` make a
running maximum restart at every key, natural delete or winning delete -- so no
Python code runs per record or per key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import KeyGenerationError, SchemaError
from hudilite.merge import fold as folding
from hudilite.merge import ordering
from hudilite.merge.delete_markers import apply_delete_markers as apply_delete_markers
from hudilite.merge.delete_markers import as_array as _as_array
from hudilite.merge.delete_markers import delete_flags as _deletes
from hudilite.merge.spec import MergeSpec
from hudilite.schema import (
    CHANGED_COL,
    DELETE_COL,
    META_COLUMNS,
    OPERATION_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.virtual_keys import stored_record_keys

#: ``_hoodie_operation`` values (Hudi's ``HoodieOperation``).
OP_INSERT = "I"
OP_UPDATE_BEFORE = "-U"
OP_UPDATE_AFTER = "U"
OP_DELETE = "D"


@dataclass(frozen=True)
class MergeOutcome:
    """Result of merging incoming records into one file group's base file.

    ``table``: the new content (meta + data columns + ``_hl_changed``); rows of
    the base file that were not replaced come first in base order, with their
    meta columns untouched and ``_hl_changed`` False; then the updated rows and
    the inserts, in incoming order (plain modes: filtering the untouched rows is
    far cheaper than gathering every row into its old position). Rows from incoming
    have ``_hl_changed`` True and carry the meta values incoming had (null from
    a writer: it stamps commit time, seqno and file name afterwards). A stored
    row that stays the record-level winner but takes values from the incoming
    record (partial update, sequence groups) keeps its meta columns and has
    ``_hl_changed`` True, so the writer stamps it as an update.
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


def precombine(spec: MergeSpec, incoming: pa.Table) -> pa.Table:
    """One row per ``_hoodie_record_key``: the batch's records folded under ``spec``.

    Rows come back sorted by key (with all columns, internal ones included). A
    missing ``_hl_seq`` means row order; a missing ``_hl_delete``, no deletes.
    Ties in ``_hl_seq`` fall back to row order (the sort is stable). Without
    partial update or sequence groups the row is the batch's winner as it was
    written; with them, the winner's row with the columns the fold took from
    other records. A key whose fold ends in a delete comes back as that delete
    record, unchanged.
    """
    n = incoming.num_rows
    if n == 0:
        return incoming
    spec.check_records(incoming)
    if not spec.simple:
        return _precombine_fold(spec, incoming)
    keys = _keys(incoming, spec)
    seq = ordering.seq_numbers(incoming)
    columns: dict[str, Any] = {"k": keys, "s": seq, "i": ordering.arange(n)}
    sort_keys = [("k", "ascending"), ("s", "ascending"), ("i", "ascending")]
    if spec.event_time:
        order = ordering.spec_ordering(incoming, spec, required=True)
        # "has a value" before the value: nulls sort lowest without relying on
        # null_placement (whose API moved between pyarrow versions).
        columns["v"] = pc.is_valid(order)
        columns["o"] = order
        sort_keys[1:1] = [("v", "ascending"), ("o", "ascending")]
    narrow = pa.table(columns)
    if spec.event_time:
        keep = ordering.after_last_natural_delete(keys, seq, columns["o"], _deletes(incoming))
        if keep is not None:
            narrow = narrow.filter(keep)
    try:
        order_idx = pc.sort_indices(narrow, sort_keys=sort_keys)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(
            f"ordering field {spec.ordering_field!r} is not comparable: {exc}"
        ) from exc
    ranked = narrow.take(order_idx)
    winners = ranked["i"].filter(ordering.last_of_runs(ranked["k"]))
    return incoming.take(winners)


def merge_file_group(spec: MergeSpec, base: pa.Table | None, incoming: pa.Table) -> MergeOutcome:
    """Merge precombined ``incoming`` records into the rows of a base file.

    ``base`` is the file group's current base file (meta + data columns) or
    None for a new file group. ``incoming`` holds ``_hoodie_record_key``,
    ``_hoodie_partition_path``, the data columns, ``_hl_seq`` and ``_hl_delete``;
    it should be :func:`precombine`'s output (duplicates are precombined here).
    Base rows are the older writes: an incoming record replaces a base row
    unless event time says the base row's ordering value is greater; a winning
    delete removes the row; a delete of an unknown key is ignored. With partial
    update or sequence groups single columns of a base row can change even when
    the row wins (module docstring). Duplicate keys in ``base`` (left by
    ``insert``) are each merged with the incoming record.
    Columns are unified by name (Arrow's permissive promotion, e.g. int32+int64);
    a column in only one side is null in the other's rows.
    """
    spec.check_records(incoming)
    if incoming.num_rows and pc.count_distinct(_keys(incoming, spec)).as_py() != incoming.num_rows:
        if not spec.simple and base is not None and base.num_rows:
            # Several records of a key (a merge-on-read slice's log records, one combined
            # record per commit): applied to the stored row one at a time, in write order,
            # as a copy-on-write table applies commit after commit.
            return _merge_in_write_order(spec, base, incoming)
        incoming = precombine(spec, incoming)
    inc_keys = _keys(incoming, spec)
    inc_delete = _deletes(incoming)
    if base is None or base.num_rows == 0:
        live = pc.invert(inc_delete)
        rows = _output([incoming], pc.indices_nonzero(live), changed_from=0)
        return MergeOutcome(rows, inserts=rows.num_rows, updates=0, deletes=0, unchanged_rows=0)

    nb = base.num_rows
    base_keys = _keys(base, spec)
    # For every base row: the position of its key among the incoming records (or null).
    match = pc.index_in(base_keys, value_set=inc_keys)
    incoming_wins = _incoming_wins(spec, base, incoming, match, inc_delete)
    deleted = pc.and_(incoming_wins, pc.fill_null(inc_delete.take(match), False))
    new_keys = pc.and_(pc.invert(pc.is_in(inc_keys, value_set=base_keys)), pc.invert(inc_delete))
    inserted = _as_array(pc.add(pc.indices_nonzero(new_keys), nb)).cast(pa.int64())
    if not spec.simple:
        return _merge_columns(spec, base, incoming, match, incoming_wins, deleted, inserted)
    # Untouched base rows are filtered (a near-memcpy), not gathered with ``take``, which
    # costs five times more on a large base file; the winning incoming rows follow them.
    unchanged = base.filter(pc.invert(incoming_wins))
    updated = _as_array(match.filter(pc.and_(incoming_wins, pc.invert(deleted)))).cast(pa.int64())
    new_rows = _as_array(pc.subtract(inserted, pa.scalar(nb, pa.int64())))
    winners = incoming.take(pa.concat_arrays([updated, new_rows]))
    rows = _combine([unchanged, winners])
    flags = pa.concat_arrays(
        [pa.repeat(False, unchanged.num_rows), pa.repeat(True, winners.num_rows)]
    )
    rows = rows.append_column(CHANGED_COL, flags)
    n_deleted = pc.sum(deleted).as_py() or 0
    n_updated = (pc.sum(incoming_wins).as_py() or 0) - n_deleted
    return MergeOutcome(
        rows,
        inserts=len(inserted),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=nb - n_updated - n_deleted,
    )


def changelog_rows(spec: MergeSpec, base: pa.Table | None, incoming: pa.Table) -> pa.Table:
    """Every change ``incoming`` makes to ``base``, instead of the collapsed result.

    For changelog mode (``changelog.enabled``): the records of ``incoming`` are
    applied one at a time, in ``_hl_seq`` order, to the state of their key (the
    base row, or nothing), with the same rule as :func:`precombine` -- no
    batch-level collapsing -- and each change of the state is emitted:

    * ``I`` (after image) when a key that did not exist (or was deleted) comes alive;
    * ``-U`` (before image) then ``U`` (after image) when a live key's record
      wins, or -- partial update, sequence groups -- takes any value from it;
    * ``D`` (before image: the row that is gone) when a delete wins over a live key.

    Records that change nothing (an older record that loses and fills nothing, a
    delete of an unknown key, a record that loses to a delete) emit nothing. The
    result has the meta columns, ``_hoodie_operation`` after them (where Hudi
    puts it), the data columns, and ``_hl_seq`` (the write order of the record
    that caused the change). Rows are grouped by key (sorted by key; each base
    row of a duplicated key is its own state), in the order the changes
    happened, ``-U`` before its ``U``. Images carry the meta columns of the
    record that won the record-level comparison (null for incoming records; a
    writer stamps the after images).

    Without partial update and sequence groups the last image of each key is
    what ``merge_file_group(spec, base, precombine(spec, incoming))`` produces
    for it, except where a natural-order delete of a stored key is followed by
    another record of the key in the same batch: the changelog deletes the
    stored row and inserts the record, the collapsed merge compares the record
    with the stored row. With partial update or sequence groups the images are
    the record-at-a-time result (see the module docstring).
    """
    records, stream, first, fold = _record_at_a_time(spec, base, incoming)
    n = records.num_rows
    is_incoming = pc.equal(stream["o"], 1)
    live = fold.live
    before_live = pc.and_(pc.invert(first), ordering.shift(live))
    updated = ordering.all_of(is_incoming, before_live, live, fold.touched)
    inserted = ordering.all_of(is_incoming, pc.invert(before_live), live)
    deleted = ordering.all_of(is_incoming, before_live, pc.invert(live))
    pos = ordering.arange(n)
    before = pc.or_(updated, deleted)
    after = pc.or_(updated, inserted)
    emitted = pa.table(
        {
            "cause": pa.concat_arrays([pos.filter(before), pos.filter(after)]),
            "after": pa.concat_arrays(
                [
                    pa.repeat(False, ordering.count_true(before)),
                    pa.repeat(True, ordering.count_true(after)),
                ]
            ),
            "image": pa.concat_arrays(
                [_as_array(pc.subtract(pos.filter(before), 1)), pos.filter(after)]
            ),
            "op": pa.concat_arrays(
                [
                    _as_array(pc.if_else(updated.filter(before), OP_UPDATE_BEFORE, OP_DELETE)),
                    _as_array(pc.if_else(updated.filter(after), OP_UPDATE_AFTER, OP_INSERT)),
                ]
            ),
        }
    )
    # By the causing record, the before image first.
    emitted = emitted.take(
        pc.sort_indices(emitted, sort_keys=[("cause", "ascending"), ("after", "ascending")])
    )
    images = fold.images(_as_array(emitted["image"])).drop_columns([SEQ_COL, DELETE_COL])
    data = [c for c in images.column_names if c not in META_COLUMNS and c != OPERATION_COL]
    return pa.Table.from_arrays(
        [
            *(images[c] for c in META_COLUMNS),
            _as_array(emitted["op"]).cast(pa.string()),
            *(images[c] for c in data),
            _as_array(records[SEQ_COL]).take(emitted["cause"]),
        ],
        names=[*META_COLUMNS, OPERATION_COL, *data, SEQ_COL],
    )


def _record_at_a_time(
    spec: MergeSpec, base: pa.Table | None, incoming: pa.Table
) -> tuple[pa.Table, pa.Table, pa.Array, folding.Fold]:
    """Every key's state (a base row, or nothing) with ``incoming``'s records applied one
    at a time in ``_hl_seq`` order: ``(records, stream, first, fold)`` where ``records``
    are the base rows and records sorted by (key, base row, base before records, write
    order), ``stream`` the sort columns (``k`` key, ``b`` base row or -1, ``o`` 0 base /
    1 record, ``s`` seq, ``src`` position in base+incoming, ``d`` delete), ``first`` marks
    each state's first entry and ``fold`` is :func:`folding.fold` over them. Each base row of a
    duplicated key is a state of its own (every one of the key's records applies to it).
    """
    if spec.event_time and incoming.num_rows:
        ordering.spec_ordering(incoming, spec, required=True)
    has_base = base is not None and base.num_rows > 0
    parts = [base, incoming] if has_base else [incoming]
    combined = _combine([p for p in parts if p is not None])
    nb = base.num_rows if has_base and base is not None else 0
    ni = incoming.num_rows
    inc_keys = _keys(incoming, spec)
    inc_ref = pa.table({"k": inc_keys, "i": ordering.arange(ni)})
    if nb and base is not None:
        base_keys = _keys(base, spec)
        base_ref = pa.table({"k": base_keys, "b": ordering.arange(nb)})
        pairs = inc_ref.join(base_ref, "k", join_type="left outer")
    else:
        base_keys = pa.array([], pa.string())
        pairs = inc_ref.append_column("b", pa.nulls(ni, pa.int64()))
    pair_inc = _as_array(pairs["i"])
    m = len(pair_inc)
    stream = pa.table(
        {
            "k": pa.concat_arrays([base_keys, _as_array(pairs["k"]).cast(pa.string())]),
            "b": pa.concat_arrays(
                [ordering.arange(nb), _as_array(pc.fill_null(pairs["b"], -1)).cast(pa.int64())]
            ),
            "o": pa.concat_arrays(
                [pa.repeat(0, nb).cast(pa.int8()), pa.repeat(1, m).cast(pa.int8())]
            ),
            "s": pa.concat_arrays(
                [pa.repeat(-1, nb).cast(pa.int64()), ordering.seq_numbers(incoming).take(pair_inc)]
            ),
            "src": pa.concat_arrays([ordering.arange(nb), _as_array(pc.add(pair_inc, nb))]),
            "d": pa.concat_arrays([pa.repeat(False, nb), _deletes(incoming).take(pair_inc)]),
        }
    )
    stream = stream.take(
        pc.sort_indices(stream, sort_keys=[(c, "ascending") for c in ("k", "b", "o", "s", "src")])
    )
    records = combined.take(stream["src"])
    records = records.append_column(SEQ_COL, stream["s"]).append_column(DELETE_COL, stream["d"])
    first = ordering.run_starts(_as_array(stream["k"]), _as_array(stream["b"]))
    fold = folding.fold(spec, records, first, stored=_as_array(pc.equal(stream["o"], 0)))

    return records, stream, first, fold


def _merge_in_write_order(spec: MergeSpec, base: pa.Table, incoming: pa.Table) -> MergeOutcome:
    """:func:`merge_file_group` applying the records of a key one at a time, in ``_hl_seq``
    order, to its stored row (the fold of :func:`_record_at_a_time`): stored rows first
    (in base order; deleted ones dropped), then the new keys in write order."""
    records, stream, first, fold = _record_at_a_time(spec, base, incoming)
    n = records.num_rows
    last = pa.concat_arrays([_as_array(first).slice(1), pa.array([True])])
    pos = ordering.arange(n)
    is_incoming = _as_array(pc.equal(stream["o"], 1))
    # Did any record of the state's run change it (win, or supply a value)?
    touched = pc.and_(fold.touched, is_incoming).cast(pa.int64())
    segment = ordering.cumcount(_as_array(first))
    flag = ordering.cummax(pc.add(pc.multiply(segment, 2), touched))
    changed = pc.equal(pc.subtract(flag, pc.multiply(segment, 2)), 1).filter(last)
    live = _as_array(fold.live).filter(last)
    stored = _as_array(pc.greater_equal(stream["b"], 0)).filter(last)
    final = pos.filter(last)
    base_row = _as_array(stream["b"]).filter(last)
    kept = ordering.all_of(stored, live)
    kept_pos = final.filter(kept).take(pc.sort_indices(base_row.filter(kept)))
    kept_changed = _as_array(changed).filter(kept).take(pc.sort_indices(base_row.filter(kept)))
    new = ordering.all_of(pc.invert(stored), live)
    new_pos = final.filter(new)
    new_seq = _as_array(records[SEQ_COL]).take(new_pos)
    new_pos = new_pos.take(pc.sort_indices(new_seq))
    images = fold.images(pa.concat_arrays([kept_pos, new_pos]))
    images = images.drop_columns([c for c in (SEQ_COL, DELETE_COL) if c in images.column_names])
    flags = pa.concat_arrays([kept_changed, pa.repeat(True, len(new_pos))])
    n_deleted = ordering.count_true(ordering.all_of(stored, pc.invert(live)))
    n_updated = ordering.count_true(kept_changed)
    return MergeOutcome(
        images.append_column(CHANGED_COL, flags),
        inserts=len(new_pos),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=base.num_rows - n_updated - n_deleted,
    )


# --- the fold ------------------------------------------------------------------------------


def _precombine_fold(spec: MergeSpec, incoming: pa.Table) -> pa.Table:
    n = incoming.num_rows
    narrow = pa.table(
        {"k": _keys(incoming, spec), "s": ordering.seq_numbers(incoming), "i": ordering.arange(n)}
    )
    order = pc.sort_indices(narrow, sort_keys=[(c, "ascending") for c in ("k", "s", "i")])
    records = incoming.take(order)
    keys = _as_array(narrow["k"]).take(order)
    fold = folding.fold(spec, records, ordering.run_starts(keys))
    return fold.images(pc.indices_nonzero(ordering.last_of_runs(keys)))


# --- merging into a base file ---------------------------------------------------------------


def _incoming_wins(
    spec: MergeSpec,
    base: pa.Table,
    incoming: pa.Table,
    match: pa.Array,
    inc_delete: pa.Array,
) -> pa.Array:
    """Per base row: does the incoming record of its key win the record-level comparison?"""
    matched = pc.is_valid(match)
    incoming_wins = matched
    if spec.event_time:
        inc_order = ordering.spec_ordering(incoming, spec, required=True)
        base_order = ordering.spec_ordering(base, spec, required=False)
        winner_order = inc_order.take(match)
        natural = pc.and_(inc_delete, pc.is_null(inc_order)).take(match)
        base_greater = ordering.greater_nulls_lowest(base_order, winner_order)
        incoming_wins = pc.and_(
            matched, pc.or_(pc.fill_null(natural, False), pc.invert(base_greater))
        )
    return _as_array(pc.fill_null(incoming_wins, False))


def _merge_columns(
    spec: MergeSpec,
    base: pa.Table,
    incoming: pa.Table,
    match: pa.Array,
    incoming_wins: pa.Array,
    deleted: pa.Array,
    inserted: pa.Array,
) -> MergeOutcome:
    """:func:`merge_file_group` with partial update or sequence groups: column by column."""
    nb = base.num_rows
    combined = _combine([base, incoming])
    base_pos = ordering.arange(nb)
    inc_pos = _as_array(pc.add(match.cast(pa.int64()), nb))
    inc_live = pc.fill_null(pc.invert(_deletes(incoming).take(match)), False)
    row_src = _as_array(pc.if_else(incoming_wins, inc_pos, base_pos))
    changed = incoming_wins
    sources: dict[str, pa.Array] = {}
    grouped = spec.grouped_columns
    if spec.partial_update:
        no_pos = pa.scalar(None, pa.int64())
        loser = pc.if_else(incoming_wins, base_pos, pc.if_else(inc_live, inc_pos, no_pos))
        for name in combined.column_names:
            if name in folding.NOT_DATA or name in grouped:
                continue
            present = folding.present_mask(spec, combined[name])
            fill = pc.and_(
                pc.invert(present.take(row_src)),
                pc.fill_null(present.take(loser), False),
            )
            fill = pc.fill_null(pc.and_(fill, pc.is_valid(loser)), False)
            sources[name] = _as_array(pc.if_else(fill, loser, row_src))
            changed = pc.or_(changed, fill)
    for group in spec.sequence_groups:
        if group.ordering_field in combined.column_names:
            order = _as_array(combined[group.ordering_field])
            inc_order = order.take(inc_pos)
            takes = ordering.all_of(
                inc_live,
                pc.is_valid(inc_order),
                pc.invert(ordering.greater_nulls_lowest(order.slice(0, nb), inc_order)),
            )
            takes = pc.fill_null(takes, False)
        else:
            takes = pa.repeat(False, nb)
        src = _as_array(pc.if_else(takes, inc_pos, base_pos))
        for name in group.all_columns:
            if name in combined.column_names:
                sources[name] = src
        changed = pc.or_(changed, takes)
    keep = pc.invert(deleted)

    def rows_of(src: pa.Array) -> pa.Array:
        return pa.concat_arrays([_as_array(src.filter(keep)), inserted])

    take = rows_of(row_src)
    arrays = [
        _as_array(combined[name]).take(rows_of(sources[name]) if name in sources else take)
        for name in combined.column_names
    ]
    rows = pa.Table.from_arrays(arrays, schema=combined.schema)
    flags = pa.concat_arrays(
        [_as_array(pc.and_(changed, keep)).filter(keep), pa.repeat(True, len(inserted))]
    )
    rows = rows.append_column(CHANGED_COL, flags)
    n_deleted = ordering.count_true(deleted)
    n_updated = ordering.count_true(pc.and_(changed, keep))
    return MergeOutcome(
        rows,
        inserts=len(inserted),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=nb - n_updated - n_deleted,
    )


# --- helpers -------------------------------------------------------------------------------


def _combine(parts: list[pa.Table]) -> pa.Table:
    """``parts`` concatenated by column name, meta columns first, internal columns dropped."""
    cleaned = []
    for part in parts:
        part = part.drop_columns([c for c in folding.INTERNAL_COLUMNS if c in part.column_names])
        for name in META_COLUMNS:
            if name not in part.column_names:
                part = part.append_column(name, pa.nulls(part.num_rows, pa.string()))
        cleaned.append(part)
    try:
        combined = pa.concat_tables(cleaned, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"incoming records do not fit the base file's columns: {exc}") from exc
    rest = [c for c in combined.column_names if c not in META_COLUMNS]
    return combined.select([*META_COLUMNS, *rest])


def _output(parts: list[pa.Table], take: pa.Array, changed_from: int) -> pa.Table:
    """Rows ``take`` of the concatenated ``parts``, meta columns first, ``_hl_changed`` last.

    Indices ``>= changed_from`` address rows of the last part (the incoming records).
    """
    rows = _combine(parts).take(take)
    changed = pc.greater_equal(take, changed_from) if len(take) else pa.array([], pa.bool_())
    return rows.append_column(CHANGED_COL, _as_array(changed))


def _keys(table: pa.Table, spec: MergeSpec) -> pa.Array:
    if RECORD_KEY_COL not in table.column_names and spec.virtual_keys is None:
        raise SchemaError(f"records lack the {RECORD_KEY_COL} column")
    # A table without meta fields: stored records lacking a key take their fields' key.
    keys = stored_record_keys(table, spec.virtual_keys)
    if keys.null_count:
        row = pc.index(pc.is_null(keys), True).as_py()
        raise KeyGenerationError(f"{RECORD_KEY_COL} is null in row {row}")
    return keys


__all__ = [
    "OP_DELETE",
    "OP_INSERT",
    "OP_UPDATE_AFTER",
    "OP_UPDATE_BEFORE",
    "MergeOutcome",
    "apply_delete_markers",
    "changelog_rows",
    "merge_file_group",
    "precombine",
]
