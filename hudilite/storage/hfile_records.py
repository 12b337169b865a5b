"""Records of HFILE log blocks (block type 4), Hudi's HoodieHFileDataBlock.

The block's content is a whole HFile (:mod:`hudilite.storage.hfile`): one entry per record,
sorted by key. The key is the record's key field (``key`` in the metadata table's records,
HoodieAvroHFileReaderImplBase.KEY_FIELD_NAME), the value the Avro binary datum of the record
in the block's SCHEMA with that field blanked to ``""`` (HFileUtils.serializeRecordsToLogBlock:
the key is not stored twice); the file info ``schema`` repeats the schema. A reader puts the
entry's key back into a blank key field (HoodieAvroHFileReader). Records of a schema without
the key field are keyed by their position, right-aligned in ``ceil(ln n) + 1`` characters as
Hudi's ``String.format("%<width>s", id)`` does.
"""

from __future__ import annotations

import io
import json
import math
import struct
from typing import Any, cast

import fastavro
import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import CorruptFileError
from hudilite.storage.avro_columns import record_bounds
from hudilite.storage.hfile import SCHEMA_KEY, HFileReader, HFileWriter
from hudilite.storage.log_blocks import CONTENT_VERSION, decode_avro_records, encode_avro_records

#: The key field of records in HFile blocks (HoodieAvroHFileReaderImplBase.KEY_FIELD_NAME).
KEY_FIELD = "key"
#: HFileUtils.DEFAULT_BLOCK_SIZE_FOR_LOG_FILE.
LOG_FILE_BLOCK_SIZE = 1024 * 1024


def encode_hfile_records(
    records: pa.Table,
    avro_schema_json: str,
    *,
    key_field: str = KEY_FIELD,
    compression: str = "GZ",
    file_creation_time_ms: int | None = None,
) -> bytes:
    """HFILE block content for ``records``; ValueError naming a key given twice (Hudi refuses
    several records of one key in an HFile block)."""
    n = records.num_rows
    if key_field in records.column_names:
        keys = [str(k) for k in records.column(key_field).to_pylist()]
        blank = pa.array([""] * n, pa.string())
        records = records.set_column(records.column_names.index(key_field), key_field, blank)
    else:
        width = math.ceil(math.log(n)) + 1 if n else 1
        keys = [f"{i:>{width}}" for i in range(n)]
    content = encode_avro_records(records, avro_schema_json)
    starts, ends = record_bounds(content, n, 8)
    datums = {}
    for key, start, end in zip(keys, starts.tolist(), ends.tolist(), strict=True):
        raw = key.encode("utf-8")
        if raw in datums:
            raise ValueError(f"HFile block: several records with key {key!r}")
        datums[raw] = content[start:end]
    writer = HFileWriter(
        block_size=LOG_FILE_BLOCK_SIZE,
        compression=compression,
        file_creation_time_ms=file_creation_time_ms,
    )
    for raw in sorted(datums):
        writer.append(raw, datums[raw])
    writer.append_file_info(SCHEMA_KEY, avro_schema_json.encode("utf-8"))
    return writer.finish()


def decode_hfile_records(
    content: bytes, avro_schema_json: str, *, key_field: str = KEY_FIELD
) -> pa.Table:
    """The records of HFILE block content in key order, as an Arrow table of the schema's types
    (:class:`~hudilite.errors.CorruptFileError` when the HFile or a datum is damaged)."""
    keys: list[bytes] = []
    parts = [b""]
    for key, value in HFileReader(content).entries():
        keys.append(key)
        parts.append(struct.pack(">i", len(value)))
        parts.append(value)
    parts[0] = struct.pack(">ii", CONTENT_VERSION, len(keys))
    table = decode_avro_records(b"".join(parts), avro_schema_json)
    if key_field in table.column_names:
        at = table.column_names.index(key_field)
        column = table.column(at)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            stored = pa.array([k.decode("utf-8") for k in keys], column.type)
            # A null key stays null, as in HoodieAvroHFileReader.
            restored = pc.if_else(pc.equal(column, ""), stored, column)
            table = table.set_column(at, table.schema.field(at), restored)
    return table


def decode_hfile_dicts(
    content: bytes, avro_schema_json: str, *, key_field: str = KEY_FIELD
) -> list[tuple[str, dict[str, Any]]]:
    """(key, record) of every entry of HFILE block content (or of a metadata table base
    file), records decoded with fastavro as dicts: for schemas whose unions have no Arrow
    form, like the metadata table's HoodieMetadataRecord."""
    schema = fastavro.parse_schema(json.loads(avro_schema_json))
    out = []
    for raw, value in HFileReader(content).entries():
        key = raw.decode("utf-8")
        stream = io.BytesIO(value)
        try:
            record = cast(dict[str, Any], fastavro.schemaless_reader(stream, schema, None))
        except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
            raise CorruptFileError(f"HFile entry {key!r}: undecodable Avro datum ({exc})") from exc
        if stream.tell() != len(value):
            raise CorruptFileError(f"HFile entry {key!r}: {len(value)} bytes, datum ends sooner")
        if record.get(key_field) == "":
            record[key_field] = key
        out.append((key, record))
    return out
