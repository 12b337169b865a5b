"""Parquet base files: written so Spark, Hudi (Java) and hudi-rs read them, footers included.

Writer settings and why:

* ``compression="snappy"`` - Hudi's default codec.
* ``coerce_timestamps="us"`` - Spark and Hudi's Avro schemas use ``timestamp-micros``; the
  Parquet logical type becomes ``TIMESTAMP(isAdjustedToUTC, MICROS)`` (nanoseconds are
  truncated, on purpose).
* ``use_compliant_nested_type=True`` - lists as ``<name>.list.element`` as the Parquet spec
  (and parquet-avro with the new list structure) expects.
* no dictionary for columns whose values are (nearly) unique: never for
  ``_hoodie_commit_seqno`` and ``_hoodie_record_key``, and for the others when at least 98%
  of the first 8,192 rows written are distinct values (a column of 200,000 or more
  distinct values, whose dictionary would outgrow Arrow's 1 MB dictionary page anyway).
  Arrow builds a dictionary for every row group before it falls back to plain encoding;
  for unique strings and distinct doubles that costs a third of the write (0.24 -> 0.15 s
  for 500,000 trips rows) and makes the file larger, not smaller (parquet-mr, Spark's and
  Hudi's writer, falls back too).
  Columns that repeat their values keep dictionaries.
* row groups of up to 64 MiB of Arrow data: a streaming write buffers the batches it is
  given (Spark hands a task 65,536 rows at a time) instead of writing each as a row group.
* ``store_schema=False`` - no ``ARROW:schema`` and no pandas metadata: the footer carries only
  what Hudi writes itself, ``hoodie_min_record_key``/``hoodie_max_record_key`` and the
  bloom filter of the record keys (``org.apache.hudi.bloomfilter`` and, for dynamic
  filters, ``hoodie_bloom_filter_type_code``; :mod:`hudilite.storage.bloom_filter`), so
  Hudi's BLOOM index (its default) and hudilite's can prune files.

The min/max record key footers let the simple index skip files; they are computed from the
``_hoodie_record_key`` column while writing (Arrow's byte-wise UTF-8 order, which equals
Java's ``String.compareTo`` except for supplementary characters).
"""

from __future__ import annotations

import binascii
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudilite.errors import CorruptFileError
from hudilite.keygen import KeyGenSpec
from hudilite.storage.bloom_filter import BloomConfig, BloomFilter, from_footer
from hudilite.storage.fs import FileSystemGateway
from hudilite.virtual_keys import key_columns, stored_record_keys

RECORD_KEY_COLUMN = "_hoodie_record_key"
MIN_RECORD_KEY_FOOTER = "hoodie_min_record_key"
MAX_RECORD_KEY_FOOTER = "hoodie_max_record_key"
#: The filter every base file carries unless a caller passes another (Hudi's defaults).
DEFAULT_BLOOM = BloomConfig()

#: Keyword arguments of every ``pyarrow.parquet`` write (see the module doc).
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "snappy",
    "coerce_timestamps": "us",
    "allow_truncated_timestamps": True,
    "use_compliant_nested_type": True,
    "store_schema": False,
}

#: Columns whose values are unique per row: written without a dictionary.
_UNIQUE_COLUMNS = frozenset({"_hoodie_commit_seqno", RECORD_KEY_COLUMN})
#: Rows of the first data a column's dictionary choice looks at: a few milliseconds for a
#: trips table, and a column of fewer than 200,000 distinct values does not look unique.
_SAMPLE_ROWS = 8192
#: Arrow data a streaming writer buffers before writing it as one row group.
ROW_GROUP_BYTES = 64 << 20


def _repeats(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether a column's values repeat enough for a dictionary: fewer than 98% of its
    (non-null) rows are distinct values. Nested columns keep Arrow's default."""
    if pa.types.is_nested(column.type) or pa.types.is_boolean(column.type):
        return True
    rows = len(column) - column.null_count
    if rows == 0:
        return True
    return 50 * pc.count_distinct(column, mode="only_valid").as_py() < 49 * rows


def write_options(schema: pa.Schema, sample: pa.Table | None = None) -> dict[str, Any]:
    """:data:`WRITE_OPTIONS` plus the dictionary choice per column of ``schema``: none for
    the unique meta columns, and with ``sample`` (the first rows to be written) none for a
    column whose sample values do not repeat."""
    dictionary = [f.name for f in schema if f.name not in _UNIQUE_COLUMNS]
    if sample is not None and sample.num_rows:
        head = sample.slice(0, _SAMPLE_ROWS)
        dictionary = [name for name in dictionary if _repeats(head[name])]
    if len(dictionary) == len(schema):
        return WRITE_OPTIONS
    return {**WRITE_OPTIONS, "use_dictionary": dictionary}


class BaseFileWriter:
    """Streaming writer of one base file (bulk insert, large merges).

    ``write`` accepts tables or record batches of ``schema``; ``close`` adds the record key
    footers (range and bloom filter, ``bloom=None`` for none) and returns
    ``(bytes, num_rows, min_key, max_key)``. Used as a context manager, an exception deletes
    the partial file. Without ``row_group_size`` the rows are buffered into row groups of
    about :data:`ROW_GROUP_BYTES`; the Parquet writer opens at the first rows, which choose
    the columns' dictionaries (:func:`write_options`). ``bloom_seed`` is a filter already
    holding some of the keys to be written (``BloomConfig.resume`` of the file this one
    replaces); ``write``'s ``known`` mask then names the rows whose keys it holds, which
    are not hashed again.
    """

    def __init__(
        self,
        gw: FileSystemGateway,
        rel_path: str,
        schema: pa.Schema,
        row_group_size: int | None = None,
        bloom: BloomConfig | None = DEFAULT_BLOOM,
        bloom_seed: BloomFilter | None = None,
    ) -> None:
        self.gw = gw
        self.rel_path = rel_path
        # Schema metadata would be dropped by store_schema=False anyway; strip it so the
        # writer's schema equals what readers see.
        self.schema = schema.remove_metadata()
        self.row_group_size = row_group_size
        self.num_rows = 0
        self.min_key: str | None = None
        self.max_key: str | None = None
        self._has_key = RECORD_KEY_COLUMN in self.schema.names
        self._bloom: BloomFilter | None = None
        if bloom is not None and self._has_key:
            self._bloom = bloom_seed if bloom_seed is not None else bloom.new_filter()
        self._result: tuple[int, int, str | None, str | None] | None = None
        self._writer: pq.ParquetWriter | None = None
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0
        self._flushed_bytes = 0  # Arrow bytes of the rows already written
        self._stream = gw.open_output_stream(rel_path)

    def _open(self, sample: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            options = write_options(self.schema, sample)
            self._writer = pq.ParquetWriter(self._stream, self.schema, **options)
        return self._writer

    @property
    def bytes_written(self) -> int:
        """Bytes written so far plus an estimate of the buffered rows' share (at the
        compression seen so far, or uncompressed before any row group); use it to roll over
        to a new file."""
        written = int(self._stream.tell())
        if not self._pending_bytes:
            return written
        ratio = written / self._flushed_bytes if self._flushed_bytes else 1.0
        return written + int(self._pending_bytes * ratio)

    def _flush(self) -> None:
        if not self._pending:
            return
        table = pa.concat_tables(self._pending)
        self._pending, self._pending_bytes = [], 0
        self._open(table).write_table(table, self.row_group_size or max(table.num_rows, 1))
        self._flushed_bytes += table.nbytes

    def write(self, data: pa.Table | pa.RecordBatch, known: pa.Array | None = None) -> None:
        """Append rows; ``data`` must have the writer's schema (metadata ignored).

        ``known`` (one bool per row) marks rows whose keys the seeded bloom filter holds.
        """
        if self._result is not None:
            raise ValueError(f"{self.rel_path}: write after close")
        if not data.schema.equals(self.schema, check_metadata=False):
            raise ValueError(
                f"{self.rel_path}: data schema does not match the file schema:\n"
                f"{data.schema}\nvs\n{self.schema}"
            )
        if data.num_rows == 0:
            return
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        self._track_keys(data, known)
        self._pending.append(data.replace_schema_metadata(None))
        self._pending_bytes += data.nbytes
        self.num_rows += data.num_rows
        if self.row_group_size is not None or self._pending_bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _track_keys(self, table: pa.Table, known: pa.Array | None) -> None:
        if not self._has_key:
            return
        keys = table.column(RECORD_KEY_COLUMN)
        if keys.null_count or pc.any(pc.equal(keys, "")).as_py():
            # Rows of a table without meta fields (stored as Hudi wrote them): a bloom
            # filter or key range over the other rows would hide these from the index, so
            # the file gets neither, as Hudi writes none for such tables.
            self._has_key = False
            self._bloom = None
            self.min_key = self.max_key = None
            return
        if self._bloom is not None:
            # Hudi adds every written record's key, in write order.
            new = keys if known is None else keys.filter(pc.invert(known))
            self._bloom.add(pc.drop_null(new) if new.null_count else new)
        mm = pc.min_max(keys)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if lo is None:
            return
        self.min_key = lo if self.min_key is None else min(self.min_key, lo)
        self.max_key = hi if self.max_key is None else max(self.max_key, hi)

    def close(self) -> tuple[int, int, str | None, str | None]:
        """Finish the file: ``(file size in bytes, rows, min record key, max record key)``.

        Idempotent: a second call returns the first result.
        """
        if self._result is not None:
            return self._result
        footer: dict[str, str] = {}
        if self._bloom is not None and self.min_key is not None:  # some key was added
            footer.update(self._bloom.footer())
        if self.min_key is not None and self.max_key is not None:
            footer.update(
                {MIN_RECORD_KEY_FOOTER: self.min_key, MAX_RECORD_KEY_FOOTER: self.max_key}
            )
        self._flush()
        writer = self._open(None)  # an empty file still gets its footer
        if footer:
            writer.add_key_value_metadata(footer)
        writer.close()
        size = int(self._stream.tell())
        self._stream.close()
        self._result = (size, self.num_rows, self.min_key, self.max_key)
        return self._result

    def abort(self) -> None:
        """Stop writing and delete the partial file."""
        if self._result is None:
            self._pending = []
            try:
                if self._writer is not None:
                    self._writer.close()
            finally:
                self._stream.close()
                self._result = (0, 0, None, None)
        self.gw.delete_file(self.rel_path)

    def __enter__(self) -> BaseFileWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_base_file(
    gw: FileSystemGateway,
    rel_path: str,
    table: pa.Table,
    row_group_size: int | None = None,
    bloom: BloomConfig | None = DEFAULT_BLOOM,
    *,
    bloom_seed: BloomFilter | None = None,
    known: pa.Array | None = None,
) -> int:
    """Write ``table`` as the base file ``rel_path``; returns the file size in bytes.

    The footer carries ``hoodie_min_record_key``/``hoodie_max_record_key`` and the bloom
    filter of ``bloom`` when the table has a non-null ``_hoodie_record_key``. Column types
    are written as given (``schema.py`` chooses them); the file is not atomic, which is fine
    for Hudi's never-reused names. ``bloom_seed`` and ``known`` are as in
    :class:`BaseFileWriter`.
    """
    with BaseFileWriter(gw, rel_path, table.schema, row_group_size, bloom, bloom_seed) as writer:
        writer.write(table, known)
    return writer.close()[0]


@contextmanager
def _parquet_file(gw: FileSystemGateway, rel_path: str) -> Iterator[pq.ParquetFile]:
    """Open a base file's footer; the input file is closed on exit (ParquetFile won't)."""
    source = gw.open_input_file(rel_path)
    try:
        try:
            pf = pq.ParquetFile(source)
        except pa.ArrowInvalid as exc:
            raise CorruptFileError(f"{rel_path}: not a readable Parquet file: {exc}") from exc
        yield pf
    finally:
        source.close()


def read_base_file(
    gw: FileSystemGateway, rel_path: str, columns: list[str] | None = None
) -> pa.Table:
    """Read a base file (optionally only ``columns``), schema metadata removed.

    Footer metadata (Hudi's bloom filter, ``parquet.avro.schema``) is dropped so it cannot be
    copied into files hudilite writes from these rows.
    """
    with _parquet_file(gw, rel_path) as pf:
        return _read_table(pf, rel_path, columns)


def read_base_file_and_filter(
    gw: FileSystemGateway, rel_path: str, columns: list[str] | None = None
) -> tuple[pa.Table, BloomFilter | None]:
    """:func:`read_base_file`, and the file's bloom filter from the same open (None when it
    has none or it cannot be decoded: a writer then builds a new one)."""
    with _parquet_file(gw, rel_path) as pf:
        table = _read_table(pf, rel_path, columns)
        footer = _footer(pf)
    try:
        return table, from_footer(footer)
    except (ValueError, struct.error, binascii.Error):
        return table, None


def _read_table(pf: pq.ParquetFile, rel_path: str, columns: list[str] | None) -> pa.Table:
    try:
        table = pf.read(columns=columns)
    except pa.ArrowInvalid as exc:
        raise CorruptFileError(f"{rel_path}: cannot read Parquet data: {exc}") from exc
    return table.replace_schema_metadata(None)


def _footer(pf: pq.ParquetFile) -> dict[str, str]:
    raw = pf.metadata.metadata or {}
    return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in raw.items()}


def read_footer(gw: FileSystemGateway, rel_path: str) -> dict[str, str]:
    """The key-value footer metadata of a Parquet file, decoded as UTF-8."""
    with _parquet_file(gw, rel_path) as pf:
        return _footer(pf)


def read_bloom_filter(gw: FileSystemGateway, rel_path: str) -> BloomFilter | None:
    """The record-key bloom filter of a base file's footer (Hudi's or ours), or None."""
    return from_footer(read_footer(gw, rel_path))


def read_key_range(gw: FileSystemGateway, rel_path: str) -> tuple[str, str] | None:
    """``(min, max)`` record key from the footer only; None when the footer lacks them.

    Only the two keys are decoded (not the bloom filter, hundreds of KB of text)."""
    with _parquet_file(gw, rel_path) as pf:
        raw = pf.metadata.metadata or {}
    lo, hi = raw.get(MIN_RECORD_KEY_FOOTER.encode()), raw.get(MAX_RECORD_KEY_FOOTER.encode())
    if lo is None or hi is None:
        return None
    return lo.decode("utf-8", "replace"), hi.decode("utf-8", "replace")


def read_stored_keys(gw: FileSystemGateway, rel_path: str, virtual: KeyGenSpec | None) -> pa.Array:
    """The record keys of a base file's rows, for an index lookup: ``_hoodie_record_key``,
    or for a table without meta fields the keys of the record key fields
    (:func:`hudilite.virtual_keys.stored_record_keys` of the file's key columns)."""
    columns = key_columns(virtual)
    if virtual is not None:
        present = set(read_schema(gw, rel_path).names)
        columns = [c for c in columns if c in present]
    return stored_record_keys(read_base_file(gw, rel_path, columns=columns), virtual)


def read_schema(gw: FileSystemGateway, rel_path: str) -> pa.Schema:
    """The Arrow schema of a base file (metadata removed), read from the footer only."""
    with _parquet_file(gw, rel_path) as pf:
        return pf.schema_arrow.remove_metadata()


def read_num_rows(gw: FileSystemGateway, rel_path: str) -> int:
    """Row count of a base file, from the footer only."""
    with _parquet_file(gw, rel_path) as pf:
        return int(pf.metadata.num_rows)
