"""Dropping whole partitions: Hudi's DELETE_PARTITION operation, and TRUNCATE TABLE on top.

Hudi deletes a partition without touching its files: a ``replacecommit`` whose metadata
has ``operationType = DELETE_PARTITION`` and lists, in ``partitionToReplaceFileIds``, every
live file group of the partitions (``SparkDeletePartitionCommitActionExecutor``). It writes
no new files and no write stats. Every reader (ours, hudi-rs, Hudi on Spark) then drops
those file groups from snapshots -- the file-system view already hides replaced groups --
while time travel to an earlier instant still sees them, until the cleaner removes the
replaced files ("lazy" deletion).

The instant goes requested → inflight → completed through :class:`WriteTransaction`, so a
failure at any point leaves the table readable at its previous state (the pending instant
is rolled back), and a concurrent write to one of the replaced file groups is a conflict
for whichever of the two commits second. The requested file holds an Avro
``HoodieRequestedReplaceMetadata`` with the operation type, as Hudi writes it.

Like Hudi (``DeletePartitionUtils.checkForPendingTableServiceActions``), a partition
with a pending compaction or clustering plan is refused: the plan would rewrite file
groups that no longer exist.

``TRUNCATE TABLE`` here is the same operation over every partition (``""`` for a
non-partitioned table). Hudi's own whole-table TRUNCATE deletes the folder and re-creates
the table; a DELETE_PARTITION commit keeps history (time travel, rollback) and is atomic,
which is what Hudi does for ``TRUNCATE TABLE ... PARTITION``.

The result counts the rows dropped: base files' Parquet footers for slices without logs
(cheap and exact), and for merge-on-read slices with logs the merged rows, counted by a
pluggable ``count_merged`` (the Spark bridge counts them in executors; the default
merges them here with pyarrow).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from hudilite import config as cfg
from hudilite import failpoints
from hudilite.errors import ConfigError, ConflictError, PartitionNotFoundError
from hudilite.failpoints import FAIL_POINT_KEY
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import ScanPlan, plan_snapshot
from hudilite.schema import RECORD_KEY_COL
from hudilite.services._common import (
    OptionsLike,
    pending_plan_groups,
    resolve_options,
    table_schema_json,
)
from hudilite.storage.parquet_io import read_num_rows
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import REPLACE_COMMIT
from hudilite.timeline.metadata import write_avro_record
from hudilite.write.result import WriteResult
from hudilite.write.transaction import WriteTransaction, commit_metadata, inflight_content

#: Hudi's ``WriteOperationType`` of a partition delete, and hudilite's operation name.
DELETE_PARTITION = cfg.OPERATION_TYPES[cfg.OP_DELETE_PARTITION]
OPERATION = cfg.OP_DELETE_PARTITION
#: ``extraMetadata`` entry with the number of rows the commit dropped (Hudi has no field).
ROWS_DELETED_KEY = "hudilite.rows.deleted"
# Test hook shared with writes and compaction: raise at a named point before committing.

#: Counts the merged rows of a plan's merge-on-read slices (``plan.merge_slices``).
MergedRowCounter = Callable[[TableState, ScanPlan], int]


def resolve_partitions(state: TableState, partitions: Iterable[str] | str) -> list[str]:
    """The table's partition paths named by ``partitions``, sorted and de-duplicated.

    Paths are relative partition paths as stored (``city=sf``, ``2024/01/31``, ``""`` for
    a non-partitioned table); surrounding ``/`` are ignored. A partition the table does
    not have raises :class:`PartitionNotFoundError` naming it.
    """
    if isinstance(partitions, str):  # one path, not an iterable of characters
        partitions = [partitions]
    wanted = sorted({p.strip("/") for p in partitions})
    if not wanted:
        raise ConfigError("name at least one partition to delete")
    known = state.view.partitions()
    # A non-partitioned table's only partition is "", even before its first write.
    known_set = set(known) | ({""} if not state.config.is_partitioned else set())
    unknown = [p for p in wanted if p not in known_set]
    if unknown:
        shown = ", ".join(repr(p) for p in known[:10]) + (", ..." if len(known) > 10 else "")
        raise PartitionNotFoundError(
            f"partition(s) {', '.join(repr(p) for p in unknown)} not found in table "
            f"{state.config.name!r}; its partitions are: {shown or '(none)'}"
            f"{_hint(unknown[0], known)}"
        )
    return wanted


def _values_only(path: str) -> str:
    """``city=sf/day=1`` -> ``sf/1``: a partition path without hive-style field names."""
    return "/".join(part.split("=", 1)[-1] for part in path.split("/")).lower()


def _hint(name: str, known: list[str]) -> str:
    """Suggest the stored path when a partition was named with(out) hive-style field names."""
    matches = [p for p in known if _values_only(p) == _values_only(name)]
    return f" (did you mean {matches[0]!r}?)" if matches else ""


def live_file_groups(state: TableState, partitions: list[str]) -> dict[str, list[str]]:
    """Partition → file ids of its live (visible, not replaced) file groups."""
    out: dict[str, list[str]] = {p: [] for p in partitions}
    for file_slice in state.view.latest_slices(partitions=partitions):
        out[file_slice.partition].append(file_slice.file_id)
    return {p: sorted(ids) for p, ids in out.items() if ids}


def _check_no_pending_services(state: TableState, partitions: list[str]) -> None:
    """Refuse partitions that a pending compaction or clustering plan works on."""
    chosen = set(partitions)
    busy = sorted(
        (partition, instant)
        for (partition, _), (instant, _) in pending_plan_groups(state.timeline).items()
        if partition in chosen
    )
    if busy:
        partition, instant = busy[0]
        raise ConflictError(
            f"cannot delete partition {partition!r}: pending table service {instant} "
            "(compaction or clustering) plans to rewrite its file groups; run or roll it "
            "back first"
        )


def _merged_rows_in_process(state: TableState, plan: ScanPlan) -> int:
    """Default counter: merge the slices with logs here, reading only the record keys."""
    merged = read_plan_arrow(
        state.gw,
        plan,
        state.storage_schema,
        columns=[RECORD_KEY_COL],
        merge_spec=state.merge_spec(state.options()),
    )
    return merged.num_rows


def count_live_rows(
    state: TableState, partitions: list[str], count_merged: MergedRowCounter | None = None
) -> int:
    """Rows a snapshot read returns for ``partitions`` (what deleting them drops).

    Base files of slices without logs are counted from their footers, in threads; slices
    with logs need their logs merged and go to ``count_merged``.
    """
    plan = plan_snapshot(state.view, partitions=partitions)
    native = plan.native_paths
    total = 0
    if native:
        with ThreadPoolExecutor(max_workers=min(16, len(native))) as pool:
            total += sum(pool.map(lambda rel: read_num_rows(state.gw, rel), native))
    if plan.merge_slices:
        counter = count_merged or _merged_rows_in_process
        total += counter(state, dataclasses.replace(plan, native_paths=[]))
    return total


def _requested_content() -> bytes:
    record = {"operationType": DELETE_PARTITION, "extraMetadata": {}, "version": 1}
    return write_avro_record("HoodieRequestedReplaceMetadata", record)


def delete_partitions(
    state: TableState,
    partitions: Iterable[str] | str,
    options: OptionsLike = None,
    *,
    count_merged: MergedRowCounter | None = None,
) -> WriteResult:
    """Delete every row of ``partitions`` with one DELETE_PARTITION ``replacecommit``.

    Returns the instant's :class:`WriteResult`: ``num_deletes`` (= ``rows_deleted``) the
    rows dropped, ``replaced_file_groups`` the file groups replaced, ``partitions`` the
    partitions deleted; ``extra["replaced_file_ids"]`` maps partition → file ids. Raises
    :class:`PartitionNotFoundError` for a partition the table does not have and
    :class:`ConflictError` for partitions with pending compaction/clustering -- both
    before anything is written.
    """
    started = time.monotonic()
    opts = resolve_options(state, options)
    chosen = resolve_partitions(state, partitions)
    _check_no_pending_services(state, chosen)
    return _commit(state, opts, chosen, started, count_merged)


def truncate_table(
    state: TableState,
    options: OptionsLike = None,
    *,
    count_merged: MergedRowCounter | None = None,
) -> WriteResult:
    """Delete every row of the table: a DELETE_PARTITION of all its partitions."""
    started = time.monotonic()
    opts = resolve_options(state, options)
    chosen = state.view.partitions()
    _check_no_pending_services(state, chosen)
    return _commit(state, opts, chosen, started, count_merged, every_partition=True)


def _commit(
    state: TableState,
    opts: cfg.Options,
    partitions: list[str],
    started: float,
    count_merged: MergedRowCounter | None,
    *,
    every_partition: bool = False,
) -> WriteResult:
    with WriteTransaction(
        state.gw,
        state.config,
        REPLACE_COMMIT,
        heartbeat_interval_ms=int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)),
        tolerable_misses=int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES)),
        lock_options=opts,
        requested_content=_requested_content(),
    ) as txn:
        # Reloaded: entering the transaction may have rolled back failed writes, and the
        # file groups to replace are the ones live now, not when the call was made.
        state = TableState.load(state.gw)
        if every_partition:
            partitions = state.view.partitions()
        elif partitions:
            partitions = resolve_partitions(state, partitions)
        _check_no_pending_services(state, partitions)
        replaced = live_file_groups(state, partitions)
        txn.start_inflight(inflight_content(state.config, partitions, DELETE_PARTITION))
        rows = count_live_rows(state, sorted(replaced), count_merged) if replaced else 0
        failpoints.check(opts.raw.get(FAIL_POINT_KEY), "before_commit")
        metadata = commit_metadata(
            state.config,
            table_schema_json(state),
            [],
            DELETE_PARTITION,
            replaced,
            extra={ROWS_DELETED_KEY: str(rows)},
        )
        completed = txn.commit(metadata)
    return WriteResult(
        instant_time=completed.requested_time,
        operation=OPERATION,
        num_deletes=rows,
        partitions=tuple(partitions),
        replaced_file_groups=sum(len(ids) for ids in replaced.values()),
        rolled_back=tuple(r.rolled_back_instant for r in txn.rolled_back),
        completion_time=completed.completion_time,
        duration_s=time.monotonic() - started,
        extra={"replaced_file_ids": replaced},
    )
