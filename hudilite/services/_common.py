"""Small helpers shared by the table services (compaction, clean, savepoint, rollback).

Nothing here decides policy; these are the timeline and plan chores every service
repeats: resolving options, creating or deleting one timeline file directly (savepoints
share their requested time with the commit they protect, which ``TimelineWriter`` would
refuse), reading the file groups named by pending compaction and clustering plans, and
the table's current Avro schema for commit metadata.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from hudilite.config import Options, TableConfig
from hudilite.errors import TimelineError
from hudilite.schema import arrow_to_avro_schema
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.table_state import TableState
from hudilite.timeline.instant import (
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

OptionsLike = Options | Mapping[str, Any] | None


def resolve_options(state: TableState, options: OptionsLike) -> Options:
    """Table properties and write defaults overlaid with the call's ``options``."""
    if isinstance(options, Options):
        return state.options(options.raw)
    return state.options({k: str(v) for k, v in (options or {}).items() if v is not None})


def partition_of(rel_path: str) -> str:
    """Partition path of a table-relative data file path (``""`` at the base path)."""
    return posixpath.dirname(rel_path)


def timeline_file(config: TableConfig, instant: Instant) -> str:
    """Table-relative path of ``instant``'s timeline file."""
    return join(config.timeline_dir, instant.file_name(config.layout_version))


def create_timeline_file(
    gw: FileSystemGateway, config: TableConfig, instant: Instant, content: bytes
) -> Instant:
    """Create the timeline file of ``instant`` exclusively (never overwrites)."""
    if not gw.create_exclusive(timeline_file(config, instant), content):
        raise TimelineError(f"{instant} already exists on the timeline")
    return instant


def delete_timeline_files(
    gw: FileSystemGateway,
    config: TableConfig,
    requested_time: str,
    actions: Iterable[str],
    states: Iterable[State] = (State.COMPLETED, State.INFLIGHT, State.REQUESTED),
) -> list[str]:
    """Delete the timeline files of ``requested_time`` for ``actions`` in ``states``.

    Files are deleted most advanced state first (completed, inflight, requested), so a
    concurrent reader never sees a later state without the earlier ones. Listing the
    folder finds v8 completed names (``T_C.action``) whose completion time is unknown.
    Returns the paths deleted.
    """
    wanted_actions = set(actions)
    wanted_states = set(states)
    found: list[Instant] = []
    for entry in gw.list_dir(config.timeline_dir):
        if entry.is_dir:
            continue
        inst = Instant.parse(entry.name, config.layout_version)
        if inst is None or inst.requested_time != requested_time:
            continue
        if inst.action in wanted_actions and inst.state in wanted_states:
            found.append(inst)
    deleted = []
    for inst in sorted(found, key=lambda i: -i.state.value):
        path = timeline_file(config, inst)
        if gw.delete_file(path):
            deleted.append(path)
    return deleted


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


def table_schema_json(state: TableState) -> str:
    """The Avro schema (JSON) of the data columns, as the latest commit recorded it (kept
    verbatim, so a schema written by Hudi stays byte-identical), else the create schema,
    else rendered from the Arrow schema."""
    for inst in reversed(state.timeline.commits()):
        schema = state.timeline.commit_metadata(inst).extra_metadata.get("schema")
        if schema:
            return schema
    if state.config.create_schema:
        return state.config.create_schema
    name = state.config.name
    avro = arrow_to_avro_schema(state.data_schema, f"{name}_record", f"hoodie.{name}")
    return json.dumps(avro, separators=(",", ":"))


def instant_info(instant: Instant) -> dict[str, str]:
    """A ``HoodieInstantInfo`` record (requested time and the action as on disk)."""
    return {"commitTime": instant.requested_time, "action": instant.action}
