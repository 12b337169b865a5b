"""What a write can learn about its input from the input's Spark plan, without running it.

A write reads its batch several times (key statistics, index lookup, the write itself).
Whether it pays to cache the batch, and whether it is small enough for the driver-side
write, are questions about the plan: :func:`row_bound` (the most rows the optimized plan
can produce) and :func:`held_in_memory` (the plan reads only rows Spark already holds).
"""

from __future__ import annotations

import math

from pyspark.sql import DataFrame

#: Leaves of a plan whose rows Spark holds in memory: cached data and local rows.
_MEMORY_LEAVES = frozenset({"InMemoryRelation", "LocalRelation"})


def row_bound(df: DataFrame) -> float:
    """The most rows ``df`` can have by its optimized plan (``inf`` when unbounded)."""
    bound = df._jdf.queryExecution().optimizedPlan().maxRows()
    return int(bound.get()) if bound.isDefined() else math.inf


def held_in_memory(df: DataFrame) -> bool:
    """Whether every row of ``df`` comes from data Spark already holds (a cached DataFrame
    or local rows) through deterministic expressions.

    Such a batch is as cheap to compute again as to read back from a cache, and computes
    to the same rows each time, so a write need not cache it once more (Hudi's commit
    executor likewise persists its input only when the caller has not). False whenever
    the plan cannot be inspected.
    """
    try:
        plan = df._jdf.queryExecution().withCachedData()
        if not plan.deterministic():
            return False
        leaves = plan.collectLeaves()
        names = {leaves.apply(i).getClass().getSimpleName() for i in range(leaves.size())}
    except Exception:  # no JVM plan (Spark Connect) or an API that moved: assume not
        return False
    return bool(names) and names <= _MEMORY_LEAVES
