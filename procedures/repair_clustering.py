"""``repair_clustering_plan``: drop files from a requested clustering plan, with Hudi's
parameters and output columns (``RepairClusteringPlanProcedure`` in
``hudi-spark-datasource/hudi-spark/.../command/procedures/``).

The plan is the requested file of a pending clustering that has not started
(``T.clustering.requested`` on version 8+, ``T.replacecommit.requested`` on version 6); an
instant that is not one, or that went inflight, is an error, as in Hudi. The candidates:

* ``op => 'delete'`` (the default when ``invalid_parquet_files`` is given): the
  comma-separated paths of ``invalid_parquet_files`` (trimmed, duplicates dropped), reason
  ``USER_REQUESTED``;
* ``op => 'validate_delete'`` or ``'checkanddelete'`` (the default otherwise): the plan's
  base files (``dataFilePath``) ending in ``.parquet`` whose footer cannot be read because
  the file is not Parquet (present but no footer magic, or too short), reason
  ``NOT_PARQUET_FILE``. Hudi checks them in ``validation_parallelism`` Spark tasks; here
  the footers are read in this process (a plan names few files), the parameter only
  checked to be positive.

Removing every slice of every input group is refused unless ``allow_empty_plan``. Rows
``(instant, path, action, deleted, reason)`` per candidate in the order found: a dry run
(the default) says ``WOULD_REMOVE_FROM_PLAN``; otherwise, under the table lock and against
the plan read again, ``REMOVED_FROM_PLAN`` or ``NOT_FOUND_IN_PLAN``. The plan is rewritten
as Hudi does: the slices dropped, then groups left without slices, the plan's own
``extraMetadata`` as the request's, after copying the old requested file (with ``backup``,
the default) to ``.hoodie/.repair/repair_clustering_plan/<instant>/<epoch ms>/``; if the
new file cannot be written the backup is put back. ``need_delete`` then deletes the removed
files (``deleted`` is true for each file that existed and was deleted). ``options`` (Hudi's
write-client settings, ``k=v,...``) are checked for form; no write client is needed here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite.config.vocab import CLUSTER_OPERATION
from hudilite.errors import HudiliteError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import CLUSTERING, REPLACE_COMMIT, Instant, State
from hudilite.timeline.metadata import read_avro_record, write_avro_record
from hudilite.timeline.timeline import Timeline, TimelineWriter
from hudilite.write.lock import table_lock

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    parse_options,
    procedure,
)

DELETE = "delete"
VALIDATE_DELETE = "validate_delete"
CHECK_AND_DELETE = "checkanddelete"
WOULD_REMOVE_FROM_PLAN = "WOULD_REMOVE_FROM_PLAN"
REMOVED_FROM_PLAN = "REMOVED_FROM_PLAN"
NOT_FOUND_IN_PLAN = "NOT_FOUND_IN_PLAN"
USER_REQUESTED = "USER_REQUESTED"
NOT_PARQUET_FILE = "NOT_PARQUET_FILE"
#: Where the old requested file is kept, under ``.hoodie``.
REPAIR_DIR = ".hoodie/.repair/repair_clustering_plan"


def requested_plan(proc: str, timeline: Timeline, instant_time: str) -> tuple[Instant, dict]:
    """The requested clustering ``instant_time`` and its decoded request, or an error."""
    inst = timeline.get(instant_time)
    record: dict[str, Any] | None = None
    if (
        inst is not None
        and inst.state is State.REQUESTED
        and inst.action
        in (
            CLUSTERING,
            REPLACE_COMMIT,
        )
    ):
        try:
            data = timeline.instant_content(inst)
            record = read_avro_record(data) if data.strip() else None
        except HudiliteError:
            record = None
    if (
        inst is None
        or record is None
        or record.get("operationType") != CLUSTER_OPERATION
        or not record.get("clusteringPlan")
    ):
        raise ProcedureError(
            f"{proc}: the requested clustering plan for instant {instant_time} does not "
            "exist (modifications of a started or completed clustering are not supported)"
        )
    return inst, record


def plan_files(record: Mapping[str, Any]) -> list[str]:
    """Every slice's ``dataFilePath`` in the plan, in plan order (empty ones left out)."""
    out = []
    for group in record["clusteringPlan"].get("inputGroups") or []:
        for sl in group.get("slices") or []:
            path = sl.get("dataFilePath")
            if path:
                out.append(str(path))
    return out


def retains_a_group(record: Mapping[str, Any], removed: set[str]) -> bool:
    """Whether some input group keeps a slice once ``removed`` are dropped."""
    return any(
        sl.get("dataFilePath") not in removed
        for group in record["clusteringPlan"].get("inputGroups") or []
        for sl in group.get("slices") or []
    )


def pruned_request(record: Mapping[str, Any], removed: set[str]) -> bytes:
    """The request without the slices of ``removed`` (and groups left empty), encoded as
    Hudi's ``rewriteRequestedClusteringPlan`` writes it."""
    plan = dict(record["clusteringPlan"])
    groups = []
    for group in plan.get("inputGroups") or []:
        slices = [sl for sl in group.get("slices") or [] if sl.get("dataFilePath") not in removed]
        if slices:
            groups.append({**group, "slices": slices})
    plan["inputGroups"] = groups
    return write_avro_record(
        "HoodieRequestedReplaceMetadata",
        {
            "operationType": CLUSTER_OPERATION,
            "clusteringPlan": plan,
            "extraMetadata": dict(plan.get("extraMetadata") or {}),
            "version": record.get("version") or 1,
        },
    )


def _not_parquet(gw: FileSystemGateway, path: str) -> bool:
    """Whether the file at ``path`` (a URI or path) exists but is not Parquet."""
    if not path.endswith(".parquet"):
        return False
    try:
        with gw.filesystem.open_input_file(_fs_path(gw, path)) as f:
            pq.ParquetFile(f).metadata  # noqa: B018 - reading the footer is the check
    except pa.ArrowInvalid:
        return True  # no footer magic, or too short for a footer: not a Parquet file
    except OSError:
        return False  # missing or unreadable: Hudi only counts "is not a Parquet file"
    return False


def _fs_path(gw: FileSystemGateway, path: str) -> str:
    """``path`` (a table file as plans hold it: ``file:///...``, ``file:/...``, a bare
    absolute path or the store's URI) as a path of ``gw``'s filesystem."""
    for prefix in (gw.uri(""), "file:" + gw.abs_path(""), gw.abs_path("")):
        if path.startswith(prefix.rstrip("/") + "/"):
            return gw.abs_path(path[len(prefix.rstrip("/")) + 1 :])
    return path


def _candidates(proc: str, args: Mapping[str, Any], record: Mapping[str, Any], gw: Any) -> list:
    files_arg = str(args["invalid_parquet_files"] or "")
    op = str(args["op"] or "").strip() or (DELETE if files_arg.strip() else VALIDATE_DELETE)
    op = op.lower()
    if op == DELETE:
        if not files_arg.strip():
            raise ProcedureArgumentError(
                f"{proc}: set the files to remove from the clustering plan with "
                "invalid_parquet_files"
            )
        wanted = [p.strip() for p in files_arg.split(",") if p.strip()]
        return [(p, USER_REQUESTED) for p in dict.fromkeys(wanted)]
    if op in (VALIDATE_DELETE, CHECK_AND_DELETE):
        return [(p, NOT_PARQUET_FILE) for p in plan_files(record) if _not_parquet(gw, p)]
    raise ProcedureArgumentError(
        f"{proc}: unsupported operation {op!r}; supported operations: delete, "
        "validate_delete, checkanddelete"
    )


@procedure(
    "repair_clustering_plan",
    [
        Param("table", "string"),
        Param("path", "string"),
        Param("instant", "string", required=True),
        Param("op", "string"),
        Param("invalid_parquet_files", "string", default=""),
        Param("validation_parallelism", "integer", default=100),
        Param("need_delete", "boolean", default=False),
        Param("dry_run", "boolean", default=True),
        Param("backup", "boolean", default=True),
        Param("allow_empty_plan", "boolean", default=False),
        Param("options", "string", default=""),
    ],
    [
        Output("instant"),
        Output("path"),
        Output("action"),
        Output("deleted", "boolean"),
        Output("reason"),
    ],
    "Removes invalid or named files from a requested clustering plan (dry run by default).",
)
def repair_clustering_plan(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row ``(instant, path, action, deleted, reason)`` per candidate file, in the
    order found: ``WOULD_REMOVE_FROM_PLAN`` (dry run), ``REMOVED_FROM_PLAN`` or
    ``NOT_FOUND_IN_PLAN``; ``deleted`` when ``need_delete`` deleted the file."""
    proc = ctx.procedure
    if args["validation_parallelism"] < 1:
        raise ProcedureArgumentError(
            f"{proc}: validation_parallelism must be at least 1, "
            f"got {args['validation_parallelism']}"
        )
    parse_options(args["options"])
    t = str(args["instant"]).strip()
    state = ctx.table(args).state()
    _, record = requested_plan(proc, state.timeline, t)
    candidates = _candidates(proc, args, record, state.gw)
    if not candidates:
        return []
    paths = {p for p, _ in candidates}
    if not args["allow_empty_plan"] and not retains_a_group(record, paths):
        raise ProcedureError(_empty_message(proc, t))
    if args["dry_run"]:
        return [(t, p, WOULD_REMOVE_FROM_PLAN, False, why) for p, why in candidates]
    repaired = _rewrite(proc, state, t, paths, args["allow_empty_plan"], args["backup"])
    deleted: dict[str, bool] = {}
    if args["need_delete"]:
        for p in sorted(repaired):
            fs_path = _fs_path(state.gw, p)
            try:
                state.gw.filesystem.delete_file(fs_path)
                deleted[p] = True
            except FileNotFoundError:
                deleted[p] = False
    return [
        (
            t,
            p,
            REMOVED_FROM_PLAN if p in repaired else NOT_FOUND_IN_PLAN,
            deleted.get(p, False),
            why,
        )
        for p, why in candidates
    ]


def _empty_message(proc: str, t: str) -> str:
    return (
        f"{proc}: repairing clustering instant {t} would remove all input groups; "
        "set allow_empty_plan => true to allow it"
    )


def _rewrite(
    proc: str, state: TableState, t: str, paths: set[str], allow_empty: bool, backup: bool
) -> set[str]:
    """Under the table lock, against the plan read again: drop ``paths`` from it; returns
    the paths it named."""
    gw, config = state.gw, state.config
    with table_lock(gw):
        fresh = Timeline.load(gw, config)
        inst, record = requested_plan(proc, fresh, t)
        remove = paths & set(plan_files(record))
        if not remove:
            return set()
        if not allow_empty and not retains_a_group(record, remove):
            raise ProcedureError(_empty_message(proc, t))
        content = pruned_request(record, remove)
        name = fresh.file_name(inst)
        old = fresh.instant_content(inst)
        saved = f"{REPAIR_DIR}/{t}/{time.time_ns() // 1_000_000}/{name}"
        if backup:
            gw.write_bytes(saved, old)
        writer = TimelineWriter(gw, config)
        writer.delete_files(t, (inst.action,), (State.REQUESTED,))
        try:
            writer.create_file(inst, content)
        except Exception:
            # Put the old plan back rather than leave the instant without one.
            writer.create_file(inst, old)
            raise
    return remove
