"""Tables without a record key: Hudi's auto-generated record keys (Hudi 0.14+).

A table created with no record key field has no ``hoodie.table.recordkey.fields`` in its
``hoodie.properties`` (Hudi's ``AutoRecordKeyGenerationUtils.shouldAutoGenerateRecordKeys``
recognises it by that absence). Hudi's ``AutoRecordGenWrapperKeyGenerator`` then gives each
inserted record the key ``<instant>_<spark partition id>_<row id>``
(``HoodieRecord.generateSequenceId``): unique within the batch, and across writers since
each write has its own instant. Such a table is append-only: insert and bulk insert; an
upsert has no key to match records by and is refused (:func:`check_operation`).

hudilite keys a batch before its write's instant exists (the key statistics plan the
write before the transaction starts), so the keying step gives every record a *pending*
key, :data:`PENDING_MARK` then ``<partition id>_<row id>`` taken from the write order
(``_hl_seq`` is ``partition id << 33 | row number``, as Spark's
``monotonically_increasing_id``), and the file writers complete it with the instant
(:func:`stamp_keys`, called by :func:`hudilite.write.write_context.conform`, the one step
every base and log file write goes through). A stored key never starts with the mark, so
stamping leaves the rows a write copies (a merged base file, compaction, clustering)
as they are.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.schema import RECORD_KEY_COL

__all__ = [
    "PENDING_MARK",
    "ROW_BITS",
    "check_new_keyless",
    "check_operation",
    "is_keyless",
    "pending_keys",
    "stamp_keys",
]

#: Starts a key whose instant is not known yet. It lives only between keying and the file
#: write, and only in batches of keyless tables, whose stored keys all start with an
#: instant (digits).
PENDING_MARK = "\x00auto_"
#: Bits of the write order holding the row number inside one Spark partition.
ROW_BITS = 33

#: Operations that write a keyless table (Hudi's auto-generated keys serve these; a
#: delete or an update names stored keys, ``_hoodie_record_key``).
KEYLESS_OPERATIONS = (
    "insert",
    "bulk_insert",
    "insert_overwrite",
    "insert_overwrite_table",
    "delete_partition",
)


def is_keyless(config: cfg.TableConfig) -> bool:
    """Whether the table generates its record keys (it names no record key field)."""
    return not config.record_key_fields


def pending_keys(seq: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Pending keys ``<mark><partition id>_<row id>`` of rows with write order ``seq``."""
    seq = seq.combine_chunks() if isinstance(seq, pa.ChunkedArray) else seq
    seq = seq.cast(pa.int64())
    partition = pc.shift_right(seq, pa.scalar(ROW_BITS, pa.int64()))
    row = pc.bit_wise_and(seq, pa.scalar((1 << ROW_BITS) - 1, pa.int64()))
    joined = pc.binary_join_element_wise(
        pa.scalar(PENDING_MARK), partition.cast(pa.string()), pa.scalar("_"),
        row.cast(pa.string()), "",
    )  # fmt: skip
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def stamp_keys(instant_time: str, table: pa.Table) -> pa.Table:
    """``table`` with every pending key completed as ``<instant>_<partition id>_<row id>``."""
    if RECORD_KEY_COL not in table.column_names or table.num_rows == 0:
        return table
    keys = table[RECORD_KEY_COL]
    if not pa.types.is_string(keys.type):
        return table
    pending = pc.fill_null(pc.starts_with(keys, PENDING_MARK), False)
    if not pc.any(pending).as_py():
        return table
    stamped = pc.replace_substring(keys, PENDING_MARK, f"{instant_time}_", max_replacements=1)
    index = table.schema.get_field_index(RECORD_KEY_COL)
    field = table.schema.field(index)
    return table.set_column(index, field, pc.if_else(pending, stamped, keys))


def check_operation(config: cfg.TableConfig, operation: str) -> None:
    """Refuse an operation a keyless table cannot run (an upsert matches records by key)."""
    if is_keyless(config) and operation not in KEYLESS_OPERATIONS:
        raise ConfigError(
            f"table {config.name!r} has no record key (its keys are generated): {operation} "
            "is not supported; use insert or bulk_insert"
        )


def check_new_keyless(name: str, options: cfg.Options) -> None:
    """Refuse options Hudi refuses for auto-generated keys (``AutoRecordKeyGenerationUtils``):
    a table without meta fields would store no key at all."""
    if options.is_set(cfg.POPULATE_META_FIELDS) and not options.get(cfg.POPULATE_META_FIELDS):
        raise ConfigError(
            f"table {name!r} has no record key: {cfg.POPULATE_META_FIELDS.name}=false is not "
            "supported with generated record keys"
        )
