"""Read planning: which files a snapshot, time-travel or incremental read touches."""

from hudilite.read.planner import (
    ScanPlan,
    normalize_instant,
    plan_incremental,
    plan_snapshot,
    validate_as_of,
)

__all__ = ["ScanPlan", "normalize_instant", "plan_incremental", "plan_snapshot", "validate_as_of"]
