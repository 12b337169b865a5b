"""Simple index: which base files may hold a batch's keys, pruned by footer key ranges.

The Spark job then reads ``_hoodie_record_key`` from the surviving files and
joins it with the incoming keys; this module only decides which files to
read, from each file's ``hoodie_min/max_record_key`` footer and the batch's
per-partition key range (both small, computed without touching table data).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor


def overlaps(file_range: tuple[str, str] | None, batch_range: tuple[str, str]) -> bool:
    """Whether a file whose keys span ``file_range`` may hold a key in ``batch_range``.

    A file without footer keys (written by a tool that omits them) always may.
    """
    if file_range is None:
        return True
    lo, hi = file_range
    return not (hi < batch_range[0] or lo > batch_range[1])


def candidate_files(
    files: Iterable[tuple[str, str]],
    batch_ranges: Mapping[str, tuple[str, str]],
    key_range_of: Callable[[str], tuple[str, str] | None],
    *,
    threads: int = 8,
) -> list[str]:
    """The ``(partition, rel_path)`` files whose key range meets their partition's batch range.

    Footers are read in parallel threads: on object stores each is a round trip.
    """
    wanted = [(p, rel) for p, rel in files if p in batch_ranges]

    def keep(item: tuple[str, str]) -> bool:
        partition, rel = item
        return overlaps(key_range_of(rel), batch_ranges[partition])

    with ThreadPoolExecutor(max_workers=threads) as pool:
        flags = list(pool.map(keep, wanted))
    return [rel for (_, rel), flag in zip(wanted, flags, strict=True) if flag]
