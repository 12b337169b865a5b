"""The metadata table's ``partition_stats`` partition: column statistics per data partition.

Hudi 1.x (``hoodie.metadata.index.partition.stats.enable``, which needs column_stats) keeps
one record per (data partition, indexed column) in one file group ``partition-stats-0000-0``:
a ``HoodieMetadataColumnStats`` of type 6 whose ``fileName`` is the partition path, keyed
by the column's and the partition's hashes, with ``isTightBound`` true so a newer record
replaces the older one (:mod:`~hudilite.metadata.column_stats_records`). Hudi keeps none for
a non-partitioned table.

Each metadata deltacommit recomputes the record of every partition the data instant touched
(:func:`records_for`) from the column_stats records of the partition's files after the
instant: the latest base file of every file group not replaced by a completed replacecommit,
and all log files of those groups. That is Hudi's latest file slices, widened by older log
files (a log requested before a compaction may belong to the newer slice by its completion
time): the bounds cover every row a snapshot read of the latest state reads, which is all
data skipping uses them for (time travel reads older slices and skips by column_stats
only). A partition left without files gets a tombstone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hudilite import config as cfg
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import (
    BaseFileName,
    LogFileName,
    parse_data_file_name,
)
from hudilite.tablestate import properties_file
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.timeline import Timeline

PARTITION = "partition_stats"
FILE_ID = "partition-stats-0000-0"
#: Its initialization instant (Hudi's offset after files, column_stats and record_index).
INIT_INSTANT = "00000000000000003"
PART_DIR = join(mt.METADATA_DIR, PARTITION)


def enabled(options: Mapping[str, str]) -> bool:
    """``hoodie.metadata.index.partition.stats.enable`` (with column_stats on)."""
    opts = cfg.Options(dict(options))
    return bool(opts.get(cfg.METADATA_PARTITION_STATS_ENABLED)) and cs.enabled(options)


def listed(props: Mapping[str, str]) -> bool:
    """True when ``hoodie.table.metadata.partitions`` lists this partition."""
    raw = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
    return PARTITION in [p.strip() for p in raw.split(",")]


def slice_files(files: Iterable[str], replaced: set[str]) -> list[str]:
    """The files of a partition whose statistics make its aggregate (see the module
    docstring): per file group not in ``replaced``, its latest base file and its logs."""
    bases: dict[str, tuple[str, str]] = {}
    logs: dict[str, list[str]] = {}
    for name in files:
        parsed = parse_data_file_name(name)
        if isinstance(parsed, BaseFileName):
            seen = bases.get(parsed.file_id)
            if seen is None or parsed.instant_time > seen[0]:
                bases[parsed.file_id] = (parsed.instant_time, name)
        elif isinstance(parsed, LogFileName) and parsed.extension == "log":
            logs.setdefault(parsed.file_id, []).append(name)
    groups = (set(bases) | set(logs)) - replaced
    return sorted(
        [bases[g][1] for g in groups if g in bases] + [n for g in groups for n in logs.get(g, [])]
    )


def aggregate(
    partition: str, columns: Sequence[str], files: Sequence[csr.ColumnStats]
) -> list[csr.ColumnStats]:
    """The partition's record per column from its files' live column_stats records (a
    tombstone per column when it has none)."""
    out = []
    for column in columns:
        mine = [r for r in files if r.column == column and not r.deleted]
        if not mine:
            out.append(
                csr.ColumnStats(
                    partition,
                    rec.partition_id(partition),
                    column,
                    deleted=True,
                    record_type=csr.PARTITION_STATS_TYPE,
                )
            )
            continue
        total = mine[0]
        for r in mine[1:]:
            total = csr.merge(total, r)
        out.append(
            csr.ColumnStats(
                partition,
                rec.partition_id(partition),
                column,
                total.min,
                total.max,
                total.value_count,
                total.null_count,
                total.total_size,
                total.total_uncompressed_size,
                value_type=total.value_type,
                additional_info=total.additional_info,
                wrapper=total.wrapper,
                record_type=csr.PARTITION_STATS_TYPE,
                tight=True,
            )
        )
    return out


def compute(
    gw: FileSystemGateway,
    props: Mapping[str, str],
    partitions: Iterable[str],
    listing: Mapping[str, Mapping[str, int]],
    column_records: Mapping[str, csr.ColumnStats],
) -> list[csr.ColumnStats]:
    """The records of ``partitions`` given the table's ``listing`` (partition -> files) and
    merged ``column_records`` (column_stats by key), both as of after the instant."""
    _, columns = cs.table_columns(gw, props)
    config = cfg.TableConfig.from_properties(dict(props))
    replaced = Timeline.load(gw, config).replaced_file_ids()
    out = []
    for partition in sorted(set(partitions)):
        gone = {fid for p, fid in replaced if p == partition}
        names = slice_files(listing.get(partition, {}), gone)
        recs = [
            r
            for name in names
            for c in columns
            if (r := column_records.get(csr.stats_key(partition, name, c))) is not None
        ]
        out.extend(aggregate(partition, columns, recs))
    return out


def records_for(
    gw: FileSystemGateway,
    props: Mapping[str, str],
    files_records: Sequence[rec.FilesRecord],
    new_stats: Sequence[csr.ColumnStats],
) -> list[csr.ColumnStats]:
    """The partition_stats records of a data instant: its files-partition records and its
    column_stats records ``new_stats`` applied to the current partitions."""
    config = cfg.TableConfig.from_properties(dict(props))
    timeline = Timeline.load(gw, config)
    files = rec.merge_all([mt.read_files_partition(gw, timeline).values(), files_records])
    listing = mt.listing_of(files)
    touched = [
        rec.partition_path(r.key)
        for r in files_records
        if r.type == rec.FILE_LIST and rec.partition_path(r.key)
    ]
    _, columns = cs.table_columns(gw, props)
    keys = frozenset(  # only the touched partitions' files are decoded
        csr.stats_key(p, name, c)
        for p in set(touched)
        for name in listing.get(p, {})
        for c in columns
    )
    stored = cs.read_partition(gw, timeline, keys=keys)
    column_records = csr.merge_all([stored.values(), new_stats])
    return compute(gw, props, touched, listing, column_records)


def write_log(
    gw: FileSystemGateway, instant_time: str, records: Sequence[csr.ColumnStats]
) -> list[WriteStat]:
    """The deltacommit's log file of ``partition-stats-0000-0`` (none without records)."""
    if not records:
        return []
    return cs.write_logs(gw, instant_time, records, part=PARTITION, file_ids=[FILE_ID])


def remove(gw: FileSystemGateway) -> None:
    """Drop the partition (unlisted first, then its folder and initialization instant)."""
    cs.remove(gw, part=PARTITION, init_instant=INIT_INSTANT)


def initialize(gw: FileSystemGateway) -> int:
    """Build the partition from column_stats (which the caller keeps, under the table lock);
    returns the number of records written. A non-partitioned table gets none, as Hudi's."""
    remove(gw)
    props = properties_file.load(gw)
    config = cfg.TableConfig.from_properties(props)
    timeline = Timeline.load(gw, config)
    listing = mt.listing_of(mt.read_files_partition(gw, timeline))
    column_records = cs.read_partition(gw, timeline)
    records = compute(gw, props, [p for p in listing if p], listing, column_records)
    records = [r for r in records if not r.deleted]
    ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
    mt.write_initial_slices(gw, PARTITION, INIT_INSTANT, [(FILE_ID, ordered)], cs.encode_hfile)
    cs.add_listed(gw, PARTITION)
    return len(ordered)


def read_partition(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    timeline: mt.MetadataTimeline | None = None,
    keys: frozenset[str] | None = None,
) -> dict[str, csr.ColumnStats]:
    """Every key's merged record (see :func:`hudilite.metadata.column_stats.read_partition`)."""
    return cs.read_partition(gw, data_timeline, timeline, part=PARTITION, keys=keys)


def partition_key(partition: str, column: str) -> str:
    """The key of a partition's record of ``column``."""
    return csr.hash64_id(column) + csr.hash64_id(rec.partition_id(partition))


def by_partition(
    records: Mapping[str, csr.ColumnStats], partitions: Iterable[str], columns: Iterable[str]
) -> dict[str, dict[str, csr.ColumnStats]]:
    """data partition -> column -> live record, for the partitions and columns asked."""
    cols = list(columns)
    out: dict[str, dict[str, csr.ColumnStats]] = {}
    for partition in partitions:
        found = {}
        for column in cols:
            record = records.get(partition_key(partition, column))
            if record is not None and not record.deleted:
                found[column] = record
        out[partition] = found
    return out
