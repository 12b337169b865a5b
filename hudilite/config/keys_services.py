"""Table service keys: clean, archive, compaction, clustering, partition TTL, bootstrap."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_size,
)
from hudilite.config.registry import _key

# Clean (Hudi's HoodieCleanConfig; Hudi 1.x spells hoodie.cleaner.* as hoodie.clean.*).
KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"

CLEANER_POLICY = _key(
    "hoodie.cleaner.policy",
    KEEP_LATEST_COMMITS,
    "Which file versions the cleaner keeps.",
    aliases=("hoodie.clean.policy", "clean.policy"),
    parse=choice(KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS),
    scope="service",
)
CLEANER_COMMITS_RETAINED = _key(
    "hoodie.cleaner.commits.retained",
    10,
    "Commits whose files the cleaner keeps (KEEP_LATEST_COMMITS).",
    aliases=("hoodie.clean.commits.retained", "clean.retain_commits"),
    parse=parse_int,
    scope="service",
)
CLEANER_FILE_VERSIONS_RETAINED = _key(
    "hoodie.cleaner.fileversions.retained",
    3,
    "File slices per file group KEEP_LATEST_FILE_VERSIONS keeps.",
    aliases=("hoodie.clean.fileversions.retained", "clean.retain_file_versions"),
    parse=parse_int,
    scope="service",
)
CLEANER_HOURS_RETAINED = _key(
    "hoodie.cleaner.hours.retained",
    24,
    "Hours of commits KEEP_LATEST_BY_HOURS keeps.",
    aliases=("hoodie.clean.hours.retained", "clean.retain_hours"),
    parse=parse_int,
    scope="service",
)
CLEAN_TRIGGER_STRATEGY = _key(
    "hoodie.clean.trigger.strategy",
    "NUM_COMMITS",
    "When the inline clean and run_clean(schedule_in_line) plan a clean: NUM_COMMITS (the only "
    "strategy).",
    parse=choice("NUM_COMMITS"),
    scope="service",
)
CLEAN_MAX_COMMITS = _key(
    "hoodie.clean.max.commits",
    1,
    "NUM_COMMITS trigger: commits since the last clean before a new one is planned (the inline "
    "clean after a write and run_clean(schedule_in_line)).",
    parse=parse_int,
    scope="service",
)
AUTO_CLEAN = _key(
    "hoodie.clean.automatic",
    True,
    "Clean after each commit.",
    aliases=("clean.async.enabled", "hoodie.clean.async.enabled"),
    parse=parse_bool,
    scope="service",
)
AUTO_ARCHIVE = _key(
    "hoodie.archive.automatic",
    True,
    "Archive old instants after each commit (beyond hoodie.keep.max.commits).",
    parse=parse_bool,
    scope="service",
)
KEEP_MIN_COMMITS = _key(
    "hoodie.keep.min.commits",
    20,
    "Archival keeps at least this many.",
    aliases=("archive.min_commits",),
    parse=parse_int,
    scope="service",
)
KEEP_MAX_COMMITS = _key(
    "hoodie.keep.max.commits",
    30,
    "Archival starts above this many.",
    aliases=("archive.max_commits",),
    parse=parse_int,
    scope="service",
)
ARCHIVAL_BATCH = _key(
    "hoodie.commits.archival.batch",
    10,
    "Instants per archive batch.",
    parse=parse_int,
    scope="service",
)
LSM_COMPACTION_BATCH = _key(
    "hoodie.timeline.compaction.batch.size",
    10,
    "LSM timeline files merged at once.",
    parse=parse_int,
    scope="service",
)
INLINE_COMPACT = _key(
    "hoodie.compact.inline",
    False,
    "Schedule (when triggered) and run compaction of MOR tables after each write.",
    parse=parse_bool,
    scope="service",
)
SCHEDULE_INLINE_COMPACT = _key(
    "hoodie.compact.schedule.inline",
    False,
    "Only schedule compaction plans after writes (when triggered); a separate run executes them.",
    aliases=("compaction.schedule.enabled",),
    parse=parse_bool,
    scope="service",
)
ASYNC_COMPACT = _key(
    "hoodie.datasource.compaction.async.enable",
    True,
    "Streaming writes (Table.write_stream) into MOR tables: schedule compaction after commits "
    "(when triggered) and run it in a background thread of the driver, beside ingestion "
    "(off when hoodie.compact.inline=true). A batch write has no stream to run beside: there "
    "a value given stands for hoodie.compact.inline, as Flink's option does.",
    aliases=("hoodie.compact.async", "compaction.async.enabled"),
    parse=parse_bool,
    scope="service",
    # Why feed: a batch write cannot compact asynchronously; compacting after the write is
    # the nearest meaning (and what compaction.async.enabled always meant here).
    feeds=((INLINE_COMPACT, lambda v: "true" if parse_bool(v) else "false"),),
)
INLINE_COMPACT_DELTA_COMMITS = _key(
    "hoodie.compact.inline.max.delta.commits",
    5,
    "Delta commits (since the last compaction) that trigger a compaction plan.",
    aliases=("compaction.delta_commits",),
    parse=parse_int,
    scope="service",
)
TRIGGER_STRATEGIES = (
    "NUM_COMMITS",
    "NUM_COMMITS_AFTER_LAST_REQUEST",
    "TIME_ELAPSED",
    "NUM_AND_TIME",
    "NUM_OR_TIME",
)
COMPACT_TRIGGER_STRATEGY = _key(
    "hoodie.compact.inline.trigger.strategy",
    "NUM_COMMITS",
    "When to schedule a compaction: " + ", ".join(TRIGGER_STRATEGIES) + ".",
    aliases=("compaction.trigger.strategy",),
    parse=choice(*TRIGGER_STRATEGIES),
    scope="service",
)
COMPACT_DELTA_SECONDS = _key(
    "hoodie.compact.inline.max.delta.seconds",
    3600,
    "Seconds since the last compaction that trigger one (TIME_ELAPSED and friends).",
    aliases=("compaction.delta_seconds",),
    parse=parse_int,
    scope="service",
)
COMPACTION_TARGET_IO_MB = _key(
    "hoodie.compaction.target.io",
    500 * 1024,
    "MB of IO (read + write) one compaction plan may spend (BoundedIOCompactionStrategy).",
    aliases=("compaction.target_io",),
    parse=parse_int,
    scope="service",
)
COMPACTION_ORDER = _key(
    "hoodie.compaction.order",
    "FIFO",
    "Order in which pending compaction plans run: FIFO (oldest first) or LIFO.",
    aliases=("compaction.seq",),
    parse=choice("FIFO", "LIFO"),
    scope="service",
)
# Clustering (Hudi's HoodieClusteringConfig, SparkSizeBasedClusteringPlanStrategy defaults).
CLUSTERING_SMALL_FILE_LIMIT = _key(
    "hoodie.clustering.plan.strategy.small.file.limit",
    314572800,
    "Only file slices whose base file is smaller than this are clustered.",
    parse=parse_size,
    scope="service",
)
CLUSTERING_MAX_BYTES_PER_GROUP = _key(
    "hoodie.clustering.plan.strategy.max.bytes.per.group",
    2147483648,
    "Input bytes one clustering group may hold (a log-only slice counts as a max-size file).",
    parse=parse_size,
    scope="service",
)
CLUSTERING_TARGET_FILE_MAX_BYTES = _key(
    "hoodie.clustering.plan.strategy.target.file.max.bytes",
    1073741824,
    "Target size of clustering output files: a group writes ceil(bytes / this) files.",
    aliases=("clustering.plan.strategy.target.file.max.bytes",),
    parse=parse_size,
    scope="service",
)
CLUSTERING_MAX_NUM_GROUPS = _key(
    "hoodie.clustering.plan.strategy.max.num.groups",
    30,
    "Clustering groups one plan may hold (per partition and in total).",
    aliases=("clustering.plan.strategy.max.num.groups",),
    parse=parse_int,
    scope="service",
)
CLUSTERING_SORT_COLUMNS = _key(
    "hoodie.clustering.plan.strategy.sort.columns",
    None,
    "Columns clustering sorts the rows of each group by (comma-separated).",
    aliases=("clustering.plan.strategy.sort.columns",),
    parse=parse_fields,
    scope="service",
)
CLUSTERING_SINGLE_GROUP = _key(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled",
    True,
    "Cluster a partition even when it yields a group of one file slice.",
    parse=parse_bool,
    scope="service",
)
CLUSTERING_PARTITION_FILTER_MODE = _key(
    "hoodie.clustering.plan.partition.filter.mode",
    "NONE",
    "Partitions to plan: NONE (all), SELECTED_PARTITIONS, RECENT_DAYS (DAY_ROLLING unsupported).",
    aliases=("clustering.plan.partition.filter.mode",),
    parse=choice("NONE", "SELECTED_PARTITIONS", "RECENT_DAYS", "DAY_ROLLING"),
    scope="service",
)
CLUSTERING_PARTITION_SELECTED = _key(
    "hoodie.clustering.plan.strategy.partition.selected",
    None,
    "Comma-separated partition paths to cluster (overrides the regex pattern).",
    aliases=("clustering.plan.strategy.partition.selected",),
    parse=parse_fields,
    scope="service",
)
CLUSTERING_PARTITION_REGEX = _key(
    "hoodie.clustering.plan.strategy.partition.regex.pattern",
    None,
    "Only partitions whose path fully matches this Java-style regex are clustered.",
    aliases=("clustering.plan.strategy.partition.regex.pattern",),
    scope="service",
)
CLUSTERING_BEGIN_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.begin.partition",
    None,
    "SELECTED_PARTITIONS mode: first partition path (inclusive) of the range to cluster.",
    aliases=("clustering.plan.strategy.cluster.begin.partition",),
    scope="service",
)
CLUSTERING_END_PARTITION = _key(
    "hoodie.clustering.plan.strategy.cluster.end.partition",
    None,
    "SELECTED_PARTITIONS mode: last partition path (inclusive) of the range to cluster.",
    aliases=("clustering.plan.strategy.cluster.end.partition",),
    scope="service",
)
CLUSTERING_LOOKBACK_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions",
    2,
    "RECENT_DAYS mode: how many of the latest partitions to cluster.",
    aliases=("clustering.plan.strategy.daybased.lookback.partitions",),
    parse=parse_int,
    scope="service",
)
CLUSTERING_SKIP_LATEST_PARTITIONS = _key(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions",
    0,
    "RECENT_DAYS mode: how many of the very latest partitions to skip.",
    aliases=("clustering.plan.strategy.daybased.skipfromlatest.partitions",),
    parse=parse_int,
    scope="service",
)
LAYOUT_OPTIMIZE_STRATEGY = _key(
    "hoodie.layout.optimize.strategy",
    "linear",
    "How clustering orders rows by the sort columns: linear (z-order and hilbert unsupported).",
    parse=choice("linear", "z-order", "zorder", "hilbert", upper=False),
    scope="service",
)
PARTITION_TTL_INLINE = _key(
    "hoodie.partition.ttl.inline",
    False,
    "Run partition TTL after every commit.",
    parse=parse_bool,
    scope="service",
    unsupported="hudilite runs partition TTL only when asked: CALL run_ttl",
    ignore_values=("false",),
)
PARTITION_TTL_STRATEGY_CLASS = _key(
    "hoodie.partition.ttl.strategy.class",
    None,
    "Partition TTL strategy class: Hudi's KeepByTimeStrategy or KeepByCreationTimeStrategy "
    "(wins over the strategy type).",
    scope="service",
)
PARTITION_TTL_STRATEGY_TYPE = _key(
    "hoodie.partition.ttl.management.strategy.type",
    "KEEP_BY_TIME",
    "Partition TTL strategy: KEEP_BY_TIME (a partition's latest file slice) or "
    "KEEP_BY_CREATION_TIME (the commit that created the partition).",
    parse=choice("KEEP_BY_TIME", "KEEP_BY_CREATION_TIME"),
    scope="service",
)
PARTITION_TTL_DAYS_RETAIN = _key(
    "hoodie.partition.ttl.strategy.days.retain",
    -1,
    "Partition TTL: days a partition is kept after its reference time (<= 0: none expire).",
    parse=parse_int,
    scope="service",
)
PARTITION_TTL_PARTITION_SELECTED = _key(
    "hoodie.partition.ttl.strategy.partition.selected",
    None,
    "Partition TTL: comma-separated partition paths to consider (default: every partition).",
    scope="service",
)
PARTITION_TTL_MAX_DELETE = _key(
    "hoodie.partition.ttl.strategy.max.delete.partitions",
    1000,
    "Partition TTL: at most this many partitions deleted per run.",
    parse=parse_int,
    scope="service",
)
# Bootstrap (CALL run_bootstrap, FULL_RECORD mode only).
BOOTSTRAP_REGEX = _key(
    "hoodie.bootstrap.mode.selector.regex",
    ".*",
    "BootstrapRegexModeSelector: source partitions matching this regex get "
    "hoodie.bootstrap.mode.selector.regex.mode, the others the other mode.",
    scope="service",
)
BOOTSTRAP_REGEX_MODE = _key(
    "hoodie.bootstrap.mode.selector.regex.mode",
    "METADATA_ONLY",
    "BootstrapRegexModeSelector: the mode of matching partitions (METADATA_ONLY or "
    "FULL_RECORD); hudilite bootstraps FULL_RECORD partitions only.",
    parse=choice("METADATA_ONLY", "FULL_RECORD"),
    scope="service",
)
