"""Keying incoming records: record key, partition path, write order and delete flag.

Runs per Arrow batch inside executors (``mapInArrow``); the same function
serves pyarrow-only callers. The key generator itself lives in
:mod:`hudilite.keygen`; this module adds the internal columns the write path
carries until the file-group writer drops them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.auto_keys import ROW_BITS, STORED_KEY_COL, pending_keys, stored_keys
from hudilite.keygen import KeyGenSpec, partition_paths, record_keys
from hudilite.merge.delete_markers import apply_delete_markers, as_array
from hudilite.schema import (
    DELETE_COL,
    IS_DELETED_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)

# Bits reserved for the row number inside one input partition; the Spark
# partition id goes above them so write order is total across partitions.
SEQ_PARTITION_SHIFT = ROW_BITS  # 33, as Spark's monotonically_increasing_id


@dataclass(frozen=True)
class KeyingSpec:
    """How to key one write's records."""

    keygen: KeyGenSpec
    delete_all: bool = False  # the ``delete`` operation: every record is a delete
    delete_field: str = IS_DELETED_COL
    delete_marker: str | None = (
        None  # value of ``delete_field`` meaning deleted (None: boolean true)
    )
    # A CDC payload's rule: the marker ignores case and ``_hoodie_is_deleted`` deletes too.
    cdc_deletes: bool = False


def keyed_schema(schema: pa.Schema) -> pa.Schema:
    """The schema of a keyed batch: the input columns plus the four write-path columns."""
    return (
        schema.append(pa.field(RECORD_KEY_COL, pa.string(), nullable=False))
        .append(pa.field(PARTITION_PATH_COL, pa.string(), nullable=False))
        .append(pa.field(SEQ_COL, pa.int64(), nullable=False))
        .append(pa.field(DELETE_COL, pa.bool_(), nullable=False))
    )


def delete_flags(spec: KeyingSpec, batch: pa.RecordBatch | pa.Table) -> pa.Array:
    """Which rows are deletes: the whole batch for ``delete``, else the delete-marker column."""
    n = batch.num_rows
    if spec.delete_all:
        return pa.array([True] * n, pa.bool_())
    if spec.cdc_deletes:
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        marked = apply_delete_markers(table, spec.delete_field, spec.delete_marker, cdc=True)
        return as_array(marked[DELETE_COL])
    if spec.delete_field not in batch.schema.names:
        return pa.array([False] * n, pa.bool_())
    column = batch.column(batch.schema.get_field_index(spec.delete_field))
    if spec.delete_marker is None:
        flags = pc.cast(column, pa.bool_()) if column.type != pa.bool_() else column
    else:
        flags = pc.equal(pc.cast(column, pa.string()), pa.scalar(spec.delete_marker))
    return pc.fill_null(flags, False)


def key_batch(spec: KeyingSpec, batch: pa.RecordBatch, seq_start: int) -> pa.RecordBatch:
    """Return ``batch`` plus record key, partition path, ``_hl_seq`` and ``_hl_delete``."""
    n = batch.num_rows
    seq = pa.array(range(seq_start, seq_start + n), pa.int64())
    if spec.keygen.record_key_fields:
        keys = record_keys(spec.keygen, batch)
    elif STORED_KEY_COL in batch.schema.names:  # a keyless table's rows read back (UPDATE)
        keys = stored_keys(batch, pending_keys(seq))
    else:  # a keyless table's new records: completed with the instant when written
        keys = pending_keys(seq)
    parts = partition_paths(spec.keygen, batch)
    flags = delete_flags(spec, batch)
    arrays = [*batch.columns, keys, parts, seq, flags]
    return pa.RecordBatch.from_arrays(arrays, schema=keyed_schema(batch.schema))
