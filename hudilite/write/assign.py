"""File-group assignment of inserts: small-file packing first, then new file groups.

Runs on the driver over per-partition insert counts (a few numbers per
partition, never table data). The result is a list of :class:`InsertBucket`
ranges over ``[0, 1)``; each incoming insert is hashed to a fraction in that
interval and lands in the bucket whose range holds it, which spreads inserts
over file groups in proportion to their free capacity, as Hudi's
``UpsertPartitioner`` does.

Both the Spark write and the driver-side write plan from here: :class:`WritePlan` (the
key stats), :func:`small_files`, :func:`avg_record_size` (Hudi's record size estimate),
:func:`assign_inserts` and :func:`take_small_files`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hudilite import config as cfg
from hudilite.storage.layout import BaseFileName, parse_data_file_name
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.write.write_context import ExistingFile, LogTarget


@dataclass
class WritePlan:
    """Driver-side facts about one write (all small)."""

    partitions: dict[str, int]  # partition path -> incoming record count
    key_ranges: dict[str, tuple[str, str]]
    # partition path -> incoming records that are not deletes: the most inserts it can
    # receive (exactly its inserts when the index finds no stored key).
    kept: dict[str, int]


@dataclass(frozen=True)
class SmallFile:
    """A latest base file below the small-file limit that can take more inserts."""

    partition_path: str
    file_id: str
    rel_path: str
    instant_time: str
    size_bytes: int


@dataclass(frozen=True)
class InsertBucket:
    """One target file group for inserts and its share ``[lo, hi)`` of a partition's inserts."""

    partition_path: str
    file_id: str
    lo: float
    hi: float
    is_new: bool
    capacity: int


@dataclass(frozen=True)
class PackingSettings:
    """The sizes that drive packing (``hoodie.parquet.*`` and the record size estimate)."""

    small_file_limit: int
    max_file_size: int
    avg_record_size: int

    @property
    def records_per_file(self) -> int:
        """How many records fill a new file group."""
        return max(1, self.max_file_size // max(1, self.avg_record_size))


def assign_inserts(
    insert_counts: Mapping[str, int],
    small_files: Mapping[str, Sequence[SmallFile]],
    settings: PackingSettings,
    new_file_id: Callable[[], str],
) -> list[InsertBucket]:
    """Plan the target file groups for the inserts of each partition.

    Small files are filled first (up to ``max_file_size`` by the average
    record size); what remains goes to new file groups of at most
    ``records_per_file`` records each. A small-file limit of 0 disables packing.
    """
    buckets: list[InsertBucket] = []
    for partition, count in sorted(insert_counts.items()):
        if count <= 0:
            continue
        targets: list[tuple[str, int, bool]] = []  # (file_id, capacity, is_new)
        remaining = count
        if settings.small_file_limit > 0:
            for small in sorted(small_files.get(partition, ()), key=lambda s: s.size_bytes):
                if remaining <= 0:
                    break
                if small.size_bytes >= settings.small_file_limit:
                    continue
                room = (settings.max_file_size - small.size_bytes) // max(
                    1, settings.avg_record_size
                )
                take = min(remaining, int(room))
                if take > 0:
                    targets.append((small.file_id, take, False))
                    remaining -= take
        if remaining > 0:
            per_file = settings.records_per_file
            n_new = math.ceil(remaining / per_file)
            # Spread evenly rather than one full file plus a sliver.
            base, extra = divmod(remaining, n_new)
            for i in range(n_new):
                targets.append((new_file_id(), base + (1 if i < extra else 0), True))
        total = sum(cap for _, cap, _ in targets)
        lo = 0.0
        for i, (file_id, cap, is_new) in enumerate(targets):
            hi = 1.0 if i == len(targets) - 1 else lo + cap / total
            buckets.append(InsertBucket(partition, file_id, lo, hi, is_new, cap))
            lo = hi
    return buckets


def average_record_size(
    commit_stats: Sequence[tuple[int, int]], default: int, *, threshold: int = 1024
) -> int:
    """Estimate bytes per record from recent commits' (bytes written, records written),
    newest first, as Hudi's ``AverageRecordSizeEstimator`` does: the first commit that wrote
    more than ``threshold`` bytes (Hudi: ``hoodie.record.size.estimation.threshold`` times
    the small-file limit) gives ``ceil(bytes / records)``; with none, ``default``.

    A small commit is skipped because its files are mostly fixed cost (footer, bloom
    filter): estimating from it would make every later file group far too small.
    """
    for total_bytes, records in commit_stats:
        if records > 0 and total_bytes > threshold:
            return max(1, math.ceil(total_bytes / records))
    return default


def small_files(state: TableState, partitions: list[str], limit: int) -> dict[str, list[SmallFile]]:
    """The latest base files of ``partitions`` below ``limit`` bytes, as candidates for
    inserts (none when ``limit`` is not positive)."""
    out: dict[str, list[SmallFile]] = {}
    if limit <= 0:
        return out
    for p in partitions:
        for bf in state.view.small_files(p, limit):
            name = bf.name.render()
            rel = f"{p}/{name}" if p else name
            out.setdefault(p, []).append(
                SmallFile(p, bf.name.file_id, rel, bf.name.instant_time, bf.size)
            )
    return out


@dataclass(frozen=True)
class RecordSizeSettings:
    """Hudi's record size estimator options (``hoodie.copyonwrite.record.size.estimate``
    and the ``hoodie.record.size.estimation.*`` keys), read once per write."""

    estimate: int
    max_commits: int
    metadata_size: int
    threshold: int  # bytes a commit must have written to count

    @classmethod
    def from_options(cls, opts: cfg.Options) -> RecordSizeSettings:
        """The settings under ``opts``."""
        threshold = float(opts.get(cfg.RECORD_SIZE_ESTIMATION_THRESHOLD)) * int(
            opts.get(cfg.SMALL_FILE_LIMIT)
        )
        return cls(
            estimate=int(opts.get(cfg.RECORD_SIZE_ESTIMATE)),
            max_commits=int(opts.get(cfg.RECORD_SIZE_ESTIMATOR_MAX_COMMITS)),
            metadata_size=int(opts.get(cfg.RECORD_SIZE_ESTIMATOR_METADATA_SIZE)),
            threshold=int(threshold),
        )


def avg_record_size(state: TableState, sizes: RecordSizeSettings) -> int:
    """Hudi's record size estimate: recent commits, deltacommits (base files only) and
    compactions, newest first; clustering's replacecommits are left out (their files are
    denser than what writers produce). Called once per write, by
    :class:`hudilite.write.write_config.WriteConfig`."""
    recent = [i for i in state.timeline.commits() if i.action in (COMMIT, DELTA_COMMIT)]
    samples = []
    for instant in reversed(recent[-sizes.max_commits :]):
        meta = state.timeline.commit_metadata(instant)
        stats = [s for ss in meta.partition_to_write_stats.values() for s in ss]
        if instant.action == DELTA_COMMIT:
            stats = [
                s
                for s in stats
                if s.path
                and isinstance(parse_data_file_name(s.path.rsplit("/", 1)[-1]), BaseFileName)
            ]
        written = sum(s.total_write_bytes - sizes.metadata_size for s in stats)
        samples.append((written, sum(s.num_writes for s in stats)))
    return average_record_size(samples, sizes.estimate, threshold=sizes.threshold)


def take_small_files(
    buckets: Sequence[InsertBucket],
    smalls: Mapping[str, Sequence[SmallFile]],
    existing: dict[tuple[str, str], ExistingFile],
    log_targets: dict[tuple[str, str], LogTarget],
) -> None:
    """Make every small base file that takes inserts a file group the write rewrites.

    Its base file joins ``existing`` (the merge reads it) and it leaves ``log_targets``:
    a small file taking inserts is rewritten (it has no logs), as Hudi's merge-on-read
    writer does when its index cannot find keys in logs.
    """
    for b in buckets:
        if not b.is_new:
            sf = next(s for s in smalls[b.partition_path] if s.file_id == b.file_id)
            existing[(b.partition_path, b.file_id)] = ExistingFile(sf.rel_path, sf.instant_time)
            log_targets.pop((b.partition_path, b.file_id), None)


#: A write task of small file groups takes about this many records at most.
RECORDS_PER_LIGHT_TASK = 200_000


def write_tasks(groups: int, records: int, rewrites: bool, parallelism: int) -> int:
    """How many tasks write ``groups`` file groups of ``records`` records in all.

    One per group (up to 4096) when the write rewrites base files (copy-on-write merges,
    small files taking inserts): each group is a file's worth of work. Otherwise (log
    appends, new files of the batch's inserts) groups share tasks, four per core or one per
    :data:`RECORDS_PER_LIGHT_TASK` records, whichever is more: every task costs a round trip
    to a Python worker, which for a group of a few hundred log records is most of its write
    (a merge-on-read upsert of 100,000 records into 80 file groups: 80 tasks of that)."""
    cap = min(groups, 4096)
    if rewrites:
        return cap
    return min(cap, max(4 * parallelism, math.ceil(records / RECORDS_PER_LIGHT_TASK)))
