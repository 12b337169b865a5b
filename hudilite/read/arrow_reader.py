"""Reading a scan plan straight into Arrow, without Spark.

For callers who want a pyarrow Table in their own process (small tables,
tests, notebooks, the benchmark's scan), the planner's live base files are
read with ``pyarrow.dataset`` (multi-threaded C++), then filtered by commit
time for incremental plans. Slices with log files (merge-on-read) are merged
by :func:`hudilite.read.file_group_reader.read_file_slice`, a few slices at a
time in threads, and get the same filters.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.filegroup.slices import FileSlice
from hudilite.merge import MergeSpec
from hudilite.read.file_group_reader import read_file_slice
from hudilite.read.planner import ScanPlan
from hudilite.schema import COMMIT_TIME_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState


def read_plan_arrow(
    gw: FileSystemGateway,
    plan: ScanPlan,
    schema: pa.Schema,
    *,
    columns: list[str] | None = None,
    filter: pc.Expression | None = None,
    merge_spec: MergeSpec | None = None,
) -> pa.Table:
    """The rows of ``plan`` as one Arrow table with ``schema`` (or its ``columns``).

    ``merge_spec`` merges the slices with log files; by default the table's own
    (``TableState.merge_spec`` of the table's options, read from ``gw``).
    """
    # why lazy: importing pyarrow.dataset imports pandas (about a second), and every
    # command and session that never reads through this path would pay for it at start-up
    import pyarrow.dataset as ds

    out_schema = schema if columns is None else pa.schema([schema.field(c) for c in columns])
    wanted = _commit_filter(plan, filter)
    parts: list[pa.Table] = []
    if plan.native_paths:
        dataset = ds.dataset(
            [gw.abs_path(p) for p in plan.native_paths],
            schema=schema,
            format="parquet",
            filesystem=gw.filesystem,
        )
        parts.append(dataset.to_table(columns=columns, filter=wanted, use_threads=True))
    if plan.merge_slices:
        if merge_spec is None:
            state = TableState.load(gw)
            merge_spec = state.merge_spec(state.options())
        merged = _read_merged(gw, plan, schema, merge_spec)
        if wanted is not None or columns is not None:
            merged = ds.dataset(merged).to_table(columns=columns, filter=wanted)
        parts.append(merged)
    if not parts:
        return out_schema.empty_table()
    if len(parts) == 1:
        return parts[0]
    return pa.concat_tables([p.cast(parts[0].schema) for p in parts])


def _read_merged(
    gw: FileSystemGateway, plan: ScanPlan, schema: pa.Schema, merge_spec: MergeSpec
) -> pa.Table:
    def one(file_slice: FileSlice) -> pa.Table:
        return read_file_slice(
            gw,
            file_slice,
            merge_spec=merge_spec,
            schema=schema,
            is_instant_visible=plan.is_instant_visible,
            as_of=plan.as_of,
            commit_times=plan.commit_times,
        )

    slices = plan.merge_slices
    workers = min(len(slices), os.cpu_count() or 1, 8)
    if workers <= 1:
        tables = [one(s) for s in slices]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            tables = list(pool.map(one, slices))
    return pa.concat_tables(tables)


def _commit_filter(plan: ScanPlan, filter: pc.Expression | None) -> pc.Expression | None:
    """``filter`` and the incremental row filter on ``_hoodie_commit_time``."""
    wanted = filter
    if plan.commit_times is not None:
        times = pa.array(sorted(plan.commit_times), pa.string())
        wanted = _and(wanted, pc.field(COMMIT_TIME_COL).isin(times))
    elif plan.commit_range is not None:
        start, end = plan.commit_range
        if start is not None:
            wanted = _and(wanted, pc.field(COMMIT_TIME_COL) > start)
        if end is not None:
            wanted = _and(wanted, pc.field(COMMIT_TIME_COL) <= end)
    return wanted


def _and(a: pc.Expression | None, b: pc.Expression) -> pc.Expression:
    return b if a is None else a & b
