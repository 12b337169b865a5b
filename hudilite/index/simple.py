"""Simple index: which base files may hold a batch's keys, pruned by footer key ranges.

The Spark job then reads ``_hoodie_record_key`` from the surviving files and
joins it with the incoming keys; this module only decides which files to
read, from each file's ``hoodie_min/max_record_key`` footer and the batch's
per-partition key range (both small, computed without touching table data).

Also what the Spark index job and the driver-side write share about where keys live:
:data:`LOCATION_SCHEMA` (``(key, partition, file id)`` rows), :class:`IndexMetrics` (what
an index lookup reports) and the keys of merge-on-read groups without a base file
(:func:`log_only_slices`, :func:`slice_locations`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudilite.config.vocab import GLOBAL_INDEX_PREFIX, INDEX_RECORD
from hudilite.filegroup.slices import FileSlice
from hudilite.merge import MergeSpec
from hudilite.read.file_group_reader import read_file_slice
from hudilite.schema import FILE_ID_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.virtual_keys import stored_record_keys

#: Where a record key lives: what an index reads from base files (and log-only groups).
LOCATION_SCHEMA = pa.schema(
    [(RECORD_KEY_COL, pa.string()), (PARTITION_PATH_COL, pa.string()), (FILE_ID_COL, pa.string())]
)


@dataclass
class IndexMetrics:
    """What the index did, for ``WriteResult.extra['index']``."""

    index_type: str
    is_global: bool
    files_in_scope: int = 0  # latest base files of the partitions the index searched
    files_after_range_pruning: int = 0
    files_read: int = 0  # files whose keys were read
    records_moved: int = 0  # global index: records moved to a new partition
    notes: dict[str, Any] = field(default_factory=dict)
    #: Whether stored keys were searched at all (False: no candidate file and no
    #: log-only group, so every record is new and no lookup job runs).
    looked_up: bool = False
    #: Spark frames the index cached; the caller unpersists them after the write.
    cached: list[Any] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            # RECORD_INDEX is global by nature: Hudi has no GLOBAL_ spelling of it
            "type": (
                GLOBAL_INDEX_PREFIX if self.is_global and self.index_type != INDEX_RECORD else ""
            )
            + self.index_type,
            "files_in_scope": self.files_in_scope,
            "files_after_range_pruning": self.files_after_range_pruning,
            "files_pruned_by_range": self.files_in_scope - self.files_after_range_pruning,
            "files_pruned_by_bloom": self.files_after_range_pruning - self.files_read,
            "files_read": self.files_read,
            "records_moved": self.records_moved,
        }


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


def log_only_slices(state: TableState, partitions: list[str] | None) -> list[FileSlice]:
    """Latest merge-on-read slices of ``partitions`` that have logs but no base file.

    Such groups (written by Hudi with an index that can route inserts to logs) hold keys no
    base file knows; in groups with a base file every logged key was routed there by this
    index, so their base keys suffice.
    """
    if not state.config.is_mor:
        return []
    return [
        s
        for s in state.view.latest_slices(partitions=partitions)
        if s.base_file is None and s.log_files
    ]


def slice_locations(
    gw: FileSystemGateway,
    file_slice: FileSlice,
    *,
    merge_spec: MergeSpec,
    schema: pa.Schema,
    is_instant_visible: Callable[[str], bool],
) -> pa.Table:
    """``(key, partition, file id)`` of the live records of one slice (merged)."""
    rows = read_file_slice(
        gw, file_slice, merge_spec=merge_spec, schema=schema, is_instant_visible=is_instant_visible
    )
    keys = stored_record_keys(rows, merge_spec.virtual_keys)
    n = len(keys)
    return pa.Table.from_arrays(
        [keys, pa.repeat(file_slice.partition, n), pa.repeat(file_slice.file_id, n)],
        schema=LOCATION_SCHEMA,
    )
