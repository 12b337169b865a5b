"""Table service keys: clean, archive, compaction, clustering."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_size,
)
from hudilite.config.registry import _key

CLEANER_COMMITS_RETAINED = _key(
    "hoodie.cleaner.commits.retained", 10, "Commits whose files the cleaner keeps.", parse=parse_int
)
AUTO_CLEAN = _key("hoodie.clean.automatic", True, "Clean after each commit.", parse=parse_bool)
AUTO_ARCHIVE = _key(
    "hoodie.archive.automatic",
    True,
    "Archive old instants after each commit (beyond hoodie.keep.max.commits).",
    parse=parse_bool,
)
KEEP_MIN_COMMITS = _key(
    "hoodie.keep.min.commits", 20, "Archival keeps at least this many.", parse=parse_int
)
KEEP_MAX_COMMITS = _key(
    "hoodie.keep.max.commits", 30, "Archival starts above this many.", parse=parse_int
)
INLINE_COMPACT = _key(
    "hoodie.compact.inline",
    False,
    "Schedule (when triggered) and run compaction of MOR tables after each write.",
    aliases=("compaction.async.enabled",),
    parse=parse_bool,
)
SCHEDULE_INLINE_COMPACT = _key(
    "hoodie.compact.schedule.inline",
    False,
    "Only schedule compaction plans after writes (when triggered); a separate run executes them.",
    aliases=("compaction.schedule.enabled",),
    parse=parse_bool,
)
INLINE_COMPACT_DELTA_COMMITS = _key(
    "hoodie.compact.inline.max.delta.commits",
    5,
    "Delta commits that trigger inline compaction.",
    parse=parse_int,
)
# Clustering (Hudi's HoodieClusteringConfig, SparkSizeBasedClusteringPlanStrategy defaults).
CLUSTERING_SMALL_FILE_LIMIT = _key(
    "hoodie.clustering.plan.strategy.small.file.limit",
    314572800,
    "Only file slices whose base file is smaller than this are clustered.",
    parse=parse_size,
)
CLUSTERING_MAX_BYTES_PER_GROUP = _key(
    "hoodie.clustering.plan.strategy.max.bytes.per.group",
    2147483648,
    "Input bytes one clustering group may hold (a log-only slice counts as a max-size file).",
    parse=parse_size,
)
CLUSTERING_TARGET_FILE_MAX_BYTES = _key(
    "hoodie.clustering.plan.strategy.target.file.max.bytes",
    1073741824,
    "Target size of clustering output files: a group writes ceil(bytes / this) files.",
    parse=parse_size,
)
CLUSTERING_MAX_NUM_GROUPS = _key(
    "hoodie.clustering.plan.strategy.max.num.groups",
    30,
    "Clustering groups one plan may hold (per partition and in total).",
    parse=parse_int,
)
CLUSTERING_SORT_COLUMNS = _key(
    "hoodie.clustering.plan.strategy.sort.columns",
    None,
    "Columns clustering sorts the rows of each group by (comma-separated).",
    parse=parse_fields,
)
CLUSTERING_SINGLE_GROUP = _key(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled",
    True,
    "Cluster a partition even when it yields a group of one file slice.",
    parse=parse_bool,
)
CLUSTERING_PARTITION_FILTER_MODE = _key(
    "hoodie.clustering.plan.partition.filter.mode",
    "NONE",
    "Partitions to plan: NONE (all), SELECTED_PARTITIONS, RECENT_DAYS (DAY_ROLLING unsupported).",
    parse=choice("NONE", "SELECTED_PARTITIONS", "RECENT_DAYS", "DAY_ROLLING"),
)
CLUSTERING_PARTITION_SELECTED = _key(
    "hoodie.clustering.plan.strategy.partition.selected",
    None,
    "Comma-separated partition paths to cluster (overrides the regex pattern).",
    parse=parse_fields,
)
CLUSTERING_PARTITION_REGEX = _key(
    "hoodie.clustering.plan.strategy.partition.regex.pattern",
    None,
    "Only partitions whose path fully matches this Java-style regex are clustered.",
)
CLUSTERING_BEGIN_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.begin.partition",
    None,
    "SELECTED_PARTITIONS mode: first partition path (inclusive) of the range to cluster.",
)
CLUSTERING_END_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.end.partition",
    None,
    "SELECTED_PARTITIONS mode: last partition path (inclusive) of the range to cluster.",
)
CLUSTERING_LOOKBACK_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions",
    2,
    "RECENT_DAYS mode: how many of the latest partitions to cluster.",
    parse=parse_int,
)
CLUSTERING_SKIP_LATEST_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions",
    0,
    "RECENT_DAYS mode: how many of the very latest partitions to skip.",
    parse=parse_int,
)
LAYOUT_OPTIMIZE_STRATEGY = _key(
    "hoodie.layout.optimize.strategy",
    "linear",
    "How clustering orders rows by the sort columns: linear (z-order and hilbert unsupported).",
    parse=choice("linear", "z-order", "zorder", "hilbert", upper=False),
)
