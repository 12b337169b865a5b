"""Merge-on-read writes of one file group: its changes become a new log file.

Run inside executors like the copy-on-write merge. The incoming records of
the file group are precombined (the same merge function), then written as one
data block (Avro or Parquet) with the surviving records and one delete block
with the deleted keys. Nothing is merged with stored data here: readers and
compaction do that with the same rules.

hudilite never appends to an existing log file; it writes the next log version
instead (Hudi does the same on object stores). A failed write's log file is
therefore a whole file that rollback can simply delete.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.merge import changelog_rows, precombine
from hudilite.read.file_group_reader import decode_slice, read_file_slice
from hudilite.schema import (
    COMMIT_SEQNO_COL,
    COMMIT_TIME_COL,
    DELETE_COL,
    FILE_ID_COL,
    FILE_NAME_COL,
    META_COLUMNS,
    OPERATION_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
)
from hudilite.storage.layout import LogFileName
from hudilite.storage.log_format import (
    DeleteKey,
    LogBlock,
    avro_data_block,
    delete_block,
    ordering_wrapper,
    parquet_data_block,
    write_log_file,
)
from hudilite.virtual_keys import with_stored_keys
from hudilite.write.markers import mark_data_file
from hudilite.write.write_context import (
    STATS_SCHEMA,
    LogTarget,
    WriteContext,
    conform,
    seqnos,
    stats_row,
)


def log_file_name(
    ctx: WriteContext, target: LogTarget, file_id: str, write_token: str
) -> LogFileName:
    """The log file a write creates: v6 names the slice's base instant, v8 the write's own."""
    if ctx.table_version >= 8:
        return LogFileName(file_id, ctx.instant_time, 1, write_token)
    return LogFileName(file_id, target.base_instant, target.next_version, write_token)


def _stamp_records(ctx: WriteContext, rows: pa.Table, file_id: str, task_id: int) -> pa.Table:
    """Log records of this write: meta columns stamped, columns as the storage schema says."""
    n = rows.num_rows
    for col, arr in (
        (COMMIT_TIME_COL, pa.repeat(pa.scalar(ctx.instant_time, pa.string()), n)),
        (COMMIT_SEQNO_COL, seqnos(ctx.instant_time, task_id, 0, n)),
        # Hudi's log records name their file group, not a file.
        (FILE_NAME_COL, pa.repeat(pa.scalar(file_id, pa.string()), n)),
    ):
        rows = rows.set_column(rows.schema.get_field_index(col), col, arr)
    return conform(ctx, rows)


def append_log_file(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    incoming: pa.Table,
    write_token: str,
    task_id: int,
) -> pa.Table:
    """Write the file group's precombined changes as a new log file; returns its stats row."""
    target = ctx.log_targets[(partition_path, file_id)]
    incoming = incoming.drop_columns([c for c in (FILE_ID_COL,) if c in incoming.column_names])
    for col in META_COLUMNS:
        if col not in incoming.column_names:
            incoming = incoming.append_column(col, pa.nulls(incoming.num_rows, pa.string()))
    name = log_file_name(ctx, target, file_id, write_token)
    rendered = name.render()
    rel_path = f"{partition_path}/{rendered}" if partition_path else rendered
    if OPERATION_COL in ctx.storage_schema.names:
        return _append_changes(
            ctx, target, partition_path, file_id, incoming, rel_path, name, task_id
        )
    combined = precombine(ctx.merge_spec, incoming)
    deleted = pc.fill_null(combined[DELETE_COL], False)
    upserts = combined.filter(pc.invert(deleted))
    deletes = combined.filter(deleted)

    blocks = []
    if upserts.num_rows:
        records = _stamp_records(ctx, upserts, file_id, task_id)
        make = parquet_data_block if ctx.log_block_format == "parquet" else avro_data_block
        blocks.append(make(records, ctx.log_schema_json, ctx.instant_time))
    if deletes.num_rows and ctx.merge_spec.binlog_pos_field is not None:
        blocks.append(_binlog_pair_delete_block(ctx, deletes))
    elif deletes.num_rows:
        ordering = ctx.merge_spec.ordering_field
        ordering_type = (
            ctx.storage_schema.field(ordering).type
            if ordering and ordering in ctx.storage_schema.names
            else None
        )
        values = (
            deletes[ordering].to_pylist()
            if ordering and ordering in deletes.column_names
            else [None] * deletes.num_rows
        )
        keys = [
            DeleteKey(k, p, v)
            for k, p, v in zip(
                deletes[RECORD_KEY_COL].to_pylist(),
                deletes[PARTITION_PATH_COL].to_pylist(),
                values,
                strict=True,
            )
        ]
        blocks.append(
            delete_block(keys, ctx.instant_time, ctx.log_schema_json, ordering_type=ordering_type)
        )
    if not blocks:  # nothing to write: no file, and no write stat naming one
        return STATS_SCHEMA.empty_table()
    ctx.check_fail_point("before_file_write")
    mark_data_file(ctx.gw, ctx.instant_time, rel_path, "APPEND")
    size = write_log_file(ctx.gw, rel_path, blocks)
    ctx.check_fail_point("after_file_write")
    return stats_row(
        partition_path=partition_path,
        file_id=file_id,
        path=rel_path,
        prev_commit=target.base_instant,
        num_writes=upserts.num_rows,
        num_inserts=0,
        num_updates=upserts.num_rows,
        num_deletes=deletes.num_rows,
        file_size=size,
        base_file=target.base_file_name or "",
        log_version=name.version,
    )


def _binlog_pair_delete_block(ctx: WriteContext, deletes: pa.Table) -> LogBlock:
    """The delete block of a table ordered by two fields (Hudi 1.1's MySQL Debezium mapping):
    each ordering value is the pair, an ``ArrayWrapper`` of the fields' wrappers, as Hudi's
    ``OrderingValues.create`` and ``wrapValueIntoAvro`` store it."""
    spec = ctx.merge_spec
    fields = (spec.ordering_field, spec.binlog_pos_field)
    schema = ctx.storage_schema
    wrappers = tuple(
        ordering_wrapper(schema.field(f).type) if f in schema.names else None for f in fields
    )
    columns = [
        deletes[f].to_pylist() if f in deletes.column_names else [None] * deletes.num_rows
        for f in fields
    ]
    keys = [
        DeleteKey(k, p, (f, pos), wrappers)
        for k, p, f, pos in zip(
            deletes[RECORD_KEY_COL].to_pylist(),
            deletes[PARTITION_PATH_COL].to_pylist(),
            *columns,
            strict=True,
        )
    ]
    return delete_block(keys, ctx.instant_time, ctx.log_schema_json)


def _append_changes(
    ctx: WriteContext,
    target: LogTarget,
    partition_path: str,
    file_id: str,
    incoming: pa.Table,
    rel_path: str,
    name: LogFileName,
    task_id: int,
) -> pa.Table:
    """Changelog mode: every change of every key (``I``, ``-U``/``U``, ``D``) in one data block.

    The stored state of the incoming keys is merged from the current slice first, so
    updates carry their before image (``-U``) and deletes the row they remove.
    """
    fs = decode_slice(ctx.slice_descriptors[(partition_path, file_id)])
    current = read_file_slice(
        ctx.gw,
        fs,
        merge_spec=ctx.merge_spec,
        schema=ctx.storage_schema,
        is_instant_visible=ctx.visible_instants.__contains__,
    )
    keys = incoming[RECORD_KEY_COL].combine_chunks()
    if ctx.merge_spec.virtual_keys is not None:  # rows stored without meta fields
        current = with_stored_keys(current, ctx.merge_spec.virtual_keys, partition_path)
    stored = current.filter(pc.is_in(current[RECORD_KEY_COL], value_set=keys))
    changes = changelog_rows(ctx.merge_spec, stored if stored.num_rows else None, incoming)
    n = changes.num_rows
    if n == 0:  # every record lost to the stored state: nothing changed, nothing to write
        return STATS_SCHEMA.empty_table()
    ops = changes[OPERATION_COL].to_pylist()
    records = _stamp_records(ctx, changes, file_id, task_id)
    make = parquet_data_block if ctx.log_block_format == "parquet" else avro_data_block
    blocks = [make(records, ctx.log_schema_json, ctx.instant_time)]
    gone = records.filter(pc.equal(records[OPERATION_COL], "D"))
    if gone.num_rows:
        # Readers that do not know changelog operations (hudi-rs) still see the deletes.
        keys = [
            DeleteKey(k, p, None)
            for k, p in zip(
                gone[RECORD_KEY_COL].to_pylist(), gone[PARTITION_PATH_COL].to_pylist(), strict=True
            )
        ]
        blocks.append(delete_block(keys, ctx.instant_time, ctx.log_schema_json))
    ctx.check_fail_point("before_file_write")
    mark_data_file(ctx.gw, ctx.instant_time, rel_path, "APPEND")
    size = write_log_file(ctx.gw, rel_path, blocks)
    ctx.check_fail_point("after_file_write")
    return stats_row(
        partition_path=partition_path,
        file_id=file_id,
        path=rel_path,
        prev_commit=target.base_instant,
        num_writes=n,
        num_inserts=ops.count("I"),
        num_updates=ops.count("U"),
        num_deletes=ops.count("D"),
        file_size=size,
        base_file=target.base_file_name or "",
        log_version=name.version,
    )
