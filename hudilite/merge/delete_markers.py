"""Delete markers: which incoming records are deletes (``_hl_delete``).

A record is a delete when the write operation says so (``_hl_delete`` already set) or when
its delete field holds the delete marker (Hudi's ``_hoodie_is_deleted``, or
``hoodie.payload.delete.field`` / ``hoodie.payload.delete.marker``). Both the merge spec
(:meth:`MergeSpec.mark_deletes`) and the merger read the flags through this module, which
sits below both so neither imports the other to get them.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.schema import DELETE_COL, IS_DELETED_COL


def apply_delete_markers(
    table: pa.Table,
    delete_field: str = IS_DELETED_COL,
    marker_value: Any = True,
    cdc: bool = False,
) -> pa.Table:
    """``table`` with ``_hl_delete`` set where ``delete_field`` equals ``marker_value``.

    An existing ``_hl_delete`` is kept (OR-ed), so a DELETE operation's flags
    survive. A missing ``delete_field`` marks nothing. A string marker is
    compared with the value's text, as Hudi's ``hoodie.payload.delete.marker``.
    :meth:`MergeSpec.mark_deletes` applies a spec's field and marker. ``cdc``: the CDC
    payloads' rule (Debezium's ``isDebeziumDeleteRecord``, DMS' ``isDMSDeleteRecord``): the
    marker is compared ignoring case, and a true ``_hoodie_is_deleted`` deletes too.
    """
    flags = delete_flags(table)
    if delete_field in table.column_names:
        column = table[delete_field]
        if isinstance(marker_value, str) and not pa.types.is_string(column.type):
            column = column.cast(pa.string())
        if cdc and isinstance(marker_value, str):
            column, marker_value = pc.utf8_lower(column), marker_value.lower()
        marked = pc.fill_null(pc.equal(column, pa.scalar(marker_value, column.type)), False)
        flags = pc.or_(flags, marked)
    if cdc and delete_field != IS_DELETED_COL and IS_DELETED_COL in table.column_names:
        is_deleted = table[IS_DELETED_COL].cast(pa.bool_())
        flags = pc.or_(flags, pc.fill_null(is_deleted, False))
    return set_column(table, DELETE_COL, as_array(flags))


def delete_flags(table: pa.Table) -> pa.Array:
    """The ``_hl_delete`` flags of ``table`` (nulls and a missing column are False)."""
    if DELETE_COL not in table.column_names:
        return pa.repeat(False, table.num_rows)
    return as_array(pc.fill_null(as_array(table[DELETE_COL]).cast(pa.bool_()), False))


def set_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    """``table`` with column ``name`` replaced in place, or appended when absent."""
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, values)
    return table.append_column(name, values)


def as_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array (chunks combined)."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


__all__ = ["apply_delete_markers", "as_array", "delete_flags", "set_column"]
