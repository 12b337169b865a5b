"""Log-file procedures: ``show_logfile_metadata`` and ``show_logfile_records``.

Both take ``log_file_path_pattern``, a Hadoop glob of log files. As in Hudi it may be a
full path or URI under the table (``/wh/t/*/*.log*``, ``file:/wh/t/p=a/.f1_*``); hudilite
also accepts a pattern relative to the table's base path (``*/*.log*``). Only log files
of the table's partitions match (never anything under ``.hoodie``).

The files are read in Spark tasks, one descriptor row per file, so no log bytes reach
the driver: ``show_logfile_metadata`` brings back one small row per block (header and
footer as JSON, the record count from the block's own count); ``show_logfile_records``
returns a DataFrame computed on the executors with at most ``limit`` rows, each record as
Avro's ``toString`` prints it (JSON-like). With ``merge => true`` the records of each
file group's matched logs are merged as a snapshot read merges them (rollbacks applied,
blocks of failed writes skipped, the table's merge rules), else every data block's
records are listed as stored, files in path order and blocks in file order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite.filegroup.slices import FileSlice, LogFile
from hudilite.read.file_group_reader import decode_slice, encode_slice, read_file_slice
from hudilite.schema import RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import LogFileName
from hudilite.storage.log_format import BlockType, HeaderKey, LogBlock, block_records, read_log_file
from hudilite.tablestate.state import TableState

from .fsview import glob_regex
from .registry import Output, Param, ProcedureArgumentError, ProcedureContext, procedure

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Hudi's ``HoodieLogBlockType`` names of our block types.
BLOCK_TYPE_NAMES = {
    BlockType.COMMAND: "COMMAND_BLOCK",
    BlockType.DELETE: "DELETE_BLOCK",
    BlockType.CORRUPT: "CORRUPT_BLOCK",
    BlockType.AVRO_DATA: "AVRO_DATA_BLOCK",
    BlockType.HFILE: "HFILE_DATA_BLOCK",
    BlockType.PARQUET_DATA: "PARQUET_DATA_BLOCK",
    BlockType.CDC: "CDC_DATA_BLOCK",
}

_BLOCKS_SCHEMA = pa.schema(
    [
        ("file_idx", pa.int64()),
        ("block_idx", pa.int64()),
        ("instant_time", pa.string()),
        ("block_type", pa.string()),
        ("record_count", pa.int32()),
        ("header_metadata", pa.string()),
        ("footer_metadata", pa.string()),
    ]
)
_BLOCKS_DDL = (
    "file_idx bigint, block_idx bigint, instant_time string, block_type string, "
    "record_count int, header_metadata string, footer_metadata string"
)
_RECORDS_SCHEMA = pa.schema(
    [("g", pa.int64()), ("b", pa.int64()), ("r", pa.int64()), ("records", pa.string())]
)
_RECORDS_DDL = "g bigint, b bigint, r bigint, records string"
_FILES_DDL = "idx bigint, path string"


# ---------------------------------------------------------------------------------------
# matching log files


def _relative_pattern(proc: str, gw: FileSystemGateway, pattern: str) -> str:
    """``pattern`` relative to the table's base path (full paths and URIs under it, or a
    pattern that is relative already)."""
    text = pattern.strip()
    base = gw.abs_path("").rstrip("/")
    prefixes = {gw.uri("").rstrip("/"), base, "file:" + base, "file://" + base}
    for prefix in sorted(prefixes, key=len, reverse=True):
        if text == prefix:
            return ""
        if text.startswith(prefix + "/"):
            return text[len(prefix) + 1 :]
    if text.startswith("/") or "://" in text or text.startswith("file:"):
        raise ProcedureArgumentError(
            f"{proc}: log_file_path_pattern {pattern!r} is not under the table path {base}"
        )
    return text


def matching_logs(proc: str, state: TableState, pattern: Any) -> list[LogFile]:
    """The table's log files whose path matches the glob ``pattern``, sorted by path."""
    if not str(pattern or "").strip():
        raise ProcedureArgumentError(f"{proc}: log_file_path_pattern is empty")
    wanted = glob_regex(_relative_pattern(proc, state.gw, str(pattern)))
    found = []
    for partition in state.view.partitions():
        for entry in state.gw.list_dir(partition):
            name = None if entry.is_dir else LogFileName.parse(entry.name)
            if name is not None and name.extension == "log" and wanted.fullmatch(entry.path):
                found.append(LogFile(partition, name, int(entry.size)))
    return sorted(found, key=lambda f: f.path)


def _parallelism(ctx: ProcedureContext, n: int) -> int:
    try:
        cores = int(ctx.spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        cores = int(ctx.spark.conf.get("spark.sql.shuffle.partitions") or 1)
    return max(1, min(n, cores))


def _per_task(
    ctx: ProcedureContext,
    items: list[tuple[int, str]],
    func: Callable[[pa.RecordBatch], Iterator[pa.RecordBatch]],
    ddl: str,
) -> DataFrame:
    """``func`` applied in Spark tasks to batches of ``(idx, path)`` descriptor rows."""
    descriptors = ctx.spark.createDataFrame(items, _FILES_DDL)
    descriptors = descriptors.repartition(_parallelism(ctx, len(items)))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield from func(batch)

    return descriptors.mapInArrow(run, ddl)


# ---------------------------------------------------------------------------------------
# show_logfile_metadata


def _header_json(entries: dict[Any, str]) -> str:
    """A header/footer map as Jackson writes Hudi's ``Map<HeaderMetadataType, String>``."""
    named = {k.name if isinstance(k, HeaderKey) else str(k): v for k, v in entries.items()}
    return json.dumps(named, separators=(",", ":"), ensure_ascii=False)


def record_count(block: LogBlock) -> int:
    """Records in a data block, from the block's own count (0 for other blocks)."""
    if block.block_type == BlockType.AVRO_DATA and len(block.content) >= 8:
        version = int.from_bytes(block.content[:4], "big", signed=True)
        if version >= 2:  # versions 2+ store the record count after the version
            return int.from_bytes(block.content[4:8], "big", signed=True)
        return block_records(block).num_rows
    if block.block_type == BlockType.PARQUET_DATA:
        return int(pq.ParquetFile(pa.BufferReader(block.content)).metadata.num_rows)
    return 0


def _describe_blocks(gw: FileSystemGateway, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """Executor side: one row per block of every file in ``batch``."""
    for idx, path in zip(
        batch.column("idx").to_pylist(), batch.column("path").to_pylist(), strict=True
    ):
        rows = [
            {
                "file_idx": idx,
                "block_idx": n,
                "instant_time": block.instant_time,
                "block_type": BLOCK_TYPE_NAMES.get(block.block_type, block.block_type.name),
                "record_count": record_count(block),
                "header_metadata": _header_json(block.header),
                "footer_metadata": _header_json(block.footer),
            }
            for n, block in enumerate(read_log_file(gw, path))
        ]
        yield pa.RecordBatch.from_pylist(rows, schema=_BLOCKS_SCHEMA)


@procedure(
    "show_logfile_metadata",
    [
        Param("table", "string"),
        Param("log_file_path_pattern", "string", required=True),
        Param("limit", "integer", default=10),
        Param("path", "string"),
    ],
    [
        Output("instant_time"),
        Output("record_count", "int"),
        Output("block_type"),
        Output("header_metadata"),
        Output("footer_metadata"),
    ],
    "Lists the blocks of matching log files: instant, record count, type, header, footer.",
    read_only=True,
)
def show_logfile_metadata(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per block, grouped by instant (in order of first appearance; files by
    path, blocks in file order). Blocks without INSTANT_TIME are named as Hudi names them:
    ``corrupt_block_<n>`` or ``dummy_instant_time_<n>``."""
    state = ctx.table(args).state()
    logs = matching_logs(ctx.procedure, state, args["log_file_path_pattern"])
    if not logs:
        return []
    gw = state.gw
    items = [(i, log.path) for i, log in enumerate(logs)]
    df = _per_task(ctx, items, lambda batch: _describe_blocks(gw, batch), _BLOCKS_DDL)
    blocks = sorted(df.collect(), key=lambda r: (r["file_idx"], r["block_idx"]))
    grouped: dict[str, list[tuple[Any, ...]]] = {}
    corrupt = dummy = 0
    for b in blocks:
        instant = b["instant_time"]
        if instant is None and b["block_type"] == "CORRUPT_BLOCK":
            corrupt += 1
            instant = f"corrupt_block_{corrupt}"
        elif instant is None:
            dummy += 1
            instant = f"dummy_instant_time_{dummy}"
        grouped.setdefault(instant, []).append(
            (
                instant,
                b["record_count"],
                b["block_type"],
                b["header_metadata"],
                b["footer_metadata"],
            )
        )
    rows = [row for group in grouped.values() for row in group]
    return rows[: args["limit"]]


# ---------------------------------------------------------------------------------------
# show_logfile_records


def record_string(record: dict[str, Any]) -> str:
    """A record as Avro's ``GenericRecord.toString`` prints it (JSON-like)."""
    return json.dumps(record, ensure_ascii=False, default=str)


def _raw_records(
    gw: FileSystemGateway, limit: int, batch: pa.RecordBatch
) -> Iterator[pa.RecordBatch]:
    """Executor side: the stored records of each file's data blocks (at most ``limit``
    per file: the overall first ``limit`` can need no more)."""
    for idx, path in zip(
        batch.column("idx").to_pylist(), batch.column("path").to_pylist(), strict=True
    ):
        rows: list[dict[str, Any]] = []
        for n, block in enumerate(read_log_file(gw, path)):
            if len(rows) >= limit:
                break
            if not block.is_data:
                continue
            for r, record in enumerate(
                block_records(block).slice(0, limit - len(rows)).to_pylist()
            ):
                rows.append({"g": idx, "b": n, "r": r, "records": record_string(record)})
        yield pa.RecordBatch.from_pylist(rows, schema=_RECORDS_SCHEMA)


def _merged_records(
    gw: FileSystemGateway,
    read: Callable[[FileSlice], pa.Table],
    limit: int,
    batch: pa.RecordBatch,
) -> Iterator[pa.RecordBatch]:
    """Executor side: each file group's logs merged, records sorted by key."""
    for idx, descriptor in zip(
        batch.column("idx").to_pylist(), batch.column("path").to_pylist(), strict=True
    ):
        table = read(decode_slice(descriptor))
        table = table.sort_by(RECORD_KEY_COL).slice(0, limit)
        rows = [
            {"g": idx, "b": 0, "r": r, "records": record_string(rec)}
            for r, rec in enumerate(table.to_pylist())
        ]
        yield pa.RecordBatch.from_pylist(rows, schema=_RECORDS_SCHEMA)


def _group_slices(state: TableState, logs: list[LogFile]) -> list[FileSlice]:
    """The matched logs as one log-only slice per file group, in apply order."""
    groups: dict[tuple[str, str], list[LogFile]] = {}
    for log in logs:
        completion = state.timeline.completion_time(log.instant_time)
        groups.setdefault(log.group_key, []).append(
            LogFile(log.partition, log.name, log.size, completion)
        )
    return [
        FileSlice(
            p,
            f,
            min(x.instant_time for x in group),
            None,
            tuple(sorted(group, key=LogFile.sort_key)),
        )
        for (p, f), group in sorted(groups.items())
    ]


@procedure(
    "show_logfile_records",
    [
        Param("table", "string"),
        Param("log_file_path_pattern", "string", required=True),
        Param("merge", "boolean", default=False),
        Param("limit", "integer", default=10),
        Param("path", "string"),
    ],
    [Output("records")],
    "Shows the records in matching log files, as stored or merged per file group.",
    read_only=True,
)
def show_logfile_records(ctx: ProcedureContext, args: dict[str, Any]) -> DataFrame:
    """A DataFrame of at most ``limit`` record strings, computed in Spark tasks."""
    state = ctx.table(args).state()
    pattern = args["log_file_path_pattern"]
    logs = matching_logs(ctx.procedure, state, pattern)
    if not logs:
        raise ProcedureArgumentError(
            f"show_logfile_records: There is no log file matching {str(pattern)!r}"
        )
    gw, limit = state.gw, max(0, int(args["limit"]))
    if args["merge"]:
        merge_spec = state.merge_spec(state.options())
        schema = state.storage_schema
        visible = state.view.visibility().is_visible

        def read(file_slice: FileSlice) -> pa.Table:
            return read_file_slice(
                gw, file_slice, merge_spec=merge_spec, schema=schema, is_instant_visible=visible
            )

        items = [(i, encode_slice(s)) for i, s in enumerate(_group_slices(state, logs))]
        df = _per_task(ctx, items, lambda b: _merged_records(gw, read, limit, b), _RECORDS_DDL)
    else:
        items = [(i, log.path) for i, log in enumerate(logs)]
        df = _per_task(ctx, items, lambda b: _raw_records(gw, limit, b), _RECORDS_DDL)
    return df.orderBy("g", "b", "r").limit(limit).select("records")
