"""The ``files`` partition's records: Hudi's ``HoodieMetadataRecord`` of types 1 and 2.

Hudi 1.x keeps a table's file listing in the metadata table's ``files`` partition as
``HoodieMetadataRecord`` records (``HoodieMetadata.avsc``, beside this module, is the schema
exactly as Hudi 1.1 writes it into log block headers and HFile file info; meta fields
included, all null):

* key ``__all_partitions__``, ``type`` 1 (``PARTITION_LIST``): ``filesystemMetadata`` maps each
  partition added (``isDeleted`` false) or deleted (true) to size 0;
* key = the partition path (``.`` for a non-partitioned table), ``type`` 2 (``FILE_LIST``):
  ``filesystemMetadata`` maps file names (base and log files, without the partition) to
  ``{size, isDeleted}``.

Every other field is null. A reader merges the records of one key from the base file and
the log blocks in order with ``HoodieMetadataPayload.combineFileSystemMetadata``
(:func:`merge`): a later entry replaces an earlier one taking the larger size, a deletion
drops the file (kept as a tombstone when the file was not listed before), and the listing is
the entries not deleted (:meth:`FilesRecord.live`).

Values are encoded as Avro binary datums in that schema (:func:`encode_datum`); the
``filesystemMetadata`` map is written in the iteration order of the Java ``HashMap`` Hudi
builds (:func:`java_hash_order`), so a datum equals Hudi's byte for byte. The HFile that
holds them (a log block's content or a base file) is built by :mod:`hudilite.metadata.hfiles`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, NamedTuple, cast

import fastavro

from hudilite.errors import CorruptFileError

#: The key of the record listing the table's partitions (``RECORDKEY_PARTITION_LIST``).
ALL_PARTITIONS_KEY = "__all_partitions__"
#: The files partition's name for a non-partitioned table's only partition
#: (``NON_PARTITIONED_NAME``).
NON_PARTITIONED_ID = "."
#: ``HoodieMetadataPayload`` record types of the ``files`` partition.
PARTITION_LIST = 1
FILE_LIST = 2
#: The meta fields the schema carries (written null: the metadata table has none).
META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
#: The record fields that belong to other metadata partitions (null in ``files`` records).
OTHER_PAYLOADS = (
    "BloomFilterMetadata",
    "ColumnStatsMetadata",
    "recordIndexMetadata",
    "SecondaryIndexMetadata",
)


@cache
def schema_json() -> str:
    """``HoodieMetadataRecord`` with meta fields, as Hudi writes it in block headers and HFile
    file info (the exact text)."""
    return resources.files(__package__).joinpath("HoodieMetadata.avsc").read_text("utf-8")


@cache
def schema_json_without_meta() -> str:
    """The schema without meta fields: what a metadata-table commit records as ``schema``."""
    schema = json.loads(schema_json())
    schema["fields"] = [f for f in schema["fields"] if f["name"] not in META_FIELDS]
    return json.dumps(schema, separators=(",", ":"))


@cache
def _parsed() -> Any:
    return fastavro.parse_schema(json.loads(schema_json()))


class FileInfo(NamedTuple):
    """One ``HoodieMetadataFileInfo``: a file's size, or its deletion."""

    size: int
    deleted: bool = False


@dataclass(frozen=True)
class FilesRecord:
    """One record of the ``files`` partition (type 1 or 2; see the module docstring).

    ``files`` keeps the order entries were added in (Hudi's map order is derived from it).
    """

    key: str
    type: int
    files: dict[str, FileInfo] = field(default_factory=dict)

    def live(self) -> dict[str, int]:
        """The entries not deleted: file name (or partition) -> size."""
        return {name: info.size for name, info in self.files.items() if not info.deleted}


def partition_id(partition_path: str) -> str:
    """The files partition's name for a data partition (``getPartitionIdentifier``)."""
    return partition_path if partition_path else NON_PARTITIONED_ID


def partition_path(partition_id_: str) -> str:
    """The data partition path of a files-partition key (inverse of :func:`partition_id`)."""
    return "" if partition_id_ == NON_PARTITIONED_ID else partition_id_


def partition_list_record(partitions: Iterable[str], *, deleted: bool = False) -> FilesRecord:
    """The ``__all_partitions__`` record adding (or deleting) ``partitions`` (data partition
    paths; ``createPartitionListRecord``)."""
    files = {partition_id(p): FileInfo(0, deleted) for p in partitions}
    return FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, files)


def partition_files_record(
    partition: str, added: Mapping[str, int] | None = None, deleted: Iterable[str] = ()
) -> FilesRecord:
    """The record of one data partition: ``added`` file names with their sizes, ``deleted``
    file names (``createPartitionFilesRecord``: additions first, then deletions)."""
    files = {name: FileInfo(int(size)) for name, size in (added or {}).items()}
    for name in deleted:
        files[name] = FileInfo(0, True)
    return FilesRecord(partition_id(partition), FILE_LIST, files)


def merge(older: FilesRecord, newer: FilesRecord) -> FilesRecord:
    """``newer`` applied on top of ``older`` (``HoodieMetadataPayload.preCombine`` of two
    records of one key; ``combineFileSystemMetadata``)."""
    if older.key != newer.key or older.type != newer.type:
        raise CorruptFileError(
            f"metadata table: cannot merge record {newer.key!r} (type {newer.type}) into "
            f"{older.key!r} (type {older.type})"
        )
    files = dict(older.files)
    for name, info in newer.files.items():
        old = files.get(name)
        if old is None:
            files[name] = info
        elif info.deleted:
            if old.deleted:
                files[name] = info  # deleted twice: the tombstone stays (Hudi warns)
            else:
                del files[name]
        else:
            files[name] = FileInfo(max(info.size, old.size))
    return FilesRecord(older.key, older.type, files)


def merge_all(batches: Iterable[Iterable[FilesRecord]]) -> dict[str, FilesRecord]:
    """The merged record of every key over ``batches`` (the base file's, then each log
    block's records, oldest first)."""
    out: dict[str, FilesRecord] = {}
    for batch in batches:
        for record in batch:
            seen = out.get(record.key)
            out[record.key] = record if seen is None else merge(seen, record)
    return out


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """``keys`` (in insertion order) in the iteration order of a ``java.util.HashMap`` of
    default capacity they were put into: by bucket at the final table size (16, doubled
    while the map holds more than 3/4 of it), insertion order within a bucket."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    while len(ordered) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(ordered, key=bucket)  # sorted() is stable: insertion order within a bucket


def to_avro(record: FilesRecord, *, file_name: str | None = None) -> dict[str, Any]:
    """The Avro record (a dict for fastavro) of ``record``; ``file_name`` fills
    ``_hoodie_file_name`` as Hudi's base-file writer does."""
    out: dict[str, Any] = dict.fromkeys(META_FIELDS)
    out["_hoodie_file_name"] = file_name
    out["key"] = record.key
    out["type"] = record.type
    out["filesystemMetadata"] = {
        name: {"size": record.files[name].size, "isDeleted": record.files[name].deleted}
        for name in java_hash_order(record.files)
    }
    out.update(dict.fromkeys(OTHER_PAYLOADS))
    return out


def from_avro(value: Mapping[str, Any]) -> FilesRecord:
    """A decoded ``HoodieMetadataRecord`` of the files partition as a :class:`FilesRecord`
    (:class:`CorruptFileError` naming the key when it is of another type)."""
    key = value.get("key")
    kind = value.get("type")
    if not isinstance(key, str) or kind not in (PARTITION_LIST, FILE_LIST):
        raise CorruptFileError(
            f"metadata table: record {key!r} of type {kind!r} is not a files-partition record"
        )
    listing = value.get("filesystemMetadata") or {}
    files = {
        str(name): FileInfo(int(info["size"]), bool(info["isDeleted"]))
        for name, info in listing.items()
    }
    return FilesRecord(key, int(kind), files)


def encode_datum(record: FilesRecord, *, file_name: str | None = None) -> bytes:
    """The Avro binary datum of ``record``, the key field blanked to ``""`` as Hudi stores
    values in HFiles (the key is the HFile entry's key)."""
    value = to_avro(record, file_name=file_name)
    value["key"] = ""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(), value)
    return out.getvalue()


def decode_datum(key: str, data: bytes) -> FilesRecord:
    """The record of an HFile entry: ``key`` and its Avro datum."""
    stream = io.BytesIO(data)
    try:
        value = cast(dict[str, Any], fastavro.schemaless_reader(stream, _parsed(), None))
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"metadata table entry {key!r}: undecodable ({exc})") from exc
    if stream.tell() != len(data):
        raise CorruptFileError(
            f"metadata table entry {key!r}: {len(data)} bytes, datum ends sooner"
        )
    if not value.get("key"):
        value["key"] = key
    return from_avro(value)
