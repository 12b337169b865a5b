"""Table version upgrades 6 -> 8 -> 9 and downgrades 9 -> 8 -> 6, as Hudi's
``SixToEightUpgradeHandler``, ``EightToNineUpgradeHandler``, ``NineToEightDowngradeHandler``
and ``EightToSixDowngradeHandler`` do them, one version step at a time (as Hudi's
``UpgradeDowngrade.run``: 6 -> 9 is 6 -> 8, then 8 -> 9).

Versions 8 and 9 share the timeline layout: a step between them changes only
``hoodie.properties`` and the index definitions (:mod:`hudilite.services.upgrade_nine`),
after the settling below. The rest of this page is the 6 <-> 8 step.

Every step first settles the table: failed writes (heartbeat expired) are rolled back;
a write still in flight makes the change fail (:class:`ConflictError`), and merge-on-read
tables are compacted completely -- pending plans run and a new plan covers every file
group with log files -- because version 6 names a log file after its slice's base instant
and version 8 after the delta commit that wrote it: no latest slice may keep logs across
the change.

Then, under the table lock:

* the timeline moves between ``.hoodie/`` (layout 1) and ``.hoodie/timeline/`` (layout 2).
  Upgrading, a completed ``T.action`` becomes ``T_C.action`` with C = the file's
  modification time (never before T), and a pending clustering ``replacecommit`` becomes a
  ``clustering``; downgrading, ``T_C.action`` becomes ``T.action`` with C as its
  modification time, and a pending ``clustering`` a ``replacecommit``. Commit metadata
  (commit and deltacommit files in every state, completed replacecommits) is converted
  JSON -> Avro or back; plans and other Avro contents are copied unchanged;
* the archived timeline is converted: v6 archive log entries become LSM timeline rows and
  back (entries the target already holds are skipped; Hudi leaves the old archive behind
  and so does hudilite);
* ``hoodie.properties`` gets the version's keys: ``hoodie.table.version``,
  ``hoodie.timeline.layout.version``, ``hoodie.timeline.path``/``history.path``,
  ``hoodie.table.initial.version=6``, ``hoodie.record.merge.mode`` (and strategy id) and
  ``hoodie.table.keygenerator.type`` on 8; the payload class and key generator class on 6;
  with the right checksum, rewritten by :func:`hudilite.tablestate.properties_file.store` (backup,
  write, read-back) like Hudi's ``HoodieTableConfig.update``;
* only then are the old-layout timeline files deleted, so a reader sees a complete
  timeline at every moment.

Writers must not run during the change (as in Hudi).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudilite import config as cfg
from hudilite.config import table_config
from hudilite.config.table_config import HISTORY_PATH_DEFAULT, HISTORY_PATH_KEY
from hudilite.errors import ConfigError, ConflictError, CorruptFileError, HudiliteError
from hudilite.services import archive_formats as fmt
from hudilite.services import upgrade_nine
from hudilite.services._common import OptionsLike, resolve_options
from hudilite.services.archive import (
    ARCHIVAL_BATCH,
    LSM_COMPACTION_BATCH,
    mtime_instant,
)
from hudilite.services.compaction import COMPACTION_TARGET_IO_MB, Runner, compact
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.log_format import write_log_file
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudilite.timeline.instant_time import instant_to_epoch_ms
from hudilite.timeline.metadata import CommitMetadata, read_avro_container, write_avro_record
from hudilite.write.lock import table_lock
from hudilite.write.rollback import rollback_failed_writes

#: Hudi's ``HoodieTableVersion`` constant names.
VERSION_NAMES = {
    n: i
    for i, n in enumerate(
        ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"]
    )
}
#: Hudi's ``PAYLOAD_BASED_MERGE_STRATEGY_UUID`` (CUSTOM merge mode with a payload class).
PAYLOAD_STRATEGY_ID = table_config.PAYLOAD_STRATEGY_ID
#: The versions hudilite changes between, in order; a change walks the steps between two.
VERSION_STEPS = (6, 8, 9)
_V6_DIR, _V8_DIR = ".hoodie", ".hoodie/timeline"
_PENDING_WRITES = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
_V8_ONLY_KEYS = (
    "hoodie.record.merge.mode",
    "hoodie.record.merge.strategy.id",
    "hoodie.table.initial.version",
    "hoodie.table.keygenerator.type",
    "hoodie.timeline.path",
    HISTORY_PATH_KEY,
)


@dataclass(frozen=True)
class VersionChangeResult:
    """What a version change did: the timeline files moved (``(old, new)`` paths), archived
    instants converted, failed writes rolled back and compactions run beforehand."""

    from_version: int
    to_version: int
    timeline_files: tuple[tuple[str, str], ...] = ()
    archived_instants_converted: int = 0
    rolled_back: tuple[str, ...] = ()
    compactions: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """False when the table already was at the requested version (a no-op, as in Hudi)."""
        return self.from_version != self.to_version


def parse_table_version(value: Any) -> int:
    """A table version from a number (``8``, ``"8"``) or Hudi's enum name (``"EIGHT"``);
    :class:`ConfigError` naming the value otherwise."""
    text = str(value).strip()
    if text.upper() in VERSION_NAMES:
        return VERSION_NAMES[text.upper()]
    if text.isdigit():
        return int(text)
    raise ConfigError(
        f"invalid table version {value!r}: use a number (6, 8, 9) or Hudi's name (SIX, EIGHT, NINE)"
    )


# -------------------------------------------------------------------------------- settle


def _settle(
    state: TableState, opts: cfg.Options, runner: Runner | None
) -> tuple[list[str], list[str]]:
    """Roll back failed writes; refuse live ones; compact a merge-on-read table fully."""
    interval = int(opts.get(cfg.HEARTBEAT_INTERVAL_MS))
    misses = int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES))
    # Hudi's EAGER failed-writes policy: every abandoned write, never a table service.
    rolled = [
        r.rolled_back_instant
        for r in rollback_failed_writes(
            state.gw,
            state.config,
            heartbeat_interval_ms=interval,
            tolerable_misses=misses,
            lock_options=opts,
        )
    ]
    state = TableState.load(state.gw)
    _refuse_live_writes(state)
    done: list[str] = []
    # Hudi's UnBoundedCompactionStrategy: one plan over every slice with logs. Pending
    # plans run too; logs a v6 writer added after such a plan (named after it) need a
    # second round, hence the loop (it ends once a round compacts nothing).
    unbounded = {**opts.raw, COMPACTION_TARGET_IO_MB.name: str(2**40)}
    while state.config.is_mor and len(done) < 10:
        results = compact(state, unbounded, schedule=True, force=True, runner=runner)
        done += [r.instant_time for r in results]
        state = TableState.load(state.gw)
        if not results or not any(sl.has_logs for sl in state.view.latest_slices()):
            break
    return rolled, done


def _refuse_live_writes(state: TableState) -> None:
    live = [i for i in state.timeline.pending() if i.action in _PENDING_WRITES]
    live = [i for i in live if not _is_clustering(state, i)]
    if live:
        raise ConflictError(
            f"cannot change the table version while write {live[0].requested_time} "
            f"({live[0].action}) is in flight; retry once it finished"
        )


def _is_clustering(state: TableState, inst: Instant) -> bool:
    """Whether a pending replacecommit is a clustering plan (not a write): layout 1 has no
    ``clustering`` action, its requested replace metadata tells."""
    if inst.action != REPLACE_COMMIT or not inst.is_pending:
        return False
    requested = Instant(inst.requested_time, REPLACE_COMMIT, State.REQUESTED)
    try:
        data = state.timeline.instant_content(requested)
        plan = fmt.decode_avro_as(data, "HoodieRequestedReplaceMetadata")
    except (HudiliteError, OSError, ValueError):
        return False
    if not plan:
        return False
    return plan.get("operationType") == cfg.CLUSTER_OPERATION or bool(plan.get("clusteringPlan"))


# ------------------------------------------------------------------------------ timeline


def _files(gw: FileSystemGateway, folder: str, layout: int) -> list[tuple[Instant, str]]:
    out = []
    for e in gw.list_dir(folder):
        inst = None if e.is_dir else Instant.parse(e.name, layout)
        if inst is not None:
            out.append((inst, join(folder, e.name)))
    return sorted(out, key=lambda p: p[0].sort_key())


def _commit_content(inst: Instant, data: bytes, layout: int) -> bytes:
    """Commit metadata re-encoded for ``layout`` (JSON for 1, Avro for 2); other contents
    are the same in both versions."""
    replace = inst.action in (REPLACE_COMMIT, CLUSTERING)
    convert = inst.action in (COMMIT, DELTA_COMMIT) or (replace and inst.is_completed)
    if not convert or not data.strip():
        return data
    try:
        meta = CommitMetadata.from_bytes(data)
    except CorruptFileError:
        if inst.is_completed:
            raise
        return data  # a pending write's scratch content: nothing reads it
    return meta.to_bytes(layout, replace=replace)


def _plan_moves(state: TableState, to_version: int) -> list[tuple[Instant, str, str, bytes]]:
    """``(target instant, old path, new path, new content)`` for every timeline file."""
    gw = state.gw
    moves = []
    if to_version >= 8:
        utc = state.config.timeline_utc
        clustering = {
            i.requested_time for i in state.timeline.pending() if _is_clustering(state, i)
        }
        for inst, path in _files(gw, _V6_DIR, 1):
            target = inst
            if inst.is_completed:
                done = max(mtime_instant(gw, path, utc), inst.requested_time)
                target = Instant(inst.requested_time, inst.action, State.COMPLETED, done)
            elif inst.action == REPLACE_COMMIT and inst.requested_time in clustering:
                target = Instant(inst.requested_time, CLUSTERING, inst.state)
            new = join(_V8_DIR, target.file_name(2))
            moves.append((target, path, new, _commit_content(inst, gw.read_bytes(path), 2)))
    else:
        for inst, path in _files(gw, _V8_DIR, 2):
            new = join(_V6_DIR, inst.file_name(1))
            moves.append((inst, path, new, _commit_content(inst, gw.read_bytes(path), 1)))
    return moves


def _set_mtime(gw: FileSystemGateway, path: str, instant: str, utc: bool) -> None:
    """Hudi 0.x reads a completed instant's transition time from its modification time:
    make it the v8 completion time (local filesystems; elsewhere it stays 'now')."""
    if not gw.is_local:
        return
    ms = instant_to_epoch_ms(instant, utc)
    os.utime(gw.abs_path(path), ns=(ms * 1_000_000, ms * 1_000_000))


# ------------------------------------------------------------------------------ archive


_PAYLOAD = {
    COMMIT: ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    DELTA_COMMIT: ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    REPLACE_COMMIT: ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    CLUSTERING: ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    CLEAN: ("hoodieCleanMetadata", "HoodieCleanMetadata"),
    ROLLBACK: ("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
    SAVEPOINT: ("hoodieSavePointMetadata", "HoodieSavepointMetadata"),
}


def _avro(name: str, record: Mapping[str, Any] | None, what: str) -> bytes | None:
    if record is None:
        return None
    try:
        return write_avro_record(name, record)
    except (ValueError, TypeError) as exc:
        raise CorruptFileError(f"archived {what}: cannot convert its {name}: {exc}") from exc


def legacy_group_to_lsm(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Every archived state of one instant (legacy entries) as one LSM timeline row, or
    None when the instant never completed."""
    done = next((e for e in entries if (e.get("actionState") or "COMPLETED") == "COMPLETED"), None)
    if done is None:
        return None
    action, time = str(done.get("actionType")), str(done.get("commitTime"))
    what = f"{time} {action}"
    field, name = _PAYLOAD.get(action, ("", ""))
    metadata = _avro(name, done.get(field), what) if field else None
    plan = None
    for e in entries:  # plan fields: pending states, or a completed entry converted from LSM
        if e.get("hoodieCleanerPlan") is not None:
            plan = _avro("HoodieCleanerPlan", e["hoodieCleanerPlan"], what)
        elif e.get("hoodieCompactionPlan") is not None:
            plan = _avro("HoodieCompactionPlan", e["hoodieCompactionPlan"], what)
        elif e.get("HoodieInflightReplaceMetadata") is not None:
            plan = _avro("HoodieCommitMetadata", e["HoodieInflightReplaceMetadata"], what)
        elif e.get("hoodieRequestedReplaceMetadata") is not None and plan is None:
            plan = _avro(
                "HoodieRequestedReplaceMetadata", e["hoodieRequestedReplaceMetadata"], what
            )
    return {
        "instantTime": time,
        "completionTime": done.get("stateTransitionTime") or time,
        "action": action,
        "metadata": metadata,
        "plan": plan,
        "version": 1,
    }


def lsm_to_legacy(row: Mapping[str, Any]) -> dict[str, Any]:
    """One LSM timeline row as a completed ``HoodieArchivedMetaEntry`` (Hudi 1.x's
    ``createMetaWrapper`` from an LSM record)."""
    action = str(row.get("action") or "")
    entry: dict[str, Any] = {
        "commitTime": row.get("instantTime"),
        "actionType": action,
        "actionState": State.COMPLETED.name,
        "stateTransitionTime": row.get("completionTime"),
        "version": 1,
    }
    metadata, plan = row.get("metadata") or b"", row.get("plan") or b""
    if action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING):
        replace = action in (REPLACE_COMMIT, CLUSTERING)
        entry[_PAYLOAD[action][0]] = fmt.commit_metadata_record(metadata, replace)
    elif action in _PAYLOAD:
        field, name = _PAYLOAD[action]
        entry[field] = fmt.decode_avro_as(metadata, name)
    if plan.strip():
        kind = read_avro_container(plan)[0].rsplit(".", 1)[-1] if plan.startswith(b"Obj") else ""
        target = {
            "HoodieCleanerPlan": "hoodieCleanerPlan",
            "HoodieCompactionPlan": "hoodieCompactionPlan",
            "HoodieRequestedReplaceMetadata": "hoodieRequestedReplaceMetadata",
        }.get(kind)
        if target is not None:
            entry[target] = fmt.decode_avro_as(plan, kind)
        elif action in (REPLACE_COMMIT, CLUSTERING):
            entry["HoodieInflightReplaceMetadata"] = fmt.commit_metadata_record(plan, False)
    return entry


def _convert_archive(state: TableState, to_version: int, opts: cfg.Options) -> int:
    """Copy the archived timeline into the target version's format; returns the instants
    converted."""
    gw = state.gw
    legacy_dir, history = state.config.legacy_archive_dir, state.config.history_dir
    batch = max(1, int(opts.get(ARCHIVAL_BATCH)))
    if to_version >= 8:
        have = {
            (r["instantTime"], fmt.comparable_action(r["action"]))
            for r in fmt.read_lsm_rows(gw, history)
        }
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for e in fmt.read_archive_entries(gw, legacy_dir):
            key = (str(e.get("commitTime")), fmt.comparable_action(str(e.get("actionType"))))
            if key not in have:
                groups.setdefault(key, []).append(e)
        rows = [r for k in sorted(groups) if (r := legacy_group_to_lsm(groups[k])) is not None]
        if rows:
            gw.mkdirs(history)
        for i in range(0, len(rows), batch):
            fmt.write_lsm_file(gw, history, rows[i : i + batch])
            fmt.compact_lsm(gw, history, int(opts.get(LSM_COMPACTION_BATCH)))
        return len(rows)
    have = {
        (str(e.get("commitTime")), fmt.comparable_action(str(e.get("actionType"))))
        for e in fmt.read_archive_entries(gw, legacy_dir)
    }
    rows = [
        r
        for r in fmt.read_lsm_rows(gw, history)
        if (r["instantTime"], fmt.comparable_action(r["action"])) not in have
    ]
    if not rows:
        return 0
    entries = [lsm_to_legacy(r) for r in rows]
    blocks = [
        fmt.encode_entries_block(entries[i : i + batch]) for i in range(0, len(entries), batch)
    ]
    gw.mkdirs(legacy_dir)
    write_log_file(gw, fmt.next_archive_file(gw, legacy_dir), blocks)
    return len(rows)


# ---------------------------------------------------------------------------- properties


def target_config(config: cfg.TableConfig, to_version: int) -> cfg.TableConfig:
    """The table config after the change (rendered with :meth:`TableConfig.to_properties`)."""
    props = dict(config.props)
    if to_version >= 8:
        props.setdefault("hoodie.table.initial.version", str(config.table_version))
        props["hoodie.timeline.path"] = "timeline"
        props.setdefault(HISTORY_PATH_KEY, HISTORY_PATH_DEFAULT)
        if config.merge_mode == cfg.CUSTOM_MERGE:
            props["hoodie.record.merge.strategy.id"] = PAYLOAD_STRATEGY_ID
        return dataclasses.replace(config, table_version=to_version, props=props)
    for key in _V8_ONLY_KEYS:
        props.pop(key, None)
    payload = config.payload_class or cfg.payload_for_merge_mode(config.merge_mode)
    if payload is None:
        raise ConfigError(
            f"cannot downgrade: merge mode {config.merge_mode} needs a payload class on table "
            "version 6 (set hoodie.compaction.payload.class)"
        )
    return dataclasses.replace(config, table_version=to_version, payload_class=payload, props=props)


def _write_properties(gw: FileSystemGateway, new: cfg.TableConfig) -> None:
    properties_file.store(gw, new.to_properties())


# ---------------------------------------------------------------------------------- entry


def change_table_version(
    state: TableState, to_version: Any, options: OptionsLike = None, *, runner: Runner | None = None
) -> VersionChangeResult:
    """Upgrade or downgrade the table to ``to_version`` (a number or Hudi's name), one step
    of 6 <-> 8 <-> 9 at a time; a no-op when it already is at that version. ``runner``
    executes the compaction of a merge-on-read table (default: in this process).

    Raises :class:`ConfigError` for other versions or a table the change cannot keep
    (see :mod:`hudilite.services.upgrade_nine`) and :class:`ConflictError` while a write is
    in flight.
    """
    target = parse_table_version(to_version)
    current = int(state.config.table_version)
    if target == current:
        return VersionChangeResult(current, target)
    if current not in VERSION_STEPS or target not in VERSION_STEPS:
        raise ConfigError(
            f"cannot change table version {current} to {target}: hudilite changes between "
            f"versions {', '.join(map(str, VERSION_STEPS))}"
        )
    opts = resolve_options(state, options)
    i, j = VERSION_STEPS.index(current), VERSION_STEPS.index(target)
    path = VERSION_STEPS[i : j + 1] if i < j else VERSION_STEPS[j : i + 1][::-1]
    moves: tuple[tuple[str, str], ...] = ()
    converted = 0
    rolled: list[str] = []
    compactions: list[str] = []
    for frm, to in itertools.pairwise(path):
        if {frm, to} == {8, 9}:
            step = _change_eight_nine(state, to, opts, runner)
        else:
            step = _change_layout(state, to, opts, runner)
        moves += step.timeline_files
        converted += step.archived_instants_converted
        rolled += step.rolled_back
        compactions += step.compactions
        state = TableState.load(state.gw)
    return VersionChangeResult(current, target, moves, converted, tuple(rolled), tuple(compactions))


def _change_eight_nine(
    state: TableState, target: int, opts: cfg.Options, runner: Runner | None
) -> VersionChangeResult:
    """One 8 -> 9 or 9 -> 8 step: settle, then (under the table lock) the handler's
    properties and index definitions."""
    current = int(state.config.table_version)
    change = upgrade_nine.upgrade_properties if target == 9 else upgrade_nine.downgrade_properties
    if current >= 9:
        state.config.check_writable()  # e.g. another table format: nothing to change here
    change(state.config.props, opts)  # refuse before settling writes anything
    rolled, compactions = _settle(state, opts, runner)
    gw = state.gw
    with table_lock(gw, opts):
        state = TableState.load(gw)
        _refuse_live_writes(state)
        props = dict(state.config.props)
        if target == 9:
            upgrade_nine.upgrade_index_defs(gw, props)
        else:
            upgrade_nine.downgrade_index_defs(gw, props)
        properties_file.store(gw, change(props, opts))
    return VersionChangeResult(current, target, (), 0, tuple(rolled), tuple(compactions))


def _change_layout(
    state: TableState, target: int, opts: cfg.Options, runner: Runner | None
) -> VersionChangeResult:
    """One 6 -> 8 or 8 -> 6 step (see the module docstring)."""
    current = int(state.config.table_version)
    rolled, compactions = _settle(state, opts, runner)
    gw = state.gw
    with table_lock(gw, opts):
        state = TableState.load(gw)
        _refuse_live_writes(state)
        moves = _plan_moves(state, target)
        dest = _V8_DIR if target >= 8 else _V6_DIR
        gw.mkdirs(dest)
        for _, stale in _files(gw, dest, 2 if target >= 8 else 1):
            gw.delete_file(stale)  # a copy left by an attempt that died before switching
        utc = state.config.timeline_utc
        for inst, _, new, content in moves:
            gw.write_bytes(new, content)
            if target < 8 and inst.is_completed and inst.completion_time:
                _set_mtime(gw, new, inst.completion_time, utc)
        legacy_dir, history = state.config.legacy_archive_dir, state.config.history_dir
        gw.mkdirs(history if target >= 8 else legacy_dir)  # Hudi creates the layout's folders
        converted = _convert_archive(state, target, opts)
        _write_properties(gw, target_config(state.config, target))
        for _, old, _, _ in moves:
            gw.delete_file(old)
    return VersionChangeResult(
        current,
        target,
        tuple((old, new) for _, old, new, _ in moves),
        converted,
        tuple(rolled),
        tuple(compactions),
    )


def upgrade_table(
    state: TableState,
    to_version: Any = 8,
    options: OptionsLike = None,
    *,
    runner: Runner | None = None,
) -> VersionChangeResult:
    """Upgrade to ``to_version`` (8 or 9; from 6 or 8); :class:`ConfigError` if that is
    lower."""
    target = parse_table_version(to_version)
    if target < state.config.table_version:
        raise ConfigError(
            f"cannot upgrade to version {target}: the table is at version "
            f"{state.config.table_version} (use downgrade)"
        )
    return change_table_version(state, target, options, runner=runner)


def downgrade_table(
    state: TableState,
    to_version: Any = 6,
    options: OptionsLike = None,
    *,
    runner: Runner | None = None,
) -> VersionChangeResult:
    """Downgrade to ``to_version`` (8 or 6; from 9 or 8); :class:`ConfigError` if that is
    higher."""
    target = parse_table_version(to_version)
    if target > state.config.table_version:
        raise ConfigError(
            f"cannot downgrade to version {target}: the table is at version "
            f"{state.config.table_version} (use upgrade)"
        )
    return change_table_version(state, target, options, runner=runner)


__all__ = [
    "VersionChangeResult",
    "change_table_version",
    "downgrade_table",
    "legacy_group_to_lsm",
    "lsm_to_legacy",
    "parse_table_version",
    "target_config",
    "upgrade_table",
]
