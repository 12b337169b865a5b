"""The metadata table's ``bloom_filters`` partition, as Hudi 1.x lays it out and keeps it.

One ``HoodieMetadataRecord`` of type 4 (``METADATA_TYPE_BLOOM_FILTER``) per live data base
file (``HoodieMetadataPayload.createBloomFilterMetadataRecord``):

* key = ``PartitionIndexID + FileIndexID`` (``getBloomFilterIndexKey``): base64 of the
  XXHash64 of the partition path (``.`` for a non-partitioned table) and of the MD5 of the
  file name, the same hashes as the column_stats keys
  (:mod:`~hudilite.metadata.column_stats_records`);
* ``BloomFilterMetadata`` (``HoodieMetadataBloomFilter``): ``type`` the filter's type code,
  ``timestamp`` the instant that wrote the record, ``bloomFilter`` the UTF-8 bytes of the
  serialized filter exactly as the file's footer holds it, ``isDeleted`` true for a file the
  instant deleted (its bytes then empty). Log files get no record (Hudi skips non-base files).

Two records of one key merge as ``BLOOM_FILTERS.combineMetadataPayloads``: the newer wins.
Layout: :data:`FILE_GROUPS` file groups ``bloom-filters-000N-0``
(``hoodie.metadata.index.bloom.filter.file.group.count``, fixed when the partition is
built), a key going to the group of its Java ``String.hashCode`` modulo the count
(``mapRecordKeyToFileGroupIndex``).

* :func:`initialize` builds the partition from the files partition's listing (every live
  base file's footer filter) at instant ``00000000000000004``: a base file per group holding
  records, an empty log per group, then ``bloom_filters`` in
  ``hoodie.table.metadata.partitions``.
* :func:`records_for` and :func:`write_logs` run inside each metadata deltacommit
  (:func:`hudilite.metadata.sync.before_complete`): added base files get their footer's
  filter, deleted ones a deleted record.
* :func:`filters_for` hands the BLOOM index (:mod:`hudilite.index.bloom_index`) the live
  filters of the files it asks for, merging each group's latest slice by the column_stats
  rule (:func:`~hudilite.metadata.column_stats.group_slice`); only the entries asked for are
  decoded. A metadata-table compaction (:mod:`~hudilite.metadata.compact`) writes each group
  with logs a new base file (:func:`compaction_units`, :func:`compact_unit`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import fastavro

from hudilite import config as cfg
from hudilite.errors import ConfigError, CorruptFileError
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_compact as csc
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import hfiles
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.storage.bloom_filter import (
    BLOOM_FILTER_FOOTER,
    BLOOM_FILTER_TYPE_CODE_FOOTER,
    OLD_BLOOM_FILTER_FOOTER,
    SIMPLE,
    BloomFilter,
    deserialize,
)
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
from hudilite.storage.parquet_io import read_footer
from hudilite.tablestate import properties_file
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.timeline import Timeline

PARTITION = "bloom_filters"
FILE_ID_PREFIX = "bloom-filters"
#: Hudi's default file group count (``hoodie.metadata.index.bloom.filter.file.group.count``).
FILE_GROUPS = 4
#: ``HoodieMetadataPayload.METADATA_TYPE_BLOOM_FILTER``.
BLOOM_FILTER_TYPE = 4
#: The initialization instant (``SOLO_COMMIT_TIMESTAMP`` + offset 4: after the files,
#: column_stats, record_index and partition_stats partitions' offsets).
INIT_INSTANT = "00000000000000004"
PART_DIR = join(mt.METADATA_DIR, PARTITION)


@dataclass(frozen=True)
class BloomRecord:
    """One ``HoodieMetadataBloomFilter`` record (see the module docstring)."""

    key: str
    type_code: str
    timestamp: str
    bloom: bytes = b""
    deleted: bool = False

    def filter(self) -> BloomFilter:
        """The bloom filter this record holds (:class:`CorruptFileError` when undecodable)."""
        try:
            return deserialize(self.bloom.decode("ascii"), self.type_code)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CorruptFileError(
                f"metadata table: bloom filter record {self.key!r} undecodable ({exc})"
            ) from exc


def record_key(partition: str, file_name: str) -> str:
    """The key of ``file_name``'s record in data ``partition`` (``getBloomFilterIndexKey``)."""
    return csr.hash64_id(rec.partition_id(partition)) + csr.file_id_hash(file_name)


def file_id(index: int) -> str:
    """The file group ``bloom-filters-000N-0``."""
    return f"{FILE_ID_PREFIX}-{index:04d}-0"


def enabled(options: Mapping[str, str]) -> bool:
    """``hoodie.metadata.index.bloom.filter.enable`` of the table's options."""
    return bool(cfg.Options(dict(options)).get(cfg.METADATA_BLOOM_FILTER_ENABLED))


def listed(props: Mapping[str, str]) -> bool:
    """True when ``hoodie.table.metadata.partitions`` lists this partition."""
    raw = props.get(cfg.METADATA_PARTITION_KEYS[0]) or ""
    return PARTITION in [p.strip() for p in raw.split(",")]


def file_group_count(gw: FileSystemGateway) -> int:
    """The partition's file groups as built (the highest group index present, plus one)."""
    ids = [
        int(p.file_id.split("-")[2])
        for e in gw.list_dir(PART_DIR)
        if isinstance(p := parse_data_file_name(e.name), BaseFileName | LogFileName)
        and p.file_id.startswith(FILE_ID_PREFIX + "-")
    ]
    return max(ids) + 1 if ids else FILE_GROUPS


@cache
def _parsed() -> Any:
    return fastavro.parse_schema(json.loads(rec.schema_json()))


def encode_datum(record: BloomRecord, *, file_name: str | None = None) -> bytes:
    """The Avro datum of ``record`` (key blanked, as values are stored in HFiles)."""
    value: dict[str, Any] = dict.fromkeys(rec.META_FIELDS)
    value["_hoodie_file_name"] = file_name
    value.update(dict.fromkeys(rec.OTHER_PAYLOADS))
    value.update(key="", type=BLOOM_FILTER_TYPE, filesystemMetadata=None)
    value["BloomFilterMetadata"] = {
        "type": record.type_code,
        "timestamp": record.timestamp,
        "bloomFilter": record.bloom,
        "isDeleted": record.deleted,
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(), value)
    return out.getvalue()


def decode_datum(key: str, data: bytes) -> BloomRecord:
    """The record of an HFile entry (:class:`CorruptFileError` naming the key when it is
    undecodable or of another type)."""
    stream = io.BytesIO(data)
    try:
        value = cast(dict[str, Any], fastavro.schemaless_reader(stream, _parsed(), None))
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"metadata table entry {key!r}: undecodable ({exc})") from exc
    meta = value.get("BloomFilterMetadata")
    if value.get("type") != BLOOM_FILTER_TYPE or not isinstance(meta, dict):
        raise CorruptFileError(
            f"metadata table: record {key!r} of type {value.get('type')!r} is not a "
            "bloom_filters record"
        )
    return BloomRecord(
        key, str(meta["type"]), str(meta["timestamp"]), bytes(meta["bloomFilter"]),
        bool(meta["isDeleted"]),
    )  # fmt: skip


def encode_hfile(records: Sequence[BloomRecord], *, base_file: str | None = None) -> bytes:
    """An HFile of ``records`` sorted by key: a log block's content, or with ``base_file``
    (its name) a compaction's base file with the key bloom filter and key range Hudi's
    metadata base files carry."""
    ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
    writer = HFileWriter(block_size=hfiles.BLOCK_SIZE, compression="GZ")
    for record in ordered:
        writer.append(record.key.encode("utf-8"), encode_datum(record, file_name=base_file))
    writer.append_file_info(SCHEMA_KEY, rec.schema_json().encode("utf-8"))
    if base_file is not None:
        keys = hfiles.BLOOM.new_filter()
        keys.add([r.key for r in ordered])
        writer.append_file_info(BLOOM_FILTER_TYPE_CODE, keys.type_code.encode("ascii"))
        if ordered:
            writer.append_file_info(MIN_RECORD_KEY, ordered[0].key.encode("utf-8"))
            writer.append_file_info(MAX_RECORD_KEY, ordered[-1].key.encode("utf-8"))
        writer.append_meta_block(BLOOM_FILTER_META_BLOCK, keys.serialize().encode("ascii"))
    return writer.finish()


def decode_hfile(content: bytes, keys: frozenset[str] | None = None) -> list[BloomRecord]:
    """The records of a bloom_filters HFile; given ``keys``, only those, found by point
    lookups in key order (Hudi's reader seeks too: only the blocks holding them are read)."""
    reader = HFileReader(content)
    if keys is None:
        return [decode_datum(k.decode("utf-8"), v) for k, v in reader.entries()]
    out = []
    for key in sorted(keys, key=lambda k: k.encode("utf-8")):
        value = reader.get(key.encode("utf-8"))
        if value is not None:
            out.append(decode_datum(key, value))
    return out


def footer_record(
    gw: FileSystemGateway, partition: str, name: str, time: str
) -> BloomRecord | None:
    """The record of base file ``name`` of ``partition``: its footer's filter bytes as
    stored (None for a file without one, or not a Parquet base file: Hudi writes none)."""
    if not name.endswith(".parquet") or not isinstance(parse_data_file_name(name), BaseFileName):
        return None
    footer = read_footer(gw, join(partition, name) if partition else name)
    text = footer.get(BLOOM_FILTER_FOOTER) or footer.get(OLD_BLOOM_FILTER_FOOTER)
    if text is None:
        return None
    code = (footer.get(BLOOM_FILTER_TYPE_CODE_FOOTER) or SIMPLE).upper()
    return BloomRecord(record_key(partition, name), code, time, text.encode("utf-8"))


def records_for(
    gw: FileSystemGateway, files_records: Iterable[rec.FilesRecord], time: str
) -> list[BloomRecord]:
    """The bloom_filters records of the data instant ``time`` whose files-partition
    records are ``files_records``: added base files' filters, deleted ones' deletions
    (typed, as Hudi's, with the table's ``hoodie.bloom.index.filter.type``)."""
    options = {**properties_file.load(gw), **properties_file.read_write_defaults(gw)}
    deleted_type = str(cfg.Options(options).get(cfg.BLOOM_FILTER_TYPE)).upper()
    out: list[BloomRecord] = []
    for record in files_records:
        if record.type != rec.FILE_LIST:
            continue
        partition = rec.partition_path(record.key)
        for name, info in record.files.items():
            if not isinstance(parse_data_file_name(name), BaseFileName):
                continue
            if info.deleted:
                key = record_key(partition, name)
                out.append(BloomRecord(key, deleted_type, time, deleted=True))
            elif (found := footer_record(gw, partition, name, time)) is not None:
                out.append(found)
    return out


def _by_group(records: Iterable[BloomRecord], count: int) -> dict[int, list[BloomRecord]]:
    groups: dict[int, dict[str, BloomRecord]] = {}
    for record in records:  # a later record of a key replaces an earlier one
        groups.setdefault(csr.file_group_index(record.key, count), {})[record.key] = record
    return {g: list(recs.values()) for g, recs in groups.items()}


def write_logs(
    gw: FileSystemGateway, instant_time: str, records: Sequence[BloomRecord]
) -> list[WriteStat]:
    """One log file per file group holding ``records`` of the metadata deltacommit
    ``instant_time`` (one HFILE block each); their write stats for the deltacommit."""
    stats = []
    for group, recs in sorted(_by_group(records, file_group_count(gw)).items()):
        fid = file_id(group)
        block = LogBlock(
            BlockType.HFILE,
            {HeaderKey.SCHEMA: rec.schema_json(), HeaderKey.INSTANT_TIME: instant_time},
            encode_hfile(recs),
        )
        stats.append(
            mt.write_log_slice(gw, PARTITION, fid, instant_time, [block], updates=len(recs))
        )
    return stats


def remove(gw: FileSystemGateway) -> None:
    """Drop the partition: unlisted first, then its folder and initialization instant."""
    cs.remove(gw, part=PARTITION, init_instant=INIT_INSTANT)


def initialize(gw: FileSystemGateway) -> int:
    """Build the partition from the files partition's listing (see the module docstring);
    the caller holds the table lock. Returns the number of records written."""
    remove(gw)
    props = properties_file.load(gw)
    options = {**props, **properties_file.read_write_defaults(gw)}
    count = int(cfg.Options(options).get(cfg.METADATA_BLOOM_FILTER_FILE_GROUP_COUNT))
    if count < 1:
        raise ConfigError(
            f"{cfg.METADATA_BLOOM_FILTER_FILE_GROUP_COUNT.name} must be at least 1, got {count}"
        )
    config = cfg.TableConfig.from_properties(props)
    listing = mt.listing_of(mt.read_files_partition(gw, Timeline.load(gw, config)))
    records = [
        r
        for partition, files in listing.items()
        for name in sorted(files)
        if (r := footer_record(gw, partition, name, INIT_INSTANT)) is not None
    ]
    groups = _by_group(records, count)
    mt.write_initial_slices(
        gw,
        PARTITION,
        INIT_INSTANT,
        [(file_id(g), groups.get(g, [])) for g in range(count)],
        encode_hfile,
    )
    cs.add_listed(gw, PARTITION)
    return len(records)


def read_partition(
    gw: FileSystemGateway,
    data_timeline: Timeline | None = None,
    keys: Iterable[str] | None = None,
) -> dict[str, BloomRecord]:
    """Every key's merged record (deleted ones included) over the file groups' latest
    slices; given ``keys``, only those keys' records (the groups they map to are read)."""
    if not gw.exists(PART_DIR):
        return {}
    wanted = frozenset(keys) if keys is not None else None
    mdt = mt.load_timeline(gw)
    entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(PART_DIR)]
    fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
    if wanted is not None:
        count = file_group_count(gw)
        needed = {file_id(csr.file_group_index(k, count)) for k in wanted}
        fids = [f for f in fids if f in needed]
    out: dict[str, BloomRecord] = {}
    for fid in fids:
        base, logs = cs.group_slice(gw, fid, entries, mdt, data_timeline)
        batches = [decode_hfile(gw.read_bytes(base), wanted)] if base else []
        for path in logs:
            for block in read_log_file(gw, path):
                if block.block_type == BlockType.HFILE:
                    batches.append(decode_hfile(block.content, wanted))
        for batch in batches:
            out.update((r.key, r) for r in batch)  # the newer record wins
    return out


def filters_for(
    gw: FileSystemGateway, files: Iterable[tuple[str, str]], data_timeline: Timeline | None
) -> dict[tuple[str, str], BloomFilter]:
    """(partition, base file name) -> its bloom filter, for the ``files`` asked that have a
    live record (a file without one is absent: the caller reads its footer)."""
    by_key = {record_key(p, n): (p, n) for p, n in files}
    found = read_partition(gw, data_timeline, by_key)
    return {by_key[k]: r.filter() for k, r in found.items() if not r.deleted}


# ------------------------------------------------------------------ metadata compaction


def compaction_units(
    gw: FileSystemGateway, data_timeline: Timeline | None, timeline: mt.MetadataTimeline
) -> list[csc.Unit]:
    """The file groups whose latest slice has log files, for a metadata-table compaction
    (:mod:`~hudilite.metadata.compact` compacts every partition's groups in one instant,
    as Hudi does)."""
    if not gw.exists(PART_DIR):
        return []
    entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(PART_DIR)]
    fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
    out = []
    for fid in fids:
        base, logs = cs.group_slice(gw, fid, entries, timeline, data_timeline)
        if not logs:
            continue
        parsed = parse_data_file_name(base.rsplit("/", 1)[-1]) if base else None
        base_instant = parsed.instant_time if isinstance(parsed, BaseFileName) else None
        out.append(csc.Unit(PARTITION, fid, base_instant, base, tuple(logs)))
    return out


def compact_unit(gw: FileSystemGateway, unit: csc.Unit, instant_time: str) -> WriteStat:
    """Write the group's new base file ``<fileId>_0-0-0_<instant>.hfile``: its slice's
    records merged (the newer wins), deleted ones dropped (no older file is read again)."""
    merged: dict[str, BloomRecord] = {}
    contents = [gw.read_bytes(unit.base_path)] if unit.base_path else []
    for path in unit.logs:
        contents += [b.content for b in read_log_file(gw, path) if b.block_type == BlockType.HFILE]
    for content in contents:
        merged.update((r.key, r) for r in decode_hfile(content))
    records = [r for r in merged.values() if not r.deleted]
    name = BaseFileName(unit.file_id, mt.WRITE_TOKEN, instant_time, ".hfile").render()
    data = encode_hfile(records, base_file=name)
    gw.write_bytes(join(PART_DIR, name), data)
    return WriteStat(
        file_id=unit.file_id,
        path=f"{PARTITION}/{name}",
        partition_path=PARTITION,
        prev_commit=unit.base_instant or "null",
        num_writes=len(records),
        num_update_writes=len(records),
        total_write_bytes=len(data),
        file_size_in_bytes=len(data),
        total_log_files_compacted=len(unit.logs),
        total_log_size_compacted=sum(gw.size(p) for p in unit.logs),
    )


def pending_base_files(gw: FileSystemGateway, pending: frozenset[str]) -> list[str]:
    """The base files written by the metadata compactions ``pending`` (never completed)."""
    return [
        e.path
        for e in gw.list_dir(PART_DIR)
        if isinstance(p := parse_data_file_name(e.name), BaseFileName) and p.instant_time in pending
    ]
