"""The metadata table's ``column_stats`` partition, as Hudi 1.x lays it out and keeps it.

Layout: ``.hoodie/metadata/column_stats/`` holds :data:`FILE_GROUPS` file groups
``col-stats-000N-0`` (``hoodie.metadata.index.column.stats.file.group.count``, 2); a record
goes to the group its key hashes to (:func:`~hudilite.metadata.column_stats_records.
file_group_index`). Records: :mod:`~hudilite.metadata.column_stats_records`; the statistics
of a data file: :mod:`~hudilite.metadata.column_stats_files`.

* :func:`initialize` builds the partition from the files partition's listing (every live
  base and log file), as Hudi's ``initializeFromFilesystem`` does when the option is turned
  on: the instant ``00000000000000001`` (Hudi's second initialization offset) with a base
  file per file group holding records, an empty log file per group, and only then
  ``column_stats`` in ``hoodie.table.metadata.partitions``.
* :func:`write_logs` is called by :func:`hudilite.metadata.sync.before_complete` inside each
  metadata deltacommit, from the files-partition records of the data instant: every file the
  instant adds (new base and log files of commits, deltacommits, replacecommits and
  compactions) gets its statistics, read from storage; every file it deletes (clean, a
  rollback deleting a completed instant's files) gets a tombstone per indexed column. A
  rollback of an instant whose deltacommit is rolled back removes that deltacommit's logs
  here too (``sync.remove_deltacommit``), and a restore rebuilds the partition.
* :func:`read_partition` merges, per file group, the latest base file (the initialization's
  or a completed compaction's, Hudi's included) with the HFILE blocks of logs of completed
  deltacommits completed after it whose data instant completed (the files partition's rule),
  and :func:`stats_by_file` hands data skipping the live statistics of each file.

The metadata table's compaction and clean (:mod:`~hudilite.metadata.compact`,
:mod:`~hudilite.metadata.clean`) cover this partition's file groups too
(:mod:`~hudilite.metadata.column_stats_compact`); Hudi's compactions of it are read. Data
skipping reads only the keys of a read's files and columns (:func:`read_partition`'s
``keys``). On version 9 tables its index definition is recorded (:func:`write_definition`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa

from hudilite import config as cfg
from hudilite.metadata import column_stats_files as csf
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import hfiles
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.schema import avro_to_arrow_schema, with_meta_columns
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.hfile import (
    BLOOM_FILTER_META_BLOCK,
    BLOOM_FILTER_TYPE_CODE,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    SCHEMA_KEY,
    HFileReader,
    HFileWriter,
)
from hudilite.storage.layout import (
    BaseFileName,
    LogFileName,
    parse_data_file_name,
)
from hudilite.storage.log_format import (
    BlockType,
    HeaderKey,
    LogBlock,
    read_log_file,
)
from hudilite.tablestate import properties_file
from hudilite.timeline.instant import Instant
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.timeline import Timeline

PARTITION = "column_stats"
FILE_ID_PREFIX = "col-stats"
FILE_GROUPS = 2
#: The initialization instant (``createIndexInitTimestamp(SOLO_COMMIT_TIMESTAMP, 1)``).
INIT_INSTANT = "00000000000000001"
PART_DIR = join(mt.METADATA_DIR, PARTITION)
#: Where Hudi keeps index definitions unless ``hoodie.table.index.defs.path`` says otherwise.
DEFAULT_INDEX_DEFS = ".hoodie/.index_defs/index.json"


def file_id(index: int) -> str:
    """The file group ``col-stats-000N-0``."""
    return f"{FILE_ID_PREFIX}-{index:04d}-0"


def enabled(options: Mapping[str, str]) -> bool:
    """``hoodie.metadata.index.column.stats.enable`` of the table's options."""
    return bool(cfg.Options(dict(options)).get(cfg.METADATA_COLUMN_STATS_ENABLED))


def listed(props: Mapping[str, str]) -> bool:
    """True when ``hoodie.table.metadata.partitions`` lists this partition."""
    raw = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
    return PARTITION in [p.strip() for p in raw.split(",")]


def table_columns(gw: FileSystemGateway, props: Mapping[str, str]) -> tuple[pa.Schema, list[str]]:
    """The table's Arrow schema (its latest, as every reader takes it; meta columns first)
    and the columns whose
    statistics are kept (``hoodie.metadata.index.column.stats.column.list``, else Hudi's
    default)."""
    config = cfg.TableConfig.from_properties(dict(props))
    schema_json = Timeline.load(gw, config).schema_json(config.create_schema)
    if not schema_json:
        return pa.schema([]), []
    schema = avro_to_arrow_schema(schema_json)
    options = {**props, **properties_file.read_write_defaults(gw)}
    raw = cfg.Options(options).get(cfg.METADATA_COLUMN_STATS_COLUMNS) or ""
    wanted = [c.strip() for c in str(raw).split(",") if c.strip()]
    columns = csf.columns_to_index(schema, wanted, meta_fields=config.populate_meta_fields)
    return with_meta_columns(schema), columns


def file_stats(
    gw: FileSystemGateway,
    partition: str,
    name: str,
    schema: pa.Schema,
    columns: Sequence[str],
) -> list[csr.ColumnStats]:
    """The statistics of the data file ``name`` of ``partition`` (none for other files)."""
    rel = join(partition, name) if partition else name
    parsed = parse_data_file_name(name)
    if isinstance(parsed, BaseFileName) and name.endswith(".parquet"):
        return csf.parquet_stats(gw, rel, partition, columns)
    if isinstance(parsed, LogFileName) and parsed.extension == "log":
        return csf.log_stats(gw, rel, partition, columns, schema)
    return []


def records_for(
    gw: FileSystemGateway,
    props: Mapping[str, str],
    files_records: Iterable[rec.FilesRecord],
) -> list[csr.ColumnStats]:
    """The column_stats records of a data instant whose files-partition records are
    ``files_records``: statistics of the files added, tombstones of the files deleted."""
    schema, columns = table_columns(gw, props)
    out: list[csr.ColumnStats] = []
    for record in files_records:
        if record.type != rec.FILE_LIST:
            continue
        partition = rec.partition_path(record.key)
        for name, info in record.files.items():
            if info.deleted:
                out.extend(csr.ColumnStats(partition, name, c, deleted=True) for c in columns)
            else:
                out.extend(file_stats(gw, partition, name, schema, columns))
    return out


def _by_group(
    records: Iterable[csr.ColumnStats], count: int = FILE_GROUPS
) -> dict[int, list[csr.ColumnStats]]:
    groups: dict[int, dict[str, csr.ColumnStats]] = {}
    for record in records:
        key = record.key
        group = groups.setdefault(csr.file_group_index(key, count), {})
        group[key] = csr.merge(group[key], record) if key in group else record
    return {
        g: [recs[k] for k in sorted(recs, key=lambda k: k.encode("utf-8"))]
        for g, recs in groups.items()
    }


def encode_hfile(records: Sequence[csr.ColumnStats], *, base_file: str | None = None) -> bytes:
    """An HFile of ``records`` (sorted by key): a log block's content, or with ``base_file``
    (its name) a base file with the bloom filter and key range Hudi's base files carry."""
    writer = HFileWriter(block_size=hfiles.BLOCK_SIZE, compression="GZ")
    for record in records:
        writer.append(record.key.encode("utf-8"), csr.encode_datum(record, file_name=base_file))
    writer.append_file_info(SCHEMA_KEY, rec.schema_json().encode("utf-8"))
    if base_file is not None:
        bloom = hfiles.BLOOM.new_filter()
        bloom.add([r.key for r in records])
        writer.append_file_info(BLOOM_FILTER_TYPE_CODE, bloom.type_code.encode("ascii"))
        if records:
            writer.append_file_info(MIN_RECORD_KEY, records[0].key.encode("utf-8"))
            writer.append_file_info(MAX_RECORD_KEY, records[-1].key.encode("utf-8"))
        writer.append_meta_block(BLOOM_FILTER_META_BLOCK, bloom.serialize().encode("ascii"))
    return writer.finish()


def decode_hfile(content: bytes, keys: frozenset[str] | None = None) -> list[csr.ColumnStats]:
    """The records of a column_stats HFile (base file or log block content); only those of
    ``keys`` when given (the others are not decoded)."""
    out = []
    for k, v in HFileReader(content).entries():
        key = k.decode("utf-8")
        if keys is None or key in keys:
            out.append(csr.decode_datum(key, v))
    return out


def write_logs(
    gw: FileSystemGateway,
    instant_time: str,
    records: Sequence[csr.ColumnStats],
    *,
    part: str = PARTITION,
    file_ids: Sequence[str] | None = None,
) -> list[WriteStat]:
    """One log file per file group holding ``records`` of the metadata deltacommit
    ``instant_time`` (one HFILE block each); their write stats for the deltacommit.
    ``part`` and ``file_ids``: another stats partition and its file groups."""
    fids = list(file_ids) if file_ids is not None else [file_id(i) for i in range(FILE_GROUPS)]
    stats = []
    for group, recs in sorted(_by_group(records, len(fids)).items()):
        fid = fids[group]
        block = LogBlock(
            BlockType.HFILE,
            {HeaderKey.SCHEMA: rec.schema_json(), HeaderKey.INSTANT_TIME: instant_time},
            encode_hfile(recs),
        )
        stats.append(mt.write_log_slice(gw, part, fid, instant_time, [block], updates=len(recs)))
    return stats


def remove(
    gw: FileSystemGateway, *, part: str = PARTITION, init_instant: str = INIT_INSTANT
) -> None:
    """Drop the partition (or the stats partition ``part``): unlisted first (readers stop
    trusting it), then its folder and its initialization instant's timeline files."""
    props = properties_file.load(gw)
    raw = [p.strip() for p in (props.get(cfg.METADATA_PARTITION_KEYS[0]) or "").split(",")]
    if part in raw:
        kept = ",".join(p for p in raw if p not in ("", part))
        properties_file.store(gw, props, metadata_partitions=kept)
    if gw.exists(join(mt.METADATA_DIR, part)):
        gw.delete_dir(join(mt.METADATA_DIR, part))
    for entry in gw.list_dir(mt.TIMELINE_DIR):
        inst = Instant.parse(entry.name, mt.LAYOUT)
        if inst is not None and inst.requested_time == init_instant:
            gw.delete_file(entry.path)


def add_listed(gw: FileSystemGateway, part: str) -> None:
    """List ``part`` in ``hoodie.table.metadata.partitions`` (once it is complete)."""
    props = properties_file.load(gw)
    raw = (props.get(cfg.METADATA_PARTITION_KEYS[0]) or "").split(",")
    current = {p.strip() for p in raw if p.strip()}
    properties_file.store(gw, props, metadata_partitions=",".join(sorted({*current, part})))


def initialize(gw: FileSystemGateway) -> int:
    """Build the partition from the files partition's listing (see the module docstring);
    the caller holds the table lock and the files partition is kept. Returns the number of
    records written."""
    remove(gw)
    props = properties_file.load(gw)
    config = cfg.TableConfig.from_properties(props)
    listing = mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, config)))
    schema, columns = table_columns(gw, props)
    records = [
        s
        for partition, files in listing.items()
        for name in sorted(files)
        for s in file_stats(gw, partition, name, schema, columns)
    ]
    groups = _by_group(records)
    mt.write_initial_slices(
        gw,
        PARTITION,
        INIT_INSTANT,
        [(file_id(g), groups.get(g, [])) for g in range(FILE_GROUPS)],
        lambda recs: encode_hfile(recs, base_file=None),
    )
    add_listed(gw, PARTITION)
    write_definition(gw, columns)
    return len(records)


def _defs_path(props: Mapping[str, str]) -> str:
    return (props.get(cfg.INDEX_DEFS_PATH.name) or "").strip().lstrip("/") or DEFAULT_INDEX_DEFS


def definition(columns: Sequence[str]) -> dict[str, object]:
    """Hudi 1.1's index definition of column_stats (``HoodieIndexDefinition``, version V2)."""
    return {
        "indexName": PARTITION,
        "indexType": PARTITION,
        "indexFunction": PARTITION,
        "sourceFields": list(columns),
        "indexOptions": {},
        "version": "V2",
    }


def write_definition(gw: FileSystemGateway, columns: Sequence[str]) -> None:
    """Record column_stats in the table's index definitions (``hoodie.table.index.defs.path``,
    set to Hudi's default when unset), as Hudi 1.x does on version 9 tables: Hudi's readers
    take the indexed columns from it. Version 8 tables get none (their definitions are V1,
    whose records carry no value types)."""
    props = properties_file.load(gw)
    if cfg.TableConfig.from_properties(props).table_version < 9:
        return
    rel = _defs_path(props)
    data = {"indexDefinitions": {PARTITION: definition(columns)}}
    gw.write_bytes(rel, json.dumps(data, indent=2).encode("utf-8"))
    if not props.get(cfg.INDEX_DEFS_PATH.name):
        listed_now = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
        props = {**props, cfg.INDEX_DEFS_PATH.name: rel}
        properties_file.store(gw, props, metadata_partitions=listed_now)


def keep_definitions(gw: FileSystemGateway, rel: str, kept: Iterable[str]) -> bool:
    """Trim the index definitions file ``rel`` to the definitions of the ``kept`` metadata
    partitions (column_stats', record_index'...); False when none is left (the caller
    deletes the file). Written only when it changes."""
    try:
        data = json.loads(gw.read_bytes(rel).decode("utf-8"))
        defs = data.get("indexDefinitions") or {}
    except (ValueError, AttributeError):
        return False
    if not isinstance(defs, dict):
        return False
    names = set(kept)
    mine = {n: d for n, d in defs.items() if n in names}
    if mine and mine != defs:
        gw.write_bytes(rel, json.dumps({"indexDefinitions": mine}, indent=2).encode("utf-8"))
    return bool(mine)


def timeline_file(gw: FileSystemGateway, instant: Instant) -> None:
    """An empty timeline file of the metadata table (FileExistsError when present)."""
    name = join(mt.TIMELINE_DIR, instant.file_name(mt.LAYOUT))
    if not gw.create_exclusive(name, b""):
        raise FileExistsError(f"metadata table: {name} exists")


def group_slice(
    gw: FileSystemGateway,
    fid: str,
    entries: Sequence[tuple[object, str]],
    mdt: mt.MetadataTimeline,
    data_timeline: Timeline | None,
) -> tuple[str | None, list[str]]:
    """The base file and log files of the latest slice of file group ``fid`` (the files
    partition's rule, :func:`hudilite.metadata.table.current_slice`)."""

    def valid(instant: str) -> bool:
        if instant not in mdt.deltacommits:
            return False
        return (
            data_timeline is None
            or instant.startswith(mt.INIT_INSTANT[:14])
            or data_timeline.is_completed_or_archived(instant)
        )

    bases: list[tuple[str, str]] = []
    logs: list[tuple[str, int, str]] = []
    for parsed, path in entries:
        if isinstance(parsed, BaseFileName) and parsed.file_id == fid:
            if parsed.instant_time in mdt.compactions or (
                parsed.instant_time.startswith(mt.INIT_INSTANT[:14]) and valid(parsed.instant_time)
            ):
                bases.append((parsed.instant_time, path))
        elif isinstance(parsed, LogFileName) and parsed.file_id == fid:
            logs.append((parsed.base_instant, parsed.version, path))
    base = max(bases, default=None)
    kept = [
        path
        for instant, _, path in sorted(logs)
        if valid(instant) and (base is None or mdt.deltacommits[instant] > base[0])
    ]
    return (base[1] if base else None), kept


def read_partition(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    timeline: mt.MetadataTimeline | None = None,
    *,
    part: str = PARTITION,
    keys: frozenset[str] | None = None,
) -> dict[str, csr.ColumnStats]:
    """Every key's merged record (tombstones included) over the partition's file groups
    (``part``: another stats partition; ``keys``: only these, a read's files and columns)."""
    mdt = timeline if timeline is not None else mt.load_timeline(gw)
    folder = join(mt.METADATA_DIR, part)
    if not gw.exists(folder):
        return {}
    entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(folder)]
    fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
    out: dict[str, csr.ColumnStats] = {}
    for fid in fids:
        base, logs = group_slice(gw, fid, entries, mdt, data_timeline)
        batches = [decode_hfile(gw.read_bytes(base), keys)] if base else []
        for path in logs:
            for block in read_log_file(gw, path):
                if block.block_type == BlockType.HFILE:
                    batches.append(decode_hfile(block.content, keys))
        out.update(csr.merge_all(batches))
    return out


def live(records: Mapping[str, csr.ColumnStats]) -> dict[str, csr.ColumnStats]:
    """The records that are not tombstones."""
    return {k: r for k, r in records.items() if not r.deleted}


def stats_by_file(
    records: Mapping[str, csr.ColumnStats],
    files: Iterable[tuple[str, str]],
    columns: Iterable[str],
) -> dict[tuple[str, str], dict[str, csr.ColumnStats]]:
    """(partition, file name) -> column -> live record, for the ``files`` and ``columns``
    asked (a file or column without a live record is absent: it has no statistics)."""
    cols = list(columns)
    out: dict[tuple[str, str], dict[str, csr.ColumnStats]] = {}
    for partition, name in files:
        found = {}
        for column in cols:
            record = records.get(csr.stats_key(partition, name, column))
            if record is not None and not record.deleted:
                found[column] = record
        out[(partition, name)] = found
    return out
