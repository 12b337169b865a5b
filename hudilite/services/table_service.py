"""The table-service runner that compaction and clustering plug into.

Both services have the same shape: a plan (Avro, in the instant's requested file) made of
independent work units (compaction operations, clustering groups), an executor context
pickled to the tasks, a per-unit function that writes new base files and returns their
write stats, and a commit that records those stats. A service describes its part as a
:class:`TableService` (the unit codec and the work unit); :func:`execute_plan` runs one
attempt of a pending plan (heartbeat, inflight, the units through a ``runner``, the
``before_commit`` fail point, the commit, rollback on failure; see
:func:`hudilite.services._common.run_attempt`). ``hudilite.spark.services_job`` supplies
the Spark runner of any :class:`TableService`.

The size metrics both plans carry per unit are Hudi's (``CompactionStrategy`` /
``FileSliceMetricUtils``) and named once here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from hudilite.config import Options
from hudilite.services._common import decode_unit, encode_unit, run_attempt
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import WriteStat

# Metric names of Hudi's CompactionStrategy.captureMetrics / FileSliceMetricUtils.
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"


def io_metrics(num_logs: int, log_bytes: int, read_mb: int, write_mb: int) -> dict[str, float]:
    """A plan unit's size metrics, as Hudi writes them (floats; IO = read + write MB)."""
    return {
        TOTAL_LOG_FILES: float(num_logs),
        TOTAL_IO_MB: float(read_mb + write_mb),
        TOTAL_IO_READ_MB: float(read_mb),
        TOTAL_LOG_FILES_SIZE: float(log_bytes),
        TOTAL_IO_WRITE_MB: float(write_mb),
    }


class ServiceContextLike(Protocol):
    """What :func:`execute_plan` needs of an executor context."""

    def check_fail_point(self, name: str) -> None:
        """Raise a simulated crash when the test hook names this point."""


ContextT = TypeVar("ContextT", bound=ServiceContextLike)
UnitT = TypeVar("UnitT")

#: Executes a plan's units: ``runner(ctx, units) -> write stats`` (plan order).
Runner = Callable[[ContextT, Sequence[UnitT]], list[WriteStat]]


@dataclass(frozen=True)
class TableService(Generic[ContextT, UnitT]):
    """One table service's plug-in: its name, its plan unit's codec and its work unit.

    ``run_unit(ctx, unit, write_token)`` writes one unit's files and returns their write
    stats. Instances live at module level in the service's module, so Spark pickles them
    (and ``run_unit``) by reference.
    """

    kind: str
    unit_type: type[UnitT]
    unit_name: str  # for errors: "compaction operation"
    run_unit: Callable[[ContextT, UnitT, str], list[WriteStat]]

    def encode(self, unit: UnitT) -> str:
        """Text form of a unit for a DataFrame row (base64 pickle)."""
        return encode_unit(unit)

    def decode(self, text: str) -> UnitT:
        """Inverse of :meth:`encode`; :class:`CorruptFileError` unless a unit."""
        return decode_unit(text, self.unit_type, self.unit_name)

    def run_encoded(self, ctx: ContextT, text: str, write_token: str) -> list[WriteStat]:
        """One encoded unit inside a task (the Spark runner's entry point)."""
        return self.run_unit(ctx, self.decode(text), write_token)

    def run_locally(self, ctx: ContextT, units: Sequence[UnitT]) -> list[WriteStat]:
        """The default runner: every unit in this process, one after the other."""
        return [s for i, u in enumerate(units) for s in self.run_unit(ctx, u, f"{i}-0-{i}")]


def execute_plan(
    service: TableService[ContextT, UnitT],
    state: TableState,
    requested: Instant,
    opts: Options,
    *,
    context: Callable[[], ContextT],
    units: Sequence[UnitT],
    commit: Callable[[Instant, list[WriteStat]], Instant],
    rollback: Callable[[], object],
    runner: Runner[ContextT, UnitT] | None = None,
) -> tuple[Instant, list[WriteStat]]:
    """One attempt of the pending plan ``requested``: go inflight, run ``units`` with
    ``runner`` (default: :meth:`TableService.run_locally`) on ``context()``, check the
    ``before_commit`` fail point and ``commit(inflight, stats)``. On a failure
    ``rollback()`` undoes the attempt (the plan stays requested) and the error is re-raised.
    Returns the completed instant and the write stats."""

    def work(inflight: Instant) -> tuple[Instant, list[WriteStat]]:
        ctx = context()
        stats = (runner or service.run_locally)(ctx, units)
        ctx.check_fail_point("before_commit")
        return commit(inflight, stats), stats

    return run_attempt(state, service.kind, requested, opts, work, rollback)
