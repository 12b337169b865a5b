"""HFile v3 reader and writer: the metadata table's base files and HFILE log block content.

An HFile (docs/dev/hudi-format.md; HBase 2.x, as Hudi writes it) is::

    data blocks (KeyValue cells, sorted by key), leaf index blocks between them when the
        data index has several levels
    meta blocks (Hudi: the bloom filter, "bloomFilter")
    intermediate index blocks (three levels or more)
    root data index | meta index | file info     the "load-on-open" section
    trailer                                      fixed 4,096 bytes

Block and field layouts are in :mod:`hudilite.storage.hfile_format`. Keys and values are
bytes; a key is the cell's row (Hudi writes no family, qualifier or timestamp).

:class:`HFileReader` reads files written by HBase 2.4 (Hudi 1.0) and by Hudi 1.1's own
writer: every entry in key order across the multi-level data index, seeks, the file info and
meta blocks, GZ or uncompressed, CRC32/CRC32C block checksums verified.

:class:`HFileWriter` writes what HBase 2.4's HFileWriterImpl writes for Hudi (byte for byte
for uncompressed files with the same parameters, see ``tests/unit/storage/test_hfile.py``):
data blocks closed once they reach the block size, index keys shortened to HBase's midpoint between
blocks, leaf index blocks inline once a chunk reaches the index block size and intermediate
levels until the root fits, meta blocks, file info with HBase's reserved keys, CRC32C
checksums. One difference is Hudi's (HFileWriterImpl of Hudi 1.1): equal keys are never split
between two data blocks, so a seek finds every entry of a key from its first one.
"""

from __future__ import annotations

import bisect
import struct
import time
from collections.abc import Iterator, Mapping
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from hudilite.errors import CorruptFileError
from hudilite.storage.hfile_format import (
    HEADER_SIZE,
    HUDI_COMPARATOR,
    TRAILER_SIZE,
    Block,
    BlockType,
    ChecksumType,
    Compression,
    IndexEntry,
    Trailer,
    decode_cells,
    decode_file_info,
    decode_non_root_index,
    decode_root_index,
    decode_trailer,
    encode_block,
    encode_cell,
    encode_file_info,
    encode_non_root_index,
    encode_root_index,
    encode_trailer,
    midpoint_key,
    read_block,
    root_index_size,
    row_of,
)

if TYPE_CHECKING:
    from hudilite.storage.fs import FileSystemGateway

_E = TypeVar("_E", bound=Enum)

# File info keys (HBase HFileInfo / HFileWriterImpl, Hudi's HoodieAvroHFileWriter).
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
TAGS_COMPRESSED = b"hfile.TAGS_COMPRESSED"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
#: Hudi's own keys: the Avro schema of the values, the key range and the bloom filter's type.
SCHEMA_KEY = b"schema"
MIN_RECORD_KEY = b"minRecordKey"
MAX_RECORD_KEY = b"maxRecordKey"
BLOOM_FILTER_TYPE_CODE = b"bloomFilterTypeCode"
#: The meta block holding Hudi's bloom filter (its serialized text).
BLOOM_FILTER_META_BLOCK = "bloomFilter"

_INT_KEYS = {AVG_KEY_LEN, AVG_VALUE_LEN, KEY_VALUE_VERSION, MAX_TAGS_LEN}
_LONG_KEYS = {CREATE_TIME_TS, MAX_MEMSTORE_TS_KEY}
_TEXT_KEYS = {SCHEMA_KEY, MIN_RECORD_KEY, MAX_RECORD_KEY, BLOOM_FILTER_TYPE_CODE}
_WRITER_KEYS = {KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}


def decode_file_info_value(name: bytes, value: bytes) -> object:
    """A file info value decoded where its key is known: ints for lengths and times, the row
    of ``hfile.LASTKEY``, text for Hudi's keys, a bool for TAGS_COMPRESSED; else the bytes."""
    if name in _INT_KEYS and len(value) == 4:
        return struct.unpack(">i", value)[0]
    if name in _LONG_KEYS and len(value) == 8:
        return struct.unpack(">q", value)[0]
    if name == LAST_KEY and len(value) >= 2:
        return row_of(value)
    if name == TAGS_COMPRESSED and len(value) == 1:
        return value != b"\x00"
    if name in _TEXT_KEYS:
        return value.decode("utf-8")
    return value


class HFileReader:
    """Reads a whole HFile held in memory.

    ``seek(key)`` gives the first entry whose key is >= ``key``. Hudi's ``HFileReader.seekTo``
    answers FOUND with the cursor on the key when it exists; when it does not, its cursor is
    on the greatest key below (IN_RANGE) and the next entry is what ``seek`` returns here
    (None where seekTo answers EOF). With non-unique keys, ``seek`` finds a key's first entry.
    """

    def __init__(self, data: bytes, *, verify_checksums: bool = True) -> None:
        self._data = bytes(data)
        self._verify = verify_checksums
        self.trailer: Trailer = decode_trailer(self._data)
        t = self.trailer
        root = self._block(t.load_on_open_data_offset, BlockType.ROOT_INDEX)
        top = decode_root_index(root.payload, t.data_index_count, root.offset)
        meta_index = self._block(root.offset + root.on_disk_size, BlockType.ROOT_INDEX)
        self._meta = {
            e.key.decode("utf-8", "replace"): e
            for e in decode_root_index(meta_index.payload, t.meta_index_count, meta_index.offset)
        }
        info = self._block(t.file_info_offset, BlockType.FILE_INFO)
        #: The file info: raw names and values (see :meth:`file_info_values` for decoded ones).
        self.file_info: dict[bytes, bytes] = decode_file_info(info.payload, info.offset)
        # Hudi reads one MVCC byte per cell whatever the file says; HBase only with
        # KEY_VALUE_VERSION 1. Both writers write it and the key, so only an explicit 0 drops it.
        version = self.file_info.get(KEY_VALUE_VERSION)
        self._mvcc = version is None or struct.unpack(">i", version)[0] == 1
        self._tags = MAX_TAGS_LEN in self.file_info
        self._index = self._data_index(top)
        self._rows = [row_of(e.key) for e in self._index]
        self._cached: tuple[int, list[bytes], list[bytes]] | None = None

    @classmethod
    def open(cls, gw: FileSystemGateway, rel_path: str) -> HFileReader:
        """The HFile at a table-relative path."""
        return cls(gw.read_bytes(rel_path))

    # --- structure ------------------------------------------------------------------------

    def _block(self, offset: int, *expect: BlockType) -> Block:
        return read_block(
            self._data, offset, self.trailer.compression, expect=expect, verify=self._verify
        )

    def _data_index(self, top: list[IndexEntry]) -> list[IndexEntry]:
        """The data blocks' index entries in order, following intermediate and leaf levels."""
        entries = top
        levels = self.trailer.num_data_index_levels
        for level in range(levels - 1, 0, -1):
            kind = BlockType.LEAF_INDEX if level == 1 else BlockType.INTERMEDIATE_INDEX
            below: list[IndexEntry] = []
            for entry in entries:
                block = self._block(entry.offset, kind)
                below.extend(decode_non_root_index(block.payload, block.offset))
            entries = below
        return entries

    @property
    def entry_count(self) -> int:
        """The number of entries the trailer records."""
        return self.trailer.entry_count

    @property
    def data_block_count(self) -> int:
        """The number of data blocks."""
        return len(self._index)

    @property
    def last_key(self) -> bytes | None:
        """The last key of the file (file info ``hfile.LASTKEY``), None when empty."""
        raw = self.file_info.get(LAST_KEY)
        return row_of(raw) if raw else None

    def file_info_values(self) -> dict[str, object]:
        """The file info by name, values decoded where the key is known."""
        return {
            name.decode("utf-8", "replace"): decode_file_info_value(name, value)
            for name, value in self.file_info.items()
        }

    def meta_block_names(self) -> list[str]:
        """The names of the meta blocks, in index order."""
        return list(self._meta)

    def meta_block(self, name: str) -> bytes | None:
        """The content of a meta block, None when the file has none of that name."""
        entry = self._meta.get(name)
        if entry is None:
            return None
        return self._block(entry.offset, BlockType.META).payload

    # --- entries --------------------------------------------------------------------------

    def _cells(self, n: int) -> tuple[list[bytes], list[bytes]]:
        if self._cached is not None and self._cached[0] == n:
            return self._cached[1], self._cached[2]
        block = self._block(self._index[n].offset, BlockType.DATA)
        rows, values = decode_cells(block.payload, block.offset, mvcc=self._mvcc, tags=self._tags)
        self._cached = (n, rows, values)
        return rows, values

    def entries(self, start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) of every entry in key order, from the first key >= ``start``."""
        first = 0
        if start is not None:
            # The last block whose index key is below ``start``: index keys are at most the
            # block's first key (HBase shortens them) and above the previous block's keys, so
            # earlier blocks hold only smaller keys. Strictly below, so that a key whose
            # entries end one block and start the next is found from its first entry.
            first = max(bisect.bisect_left(self._rows, start) - 1, 0)
        for n in range(first, len(self._index)):
            rows, values = self._cells(n)
            skip = bisect.bisect_left(rows, start) if start is not None and n == first else 0
            yield from zip(rows[skip:], values[skip:], strict=True)

    def seek(self, key: bytes) -> tuple[bytes, bytes] | None:
        """The first entry whose key is >= ``key``, None past the last key."""
        return next(self.entries(key), None)

    def get(self, key: bytes) -> bytes | None:
        """The value of the first entry of ``key``, None when the key is absent."""
        found = self.seek(key)
        return found[1] if found is not None and found[0] == key else None

    def get_all(self, key: bytes) -> list[bytes]:
        """The values of every entry of ``key`` (non-unique keys), in file order."""
        out = []
        for k, v in self.entries(key):
            if k != key:
                break
            out.append(v)
        return out

    def keys(self) -> list[bytes]:
        """Every key in order."""
        return [k for k, _ in self.entries()]


class HFileWriter:
    """Builds an HFile in memory; :meth:`finish` returns its bytes.

    ``block_size`` is the data block size (Hudi's ``hoodie.hfile.block.size``, 1 MiB); a
    block is closed once its cells reach it. ``index_block_size`` and ``min_index_entries``
    are HBase's ``hfile.index.block.max.size`` (128 KiB) and ``hfile.index.block.min.entries``
    (16): past one index chunk the data index gets leaf blocks, and intermediate levels while
    the root chunk is larger. ``checksum`` NULL writes zeroed checksums as Hudi 1.1 does;
    ``file_creation_time_ms`` defaults to now.
    """

    def __init__(
        self,
        *,
        block_size: int = 1024 * 1024,
        compression: Compression | str = Compression.GZ,
        checksum: ChecksumType | str = ChecksumType.CRC32C,
        index_block_size: int = 128 * 1024,
        min_index_entries: int = 16,
        comparator: str = HUDI_COMPARATOR,
        file_creation_time_ms: int | None = None,
    ) -> None:
        if block_size <= 0 or index_block_size <= 0 or min_index_entries < 2:
            raise ValueError(
                f"HFile block sizes must be positive and min_index_entries >= 2: {block_size},"
                f" {index_block_size}, {min_index_entries}"
            )
        self._compression = _enum(Compression, compression, "compression")
        self._checksum = _enum(ChecksumType, checksum, "checksum")
        self._block_size = block_size
        self._index_block_size = index_block_size
        self._min_index_entries = min_index_entries
        self._comparator = comparator
        self._created = (
            int(time.time() * 1000) if file_creation_time_ms is None else file_creation_time_ms
        )
        self._out = bytearray()
        self._prev: dict[BlockType, int] = {}
        self._cells: list[bytes] = []
        self._cells_size = 0
        self._block_first: bytes | None = None
        self._last: bytes | None = None  # last key appended
        self._prev_block_last: bytes | None = None
        self._inline: list[IndexEntry] | None = []  # leaf-level chunk; None once made the root
        self._root: list[IndexEntry] = []
        self._sub_entries: list[int] = []  # data blocks indexed up to each leaf block
        self._levels = 1
        self._data_blocks = 0
        self._first_data = -1
        self._last_data = -1
        self._total_uncompressed = 0
        self._index_uncompressed = 0
        self._entries = 0
        self._key_bytes = 0
        self._value_bytes = 0
        self._meta: dict[str, bytes] = {}
        self._info: dict[bytes, bytes] = {}
        self._finished = False

    def append(self, key: bytes, value: bytes) -> None:
        """Adds an entry; keys must come in non-decreasing byte order."""
        self._check_open()
        key, value = bytes(key), bytes(value)
        if self._last is not None and key < self._last:
            raise ValueError(f"HFile keys must be appended in order: {key!r} after {self._last!r}")
        cell = encode_cell(key, value)
        # HBase closes a block that reached the block size before the next cell; Hudi never
        # splits one key's entries between blocks.
        if self._cells and self._cells_size >= self._block_size and key != self._last:
            self._finish_block()
            self._write_inline(closing=False)
        if not self._cells:
            self._block_first = key
        self._cells.append(cell)
        self._cells_size += len(cell)
        self._last = key
        self._entries += 1
        self._key_bytes += len(key) + 12  # the KeyValue key: lengths, row, timestamp, type
        self._value_bytes += len(value)

    def append_file_info(self, name: str | bytes, value: bytes) -> None:
        """Adds a file info entry (names starting ``hfile.`` are HBase's, refused as it does)."""
        self._check_open()
        raw = name.encode("utf-8") if isinstance(name, str) else bytes(name)
        if raw.startswith(b"hfile.") or raw in _WRITER_KEYS:
            raise ValueError(f"HFile file info key {raw!r} is reserved for the writer")
        self._info[raw] = bytes(value)

    def append_meta_block(self, name: str, value: bytes) -> None:
        """Adds a meta block (written in name order, as HBase does)."""
        self._check_open()
        if not name:
            raise ValueError("HFile meta block name must not be empty")
        self._meta[name] = bytes(value)

    def finish(self) -> bytes:
        """Writes the remaining blocks, the load-on-open section and the trailer."""
        self._check_open()
        self._finished = True
        if self._cells:
            self._finish_block()
        self._write_inline(closing=True)
        meta_index = []
        for name in sorted(self._meta, key=lambda n: n.encode("utf-8")):
            payload = self._meta[name]
            offset = self._write(BlockType.META, payload)
            self._total_uncompressed += HEADER_SIZE + len(payload)
            meta_index.append(IndexEntry(name.encode("utf-8"), offset, len(self._out) - offset))
        root_offset = self._write_index()
        payload = encode_root_index(meta_index)
        self._write(BlockType.ROOT_INDEX, payload)
        self._total_uncompressed += HEADER_SIZE + len(payload)
        info_offset = len(self._out)
        payload = encode_file_info(self._file_info())
        self._write(BlockType.FILE_INFO, payload)
        self._total_uncompressed += HEADER_SIZE + len(payload)
        trailer = Trailer(
            file_info_offset=info_offset,
            load_on_open_data_offset=root_offset,
            uncompressed_data_index_size=self._index_uncompressed,
            total_uncompressed_bytes=self._total_uncompressed + TRAILER_SIZE,
            data_index_count=len(self._root),
            meta_index_count=len(meta_index),
            entry_count=self._entries,
            num_data_index_levels=self._levels,
            first_data_block_offset=self._first_data,
            last_data_block_offset=self._last_data,
            comparator_class_name=self._comparator,
            compression=self._compression,
        )
        self._out += encode_trailer(trailer)
        return bytes(self._out)

    # --- internals ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._finished:
            raise ValueError("HFileWriter is finished")

    def _write(self, block_type: BlockType, payload: bytes) -> int:
        """Appends a block; returns its offset. ``prevBlockOffset`` is per block type."""
        offset = len(self._out)
        prev = self._prev.get(block_type, -1)
        self._out += encode_block(block_type, payload, prev, self._compression, self._checksum)
        self._prev[block_type] = offset
        return offset

    def _finish_block(self) -> None:
        payload = b"".join(self._cells)
        offset = self._write(BlockType.DATA, payload)
        if self._first_data < 0:
            self._first_data = offset
        self._last_data = offset
        self._total_uncompressed += HEADER_SIZE + len(payload)
        assert self._block_first is not None and self._inline is not None
        key = midpoint_key(self._prev_block_last, self._block_first)
        self._inline.append(IndexEntry(key, offset, len(self._out) - offset))
        self._data_blocks += 1
        self._prev_block_last = self._last
        self._cells, self._cells_size = [], 0

    def _write_inline(self, *, closing: bool) -> None:
        """HBase's BlockIndexWriter as an inline block writer: a full leaf chunk becomes a leaf
        index block; at close a file without leaf blocks makes the chunk its root."""
        chunk = self._inline
        if not chunk:
            return
        if closing and not self._root:
            self._root, self._inline = chunk, None
            return
        if not closing and _non_root_size(chunk) < self._index_block_size:
            return
        payload = encode_non_root_index(chunk)
        offset = self._write(BlockType.LEAF_INDEX, payload)
        self._index_uncompressed += len(payload)
        self._total_uncompressed += HEADER_SIZE + len(payload)
        self._root.append(IndexEntry(chunk[0].key, offset, len(self._out) - offset))
        self._sub_entries.append(self._data_blocks)
        self._levels = 2
        self._inline = []

    def _write_index(self) -> int:
        """Intermediate levels while the root is too large, then the root; its offset."""
        mid = self._mid_key_metadata() if self._levels > 1 else b""
        if self._inline is not None:
            while (
                _root_size(self._root) > self._index_block_size
                and len(self._root) > self._min_index_entries
                and self._levels < 16
            ):
                self._root = self._intermediate_level(self._root)
                self._levels += 1
        payload = encode_root_index(self._root) + mid
        self._index_uncompressed += len(payload)
        return self._write(BlockType.ROOT_INDEX, payload)

    def _intermediate_level(self, level: list[IndexEntry]) -> list[IndexEntry]:
        parent: list[IndexEntry] = []
        chunk: list[IndexEntry] = []
        for n, entry in enumerate(level):
            chunk.append(entry)
            if n >= self._min_index_entries and _root_size(chunk) >= self._index_block_size:
                parent.append(self._intermediate_block(chunk))
                chunk = []
        if chunk:
            parent.append(self._intermediate_block(chunk))
        return parent

    def _intermediate_block(self, chunk: list[IndexEntry]) -> IndexEntry:
        payload = encode_non_root_index(chunk)
        offset = self._write(BlockType.INTERMEDIATE_INDEX, payload)
        self._index_uncompressed += len(payload)
        return IndexEntry(chunk[0].key, offset, len(self._out) - offset)

    def _mid_key_metadata(self) -> bytes:
        """The 16 bytes after a multi-level root: the leaf block holding the middle data
        block's entry and its position there (BlockIndexChunk.getMidKeyMetadata)."""
        middle = (self._sub_entries[-1] - 1) // 2
        n = bisect.bisect_right(self._sub_entries, middle)
        before = self._sub_entries[n - 1] if n > 0 else 0
        leaf = self._root[n]
        return struct.pack(">qii", leaf.offset, leaf.size, middle - before)

    def _file_info(self) -> dict[bytes, bytes]:
        info = dict(self._info)
        info[MAX_MEMSTORE_TS_KEY] = struct.pack(">q", 0)
        info[KEY_VALUE_VERSION] = struct.pack(">i", 1)
        if self._last is not None:
            info[LAST_KEY] = encode_cell(self._last, b"")[8:-1]
        n = self._entries
        info[AVG_KEY_LEN] = struct.pack(">i", self._key_bytes // n if n else 0)
        info[CREATE_TIME_TS] = struct.pack(">q", self._created)
        info[AVG_VALUE_LEN] = struct.pack(">i", self._value_bytes // n if n else 0)
        return info


def write_hfile(
    entries: Mapping[bytes, bytes] | list[tuple[bytes, bytes]],
    *,
    file_info: Mapping[str, bytes] | None = None,
    meta_blocks: Mapping[str, bytes] | None = None,
    **options: object,
) -> bytes:
    """An HFile of sorted ``entries`` (a mapping is sorted by key first); ``options`` are
    :class:`HFileWriter`'s."""
    writer = HFileWriter(**options)  # type: ignore[arg-type]
    items = sorted(entries.items()) if isinstance(entries, Mapping) else entries
    for key, value in items:
        writer.append(key, value)
    for name, value in (file_info or {}).items():
        writer.append_file_info(name, value)
    for name, value in (meta_blocks or {}).items():
        writer.append_meta_block(name, value)
    return writer.finish()


def _enum(kind: type[_E], value: object, what: str) -> _E:
    if isinstance(value, kind):
        return value
    try:
        return kind[str(value).upper()]
    except KeyError:
        names = ", ".join(m.name for m in kind)
        raise ValueError(f"unknown HFile {what} {value!r} (one of {names})") from None


def _root_size(chunk: list[IndexEntry]) -> int:
    return sum(root_index_size(e.key) for e in chunk)


def _non_root_size(chunk: list[IndexEntry]) -> int:
    return 4 + 4 * (len(chunk) + 1) + sum(12 + len(e.key) for e in chunk)


__all__ = ["CorruptFileError", "HFileReader", "HFileWriter", "write_hfile"]
