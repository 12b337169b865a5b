"""The HFiles of the ``files`` partition: log block content and base files.

Both are HFiles (:mod:`hudilite.storage.hfile`) of one entry per record, sorted by key, whose
value is the record's Avro datum (:func:`hudilite.metadata.records.encode_datum`) and whose
file info ``schema`` is ``HoodieMetadataRecord``'s. They differ as Hudi 1.1 writes them:

* log block content (``HoodieHFileDataBlock``, log block type 4): GZ, 1 MiB blocks
  (``HFileUtils.DEFAULT_BLOCK_SIZE_FOR_LOG_FILE``), no bloom filter;
* a base file (``HoodieAvroHFileWriter``, ``<fileId>_<token>_<instant>.hfile``): GZ, 1 MiB
  blocks, a ``DYNAMIC_V0`` bloom filter of the keys (10,000 entries, fpp 1e-9: the metadata
  table's write config) in the meta block ``bloomFilter``, and the file info
  ``bloomFilterTypeCode``, ``minRecordKey`` and ``maxRecordKey``.
"""

from __future__ import annotations

from collections.abc import Iterable

from hudilite.metadata import records as rec
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.storage.hfile import (
    BLOOM_FILTER_META_BLOCK,
    BLOOM_FILTER_TYPE_CODE,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    SCHEMA_KEY,
    HFileReader,
    HFileWriter,
)

#: Data block size of both kinds of HFile (``hoodie.hfile.block.size`` and the log files').
BLOCK_SIZE = 1024 * 1024
#: The bloom filter of the metadata table's base files.
BLOOM = BloomConfig(num_entries=10000, fpp=0.000000001)


def _sorted(records: Iterable[rec.FilesRecord]) -> list[rec.FilesRecord]:
    by_key: dict[str, rec.FilesRecord] = {}
    for record in records:
        if record.key in by_key:
            raise ValueError(f"metadata table HFile: record {record.key!r} given twice")
        by_key[record.key] = record
    return [by_key[k] for k in sorted(by_key, key=lambda k: k.encode("utf-8"))]


def encode_log_block(
    records: Iterable[rec.FilesRecord], *, file_creation_time_ms: int | None = None
) -> bytes:
    """The content of an HFILE log block holding ``records``."""
    writer = HFileWriter(
        block_size=BLOCK_SIZE, compression="GZ", file_creation_time_ms=file_creation_time_ms
    )
    for record in _sorted(records):
        writer.append(record.key.encode("utf-8"), rec.encode_datum(record))
    writer.append_file_info(SCHEMA_KEY, rec.schema_json().encode("utf-8"))
    return writer.finish()


def encode_base_file(
    records: Iterable[rec.FilesRecord],
    *,
    file_name: str | None = None,
    file_creation_time_ms: int | None = None,
) -> bytes:
    """A base file holding ``records``; ``file_name`` fills their ``_hoodie_file_name`` (Hudi
    fills it when compaction writes the file, not when initialization does)."""
    ordered = _sorted(records)
    writer = HFileWriter(
        block_size=BLOCK_SIZE, compression="GZ", file_creation_time_ms=file_creation_time_ms
    )
    bloom = BLOOM.new_filter()
    bloom.add([r.key for r in ordered])
    for record in ordered:
        writer.append(record.key.encode("utf-8"), rec.encode_datum(record, file_name=file_name))
    writer.append_file_info(SCHEMA_KEY, rec.schema_json().encode("utf-8"))
    writer.append_file_info(BLOOM_FILTER_TYPE_CODE, bloom.type_code.encode("ascii"))
    if ordered:
        writer.append_file_info(MIN_RECORD_KEY, ordered[0].key.encode("utf-8"))
        writer.append_file_info(MAX_RECORD_KEY, ordered[-1].key.encode("utf-8"))
    writer.append_meta_block(BLOOM_FILTER_META_BLOCK, bloom.serialize().encode("ascii"))
    return writer.finish()


def decode(content: bytes) -> list[rec.FilesRecord]:
    """The records of a files-partition HFile (log block content or base file), in key order
    (:class:`~hudilite.errors.CorruptFileError` when damaged or of another partition)."""
    return [rec.decode_datum(k.decode("utf-8"), v) for k, v in HFileReader(content).entries()]
