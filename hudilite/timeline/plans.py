"""Plans of pending table services: the one reader of ``<T>.<action>.requested`` plans.

Compaction, log compaction and clustering (and insert-overwrite replacecommits, whose
requested file is empty) write an Avro plan into their requested file
(``HoodieCompactionPlan`` / ``HoodieRequestedReplaceMetadata``). The file-system view,
the cleaner, the planners and partition drops all ask which file groups those plans name
through ``pending_plan_groups``, so they agree on it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudilite.timeline.metadata import read_avro_record
from hudilite.timeline.timeline import Timeline

#: Pending table services whose requested file holds a plan naming file groups.
PLAN_ACTIONS = frozenset({COMPACTION, LOG_COMPACTION, CLUSTERING, REPLACE_COMMIT})


def read_plan(timeline: Timeline, instant: Instant) -> dict[str, Any] | None:
    """The Avro plan in the requested file of a compaction/clustering instant, or None
    (no plan: an empty requested file, e.g. an insert-overwrite replacecommit)."""
    requested = Instant(instant.requested_time, instant.action, State.REQUESTED)
    try:
        data = timeline.instant_content(requested)
    except Exception:  # the requested file is gone: nothing to protect
        return None
    if not data.strip():
        return None
    try:
        return read_avro_record(data)
    except Exception:  # not an Avro plan (e.g. JSON commit metadata of a write)
        return None


def plan_file_groups(plan: Mapping[str, Any] | None) -> dict[tuple[str, str], str | None]:
    """``(partition, file_id) -> base instant`` of the file groups a compaction plan
    (``operations``) or clustering plan (``clusteringPlan.inputGroups[].slices``) names.
    The base instant is the slice the plan reads (None when the plan does not say)."""
    if not plan:
        return {}
    out: dict[tuple[str, str], str | None] = {}
    for op in plan.get("operations") or []:
        out[(op.get("partitionPath") or "", op["fileId"])] = op.get("baseInstantTime")
    clustering = plan.get("clusteringPlan") or {}
    for group in clustering.get("inputGroups") or []:
        for sl in group.get("slices") or []:
            key = (sl.get("partitionPath") or "", sl["fileId"])
            out[key] = _base_instant_of_slice(sl)
    return out


def _base_instant_of_slice(sl: Mapping[str, Any]) -> str | None:
    """Base instant of a ``HoodieSliceInfo`` (its base file's instant, else unknown)."""
    name = sl.get("dataFilePath") or ""
    stem = posixpath.basename(name).rsplit(".", 1)[0]
    parts = stem.split("_")
    if len(parts) >= 3 and parts[-1].isdigit():
        return parts[-1]
    return None


def pending_plan_groups(
    timeline: Timeline, actions: Iterable[str] = PLAN_ACTIONS
) -> dict[tuple[str, str], tuple[str, str | None]]:
    """File groups named by pending plans of ``actions``:
    ``(partition, file_id) -> (plan instant time, base instant read by the plan)``."""
    wanted = set(actions)
    out: dict[tuple[str, str], tuple[str, str | None]] = {}
    for inst in timeline.pending():
        if inst.action not in wanted:
            continue
        for key, base in plan_file_groups(read_plan(timeline, inst)).items():
            out.setdefault(key, (inst.requested_time, base))
    return out


def clean_bound(timeline: Timeline) -> str | None:
    """The earliest commit the last clean keeps: the one bound the savepoint check, the
    read planner's time-travel check and the Spark read use.

    The last clean of any state (Hudi's ``SavepointActionExecutor`` reads the clean
    timeline's last instant): a completed one's ``earliestCommitToRetain``, a pending one's
    plan ``earliestInstantToRetain`` (an inflight clean may have deleted files already).
    None without a clean, when the policy keeps no commit bound (file versions) or when the
    clean's content is unreadable (no evidence of a bound).
    """
    cleans = timeline.filter(actions=CLEAN)
    if not cleans:
        return None
    last = cleans[-1]
    try:
        if last.is_completed:
            record = read_avro_record(timeline.instant_content(last))
            return str(record.get("earliestCommitToRetain") or "") or None
        plan = read_avro_record(
            timeline.instant_content(Instant(last.requested_time, CLEAN, State.REQUESTED))
        )
    except Exception:  # unreadable clean content: no evidence of a bound
        return None
    return str((plan.get("earliestInstantToRetain") or {}).get("timestamp") or "") or None
