"""Tables without a record key: Hudi's auto-generated record keys (Hudi 0.14+).

A table created with no record key field has no ``hoodie.table.recordkey.fields`` in its
``hoodie.properties`` (Hudi's ``AutoRecordKeyGenerationUtils.shouldAutoGenerateRecordKeys``
recognises it by that absence). Hudi's ``AutoRecordGenWrapperKeyGenerator`` then gives each
inserted record the key ``<instant>_<spark partition id>_<row id>``
(``HoodieRecord.generateSequenceId``): unique within the batch, and across writers since
each write has its own instant. Such a table is append-only: insert and bulk insert; an
upsert or delete of new rows has no key to match records by and is refused
(:func:`check_operation`). Rows read back from the table carry their stored
``_hoodie_record_key``: SQL ``UPDATE`` and ``DELETE`` select it, the write job carries it
as :data:`STORED_KEY_COL` (:func:`stored_key_carry`) and keying keeps it as the record key
(:func:`stored_keys`), so those rows are found and keep their keys, as in Hudi.

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

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import ConfigError, KeyGenerationError
from hudilite.schema import RECORD_KEY_COL

__all__ = [
    "PENDING_MARK",
    "ROW_BITS",
    "STORED_KEY_COL",
    "check_new_keyless",
    "check_operation",
    "is_keyless",
    "pending_keys",
    "stamp_keys",
    "stored_key_carry",
    "stored_keys",
]

#: Starts a key whose instant is not known yet. It lives only between keying and the file
#: write, and only in batches of keyless tables, whose stored keys all start with an
#: instant (digits).
PENDING_MARK = "\x00auto_"
#: The column that carries a keyless table's stored keys (rows read back from the table
#: by UPDATE and DELETE) from the input to the keying step.
STORED_KEY_COL = "_hl_stored_key"
#: Bits of the write order holding the row number inside one Spark partition.
ROW_BITS = 33

#: Operations that write a keyless table (Hudi's auto-generated keys serve these; a
#: delete or an update names stored keys, ``_hoodie_record_key``).
KEYLESS_OPERATIONS = (
    cfg.OP_INSERT,
    cfg.OP_BULK_INSERT,
    cfg.OP_INSERT_OVERWRITE,
    cfg.OP_INSERT_OVERWRITE_TABLE,
    cfg.OP_DELETE_PARTITION,
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


def check_operation(config: cfg.TableConfig, operation: str, stored_keys: bool = False) -> None:
    """Refuse an operation a keyless table cannot run: an upsert or a delete matches records
    by key, so it needs the rows' stored keys (``stored_keys``: the data holds
    ``_hoodie_record_key``, as SQL UPDATE and DELETE select it; Hudi's writer likewise
    keeps the meta key of such rows)."""
    if not is_keyless(config) or operation in KEYLESS_OPERATIONS:
        return
    if operation in ("upsert", "delete") and stored_keys:
        return
    raise ConfigError(
        f"table {config.name!r} has no record key (its keys are generated): {operation} "
        f"is not supported without the rows' {RECORD_KEY_COL}; use insert or bulk_insert"
    )


def stored_key_carry(config: cfg.TableConfig, columns: Sequence[str]) -> dict[str, str]:
    """The column to carry into keying as :data:`STORED_KEY_COL` (a keyless table's rows
    that hold their ``_hoodie_record_key``), as a ``{source: alias}`` mapping."""
    if is_keyless(config) and RECORD_KEY_COL in columns:
        return {RECORD_KEY_COL: STORED_KEY_COL}
    return {}


def stored_keys(batch: pa.RecordBatch, pending: pa.Array) -> pa.Array:
    """A keyless table's stored keys carried in ``batch``; an empty one is refused. A null
    one is a new record and takes its ``pending`` key: a keyless MERGE INTO's unmatched
    rows, which Hudi's ``MergeIntoKeyGenerator`` keys like any insert."""
    keys = batch.column(batch.schema.get_field_index(STORED_KEY_COL)).cast(pa.string())
    bad = pc.fill_null(pc.equal(keys, ""), False)
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        raise KeyGenerationError(f"{RECORD_KEY_COL} is empty in row {row}")
    return pc.coalesce(keys, pending)


def check_new_keyless(name: str, options: cfg.Options) -> None:
    """Refuse options Hudi refuses for auto-generated keys (``AutoRecordKeyGenerationUtils``):
    a table without meta fields would store no key at all."""
    if options.is_set(cfg.POPULATE_META_FIELDS) and not options.get(cfg.POPULATE_META_FIELDS):
        raise ConfigError(
            f"table {name!r} has no record key: {cfg.POPULATE_META_FIELDS.name}=false is not "
            "supported with generated record keys"
        )
