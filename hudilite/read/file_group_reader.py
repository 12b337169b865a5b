"""Reading one merge-on-read file slice: its base file merged with its log blocks.

A file slice is an optional base file plus log files (``hudilite.filegroup.slices``).
:func:`read_file_slice` returns the rows a snapshot read sees for it, as Hudi's merged
log record scanner does (``docs/dev/hudi-format.md`` §5-7):

1. the base file's rows, as stored (meta columns untouched);
2. the log blocks, log files in slice order and blocks in file order, keeping only

   * blocks that are not CORRUPT (undecodable or truncated blocks, e.g. a write that
     died mid-block, are skipped as Hudi's reader skips them) -- but a CORRUPT region
     inside the bytes a completed commit recorded writing (``LogFile.committed``) is
     lost committed data and raises :class:`CorruptFileError` naming the file;
   * blocks not newer than the read instant ``as_of`` (any block type);
   * data and delete blocks whose INSTANT_TIME is visible to the read
     (``is_instant_visible``: completed, or older than the active timeline; blocks of
     pending or failed writes are skipped);

   a rollback command block (COMMAND, COMMAND_BLOCK_TYPE ``"0"``; not subject to the
   visibility check, its INSTANT_TIME need not be a completed instant) drops the blocks read
   before it whose INSTANT_TIME equals its TARGET_INSTANT_TIME (Hudi's log scanner);
3. the records of the kept blocks are the writes after the base file, in block order:
   they get increasing ``_hl_seq`` values and are merged into the base rows with
   :func:`hudilite.merge.merge_file_group` under the table's :class:`MergeSpec` -- the
   same function that serves precombine, COW merges and compaction, so the rules live in
   one place. Delete blocks become delete records (``_hl_delete=True``) carrying their
   ordering value in the ordering column; a "natural order" delete (no ordering value, or
   the ``IntWrapper(0)`` Hudi writes for SQL deletes) has a null ordering value and so
   always wins, while an event-time delete loses to a stored record with a greater
   ordering value. Data records carrying the spec's delete marker
   (:meth:`MergeSpec.mark_deletes`, ``_hoodie_is_deleted = true`` by default) are deletes
   too. Partial updates and sequence groups are the merge module's business as well.

Log records carry their own meta columns (``_hoodie_commit_time`` of the delta commit,
``_hoodie_file_name`` = the file id, ...): the output keeps them as they are, like Hudi.
Every part is conformed to the requested ``schema`` before merging (columns missing from
an older block or base file are null, types are cast), so schema evolution between the
base file and later blocks is harmless.

Also here: :func:`encode_slice` / :func:`decode_slice`, the text form of a slice that
Spark jobs ship to executors (one descriptor per row of a small DataFrame).
No pyspark in this module.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import CorruptFileError, MissingFileError, SchemaError
from hudilite.filegroup.slices import FileSlice, LogFile
from hudilite.merge import MergeSpec, merge_file_group
from hudilite.schema import (
    COMMIT_TIME_COL,
    DELETE_COL,
    OPERATION_COL,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.log_format import (
    BlockType,
    DeleteKey,
    LogBlock,
    block_deletes,
    block_records,
    is_natural_order,
    read_log_positions,
)
from hudilite.storage.parquet_io import read_base_file

_T = TypeVar("_T")

# ----------------------------------------------------------------------------- the reader


def read_file_slice(
    gw: FileSystemGateway,
    slice: FileSlice,  # the contract's name (shadows the builtin inside this function only)
    *,
    merge_spec: MergeSpec,
    schema: pa.Schema,
    is_instant_visible: Callable[[str], bool],
    as_of: str | None = None,
    commit_times: Collection[str] | None = None,
) -> pa.Table:
    """The rows of ``slice`` as a snapshot read sees them: base file merged with the logs.

    ``schema`` is the output schema (meta columns then data columns, e.g.
    ``TableState.storage_schema``); every row comes back in it, in no particular order.
    ``is_instant_visible(instant)`` says whether a data/delete block written by
    ``instant`` belongs to the read (``ScanPlan.is_instant_visible``); ``as_of`` is the
    read instant (blocks newer than it are skipped), None for the latest.

    ``commit_times`` (incremental reads, ``ScanPlan.commit_times``) restricts the merge to
    the commits of the range: only base rows whose ``_hoodie_commit_time`` is in it and
    only log blocks written by them take part, as in Hudi's and hudi-rs's incremental
    merge-on-read reads. (So a log record that loses to a stored record written before the
    range is still returned: the stored record is not part of the read.) The caller still
    filters the output rows by commit time.
    Raises :class:`CorruptFileError` for an unreadable base file and :class:`SchemaError`
    when records cannot be cast to ``schema``.
    """
    file_slice = slice
    base: pa.Table | None = None
    if file_slice.base_file is not None:
        stored = _read(read_base_file, gw, file_slice.base_file.path)
        base = conform(stored, schema, where=file_slice.base_file.path)
    visible = is_instant_visible
    if commit_times is not None:
        in_range = frozenset(commit_times)
        if base is not None:
            times = pa.array(sorted(in_range), pa.string())
            base = base.filter(pc.is_in(base[COMMIT_TIME_COL], value_set=times))
        visible = _restricted(is_instant_visible, in_range)
    blocks = scan_log_blocks(gw, file_slice.log_files, is_instant_visible=visible, as_of=as_of)
    incoming = log_records(blocks, merge_spec=merge_spec, schema=schema)
    if incoming is None:
        return base if base is not None else schema.empty_table()
    outcome = merge_file_group(merge_spec, base, incoming)
    return conform(outcome.table, schema, where=_describe(file_slice))


def scan_log_blocks(
    gw: FileSystemGateway,
    log_files: Iterable[LogFile],
    *,
    is_instant_visible: Callable[[str], bool],
    as_of: str | None = None,
) -> list[LogBlock]:
    """The data and delete blocks of ``log_files`` a read applies, in apply order.

    See the module docstring for which blocks are kept; command blocks are consumed here
    (rollbacks drop the earlier blocks of their target instant) and not returned.
    """
    kept: list[LogBlock] = []
    for log in log_files:
        for offset, block in _read(read_log_positions, gw, log.path):
            if block.block_type == BlockType.CORRUPT:
                _check_uncommitted(gw, log, offset, offset + len(block.content))
                continue
            instant = block.instant_time
            if instant is None:
                continue  # Hudi writes INSTANT_TIME on every block; without it, unusable
            if as_of is not None and instant > as_of:
                continue
            if block.is_rollback:
                target = block.target_instant_time
                kept = [b for b in kept if b.instant_time != target]
                continue
            if not block.is_data and block.block_type != BlockType.DELETE:
                continue  # other commands, HFILE (metadata table), CDC: no table records
            if not is_instant_visible(instant):
                continue
            kept.append(block)
    return kept


def log_records(
    blocks: Sequence[LogBlock], *, merge_spec: MergeSpec, schema: pa.Schema
) -> pa.Table | None:
    """The records of ``blocks`` as one table for the merge, or None when there are none.

    Columns: ``schema``'s plus ``_hl_seq`` (increasing in block order, then row order) and
    ``_hl_delete`` (delete blocks, and data records with the spec's delete marker).
    """
    parts: list[pa.Table] = []
    seq = 0
    for block in blocks:
        if block.block_type == BlockType.DELETE:
            part = _delete_rows(block_deletes(block), merge_spec, schema)
        else:
            part = _apply_operations(merge_spec.mark_deletes(block_records(block)))
        if part.num_rows == 0:
            continue
        part = _with_seq(part, seq)
        seq += part.num_rows
        where = f"{block.block_type.name} block of instant {block.instant_time}"
        parts.append(conform(part, schema, keep=(SEQ_COL, DELETE_COL), where=where))
    if not parts:
        return None
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _apply_operations(part: pa.Table) -> pa.Table:
    """Changelog records: before images (``-U``) are not state, ``D`` rows are deletes."""
    if OPERATION_COL not in part.column_names:
        return part
    op = pc.fill_null(part[OPERATION_COL], "")
    part = part.filter(pc.not_equal(op, "-U"))
    is_d = pc.equal(pc.fill_null(part[OPERATION_COL], ""), "D")
    flags = (
        pc.or_(pc.fill_null(part[DELETE_COL], False), is_d)
        if DELETE_COL in part.column_names
        else is_d
    )
    if DELETE_COL in part.column_names:
        return part.set_column(part.schema.get_field_index(DELETE_COL), DELETE_COL, flags)
    return part.append_column(DELETE_COL, flags)


def read_slice_changes(
    gw: FileSystemGateway,
    slice: FileSlice,
    *,
    schema: pa.Schema,
    is_instant_visible: Callable[[str], bool],
    commit_times: Collection[str],
) -> pa.Table:
    """Every change of a changelog table's slice in ``commit_times``, unmerged.

    Base rows written by those commits and every log record they wrote (``I``, ``-U``,
    ``U``, ``D`` rows, in write order): an incremental read of a changelog table
    returns each intermediate change, not the merged state.
    """
    in_range = frozenset(commit_times)
    parts: list[pa.Table] = []
    if slice.base_file is not None:
        base = conform(read_base_file(gw, slice.base_file.path), schema, where=slice.base_file.path)
        times = pa.array(sorted(in_range), pa.string())
        parts.append(base.filter(pc.is_in(base[COMMIT_TIME_COL], value_set=times)))
    visible = _restricted(is_instant_visible, in_range)
    for block in scan_log_blocks(gw, slice.log_files, is_instant_visible=visible):
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            where = f"{block.block_type.name} block of instant {block.instant_time}"
            parts.append(conform(block_records(block), schema, where=where))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def _restricted(visible: Callable[[str], bool], instants: frozenset[str]) -> Callable[[str], bool]:
    def check(instant: str) -> bool:
        return instant in instants and visible(instant)

    return check


def _read(reader: Callable[[FileSystemGateway, str], _T], gw: FileSystemGateway, path: str) -> _T:
    """``reader(gw, path)``, a vanished file reported as :class:`MissingFileError` naming it
    (the plan listed it: it went away since, and its rows must not silently go too)."""
    try:
        return reader(gw, path)
    except FileNotFoundError as exc:
        raise MissingFileError(f"data file {gw.abs_path(path)} is missing: {exc}") from exc
    except OSError as exc:
        raise CorruptFileError(f"data file {gw.abs_path(path)} is unreadable: {exc}") from exc


def _check_uncommitted(gw: FileSystemGateway, log: LogFile, start: int, end: int) -> None:
    """A damaged region ``[start, end)`` of ``log`` may be skipped only when no completed
    commit recorded writing those bytes (the torn tail of a failed append, which Hudi's
    reader skips too); inside a committed range it is lost committed data: skipping it
    would hide a committed update, and a compaction would make the loss permanent."""
    for lo, hi, commit in log.committed:
        if start < hi and end > lo:
            raise CorruptFileError(
                f"log file {gw.abs_path(log.path)} has a corrupt block at bytes {start}-{end}, "
                f"inside bytes {lo}-{hi} that commit {commit} recorded as written: its "
                "committed records cannot be read; restore the file, or roll back or restore "
                "the table past that commit"
            )


def _describe(file_slice: FileSlice) -> str:
    return f"file group {file_slice.file_id} in partition {file_slice.partition!r}"


def _with_seq(table: pa.Table, start: int) -> pa.Table:
    ones = pa.repeat(pa.scalar(1, pa.int64()), table.num_rows)
    seq = pc.add(pc.cumulative_sum(ones), start - 1)  # start, start + 1, ... built in Arrow
    if SEQ_COL in table.column_names:
        return table.set_column(table.column_names.index(SEQ_COL), SEQ_COL, seq)
    return table.append_column(SEQ_COL, seq)


# ------------------------------------------------------------------------------- deletes


def _delete_rows(keys: Sequence[DeleteKey], spec: MergeSpec, schema: pa.Schema) -> pa.Table:
    """Delete records: key, partition path, ordering value (null when natural order).

    Natural order (:func:`~hudilite.storage.log_format.is_natural_order`) is Avro null or
    the Java ``Integer`` 0 (``IntWrapper(0)``) Hudi writes for deletes without one; a
    ``LongWrapper(0)`` is a real ordering value.
    """
    columns: dict[str, pa.Array] = {
        RECORD_KEY_COL: pa.array([k.record_key for k in keys], pa.string()),
        PARTITION_PATH_COL: pa.array([k.partition_path for k in keys], pa.string()),
    }
    field = spec.ordering_field
    if spec.event_time and field is not None and spec.binlog_pos_field is not None:
        # Two ordering fields (Hudi 1.1's MySQL Debezium mapping): an ArrayWrapper of both.
        pairs = [None if is_natural_order(k) else _pair(k.ordering_value) for k in keys]
        for i, name in enumerate((field, spec.binlog_pos_field)):
            values = [None if p is None else p[i] for p in pairs]
            target = schema.field(name).type if name in schema.names else None
            columns[name] = _ordering_array(values, target, name)
    elif spec.event_time and field is not None:
        values = [None if is_natural_order(k) else _scalar(k.ordering_value) for k in keys]
        target = schema.field(field).type if field in schema.names else None
        columns[field] = _ordering_array(values, target, field)
    columns[DELETE_COL] = pa.array([True] * len(keys), pa.bool_())
    return pa.table(columns)


def _scalar(value: Any) -> Any:
    # An ArrayWrapper (several ordering fields) of one value: that value.
    if isinstance(value, tuple | list) and len(value) == 1:
        return value[0]
    return value


def _pair(value: Any) -> tuple[Any, Any]:
    if isinstance(value, tuple | list) and len(value) == 2:
        return value[0], value[1]
    raise SchemaError(
        f"delete block ordering value {value!r} is not the pair of the table's two ordering fields"
    )


def _ordering_array(values: list[Any], target: pa.DataType | None, field: str) -> pa.Array:
    if target is None:
        return pa.array(values)
    try:
        return pa.array(values, type=target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        pass
    try:
        return pa.array(values).cast(target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(
            f"delete block ordering values {values[:3]!r} do not fit ordering field "
            f"{field!r} ({target}): {exc}"
        ) from exc


# ------------------------------------------------------------------------------ schemas


def conform(
    table: pa.Table, schema: pa.Schema, *, keep: Sequence[str] = (), where: str = ""
) -> pa.Table:
    """``table`` with exactly ``schema``'s columns (missing ones null, types cast), plus the
    ``keep`` columns it has. Struct fields are matched by name at every depth, so records
    written before a nested field existed read as null there. Raises
    :class:`SchemaError` naming the column (and ``where``) when a cast fails.
    """
    n = table.num_rows
    arrays: list[pa.Array | pa.ChunkedArray] = []
    fields: list[pa.Field] = []
    for field in schema:
        if field.name in table.column_names:
            column = table[field.name]
            if column.type != field.type:
                column = _cast_chunked(column, field.type, field.name, where)
        else:
            column = pa.nulls(n, field.type)
        arrays.append(column)
        # A non-nullable field that receives nulls (an older record without the column)
        # is relaxed rather than failing the read.
        fields.append(
            field if field.nullable or not column.null_count else field.with_nullable(True)
        )
    for name in keep:
        if name in table.column_names:
            arrays.append(table[name])
            fields.append(pa.field(name, table.schema.field(name).type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=schema.metadata))


def _cast_chunked(
    column: pa.ChunkedArray, target: pa.DataType, name: str, where: str
) -> pa.ChunkedArray:
    try:
        return column.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        try:
            chunks = [_cast_array(chunk, target) for chunk in column.chunks]
            return pa.chunked_array(chunks, type=target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            pass
        place = f" ({where})" if where else ""
        raise SchemaError(
            f"column {name!r}{place}: cannot read {column.type} as {target}: {exc}"
        ) from exc


def _cast_array(array: pa.Array, target: pa.DataType) -> pa.Array:
    """Cast with struct fields matched by name (missing ones null, extra ones dropped)."""
    if array.type == target:
        return array
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        assert isinstance(array, pa.StructArray)
        children = []
        for child in target:
            index = array.type.get_field_index(child.name)
            if index < 0:
                children.append(pa.nulls(len(array), child.type))
            else:
                children.append(_cast_array(array.field(index), child.type))
        mask = array.is_null() if array.null_count else None
        # field() (unlike flatten()) keeps the children's own validity; the parent's is
        # re-applied through the mask.
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_list(target) and (
        pa.types.is_list(array.type) or pa.types.is_large_list(array.type)
    ):
        values = _cast_array(array.values, target.value_type)
        offsets = array.offsets.cast(pa.int32())
        mask = array.is_null() if array.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    return array.cast(target, safe=True)


# ------------------------------------------------------------------------- descriptors


def encode_slice(file_slice: FileSlice) -> str:
    """A text descriptor of ``file_slice`` (base64 pickle) for a DataFrame row."""
    return base64.b64encode(pickle.dumps(file_slice, protocol=pickle.HIGHEST_PROTOCOL)).decode()


def decode_slice(descriptor: str) -> FileSlice:
    """The :class:`FileSlice` of an :func:`encode_slice` descriptor."""
    value = pickle.loads(base64.b64decode(descriptor))
    if not isinstance(value, FileSlice):
        raise CorruptFileError(f"not a file slice descriptor: {type(value).__name__}")
    return value


__all__ = [
    "conform",
    "decode_slice",
    "encode_slice",
    "log_records",
    "read_file_slice",
    "scan_log_blocks",
]
