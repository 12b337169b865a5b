"""Ordering values and the Arrow run and mask helpers of the merge (:mod:`hudilite.merge.merger`).

Hudi decides which of two records of a key wins by their ordering (precombine) values:
nulls lowest, NaN above every number, MySQL binlog positions as the pair of numbers they
stand for. The functions here turn a batch's ordering column into one sortable array
(:func:`spec_ordering`), rank and compare such arrays, and find runs of equal keys in
sorted arrays, all with Arrow compute kernels (no per-record Python).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import SchemaError
from hudilite.merge.delete_markers import as_array as _as_array
from hudilite.merge.spec import MergeSpec
from hudilite.schema import SEQ_COL


def seq_numbers(table: pa.Table) -> pa.Array:
    if SEQ_COL not in table.column_names:
        return arange(table.num_rows)
    return _as_array(pc.fill_null(_as_array(table[SEQ_COL]).cast(pa.int64()), -1))


def spec_ordering(table: pa.Table, spec: MergeSpec, required: bool) -> pa.Array:
    """The ordering value of each of ``table``'s records under ``spec`` (one sortable array)."""
    if spec.binlog_pos_field is not None:
        files = ordering_values(table, spec.ordering_field, required)
        positions = ordering_values(table, spec.binlog_pos_field, required)
        return binlog_pair_order(files, positions, spec.ordering_field, spec.binlog_pos_field)
    return ordering_values(table, spec.ordering_field, required, binlog=spec.binlog_seq)


def ordering_values(
    table: pa.Table, field: str | None, required: bool, binlog: bool = False
) -> pa.Array:
    if field is not None and field in table.column_names:
        values = _as_array(table[field])
        return binlog_order(values, field) if binlog else values
    if required:
        raise SchemaError(f"ordering field {field!r} is not in the records")
    # A base file written before the ordering field existed: every stored value is null.
    return pa.nulls(table.num_rows)


def binlog_order(values: pa.Array, name: str) -> pa.Array:
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
        bad = [v for v in text.to_pylist() if v is not None and not is_binlog_seq(v)]
        raise SchemaError(
            f"ordering field {name!r} holds {bad[0]!r}, not a MySQL binlog position "
            "'<file number>.<position>'"
        ) from None

    def padded(arr: pa.Array) -> pa.Array:
        return pc.utf8_lpad(arr.cast(pa.string()), 20, "0")

    return _as_array(pc.binary_join_element_wise(padded(file_no), padded(pos), "."))


def binlog_pair_order(
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


def is_binlog_seq(text: str) -> bool:
    head, dot, tail = text.partition(".")
    return bool(dot) and head.isdigit() and tail.isdigit()


def rank(values: pa.Array, name: str | None) -> pa.Array:
    """Dense int64 rank of ``values``: null 0, then ascending from 1, NaN greatest."""
    values = _as_array(values)
    if pa.types.is_null(values.type) or len(values) == 0:
        return zeros(len(values))
    try:
        # The default null placement (at the end) also puts NaN above every number.
        rank = pc.rank(values, sort_keys="ascending", tiebreaker="dense")
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"ordering field {name!r} is not comparable: {exc}") from exc
    return _as_array(pc.if_else(pc.is_valid(values), rank.cast(pa.int64()), 0))


def running_max(segment: pa.Array, rank: pa.Array) -> pa.Array:
    """Mask of records whose ``rank`` is >= every earlier rank of the same segment.

    ``segment`` is non-decreasing; ``segment * R + rank`` orders every record of
    a later segment above every record of an earlier one, so one cumulative
    maximum over the whole array restarts at each segment.
    """
    if len(rank) == 0:
        return pa.array([], pa.bool_())
    width = (pc.max(rank).as_py() or 0) + 1
    composite = pc.add(pc.multiply(segment, width), rank)
    return _as_array(pc.equal(composite, cummax(composite)))


def after_last_natural_delete(
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


def greater_nulls_lowest(a: pa.Array, b: pa.Array) -> pa.Array:
    """Element-wise ``a > b`` where null is below every value and NaN above every number."""
    if a.type != b.type:
        if pa.types.is_null(a.type):
            a = a.cast(b.type)
        elif pa.types.is_null(b.type):
            b = b.cast(a.type)
        else:
            common = common_type(a.type, b.type)
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


def common_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    try:
        schema = pa.unify_schemas(
            [pa.schema([("o", a)]), pa.schema([("o", b)])], promote_options="permissive"
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"ordering values of types {a} and {b} cannot be compared") from exc
    return schema.field("o").type


def last_of_runs(sorted_keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Mask of the last element of every run of equal values in a sorted array."""
    keys = _as_array(sorted_keys)
    n = len(keys)
    if n == 0:
        return pa.array([], pa.bool_())
    differs = pc.not_equal(keys.slice(0, n - 1), keys.slice(1))
    return pa.concat_arrays([_as_array(differs), pa.array([True])])


def run_starts(*columns: pa.Array) -> pa.Array:
    """Mask of the first element of every run of equal rows over sorted ``columns``."""
    n = len(columns[0])
    if n == 0:
        return pa.array([], pa.bool_())
    differs: Any = pa.repeat(False, n - 1)
    for column in columns:
        column = _as_array(column)
        differs = pc.or_(differs, pc.not_equal(column.slice(1), column.slice(0, n - 1)))
    return pa.concat_arrays([pa.array([True]), _as_array(differs)])


def shift(mask: pa.Array) -> pa.Array:
    """``mask`` moved one place later (False first)."""
    mask = _as_array(mask)
    if len(mask) == 0:
        return mask
    return pa.concat_arrays([pa.array([False]), mask.slice(0, len(mask) - 1)])


def all_of(*masks: Any) -> pa.Array:
    out = masks[0]
    for mask in masks[1:]:
        out = pc.and_(out, mask)
    return _as_array(out)


def count_true(mask: Any) -> int:
    return int(pc.sum(mask).as_py() or 0)


def cummax(values: Any) -> pa.Array:
    return _as_array(pc.cumulative_max(values))


def cumcount(flags: pa.Array) -> pa.Array:
    """0-based number of the run each element belongs to (runs start where ``flags``)."""
    return _as_array(pc.subtract(pc.cumulative_sum(flags.cast(pa.int64())), 1))


def zeros(n: int) -> pa.Array:
    return pa.repeat(pa.scalar(0, pa.int64()), n)


def arange(n: int) -> pa.Array:
    """0..n-1 as int64, built in Arrow (``pa.array(range(n))`` walks Python ints)."""
    if n == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


__all__ = [
    "after_last_natural_delete",
    "all_of",
    "arange",
    "binlog_order",
    "binlog_pair_order",
    "common_type",
    "count_true",
    "cumcount",
    "cummax",
    "greater_nulls_lowest",
    "is_binlog_seq",
    "last_of_runs",
    "ordering_values",
    "rank",
    "run_starts",
    "running_max",
    "seq_numbers",
    "shift",
    "spec_ordering",
    "zeros",
]
