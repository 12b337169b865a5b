"""What a file-group write task is given and returns: the write context and the stats row.

Shared by the base-file writer (:mod:`hudilite.write.file_group_writer`) and the log
writer (:mod:`hudilite.write.log_writer`); it sits below both so that neither imports
the other for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudilite import failpoints
from hudilite.auto_keys import stamp_keys
from hudilite.merge import MergeSpec
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.storage.fs import FileSystemGateway
from hudilite.timeline.metadata import WriteStat

# Columns of the stats row every file-group task returns (one row per file written).
STATS_SCHEMA = pa.schema(
    [
        ("partition_path", pa.string()),
        ("file_id", pa.string()),
        ("path", pa.string()),
        ("prev_commit", pa.string()),
        ("num_writes", pa.int64()),
        ("num_inserts", pa.int64()),
        ("num_updates", pa.int64()),
        ("num_deletes", pa.int64()),
        ("file_size", pa.int64()),
        # Merge-on-read log writes: the slice's base file name and the log version written.
        ("base_file", pa.string()),
        ("log_version", pa.int64()),
    ]
)


@dataclass(frozen=True)
class ExistingFile:
    """The latest base file of a file group a write touches."""

    rel_path: str
    instant_time: str


@dataclass(frozen=True)
class LogTarget:
    """Where a merge-on-read write appends a file group's changes: a new log file of its slice."""

    base_instant: str  # the slice's base instant (names v6 log files)
    base_file_name: str | None  # the slice's base file, if it has one
    next_version: int  # log version to write (v6: after the slice's existing logs)


@dataclass
class WriteContext:
    """What an executor needs to write file groups for one instant (pickled to the workers)."""

    gw: FileSystemGateway
    instant_time: str
    storage_schema: pa.Schema  # meta columns + data columns, in file order
    merge_spec: MergeSpec
    operation: str
    existing: dict[tuple[str, str], ExistingFile] = field(default_factory=dict)
    max_file_size: int = 125829120
    fail_point: str | None = None  # test hook: raise at a named point inside the task
    # Merge-on-read: file groups whose changes go to a new log file, and how to write it.
    log_targets: dict[tuple[str, str], LogTarget] = field(default_factory=dict)
    table_version: int = 6
    log_schema_json: str = ""  # Avro schema (meta + data columns) of log data blocks
    log_block_format: str = "avro"  # or "parquet"
    # Changelog tables: each log-target slice (encoded) and the instants visible to the
    # write, to know the stored state the changes apply to.
    slice_descriptors: dict[tuple[str, str], str] = field(default_factory=dict)
    visible_instants: frozenset[str] = frozenset()
    bloom: BloomConfig | None = BloomConfig()  # the bloom filter of every base file written

    def check_fail_point(self, name: str) -> None:
        """Raise a simulated crash when the test hook names this point."""
        failpoints.check(self.fail_point, name)


def seqnos(instant_time: str, task_id: int, start: int, n: int) -> pa.Array:
    """``_hoodie_commit_seqno`` values ``<instant>_<task>_<n>`` for n in [start, start+n)."""
    numbers = pc.cast(pa.array(np.arange(start, start + n, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(f"{instant_time}_{task_id}_", numbers, "")


def write_stat_from_row(s: Mapping[str, Any]) -> WriteStat:
    """The Hudi write stat of one stats row (base file, or log file with its MOR fields)."""
    log_fields: dict[str, Any] = {}
    if s.get("log_version") is not None:
        log_fields = {
            "base_file": s.get("base_file") or "",
            "log_files": [s["path"].rsplit("/", 1)[-1]],
            "log_version": s["log_version"],
            "log_offset": 0,
            "total_log_records": s["num_writes"] + s["num_deletes"],
            "total_log_blocks": int(s["num_writes"] > 0) + int(s["num_deletes"] > 0),
        }
    return WriteStat(
        file_id=s["file_id"],
        path=s["path"],
        prev_commit=s["prev_commit"],
        num_writes=s["num_writes"],
        num_deletes=s["num_deletes"],
        num_update_writes=s["num_updates"],
        num_inserts=s["num_inserts"],
        total_write_bytes=s["file_size"],
        partition_path=s["partition_path"],
        file_size_in_bytes=s["file_size"],
        **log_fields,
    )


def stats_row(**values: Any) -> pa.Table:
    """One stats row (:data:`STATS_SCHEMA`); the MOR log fields default to null."""
    values.setdefault("base_file", None)
    values.setdefault("log_version", None)
    return pa.Table.from_pylist([values], schema=STATS_SCHEMA)


def conform(ctx: WriteContext, table: pa.Table) -> pa.Table:
    """Order and type the columns exactly as the table's storage schema says.

    A column the rows lack (the changelog operation before it is stamped) is null. A keyless
    table's pending record keys are completed with the write's instant here, the one step
    every base and log file write goes through (:mod:`hudilite.auto_keys`).
    """
    table = stamp_keys(ctx.instant_time, table)
    names = set(table.column_names)
    cols = [
        table[f.name].cast(f.type) if f.name in names else pa.nulls(table.num_rows, f.type)
        for f in ctx.storage_schema
    ]
    return pa.Table.from_arrays(cols, schema=ctx.storage_schema)
