"""HFile v3 building blocks: block framing, cells, index chunks, file info and trailer.

The pieces :mod:`hudilite.storage.hfile` reads and writes, laid out as HBase 2.x writes them
(the metadata table's base files and the content of HFILE log blocks; Hudi 1.0 wrote them
with HBase 2.4, Hudi 1.1 with its own ``org.apache.hudi.io.hfile.HFileWriterImpl``):

* **Block** (HFileBlock): a 33-byte header ``magic[8], int32 onDiskSizeWithoutHeader, int32
  uncompressedSizeWithoutHeader, int64 prevBlockOffset, int8 checksumType, int32
  bytesPerChecksum, int32 onDiskDataSizeWithHeader``, the (compressed) payload, then one
  big-endian checksum per ``bytesPerChecksum`` chunk of header + payload (HBase: CRC32C,
  type 2; Hudi's own writer: type 0, zeroed checksums). ``prevBlockOffset`` is the offset of
  the previous block of the same type, -1 for the first.
* **Cell** (KeyValue): ``int32 keyLength, int32 valueLength, key, value``, then the MVCC
  version as a Hadoop vlong when the file info says ``KEY_VALUE_VERSION`` 1. The key is
  ``int16 rowLength, row, int8 familyLength, family, qualifier, int64 timestamp, int8
  type``; Hudi's key is the row (no family or qualifier, timestamp ``Long.MAX_VALUE``, type
  Put = 4).
* **Index chunks**: the root format (``int64 offset, int32 onDiskSize, vlong keyLength,
  key`` per entry, Hadoop's WritableUtils vlong) for the root data index and the meta index,
  the non-root format (``int32 count``, ``count + 1`` int32 offsets of a secondary index,
  then ``int64 offset, int32 onDiskSize, key``) for leaf and intermediate index blocks.
* **File info**: ``PBUF`` + a length-delimited ``InfoProto`` of (name, value) pairs;
  **trailer**: the last 4,096 bytes, ``TRABLK"$`` + a length-delimited ``TrailerProto``,
  zero padding, and ``int32 (minor << 24) | major``.

The protobuf messages (Hudi's ``HFile.proto``) are built at import from a
``FileDescriptorProto`` and read and written with the protobuf library, delimiters included.
The index key lengths are Hadoop vlongs (a length byte, then big-endian bytes), not protobuf
varints, so they are coded here.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from enum import Enum
from typing import Any

import google_crc32c
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, proto
from google.protobuf.message import DecodeError, Message

from hudilite.errors import CorruptFileError

HEADER_SIZE = 33
TRAILER_SIZE = 4096
#: HBase's bytes per checksum chunk (hbase.hstore.bytes.per.checksum); Hudi writes the same.
BYTES_PER_CHECKSUM = 16 * 1024
#: Major version of the files read and written; HBase writes minor version 3.
MAJOR_VERSION = 3
HBASE_MINOR_VERSION = 3
PBUF_MAGIC = b"PBUF"
#: Timestamp (HConstants.LATEST_TIMESTAMP) and type (Put) of every cell Hudi writes.
LATEST_TIMESTAMP = (1 << 63) - 1
TYPE_PUT = 4
#: Type of the "first on row" keys HBase puts in the index (KeyValue.Type.Maximum).
TYPE_MAXIMUM = 255
#: Class names in the trailer: Hudi's comparator, and HBase 1's name for the default one.
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
HBASE_KV_COMPARATOR = "org.apache.hadoop.hbase.KeyValue$KVComparator"

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_HEADER = struct.Struct(">8siiqbii")
_KV = struct.Struct(">ii")
_ENTRY = struct.Struct(">qi")
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"  # Java's GZIPOutputStream header


class BlockType(Enum):
    """HFile block types by their 8-byte magic (HBase BlockType)."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"


class Compression(Enum):
    """Block compression, valued by HBase's Compression.Algorithm ordinal in the trailer."""

    GZ = 1
    NONE = 2


class ChecksumType(Enum):
    """Block checksum types (HBase ChecksumType codes)."""

    NULL = 0
    CRC32 = 1
    CRC32C = 2


_COMPRESSION_NAMES = {0: "LZO", 3: "SNAPPY", 4: "LZ4", 5: "BZIP2", 6: "ZSTD"}


def compression_of(codec_id: int) -> Compression:
    """The codec of a trailer's ``compression_codec`` (only GZ and NONE are Hudi's)."""
    try:
        return Compression(codec_id)
    except ValueError:
        name = _COMPRESSION_NAMES.get(codec_id, f"id {codec_id}")
        raise CorruptFileError(f"HFile compression {name} is not supported (GZ, NONE)") from None


# --- protobuf messages (Hudi's hudi-io HFile.proto) ---------------------------------------------


def _message_classes() -> tuple[type[Message], type[Message]]:
    f = descriptor_pb2.FieldDescriptorProto
    package = "org.apache.hudi.io.hfile"
    fdp = descriptor_pb2.FileDescriptorProto(name="HFile.proto", package=package, syntax="proto2")
    pair = fdp.message_type.add(name="BytesBytesPair")
    pair.field.add(name="first", number=1, label=f.LABEL_REQUIRED, type=f.TYPE_BYTES)
    pair.field.add(name="second", number=2, label=f.LABEL_REQUIRED, type=f.TYPE_BYTES)
    info = fdp.message_type.add(name="InfoProto")
    info.field.add(
        name="map_entry",
        number=1,
        label=f.LABEL_REPEATED,
        type=f.TYPE_MESSAGE,
        type_name=f".{package}.BytesBytesPair",
    )
    trailer = fdp.message_type.add(name="TrailerProto")
    fields = (
        ("file_info_offset", f.TYPE_UINT64),
        ("load_on_open_data_offset", f.TYPE_UINT64),
        ("uncompressed_data_index_size", f.TYPE_UINT64),
        ("total_uncompressed_bytes", f.TYPE_UINT64),
        ("data_index_count", f.TYPE_UINT32),
        ("meta_index_count", f.TYPE_UINT32),
        ("entry_count", f.TYPE_UINT64),
        ("num_data_index_levels", f.TYPE_UINT32),
        ("first_data_block_offset", f.TYPE_UINT64),
        ("last_data_block_offset", f.TYPE_UINT64),
        ("comparator_class_name", f.TYPE_STRING),
        ("compression_codec", f.TYPE_UINT32),
        ("encryption_key", f.TYPE_BYTES),
    )
    for number, (name, kind) in enumerate(fields, start=1):
        trailer.field.add(name=name, number=number, label=f.LABEL_OPTIONAL, type=kind)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName(f"{package}.InfoProto")),
        get(pool.FindMessageTypeByName(f"{package}.TrailerProto")),
    )


InfoProto, TrailerProto = _message_classes()


def _parse_delimited(message_class: type[Message], data: bytes, what: str) -> Any:
    try:
        return proto.parse_length_prefixed(message_class, io.BytesIO(data))
    except (DecodeError, ValueError, IndexError) as exc:
        raise CorruptFileError(f"HFile {what}: undecodable protobuf ({exc})") from exc


def _delimited(message: Message) -> bytes:
    out = io.BytesIO()
    proto.serialize_length_prefixed(message, out)
    return out.getvalue()


# --- Hadoop vlongs (WritableUtils) ------------------------------------------------------------


def vlong_bytes(value: int) -> bytes:
    """Hadoop's WritableUtils.writeVLong of a non-negative value."""
    if value <= 127:
        return bytes([value])
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([256 - 112 - len(body)]) + body


def read_vlong(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """(value, position after it) of the Hadoop vlong at ``pos``."""
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = -(first + 120) if negative else -(first + 112)
    value = int.from_bytes(data[pos + 1 : pos + 1 + size], "big")
    return (~value if negative else value), pos + 1 + size


# --- blocks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A decoded block: its type, uncompressed payload and where it sits in the file."""

    block_type: BlockType
    payload: bytes
    offset: int
    on_disk_size: int  # header, payload and checksums
    prev_offset: int


def _checksum(kind: ChecksumType, chunk: bytes | memoryview) -> int:
    if kind == ChecksumType.CRC32C:
        return int(google_crc32c.value(bytes(chunk)))
    return zlib.crc32(chunk)


def encode_block(
    block_type: BlockType,
    payload: bytes,
    prev_offset: int,
    compression: Compression,
    checksum: ChecksumType,
) -> bytes:
    """One block as HBase's HFileBlock.Writer lays it out (header, payload, checksums)."""
    data = compress(payload, compression)
    data_size = HEADER_SIZE + len(data)
    chunks = -(-data_size // BYTES_PER_CHECKSUM)
    head = _HEADER.pack(
        block_type.value,
        len(data) + 4 * chunks,
        len(payload),
        prev_offset,
        checksum.value,
        BYTES_PER_CHECKSUM,
        data_size,
    )
    body = head + data
    if checksum == ChecksumType.NULL:
        sums = bytes(4 * chunks)  # Hudi's writer: room for the checksums, left zero
    else:
        view = memoryview(body)
        sums = b"".join(
            _U32.pack(_checksum(checksum, view[i : i + BYTES_PER_CHECKSUM]))
            for i in range(0, data_size, BYTES_PER_CHECKSUM)
        )
    return body + sums


def read_block(
    data: bytes,
    offset: int,
    compression: Compression,
    *,
    expect: tuple[BlockType, ...] = (),
    verify: bool = True,
) -> Block:
    """The block at ``offset``; :class:`CorruptFileError` naming the offset when it is damaged
    (bad magic, sizes past the end, checksum mismatch, undecompressable payload) or not of an
    expected type."""
    if offset < 0 or offset + HEADER_SIZE > len(data):
        raise CorruptFileError(f"HFile block at offset {offset}: past the end ({len(data)} bytes)")
    magic, on_disk, raw_size, prev, kind, per_checksum, data_size = _HEADER.unpack_from(
        data, offset
    )
    try:
        block_type = BlockType(magic)
    except ValueError:
        raise CorruptFileError(f"HFile block at offset {offset}: unknown magic {magic!r}") from None
    if expect and block_type not in expect:
        names = "/".join(t.name for t in expect)
        raise CorruptFileError(
            f"HFile block at offset {offset}: {block_type.name}, expected {names}"
        )
    end = offset + HEADER_SIZE + on_disk
    if (
        on_disk < 0
        or raw_size < 0
        or end > len(data)
        or not HEADER_SIZE <= data_size <= HEADER_SIZE + on_disk
        or per_checksum <= 0
    ):
        raise CorruptFileError(f"HFile block at offset {offset}: inconsistent sizes")
    if verify and kind in (ChecksumType.CRC32.value, ChecksumType.CRC32C.value):
        _verify(data, offset, data_size, end, ChecksumType(kind), per_checksum)
    body = data[offset + HEADER_SIZE : offset + data_size]
    payload = decompress(body, compression, raw_size, offset)
    return Block(block_type, payload, offset, HEADER_SIZE + on_disk, prev)


def _verify(
    data: bytes, offset: int, data_size: int, end: int, kind: ChecksumType, per_checksum: int
) -> None:
    view = memoryview(data)[offset : offset + data_size]
    sums = data[offset + data_size : end]
    chunks = range(0, data_size, per_checksum)
    if len(sums) < 4 * len(chunks):
        raise CorruptFileError(f"HFile block at offset {offset}: checksums missing")
    for n, start in enumerate(chunks):
        (stored,) = _U32.unpack_from(sums, 4 * n)
        if _checksum(kind, view[start : start + per_checksum]) != stored:
            raise CorruptFileError(
                f"HFile block at offset {offset}: {kind.name} checksum mismatch in chunk {n}"
            )


def compress(payload: bytes, compression: Compression) -> bytes:
    """A block payload compressed as HBase does: GZ is a gzip member with Java's header."""
    if compression == Compression.NONE:
        return payload
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflate.compress(payload) + deflate.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def decompress(body: bytes, compression: Compression, size: int, offset: int) -> bytes:
    """The payload of a block body; its length must be the header's uncompressed size."""
    if compression == Compression.NONE:
        payload = body
    else:
        try:
            payload = zlib.decompress(body, 31)
        except zlib.error as exc:
            raise CorruptFileError(f"HFile block at offset {offset}: bad GZ data ({exc})") from exc
    if len(payload) != size:
        raise CorruptFileError(
            f"HFile block at offset {offset}: {len(payload)} payload bytes, header says {size}"
        )
    return payload


# --- cells ------------------------------------------------------------------------------------


def cell_key(row: bytes, key_type: int = TYPE_PUT) -> bytes:
    """The KeyValue key of a Hudi row: no family or qualifier, the latest timestamp."""
    if len(row) > 0x7FFF:
        raise ValueError(f"HFile key of {len(row)} bytes is longer than 32767 bytes")
    return (
        struct.pack(">h", len(row))
        + row
        + b"\x00"
        + _I64.pack(LATEST_TIMESTAMP)
        + bytes([key_type])
    )


def encode_cell(row: bytes, value: bytes) -> bytes:
    """One data block cell: lengths, key, value and the MVCC version 0."""
    key = cell_key(row)
    return _KV.pack(len(key), len(value)) + key + value + b"\x00"


def row_of(key: bytes | memoryview) -> bytes:
    """The row of a KeyValue key (Hudi 1.1's index keys hold only the length and the row)."""
    length = (key[0] << 8) | key[1]
    return bytes(key[2 : 2 + length])


def decode_cells(
    payload: bytes, offset: int, *, mvcc: bool, tags: bool
) -> tuple[list[bytes], list[bytes]]:
    """The rows and values of a data block's cells, in order."""
    rows: list[bytes] = []
    values: list[bytes] = []
    pos, end = 0, len(payload)
    unpack = _KV.unpack_from
    try:
        while pos < end:
            klen, vlen = unpack(payload, pos)
            key_at = pos + 8
            rlen = (payload[key_at] << 8) | payload[key_at + 1]
            if klen < rlen + 12 or vlen < 0:
                raise CorruptFileError(f"HFile data block at offset {offset}: bad cell at {pos}")
            rows.append(payload[key_at + 2 : key_at + 2 + rlen])
            values.append(payload[key_at + klen : key_at + klen + vlen])
            pos = key_at + klen + vlen
            if tags:
                pos += 2 + ((payload[pos] << 8) | payload[pos + 1])
            if mvcc:
                pos = read_vlong(payload, pos)[1]
    except (struct.error, IndexError) as exc:
        raise CorruptFileError(f"HFile data block at offset {offset}: truncated cell") from exc
    if pos != end:
        raise CorruptFileError(f"HFile data block at offset {offset}: truncated cell")
    return rows, values


def midpoint_key(left_row: bytes | None, right_row: bytes) -> bytes:
    """The index key of a data block: HBase's HFileWriterImpl.getMidpoint of the previous
    block's last row and the block's first row (a shortest separator, as a first-on-row key of
    type Maximum), or the first cell's key for the first block."""
    if left_row is None:
        return cell_key(right_row)
    size = min(len(left_row), len(right_row))
    diff = 0
    while diff < size and left_row[diff] == right_row[diff]:
        diff += 1
    if diff < size and left_row[diff] < 0xFF and left_row[diff] + 1 < right_row[diff]:
        mid = left_row[:diff] + bytes([left_row[diff] + 1])
    else:
        mid = right_row[: diff + 1]
    return cell_key(mid, TYPE_MAXIMUM)


# --- index chunks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexEntry:
    """One index entry: the key (a KeyValue key, or a meta block's name) and the block."""

    key: bytes
    offset: int
    size: int


def encode_root_index(entries: list[IndexEntry]) -> bytes:
    """Entries in the root index format (the root data index and the meta index)."""
    return b"".join(
        _ENTRY.pack(e.offset, e.size) + vlong_bytes(len(e.key)) + e.key for e in entries
    )


def root_index_size(key: bytes) -> int:
    """Bytes one entry adds to a root-format chunk (BlockIndexChunk.getRootSize)."""
    return 12 + len(vlong_bytes(len(key))) + len(key)


def decode_root_index(payload: bytes, count: int, offset: int) -> list[IndexEntry]:
    """The first ``count`` entries of a root-format index block."""
    entries = []
    pos = 0
    try:
        for _ in range(count):
            block_offset, size = _ENTRY.unpack_from(payload, pos)
            length, pos = read_vlong(payload, pos + 12)
            if length < 0 or pos + length > len(payload):
                raise IndexError
            entries.append(IndexEntry(payload[pos : pos + length], block_offset, size))
            pos += length
    except (struct.error, IndexError):
        raise CorruptFileError(
            f"HFile root index at offset {offset}: shorter than its {count} entries"
        ) from None
    return entries


def encode_non_root_index(entries: list[IndexEntry]) -> bytes:
    """Entries in the non-root format of leaf and intermediate index blocks."""
    marks, pos = [], 0
    for e in entries:
        marks.append(pos)
        pos += 12 + len(e.key)
    head = struct.pack(f">i{len(marks) + 1}i", len(entries), *marks, pos)
    return head + b"".join(_ENTRY.pack(e.offset, e.size) + e.key for e in entries)


def decode_non_root_index(payload: bytes, offset: int) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index block."""
    try:
        (count,) = _I32.unpack_from(payload, 0)
        marks = struct.unpack_from(f">{count + 1}i", payload, 4)
        base = 4 * (count + 2)
        entries = []
        for n in range(count):
            start, end = base + marks[n], base + marks[n + 1]
            if end < start + 12 or end > len(payload):
                raise IndexError
            block_offset, size = _ENTRY.unpack_from(payload, start)
            entries.append(IndexEntry(payload[start + 12 : end], block_offset, size))
    except (struct.error, IndexError, ValueError):
        raise CorruptFileError(f"HFile index block at offset {offset}: malformed") from None
    return entries


# --- file info and trailer ----------------------------------------------------------------------


def encode_file_info(info: dict[bytes, bytes]) -> bytes:
    """The FILE_INFO payload: ``PBUF`` + the pairs sorted by name, as HBase's TreeMap has them."""
    message: Any = InfoProto()
    for name in sorted(info):
        message.map_entry.add(first=name, second=info[name])
    return PBUF_MAGIC + _delimited(message)


def decode_file_info(payload: bytes, offset: int) -> dict[bytes, bytes]:
    """The (name, value) pairs of a FILE_INFO payload."""
    if payload[:4] != PBUF_MAGIC:
        raise CorruptFileError(f"HFile file info at offset {offset}: no PBUF magic")
    message = _parse_delimited(InfoProto, payload[4:], "file info")
    return {bytes(e.first): bytes(e.second) for e in message.map_entry}


@dataclass(frozen=True)
class Trailer:
    """The fixed trailer's fields (FixedFileTrailer); offsets of -1 mean unset."""

    file_info_offset: int
    load_on_open_data_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression: Compression
    major_version: int = MAJOR_VERSION
    minor_version: int = HBASE_MINOR_VERSION


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def encode_trailer(t: Trailer) -> bytes:
    """The 4,096-byte trailer: magic, delimited TrailerProto, zero padding, version."""
    message: Any = TrailerProto(
        file_info_offset=t.file_info_offset,
        load_on_open_data_offset=t.load_on_open_data_offset,
        uncompressed_data_index_size=t.uncompressed_data_index_size,
        total_uncompressed_bytes=t.total_uncompressed_bytes,
        data_index_count=t.data_index_count,
        meta_index_count=t.meta_index_count,
        entry_count=t.entry_count,
        num_data_index_levels=t.num_data_index_levels,
        first_data_block_offset=t.first_data_block_offset % (1 << 64),
        last_data_block_offset=t.last_data_block_offset % (1 << 64),
        comparator_class_name=t.comparator_class_name,
        compression_codec=t.compression.value,
    )
    body = b'TRABLK"$' + _delimited(message)
    version = (t.minor_version << 24) | t.major_version
    return body + bytes(TRAILER_SIZE - 4 - len(body)) + _I32.pack(version)


def decode_trailer(data: bytes) -> Trailer:
    """The trailer of a whole file; :class:`CorruptFileError` when it is not an HFile v3."""
    if len(data) < TRAILER_SIZE:
        raise CorruptFileError(f"not an HFile: {len(data)} bytes, shorter than its trailer")
    tail = data[-TRAILER_SIZE:]
    if tail[:8] != b'TRABLK"$':
        raise CorruptFileError(f"not an HFile: trailer magic {tail[:8]!r}")
    (version,) = _I32.unpack_from(tail, TRAILER_SIZE - 4)
    major, minor = version & 0xFFFFFF, (version >> 24) & 0xFF
    if major != MAJOR_VERSION:
        raise CorruptFileError(f"HFile version {major}.{minor} is not supported (3)")
    m = _parse_delimited(TrailerProto, tail[8 : TRAILER_SIZE - 4], "trailer")
    return Trailer(
        file_info_offset=m.file_info_offset,
        load_on_open_data_offset=m.load_on_open_data_offset,
        uncompressed_data_index_size=m.uncompressed_data_index_size,
        total_uncompressed_bytes=m.total_uncompressed_bytes,
        data_index_count=m.data_index_count,
        meta_index_count=m.meta_index_count,
        entry_count=m.entry_count,
        num_data_index_levels=m.num_data_index_levels if m.HasField("num_data_index_levels") else 1,
        first_data_block_offset=_signed(m.first_data_block_offset),
        last_data_block_offset=_signed(m.last_data_block_offset),
        comparator_class_name=m.comparator_class_name,
        compression=compression_of(m.compression_codec)
        if m.HasField("compression_codec")
        else Compression.NONE,
        major_version=major,
        minor_version=minor,
    )
