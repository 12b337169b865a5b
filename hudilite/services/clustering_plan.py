"""Clustering plans: which file slices to rewrite together, as Hudi's Spark planner picks them.

A plan is the Avro ``HoodieRequestedReplaceMetadata`` (``operationType=CLUSTER``) holding a
``HoodieClusteringPlan`` in the requested file of the clustering instant: ``T.clustering.
requested`` on table version 8+ (Hudi 1.x's ``clustering`` action, completed as
``T_C.replacecommit``), ``T.replacecommit.requested`` on version 6. Each input group lists
``HoodieSliceInfo`` records (full paths of the base and log files, as Hudi writes them),
the number of output files and Hudi's file-slice metrics; the strategy names Hudi's
``SparkSortAndSizeExecutionStrategy`` with the sort columns in its parameters, so the
order chosen at scheduling is the order used at execution, whoever executes it.

Planning follows ``SparkSizeBasedClusteringPlanStrategy`` (Hudi's Spark default):

* partitions: all, or ``hoodie.clustering.plan.strategy.partition.selected`` verbatim, else
  those fully matching ``...partition.regex.pattern``; then the filter mode
  (``SELECTED_PARTITIONS`` with an optional begin/end range, ``RECENT_DAYS``);
* per partition, the latest slices of file groups not named by a pending compaction or
  clustering plan whose base file is below ``...small.file.limit`` (300 MB; a log-only
  slice counts as 0 bytes here) are sorted by base file size, largest first (a log-only
  slice counts as ``hoodie.parquet.max.file.size``), and packed into groups of at most
  ``...max.bytes.per.group`` (2 GB); each group writes ceil(size /
  ``...target.file.max.bytes``) files; a lone slice forms a group only with
  ``...single.group.clustering.enabled`` (default true) or sort columns;
* at most ``...max.num.groups`` (30) groups per partition and per plan.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError, CorruptFileError, HudiliteError, InstantNotFoundError
from hudilite.filegroup.slices import FileSlice
from hudilite.services._common import OptionsLike, pending_plan_groups, resolve_options
from hudilite.services.table_service import io_metrics
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLUSTERING, REPLACE_COMMIT, Instant, State
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.timeline import Timeline

CLUSTER_OPERATION = cfg.CLUSTER_OPERATION  # re-exported
CLUSTERING_PLAN_VERSION = 1
EXECUTION_STRATEGY = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
)
SORT_COLUMNS_PARAM = cfg.CLUSTERING_SORT_COLUMNS.name

_MB = 1024 * 1024


def _name(path: str) -> str:
    return posixpath.basename(path.rstrip("/"))


@dataclass(frozen=True)
class ClusteringSlice:
    """One input file slice (a ``HoodieSliceInfo``). ``data_file_path`` and
    ``delta_file_paths`` are kept as written (full URIs from Hudi and hudilite); readers use
    only the file names, so a moved table still executes its plans."""

    partition_path: str
    file_id: str
    data_file_path: str = ""  # "" for a log-only slice, as Hudi writes it
    delta_file_paths: tuple[str, ...] = ()
    bootstrap_file_path: str = ""

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)``."""
        return (self.partition_path, self.file_id)

    @property
    def data_file(self) -> str | None:
        """The base file name, None for a log-only slice."""
        return _name(self.data_file_path) if self.data_file_path else None

    @property
    def delta_files(self) -> tuple[str, ...]:
        """The log file names, in the plan's order."""
        return tuple(_name(p) for p in self.delta_file_paths)

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieSliceInfo`` record."""
        return {
            "dataFilePath": self.data_file_path,
            "deltaFilePaths": list(self.delta_file_paths),
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "bootstrapFilePath": self.bootstrap_file_path,
            "version": 1,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> ClusteringSlice:
        """Read a ``HoodieSliceInfo``."""
        return cls(
            partition_path=record.get("partitionPath") or "",
            file_id=record.get("fileId") or "",
            data_file_path=record.get("dataFilePath") or "",
            delta_file_paths=tuple(record.get("deltaFilePaths") or ()),
            bootstrap_file_path=record.get("bootstrapFilePath") or "",
        )


@dataclass(frozen=True)
class ClusteringGroup:
    """One input group (a ``HoodieClusteringGroup``): slices of one partition rewritten
    together into ``num_output_file_groups`` new file groups."""

    slices: tuple[ClusteringSlice, ...]
    num_output_file_groups: int = 1
    metrics: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False)

    @property
    def partition_path(self) -> str:
        """The partition of the group's slices."""
        return self.slices[0].partition_path if self.slices else ""

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieClusteringGroup`` record."""
        return {
            "slices": [s.to_avro() for s in self.slices],
            "metrics": dict(self.metrics),
            "numOutputFileGroups": self.num_output_file_groups,
            "extraMetadata": None,
            "version": 1,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> ClusteringGroup:
        """Read a ``HoodieClusteringGroup``."""
        return cls(
            slices=tuple(ClusteringSlice.from_avro(s) for s in record.get("slices") or ()),
            num_output_file_groups=int(record.get("numOutputFileGroups") or 1),
            metrics=dict(record.get("metrics") or {}),
        )


@dataclass(frozen=True)
class ClusteringPlan:
    """The content of a clustering instant's requested file."""

    instant_time: str
    groups: tuple[ClusteringGroup, ...]
    strategy_params: Mapping[str, str] = field(default_factory=dict, compare=False)
    strategy_class: str = EXECUTION_STRATEGY
    version: int = CLUSTERING_PLAN_VERSION
    preserve_metadata: bool = True

    @property
    def sort_columns(self) -> tuple[str, ...]:
        """Columns the execution sorts each group's rows by (from the strategy params)."""
        return cfg.parse_fields(self.strategy_params.get(SORT_COLUMNS_PARAM) or "")

    @property
    def slices(self) -> list[ClusteringSlice]:
        """Every input slice, group by group."""
        return [s for g in self.groups for s in g.slices]

    @property
    def file_groups(self) -> set[tuple[str, str]]:
        """``(partition, file_id)`` of every input file group."""
        return {s.group_key for s in self.slices}

    @property
    def partitions(self) -> tuple[str, ...]:
        """Partitions the plan touches, sorted."""
        return tuple(sorted({s.partition_path for s in self.slices}))

    @property
    def involved_partitions(self) -> str:
        """Hudi's ``HoodieCLIUtils.extractPartitions``: the partition of every slice, sorted,
        comma-joined (one entry per slice, duplicates included, as Hudi prints them)."""
        return ",".join(sorted(s.partition_path for s in self.slices))

    def replaced_file_ids(self) -> dict[str, list[str]]:
        """``partitionToReplaceFileIds`` of the completed clustering: every input group."""
        out: dict[str, list[str]] = {}
        for s in self.slices:
            ids = out.setdefault(s.partition_path, [])
            if s.file_id not in ids:
                ids.append(s.file_id)
        return out

    def to_avro_bytes(self) -> bytes:
        """An Avro container of one ``HoodieRequestedReplaceMetadata`` (as Hudi 1.x writes)."""
        plan = {
            "inputGroups": [g.to_avro() for g in self.groups],
            "strategy": {
                "strategyClassName": self.strategy_class,
                "strategyParams": dict(self.strategy_params),
                "version": 1,
            },
            "extraMetadata": {},
            "version": self.version,
            "preserveHoodieMetadata": self.preserve_metadata,
            "missingSchedulePartitions": [],
        }
        return write_avro_record(
            "HoodieRequestedReplaceMetadata",
            {
                "operationType": CLUSTER_OPERATION,
                "clusteringPlan": plan,
                "extraMetadata": {},
                "version": 1,
            },
        )

    @classmethod
    def from_record(cls, instant_time: str, record: Mapping[str, Any]) -> ClusteringPlan:
        """Build from a decoded ``HoodieRequestedReplaceMetadata`` holding a plan."""
        plan = record.get("clusteringPlan")
        if not plan:
            raise CorruptFileError(f"replace request {instant_time} holds no clustering plan")
        strategy = plan.get("strategy") or {}
        return cls(
            instant_time=instant_time,
            groups=tuple(ClusteringGroup.from_avro(g) for g in plan.get("inputGroups") or ()),
            strategy_params=dict(strategy.get("strategyParams") or {}),
            strategy_class=strategy.get("strategyClassName") or EXECUTION_STRATEGY,
            version=int(plan.get("version") or CLUSTERING_PLAN_VERSION),
            preserve_metadata=bool(plan.get("preserveHoodieMetadata", True)),
        )

    @classmethod
    def from_bytes(cls, instant_time: str, data: bytes) -> ClusteringPlan:
        """Decode a requested file written by Hudi or hudilite."""
        return cls.from_record(instant_time, read_avro_record(data))


# ------------------------------------------------------------------- plans on the timeline


def pending_action(layout_version: int) -> str:
    """The action a pending clustering is written under: ``clustering`` on timeline layout 2,
    ``replacecommit`` on layout 1 (Hudi 0.x has no clustering action)."""
    return CLUSTERING if layout_version >= 2 else REPLACE_COMMIT


def _plan_record(timeline: Timeline, requested_time: str) -> dict[str, Any] | None:
    """The decoded requested file of ``requested_time`` when it is a clustering plan."""
    # Instant(..., CLUSTERING) names `T.clustering.requested` on layout 2 and
    # `T.replacecommit.requested` on layout 1, the two places a plan lives.
    try:
        data = timeline.instant_content(Instant(requested_time, CLUSTERING, State.REQUESTED))
    except HudiliteError:
        return None
    if not data.strip():
        return None  # an insert overwrite's empty request
    try:
        record = read_avro_record(data)
    except HudiliteError:
        return None
    if record.get("operationType") != CLUSTER_OPERATION or not record.get("clusteringPlan"):
        return None  # e.g. a partition delete's request
    return record


def clustering_instants(timeline: Timeline) -> list[tuple[Instant, ClusteringPlan]]:
    """Every clustering on the active timeline (any state) with its plan, oldest first.

    Pending ones are ``clustering`` (v8) or ``replacecommit`` (v6) instants, completed ones
    ``replacecommit`` instants; replace commits of other operations (insert overwrite,
    partition deletes) have no clustering plan and are left out.
    """
    out = []
    for inst in timeline.filter(actions=(CLUSTERING, REPLACE_COMMIT)):
        record = _plan_record(timeline, inst.requested_time)
        if record is not None:
            out.append((inst, ClusteringPlan.from_record(inst.requested_time, record)))
    return out


def pending_clusterings(timeline: Timeline) -> list[Instant]:
    """Pending clustering instants, oldest first."""
    return [inst for inst, _ in clustering_instants(timeline) if inst.is_pending]


def read_clustering_plan(state: TableState, instant_time: str) -> ClusteringPlan:
    """The plan of clustering ``instant_time`` (pending or completed)."""
    record = _plan_record(state.timeline, instant_time)
    if record is None:
        raise InstantNotFoundError(f"no clustering plan {instant_time} on the timeline")
    return ClusteringPlan.from_record(instant_time, record)


# ---------------------------------------------------------------------------- planning


def _metrics(slices: Sequence[FileSlice], max_file_size: int) -> dict[str, float]:
    """Hudi's ``FileSliceMetricUtils.addFileSliceCommonMetrics``, quirk included: the IO
    figures are those of the *last* slice (plus all logs so far), not sums."""
    num_logs = log_bytes = read_mb = write_mb = 0
    for s in slices:
        num_logs += len(s.log_files)
        log_bytes += sum(max(0, log.size) for log in s.log_files)
        base = s.base_file.size if s.base_file is not None else 0
        read_mb = (base + log_bytes) // _MB
        write_mb = (base if base > 0 else max_file_size) // _MB
    return io_metrics(num_logs, log_bytes, read_mb, write_mb)


def _slice_info(state: TableState, s: FileSlice) -> ClusteringSlice:
    return ClusteringSlice(
        partition_path=s.partition,
        file_id=s.file_id,
        data_file_path=state.gw.uri(s.base_file.path) if s.base_file is not None else "",
        delta_file_paths=tuple(state.gw.uri(log.path) for log in s.log_files),
    )


def candidate_partitions(state: TableState, opts: cfg.Options) -> list[str]:
    """Partitions the plan looks at (selection, regex, filter mode; see module doc)."""
    selected = opts.get(cfg.CLUSTERING_PARTITION_SELECTED)
    if selected:
        parts = [p.strip("/") for p in selected]
    else:
        parts = state.view.partitions()
        pattern = opts.get(cfg.CLUSTERING_PARTITION_REGEX)
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ConfigError(
                    f"invalid {cfg.CLUSTERING_PARTITION_REGEX.name} {pattern!r}: {exc}"
                ) from None
            parts = [p for p in parts if regex.fullmatch(p)]
    mode = opts.get(cfg.CLUSTERING_PARTITION_FILTER_MODE)
    if mode == "SELECTED_PARTITIONS":
        begin = opts.get(cfg.CLUSTERING_BEGIN_PARTITION)
        end = opts.get(cfg.CLUSTERING_END_PARTITION)
        parts = [p for p in parts if (begin is None or p >= begin) and (end is None or p <= end)]
    elif mode == "RECENT_DAYS":
        keep = int(opts.get(cfg.CLUSTERING_LOOKBACK_PARTITIONS))
        skip = max(0, int(opts.get(cfg.CLUSTERING_SKIP_LATEST_PARTITIONS)))
        ordered = sorted(parts, reverse=True)[skip:]
        parts = ordered[:keep] if keep > 0 else ordered
    elif mode == "DAY_ROLLING":
        raise ConfigError(
            f"{cfg.CLUSTERING_PARTITION_FILTER_MODE.name}=DAY_ROLLING is not supported; "
            "use NONE, SELECTED_PARTITIONS or RECENT_DAYS"
        )
    return parts


def _pack(
    slices: Sequence[FileSlice], opts: cfg.Options, max_file_size: int
) -> list[list[FileSlice]]:
    """``buildClusteringGroupsForPartition`` of Hudi's size-based strategy: the slices of one
    partition packed into groups, largest base files first."""
    max_group = int(opts.get(cfg.CLUSTERING_MAX_BYTES_PER_GROUP))
    max_groups = int(opts.get(cfg.CLUSTERING_MAX_NUM_GROUPS))
    single = bool(opts.get(cfg.CLUSTERING_SINGLE_GROUP)) or bool(
        opts.get(cfg.CLUSTERING_SORT_COLUMNS)
    )
    packed: list[list[FileSlice]] = []
    current: list[FileSlice] = []
    total = 0
    for s in sorted(slices, key=lambda s: -_planned_size(s, max_file_size)):  # stable sort
        if total + _planned_size(s, max_file_size) > max_group and current:
            packed.append(current)
            current, total = [], 0
            if len(packed) >= max_groups:
                break
        current.append(s)
        total += _planned_size(s, max_file_size)
    if current and (len(current) > 1 or single):
        packed.append(current)
    return packed[:max_groups]


def _planned_size(s: FileSlice, max_file_size: int) -> int:
    """Bytes a slice counts for when packing: its base file, or a max-size file for a
    log-only slice (Hudi's assumption)."""
    return s.base_file.size if s.base_file is not None else max_file_size


def validate_sort_columns(state: TableState, columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` as the table spells them (matched case-insensitively); a
    :class:`ConfigError` names a column the table does not have."""
    by_lower = {f.name.lower(): f.name for f in state.storage_schema}
    out = []
    for col in columns:
        name = by_lower.get(col.strip().lower())
        if name is None:
            raise ConfigError(
                f"clustering sort column {col!r} is not a column of {state.config.name} "
                f"(columns: {', '.join(f.name for f in state.data_schema)})"
            )
        out.append(name)
    return tuple(out)


def plan_groups(state: TableState, options: OptionsLike = None) -> list[ClusteringGroup]:
    """The input groups a clustering scheduled now would hold (no timeline change)."""
    opts = resolve_options(state, options)
    busy = set(pending_plan_groups(state.timeline))
    small = int(opts.get(cfg.CLUSTERING_SMALL_FILE_LIMIT))
    max_file_size = int(opts.get(cfg.MAX_FILE_SIZE))
    max_groups = int(opts.get(cfg.CLUSTERING_MAX_NUM_GROUPS))
    parts = candidate_partitions(state, opts)
    by_partition: dict[str, list[FileSlice]] = {p: [] for p in parts}
    for s in state.view.latest_slices(partitions=parts):
        size = s.base_file.size if s.base_file is not None else 0
        if s.group_key not in busy and size < small:
            by_partition.setdefault(s.partition, []).append(s)
    target = max(1, int(opts.get(cfg.CLUSTERING_TARGET_FILE_MAX_BYTES)))
    groups: list[ClusteringGroup] = []
    for p in parts:
        for members in _pack(by_partition.get(p, []), opts, max_file_size):
            nbytes = sum(_planned_size(s, max_file_size) for s in members)
            groups.append(
                ClusteringGroup(
                    slices=tuple(_slice_info(state, s) for s in members),
                    num_output_file_groups=max(1, math.ceil(nbytes / target)),
                    metrics=_metrics(members, max_file_size),
                )
            )
    return groups[:max_groups]


def plan_strategy_params(state: TableState, opts: cfg.Options) -> dict[str, str]:
    """The strategy parameters of a new plan: the sort columns, when set (validated)."""
    columns = opts.get(cfg.CLUSTERING_SORT_COLUMNS) or ()
    if not columns:
        return {}
    strategy = str(opts.get(cfg.LAYOUT_OPTIMIZE_STRATEGY))
    if strategy != "linear":
        raise ConfigError(
            f"{cfg.LAYOUT_OPTIMIZE_STRATEGY.name}={strategy} is not supported: hudilite sorts "
            "clustered rows linearly (use 'linear')"
        )
    return {SORT_COLUMNS_PARAM: ",".join(validate_sort_columns(state, columns))}
