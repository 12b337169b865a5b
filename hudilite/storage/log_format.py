"""Hudi log files: block framing, block builders, reading and writing (docs/dev/hudi-format.md §5).

A log file is a sequence of blocks without a file header. Every block is (big-endian)::

    "#HUDI#"                      6-byte magic
    int64  block length           bytes after this field, the trailing int64 included
    int32  format version         1
    int32  block type             BlockType
    header                        int32 count, then count x (int32 key, int32 len, UTF-8)
    int64  content length, content
    footer                        same encoding as the header (Hudi writes count 0)
    int64  block length + 6       the whole block minus this field; a reverse-read pointer

Decoding follows Hudi's ``HoodieLogFileReader``: a block whose length runs past the end of
the data, whose trailing length disagrees, or that is not followed by the next magic (or
the end) is a CORRUPT block - typically the torn tail of a crashed append - and decoding
resumes at the next ``#HUDI#``. Readers skip a CORRUPT block only outside the byte ranges
completed commits recorded writing (:attr:`hudilite.filegroup.slices.LogFile.committed`):
inside one it is lost committed data, and the read fails naming the file
(:func:`hudilite.read.file_group_reader.scan_log_blocks`). hudilite never appends: each
write creates a new log file (the next version), as Hudi does on object stores.

PARQUET_DATA content is a bare Parquet file (handled here); the Avro-encoded contents of
AVRO_DATA and DELETE blocks live in :mod:`hudilite.storage.log_blocks`.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite.errors import CorruptFileError, HudiliteError
from hudilite.schema import cast_to_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.hfile_records import decode_hfile_records
from hudilite.storage.log_blocks import (
    DeleteKey,
    arrow_schema_of,
    decode_avro_records,
    decode_deletes,
    encode_avro_records,
    encode_deletes,
    is_natural_order,
)
from hudilite.storage.parquet_io import write_options

MAGIC = b"#HUDI#"
#: The only log format version Hudi has written since 0.5 (0 was headerless).
FORMAT_VERSION = 1
#: COMMAND_BLOCK_TYPE value of a rollback command block.
ROLLBACK_COMMAND = "0"

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
# format version + type + header count + content length + footer count + trailing length
_MIN_BLOCK_LENGTH = 4 + 4 + 4 + 8 + 4 + 8


class BlockType(IntEnum):
    """Block type ordinals (Hudi ``HoodieLogBlockType``)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE = 4
    PARQUET_DATA = 5
    CDC = 6


class HeaderKey(IntEnum):
    """Header/footer key ordinals (Hudi ``HeaderMetadataType``)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7  # table version 8+
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8  # table version 8+


def header_keys_for(table_version: int) -> frozenset[HeaderKey]:
    """The header keys a reader of ``table_version`` knows (v6: 0-6; v8 and later: 0-8).

    Java's reader indexes ``HeaderMetadataType.values()`` by the ordinal, so an unknown key
    makes an older Hudi fail on the whole file.
    """
    last = HeaderKey.BLOCK_IDENTIFIER if table_version < 8 else max(HeaderKey)
    return frozenset(k for k in HeaderKey if k <= last)


@dataclass
class LogBlock:
    """One block of a log file.

    ``header``/``footer`` keep their on-disk order (Java writes them in ``HashMap`` order,
    which differs between blocks), so decode + :meth:`encode` reproduces the bytes exactly.
    Key ordinals this module does not know stay plain ints for the same reason.
    A CORRUPT block's ``content`` is the raw damaged region exactly as found in the file
    (its magic included when there was one); its header and footer are empty.
    """

    block_type: BlockType
    header: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    footer: dict[HeaderKey, str] = field(default_factory=dict)

    # ---- header accessors --------------------------------------------------------------

    @property
    def instant_time(self) -> str | None:
        """The INSTANT_TIME header: the deltacommit that wrote the block."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """The TARGET_INSTANT_TIME header (rollback blocks: the rolled-back instant)."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """The SCHEMA header: Avro JSON of the full record, meta fields included."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def is_data(self) -> bool:
        """True for blocks that carry records (Avro, Parquet)."""
        return self.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)

    @property
    def is_rollback(self) -> bool:
        """True for a rollback command block."""
        return (
            self.block_type == BlockType.COMMAND
            and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND
        )

    # ---- encoding ----------------------------------------------------------------------

    def encode(self, table_version: int | None = None) -> bytes:
        """The block's bytes, magic to trailing length.

        With ``table_version``, a header or footer key that version does not know raises
        ValueError instead of producing a file Hudi cannot read. A CORRUPT block encodes to
        its raw bytes (so a damaged file re-encodes unchanged).
        """
        if self.block_type == BlockType.CORRUPT:
            return bytes(self.content)
        if table_version is not None:
            allowed = header_keys_for(table_version)
            unknown = [k for k in (*self.header, *self.footer) if k not in allowed]
            if unknown:
                raise ValueError(
                    f"header keys {unknown} are unknown to table version {table_version}"
                )
        parts = [
            _I32.pack(FORMAT_VERSION),
            _I32.pack(int(self.block_type)),
            _encode_map(self.header),
            _I64.pack(len(self.content)),
            self.content,
            _encode_map(self.footer),
        ]
        block_length = sum(len(p) for p in parts) + _I64.size
        return b"".join(
            [MAGIC, _I64.pack(block_length), *parts, _I64.pack(block_length + len(MAGIC))]
        )

    @staticmethod
    def decode_stream(data: bytes) -> list[LogBlock]:
        """Every block of ``data`` (a whole log file) in file order; never raises.

        Damaged regions become CORRUPT blocks (see the module doc), so
        ``b"".join(b.encode() for b in LogBlock.decode_stream(d)) == d`` for any ``d``.
        """
        return [block for _, block in LogBlock.decode_positions(data)]

    @staticmethod
    def decode_positions(data: bytes) -> list[tuple[int, LogBlock]]:
        """``(byte offset, block)`` of every block of ``data``, as :meth:`decode_stream`
        (a CORRUPT block's extent is its offset plus ``len(block.content)``)."""
        data = bytes(data)
        view = memoryview(data)
        blocks: list[tuple[int, LogBlock]] = []
        pos = 0
        while pos < len(view):
            has_magic = view[pos : pos + 6] == MAGIC
            block, end = _decode_block(view, pos) if has_magic else (None, 0)
            if block is None:
                # Like Hudi: the damaged region runs to the next magic after this one.
                nxt = data.find(MAGIC, pos + (len(MAGIC) if has_magic else 1))
                end = nxt if nxt >= 0 else len(view)
                block = LogBlock(BlockType.CORRUPT, content=bytes(view[pos:end]))
            blocks.append((pos, block))
            pos = end
        return blocks


_BLOCK_TYPES = frozenset(int(t) for t in BlockType)


def _encode_map(entries: Mapping[HeaderKey, str]) -> bytes:
    parts = [_I32.pack(len(entries))]
    for key, value in entries.items():
        raw = value.encode("utf-8")
        parts += [_I32.pack(int(key)), _I32.pack(len(raw)), raw]
    return b"".join(parts)


class _Truncated(Exception):
    """A field of a block runs past the block's declared end."""


def _decode_block(view: memoryview, start: int) -> tuple[LogBlock | None, int]:
    """``(block, end)`` of the block whose magic is at ``start``; ``(None, 0)`` when damaged."""
    size = len(view)
    if start + 14 > size:
        return None, 0
    (block_length,) = _I64.unpack_from(view, start + 6)
    body = start + 14  # first byte after the length field
    end = body + block_length
    if block_length < _MIN_BLOCK_LENGTH or end > size:
        return None, 0  # runs past EOF: torn write
    (trailing,) = _I64.unpack_from(view, end - 8)
    if trailing != block_length + len(MAGIC):
        return None, 0
    if end + 6 <= size and view[end : end + 6] != MAGIC:
        return None, 0  # Hudi also requires the next magic (or EOF) right after the block
    try:
        block = _parse_body(view, body, end - 8)
    except (_Truncated, UnicodeDecodeError, ValueError):
        return None, 0
    return block, end


def _parse_body(view: memoryview, pos: int, limit: int) -> LogBlock:
    """Parse version..footer in ``view[pos:limit]``; it must fill that range exactly."""

    def take(n: int) -> memoryview:
        nonlocal pos
        if n < 0 or pos + n > limit:
            raise _Truncated
        out = view[pos : pos + n]
        pos += n
        return out

    def read_map() -> dict[HeaderKey, str]:
        (count,) = _I32.unpack(take(4))
        if count < 0:
            raise _Truncated
        entries: dict[Any, str] = {}
        for _ in range(count):
            key, length = struct.unpack(">ii", take(8))
            entries[_header_key(key)] = str(take(length), "utf-8")
        return cast(dict[HeaderKey, str], entries)

    version, type_ordinal = struct.unpack(">ii", take(8))
    if version != FORMAT_VERSION or type_ordinal not in _BLOCK_TYPES:
        raise ValueError("unsupported format version or block type")
    if type_ordinal == BlockType.CORRUPT:
        raise ValueError("a CORRUPT block on disk")  # never written by Hudi; keep it raw
    header = read_map()
    (content_length,) = _I64.unpack(take(8))
    content = bytes(take(content_length))
    footer = read_map()
    if pos != limit:
        raise _Truncated  # the declared lengths disagree with the block length
    return LogBlock(BlockType(type_ordinal), header, content, footer)


def _header_key(ordinal: int) -> HeaderKey | int:
    try:
        return HeaderKey(ordinal)
    except ValueError:
        return ordinal


# --- Parquet content and the SCHEMA header ------------------------------------------------------


def canonical_schema_json(avro_schema: str | dict[str, Any]) -> str:
    """The SCHEMA header text: a JSON string as given, a dict as compact JSON (as Hudi writes)."""
    if isinstance(avro_schema, str):
        return avro_schema
    return json.dumps(avro_schema, separators=(",", ":"))


def encode_parquet_records(records: pa.Table, avro_schema_json: str) -> bytes:
    """PARQUET_DATA content: ``records`` (cast to the schema's Arrow types) as a Parquet file."""
    table = cast_to_schema(records, arrow_schema_of(avro_schema_json))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **write_options(table.schema, table))
    return bytes(sink.getvalue())


def decode_parquet_records(content: bytes, avro_schema_json: str | None) -> pa.Table:
    """The rows of PARQUET_DATA content, in the schema's Arrow types when one is given.

    Columns of the schema the file lacks come back as nulls; columns the schema lacks are
    dropped (the SCHEMA header is authoritative, as for Hudi's reader).
    """
    try:
        table = pq.read_table(pa.BufferReader(content))
    except (pa.ArrowInvalid, OSError) as exc:
        raise CorruptFileError(f"parquet data block: unreadable Parquet content ({exc})") from exc
    if avro_schema_json is None:
        return table
    schema = arrow_schema_of(avro_schema_json)
    columns = [
        table[f.name] if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return cast_to_schema(pa.Table.from_arrays(columns, names=schema.names), schema)


# --- builders -------------------------------------------------------------------------------


def _data_header(instant_time: str, avro_schema_json: str) -> dict[HeaderKey, str]:
    # The order Hudi's writer produced in the fixtures; any order reads the same.
    return {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: avro_schema_json}


def avro_data_block(
    records: pa.Table, avro_schema_json: str | dict[str, Any], instant_time: str
) -> LogBlock:
    """An AVRO_DATA block of ``records`` (meta + data columns) written by ``instant_time``.

    ``avro_schema_json`` is the full record schema (meta fields included), e.g.
    ``arrow_to_avro_schema(with_meta_columns(schema), ...)``; it becomes the SCHEMA header
    and the writer schema of every datum. Columns are matched by name and cast to the
    schema's Arrow types (:class:`hudilite.errors.SchemaError` when one is missing).
    """
    schema_json = canonical_schema_json(avro_schema_json)
    content = encode_avro_records(records, schema_json)
    return LogBlock(BlockType.AVRO_DATA, _data_header(instant_time, schema_json), content)


def parquet_data_block(
    records: pa.Table, avro_schema_json: str | dict[str, Any], instant_time: str
) -> LogBlock:
    """A PARQUET_DATA block: like :func:`avro_data_block`, content a whole Parquet file."""
    schema_json = canonical_schema_json(avro_schema_json)
    content = encode_parquet_records(records, schema_json)
    return LogBlock(BlockType.PARQUET_DATA, _data_header(instant_time, schema_json), content)


def delete_block(
    keys: Sequence[DeleteKey],
    instant_time: str,
    avro_schema_json: str | dict[str, Any] | None = None,
    *,
    ordering_type: pa.DataType | None = None,
) -> LogBlock:
    """A DELETE block of ``keys`` written by ``instant_time``.

    Hudi puts the table's record schema in the SCHEMA header of delete blocks too (readers
    ignore it); pass it to match. ``ordering_type``, the Arrow type of the ordering field,
    picks the Avro wrapper of ordering values as Java does (see :func:`ordering_wrapper`)
    for keys without an explicit ``wrapper``; without it the wrapper follows the Python
    value. None values are written as ``IntWrapper(0)``, Hudi's natural-order marker.
    """
    if ordering_type is not None:
        wrapper = ordering_wrapper(ordering_type)
        keys = [k if k.wrapper else replace(k, wrapper=wrapper) for k in keys]
    header = {HeaderKey.INSTANT_TIME: instant_time}
    if avro_schema_json is not None:
        header[HeaderKey.SCHEMA] = canonical_schema_json(avro_schema_json)
    return LogBlock(BlockType.DELETE, header, encode_deletes(keys))


def ordering_wrapper(t: pa.DataType) -> str:
    """The wrapper Hudi's Java writer uses for an ordering field of Arrow type ``t``.

    Java wraps the value Avro hands over: a date as LocalDate (DateWrapper), a decimal as
    BigDecimal, and a timestamp as its raw epoch-micros long (LongWrapper), because
    ``consistent.logical.timestamp.enabled`` is off by default.
    """
    if pa.types.is_boolean(t):
        return "BooleanWrapper"
    if pa.types.is_timestamp(t) or t in (pa.int64(), pa.uint32(), pa.uint64()):
        return "LongWrapper"
    if pa.types.is_integer(t):
        return "IntWrapper"
    if pa.types.is_floating(t):
        return "DoubleWrapper" if t == pa.float64() else "FloatWrapper"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "StringWrapper"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BytesWrapper"
    if pa.types.is_date(t):
        return "DateWrapper"
    if pa.types.is_decimal(t):
        return "DecimalWrapper"
    if pa.types.is_time(t):
        return "TimeMicrosWrapper"
    raise ValueError(f"no Hudi ordering value wrapper for Arrow type {t}")


def rollback_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """A rollback COMMAND block: readers drop earlier blocks of ``target_instant_time``."""
    header = {
        HeaderKey.INSTANT_TIME: instant_time,
        HeaderKey.TARGET_INSTANT_TIME: target_instant_time,
        HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
    }
    return LogBlock(BlockType.COMMAND, header)


# --- block contents -------------------------------------------------------------------------


def block_records(block: LogBlock) -> pa.Table:
    """The rows of a data block: meta + data columns, Arrow types from the SCHEMA header.

    Raises ValueError for blocks that are not AVRO_DATA/PARQUET_DATA/HFILE and
    :class:`CorruptFileError` when the content does not decode.
    """
    if block.block_type == BlockType.AVRO_DATA:
        if block.schema is None:
            raise CorruptFileError("avro data block without a SCHEMA header")
        return decode_avro_records(block.content, block.schema)
    if block.block_type == BlockType.HFILE:  # the metadata table's: an HFile of records by key
        if block.schema is None:
            raise CorruptFileError("hfile data block without a SCHEMA header")
        return decode_hfile_records(block.content, block.schema)
    if block.block_type == BlockType.PARQUET_DATA:
        return decode_parquet_records(block.content, block.schema)
    raise ValueError(f"{block.block_type.name} blocks carry no records")


def block_deletes(block: LogBlock) -> list[DeleteKey]:
    """The keys of a DELETE block (ValueError for other blocks, CorruptFileError if damaged)."""
    if block.block_type != BlockType.DELETE:
        raise ValueError(f"{block.block_type.name} blocks carry no delete keys")
    return decode_deletes(block.content)


# --- files ----------------------------------------------------------------------------------


class LogFileExistsError(HudiliteError, FileExistsError):
    """A log file was to be created where one already exists (hudilite never appends)."""


def write_log_file(
    gw: FileSystemGateway,
    rel_path: str,
    blocks: Iterable[LogBlock],
    *,
    table_version: int | None = None,
) -> int:
    """Create the log file ``rel_path`` holding ``blocks``; returns the bytes written.

    The file appears complete or not at all (see ``FileSystemGateway.create_exclusive``).
    Raises :class:`LogFileExistsError` if the file exists: a log version is written once,
    the next write takes the next version. ``table_version`` checks header keys (see
    :meth:`LogBlock.encode`).
    """
    data = b"".join(block.encode(table_version) for block in blocks)
    if not gw.create_exclusive(rel_path, data):
        raise LogFileExistsError(17, "log file exists", rel_path)
    return len(data)


def read_log_file(gw: FileSystemGateway, rel_path: str) -> list[LogBlock]:
    """Every block of the log file ``rel_path`` (damaged regions as CORRUPT blocks)."""
    return LogBlock.decode_stream(gw.read_bytes(rel_path))


def read_log_positions(gw: FileSystemGateway, rel_path: str) -> list[tuple[int, LogBlock]]:
    """``(byte offset, block)`` of every block of the log file ``rel_path``."""
    return LogBlock.decode_positions(gw.read_bytes(rel_path))


__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "ROLLBACK_COMMAND",
    "BlockType",
    "DeleteKey",
    "HeaderKey",
    "LogBlock",
    "LogFileExistsError",
    "avro_data_block",
    "block_deletes",
    "block_records",
    "delete_block",
    "header_keys_for",
    "is_natural_order",
    "ordering_wrapper",
    "parquet_data_block",
    "read_log_file",
    "read_log_positions",
    "rollback_block",
    "write_log_file",
]
