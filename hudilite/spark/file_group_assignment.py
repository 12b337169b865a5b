"""Which file group each record of a Spark write goes to, besides the index lookup.

Insert planning on the driver (:func:`plan_inserts`: small files, Hudi's record size
estimate, :func:`hudilite.write.assign.assign_inserts` over per-partition counts), the
assignment of inserts to the planned buckets in one pass over the records
(:func:`assign_file_groups`), and the bucket index, which computes every record's file group
(:func:`tag_buckets`). :class:`WritePlan` holds the write's per-partition key stats that
planning starts from. The driver sees only counts; records stay in executors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.index.bloom_index import IndexSettings
from hudilite.index.bucket import bucket_file_ids
from hudilite.schema import FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.services.compaction import log_base_instants
from hudilite.spark.bucket_expr import with_bucket_file_ids
from hudilite.storage.layout import new_file_id
from hudilite.tablestate.state import TableState
from hudilite.write.assign import (
    InsertBucket,
    PackingSettings,
    SmallFile,
    WritePlan,
    assign_inserts,
    small_files,
)
from hudilite.write.file_group_writer import ExistingFile, LogTarget, WriteContext

_FRACTION_MOD = 1_000_003  # prime modulus turning a key hash into a fraction of [0, 1)
# Insert buckets assigned by a CASE expression (no broadcast job); more use a broadcast join.
_ASSIGN_CASE_LIMIT = 256


def assign_file_groups(keyed: DataFrame, buckets: list[InsertBucket]) -> DataFrame:
    """Give each insert (row without a file id) its target file group.

    A key's hash, as a fraction of [0, 1), picks the bucket whose ``[lo, hi)`` holds it
    in its partition; an insert no bucket covers is dropped. One pass over ``keyed``
    (no union of located and new records, so the index result is read once): up to
    :data:`_ASSIGN_CASE_LIMIT` buckets a ``CASE`` expression, beyond a left join with the
    broadcast buckets (which costs a job of its own to build the broadcast).
    """
    if not buckets:
        return keyed
    frac = F.pmod(F.xxhash64(RECORD_KEY_COL), F.lit(_FRACTION_MOD)) / F.lit(float(_FRACTION_MOD))
    frame = keyed.withColumn("_b_frac", frac)
    if len(buckets) <= _ASSIGN_CASE_LIMIT:
        target: Column | None = None
        for b in buckets:
            covers = (
                (F.col(PARTITION_PATH_COL) == F.lit(b.partition_path))
                & (F.col("_b_frac") >= F.lit(b.lo))
                & (F.col("_b_frac") < F.lit(b.hi))
            )
            fid = F.lit(b.file_id)
            target = F.when(covers, fid) if target is None else target.when(covers, fid)
        assert target is not None
        assigned = frame.withColumn(FILE_ID_COL, F.coalesce(F.col(FILE_ID_COL), target))
    else:
        table = keyed.sparkSession.createDataFrame(
            [(b.partition_path, b.file_id, b.lo, b.hi) for b in buckets],
            "_b_pp string, _b_fid string, _b_lo double, _b_hi double",
        )
        # Only rows without a file id match (at most one bucket: the ranges are disjoint).
        joined = frame.join(
            F.broadcast(table),
            (frame[PARTITION_PATH_COL] == table["_b_pp"])
            & frame[FILE_ID_COL].isNull()
            & (frame["_b_frac"] >= table["_b_lo"])
            & (frame["_b_frac"] < table["_b_hi"]),
            "left",
        )
        assigned = joined.withColumn(
            FILE_ID_COL, F.coalesce(F.col(FILE_ID_COL), F.col("_b_fid"))
        ).drop("_b_pp", "_b_fid", "_b_lo", "_b_hi")
    return assigned.filter(F.col(FILE_ID_COL).isNotNull()).drop("_b_frac")


def plan_inserts(
    state: TableState,
    tagged: DataFrame,
    plan: WritePlan,
    settings: PackingSettings,
    looked_up: bool,
    index: IndexSettings,
) -> tuple[list[InsertBucket], dict[str, list[SmallFile]], DataFrame | None]:
    """Insert buckets, the small files they may name, and ``tagged`` persisted when the
    inserts had to be counted (the caller unpersists it); counts only when the answer
    could change the plan.

    Without an index lookup every kept record is an insert, so the key stats' ``kept``
    counts are the insert counts. After a lookup they bound them from above: when the
    bound already plans one target per partition, any smaller count plans the same
    target (the first small file with room for the bound has room for fewer; one new
    file group for the bound is one for fewer), so the counting job is skipped -- except
    where a target that would take no insert still changes the write: on merge-on-read a
    small file taking inserts is rewritten instead of logged, and a global index may move
    records between partitions.
    """
    bound = {p: n for p, n in plan.kept.items() if n > 0}
    smalls = small_files(state, sorted(bound), settings.small_file_limit)
    buckets = assign_inserts(bound, smalls, settings, new_file_id)
    if not looked_up:
        return buckets, smalls, None
    targets = Counter(b.partition_path for b in buckets)
    if (
        not index.is_global
        and all(n == 1 for n in targets.values())
        and (not state.config.is_mor or all(b.is_new for b in buckets))
    ):
        return buckets, smalls, None
    # Persisted: the count and the write both need the located records (one index
    # scan, not two).
    counted = tagged.persist()
    counts = (
        counted.filter(F.col(FILE_ID_COL).isNull()).groupBy(PARTITION_PATH_COL).count().collect()
    )
    insert_counts = {r[PARTITION_PATH_COL]: r["count"] for r in counts}
    smalls = small_files(state, sorted(insert_counts), settings.small_file_limit)
    return assign_inserts(insert_counts, smalls, settings, new_file_id), smalls, counted


def tag_buckets(
    state: TableState,
    ctx: WriteContext,
    keyed: DataFrame,
    plan: WritePlan,
    num_buckets: int,
    fields: Sequence[str],
) -> DataFrame:
    """Bucket index: the file group of every record is its key's bucket in its partition.

    Computed in the JVM (:mod:`hudilite.spark.bucket_expr`: Spark SQL expressions for Hudi's
    bucket hash, and the (partition, bucket) -> file id table as a literal or a broadcast
    join), so the records cross into Python once, for the write; the bucket index reads no
    base file.
    """
    if num_buckets <= 0:
        raise ConfigError(f"{cfg.BUCKET_NUM.name} must be positive, got {num_buckets}")
    partitions = sorted(plan.partitions)
    # File id of (partition i, bucket b) at i * num_buckets + b: an existing bucket's
    # group, else a new one. Every record's partition is one of the plan's (they were
    # counted from it); one that is not would be dropped.
    file_ids = bucket_file_ids(partitions, ctx.existing, num_buckets)
    return with_bucket_file_ids(keyed, partitions, file_ids, num_buckets, list(fields))


def latest_slices(
    state: TableState, partitions: list[str] | None
) -> tuple[dict[tuple[str, str], ExistingFile], dict[tuple[str, str], LogTarget]]:
    """Latest base files of the touched partitions and, for merge-on-read, where logs go."""
    slices = state.view.latest_slices(partitions=partitions)
    out = {}
    logs: dict[tuple[str, str], LogTarget] = {}
    compacting = (
        log_base_instants(state) if state.config.is_mor and state.config.table_version < 8 else {}
    )
    for s in slices:
        if s.base_file is not None:
            rel = (
                f"{s.partition}/{s.base_file.name.render()}"
                if s.partition
                else s.base_file.name.render()
            )
            out[(s.partition, s.file_id)] = ExistingFile(rel, s.base_file.name.instant_time)
        if state.config.is_mor:
            # v6: while compaction T is pending, new logs belong to the slice T opens (the
            # compaction only reads the logs in its plan); v8 attaches logs by completion time.
            base_instant = compacting.get((s.partition, s.file_id), s.base_instant)
            versions = [lf.version for lf in s.log_files if lf.instant_time == base_instant]
            own_base = s.base_file is not None and base_instant == s.base_instant
            logs[(s.partition, s.file_id)] = LogTarget(
                base_instant=base_instant,
                base_file_name=s.base_file.name.render() if own_base and s.base_file else None,
                next_version=max(versions, default=0) + 1,
            )
    return out, logs
