"""A small write done in the driver: the Spark write job's steps over one Arrow table.

When a write's input is small (at most ``hoodie.hudilite.write.local.max.rows`` records),
:mod:`hudilite.spark.write_job` collects it and runs the rest here with pyarrow: an input
its plan bounds (VALUES, a local table) is collected as it is and keyed here
(:func:`key_table`, the Arrow key generator); any other is keyed (and, when asked,
combined) by Spark and collected once known to be small. Then the key stats, the index
lookup, the insert assignment and the file-group writes run here. Each step
calls what the executors call (:func:`~hudilite.index.bloom_index.lookup_keys`,
:func:`~hudilite.write.assign.assign_inserts`,
:func:`~hudilite.write.file_group_writer.write_file_group`) and the write commits through
the same :class:`~hudilite.write.transaction.WriteTransaction`. A one-row statement then
runs one Spark job (computing its input) instead of five to nine, each a scheduling round
trip worth more than the work it does.

Only table files are read here, and only those a Spark write would read in its tasks: the
keys of the candidate base files, and the base files of the file groups being rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.index.bloom_index import IndexSettings, lookup_keys, metadata_filters
from hudilite.index.bucket import bucket_file_id_column, bucket_file_ids, hash_fields
from hudilite.index.simple import (
    LOCATION_SCHEMA,
    IndexMetrics,
    candidate_files,
    log_only_slices,
    overlaps,
    slice_locations,
)
from hudilite.schema import DELETE_COL, FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.storage.layout import new_file_id
from hudilite.storage.parquet_io import read_base_file, read_key_range, read_stored_keys
from hudilite.tablestate.state import TableState
from hudilite.virtual_keys import file_partition, virtual_key_spec
from hudilite.write.assign import (
    InsertBucket,
    PackingSettings,
    WritePlan,
    assign_inserts,
    small_files,
    take_small_files,
)
from hudilite.write.file_group_writer import ExistingFile, WriteContext, write_file_group
from hudilite.write.keying import KeyingSpec, key_batch, keyed_schema
from hudilite.write.write_config import WriteConfig

__all__ = [
    "assign_buckets",
    "index_and_write",
    "key_stats",
    "key_table",
    "locate",
    "write_groups",
]

_SEP = "\x00"  # joins partition path and key/file id into one lookup string (in neither)
_READ_THREADS = 8  # footers and key columns read in parallel (round trips on object stores)


def key_table(spec: KeyingSpec, table: pa.Table) -> pa.Table:
    """``table`` keyed (record key, partition path, write order, delete flag) by the Arrow key
    generator, in one write order from 0."""
    batches = table.combine_chunks().to_batches() or [
        pa.RecordBatch.from_pylist([], schema=table.schema)
    ]
    keyed, offset = [], 0
    for batch in batches:
        keyed.append(key_batch(spec, batch, offset))
        offset += batch.num_rows
    return pa.Table.from_batches(keyed, schema=keyed_schema(table.schema))


def key_stats(keyed: pa.Table) -> WritePlan:
    """Per partition path: record count, key range, and records that are not deletes.

    The same numbers as the Spark write's key-stats job (a null delete flag is not
    counted as kept, as the Spark filter does not keep it).
    """
    if keyed.num_rows == 0:
        return WritePlan(partitions={}, key_ranges={}, kept={})
    kept = pc.fill_null(pc.invert(keyed[DELETE_COL]), False).cast(pa.int64())
    stats = (
        pa.table(
            {
                "p": keyed[PARTITION_PATH_COL],
                "k": keyed[RECORD_KEY_COL].cast(pa.string()),
                "kept": kept,
            }
        )
        .group_by("p")
        .aggregate([([], "count_all"), ("k", "min"), ("k", "max"), ("kept", "sum")])
        .to_pylist()
    )
    return WritePlan(
        partitions={r["p"]: r["count_all"] for r in stats},
        key_ranges={r["p"]: (r["k_min"], r["k_max"]) for r in stats},
        kept={r["p"]: r["kept_sum"] for r in stats},
    )


def _joined(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array:
    out = pc.binary_join_element_wise(a.cast(pa.string()), b.cast(pa.string()), _SEP)
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _map(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    if len(items) <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(items))) as pool:
        return list(pool.map(fn, items))


def locate(
    state: TableState,
    keyed: pa.Table,
    existing: dict[tuple[str, str], ExistingFile],
    key_ranges: dict[str, tuple[str, str]],
    settings: IndexSettings,
) -> tuple[pa.Table, dict[str, Any]]:
    """``keyed`` with ``FILE_ID_COL`` (null for keys the table does not hold) and the
    index metrics.

    The SIMPLE and BLOOM indexes, per partition path (not global): the candidate base files
    are pruned by their footer key ranges; BLOOM then asks each file's bloom filter before
    reading its keys. Merge-on-read file groups with logs and no base file are merged to
    find their keys, as the Spark write does.
    """
    gw = state.gw
    virtual = virtual_key_spec(state.config)  # a table without meta fields
    files = [(p, ef.rel_path) for (p, _), ef in existing.items()]
    group_of = {ef.rel_path: fid for (_, fid), ef in existing.items()}
    found: list[pa.Table] = []  # (partition, key, file id) of stored keys
    keys_by_partition: dict[str, pa.Array] = {}
    paths = keyed[PARTITION_PATH_COL]
    for p in key_ranges:
        keys_by_partition[p] = pc.unique(
            keyed.filter(pc.equal(paths, p))[RECORD_KEY_COL].cast(pa.string()).combine_chunks()
        )
    files_after_pruning = files_read = 0
    if settings.kind == cfg.INDEX_BLOOM:
        wanted = [(p, rel) for p, rel in files if p in key_ranges]
        ranges = (
            _map(lambda f: read_key_range(gw, f[1]), wanted)
            if settings.prune_by_ranges
            else [None] * len(wanted)
        )
        jobs = []
        for (p, rel), r in zip(wanted, ranges, strict=True):
            if r is not None and not overlaps(r, key_ranges[p]):
                continue
            keys = keys_by_partition[p]
            if r is not None:
                keys = keys.filter(pc.and_(pc.greater_equal(keys, r[0]), pc.less_equal(keys, r[1])))
            if len(keys):
                jobs.append((p, rel, keys))
        filters = metadata_filters(gw, [(p, rel) for p, rel, _ in jobs], settings)
        results = _map(lambda j: lookup_keys(gw, j[1], j[2], virtual, filters.get(j[1])), jobs)
        files_after_pruning = len(jobs)
        for (p, rel, _), (keys, read) in zip(jobs, results, strict=True):
            files_read += int(read)
            if len(keys):
                found.append(_locations(keys, p, group_of[rel]))
    else:
        candidates = candidate_files(files, key_ranges, lambda rel: read_key_range(gw, rel))
        files_after_pruning = files_read = len(candidates)

        def stored(rel: str) -> pa.Table:
            if virtual is not None:
                keys = read_stored_keys(gw, rel, virtual)
                return _locations(keys, file_partition(rel), group_of[rel])
            t = read_base_file(gw, rel, columns=[RECORD_KEY_COL, PARTITION_PATH_COL])
            return _locations(t[RECORD_KEY_COL], t[PARTITION_PATH_COL], group_of[rel])

        found.extend(_map(stored, candidates))
    found.extend(_log_only_keys(state, sorted(key_ranges)))
    metrics = IndexMetrics(
        settings.kind,
        settings.is_global,
        files_in_scope=len(files),
        files_after_range_pruning=files_after_pruning,
        files_read=files_read,
    ).as_dict()
    wanted_ids = _joined(paths, keyed[RECORD_KEY_COL])
    if not found:
        return keyed.append_column(FILE_ID_COL, pa.nulls(keyed.num_rows, pa.string())), metrics
    stored_all = pa.concat_tables(found)
    stored_ids = _joined(stored_all[PARTITION_PATH_COL], stored_all[RECORD_KEY_COL])
    hit = pc.is_in(stored_ids, value_set=wanted_ids)
    located = (
        pa.table({"id": stored_ids.filter(hit), "f": stored_all[FILE_ID_COL].filter(hit)})
        .group_by("id")
        # A key in two file groups of one partition (a duplicate Hudi itself may leave):
        # the larger file id wins, as the Spark lookup's max() picks.
        .aggregate([("f", "max")])
    )
    position = pc.index_in(wanted_ids, value_set=located["id"])
    file_ids = pc.take(located["f_max"], position)
    return keyed.append_column(FILE_ID_COL, file_ids), metrics


def _locations(
    keys: pa.Array | pa.ChunkedArray, partition: str | pa.Array | pa.ChunkedArray, file_id: str
) -> pa.Table:
    """``(key, partition, file id)`` rows of keys stored in one file group."""
    n = len(keys)
    parts = (
        pa.repeat(pa.scalar(partition, pa.string()), n)
        if isinstance(partition, str)
        else partition.cast(pa.string())
    )
    file_ids = pa.repeat(pa.scalar(file_id, pa.string()), n)
    return pa.Table.from_arrays([keys.cast(pa.string()), parts, file_ids], schema=LOCATION_SCHEMA)


def _log_only_keys(state: TableState, partitions: list[str]) -> list[pa.Table]:
    """Keys of merge-on-read file groups with logs and no base file: their live records
    are merged to find them, as the Spark write's ``log_only_keys`` does in tasks."""
    spec = state.merge_spec(state.options())
    return _map(
        lambda fs: slice_locations(
            state.gw,
            fs,
            merge_spec=spec,
            schema=state.storage_schema,
            is_instant_visible=state.timeline.is_completed,
        ),
        log_only_slices(state, partitions),
    )


def assign_buckets(tagged: pa.Table, buckets: list[InsertBucket]) -> pa.Table:
    """Give each insert (row without a file id) its planned file group and drop inserts no
    bucket covers.

    The Spark write hashes a key to a fraction of ``[0, 1)``; here the ``i``-th of a
    partition's ``n`` inserts takes the fraction ``i / n``, which splits them over the
    buckets in exactly their planned shares.
    """
    file_ids = tagged[FILE_ID_COL].to_pylist()
    if buckets:
        by_partition: dict[str, list[InsertBucket]] = {}
        for b in buckets:
            by_partition.setdefault(b.partition_path, []).append(b)
        paths = tagged[PARTITION_PATH_COL].to_pylist()
        inserts: dict[str, list[int]] = {}
        for i, (p, f) in enumerate(zip(paths, file_ids, strict=True)):
            if f is None and p in by_partition:
                inserts.setdefault(p, []).append(i)
        for p, rows in inserts.items():
            fractions = np.arange(len(rows)) / len(rows)
            for b in by_partition[p]:
                for i in np.asarray(rows)[(fractions >= b.lo) & (fractions < b.hi)]:
                    file_ids[int(i)] = b.file_id
    column = pa.array(file_ids, pa.string())
    out = tagged.set_column(tagged.schema.get_field_index(FILE_ID_COL), FILE_ID_COL, column)
    return out.filter(pc.is_valid(column))


def write_groups(ctx: WriteContext, tagged: pa.Table, *, threads: int = 2) -> list[dict[str, Any]]:
    """Write every file group of ``tagged`` with :func:`write_file_group`; the stats rows.

    Groups run in up to ``threads`` threads (pyarrow's readers, writers and compute
    release the GIL). Each group gets its own task number, so sequence numbers and write
    tokens never collide. When one group fails the others finish first: no file is written
    after the error reaches the transaction, which then rolls the write back.
    """
    if tagged.num_rows == 0:
        return []
    ids = _joined(tagged[PARTITION_PATH_COL], tagged[FILE_ID_COL])
    groups = sorted(pc.unique(ids).to_pylist())

    def write(item: tuple[int, str]) -> list[dict[str, Any]]:
        task, group = item
        partition, file_id = group.split(_SEP, 1)
        rows = tagged.filter(pc.equal(ids, group))
        stats = write_file_group(ctx, partition, file_id, rows, f"{task}-0-0", task)
        return stats.to_pylist()

    items = list(enumerate(groups))
    if threads <= 1 or len(items) <= 1:
        results = [write(i) for i in items]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
            results = list(pool.map(write, items))
    return [row for rows in results for row in rows]


def index_and_write(
    state: TableState,
    ctx: WriteContext,
    keyed: pa.Table,
    plan: WritePlan,
    operation: str,
    wc: WriteConfig,
    extra: dict[str, Any],
    *,
    threads: int = 2,
    max_groups: int | None = None,
) -> list[dict[str, Any]] | None:
    """Tag, assign and write the keyed records of an ``upsert``, ``insert`` or ``delete``
    (non-global SIMPLE, BLOOM or BUCKET index), as the Spark write's ``_index_and_write``
    does; ``wc``: the write's settings; ``extra`` receives the index metrics.

    ``max_groups``: the most stored file groups the driver reads and rewrites. An index
    lookup (SIMPLE, BLOOM) reads every file group of the partitions the records touch;
    otherwise (inserts, the bucket index) a write rewrites the file groups its records are
    assigned to. Over the limit nothing is written and the result is None: the caller
    hands the records to Spark tasks."""
    if not plan.partitions:
        return []

    def over_limit(groups: int) -> bool:
        return max_groups is not None and groups > max_groups

    index = wc.index
    if index.is_global or index.kind not in (cfg.INDEX_SIMPLE, cfg.INDEX_BLOOM, cfg.INDEX_BUCKET):
        raise ConfigError(f"a driver-side write cannot use the {index.kind} index")
    if index.kind == cfg.INDEX_BUCKET:
        num_buckets = wc.bucket_num
        if num_buckets <= 0:
            raise ConfigError(f"{cfg.BUCKET_NUM.name} must be positive, got {num_buckets}")
        partitions = sorted(plan.partitions)
        column = bucket_file_id_column(
            keyed[RECORD_KEY_COL].cast(pa.string()),
            keyed[PARTITION_PATH_COL],
            pa.array(partitions, pa.string()),
            pa.array(bucket_file_ids(partitions, ctx.existing, num_buckets), pa.string()),
            num_buckets,
            hash_fields(state.config.record_key_fields, wc.bucket_hash_field),
        )
        tagged = keyed.append_column(FILE_ID_COL, column).filter(pc.is_valid(column))
        if operation == "delete":
            known = pa.array(sorted({f for _, f in ctx.existing}), pa.string())
            tagged = tagged.filter(pc.is_in(tagged[FILE_ID_COL], value_set=known))
        if over_limit(len(ctx.existing)):  # else no count can be over either
            ids = pc.unique(_joined(tagged[PARTITION_PATH_COL], tagged[FILE_ID_COL]))
            stored = {f"{p}{_SEP}{f}" for p, f in ctx.existing}
            if over_limit(sum(1 for i in ids.to_pylist() if i in stored)):
                return None
        return write_groups(ctx, tagged, threads=threads)
    if operation in ("upsert", "delete"):
        if over_limit(len(ctx.existing)):
            return None
        tagged, metrics = locate(state, keyed, ctx.existing, plan.key_ranges, index)
        extra["index"] = metrics
    else:
        tagged = keyed.append_column(FILE_ID_COL, pa.nulls(keyed.num_rows, pa.string()))
    # Deletes of keys the table does not hold have nothing to do (Kleene logic: a null
    # delete flag is not kept, as in the Spark filter).
    # A delete that follows an insert of the same new key in this batch is kept: the
    # batch's merge decides which of them wins (a newer delete leaves nothing).
    located = pc.is_valid(tagged[FILE_ID_COL])
    live = pc.invert(tagged[DELETE_COL])
    shadows = pc.is_in(tagged[RECORD_KEY_COL], value_set=tagged.filter(live)[RECORD_KEY_COL])
    tagged = tagged.filter(pc.or_kleene(pc.or_kleene(located, live), shadows))
    if operation == "delete":
        tagged = tagged.filter(pc.is_valid(tagged[FILE_ID_COL]))
    else:
        inserts = tagged.filter(pc.is_null(tagged[FILE_ID_COL]))
        counts = {
            r[PARTITION_PATH_COL]: r["count_all"]
            for r in inserts.group_by(PARTITION_PATH_COL).aggregate([([], "count_all")]).to_pylist()
        }
        settings = PackingSettings(
            small_file_limit=wc.small_file_limit,
            max_file_size=ctx.max_file_size,
            avg_record_size=wc.avg_record_size,
        )
        smalls = small_files(state, sorted(counts), settings.small_file_limit)
        buckets = assign_inserts(counts, smalls, settings, new_file_id)
        if over_limit(sum(1 for b in buckets if not b.is_new)):  # small files to rewrite
            return None
        take_small_files(buckets, smalls, ctx.existing, ctx.log_targets)
        tagged = assign_buckets(tagged, buckets)
    return write_groups(ctx, tagged, threads=threads)
