"""Reading a scan plan straight into Arrow, without Spark.

For callers who want a pyarrow Table in their own process (small tables,
tests, notebooks, the benchmark's scan), the planner's live base files are
read with ``pyarrow.dataset`` (multi-threaded C++), then filtered by commit
time for incremental plans. Slices with log files need the merge reader.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hudilite.errors import HudiliteError
from hudilite.read.planner import ScanPlan
from hudilite.schema import COMMIT_TIME_COL
from hudilite.storage.fs import FileSystemGateway


def read_plan_arrow(
    gw: FileSystemGateway,
    plan: ScanPlan,
    schema: pa.Schema,
    *,
    columns: list[str] | None = None,
    filter: pc.Expression | None = None,
) -> pa.Table:
    """The rows of ``plan`` as one Arrow table with ``schema`` (or its ``columns``)."""
    if plan.merge_slices:
        raise HudiliteError(
            f"{len(plan.merge_slices)} file slice(s) have log files; read them through Spark "
            "(Table.read) or use query_type='read_optimized'"
        )
    if not plan.native_paths:
        empty = schema if columns is None else pa.schema([schema.field(c) for c in columns])
        return empty.empty_table()
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
    dataset = ds.dataset(
        [gw.abs_path(p) for p in plan.native_paths],
        schema=schema,
        format="parquet",
        filesystem=gw.filesystem,
    )
    return dataset.to_table(columns=columns, filter=wanted, use_threads=True)


def _and(a: pc.Expression | None, b: pc.Expression) -> pc.Expression:
    return b if a is None else a & b
