"""``hudilite.save``: Hudi's DataFrame write, ``df.write.format("hudi").options(**o)
.mode(m).save(path)``, driven by the same options.

A pipeline written for Hudi keeps its option dictionaries; only the write call changes::

    hudilite.save(df, path, options=hudi_options, mode="append")

What it does, as Hudi's ``HoodieSparkSqlWriter`` does:

* **The first write creates the table** from ``hoodie.table.name`` (required; a write
  into an existing table without ``mode="overwrite"`` may leave it out, as Hudi fills the
  options a write omits from the table's config, its name included),
  ``hoodie.datasource.write.recordkey.field`` (none: a keyless table, Hudi 0.14+'s
  auto-generated keys), ``.partitionpath.field``,
  ``.precombine.field`` (or Hudi 1.x's ``hoodie.table.ordering.fields``), ``.table.type``,
  ``.keygenerator.class`` / ``.type`` with the ``hoodie.keygen.timebased.*`` options,
  ``.hive_style_partitioning`` (Hudi's DataFrame default: off, ``<value>`` folders) and
  ``.partitionpath.urlencode``, and the table version ``hoodie.write.table.version``.
  Only those (and other table properties) are kept in ``hoodie.properties``: the rest of
  the options apply to this write alone, as in Hudi.
* **``hoodie.datasource.write.operation``**: ``upsert`` (the default; ``insert`` when
  ``hoodie.datasource.write.insert.drop.duplicates`` is on, as Hudi corrects it;
  ``bulk_insert`` on a table without a record key, whose keys are generated, when the rows
  hold no ``_hoodie_record_key``, as Hudi's ``deduceOperation`` picks it),
  ``insert``, ``bulk_insert``, ``delete`` (the rows' keys), ``delete_partition``
  (``hoodie.datasource.write.partitions.to.delete``, else the rows' partitions),
  ``insert_overwrite``, ``insert_overwrite_table``.
* **``mode``**: ``append`` writes into the table (creating it if missing); ``overwrite``
  deletes an existing table and writes a new one -- except with ``insert_overwrite_table``,
  which replaces the rows of the existing table; ``error`` (``errorifexists``) fails when a
  table exists; ``ignore`` does nothing when one exists (and returns None). ``delete`` and
  ``delete_partition`` take ``append`` only.
* **Options that contradict the existing table** (record key, ordering and partition
  fields, table type and version, key generator and its settings, partition folder style)
  fail before anything is written, naming the option, its value and the table's; so does
  another ``hoodie.table.name`` on ``append``. (Hudi skips this check on ``overwrite``,
  which recreates the table from the options.)
* Hudi's meta columns (``_hoodie_commit_time`` ...) in the DataFrame are dropped, so rows
  read from the table can be written back (the quick start's update and delete).
* A batch write to a merge-on-read table compacts inline (its trigger decides when) unless
  ``hoodie.compact.inline`` or ``hoodie.datasource.compaction.async.enable`` is given, as
  Hudi's DataFrame writer does.

Returns the :class:`~hudilite.WriteResult` of the write (``Table.write``'s metrics).

The option resolution, the checks against an existing table and the table creation are
:mod:`hudilite.spark.save`'s, shared with ``df.write.format("hudilite")``; this module,
beside :class:`~hudilite.table.api.Table`, runs the write through the facade.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.auto_keys import is_keyless
from hudilite.schema import META_COLUMNS, OPERATION_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.spark.keying import keyed_frame
from hudilite.spark.save import (
    DELETES,
    SaveRequest,
    check_mode,
    check_name,
    check_new_table,
    check_table,
    create_table,
    resolve,
    write_options,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.table.api import Table
from hudilite.tablestate.state import PROPERTIES_FILE, TableState
from hudilite.write.keying import KeyingSpec
from hudilite.write.result import WriteResult


def without_meta_columns(df: DataFrame) -> DataFrame:
    """``df`` without Hudi's meta columns (rows read from a table can be written back)."""
    drop = [c for c in df.columns if c in META_COLUMNS or c == OPERATION_COL]
    return df.drop(*drop) if drop else df


def partitions_to_delete(state: TableState, req: SaveRequest, data: DataFrame) -> list[str]:
    """The partitions a ``delete_partition`` removes: the option's paths (with ``*``
    wildcards matched against the table's partitions), else the rows' partition paths."""
    named = req.opts.get(cfg.PARTITIONS_TO_DELETE)
    if named:
        wanted = [p.strip() for p in str(named).split(",") if p.strip()]
        existing = state.view.partitions()
        out: list[str] = []
        for p in wanted:
            matches = [e for e in existing if fnmatch.fnmatchcase(e, p)] if "*" in p else [p]
            out.extend(m for m in matches if m not in out)
        return out
    opts = state.options(write_options(req, state.config))
    keyed = keyed_frame(data, KeyingSpec(keygen=state.keygen(opts)))
    rows = keyed.select(F.col(PARTITION_PATH_COL)).distinct().collect()
    return sorted(str(r[0]) for r in rows)


def save(
    df: DataFrame, path: str, *, options: Mapping[str, Any] | None = None, mode: str = "append"
) -> WriteResult | None:
    """Write ``df`` to the Hudi table at ``path`` as Hudi's
    ``df.write.format("hudi").options(**options).mode(mode).save(path)`` does (see the
    module docstring); returns the write's metrics, or None when ``mode="ignore"`` found a
    table. Filesystem settings (``fs.s3a.*``) may be among ``options``; they are never
    stored."""
    req = resolve(path, options, mode)
    gw = FileSystemGateway(req.path, storage_options=req.storage)
    spark = df.sparkSession
    data = without_meta_columns(df)
    where = gw.abs_path("")
    if (
        not req.opts.is_set(cfg.TABLE_NAME)
        and req.mode != "overwrite"
        and gw.exists(PROPERTIES_FILE)
    ):
        # Hudi's mergeParamsAndGetHoodieConfig: the existing table's config fills what the
        # options leave out, its name included (the quick start's CDC append gives none).
        name = TableState.load(gw).config.name
        req = dataclasses.replace(req, options={**req.options, cfg.TABLE_NAME.name: name})
    req.table_name  # noqa: B018  (required before anything else, as in Hudi)
    if gw.exists(PROPERTIES_FILE):
        # Hudi's order: the options are checked against the table, then the mode applies.
        current = TableState.load(gw).config
        check_table(req, current, where)
        if req.mode == "ignore":
            return None
        check_name(req, current, where)
    if req.operation not in DELETES and not (
        gw.exists(PROPERTIES_FILE)
        and (req.mode != "overwrite" or req.operation == "insert_overwrite_table")
    ):
        check_new_table(req, data.columns)  # before an overwrite deletes anything
    exists = check_mode(req, gw)
    if exists:
        table = Table.load(spark, req.path, storage_options=req.storage)
    else:
        table = Table(spark, create_table(req, data.schema))
    state = table.state()
    config = state.config
    if req.operation == "delete_partition":
        parts = partitions_to_delete(state, req, data)
        return table.delete_partitions(parts, options=write_options(req, config))
    operation = req.operation
    if is_keyless(config) and RECORD_KEY_COL in df.columns:
        # Rows read back from a keyless table: written by their stored keys (Hudi's writer
        # keeps the meta key of such rows), so an upsert or delete finds them.
        data = df.drop(*[c for c in df.columns if c != RECORD_KEY_COL and c not in data.columns])
    if (
        is_keyless(config)
        and operation == "upsert"
        and not req.opts.is_set(cfg.OPERATION)
        and RECORD_KEY_COL not in df.columns
    ):
        # Hudi's deduceOperation: with no record key, no operation given and no stored keys
        # in the rows, the write is an append (bulk insert with generated keys).
        operation = "bulk_insert"
    return table.write(data, operation, options=write_options(req, config))  # type: ignore[arg-type]


__all__ = ["partitions_to_delete", "save", "without_meta_columns"]
