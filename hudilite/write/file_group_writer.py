"""The per-file-group work of a write, run inside Spark executors.

Everything here is plain pyarrow: the Spark bridge groups the keyed incoming
records by file group and calls :func:`write_file_group` once per group; it
returns one small stats row that the driver turns into a Hudi write stat.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.merge import merge_file_group, precombine
from hudilite.schema import (
    CHANGED_COL,
    COMMIT_SEQNO_COL,
    COMMIT_TIME_COL,
    DELETE_COL,
    FILE_ID_COL,
    FILE_NAME_COL,
    META_COLUMNS,
    OPERATION_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.storage.bloom_filter import BloomFilter
from hudilite.storage.layout import BaseFileName
from hudilite.storage.parquet_io import (
    BaseFileWriter,
    read_base_file,
    read_base_file_and_filter,
    write_base_file,
)
from hudilite.virtual_keys import stored_record_keys
from hudilite.write.log_writer import append_log_file
from hudilite.write.markers import mark_data_file
from hudilite.write.write_context import STATS_SCHEMA as STATS_SCHEMA  # re-exported
from hudilite.write.write_context import ExistingFile as ExistingFile
from hudilite.write.write_context import LogTarget as LogTarget
from hudilite.write.write_context import WriteContext as WriteContext
from hudilite.write.write_context import conform, seqnos, stats_row
from hudilite.write.write_context import write_stat_from_row as write_stat_from_row


def _fill_meta(
    ctx: WriteContext,
    table: pa.Table,
    changed: pa.Array,
    file_name: str,
    task_id: int,
    existed: pa.Array | None = None,
) -> pa.Table:
    """Stamp the meta columns of changed rows; untouched rows keep their commit time and seqno."""
    n = table.num_rows
    instant = pa.scalar(ctx.instant_time, pa.string())
    commit_time = pc.if_else(changed, instant, table[COMMIT_TIME_COL])
    seqno = pc.if_else(changed, seqnos(ctx.instant_time, task_id, 0, n), table[COMMIT_SEQNO_COL])
    names = pa.repeat(pa.scalar(file_name, pa.string()), n)
    for col, arr in (
        (COMMIT_TIME_COL, commit_time),
        (COMMIT_SEQNO_COL, seqno),
        (FILE_NAME_COL, names),
    ):
        table = table.set_column(table.schema.get_field_index(col), col, arr)
    if OPERATION_COL in ctx.storage_schema.names:
        # Changelog tables: a changed row is an insert (I) unless its key was stored (U).
        stored = existed if existed is not None else pa.repeat(False, n)
        op = pc.if_else(stored, pa.scalar("U"), pa.scalar("I"))
        previous = (
            table[OPERATION_COL]
            if OPERATION_COL in table.column_names
            else pa.nulls(n, pa.string())
        )
        op = pc.if_else(changed, op, previous)
        if OPERATION_COL in table.column_names:
            table = table.set_column(table.schema.get_field_index(OPERATION_COL), OPERATION_COL, op)
        else:
            table = table.append_column(OPERATION_COL, op)
    return table


def _align_types(ctx: WriteContext, incoming: pa.Table) -> pa.Table:
    """``incoming``'s table columns cast to the storage schema's types.

    Spark hands Arrow timestamps over in the session time zone
    (``spark.sql.session.timeZone``); stored files say UTC. Same instants, but Arrow will
    not merge the two types, so incoming rows take the stored types first.
    """
    types = {f.name: f.type for f in ctx.storage_schema}
    for i, name in enumerate(incoming.column_names):
        want = types.get(name)
        if want is not None and incoming.schema.field(i).type != want:
            incoming = incoming.set_column(i, name, incoming.column(i).cast(want))
    return incoming


def write_file_group(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    incoming: pa.Table,
    write_token: str,
    task_id: int,
) -> pa.Table:
    """Merge ``incoming`` into the file group's current base file and write the new version.

    ``incoming`` carries the data columns plus ``_hoodie_record_key``,
    ``_hoodie_partition_path``, ``_hl_seq`` and ``_hl_delete``. The new base file is
    written even when every record was deleted (an empty file), because the
    latest slice must stop showing the deleted rows.
    """
    incoming = _align_types(ctx, incoming)
    if (partition_path, file_id) in ctx.log_targets:
        return append_log_file(ctx, partition_path, file_id, incoming, write_token, task_id)
    existing = ctx.existing.get((partition_path, file_id))
    incoming = incoming.drop_columns([c for c in (FILE_ID_COL,) if c in incoming.column_names])
    for col in META_COLUMNS:
        if col not in incoming.column_names:
            incoming = incoming.append_column(col, pa.nulls(incoming.num_rows, pa.string()))
    if ctx.operation in ("insert", "bulk_insert"):
        # Inserts keep duplicates of a key as Hudi's insert does; upserts, deletes and
        # overwrites combine records by key first.
        records = incoming.filter(pc.invert(incoming[DELETE_COL]))
        base, stored = _read_base(ctx, existing)
        data = records.drop_columns([SEQ_COL, DELETE_COL])
        data = data.append_column(CHANGED_COL, pa.array([True] * data.num_rows))
        if base is not None:
            base = base.append_column(CHANGED_COL, pa.array([False] * base.num_rows))
            data = pa.concat_tables([_conform_with_flag(ctx, base), _conform_with_flag(ctx, data)])
        else:
            data = _conform_with_flag(ctx, data)
        inserts, updates, deletes = records.num_rows, 0, 0
    else:
        combined = precombine(ctx.merge_spec, incoming)
        base, stored = _read_base(ctx, existing)
        outcome = merge_file_group(ctx.merge_spec, base, combined)
        data = _conform_with_flag(ctx, outcome.table)
        inserts, updates, deletes = outcome.inserts, outcome.updates, outcome.deletes
    ctx.check_fail_point("before_file_write")
    file_name = BaseFileName(file_id, write_token, ctx.instant_time).render()
    rel_path = f"{partition_path}/{file_name}" if partition_path else file_name
    changed = data[CHANGED_COL].combine_chunks() if data.num_rows else pa.array([], pa.bool_())
    virtual = ctx.merge_spec.virtual_keys  # a table without meta fields
    existed = (
        pc.is_in(stored_record_keys(data, virtual), value_set=stored_record_keys(base, virtual))
        if base is not None and base.num_rows and data.num_rows
        else None
    )
    table = _fill_meta(ctx, data.drop_columns([CHANGED_COL]), changed, file_name, task_id, existed)
    mark_data_file(ctx.gw, ctx.instant_time, rel_path, "MERGE" if existing else "CREATE")
    # The old file's filter already holds the keys it stored: only the others are hashed
    # (30 hashes a key with Hudi's defaults, a third of a merge's time otherwise).
    seed = ctx.bloom.resume(stored) if ctx.bloom is not None and stored is not None else None
    size = write_base_file(
        ctx.gw,
        rel_path,
        conform(ctx, table),
        bloom=ctx.bloom,
        bloom_seed=seed,
        known=existed if seed is not None else None,
    )
    ctx.check_fail_point("after_file_write")
    return stats_row(
        partition_path=partition_path,
        file_id=file_id,
        path=rel_path,
        prev_commit=existing.instant_time if existing else "null",
        num_writes=table.num_rows,
        num_inserts=inserts,
        num_updates=updates,
        num_deletes=deletes,
        file_size=size,
    )


def _read_base(
    ctx: WriteContext, existing: ExistingFile | None
) -> tuple[pa.Table | None, BloomFilter | None]:
    """The file group's current base file and its bloom filter (None, None without one)."""
    if existing is None:
        return None, None
    if ctx.bloom is None:
        return read_base_file(ctx.gw, existing.rel_path), None
    return read_base_file_and_filter(ctx.gw, existing.rel_path)


def _conform_with_flag(ctx: WriteContext, table: pa.Table) -> pa.Table:
    """Conform to the storage schema, keeping the ``_hl_changed`` flag column last."""
    flag = table[CHANGED_COL]
    return conform(ctx, table).append_column(CHANGED_COL, flag)


def bulk_write_partition_stream(
    ctx: WriteContext,
    batches: Any,
    write_token_for: Any,
    task_id: int,
    new_file_id: Any,
) -> list[pa.Table]:
    """Write a stream of keyed batches sorted by partition path into new file groups.

    Rolls over to a new file group when the partition path changes or the
    current file reaches ``ctx.max_file_size``. Used by ``bulk_insert``, which
    skips the index. Returns one stats row per file written.
    """
    stats: list[pa.Table] = []
    writer: BaseFileWriter | None = None
    current: tuple[str, str, str] | None = None  # (partition, file_id, rel_path)
    rows = 0

    def close() -> None:
        nonlocal writer, current, rows
        if writer is None or current is None:
            return
        size, num_rows, _min_key, _max_key = writer.close()
        stats.append(
            stats_row(
                partition_path=current[0],
                file_id=current[1],
                path=current[2],
                prev_commit="null",
                num_writes=num_rows,
                num_inserts=num_rows,
                num_updates=0,
                num_deletes=0,
                file_size=size,
            )
        )
        writer, current, rows = None, None, 0

    seq = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        table = pa.Table.from_batches([batch])
        # The stream is sorted by partition path: split the batch into runs of one path.
        runs = pc.run_end_encode(table[PARTITION_PATH_COL].combine_chunks())
        ends = runs.run_ends.to_pylist()
        values = runs.values.to_pylist()
        for start, stop, partition in zip([0, *ends[:-1]], ends, values, strict=True):
            run = table.slice(start, stop - start)
            if (
                current is None
                or current[0] != partition
                or writer is None
                or (writer.bytes_written >= ctx.max_file_size)
            ):
                close()
                fid = new_file_id()
                name = BaseFileName(fid, write_token_for(), ctx.instant_time).render()
                rel = f"{partition}/{name}" if partition else name
                mark_data_file(ctx.gw, ctx.instant_time, rel, "CREATE")
                writer = BaseFileWriter(ctx.gw, rel, ctx.storage_schema, bloom=ctx.bloom)
                current = (partition, fid, rel)
            assert writer is not None and current is not None
            n = run.num_rows
            for col in META_COLUMNS:
                if col not in run.column_names:
                    run = run.append_column(col, pa.nulls(n, pa.string()))
            run = run.set_column(
                run.schema.get_field_index(COMMIT_TIME_COL),
                COMMIT_TIME_COL,
                pa.repeat(pa.scalar(ctx.instant_time, pa.string()), n),
            )
            run = run.set_column(
                run.schema.get_field_index(COMMIT_SEQNO_COL),
                COMMIT_SEQNO_COL,
                seqnos(ctx.instant_time, task_id, seq, n),
            )
            seq += n
            run = run.set_column(
                run.schema.get_field_index(FILE_NAME_COL),
                FILE_NAME_COL,
                pa.repeat(pa.scalar(current[2].rsplit("/", 1)[-1], pa.string()), n),
            )
            if OPERATION_COL in ctx.storage_schema.names:
                run = run.append_column(OPERATION_COL, pa.repeat(pa.scalar("I"), n))
            writer.write(conform(ctx, run))
            rows += n
    ctx.check_fail_point("before_file_write")
    close()
    ctx.check_fail_point("after_file_write")
    return stats


__all__ = [
    "RECORD_KEY_COL",
    "STATS_SCHEMA",
    "ExistingFile",
    "WriteContext",
    "bulk_write_partition_stream",
    "write_file_group",
]
