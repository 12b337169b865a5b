"""``repair_deduplicate``: remove duplicate record keys from one partition's latest base
files, with Hudi's parameters and output column (``RepairDeduplicateProcedure`` and
``org.apache.spark.sql.hudi.DedupeSparkJob`` in ``hudi-spark-datasource/hudi-spark``).

Parameters: ``table`` (or ``path``), ``duplicated_partition_path`` (the partition,
relative), ``repaired_output_path`` (a folder for the repaired files), ``dry_run``
(default true), ``dedupe_type`` (``insert_type``, the default, ``update_type`` or
``upsert_type``). One row ``(result)``: ``Deduplicated files placed in: <folder>.``, the
output folder in a dry run, else the partition, as in Hudi.

As ``DedupeSparkJob``: the partition's latest base files (completed commits; log files
are not read) are scanned for ``_hoodie_record_key`` values held more than once, and each
duplicate is dropped from some files by ``dedupe_type``:

* ``insert_type`` (duplicates inserted twice, never updated): every copy whose
  ``_hoodie_commit_time`` is not the latest of its copies;
* ``update_type`` (every copy updated since): all copies but the last;
* ``upsert_type``: the copies not of the latest commit, then all but the last of those
  that are.

A file loses every row of a key dropped from it. "Last" is in the order files are read
here, by file name then row (Hudi's is Spark's collect order). Every latest base file is
written to ``repaired_output_path`` under its own name (unchanged files copied, repaired
ones rewritten as Hudi base files, min/max keys and bloom filter included), and the
repaired set must hold each key exactly once and every key of the partition, else the
call fails (Hudi: "Still found some duplicates", "Some records in source are not found").

Hudi then copies the repaired files over the originals in place, leaving the commit
metadata (sizes, record counts) and the metadata table describing files that no longer
are as recorded. Here the repaired file groups are committed instead: one commit (a
deltacommit on merge-on-read tables) of operation ``DELETE`` writes each repaired file as
the next base file of its file group, rows unchanged but for ``_hoodie_file_name``
(write stats: the rows written, the copies dropped as deletes), so the timeline, the
metadata table and every reader stay exact; the older versions go with the next clean.
It runs as any write does (instant reserved, heartbeat, markers, conflict check under the
table lock; a failure rolls it back), reading the files after its instant is reserved, so
a concurrent write to the same file groups fails one of the two. A file group whose latest
slice has log files, or that a pending compaction or clustering plans to rewrite, is
refused by name (compact or cluster first), in a dry run too, and so is a
``repaired_output_path`` inside the table (the repaired files keep their names: written
there they would replace committed files in place).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.config.vocab import OP_DELETE, OPERATION_TYPES
from hudilite.filegroup.slices import FileSlice, join_path
from hudilite.index.bloom_index import bloom_config
from hudilite.schema import COMMIT_TIME_COL, FILE_NAME_COL, RECORD_KEY_COL
from hudilite.services._common import resolve_options, table_schema_json
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, make_write_token
from hudilite.storage.parquet_io import read_base_file, write_base_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT, DELTA_COMMIT
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.plans import pending_plan_groups
from hudilite.write.markers import create_marker
from hudilite.write.transaction import WriteTransaction, commit_metadata

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)
from .repair import partition_folders
from .repair_orphans import inside_table

INSERT_TYPE, UPDATE_TYPE, UPSERT_TYPE = "insert_type", "update_type", "upsert_type"
DEDUPE_TYPES = (INSERT_TYPE, UPDATE_TYPE, UPSERT_TYPE)


@dataclass(frozen=True)
class Repair:
    """The latest base files of the partition and what each must lose."""

    slices: tuple[FileSlice, ...]
    tables: dict[str, pa.Table]  # file id -> rows of its latest base file
    drop: dict[str, set[str]]  # file id -> keys to drop from it

    def repaired(self, file_id: str) -> pa.Table:
        """The rows of ``file_id``'s base file without the keys it must lose."""
        table = self.tables[file_id]
        keys = self.drop.get(file_id)
        if not keys:
            return table
        drop = pa.array(sorted(keys), pa.string())
        return table.filter(pc.invert(pc.is_in(table[RECORD_KEY_COL], value_set=drop)))


def plan_drops(copies: Mapping[str, Sequence[tuple[str, str]]], dedupe_type: str) -> dict:
    """``DedupeSparkJob.getDedupePlan``: ``key -> [(file id, commit time)]`` (read order)
    to ``file id -> keys to drop``."""
    drop: dict[str, set[str]] = {}
    for key, rows in copies.items():
        latest = max(int(c) for _, c in rows)
        if dedupe_type == UPDATE_TYPE:
            losers = rows[:-1]
        else:
            losers = [r for r in rows if int(r[1]) != latest]
            if dedupe_type == UPSERT_TYPE:
                losers += [r for r in rows if int(r[1]) == latest][:-1]
        for file_id, _ in losers:
            drop.setdefault(file_id, set()).add(key)
    return drop


def plan_repair(proc: str, state: TableState, partition: str, dedupe_type: str) -> Repair:
    """Read the partition's latest base files and plan the drops; refuses file groups
    whose rows a repair of the base file alone would not hold."""
    view = state.view
    slices = tuple(
        sorted(
            (s for s in view.latest_slices(partitions=[partition]) if s.base_file is not None),
            key=lambda s: s.base_file.file_name if s.base_file else "",
        )
    )
    tables: dict[str, pa.Table] = {}
    copies: dict[str, list[tuple[str, str]]] = {}
    for s in slices:
        assert s.base_file is not None
        table = read_base_file(state.gw, s.base_file.path)
        tables[s.file_id] = table
        keys = table[RECORD_KEY_COL].to_pylist()
        times = table[COMMIT_TIME_COL].to_pylist()
        for key, commit in zip(keys, times, strict=True):
            copies.setdefault(key, []).append((s.file_id, commit))
    dupes = {k: rows for k, rows in copies.items() if len(rows) > 1}
    drop = plan_drops(dupes, dedupe_type)
    busy = pending_plan_groups(state.timeline)
    for s in slices:
        if s.file_id not in drop:
            continue
        where = f"{partition or '<root>'}/{s.file_id}"
        if s.log_files:
            names = ", ".join(log.file_name for log in s.log_files)
            raise ProcedureError(
                f"{proc}: file group {where} has log files after its base file ({names}); "
                "compact the table first"
            )
        if s.group_key in busy:
            raise ProcedureError(
                f"{proc}: file group {where} is in the pending compaction or clustering "
                f"{busy[s.group_key][0]}; run or roll it back first"
            )
    return Repair(slices, tables, drop)


def check_repair(proc: str, repair: Repair) -> None:
    """Hudi's checks on the repaired set: each key once, no key lost."""
    before: set[str] = set()
    seen: dict[str, int] = {}
    for file_id, table in repair.tables.items():
        before.update(table[RECORD_KEY_COL].to_pylist())
        for key in repair.repaired(file_id)[RECORD_KEY_COL].to_pylist():
            seen[key] = seen.get(key, 0) + 1
    still = sorted(k for k, n in seen.items() if n > 1)
    if still:
        raise ProcedureError(
            f"{proc}: duplicates remain after the repair (keys {', '.join(still[:10])}): "
            "their copies share the latest commit time; try dedupe_type => 'upsert_type'"
        )
    lost = sorted(before - set(seen))
    if lost:
        raise ProcedureError(f"{proc}: the repair would lose keys {', '.join(lost[:10])}")


def write_output(state: TableState, repair: Repair, out: FileSystemGateway, bloom: Any) -> None:
    """Every latest base file into ``out`` under its own name, repaired where planned."""
    for s in repair.slices:
        assert s.base_file is not None
        name = s.base_file.file_name
        if s.file_id in repair.drop:
            write_base_file(out, name, repair.repaired(s.file_id), bloom=bloom)
        else:
            out.write_bytes(name, state.gw.read_bytes(s.base_file.path))


def _commit(proc: str, gw: FileSystemGateway, partition: str, args: Mapping[str, Any]) -> None:
    """The repaired file groups as a commit (see the module docstring)."""
    state = TableState.load(gw)
    action = DELTA_COMMIT if state.config.is_mor else COMMIT
    with WriteTransaction(gw, state.config, action) as txn:
        state = TableState.load(gw)  # after the reservation: see the module docstring
        repair = plan_repair(proc, state, partition, args["dedupe_type"])
        check_repair(proc, repair)
        bloom = bloom_config(resolve_options(state, None))
        txn.start_inflight()
        stats = [
            _rewrite(state, txn.instant_time, s, repair, bloom, i)
            for i, s in enumerate(repair.slices)
            if s.file_id in repair.drop
        ]
        if not stats:
            return  # a concurrent write removed the duplicates: the exit rolls back
        txn.commit(
            commit_metadata(
                state.config, table_schema_json(state), stats, OPERATION_TYPES[OP_DELETE]
            )
        )


def _rewrite(
    state: TableState, instant: str, s: FileSlice, repair: Repair, bloom: BloomConfig, task: int
) -> WriteStat:
    """The next base file of ``s``'s file group: its repaired rows."""
    assert s.base_file is not None
    rows = repair.repaired(s.file_id)
    name = BaseFileName(s.file_id, make_write_token(task, 0, 0), instant).render()
    rel = join_path(s.partition, name)
    index = rows.schema.get_field_index(FILE_NAME_COL)
    rows = rows.set_column(index, FILE_NAME_COL, pa.array([name] * rows.num_rows, pa.string()))
    create_marker(state.gw, instant, rel, "MERGE")
    size = write_base_file(state.gw, rel, rows, bloom=bloom)
    return WriteStat(
        file_id=s.file_id,
        path=rel,
        partition_path=s.partition,
        prev_commit=s.base_file.instant_time,
        prev_base_file=s.base_file.file_name,
        num_writes=rows.num_rows,
        num_deletes=repair.tables[s.file_id].num_rows - rows.num_rows,
        total_write_bytes=size,
        file_size_in_bytes=size,
    )


@procedure(
    "repair_deduplicate",
    [
        Param("table", "string"),
        Param("duplicated_partition_path", "string", required=True),
        Param("repaired_output_path", "string", required=True),
        Param("dry_run", "boolean", default=True),
        Param("dedupe_type", "string", default=INSERT_TYPE),
        Param("path", "string"),
    ],
    [Output("result")],
    "Removes duplicate record keys from a partition's latest base files (dry run by default).",
)
def repair_deduplicate(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row: ``Deduplicated files placed in: <folder>.``, the output folder in a dry
    run, else the partition (whose repaired file groups were committed)."""
    proc = ctx.procedure
    dedupe_type = str(args["dedupe_type"])
    if dedupe_type not in DEDUPE_TYPES:
        raise ProcedureArgumentError(
            f"{proc}: dedupe_type {dedupe_type!r} is not one of {', '.join(DEDUPE_TYPES)}"
        )
    gw = ctx.table(args).gw
    raw = str(args["duplicated_partition_path"])
    partition = raw.strip("/")
    if partition not in partition_folders(gw):
        raise ProcedureArgumentError(
            f"{proc}: duplicated_partition_path {raw!r} is not a partition folder of the table"
        )
    output = str(args["repaired_output_path"])
    if inside_table(gw, output):
        # The repaired files keep their names: inside the table they would replace
        # committed files in place (or look like files of a partition).
        raise ProcedureArgumentError(
            f"{proc}: repaired_output_path {output!r} is inside the table; give a folder outside it"
        )
    state = TableState.load(gw)
    repair = plan_repair(proc, state, partition, dedupe_type)
    out = FileSystemGateway(output)
    write_output(state, repair, out, bloom_config(resolve_options(state, None)))
    check_repair(proc, repair)
    if args["dry_run"]:
        return [(f"Deduplicated files placed in: {output}.",)]
    if repair.drop:
        _commit(proc, gw, partition, args)
    return [(f"Deduplicated files placed in: {raw}.",)]
