"""Compaction plans: which file slices a compaction merges, as the Avro ``HoodieCompactionPlan``.

A plan is written by :func:`~hudilite.services.compaction.schedule_compaction` to
``T.compaction.requested``: an Avro ``HoodieCompactionPlan`` (plan version 2, names relative
to the partition, exactly as Hudi 0.14/1.x write it) holding one ``HoodieCompactionOperation``
per file slice with log files: ``baseInstantTime``, ``dataFilePath`` (base file name or
null), ``deltaFilePaths`` (log file names, apply order), ``fileId``, ``partitionPath`` and
the size ``metrics`` of Hudi's compaction strategy. Plans of version 1 (full paths) are read
too.

Planning (:func:`plan_operations`) takes the latest slice of every file group with log
files, except slices of file groups in a pending compaction or clustering plan, orders them
by total log size, largest first (``LogFileSizeBasedCompactionStrategy``) and caps them by
``hoodie.compaction.target.io``. Execution is :mod:`hudilite.services.compaction`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError, HudiliteError, InstantNotFoundError
from hudilite.filegroup.slices import BaseFile, LogFile
from hudilite.services._common import OptionsLike, pending_plan_groups, resolve_options
from hudilite.services.table_service import TOTAL_IO_MB, TOTAL_LOG_FILES_SIZE, io_metrics
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMPACTION, Instant, State
from hudilite.timeline.metadata import read_avro_record, write_avro_record

__all__ = [
    "COMPACTION_PLAN_VERSION",
    "CompactionOperation",
    "CompactionPlan",
    "CompactionPlanResult",
    "log_base_instants",
    "pending_compactions",
    "plan_operations",
    "read_compaction_plan",
]

COMPACTION_PLAN_VERSION = 2  # names relative to the partition (Hudi's current version)

_MB = 1024 * 1024


@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact (a ``HoodieCompactionOperation``)."""

    partition_path: str
    file_id: str
    base_instant: str
    data_file: str | None  # base file name, None for a log-only slice
    delta_files: tuple[str, ...]  # log file names in apply order
    metrics: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False)

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)``."""
        return (self.partition_path, self.file_id)

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieCompactionOperation`` record."""
        return {
            "baseInstantTime": self.base_instant,
            "deltaFilePaths": list(self.delta_files),
            "dataFilePath": self.data_file,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": None,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> CompactionOperation:
        """Read an operation of plan version 1 (paths) or 2 (names)."""

        def name(path: str) -> str:
            return path.rstrip("/").rsplit("/", 1)[-1]

        data = record.get("dataFilePath")
        return cls(
            partition_path=record.get("partitionPath") or "",
            file_id=record["fileId"],
            base_instant=record.get("baseInstantTime") or "",
            data_file=name(data) if data else None,
            delta_files=tuple(name(p) for p in record.get("deltaFilePaths") or []),
            metrics=dict(record.get("metrics") or {}),
        )


@dataclass(frozen=True)
class CompactionPlan:
    """The content of ``T.compaction.requested``."""

    instant_time: str
    operations: tuple[CompactionOperation, ...]
    version: int = COMPACTION_PLAN_VERSION
    extra_metadata: Mapping[str, str] = field(default_factory=dict, compare=False)

    def to_avro_bytes(self) -> bytes:
        """An Avro container of one ``HoodieCompactionPlan`` (what Hudi 1.x writes)."""
        return write_avro_record(
            "HoodieCompactionPlan",
            {
                "operations": [op.to_avro() for op in self.operations],
                "extraMetadata": dict(self.extra_metadata),
                "version": self.version,
                "strategy": None,
                "preserveHoodieMetadata": False,
                "missingSchedulePartitions": [],
            },
        )

    @classmethod
    def from_bytes(cls, instant_time: str, data: bytes) -> CompactionPlan:
        """Decode a plan written by Hudi or hudilite."""
        record = read_avro_record(data)
        return cls(
            instant_time=instant_time,
            operations=tuple(
                CompactionOperation.from_avro(op) for op in record.get("operations") or []
            ),
            version=int(record.get("version") or 1),
            extra_metadata=dict(record.get("extraMetadata") or {}),
        )

    @property
    def file_groups(self) -> set[tuple[str, str]]:
        """``(partition, file_id)`` of every operation."""
        return {op.group_key for op in self.operations}

    @property
    def partitions(self) -> tuple[str, ...]:
        """Partitions the plan touches, sorted."""
        return tuple(sorted({op.partition_path for op in self.operations}))

    @property
    def num_log_files(self) -> int:
        """Log files the plan compacts."""
        return sum(len(op.delta_files) for op in self.operations)

    @property
    def total_log_bytes(self) -> int:
        """Bytes of log files the plan compacts (from the operation metrics)."""
        return int(sum(op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0) for op in self.operations))


@dataclass(frozen=True)
class CompactionPlanResult:
    """A compaction scheduled by :func:`schedule_compaction`.

    ``trigger`` says why (a strategy name or ``"force"``); ``delta_commits`` counts the
    delta commits since the last compaction the trigger looked at.
    """

    instant_time: str
    plan: CompactionPlan
    trigger: str
    delta_commits: int

    @property
    def num_operations(self) -> int:
        """File slices to compact."""
        return len(self.plan.operations)

    @property
    def num_log_files(self) -> int:
        """Log files to compact."""
        return self.plan.num_log_files

    @property
    def partitions(self) -> tuple[str, ...]:
        """Partitions touched."""
        return self.plan.partitions


def _metrics(
    base: BaseFile | None, logs: Sequence[LogFile], max_file_size: int
) -> dict[str, float]:
    """Hudi's ``CompactionStrategy.captureMetrics`` (sizes in whole MB, as Java rounds)."""
    log_bytes = sum(max(0, log.size) for log in logs)
    base_bytes = base.size if base is not None else 0
    read_mb = (base_bytes + log_bytes) // _MB
    write_mb = (base_bytes if base is not None else max_file_size) // _MB
    return io_metrics(len(logs), log_bytes, read_mb, write_mb)


def plan_operations(state: TableState, options: OptionsLike = None) -> list[CompactionOperation]:
    """The operations a compaction scheduled now would run (no timeline change): the latest
    slice of every file group that has log files and no pending compaction/clustering,
    largest logs first, within ``hoodie.compaction.target.io``."""
    opts = resolve_options(state, options)
    busy = set(pending_plan_groups(state.timeline))
    max_file_size = int(opts.get(cfg.MAX_FILE_SIZE))
    ops = []
    for s in state.view.latest_slices():
        if not s.has_logs or s.group_key in busy:
            continue
        ops.append(
            CompactionOperation(
                partition_path=s.partition,
                file_id=s.file_id,
                base_instant=s.base_instant,
                data_file=s.base_file.file_name if s.base_file is not None else None,
                delta_files=tuple(log.file_name for log in s.log_files),
                metrics=_metrics(s.base_file, s.log_files, max_file_size),
            )
        )
    ops.sort(key=lambda op: -op.metrics[TOTAL_LOG_FILES_SIZE])  # stable: ties keep group order
    budget = int(opts.get(cfg.COMPACTION_TARGET_IO_MB))
    chosen = []
    for op in ops:
        chosen.append(op)
        budget -= int(op.metrics[TOTAL_IO_MB])
        if budget <= 0:
            break
    return chosen


def pending_compactions(state: TableState, order: str = "FIFO") -> list[Instant]:
    """Pending compaction instants, oldest first (``"FIFO"``) or newest first (``"LIFO"``)."""
    pending = [i for i in state.timeline.filter(actions=COMPACTION) if i.is_pending]
    if order.upper() == "LIFO":
        pending.reverse()
    elif order.upper() != "FIFO":
        raise ConfigError(f"compaction order must be FIFO or LIFO, got {order!r}")
    return pending


def read_compaction_plan(state: TableState, instant_time: str) -> CompactionPlan:
    """The plan of compaction ``instant_time`` (pending or completed)."""
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    try:
        data = state.timeline.instant_content(requested)
    except HudiliteError:
        raise InstantNotFoundError(f"no compaction plan {instant_time} on the timeline") from None
    return CompactionPlan.from_bytes(instant_time, data)


def log_base_instants(state: TableState) -> dict[tuple[str, str], str]:
    """For writers of version-6 tables: ``(partition, file_id) -> T`` for file groups in a
    pending compaction ``T``. New log files of such a group must be named with ``T`` (the
    slice the compaction opens), not with the slice being compacted."""
    out = {}
    for inst in state.timeline.filter(actions=COMPACTION):
        if inst.is_pending:
            for key in read_compaction_plan(state, inst.requested_time).file_groups:
                out[key] = inst.requested_time
    return out
