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
  when it is null: a null overrides like any value (:func:`_present`).
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
from hudilite.merge.delete_markers import apply_delete_markers as apply_delete_markers
from hudilite.merge.delete_markers import as_array as _as_array
from hudilite.merge.delete_markers import delete_flags as _deletes
from hudilite.merge.spec import MergeSpec, SequenceGroup
from hudilite.schema import (
    CHANGED_COL,
    DELETE_COL,
    FILE_ID_COL,
    META_COLUMNS,
    OPERATION_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.virtual_keys import stored_record_keys

_INTERNAL = (SEQ_COL, DELETE_COL, FILE_ID_COL, CHANGED_COL)
#: Columns a partial update or a sequence group never takes from another record.
_NOT_DATA = frozenset((*META_COLUMNS, OPERATION_COL, *_INTERNAL))

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
    seq = _seq(incoming)
    columns: dict[str, Any] = {"k": keys, "s": seq, "i": _arange(n)}
    sort_keys = [("k", "ascending"), ("s", "ascending"), ("i", "ascending")]
    if spec.event_time:
        order = _spec_ordering(incoming, spec, required=True)
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
    before_live = pc.and_(pc.invert(first), _shift(live))
    updated = _all(is_incoming, before_live, live, fold.touched)
    inserted = _all(is_incoming, pc.invert(before_live), live)
    deleted = _all(is_incoming, before_live, pc.invert(live))
    pos = _arange(n)
    before = pc.or_(updated, deleted)
    after = pc.or_(updated, inserted)
    emitted = pa.table(
        {
            "cause": pa.concat_arrays([pos.filter(before), pos.filter(after)]),
            "after": pa.concat_arrays(
                [pa.repeat(False, _count(before)), pa.repeat(True, _count(after))]
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
) -> tuple[pa.Table, pa.Table, pa.Array, _Fold]:
    """Every key's state (a base row, or nothing) with ``incoming``'s records applied one
    at a time in ``_hl_seq`` order: ``(records, stream, first, fold)`` where ``records``
    are the base rows and records sorted by (key, base row, base before records, write
    order), ``stream`` the sort columns (``k`` key, ``b`` base row or -1, ``o`` 0 base /
    1 record, ``s`` seq, ``src`` position in base+incoming, ``d`` delete), ``first`` marks
    each state's first entry and ``fold`` is :func:`_fold` over them. Each base row of a
    duplicated key is a state of its own (every one of the key's records applies to it).
    """
    if spec.event_time and incoming.num_rows:
        _spec_ordering(incoming, spec, required=True)
    has_base = base is not None and base.num_rows > 0
    parts = [base, incoming] if has_base else [incoming]
    combined = _combine([p for p in parts if p is not None])
    nb = base.num_rows if has_base and base is not None else 0
    ni = incoming.num_rows
    inc_keys = _keys(incoming, spec)
    inc_ref = pa.table({"k": inc_keys, "i": _arange(ni)})
    if nb and base is not None:
        base_keys = _keys(base, spec)
        base_ref = pa.table({"k": base_keys, "b": _arange(nb)})
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
                [_arange(nb), _as_array(pc.fill_null(pairs["b"], -1)).cast(pa.int64())]
            ),
            "o": pa.concat_arrays(
                [pa.repeat(0, nb).cast(pa.int8()), pa.repeat(1, m).cast(pa.int8())]
            ),
            "s": pa.concat_arrays(
                [pa.repeat(-1, nb).cast(pa.int64()), _seq(incoming).take(pair_inc)]
            ),
            "src": pa.concat_arrays([_arange(nb), _as_array(pc.add(pair_inc, nb))]),
            "d": pa.concat_arrays([pa.repeat(False, nb), _deletes(incoming).take(pair_inc)]),
        }
    )
    stream = stream.take(
        pc.sort_indices(stream, sort_keys=[(c, "ascending") for c in ("k", "b", "o", "s", "src")])
    )
    records = combined.take(stream["src"])
    records = records.append_column(SEQ_COL, stream["s"]).append_column(DELETE_COL, stream["d"])
    first = _run_starts(_as_array(stream["k"]), _as_array(stream["b"]))
    fold = _fold(spec, records, first, stored=_as_array(pc.equal(stream["o"], 0)))

    return records, stream, first, fold


def _merge_in_write_order(spec: MergeSpec, base: pa.Table, incoming: pa.Table) -> MergeOutcome:
    """:func:`merge_file_group` applying the records of a key one at a time, in ``_hl_seq``
    order, to its stored row (the fold of :func:`_record_at_a_time`): stored rows first
    (in base order; deleted ones dropped), then the new keys in write order."""
    records, stream, first, fold = _record_at_a_time(spec, base, incoming)
    n = records.num_rows
    last = pa.concat_arrays([_as_array(first).slice(1), pa.array([True])])
    pos = _arange(n)
    is_incoming = _as_array(pc.equal(stream["o"], 1))
    # Did any record of the state's run change it (win, or supply a value)?
    touched = pc.and_(fold.touched, is_incoming).cast(pa.int64())
    segment = _cumcount(_as_array(first))
    flag = _cummax(pc.add(pc.multiply(segment, 2), touched))
    changed = pc.equal(pc.subtract(flag, pc.multiply(segment, 2)), 1).filter(last)
    live = _as_array(fold.live).filter(last)
    stored = _as_array(pc.greater_equal(stream["b"], 0)).filter(last)
    final = pos.filter(last)
    base_row = _as_array(stream["b"]).filter(last)
    kept = _all(stored, live)
    kept_pos = final.filter(kept).take(pc.sort_indices(base_row.filter(kept)))
    kept_changed = _as_array(changed).filter(kept).take(pc.sort_indices(base_row.filter(kept)))
    new = _all(pc.invert(stored), live)
    new_pos = final.filter(new)
    new_seq = _as_array(records[SEQ_COL]).take(new_pos)
    new_pos = new_pos.take(pc.sort_indices(new_seq))
    images = fold.images(pa.concat_arrays([kept_pos, new_pos]))
    images = images.drop_columns([c for c in (SEQ_COL, DELETE_COL) if c in images.column_names])
    flags = pa.concat_arrays([kept_changed, pa.repeat(True, len(new_pos))])
    n_deleted = _count(_all(stored, pc.invert(live)))
    n_updated = _count(kept_changed)
    return MergeOutcome(
        images.append_column(CHANGED_COL, flags),
        inserts=len(new_pos),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=base.num_rows - n_updated - n_deleted,
    )


# --- the fold ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fold:
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


def _fold(
    spec: MergeSpec, table: pa.Table, first: pa.Array, stored: pa.Array | None = None
) -> _Fold:
    """Apply the merge rule record by record; ``table`` is sorted by (key, write order).

    ``first`` marks the first record of every key; ``stored`` the rows that are a
    key's stored state rather than a record (a base row: taken as it is, so its
    groups keep their values even where their ordering value is null). The record-level winner is a
    running maximum of the ordering rank that restarts at every key and every
    natural-order delete (``segment * R + rank`` compared with its cumulative
    maximum; ties go to the later record). A winning delete starts a new
    "epoch": values from before it are gone, and records that lose to it are
    discarded. Partial-update and group values are then chosen inside the
    current epoch with more cumulative maxima (see :func:`_partial_source`,
    :func:`_group_source`).
    """
    n = table.num_rows
    pos = _arange(n)
    deletes = _deletes(table)
    if spec.event_time:
        order = _spec_ordering(table, spec, required=True)
        rank = _rank(order, spec.ordering_field)
        reset = pc.or_(first, pc.and_(deletes, pc.is_null(order)))
    else:
        rank = _zeros(n)
        reset = first
    is_max = _running_max(_cumcount(reset), rank)
    winner = _cummax(pc.if_else(is_max, pos, -1))
    live = pc.invert(deletes.take(winner))
    epoch_flag = pc.or_(first, pc.and_(is_max, deletes))
    epoch = _cumcount(epoch_flag)
    epoch_start = _cummax(pc.if_else(epoch_flag, pos, 0))
    # Records whose values count: live records arriving at a live state (or winning).
    part = pc.and_(pc.invert(deletes), live)
    sources: dict[str, pa.Array] = {}
    grouped = spec.grouped_columns
    if spec.partial_update:
        for name in table.column_names:
            if name not in _NOT_DATA and name not in grouped:
                present = _present(spec, table[name])
                src = _partial_source(present, part, is_max, epoch, epoch_start)
                # No record of the epoch has a value: the winner's own (a null, or the
                # unavailable value when there is nothing to fill it from).
                sources[name] = _as_array(pc.coalesce(src, winner))
    for group in spec.sequence_groups:
        src = _group_source(table, group, part, epoch, epoch_start, stored)
        for name in group.all_columns:
            if name in table.column_names:
                sources[name] = src
    touched = is_max
    for src in sources.values():
        touched = pc.or_(touched, pc.fill_null(pc.equal(src, pos), False))
    # A deleted key shows its delete record as it was written.
    sources = {name: pc.if_else(live, src, winner) for name, src in sources.items()}
    return _Fold(table, winner, live, sources, _as_array(touched))


def _partial_source(
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
    pos = _arange(n)
    valid = pc.and_(part, present)
    last_winner = _cummax(pc.if_else(pc.and_(valid, is_max), pos, -1))
    # First valid position of the epoch so far: a running max of n - position.
    big = n + 1
    offset = pc.multiply(epoch, big)
    distance = pc.subtract(n, pc.if_else(valid, pos, n))
    first_valid = pc.subtract(n, pc.subtract(_cummax(pc.add(offset, distance)), offset))
    src = pc.if_else(
        pc.greater_equal(last_winner, epoch_start),
        last_winner,
        pc.if_else(pc.less(first_valid, n), first_valid, pa.scalar(None, pa.int64())),
    )
    return _as_array(src)


def _group_source(
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
    rank = pc.if_else(valid, _rank(order, group.ordering_field), 0)
    marks = pc.and_(valid, _running_max(epoch, rank))
    src = _cummax(pc.if_else(marks, _arange(n), -1))
    return _as_array(
        pc.if_else(pc.greater_equal(src, epoch_start), src, pa.scalar(None, pa.int64()))
    )


def _precombine_fold(spec: MergeSpec, incoming: pa.Table) -> pa.Table:
    n = incoming.num_rows
    narrow = pa.table({"k": _keys(incoming, spec), "s": _seq(incoming), "i": _arange(n)})
    order = pc.sort_indices(narrow, sort_keys=[(c, "ascending") for c in ("k", "s", "i")])
    records = incoming.take(order)
    keys = _as_array(narrow["k"]).take(order)
    fold = _fold(spec, records, _run_starts(keys))
    return fold.images(pc.indices_nonzero(_last_of_runs(keys)))


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
        inc_order = _spec_ordering(incoming, spec, required=True)
        base_order = _spec_ordering(base, spec, required=False)
        winner_order = inc_order.take(match)
        natural = pc.and_(inc_delete, pc.is_null(inc_order)).take(match)
        base_greater = _greater_nulls_lowest(base_order, winner_order)
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
    base_pos = _arange(nb)
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
            if name in _NOT_DATA or name in grouped:
                continue
            present = _present(spec, combined[name])
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
            takes = _all(
                inc_live,
                pc.is_valid(inc_order),
                pc.invert(_greater_nulls_lowest(order.slice(0, nb), inc_order)),
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
    n_deleted = _count(deleted)
    n_updated = _count(pc.and_(changed, keep))
    return MergeOutcome(
        rows,
        inserts=len(inserted),
        updates=n_updated,
        deletes=n_deleted,
        unchanged_rows=nb - n_updated - n_deleted,
    )


# --- helpers -------------------------------------------------------------------------------


def _present(spec: MergeSpec, column: pa.ChunkedArray | pa.Array) -> pa.Array:
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


def _combine(parts: list[pa.Table]) -> pa.Table:
    """``parts`` concatenated by column name, meta columns first, internal columns dropped."""
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


def _seq(table: pa.Table) -> pa.Array:
    if SEQ_COL not in table.column_names:
        return _arange(table.num_rows)
    return _as_array(pc.fill_null(_as_array(table[SEQ_COL]).cast(pa.int64()), -1))


def _spec_ordering(table: pa.Table, spec: MergeSpec, required: bool) -> pa.Array:
    """The ordering value of each of ``table``'s records under ``spec`` (one sortable array)."""
    if spec.binlog_pos_field is not None:
        files = _ordering(table, spec.ordering_field, required)
        positions = _ordering(table, spec.binlog_pos_field, required)
        return _binlog_pair_order(files, positions, spec.ordering_field, spec.binlog_pos_field)
    return _ordering(table, spec.ordering_field, required, binlog=spec.binlog_seq)


def _ordering(table: pa.Table, field: str | None, required: bool, binlog: bool = False) -> pa.Array:
    if field is not None and field in table.column_names:
        values = _as_array(table[field])
        return _binlog_order(values, field) if binlog else values
    if required:
        raise SchemaError(f"ordering field {field!r} is not in the records")
    # A base file written before the ordering field existed: every stored value is null.
    return pa.nulls(table.num_rows)


def _binlog_order(values: pa.Array, name: str) -> pa.Array:
    """MySQL ``"<file>.<pos>"`` positions as texts that sort like the pair of numbers.

    ``MySqlDebeziumAvroPayload.isCurrentSeqLatest`` compares the file numbers, then the
    positions, as longs ("001.000010" < "2.5"); both become 20-digit zero-padded numbers
    here, so the text order is that order. A null stays null (lowest); text that is not
    two non-negative numbers is refused, naming the value.
    """
    text = values.cast(pa.string())
    parts = pc.split_pattern(text, ".", max_splits=1)
    ok = pc.fill_null(pc.equal(pc.list_value_length(parts), 2), True)
    try:
        if not pc.all(ok).as_py():
            raise ValueError
        file_no = pc.list_element(parts, 0).cast(pa.uint64())
        pos = pc.list_element(parts, 1).cast(pa.uint64())
    except (ValueError, pa.ArrowInvalid):
        bad = [v for v in text.to_pylist() if v is not None and not _is_binlog_seq(v)]
        raise SchemaError(
            f"ordering field {name!r} holds {bad[0]!r}, not a MySQL binlog position "
            "'<file number>.<position>'"
        ) from None

    def padded(arr: pa.Array) -> pa.Array:
        return pc.utf8_lpad(arr.cast(pa.string()), 20, "0")

    return _as_array(pc.binary_join_element_wise(padded(file_no), padded(pos), "."))


def _binlog_pair_order(
    files: pa.Array, positions: pa.Array, file_field: str | None, pos_field: str
) -> pa.Array:
    """(binlog file name, position) pairs as texts that sort like the pairs.

    Hudi 1.1 orders a MySQL Debezium table by ``_event_bin_file,_event_pos``: an
    ``ArrayComparable`` compares the file names as strings, then the positions as longs.
    ``name + NUL + 20-digit position`` sorts the same (NUL sorts below every other character,
    so a name that is a prefix of another sorts first; UTF-8 byte order is Java's string order
    for the ASCII names MySQL gives its binlogs). A record lacking either value is null
    (lowest; Hudi would compare a 0 there); a name holding NUL or a negative or non-integer
    position is refused, naming the value.
    """
    n = len(files)
    if pa.types.is_null(files.type) or pa.types.is_null(positions.type):
        return pa.nulls(n, pa.string())  # a base file written before the fields existed
    if not (pa.types.is_string(files.type) or pa.types.is_large_string(files.type)):
        raise SchemaError(f"ordering field {file_field!r} is {files.type}, not a binlog file name")
    if not pa.types.is_integer(positions.type):
        raise SchemaError(f"ordering field {pos_field!r} is {positions.type}, not a position")
    names = files.cast(pa.string())
    nul = pc.fill_null(pc.match_substring(names, "\x00"), False)
    negative = pc.fill_null(pc.less(positions, 0), False)
    if pc.any(nul).as_py() or pc.any(negative).as_py():
        field, bad = (
            (file_field, names.filter(nul)[0]) if pc.any(nul).as_py()
            else (pos_field, positions.filter(negative)[0])
        )  # fmt: skip
        raise SchemaError(f"ordering field {field!r} holds {bad.as_py()!r}, not a binlog position")
    padded = pc.utf8_lpad(positions.cast(pa.uint64()).cast(pa.string()), 20, "0")
    return _as_array(pc.binary_join_element_wise(names, padded, "\x00"))


def _is_binlog_seq(text: str) -> bool:
    head, dot, tail = text.partition(".")
    return bool(dot) and head.isdigit() and tail.isdigit()


def _rank(values: pa.Array, name: str | None) -> pa.Array:
    """Dense int64 rank of ``values``: null 0, then ascending from 1, NaN greatest."""
    values = _as_array(values)
    if pa.types.is_null(values.type) or len(values) == 0:
        return _zeros(len(values))
    try:
        # The default null placement (at the end) also puts NaN above every number.
        rank = pc.rank(values, sort_keys="ascending", tiebreaker="dense")
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"ordering field {name!r} is not comparable: {exc}") from exc
    return _as_array(pc.if_else(pc.is_valid(values), rank.cast(pa.int64()), 0))


def _running_max(segment: pa.Array, rank: pa.Array) -> pa.Array:
    """Mask of records whose ``rank`` is >= every earlier rank of the same segment.

    ``segment`` is non-decreasing; ``segment * R + rank`` orders every record of
    a later segment above every record of an earlier one, so one cumulative
    maximum over the whole array restarts at each segment.
    """
    if len(rank) == 0:
        return pa.array([], pa.bool_())
    width = (pc.max(rank).as_py() or 0) + 1
    composite = pc.add(pc.multiply(segment, width), rank)
    return _as_array(pc.equal(composite, _cummax(composite)))


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


def _run_starts(*columns: pa.Array) -> pa.Array:
    """Mask of the first element of every run of equal rows over sorted ``columns``."""
    n = len(columns[0])
    if n == 0:
        return pa.array([], pa.bool_())
    differs: Any = pa.repeat(False, n - 1)
    for column in columns:
        column = _as_array(column)
        differs = pc.or_(differs, pc.not_equal(column.slice(1), column.slice(0, n - 1)))
    return pa.concat_arrays([pa.array([True]), _as_array(differs)])


def _shift(mask: pa.Array) -> pa.Array:
    """``mask`` moved one place later (False first)."""
    mask = _as_array(mask)
    if len(mask) == 0:
        return mask
    return pa.concat_arrays([pa.array([False]), mask.slice(0, len(mask) - 1)])


def _all(*masks: Any) -> pa.Array:
    out = masks[0]
    for mask in masks[1:]:
        out = pc.and_(out, mask)
    return _as_array(out)


def _count(mask: Any) -> int:
    return int(pc.sum(mask).as_py() or 0)


def _cummax(values: Any) -> pa.Array:
    return _as_array(pc.cumulative_max(values))


def _cumcount(flags: pa.Array) -> pa.Array:
    """0-based number of the run each element belongs to (runs start where ``flags``)."""
    return _as_array(pc.subtract(pc.cumulative_sum(flags.cast(pa.int64())), 1))


def _zeros(n: int) -> pa.Array:
    return pa.repeat(pa.scalar(0, pa.int64()), n)


def _arange(n: int) -> pa.Array:
    """0..n-1 as int64, built in Arrow (``pa.array(range(n))`` walks Python ints)."""
    if n == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


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
