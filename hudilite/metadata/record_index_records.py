"""The ``record_index`` partition's records: ``HoodieMetadataRecord`` of type 5.

One record per record key (``HoodieMetadataPayload.createRecordIndexUpdate``), its
``recordIndexMetadata`` a ``HoodieRecordIndexInfo``:

* ``partitionName``: the data partition path holding the key;
* the file id: a UUID file id ``<uuid>-<index>`` (or a bare 36-character UUID, index -1) as
  ``fileIdHighBits``/``fileIdLowBits`` (the UUID's two signed longs) and ``fileIndex``, with
  ``fileId`` ``""`` and ``fileIdEncoding`` 0; any other file id as text in ``fileId`` with
  the three numbers -1 and encoding 1;
* ``instantTime``: epoch milliseconds of the instant that put the key in that file group;
* ``position``: null.

Every other field of the record is null. Values are stored in HFiles keyed by the record
key, the datum's ``key`` blanked (as every metadata partition's); a base file carries the
bloom filter and key range of the metadata table's base files.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import fastavro

from hudilite.errors import CorruptFileError
from hudilite.metadata import hfiles
from hudilite.metadata import records as rec
from hudilite.storage.hfile import (
    BLOOM_FILTER_META_BLOCK,
    BLOOM_FILTER_TYPE_CODE,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    SCHEMA_KEY,
    HFileWriter,
)

PARTITION = "record_index"
#: ``MetadataPartitionType.RECORD_INDEX.getRecordType()``.
RECORD_TYPE = 5
#: ``RECORD_INDEX_MISSING_FILEINDEX_FALLBACK``: a UUID file id without ``-<index>``.
MISSING_FILE_INDEX = -1
_NS = "org.apache.hudi.avro.model."

java_string_hash = rec.java_string_hash
schema_json = rec.schema_json


@cache
def _parsed() -> Any:
    return fastavro.parse_schema(json.loads(rec.schema_json()))


@dataclass(frozen=True)
class Location:
    """Where a key lives: data partition, file id, epoch ms of the instant that put it
    there."""

    partition: str
    file_id: str
    instant_ms: int


def _signed(value: int) -> int:
    return value - (1 << 64) if value & (1 << 63) else value


def encode_file_id(file_id: str) -> dict[str, Any]:
    """The file id fields of ``HoodieRecordIndexInfo`` (see the module docstring)."""
    try:
        if len(file_id) == 36:
            u, index = uuid.UUID(file_id), MISSING_FILE_INDEX
        else:
            head, _, tail = file_id.rpartition("-")
            if len(head) != 36:
                raise ValueError(file_id)
            u, index = uuid.UUID(head), int(tail)
        if str(u) != (file_id if len(file_id) == 36 else head).lower():
            raise ValueError(file_id)
    except ValueError:
        return {
            "fileIdHighBits": -1,
            "fileIdLowBits": -1,
            "fileIndex": -1,
            "fileId": file_id,
            "fileIdEncoding": 1,
        }
    return {
        "fileIdHighBits": _signed(u.int >> 64),
        "fileIdLowBits": _signed(u.int & ((1 << 64) - 1)),
        "fileIndex": index,
        "fileId": "",
        "fileIdEncoding": 0,
    }


def decode_file_id(info: Mapping[str, Any]) -> str:
    """The file id of a ``HoodieRecordIndexInfo`` (``getLocationFromRecordIndexInfo``)."""
    if int(info.get("fileIdEncoding") or 0) == 1:
        return str(info.get("fileId") or "")
    high = int(info["fileIdHighBits"]) & ((1 << 64) - 1)
    low = int(info["fileIdLowBits"]) & ((1 << 64) - 1)
    text = str(uuid.UUID(int=(high << 64) | low))
    index = info.get("fileIndex")
    return text if index is None or int(index) == MISSING_FILE_INDEX else f"{text}-{index}"


def to_avro(key: str, loc: Location, *, file_name: str | None = None) -> dict[str, Any]:
    """The Avro record (a dict for fastavro) of ``key`` at ``loc``."""
    out: dict[str, Any] = dict.fromkeys(rec.META_FIELDS)
    out["_hoodie_file_name"] = file_name
    out["key"] = key
    out["type"] = RECORD_TYPE
    out["filesystemMetadata"] = None
    out.update(dict.fromkeys(rec.OTHER_PAYLOADS))
    out["recordIndexMetadata"] = {
        "partitionName": loc.partition,
        **encode_file_id(loc.file_id),
        "instantTime": loc.instant_ms,
        "position": None,
    }
    return out


def encode_datum(key: str, loc: Location, *, file_name: str | None = None) -> bytes:
    """The Avro binary datum of ``key``'s record, ``key`` blanked as Hudi stores it."""
    value = to_avro(key, loc, file_name=file_name)
    value["key"] = ""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(), value)
    return out.getvalue()


def decode_datum(key: str, data: bytes) -> Location:
    """The location in an HFile entry's datum (:class:`CorruptFileError` naming the key when
    it is not a record index record)."""
    stream = io.BytesIO(data)
    try:
        value = cast(dict[str, Any], fastavro.schemaless_reader(stream, _parsed(), None))
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"record index entry {key!r}: undecodable ({exc})") from exc
    info = value.get("recordIndexMetadata")
    if value.get("type") != RECORD_TYPE or not isinstance(info, dict):
        raise CorruptFileError(
            f"record index entry {key!r}: a record of type {value.get('type')!r}, not 5"
        )
    return Location(
        str(info.get("partitionName") or ""), decode_file_id(info), int(info["instantTime"])
    )


def encode_hfile(
    entries: Mapping[str, Location], *, base_file: bool = False, file_name: str | None = None
) -> bytes:
    """An HFile of ``entries`` sorted by key: a log block's content, or a base file with
    the bloom filter and key range Hudi's base files carry; ``file_name`` fills
    ``_hoodie_file_name`` (Hudi's compaction fills it)."""
    keys = sorted(entries, key=lambda k: k.encode("utf-8"))
    writer = HFileWriter(block_size=hfiles.BLOCK_SIZE, compression="GZ")
    for key in keys:
        writer.append(key.encode("utf-8"), encode_datum(key, entries[key], file_name=file_name))
    writer.append_file_info(SCHEMA_KEY, rec.schema_json().encode("utf-8"))
    if base_file:
        bloom = hfiles.BLOOM.new_filter()
        bloom.add(keys)
        writer.append_file_info(BLOOM_FILTER_TYPE_CODE, bloom.type_code.encode("ascii"))
        if keys:
            writer.append_file_info(MIN_RECORD_KEY, keys[0].encode("utf-8"))
            writer.append_file_info(MAX_RECORD_KEY, keys[-1].encode("utf-8"))
        writer.append_meta_block(BLOOM_FILTER_META_BLOCK, bloom.serialize().encode("ascii"))
    return writer.finish()
