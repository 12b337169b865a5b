"""CDC reads of the ``hudilite`` data source: Hudi's incremental format ``cdc``.

``spark.read.format("hudilite")`` with ``hoodie.datasource.query.type=incremental``,
``hoodie.datasource.query.incremental.format=cdc`` and ``begin.instanttime`` (and
optionally ``end.instanttime``), or ``spark.readStream.format("hudilite")`` with the
format option, returns one row per record change of every commit in the range:
``op``, ``ts_ms``, ``before``, ``after`` (see :mod:`hudilite.read.cdc` for the encoding).
It works on any table, COW or MOR, with or without Hudi's CDC log files: each change is
found by comparing a file group's records just before and just after the commit.

Planning (driver): for every commit in the range -- compactions, log compactions and
clusterings change no record and are skipped -- the file groups its write stats name and
those it replaced; the table's state just before the commit (the commit's completion
time minus 1 ms on table version 8, its requested time minus 1 ms on version 6, as
incremental reads order commits) and just after it is planned for those partitions.
Every file group becomes one Spark input partition carrying, per commit, the group's
slice before and after and their visibility. Reading (executors): both states are
merged (base file plus the log blocks visible then, as a snapshot read does) and
compared by :func:`hudilite.read.cdc.cdc_rows`. No table data passes through the driver.

A commit whose earlier file versions the cleaner removed cannot be compared: the read
fails naming the missing file (keep more commits, ``hoodie.clean.commits.retained``, for
CDC readers that lag).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import InputPartition
from pyspark.sql.types import StringType, StructField, StructType

from hudilite.config.vocab import TABLE_SERVICE_OPERATIONS
from hudilite.errors import ConfigError
from hudilite.merge.spec import MergeSpec
from hudilite.read.cdc import CDC_COLUMNS, cdc_rows
from hudilite.read.file_group_reader import conform, read_file_slice
from hudilite.read.planner import ScanPlan, plan_incremental
from hudilite.schema import cast_to_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import parse_data_file_name, split_data_file_path
from hudilite.storage.parquet_io import read_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.timeline.instant_time import plus_millis

INCREMENTAL_FORMAT = "hoodie.datasource.query.incremental.format"
LATEST_STATE, CDC = "latest_state", "cdc"
#: Operation types whose commits rewrite records without changing any.
NO_CHANGE_OPERATIONS = TABLE_SERVICE_OPERATIONS

#: The Spark schema of a CDC read (Hudi's ``FULL_CDC_SPARK_SCHEMA``).
CDC_SPARK_SCHEMA = StructType([StructField(c, StringType(), True) for c in CDC_COLUMNS])


def is_cdc(options: Any) -> bool:
    """Whether the read options ask for the ``cdc`` format; ``ConfigError`` for a format
    other than ``latest_state`` or ``cdc``."""
    value = str(options.get(INCREMENTAL_FORMAT) or LATEST_STATE).strip().lower()
    if value not in (LATEST_STATE, CDC):
        raise ConfigError(
            f"unknown {INCREMENTAL_FORMAT} {options.get(INCREMENTAL_FORMAT)!r}; "
            f"use {LATEST_STATE} or {CDC}"
        )
    return value == CDC


Item = tuple[str, Any]  # ("base", table-relative path) or ("slice", FileSlice)


@dataclass(frozen=True)
class _Change:
    """One commit of one file group: the group before and after (None: absent)."""

    instant: str
    before: Item | None
    before_plan: ScanPlan
    after: Item | None
    after_plan: ScanPlan


@dataclass(frozen=True)
class _CdcContext:
    """What every CDC task needs besides its changes (picklable)."""

    gw: FileSystemGateway
    merge_spec: MergeSpec
    storage: pa.Schema

    def state(self, item: Item | None, plan: ScanPlan) -> pa.Table | None:
        """The file group's merged records in ``plan``'s state, or None when absent."""
        if item is None:
            return None
        kind, value = item
        if kind == "base":
            return cast_to_schema(
                conform(read_base_file(self.gw, value), self.storage), self.storage
            )
        table = read_file_slice(
            self.gw,
            value,
            merge_spec=self.merge_spec,
            schema=self.storage,
            is_instant_visible=plan.is_instant_visible,
            as_of=plan.as_of,
            commit_times=None,
        )
        return cast_to_schema(table, self.storage)


class CdcPartition(InputPartition):
    """One file group's changes, commit by commit."""

    def __init__(self, group: tuple[str, str], changes: list[_Change], context: _CdcContext):
        super().__init__(group)
        self.changes = changes
        self.context = context

    def read(self) -> Iterator[pa.RecordBatch]:
        """The change rows, as Arrow batches of the CDC schema."""
        for change in self.changes:
            before = self.context.state(change.before, change.before_plan)
            after = self.context.state(change.after, change.after_plan)
            yield from cdc_rows(before, after, change.instant).to_batches()


def _items(plan: ScanPlan) -> dict[tuple[str, str], Item]:
    """File group -> what to read for it, in ``plan``."""
    out: dict[tuple[str, str], Item] = {s.group_key: ("slice", s) for s in plan.merge_slices}
    for path in plan.native_paths:
        partition, name = split_data_file_path(path)
        parsed = parse_data_file_name(name)
        if parsed is not None:
            out[(partition, parsed.file_id)] = ("base", path)
    return out


def _groups(state: TableState, instant: Instant) -> set[tuple[str, str]]:
    """The file groups ``instant`` wrote or replaced; none for rewrites without change."""
    metadata = state.timeline.commit_metadata(instant)
    if metadata.operation_type.upper() in NO_CHANGE_OPERATIONS:
        return set()
    groups = {
        (stat.partition_path if stat.partition_path is not None else partition, stat.file_id)
        for partition, stats in metadata.partition_to_write_stats.items()
        for stat in stats
    }
    for partition, file_ids in metadata.partition_to_replace_file_ids.items():
        groups.update((partition, f) for f in file_ids)
    return groups


def cdc_partitions(state: TableState, commits: list[tuple[str, Instant]]) -> list[CdcPartition]:
    """One input partition per file group the ``commits`` (``(offset time, instant)``, in
    offset order: completion time on table version 8, requested time on 6) changed."""
    context = _CdcContext(state.gw, state.merge_spec(state.options()), state.storage_schema)
    by_group: dict[tuple[str, str], list[_Change]] = {}
    for offset, instant in commits:
        groups = _groups(state, instant)
        if not groups:
            continue
        partitions = sorted({p for p, _ in groups})

        def plan_at(bound: str, parts: list[str] = partitions) -> ScanPlan:
            return plan_incremental(state.timeline, state.view, None, bound, partitions=parts)

        before, after = plan_at(plus_millis(offset, -1)), plan_at(offset)
        before_items, after_items = _items(before), _items(after)
        bare_before = replace(before, native_paths=[], merge_slices=[])
        bare_after = replace(after, native_paths=[], merge_slices=[])
        for group in sorted(groups):
            change = _Change(
                instant.requested_time,
                before_items.get(group),
                bare_before,
                after_items.get(group),
                bare_after,
            )
            if change.before is not None or change.after is not None:
                by_group.setdefault(group, []).append(change)
    return [CdcPartition(g, changes, context) for g, changes in sorted(by_group.items())]
