"""The metadata table's layout and its ``files`` partition, as Hudi 1.x writes them.

``.hoodie/metadata`` is a merge-on-read table of its own (table version 8 or 9, as the data
table; timeline layout 2)::

    .hoodie/metadata/.hoodie/hoodie.properties   HFILE base files, key generator
                                                 HOODIE_TABLE_METADATA, no meta fields,
                                                 HoodieMetadataPayload, merge mode CUSTOM
    .hoodie/metadata/.hoodie/timeline/           its deltacommits (one per data instant)
    .hoodie/metadata/files/                      file group files-0000-0:
        files-0000-0_0-0-0_00000000000000000.hfile      the listing at initialization
        .files-0000-0_00000000000000000.log.1_0-0-0     an empty delete block (Hudi's
                                                        initializeFileGroups)
        .files-0000-0_<instant>.log.1_0-0-0             one log file per later deltacommit

Initialization (:func:`initialize`) is Hudi's ``initializeFromFilesystem`` for the files
partition: the instant ``00000000000000000`` (``SOLO_COMMIT_TIMESTAMP`` + offset ``000``, the
first partition Hudi initializes), a base file of the live files listed from storage (data
files of completed instants), and only then ``hoodie.table.metadata.partitions=files`` on
the data table, so readers trust the metadata table only once it is complete. A crash before
that leaves a folder no reader consults (and the metadata-table guard removes it).

:func:`read_files_partition` merges the latest base file (the initialization's, or that of a
completed compaction: :mod:`~hudilite.metadata.compact`, or Hudi's own) and the log blocks of
completed deltacommits that completed after it and whose data instant completed too (Hudi's
readers filter the metadata timeline by the data timeline), giving each data partition's
listing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import hfiles
from hudilite.metadata import records as rec
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import (
    BaseFileName,
    LogFileName,
    parse_data_file_name,
    write_partition_metadata,
)
from hudilite.storage.log_format import (
    BlockType,
    HeaderKey,
    LogBlock,
    delete_block,
    read_log_file,
    write_log_file,
)
from hudilite.tablestate import properties_file
from hudilite.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, Instant, State
from hudilite.timeline.instant_time import now_instant
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline

#: The metadata table's base path, relative to the data table's.
METADATA_DIR = ".hoodie/metadata"
#: The files partition and its one file group.
FILES_PARTITION = "files"
FILES_FILE_ID = "files-0000-0"
#: The instant that initializes the files partition (createIndexInitTimestamp(SOLO, 0)).
INIT_INSTANT = "00000000000000000"
#: Write token of the files Hudi writes outside a Spark task (and of ours).
WRITE_TOKEN = "0-0-0"
#: Table versions whose metadata table hudilite writes (Hudi 1.x's layout).
SUPPORTED_VERSIONS = (8, 9)
#: The metadata table's timeline layout (always 2 for versions 8 and 9).
LAYOUT = 2
TIMELINE_DIR = f"{METADATA_DIR}/.hoodie/timeline"
PROPERTIES = f"{METADATA_DIR}/.hoodie/hoodie.properties"
PAYLOAD_CLASS = "org.apache.hudi.metadata.HoodieMetadataPayload"
PAYLOAD_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"


def metadata_properties(data_props: Mapping[str, str]) -> dict[str, str]:
    """The metadata table's ``hoodie.properties`` for a data table of ``data_props`` (the keys
    Hudi 1.1 writes; the name is ``<table>_metadata`` in no database)."""
    version = data_props.get("hoodie.table.version", "")
    name = f"{data_props.get('hoodie.table.name', '')}_metadata"
    return {
        "hoodie.compaction.payload.class": PAYLOAD_CLASS,
        "hoodie.table.initial.version": version,
        "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.archivelog.folder": "history",
        "hoodie.timeline.layout.version": str(LAYOUT),
        "hoodie.timeline.history.path": "history",
        "hoodie.table.checksum": str(cfg.table_checksum("", name)),
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.record.merge.strategy.id": PAYLOAD_MERGE_STRATEGY,
        "hoodie.table.recordkey.fields": "key",
        "hoodie.table.name": name,
        "hoodie.timeline.path": "timeline",
        "hoodie.populate.meta.fields": "false",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.table.version": version,
    }


def check_supported(config: cfg.TableConfig) -> None:
    """ConfigError naming the version when hudilite cannot keep this table's metadata table."""
    if config.table_version not in SUPPORTED_VERSIONS:
        raise ConfigError(
            f"hudilite keeps a metadata table only on table versions 8 and 9; this table is "
            f"version {config.table_version}"
        )


def live_files(gw: FileSystemGateway, config: cfg.TableConfig) -> dict[str, dict[str, int]]:
    """Data partition -> {file name: size} of every data file on storage written by a
    completed (or archived) instant: what the files partition lists (Hudi's
    ``listAllPartitionsFromFilesystem``, pending instants' files left out)."""
    timeline = Timeline.load(gw, config)
    view = FileSystemView(gw, config, timeline)
    out: dict[str, dict[str, int]] = {}
    for partition in view.partitions():
        files: dict[str, int] = {}
        for entry in gw.list_dir(partition):
            if entry.is_dir:
                continue
            parsed = parse_data_file_name(entry.name)
            if isinstance(parsed, BaseFileName):
                instant = parsed.instant_time
            elif isinstance(parsed, LogFileName) and parsed.extension == "log":
                instant = parsed.base_instant
            else:
                continue
            if timeline.is_completed_or_archived(instant):
                files[entry.name] = int(entry.size)
        out[partition] = files
    return out


@dataclass(frozen=True)
class InitResult:
    """What :func:`initialize` wrote: the base file and the listing it holds."""

    base_file: str
    listing: dict[str, dict[str, int]]


def initialize(
    gw: FileSystemGateway,
    *,
    listing: Mapping[str, Mapping[str, int]] | None = None,
) -> InitResult:
    """Build ``.hoodie/metadata`` with the files partition (see the module docstring) and list
    it in the data table's ``hoodie.table.metadata.partitions``. The caller holds the table
    lock. An existing metadata table is removed first (Hudi rebuilds from a listing the same
    way). ``listing`` (partition -> {file: size}) replaces the storage listing: tests use it
    to leave a file out."""
    props = properties_file.load(gw)
    config = cfg.TableConfig.from_properties(props)
    check_supported(config)
    if props.get(cfg.METADATA_PARTITION_KEYS[0]):
        props = properties_file.store(gw, props)  # readers stop trusting the old one first
    if gw.exists(METADATA_DIR):
        gw.delete_dir(METADATA_DIR)
    files = (
        {p: dict(f) for p, f in listing.items()} if listing is not None else live_files(gw, config)
    )
    gw.create_exclusive(PROPERTIES, properties_file.encode(metadata_properties(props)))
    for state in (State.REQUESTED, State.INFLIGHT):
        _timeline_file(gw, Instant(INIT_INSTANT, DELTA_COMMIT, state))
    records = [rec.partition_list_record(files)]
    records += [rec.partition_files_record(p, f) for p, f in files.items()]
    part_dir = join(METADATA_DIR, FILES_PARTITION)
    write_partition_metadata(gw, part_dir, INIT_INSTANT, depth=1)
    base = BaseFileName(FILES_FILE_ID, WRITE_TOKEN, INIT_INSTANT, ".hfile").render()
    data = hfiles.encode_base_file(records)
    gw.write_bytes(join(part_dir, base), data)
    log = LogFileName(FILES_FILE_ID, INIT_INSTANT, 1, WRITE_TOKEN).render()
    write_log_file(gw, join(part_dir, log), [delete_block([], INIT_INSTANT)])
    stat = WriteStat(
        file_id=FILES_FILE_ID,
        path=f"{FILES_PARTITION}/{base}",
        partition_path=FILES_PARTITION,
        num_writes=len(records),
        num_inserts=len(records),
        total_write_bytes=len(data),
        file_size_in_bytes=len(data),
    )
    _complete(gw, INIT_INSTANT, [stat], "UPSERT_PREPPED")
    props = properties_file.load(gw)
    properties_file.store(gw, props, metadata_partitions=FILES_PARTITION)
    return InitResult(base, files)


def _timeline_file(gw: FileSystemGateway, instant: Instant, content: bytes = b"") -> None:
    name = join(TIMELINE_DIR, instant.file_name(LAYOUT))
    if not gw.create_exclusive(name, content):
        raise FileExistsError(f"metadata table: {name} exists")


def _complete(
    gw: FileSystemGateway, instant_time: str, stats: Iterable[WriteStat], operation: str
) -> None:
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    metadata = CommitMetadata(
        partition_to_write_stats=by_partition,
        operation_type=operation,
        extra_metadata={"schema": rec.schema_json_without_meta()},
    )
    done = Instant(instant_time, DELTA_COMMIT, State.COMPLETED, now_instant())
    _timeline_file(gw, done, metadata.to_bytes(LAYOUT))


def write_initial_slices(
    gw: FileSystemGateway,
    partition: str,
    instant_time: str,
    groups: Iterable[tuple[str, Any]],
    encode: Callable[[Any], bytes],
) -> None:
    """Initialize metadata partition ``partition`` as Hudi's metadata writer does: the
    deltacommit ``instant_time`` requested and inflight, the partition's metadata file, for
    each ``(file id, records)`` of ``groups`` an HFile base file of ``encode(records)`` (none
    for a group without records, as Hudi) and an empty log file (a delete block of no keys),
    then the deltacommit completed with the base files' write stats. Listing the partition
    in ``hoodie.table.metadata.partitions`` is the caller's last step."""
    for state in (State.REQUESTED, State.INFLIGHT):
        _timeline_file(gw, Instant(instant_time, DELTA_COMMIT, state))
    part_dir = join(METADATA_DIR, partition)
    write_partition_metadata(gw, part_dir, instant_time, depth=1)
    stats = []
    for fid, recs in groups:
        if recs:
            name = BaseFileName(fid, WRITE_TOKEN, instant_time, ".hfile").render()
            data = encode(recs)
            gw.write_bytes(join(part_dir, name), data)
            stats.append(
                WriteStat(
                    file_id=fid,
                    path=f"{partition}/{name}",
                    partition_path=partition,
                    num_writes=len(recs),
                    num_inserts=len(recs),
                    total_write_bytes=len(data),
                    file_size_in_bytes=len(data),
                )
            )
        log = LogFileName(fid, instant_time, 1, WRITE_TOKEN).render()
        write_log_file(gw, join(part_dir, log), [delete_block([], instant_time)])
    _complete(gw, instant_time, stats, "UPSERT_PREPPED")


def write_log_slice(
    gw: FileSystemGateway,
    partition: str,
    file_id: str,
    instant_time: str,
    blocks: list[LogBlock],
    *,
    updates: int,
    deletes: int = 0,
) -> WriteStat:
    """Write a metadata deltacommit's new log file (version 1) of ``file_id`` in
    ``partition`` holding ``blocks``, and return its write stat (``updates`` records
    written, ``deletes`` keys deleted), as Hudi's metadata writer records an appended log."""
    name = LogFileName(file_id, instant_time, 1, WRITE_TOKEN).render()
    size = write_log_file(gw, join(METADATA_DIR, partition, name), blocks)
    return WriteStat(
        file_id=file_id,
        path=f"{partition}/{name}",
        partition_path=partition,
        prev_commit=instant_time,
        num_writes=updates + deletes,
        num_update_writes=updates,
        num_deletes=deletes,
        total_write_bytes=size,
        file_size_in_bytes=size,
        base_file="",
        log_files=[name],
        log_version=1,
        log_offset=0,
    )


def write_deltacommit(
    gw: FileSystemGateway,
    instant_time: str,
    records: Iterable[rec.FilesRecord],
    more: Callable[[], Iterable[WriteStat]] | None = None,
) -> str:
    """The metadata table's deltacommit of the data instant ``instant_time``: requested,
    inflight, a new log file of file group ``files-0000-0`` named for the instant holding one
    HFILE block of ``records``, then completed (Hudi's protocol: this happens before the data
    instant completes; readers ignore it until the data instant has). ``more`` writes the
    other partitions' log files of the deltacommit before it completes and returns their
    write stats. Returns the log file's table-relative path."""
    for state in (State.REQUESTED, State.INFLIGHT):
        _timeline_file(gw, Instant(instant_time, DELTA_COMMIT, state))
    block = LogBlock(
        BlockType.HFILE,
        {HeaderKey.SCHEMA: rec.schema_json(), HeaderKey.INSTANT_TIME: instant_time},
        hfiles.encode_log_block(records),
    )
    stat = write_log_slice(gw, FILES_PARTITION, FILES_FILE_ID, instant_time, [block], updates=1)
    _complete(gw, instant_time, [stat, *(more() if more else [])], "UPSERT_PREPPED")
    return join(METADATA_DIR, str(stat.path))


@dataclass(frozen=True)
class MetadataTimeline:
    """The metadata table's timeline as the files partition's reader needs it."""

    #: requested -> completion time of every completed deltacommit
    deltacommits: dict[str, str]
    #: requested -> completion time of every completed compaction (a ``commit``)
    compactions: dict[str, str]
    #: requested times of compactions requested or inflight
    pending_compactions: frozenset[str]
    #: timeline file names of other actions (Hudi's rollback or log compaction of the
    #: metadata table), which this reader does not follow
    others: tuple[str, ...] = ()

    @property
    def last_compaction(self) -> str | None:
        """The requested time of the latest completed compaction (None before the first)."""
        return max(self.compactions, default=None)


def load_timeline(gw: FileSystemGateway) -> MetadataTimeline:
    """The metadata table's deltacommits and compactions (one listing of its timeline)."""
    deltas: dict[str, str] = {}
    compactions: dict[str, str] = {}
    pending: set[str] = set()
    others: list[str] = []
    for entry in gw.list_dir(TIMELINE_DIR):
        inst = Instant.parse(entry.name, LAYOUT)
        if inst is None:
            continue
        if inst.action not in (DELTA_COMMIT, COMMIT, COMPACTION, CLEAN):
            others.append(entry.name)  # cleans only delete slices older than the latest
        if inst.is_completed and inst.action == DELTA_COMMIT:
            deltas[inst.requested_time] = inst.completion_time or inst.requested_time
        elif inst.is_completed and inst.action == COMMIT:
            compactions[inst.requested_time] = inst.completion_time or inst.requested_time
        elif inst.action == COMPACTION and not inst.is_completed:
            pending.add(inst.requested_time)
    return MetadataTimeline(
        deltas, compactions, frozenset(pending - set(compactions)), tuple(others)
    )


def completed_deltacommits(gw: FileSystemGateway) -> set[str]:
    """Requested times of the metadata table's completed deltacommits."""
    return set(load_timeline(gw).deltacommits)


@dataclass(frozen=True)
class FilesSlice:
    """The latest file slice of ``files-0000-0`` a reader merges: the latest base file (of
    the initialization or a completed compaction) and the log files of completed
    deltacommits that completed after that base file's instant (Hudi 1.x slices log files by
    completion time: a deltacommit requested before a compaction but completed after it
    belongs to the compaction's slice), in log order."""

    base_instant: str | None
    base_path: str | None
    #: (deltacommit instant, table-relative path) of each log file
    logs: tuple[tuple[str, str], ...]


def current_slice(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    timeline: MetadataTimeline | None = None,
) -> FilesSlice:
    """The file slice :func:`read_files_partition` merges (see :class:`FilesSlice`); given
    ``data_timeline``, deltacommits whose data instant did not complete are left out (the
    initialization instants excepted)."""
    mdt = timeline if timeline is not None else load_timeline(gw)
    part_dir = join(METADATA_DIR, FILES_PARTITION)
    bases: list[tuple[str, str]] = []
    logs: list[tuple[str, int, str]] = []
    for entry in gw.list_dir(part_dir):
        parsed = parse_data_file_name(entry.name)
        if isinstance(parsed, BaseFileName) and parsed.file_id == FILES_FILE_ID:
            bases.append((parsed.instant_time, entry.path))
        elif isinstance(parsed, LogFileName) and parsed.file_id == FILES_FILE_ID:
            logs.append((parsed.base_instant, parsed.version, entry.path))

    def valid(instant: str) -> bool:
        if instant not in mdt.deltacommits:
            return False
        return (
            data_timeline is None
            or instant.startswith(INIT_INSTANT[:14])
            or data_timeline.is_completed_or_archived(instant)
        )

    def valid_base(instant: str) -> bool:
        # A compaction's base file counts once its commit completed; an initialization's
        # once its deltacommit did.
        return instant in mdt.compactions or (
            instant.startswith(INIT_INSTANT[:14]) and valid(instant)
        )

    base = max((b for b in bases if valid_base(b[0])), default=None)
    kept = tuple(
        (instant, path)
        for instant, _, path in sorted(logs)
        if valid(instant) and (base is None or mdt.deltacommits[instant] > base[0])
    )
    return FilesSlice(base[0] if base else None, base[1] if base else None, kept)


def read_slice(gw: FileSystemGateway, file_slice: FilesSlice) -> dict[str, rec.FilesRecord]:
    """The merged records of ``file_slice``: its base file, then its logs' HFILE blocks."""
    batches: list[list[rec.FilesRecord]] = []
    if file_slice.base_path is not None:
        batches.append(hfiles.decode(gw.read_bytes(file_slice.base_path)))
    for _, path in file_slice.logs:
        for block in read_log_file(gw, path):
            if block.block_type == BlockType.HFILE:
                batches.append(hfiles.decode(block.content))
    return rec.merge_all(batches)


def read_files_partition(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    timeline: MetadataTimeline | None = None,
) -> dict[str, rec.FilesRecord]:
    """The files partition's merged records by key: the latest base file, then the HFILE
    blocks of log files written by completed metadata deltacommits after it (and, given
    ``data_timeline``, whose data instant completed too, or the initialization instants);
    see :func:`current_slice`."""
    return read_slice(gw, current_slice(gw, data_timeline, timeline))


def listing_of(records: Mapping[str, rec.FilesRecord]) -> dict[str, dict[str, int]]:
    """Data partition -> {file: size} as the files partition lists it (the partitions of
    ``__all_partitions__``, each with its live files)."""
    partitions = records.get(rec.ALL_PARTITIONS_KEY)
    names = partitions.live() if partitions is not None else {}
    return {
        rec.partition_path(p): (records[p].live() if p in records else {}) for p in sorted(names)
    }
