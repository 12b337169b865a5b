"""Tagging incoming records with their stored location: the SIMPLE, BLOOM and global indexes.

Everything about table data happens in executors; the driver handles footers' key ranges
(one small read per candidate file, as the simple index always did), the list of files
and a handful of counts.

* SIMPLE: the keys of every base file whose footer key range overlaps its partition's batch
  range are read (Spark's Parquet reader) and joined with the incoming keys.
* BLOOM (Hudi's ``HoodieBloomIndex``): each incoming key is paired with the files whose
  footer key range covers it (a broadcast range join), then, one task per file, the file's
  footer bloom filter drops the keys it surely lacks, and only when some key survives are the
  file's keys read to confirm (:func:`hudilite.index.bloom_index.lookup_keys`).
* RECORD_INDEX (Hudi's ``SparkMetadataTableRecordIndex``): the distinct incoming keys are
  grouped by the record_index file group their key hashes to, and one task per group looks
  them up in that group's HFile base file and logs
  (:func:`hudilite.metadata.record_index.read_group`): no data file or footer is read.
  Always global.
* GLOBAL_*: the same over every partition; the key alone names a record. A record whose
  partition value changed is routed as Hudi's ``HoodieIndexUtils.tagGlobalLocationBackToRecords``
  / ``mergeForPartitionUpdatesIfNeeded`` do:

  - deletes go to the stored location;
  - ``update.partition.path=false``: the record is updated where it is (its
    ``_hoodie_partition_path`` is the old partition; its data columns, the partition column
    included, are the incoming ones, as Hudi's Avro records keep their payload);
  - ``update.partition.path=true``: the stored record (merged slice) is merged with the
    incoming one by the table's merge rules; when the result comes from the incoming
    record it is inserted into the new partition and the old one gets a delete, otherwise
    the merged record updates the old location. On a merge-on-read table the stored
    locations are first checked against the merged slices of groups with logs (a base
    file keeps the keys its logs deleted, such as a moved record's old copy), as Hudi's
    merged lookup does.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.config.vocab import INDEX_BLOOM, INDEX_RECORD
from hudilite.errors import ConfigError
from hudilite.index.bloom_index import IndexSettings, lookup_keys, metadata_filters
from hudilite.index.simple import (
    LOCATION_SCHEMA,
    IndexMetrics,
    candidate_files,
    log_only_slices,
    slice_locations,
)
from hudilite.keygen import KeyGenSpec
from hudilite.merge import merge_file_group, precombine
from hudilite.metadata import record_index as ri
from hudilite.read.file_group_reader import decode_slice, encode_slice, read_file_slice
from hudilite.schema import (
    DELETE_COL,
    FILE_ID_COL,
    META_COLUMNS,
    PARTITION_PATH_COL,
    RECORD_KEY_COL,
    SEQ_COL,
)
from hudilite.spark.convert import arrow_schema, spark_schema
from hudilite.spark.read_job import base_file_keys
from hudilite.storage.bloom_filter import deserialize
from hudilite.storage.parquet_io import read_key_range
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.virtual_keys import virtual_key_spec, with_stored_keys
from hudilite.write.write_context import ExistingFile

__all__ = ["LOC_PARTITION_COL", "IndexMetrics", "locate", "log_only_keys", "route_global"]

LOC_PARTITION_COL = "_hl_loc_partition"
LOC_FILE_COL = "_hl_loc_file"
# One row per looked-up file (key null) tells whether its keys had to be read.
_LOOKUP_SCHEMA = pa.schema(
    [
        (RECORD_KEY_COL, pa.string()),
        (PARTITION_PATH_COL, pa.string()),
        (FILE_ID_COL, pa.string()),
        ("_hl_keys_read", pa.bool_()),
    ]
)


def locate(
    state: TableState,
    keyed: DataFrame,
    existing: dict[tuple[str, str], ExistingFile],
    key_ranges: dict[str, tuple[str, str]],
    settings: IndexSettings,
    log_keys: DataFrame | None,
) -> tuple[DataFrame, IndexMetrics]:
    """``keyed`` with ``FILE_ID_COL`` (null for new keys) and, for global indexes, the
    stored location's partition in ``LOC_PARTITION_COL``.

    ``existing``: latest base files of the partitions to search (every partition for a
    global index); ``log_keys``: ``(key, partition, file id)`` of merge-on-read groups
    without a base file.
    """
    metrics = IndexMetrics(settings.kind, settings.is_global)
    files = [(p, ef.rel_path) for (p, _), ef in existing.items()]
    metrics.files_in_scope = len(files)
    if settings.is_global and key_ranges:
        lo = min(r[0] for r in key_ranges.values())
        hi = max(r[1] for r in key_ranges.values())
        ranges = {p: (lo, hi) for p, _ in files}
    else:
        ranges = dict(key_ranges)
    spark = keyed.sparkSession
    stored: DataFrame | None = None
    # A table without meta fields: stored keys come from the record key fields.
    virtual = virtual_key_spec(state.config)
    if settings.kind == INDEX_RECORD:
        stored = _record_index_lookup(state, keyed)
    elif settings.kind == INDEX_BLOOM:
        stored = _bloom_lookup(state, keyed, files, ranges, settings, metrics, virtual)
    else:
        candidates = candidate_files(files, ranges, lambda rel: read_key_range(state.gw, rel))
        metrics.files_after_range_pruning = metrics.files_read = len(candidates)
        if candidates:
            stored = base_file_keys(spark, state.gw, candidates, FILE_ID_COL, virtual)
    if log_keys is not None and settings.kind != INDEX_RECORD:
        stored = log_keys if stored is None else stored.unionByName(log_keys)
    metrics.looked_up = stored is not None
    if stored is None:
        out = keyed.withColumn(FILE_ID_COL, F.lit(None).cast("string"))
        if settings.is_global:
            out = out.withColumn(LOC_PARTITION_COL, F.lit(None).cast("string"))
        return out, metrics
    if not settings.is_global:
        wanted = keyed.select(PARTITION_PATH_COL, RECORD_KEY_COL).distinct()
        located = (
            stored.join(F.broadcast(wanted), [PARTITION_PATH_COL, RECORD_KEY_COL], "inner")
            .groupBy(PARTITION_PATH_COL, RECORD_KEY_COL)
            .agg(F.max(FILE_ID_COL).alias(FILE_ID_COL))
        )
        return keyed.join(located, [PARTITION_PATH_COL, RECORD_KEY_COL], "left"), metrics
    wanted = keyed.select(RECORD_KEY_COL).distinct()
    found = stored.join(F.broadcast(wanted), [RECORD_KEY_COL], "inner")
    if settings.update_partition_path and state.config.is_mor and settings.kind != INDEX_RECORD:
        # (the record index holds live keys only: a key its logs deleted is not in it)
        found = _live_locations(state, found)
    loc = F.max(F.struct(F.col(PARTITION_PATH_COL), F.col(FILE_ID_COL))).alias("_hl_loc")
    located = (
        found.groupBy(RECORD_KEY_COL)
        .agg(loc)
        .select(
            RECORD_KEY_COL,
            F.col(f"_hl_loc.{PARTITION_PATH_COL}").alias(LOC_PARTITION_COL),
            F.col(f"_hl_loc.{FILE_ID_COL}").alias(FILE_ID_COL),
        )
    )
    return keyed.join(located, [RECORD_KEY_COL], "left"), metrics


_GROUP_COL = "_hl_ri_group"


def _record_index_lookup(state: TableState, keyed: DataFrame) -> DataFrame | None:
    """``(key, partition, file id)`` of the incoming keys the record index holds."""
    gw = state.gw
    if not ri.listed(properties_file.load(gw)):
        raise ConfigError(
            f"{cfg.INDEX_TYPE.name}=RECORD_INDEX: the table at {gw.uri('')} has no "
            f"record_index partition in its metadata table ({cfg.METADATA_ENABLED.name} and "
            f"{cfg.METADATA_RECORD_INDEX_ENABLED.name} keep one on table versions 8 and 9)"
        )
    groups = ri.slices(gw, state.timeline)
    if not groups:
        return None
    count = len(groups)
    group_schema = pa.schema([(RECORD_KEY_COL, pa.string()), (_GROUP_COL, pa.int32())])

    def tag(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column(0).to_pylist()
            index = [ri.file_group_index(k, count) for k in keys]
            yield pa.RecordBatch.from_arrays(
                [batch.column(0).cast(pa.string()), pa.array(index, pa.int32())],
                schema=group_schema,
            )

    def look(batch: pa.Table) -> pa.Table:
        group = groups[batch[_GROUP_COL][0].as_py()]
        found = ri.read_group(gw, group, set(batch[RECORD_KEY_COL].to_pylist()))
        keys = sorted(found)
        return pa.table(
            {
                RECORD_KEY_COL: pa.array(keys, pa.string()),
                PARTITION_PATH_COL: pa.array([found[k].partition for k in keys], pa.string()),
                FILE_ID_COL: pa.array([found[k].file_id for k in keys], pa.string()),
            },
            schema=LOCATION_SCHEMA,
        )

    wanted = keyed.select(RECORD_KEY_COL).distinct()
    tagged = wanted.mapInArrow(tag, spark_schema(group_schema))
    return (
        tagged.repartition(count, _GROUP_COL)
        .groupBy(_GROUP_COL)
        .applyInArrow(look, spark_schema(LOCATION_SCHEMA))
    )


def _live_locations(state: TableState, found: DataFrame) -> DataFrame:
    """The ``(key, partition, file id)`` rows of ``found`` whose record is live.

    A merge-on-read base file still holds the keys its group's logs deleted: the old copy
    of every record a global index moved. Taken for a location, such a key would be routed
    to the dead copy (the move found nothing there to delete and left the live copy in
    place: the key twice). Hudi's global indexes likewise merge the stored slices of a
    merge-on-read table before tagging (``mayContainDuplicateLookup`` in
    ``HoodieIndexUtils.tagGlobalLocationBackToRecords``). Only groups with logs are merged,
    and only those the incoming keys were found in.
    """
    logged = [
        (s.partition, s.file_id, encode_slice(s))
        for s in state.view.latest_slices()
        if s.base_file is not None and s.log_files
    ]
    if not logged:
        return found
    groups = found.sparkSession.createDataFrame(
        logged, f"{PARTITION_PATH_COL} string, {FILE_ID_COL} string, _hl_slice string"
    )
    flagged = found.join(F.broadcast(groups), [PARTITION_PATH_COL, FILE_ID_COL], "left")
    columns = [RECORD_KEY_COL, PARTITION_PATH_COL, FILE_ID_COL]
    plain = flagged.filter(F.col("_hl_slice").isNull()).select(*columns)
    gw, schema = state.gw, state.storage_schema
    spec = state.merge_spec(state.options())
    visible = state.timeline.is_completed

    def live(batch: pa.Table) -> pa.Table:
        located = slice_locations(
            gw,
            decode_slice(batch["_hl_slice"][0].as_py()),
            merge_spec=spec,
            schema=schema,
            is_instant_visible=visible,
        )
        keys = batch[RECORD_KEY_COL]
        alive = pc.is_in(keys, value_set=located[RECORD_KEY_COL].combine_chunks())
        return batch.select(columns).filter(alive).cast(LOCATION_SCHEMA)

    checked = (
        flagged.filter(F.col("_hl_slice").isNotNull())
        .groupBy(PARTITION_PATH_COL, FILE_ID_COL)
        .applyInArrow(live, spark_schema(LOCATION_SCHEMA))
    )
    return plain.unionByName(checked)


def _bloom_lookup(
    state: TableState,
    keyed: DataFrame,
    files: list[tuple[str, str]],
    ranges: dict[str, tuple[str, str]],
    settings: IndexSettings,
    metrics: IndexMetrics,
    virtual: KeyGenSpec | None,
) -> DataFrame | None:
    """``(key, partition, file id)`` of the incoming keys found in ``files`` (bloom index)."""
    wanted_files = [(p, rel) for p, rel in files if p in ranges]
    if not wanted_files:
        return None
    spark = keyed.sparkSession
    gw = state.gw
    if settings.prune_by_ranges:
        with ThreadPoolExecutor(max_workers=8) as pool:
            file_ranges = list(pool.map(lambda f: read_key_range(gw, f[1]), wanted_files))
    else:
        file_ranges = [None] * len(wanted_files)
    rows = [
        (p, rel, r[0] if r else None, r[1] if r else None)
        for (p, rel), r in zip(wanted_files, file_ranges, strict=True)
        # A file whose range misses its partition's whole batch range is out at once.
        if r is None or not (r[1] < ranges[p][0] or r[0] > ranges[p][1])
    ]
    if not rows:
        return None
    table = spark.createDataFrame(
        rows, "_f_partition string, _f_path string, _f_lo string, _f_hi string"
    )
    key = F.col(RECORD_KEY_COL)
    in_range = F.col("_f_lo").isNull() | ((key >= F.col("_f_lo")) & (key <= F.col("_f_hi")))
    if settings.is_global:
        wanted = keyed.select(RECORD_KEY_COL).distinct()
        pairs = wanted.join(F.broadcast(table), in_range, "inner")
    else:
        wanted = keyed.select(PARTITION_PATH_COL, RECORD_KEY_COL).distinct()
        pairs = wanted.join(
            F.broadcast(table), (F.col(PARTITION_PATH_COL) == F.col("_f_partition")) & in_range
        )
    pairs = pairs.select(RECORD_KEY_COL, "_f_partition", "_f_path")
    # Filters from the metadata table travel to the tasks serialized (a file without one
    # there is read from its footer in its task).
    stored = {
        rel: (f.serialize(), f.type_code)
        for rel, f in metadata_filters(gw, [(r[0], r[1]) for r in rows], settings).items()
    }

    def lookup(batch: pa.Table) -> pa.Table:
        rel = batch["_f_path"][0].as_py()
        partition = batch["_f_partition"][0].as_py()
        file_id = rel.rsplit("/", 1)[-1].split("_", 1)[0]
        given = stored.get(rel)
        bloom = deserialize(*given) if given is not None else None
        found, read = lookup_keys(gw, rel, batch[RECORD_KEY_COL], virtual, bloom)
        n = len(found)
        return pa.table(
            {
                RECORD_KEY_COL: pa.concat_arrays(
                    [found.cast(pa.string()), pa.nulls(1, pa.string())]
                ),
                PARTITION_PATH_COL: pa.repeat(pa.scalar(partition, pa.string()), n + 1),
                FILE_ID_COL: pa.repeat(pa.scalar(file_id, pa.string()), n + 1),
                "_hl_keys_read": pa.concat_arrays(
                    [pa.repeat(pa.scalar(read), n), pa.array([read])]
                ),
            },
            schema=_LOOKUP_SCHEMA,
        )

    n = max(1, min(len(rows), 4096))
    looked = (
        pairs.repartition(n, "_f_path")
        .groupBy("_f_path")
        .applyInArrow(lookup, spark_schema(_LOOKUP_SCHEMA))
        .persist()
    )
    metrics.cached.append(looked)
    summary = (
        looked.filter(F.col(RECORD_KEY_COL).isNull())
        .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("_hl_keys_read").cast("int")).alias("r"))
        .collect()[0]
    )
    metrics.files_after_range_pruning = int(summary["n"] or 0)
    metrics.files_read = int(summary["r"] or 0)
    return looked.filter(F.col(RECORD_KEY_COL).isNotNull()).select(
        RECORD_KEY_COL, PARTITION_PATH_COL, FILE_ID_COL
    )


def route_global(
    state: TableState,
    tagged: DataFrame,
    settings: IndexSettings,
    metrics: IndexMetrics,
    storage_schema: pa.Schema,
    ordering_field: str | None,
) -> DataFrame:
    """Route globally located records (see the module doc); drops ``LOC_PARTITION_COL``."""
    loc = F.col(LOC_PARTITION_COL)
    found = loc.isNotNull()
    moved_partition = found & (loc != F.col(PARTITION_PATH_COL))
    to_old = moved_partition & (F.col(DELETE_COL) | F.lit(not settings.update_partition_path))
    columns = [c for c in tagged.columns if c != LOC_PARTITION_COL]
    staying = tagged.filter(~moved_partition | to_old).select(
        *[
            F.when(to_old, loc).otherwise(F.col(PARTITION_PATH_COL)).alias(c)
            if c == PARTITION_PATH_COL
            else F.col(f"`{c}`")
            for c in columns
        ]
    )
    if not settings.update_partition_path:
        return staying
    moving = tagged.filter(moved_partition & ~F.col(DELETE_COL))
    groups = [
        (r[LOC_PARTITION_COL], r[FILE_ID_COL])
        for r in moving.select(LOC_PARTITION_COL, FILE_ID_COL).distinct().collect()
    ]
    if not groups:
        return staying
    wanted = set(groups)
    descriptors = {
        (s.partition, s.file_id): encode_slice(s)
        for s in state.view.latest_slices(partitions=sorted({p for p, _ in wanted}))
        if (s.partition, s.file_id) in wanted
    }
    gw, spec = state.gw, state.merge_spec(state.options())
    visible = state.timeline.is_completed
    # Every output column nullable: the old location's delete records carry no ordering
    # value, and a column Spark knows as non-null (a literal, an aggregate, a NOT NULL
    # source) would make its Arrow reader fail on them ("Value at index is null").
    out_schema = pa.schema(
        f.with_nullable(True) for f in arrow_schema(moving.select(*columns).schema)
    )

    def reconcile(batch: pa.Table) -> pa.Table:
        old_partition = batch[LOC_PARTITION_COL][0].as_py()
        file_id = batch[FILE_ID_COL][0].as_py()
        incoming = batch.drop_columns([LOC_PARTITION_COL, FILE_ID_COL])
        types = {f.name: f.type for f in storage_schema}
        for i, name in enumerate(incoming.column_names):
            want = types.get(name)
            if want is not None and incoming.schema.field(i).type != want:
                incoming = incoming.set_column(i, name, incoming.column(i).cast(want))
        for col in META_COLUMNS:
            if col not in incoming.column_names:
                incoming = incoming.append_column(col, pa.nulls(incoming.num_rows, pa.string()))
        incoming = precombine(spec, incoming)
        descriptor = descriptors.get((old_partition, file_id))
        stored = (
            read_file_slice(
                gw,
                decode_slice(descriptor),
                merge_spec=spec,
                schema=storage_schema,
                is_instant_visible=visible,
            )
            if descriptor is not None
            else storage_schema.empty_table()
        )
        if spec.virtual_keys is not None:  # rows stored without meta fields get their keys
            stored = with_stored_keys(stored, spec.virtual_keys, old_partition)
        stored = stored.filter(pc.is_in(stored[RECORD_KEY_COL], value_set=incoming[RECORD_KEY_COL]))
        merged = merge_file_group(spec, stored, incoming).table
        inc_keys = incoming[RECORD_KEY_COL].to_pylist()
        new_partition = dict(zip(inc_keys, incoming[PARTITION_PATH_COL].to_pylist(), strict=True))
        seqs = dict(zip(inc_keys, incoming[SEQ_COL].to_pylist(), strict=True))
        stored_keys = set(stored[RECORD_KEY_COL].to_pylist())
        merged_keys = merged[RECORD_KEY_COL].to_pylist()
        parts = []
        move_idx: list[int] = []
        stay_idx: list[int] = []
        for i, (k, p) in enumerate(
            zip(merged_keys, merged[PARTITION_PATH_COL].to_pylist(), strict=True)
        ):
            # Not stored any more (a log deleted it): a new record, as Hudi tags it.
            (move_idx if k not in stored_keys or p == new_partition[k] else stay_idx).append(i)
        moved = merged.take(pa.array(move_idx, pa.int64()))
        mk = moved[RECORD_KEY_COL].to_pylist()
        parts.append(
            _project(
                moved,
                out_schema,
                {
                    PARTITION_PATH_COL: pa.array([new_partition[k] for k in mk], pa.string()),
                    FILE_ID_COL: pa.nulls(len(mk), pa.string()),
                    DELETE_COL: pa.repeat(pa.scalar(False), len(mk)),
                    SEQ_COL: pa.array([seqs[k] for k in mk], pa.int64()),
                },
            )
        )
        stay = merged.take(pa.array(stay_idx, pa.int64()))
        sk = stay[RECORD_KEY_COL].to_pylist()
        parts.append(
            _project(
                stay,
                out_schema,
                {
                    PARTITION_PATH_COL: pa.repeat(pa.scalar(old_partition, pa.string()), len(sk)),
                    FILE_ID_COL: pa.repeat(pa.scalar(file_id, pa.string()), len(sk)),
                    DELETE_COL: pa.repeat(pa.scalar(False), len(sk)),
                    SEQ_COL: pa.array([seqs[k] for k in sk], pa.int64()),
                },
            )
        )
        # The old location gets Hudi's delete record (no ordering value: it always wins) for
        # every moved key, and for a key the merge deleted.
        merged_set = set(merged_keys)
        doomed = [k for k in mk if k in stored_keys] + [
            k for k in inc_keys if k in stored_keys and k not in merged_set
        ]
        if doomed:
            dels = incoming.filter(
                pc.is_in(incoming[RECORD_KEY_COL], value_set=pa.array(doomed, pa.string()))
            )
            n = dels.num_rows
            overrides = {
                PARTITION_PATH_COL: pa.repeat(pa.scalar(old_partition, pa.string()), n),
                FILE_ID_COL: pa.repeat(pa.scalar(file_id, pa.string()), n),
                DELETE_COL: pa.repeat(pa.scalar(True), n),
            }
            if ordering_field and ordering_field in out_schema.names:
                overrides[ordering_field] = pa.nulls(n, out_schema.field(ordering_field).type)
            parts.append(_project(dels, out_schema, overrides))
        return pa.concat_tables(parts)

    moved_out = (
        moving.repartition(max(1, min(len(groups), 4096)), LOC_PARTITION_COL, FILE_ID_COL)
        .groupBy(LOC_PARTITION_COL, FILE_ID_COL)
        .applyInArrow(reconcile, spark_schema(out_schema))
        .persist()  # counted here, then written: the stored slices are read once
    )
    metrics.cached.append(moved_out)
    metrics.notes["moving_groups"] = len(groups)
    # Routed to their new partition (no file id there yet), as opposed to kept where they
    # are (an older record under event-time merging) or the old location's deletes.
    metrics.records_moved = moved_out.filter(
        F.col(FILE_ID_COL).isNull() & ~F.col(DELETE_COL)
    ).count()
    return staying.unionByName(moved_out)


def _project(table: pa.Table, schema: pa.Schema, overrides: dict[str, pa.Array]) -> pa.Table:
    """``table`` in ``schema``: columns by name (``overrides`` first, missing ones null)."""
    columns = []
    for f in schema:
        if f.name in overrides:
            col = overrides[f.name]
        elif f.name in table.column_names:
            col = table[f.name]
        else:
            col = pa.nulls(table.num_rows, f.type)
        columns.append(col.cast(f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def log_only_keys(state: TableState, keyed: DataFrame, partitions: list[str]) -> DataFrame | None:
    """Keys of merge-on-read file groups that have logs but no base file yet
    (:func:`~hudilite.index.simple.log_only_slices`): their live records are merged in
    executors and only ``(key, partition, file id)`` comes back."""
    slices = log_only_slices(state, partitions)
    if not slices:
        return None
    spark = keyed.sparkSession
    gw, schema = state.gw, state.storage_schema
    spec = state.merge_spec(state.options())
    visible = state.timeline.is_completed

    def keysfn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for descriptor in batch.column(0).to_pylist():
                located = slice_locations(
                    gw,
                    decode_slice(descriptor),
                    merge_spec=spec,
                    schema=schema,
                    is_instant_visible=visible,
                )
                yield from located.to_batches()

    descriptors = spark.createDataFrame([(encode_slice(s),) for s in slices], "d string")
    return descriptors.repartition(min(len(slices), 64)).mapInArrow(
        keysfn, spark_schema(LOCATION_SCHEMA)
    )
