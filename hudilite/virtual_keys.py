"""Record keys of tables without meta fields (Hudi's *virtual keys*).

A table with ``hoodie.populate.meta.fields=false`` keeps no key in its files: Hudi writes
the five ``_hoodie_*`` columns null (its bulk insert's row writer: empty strings), writes no
bloom filter and no ``hoodie_min/max_record_key`` footer, and every reader, merge and index
lookup derives a stored record's key from its record key fields (Hudi's ``keyGeneratorOpt``
in ``HoodieMergeHandle``, ``HoodieKeyLookupHandle`` and the log record scanners). hudilite
does the same wherever it takes keys from stored records:

* :func:`virtual_key_spec` is the table's record-key generator, or None for a table that
  stores its keys (then a stored row without a key stays an error: the file is damaged);
* :func:`stored_record_keys` is ``_hoodie_record_key`` where a row has one and the key of its
  fields where not, so rows Hudi wrote and rows hudilite keyed mix in one file;
* :func:`hudilite.storage.parquet_io.read_stored_keys` reads a base file's keys for an index
  lookup (the file reading sits in storage, above this module). A stored row's partition
  path is its file's partition, whatever its meta column says.

hudilite's own writes still fill the meta columns of the records they write (the merge
keeps the stored rows as they are). A file whose rows do not all carry a key gets neither a
bloom filter nor a key range (:class:`hudilite.storage.parquet_io.BaseFileWriter`), so no
index trusts a partial one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.keygen import COMPLEX, NON_PARTITION, KeyGenSpec, record_keys
from hudilite.schema import PARTITION_PATH_COL, RECORD_KEY_COL

if TYPE_CHECKING:
    from hudilite.config import Options, TableConfig

Batch: TypeAlias = pa.RecordBatch | pa.Table


def record_key_spec(config: TableConfig, options: Options | None = None) -> KeyGenSpec:
    """The part of a table's key generator that makes record keys, nothing else.

    Hudi's generators share their record-key rules (one field: the bare value, several:
    ``f1:v1,f2:v2``; COMPLEX may render one field as ``f1:v1``), so the spec needs no
    partition or timestamp settings and builds for any table, a timestamp-partitioned one
    without its ``hoodie.keygen.timebased.*`` settings included.
    """
    encoding = (config.props.get(cfg.COMPLEX_KEYGEN_ENCODING.name) or "").strip().upper()
    new_encoding = options.get_raw(cfg.COMPLEX_KEYGEN_NEW_ENCODING) if options is not None else None
    if not encoding and (new_encoding or "").strip().lower() == "true":
        encoding = "VALUE_ONLY"
    return KeyGenSpec(
        kind=COMPLEX if config.keygen_type == COMPLEX else NON_PARTITION,
        record_key_fields=tuple(config.record_key_fields),
        complex_value_only=encoding == "VALUE_ONLY",
    )


def virtual_key_spec(config: TableConfig, options: Options | None = None) -> KeyGenSpec | None:
    """The record-key generator of a table without meta fields; None when it stores keys."""
    if config.populate_meta_fields:
        return None
    return record_key_spec(config, options)


def missing_keys(keys: pa.Array) -> pa.Array:
    """Rows whose stored key is null or empty (Hudi's two spellings of "not populated")."""
    return pc.fill_null(pc.equal(keys, ""), True)


def stored_record_keys(batch: Batch, virtual: KeyGenSpec | None) -> pa.Array:
    """The record key of each stored row (a base file's rows, a log block's records).

    ``_hoodie_record_key`` as stored; with ``virtual`` a row whose key is missing (the column
    absent, null or empty) takes the key of its record key fields. Raises
    :class:`~hudilite.errors.KeyGenerationError` when such a row's key fields are null.
    """
    if RECORD_KEY_COL in batch.schema.names:
        column = batch.column(RECORD_KEY_COL)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        keys = column if column.type == pa.string() else column.cast(pa.string())
    else:
        keys = pa.nulls(batch.num_rows, pa.string())
    if virtual is None or batch.num_rows == 0:
        return keys
    missing = missing_keys(keys)
    n_missing = pc.sum(missing).as_py() or 0
    if n_missing == 0:
        return keys
    if n_missing == batch.num_rows:
        return record_keys(virtual, batch)
    computed = record_keys(virtual, batch.filter(missing))
    return pc.replace_with_mask(keys, missing, computed)


def with_stored_keys(table: pa.Table, virtual: KeyGenSpec, partition: str) -> pa.Table:
    """``table`` (rows of one file group in ``partition``) with its missing
    ``_hoodie_record_key`` / ``_hoodie_partition_path`` values filled in, for records that
    are about to be written again with their keys."""
    keys = stored_record_keys(table, virtual)
    paths = pa.repeat(pa.scalar(partition, pa.string()), table.num_rows)
    if PARTITION_PATH_COL in table.column_names:
        stored = table.column(PARTITION_PATH_COL).combine_chunks().cast(pa.string())
        paths = pc.if_else(missing_keys(stored), paths, stored)
    for name, values in ((RECORD_KEY_COL, keys), (PARTITION_PATH_COL, paths)):
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, values)
        else:
            table = table.append_column(name, values)
    return table


def key_columns(virtual: KeyGenSpec | None) -> list[str]:
    """The columns to read from a base file for its keys (top-level names, deduplicated)."""
    names = [RECORD_KEY_COL]
    for field in virtual.record_key_fields if virtual is not None else ():
        head = field.split(".", 1)[0]
        if head not in names:
            names.append(head)
    return names


def file_partition(rel_path: str) -> str:
    """The partition path of a table-relative data file (``""`` at the table's root)."""
    return rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""


__all__ = [
    "file_partition",
    "key_columns",
    "missing_keys",
    "record_key_spec",
    "stored_record_keys",
    "virtual_key_spec",
    "with_stored_keys",
]
