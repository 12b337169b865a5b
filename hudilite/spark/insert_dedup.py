"""Inserts as Hudi 0.14+/1.x makes them: batch combining and the duplicate policy.

An ``insert`` (and ``bulk_insert``) keeps duplicate keys by default, as Hudi's do. Two
options change that, both applied before the write transaction starts:

* ``hoodie.combine.before.insert`` (Hudi's ``HoodieWriteConfig.COMBINE_BEFORE_INSERT``):
  the incoming batch is first reduced to one record per key and partition path with the
  table's merge rule -- the same :func:`~hudilite.merge.precombine` an upsert uses, so
  the ordering field (or, without one, the later record) decides.
* ``hoodie.datasource.insert.dup.policy`` (Hudi's
  ``HoodieSparkSqlWriterInternal.handleInsertDuplicates`` ->
  ``DataSourceUtils.resolveDuplicates``; ``insert`` only): ``none`` keeps incoming
  records whose key the table already holds, ``drop`` drops them, ``fail`` raises
  :class:`~hudilite.errors.DuplicateKeyError` naming the keys and writes nothing. Keys
  are looked up in the table's snapshot (per partition path; across partitions with a
  global index, ``GLOBAL_*`` or Flink's ``index.global.enabled``), so a key deleted in a
  merge-on-read log counts as gone. The check is against the table, not inside the batch
  (that is what combining does). Hudi refuses
  dropping duplicates in a bulk insert, and so does hudilite: ``bulk_insert`` with
  ``drop`` or ``fail`` is a :class:`~hudilite.errors.ConfigError`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.errors import ConfigError, DuplicateKeyError
from hudilite.keygen import partition_paths
from hudilite.merge import MergeSpec, precombine
from hudilite.read.planner import plan_snapshot
from hudilite.schema import PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.spark.read_job import read_plan
from hudilite.tablestate.state import TableState
from hudilite.virtual_keys import missing_keys, stored_record_keys, virtual_key_spec
from hudilite.write.write_config import WriteConfig

__all__ = ["DUP_POLICIES", "dup_policy", "prepare_inserts"]

DUP_POLICIES = ("none", "drop", "fail")
_SHOWN_KEYS = 10  # duplicate keys a DuplicateKeyError names
_DUP = "__hl_dup"


def dup_policy(wc: WriteConfig, operation: str) -> str:
    """The duplicate policy of the write ``wc`` that applies to ``operation`` (``none``
    for all but insert)."""
    policy = wc.insert_dup_policy
    if operation == "bulk_insert" and policy != "none":
        raise ConfigError(
            f"{cfg.INSERT_DUP_POLICY.name}={policy!r} does not apply to bulk_insert "
            "(Hudi cannot drop or check duplicates in a bulk insert); use operation insert"
        )
    return policy if operation == "insert" else "none"


def prepare_inserts(
    state: TableState, keyed: DataFrame, operation: str, wc: WriteConfig
) -> DataFrame:
    """``keyed`` (the keyed incoming records) combined and de-duplicated as the write's
    settings ``wc`` say.

    Returns ``keyed`` itself when neither option applies; raises ``DuplicateKeyError``
    under the ``fail`` policy.
    """
    if operation not in ("insert", "bulk_insert"):
        return keyed
    policy = dup_policy(wc, operation)
    global_index = wc.index.is_global
    if wc.combine_before_insert:
        keyed = combine_batch(keyed, wc.merge_spec, global_index=global_index)
    if policy != "none":
        keyed = _resolve_duplicates(state, keyed, policy, global_index, wc)
    return keyed


def _stored_keys(state: TableState, stored: DataFrame, wc: WriteConfig) -> DataFrame:
    """``(key, partition path)`` of a snapshot's rows; in a table without meta fields the
    rows Hudi wrote without them are keyed by their fields (:mod:`hudilite.virtual_keys`)."""
    virtual = virtual_key_spec(state.config, wc.options)
    if virtual is None:
        return stored.select(RECORD_KEY_COL, PARTITION_PATH_COL)
    keygen = wc.keygen
    fields = {
        f.split(".", 1)[0] for f in (*keygen.record_key_fields, *keygen.partition_field_names)
    }
    out = pa.schema([(RECORD_KEY_COL, pa.string()), (PARTITION_PATH_COL, pa.string())])

    def fill(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            paths = batch.column(PARTITION_PATH_COL).cast(pa.string())
            paths = pc.if_else(missing_keys(paths), partition_paths(keygen, batch), paths)
            yield pa.RecordBatch.from_arrays(
                [stored_record_keys(batch, virtual), paths], schema=out
            )

    picked = stored.select(
        RECORD_KEY_COL, PARTITION_PATH_COL, *[F.col(f"`{f}`") for f in sorted(fields)]
    )
    return picked.mapInArrow(fill, spark_schema(out))


def combine_batch(keyed: DataFrame, spec: MergeSpec, *, global_index: bool = False) -> DataFrame:
    """One record per (partition path, key) -- per key alone with a global index, as
    Hudi's ``HoodieWriteHelper.deduplicateRecords`` keys on the record key when the index
    is global -- the batch folded with the merge rule. The winner keeps its own
    partition path."""
    schema = arrow_schema(keyed.schema)

    def combinefn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=schema)
        if table.num_rows == 0:
            return
        if global_index:
            yield from precombine(spec, table).select(schema.names).to_batches()
            return
        paths = table[PARTITION_PATH_COL]
        for path in pc.unique(paths).to_pylist():
            part = table.filter(pc.equal(paths, path)) if path is not None else table
            yield from precombine(spec, part).select(schema.names).to_batches()

    # A key's records meet in one task; each task combines its keys (per partition path
    # unless the index is global).
    by = [RECORD_KEY_COL] if global_index else [PARTITION_PATH_COL, RECORD_KEY_COL]
    return keyed.repartition(*by).mapInArrow(combinefn, keyed.schema)


def _resolve_duplicates(
    state: TableState, keyed: DataFrame, policy: str, global_index: bool, wc: WriteConfig
) -> DataFrame:
    columns = [RECORD_KEY_COL] if global_index else [PARTITION_PATH_COL, RECORD_KEY_COL]
    partitions = (
        None
        if global_index
        else sorted(r[0] for r in keyed.select(PARTITION_PATH_COL).distinct().collect())
    )
    plan = plan_snapshot(state.view, partitions=partitions)
    snapshot = read_plan(keyed.sparkSession, state, plan)
    stored = _stored_keys(state, snapshot, wc).select(*columns).distinct()
    wanted = keyed.select(*columns).distinct()
    found = stored.join(wanted, columns, "inner")
    if policy == "fail":
        dups = found.limit(_SHOWN_KEYS + 1).collect()
        if dups:
            shown = ", ".join(
                repr(r[RECORD_KEY_COL])
                + ("" if global_index else f" (partition {r[PARTITION_PATH_COL]!r})")
                for r in sorted(dups, key=lambda r: (r[RECORD_KEY_COL], tuple(r)))[:_SHOWN_KEYS]
            )
            more = " and more" if len(dups) > _SHOWN_KEYS else ""
            raise DuplicateKeyError(
                f"insert with {cfg.INSERT_DUP_POLICY.name}=fail: the table already holds "
                f"key(s) {shown}{more}; nothing was written"
            )
        return keyed
    flagged = found.withColumn(_DUP, F.lit(True))
    kept = keyed.join(flagged, columns, "left").filter(F.col(_DUP).isNull())
    return kept.select(*[F.col(f"`{c}`") for c in keyed.columns])
