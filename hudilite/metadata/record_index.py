"""The metadata table's ``record_index`` partition: where every record key lives.

Hudi 1.x's record-level index (``hoodie.metadata.record.index.enable``), as it lays it out:

* ``.hoodie/metadata/record_index/`` holds N file groups ``record-index-000I-0``; a key goes
  to group ``abs(abs(String.hashCode(key)) % N)`` (``mapRecordKeyToFileGroupIndex``). N is
  fixed when the partition is initialized (:func:`estimate_file_group_count`, Hudi's
  ``estimateFileGroupCount`` over the table's key count, 48 bytes a record, between
  ``hoodie.metadata.record.index.min.filegroup.count`` and ``...max.filegroup.count``); a
  reader takes N from the file groups present.
* One ``HoodieMetadataRecord`` of type 5 per live key (:mod:`~hudilite.metadata.
  record_index_records`): the data partition, the file id (a UUID file id as its two longs
  and index, encoding 0; any other as text, encoding 1) and the epoch milliseconds of the
  instant that put the key into that file group (``createRecordIndexUpdate``). A deleted key
  is a key of a DELETE log block (``createRecordIndexDelete``: partition ``record_index``,
  ordering value ``IntWrapper(0)``).
* :func:`initialize` builds it (instant ``00000000000000002``, Hudi's third initialization
  offset) from the latest file slices of the table: every key of a slice, with the slice's
  base instant (``readRecordKeysFromFileSlices``), then lists ``record_index``.
* :func:`updates_for` gives the records of a completed data instant from its write stats,
  looked up against the index itself, so each key's entry stays exact:

  - a key in a file the instant wrote (a new base file, or a data block of the instant in a
    log file) whose indexed location is another file group, or none, is (re)pointed there
    with the instant (inserts, partition moves, clustering's new file groups);
  - a key the instant removed from a file group (in the group's previous base file and not
    its new one; a key of a delete block of the instant), or a key indexed in a file group a
    replacecommit replaced and not re-pointed, is deleted, but only while the index still
    places it in that group (a moved key is not deleted behind its move);
  - compaction and log compaction keep every key in its file group: no records.

  A rolled-back instant's deltacommit and its log files go with it
  (:func:`hudilite.metadata.sync.remove_deltacommit`); a restore rebuilds the partition.
* :func:`lookup` answers a batch of keys with point lookups in each file group's HFile base
  file (or a scan when most of its keys are wanted) and the HFILE/DELETE blocks of its logs:
  no data file is read (the RECORD_INDEX index's ``tagLocation``).

Log files are read as the other partitions' are (:func:`~hudilite.metadata.column_stats.
group_slice`'s rule), except that a log newer than the group's base file whose deltacommit
was archived from the metadata timeline still counts (its entries are in no base file yet).
The metadata compaction (:mod:`~hudilite.metadata.compact`) folds each group's logs into a
base file (:func:`compaction_units`, :func:`compact_unit`); a rollback of an instant whose
entries were compacted rebuilds the partition (:mod:`~hudilite.metadata.sync`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_compact as csc
from hudilite.metadata import record_index_records as rir
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.hfile import HFileReader
from hudilite.storage.layout import (
    BaseFileName,
    LogFileName,
    parse_data_file_name,
)
from hudilite.storage.log_blocks import DeleteKey
from hudilite.storage.log_format import (
    BlockType,
    HeaderKey,
    LogBlock,
    block_deletes,
    block_records,
    delete_block,
    read_log_file,
)
from hudilite.storage.parquet_io import read_stored_keys
from hudilite.tablestate import properties_file
from hudilite.timeline.instant import COMPACTION, LOG_COMPACTION, Instant
from hudilite.timeline.instant_time import instant_to_epoch_ms
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.timeline.timeline import Timeline
from hudilite.virtual_keys import virtual_key_spec

PARTITION = rir.PARTITION
FILE_ID_PREFIX = "record-index"
#: ``createIndexInitTimestamp(SOLO_COMMIT_TIMESTAMP, 2)``, as Hudi 1.1's tables show.
INIT_INSTANT = "00000000000000002"
PART_DIR = join(mt.METADATA_DIR, PARTITION)
#: ``RECORD_INDEX_AVERAGE_RECORD_SIZE``: the bytes Hudi counts per record index entry.
AVERAGE_RECORD_SIZE = 48
#: Above this share of a file group's entries wanted, a lookup scans instead of seeking.
_SCAN_SHARE = 0.25

Location = rir.Location


def file_id(index: int) -> str:
    """The file group ``record-index-000I-0``."""
    return f"{FILE_ID_PREFIX}-{index:04d}-0"


def file_group_index(key: str, count: int) -> int:
    """Hudi's ``mapRecordKeyToFileGroupIndex``: ``abs(abs(hashCode) % count)`` in Java's int
    arithmetic (``abs(MIN_VALUE)`` stays negative; ``%`` keeps the dividend's sign)."""
    h = rir.java_string_hash(key)
    a = h if h == -(2**31) else abs(h)
    return abs(int(math.fmod(a, count)))


def estimate_file_group_count(
    record_count: int,
    *,
    min_count: int,
    max_count: int,
    growth_factor: float,
    max_file_group_bytes: int,
    average_record_size: int = AVERAGE_RECORD_SIZE,
) -> int:
    """Hudi's ``estimateFileGroupCount``: fixed when min equals max (and is not 0), else the
    key count grown by ``growth_factor`` over the keys one file group holds, clamped."""
    if min_count == max_count and min_count != 0:
        return min_count
    # (float) recordCount * growthFactor: Java multiplies in single precision
    expected = math.ceil(float(np.float32(record_count) * np.float32(growth_factor)))
    per_group = max_file_group_bytes // max(average_record_size, 1)
    estimated = expected // per_group
    if estimated >= max_count:
        return max_count
    if estimated <= min_count:
        return min_count
    return max(1, int(estimated))


def enabled(options: Mapping[str, str]) -> bool:
    """``hoodie.metadata.record.index.enable`` of the table's options."""
    return bool(cfg.Options(dict(options)).get(cfg.METADATA_RECORD_INDEX_ENABLED))


def listed(props: Mapping[str, str]) -> bool:
    """True when ``hoodie.table.metadata.partitions`` lists ``record_index``."""
    raw = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
    return PARTITION in [p.strip() for p in raw.split(",")]


def _ms(instant: str, config: cfg.TableConfig) -> int:
    """Epoch milliseconds of an instant in the table's timeline zone (Hudi's
    ``parseDateFromInstantTime``)."""
    return instant_to_epoch_ms(instant, utc=config.timeline_utc)


# ------------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class GroupSlice:
    """One file group's latest slice: its base file and its logs, oldest first."""

    file_id: str
    base: str | None
    logs: tuple[str, ...]


def slices(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    timeline: mt.MetadataTimeline | None = None,
) -> list[GroupSlice]:
    """The latest slice of every file group of the partition, in file group order."""
    if not gw.exists(PART_DIR):
        return []
    mdt = timeline if timeline is not None else mt.load_timeline(gw)
    listing = gw.list_dir(mt.TIMELINE_DIR)
    times = [i.requested_time for e in listing if (i := Instant.parse(e.name, mt.LAYOUT))]
    first_active = min(times, default=None)
    pending = {
        i.requested_time
        for e in listing
        if (i := Instant.parse(e.name, mt.LAYOUT)) is not None and not i.is_completed
    }
    entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(PART_DIR)]
    fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
    out = []
    for fid in fids:
        base, logs = cs.group_slice(gw, fid, entries, mdt, data_timeline)
        kept = set(logs)
        # Logs of deltacommits archived from the metadata timeline (older than its first
        # active instant, not pending) still hold entries until a compaction folds them in.
        archived = sorted(
            (p.base_instant, p.version, path)
            for p, path in entries
            if isinstance(p, LogFileName)
            and p.file_id == fid
            and path not in kept
            and first_active is not None
            and p.base_instant < first_active
            and p.base_instant not in pending
            and (base is None or p.base_instant > _base_instant(base))
        )
        out.append(GroupSlice(fid, base, tuple([a[2] for a in archived] + list(logs))))
    return out


def _base_instant(path: str) -> str:
    parsed = parse_data_file_name(path.rsplit("/", 1)[-1])
    return parsed.instant_time if isinstance(parsed, BaseFileName) else ""


def _apply_log(
    gw: FileSystemGateway,
    path: str,
    out: dict[str, Location | None],
    wanted: set[str] | None,
) -> None:
    for block in read_log_file(gw, path):
        if block.block_type == BlockType.HFILE:
            reader = HFileReader(block.content)
            if wanted is None or len(wanted) > _SCAN_SHARE * max(reader.entry_count, 1):
                for k, v in reader.entries():
                    key = k.decode("utf-8")
                    if wanted is None or key in wanted:
                        out[key] = rir.decode_datum(key, v)
            else:
                for key in wanted:
                    value = reader.get(key.encode("utf-8"))
                    if value is not None:
                        out[key] = rir.decode_datum(key, value)
        elif block.block_type == BlockType.DELETE:
            for d in block_deletes(block):
                if wanted is None or d.record_key in wanted:
                    out[d.record_key] = None


def read_group(
    gw: FileSystemGateway, group: GroupSlice, wanted: set[str] | None
) -> dict[str, Location]:
    out: dict[str, Location | None] = {}
    if group.base is not None:
        reader = HFileReader(gw.read_bytes(group.base))
        if wanted is None or len(wanted) > _SCAN_SHARE * max(reader.entry_count, 1):
            for k, v in reader.entries():
                key = k.decode("utf-8")
                if wanted is None or key in wanted:
                    out[key] = rir.decode_datum(key, v)
        else:
            for key in wanted:
                value = reader.get(key.encode("utf-8"))
                if value is not None:
                    out[key] = rir.decode_datum(key, value)
    for path in group.logs:
        _apply_log(gw, path, out, wanted)
    return {k: v for k, v in out.items() if v is not None}


def read_all(gw: FileSystemGateway, data_timeline: Timeline | None = None) -> dict[str, Location]:
    """Every live key's location."""
    out: dict[str, Location] = {}
    for group in slices(gw, data_timeline):
        out.update(read_group(gw, group, None))
    return out


def lookup(
    gw: FileSystemGateway, keys: Iterable[str], data_timeline: Timeline | None = None
) -> dict[str, Location]:
    """The locations of ``keys`` the index holds (absent keys are not in the table)."""
    groups = slices(gw, data_timeline)
    if not groups:
        return {}
    by_group: dict[int, set[str]] = {}
    for key in keys:
        by_group.setdefault(file_group_index(key, len(groups)), set()).add(key)
    out: dict[str, Location] = {}
    for index, wanted in sorted(by_group.items()):
        out.update(read_group(gw, groups[index], wanted))
    return out


# ------------------------------------------------------------------------------ writing


def _write_logs(
    gw: FileSystemGateway,
    instant_time: str,
    upserts: Mapping[str, Location],
    deletes: Iterable[str],
    count: int,
) -> list[WriteStat]:
    """One log file per file group touched: an HFILE block of its upserts, then a DELETE
    block of its deleted keys; their write stats for the deltacommit."""
    groups: dict[int, tuple[dict[str, Location], list[str]]] = {}
    for key, loc in upserts.items():
        groups.setdefault(file_group_index(key, count), ({}, []))[0][key] = loc
    for key in deletes:
        groups.setdefault(file_group_index(key, count), ({}, []))[1].append(key)
    stats = []
    for index, (ups, dels) in sorted(groups.items()):
        fid = file_id(index)
        blocks = []
        header = {HeaderKey.SCHEMA: rir.schema_json(), HeaderKey.INSTANT_TIME: instant_time}
        if ups:
            blocks.append(LogBlock(BlockType.HFILE, header, rir.encode_hfile(ups)))
        if dels:
            keys = [DeleteKey(k, PARTITION, 0, "IntWrapper") for k in sorted(dels)]
            blocks.append(delete_block(keys, instant_time, rir.schema_json()))
        stats.append(
            mt.write_log_slice(
                gw, PARTITION, fid, instant_time, blocks, updates=len(ups), deletes=len(dels)
            )
        )
    return stats


def _file_keys(gw: FileSystemGateway, rel: str, config: cfg.TableConfig) -> list[str]:
    keys = read_stored_keys(gw, rel, virtual_key_spec(config))
    return [str(k) for k in pc.unique(keys).to_pylist() if k is not None]


def _log_keys(gw: FileSystemGateway, rel: str, instant: str | None) -> tuple[list[str], list[str]]:
    """(keys of data blocks, keys of delete blocks) of a log file (of ``instant``'s blocks
    only, when given)."""
    data: list[str] = []
    deleted: list[str] = []
    for block in read_log_file(gw, rel):
        if instant is not None and block.instant_time != instant:
            continue
        if block.is_data:
            data.extend(str(k) for k in block_records(block)["_hoodie_record_key"].to_pylist())
        elif block.block_type == BlockType.DELETE:
            deleted.extend(d.record_key for d in block_deletes(block))
    return data, deleted


def _previous_base(
    gw: FileSystemGateway, partition: str, fid: str, prev: str | None, instant: str
) -> str | None:
    """The table-relative path of file group ``fid``'s base file of instant ``prev``."""
    if not prev or prev in ("null", instant):
        return None
    for entry in gw.list_dir(partition):
        p = parse_data_file_name(entry.name)
        if isinstance(p, BaseFileName) and p.file_id == fid and p.instant_time == prev:
            return entry.path
    return None


def updates_for(
    gw: FileSystemGateway,
    action: str,
    instant_time: str,
    metadata: CommitMetadata,
    data_timeline: Timeline | None = None,
) -> tuple[dict[str, Location], set[str]]:
    """The record index's (upserts, deleted keys) of a data instant completing with
    ``metadata`` (see the module docstring)."""
    if action in (COMPACTION, LOG_COMPACTION) or metadata.operation_type in (
        "COMPACT",
        "LOG_COMPACT",
    ):
        return {}, set()
    config = cfg.TableConfig.from_properties(properties_file.load(gw))
    ms = _ms(instant_time, config)
    written: dict[str, tuple[str, str]] = {}  # key -> (partition, fid) of the instant's files
    removed: dict[str, set[tuple[str, str]]] = {}  # key -> groups the instant removed it from
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if not stat.path:
                continue
            name = stat.path.rsplit("/", 1)[-1]
            parsed = parse_data_file_name(name)
            fid = stat.file_id or (parsed.file_id if parsed else "")
            where = (partition, fid)
            if isinstance(parsed, BaseFileName):
                new = _file_keys(gw, stat.path, config)
                for k in new:
                    written[k] = where
                old = _previous_base(gw, partition, fid, stat.prev_commit, instant_time)
                if old is not None:
                    for k in set(_file_keys(gw, old, config)) - set(new):
                        removed.setdefault(k, set()).add(where)
            elif isinstance(parsed, LogFileName):
                data, deleted = _log_keys(gw, stat.path, instant_time)
                for k in data:
                    written[k] = where
                for k in deleted:
                    removed.setdefault(k, set()).add(where)
    replaced = {
        (p, f) for p, fids in (metadata.partition_to_replace_file_ids or {}).items() for f in fids
    }
    if replaced:
        current = read_all(gw, data_timeline)
        for k, at in current.items():
            if (at.partition, at.file_id) in replaced:
                removed.setdefault(k, set()).add((at.partition, at.file_id))
    else:
        current = lookup(gw, set(written) | set(removed), data_timeline)
    upserts: dict[str, Location] = {}
    for k, (partition, fid) in written.items():
        loc = current.get(k)
        if loc is None or (loc.partition, loc.file_id) != (partition, fid):
            upserts[k] = Location(partition, fid, ms)
    deletes = set()
    for k, groups in removed.items():
        loc = current.get(k)
        if k in written or loc is None:
            continue
        if (loc.partition, loc.file_id) in groups:
            deletes.add(k)
    return upserts, deletes


def write_logs(
    gw: FileSystemGateway,
    action: str,
    instant_time: str,
    metadata: CommitMetadata,
    data_timeline: Timeline | None = None,
) -> list[WriteStat]:
    """Write the instant's record index logs (part of its metadata deltacommit)."""
    count = len(slices(gw, data_timeline))
    if count == 0:
        return []
    upserts, deletes = updates_for(gw, action, instant_time, metadata, data_timeline)
    if not upserts and not deletes:
        return []
    return _write_logs(gw, instant_time, upserts, deletes, count)


# ------------------------------------------------------------------------------ building


def slice_keys(
    gw: FileSystemGateway, config: cfg.TableConfig, base: str | None, logs: Sequence[str]
) -> list[str]:
    """The live keys of a file slice: its base file's, plus its logs' data blocks, less
    their delete blocks, in log order."""
    keys: dict[str, None] = dict.fromkeys(_file_keys(gw, base, config)) if base else {}
    for rel in logs:
        for block in read_log_file(gw, rel):
            if block.is_data:
                keys.update(dict.fromkeys(block_records(block)["_hoodie_record_key"].to_pylist()))
            elif block.block_type == BlockType.DELETE:
                for d in block_deletes(block):
                    keys.pop(d.record_key, None)
    return [str(k) for k in keys]


def remove(gw: FileSystemGateway) -> None:
    """Drop the partition: unlisted first, then its folder and initialization instant."""
    cs.remove(gw, part=PARTITION, init_instant=INIT_INSTANT)


def initialize(gw: FileSystemGateway) -> int:
    """Build the partition from the table's latest file slices (see the module docstring);
    the caller holds the table lock and the files partition is kept. Returns the number of
    keys indexed."""
    remove(gw)
    props = properties_file.load(gw)
    options = cfg.Options({**props, **properties_file.read_write_defaults(gw)})
    config = cfg.TableConfig.from_properties(props)
    timeline = Timeline.load(gw, config)
    view = FileSystemView(gw, config, timeline)
    entries: dict[str, Location] = {}
    for s in view.latest_slices(check=False):
        base = s.base_file.path if s.base_file else None
        logs = [lf.path for lf in s.log_files]
        ms = _ms(s.base_instant, config)
        for key in slice_keys(gw, config, base, logs):
            entries[key] = Location(s.partition, s.file_id, ms)
    count = estimate_file_group_count(
        len(entries),
        min_count=int(options.get(cfg.RECORD_INDEX_MIN_FILE_GROUPS)),
        max_count=int(options.get(cfg.RECORD_INDEX_MAX_FILE_GROUPS)),
        growth_factor=float(options.get(cfg.RECORD_INDEX_GROWTH_FACTOR)),
        max_file_group_bytes=int(options.get(cfg.RECORD_INDEX_MAX_FILE_GROUP_SIZE)),
    )
    groups: dict[int, dict[str, Location]] = {}
    for key, loc in entries.items():
        groups.setdefault(file_group_index(key, count), {})[key] = loc
    mt.write_initial_slices(
        gw,
        PARTITION,
        INIT_INSTANT,
        [(file_id(i), groups.get(i, {})) for i in range(count)],
        lambda recs: rir.encode_hfile(recs, base_file=True),
    )
    cs.add_listed(gw, PARTITION)
    return len(entries)


# ------------------------------------------------------------------------------ compaction


def compaction_units(
    gw: FileSystemGateway, data_timeline: Timeline | None, timeline: mt.MetadataTimeline
) -> list[csc.Unit]:
    """The file groups whose latest slice has logs, for a metadata-table compaction
    (:mod:`~hudilite.metadata.compact` compacts every partition's groups in one instant, as
    Hudi does)."""
    out = []
    for group in slices(gw, data_timeline, timeline):
        if not group.logs:
            continue
        base_instant = _base_instant(group.base) if group.base else None
        out.append(csc.Unit(PARTITION, group.file_id, base_instant, group.base, group.logs))
    return out


def compact_unit(gw: FileSystemGateway, unit: csc.Unit, instant_time: str) -> WriteStat:
    """Write the group's new base file ``<fileId>_0-0-0_<instant>.hfile``: its slice's
    entries merged (the newer wins), deleted keys dropped (no older file is read again)."""
    group = GroupSlice(unit.file_id, unit.base_path, unit.logs)
    entries = read_group(gw, group, None)
    name = BaseFileName(unit.file_id, mt.WRITE_TOKEN, instant_time, ".hfile").render()
    data = rir.encode_hfile(entries, base_file=True, file_name=name)
    gw.write_bytes(join(PART_DIR, name), data)
    return WriteStat(
        file_id=unit.file_id,
        path=f"{PARTITION}/{name}",
        partition_path=PARTITION,
        prev_commit=unit.base_instant or "null",
        num_writes=len(entries),
        num_update_writes=len(entries),
        total_write_bytes=len(data),
        file_size_in_bytes=len(data),
        total_log_files_compacted=len(unit.logs),
        total_log_size_compacted=sum(gw.size(p) for p in unit.logs),
    )


def pending_base_files(gw: FileSystemGateway, pending: frozenset[str]) -> list[str]:
    """The base files written by the metadata compactions ``pending`` (never completed)."""
    if not pending or not gw.exists(PART_DIR):
        return []
    return [
        e.path
        for e in gw.list_dir(PART_DIR)
        if isinstance(p := parse_data_file_name(e.name), BaseFileName) and p.instant_time in pending
    ]
