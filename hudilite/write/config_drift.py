"""A ``hoodie.properties`` edited against the table's data, refused before a write.

A user who edits ``.hoodie/hoodie.properties`` -- the record key fields, the partition
fields, the key generator, hive-style partitioning or the table type -- gets writes that
silently corrupt the table: upserts compute other keys (every row is stored twice),
records land in other folders, a copy-on-write writer ignores the log files a
merge-on-read writer left. Nothing in the properties file says it was edited (its
checksum covers only the table name), so the data is asked, cheaply, before every write
transaction reserves an instant (:func:`check_table_config`):

* **Keys and partitions** (tables with meta fields): one row of one base file a completed
  commit wrote -- ``_hoodie_record_key``, ``_hoodie_partition_path`` and the source
  columns -- is keyed again with the current key generator. A different key or partition
  path means the key configuration changed after that row was written. This works for
  tables Hudi wrote as well (the stored key is Hudi's own rendering, which
  :mod:`hudilite.keygen` reproduces byte for byte). Tables without meta fields store no
  key to compare with, and are not checked.
* **Table type**: converting merge-on-read to copy-on-write is only valid once every log
  file is compacted (Hudi's CLI ``table change-table-type COW`` runs pending compactions
  and a full compaction first, and refuses otherwise); copy-on-write to merge-on-read is a
  plain property change there, valid for any data, so it is never refused. So a
  ``COPY_ON_WRITE`` table is refused when a log file a completed delta commit wrote is
  still live -- no later base file (compaction, clustering, rewrite) or replace covers its
  file group -- or when a compaction plan is pending. Read from the timeline alone: a table
  without delta commits (every copy-on-write table hudilite wrote) reads no commit
  metadata for it.

One line names the property, its value in ``hoodie.properties`` and what the data says.
The verdict is cached per table and properties content, so a process checks a table once
until its properties change (the writes it makes follow the properties it checked).
"""

from __future__ import annotations

import logging
import posixpath
import threading
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from hudilite import config as cfg
from hudilite.config import TableConfig
from hudilite.errors import ConfigError, HudiliteError
from hudilite.keygen import KeyGenSpec, partition_paths, record_keys
from hudilite.schema import PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.timeline.instant import COMPACTION, DELTA_COMMIT, LOG_COMPACTION, Instant, State
from hudilite.timeline.timeline import Timeline

__all__ = ["TableConfigDriftError", "check_table_config", "clear_cache"]

log = logging.getLogger("hudilite.write")

_CHECKED: set[tuple[str, frozenset[tuple[str, str]]]] = set()
_CHECKED_LOCK = threading.Lock()


class TableConfigDriftError(ConfigError):
    """``hoodie.properties`` says something the table's data contradicts."""


def clear_cache() -> None:
    """Forget every verdict (tests that edit a table's properties in one process)."""
    with _CHECKED_LOCK:
        _CHECKED.clear()


def check_table_config(
    gw: FileSystemGateway, config: TableConfig, options: cfg.Options | None = None
) -> None:
    """Raise :class:`TableConfigDriftError` when ``config`` (the table's current
    ``hoodie.properties``) contradicts its data; see the module docstring."""
    mark = (gw.uri(""), frozenset(config.props.items()))
    with _CHECKED_LOCK:
        if mark in _CHECKED:
            return
    timeline = Timeline.load(gw, config)
    if not config.is_mor:
        _check_table_type(config, timeline)
    if config.populate_meta_fields:
        _check_keys(gw, config, timeline, options)
    with _CHECKED_LOCK:
        if len(_CHECKED) > 1000:  # a long-lived server: forget older tables' verdicts
            _CHECKED.clear()
        _CHECKED.add(mark)


def _stored_name(config: TableConfig, key: cfg.ConfigKey, fallback: str) -> str:
    """The spelling of ``key`` that ``hoodie.properties`` holds (else ``fallback``)."""
    present = {k.lower(): k for k in config.props}
    for name in key.all_names():
        if name.lower() in present:
            return present[name.lower()]
    return fallback


def _stored_value(config: TableConfig, name: str) -> str:
    return str(config.props.get(name, ""))


def _refuse(config: TableConfig, name: str, what: str) -> TableConfigDriftError:
    return TableConfigDriftError(
        f"hoodie.properties does not match the table's data: {name}="
        f"{_stored_value(config, name)!r} there, but {what}; restore the value the table "
        "was written with (a write now would corrupt the table)"
    )


# ---- table type ---------------------------------------------------------------------------


def _check_table_type(config: TableConfig, timeline: Timeline) -> None:
    name = _stored_name(config, cfg.TABLE_TYPE, "hoodie.table.type")
    pending = [i for i in timeline.pending() if i.action in (COMPACTION, LOG_COMPACTION)]
    if pending:
        raise _refuse(
            config,
            name,
            f"compaction {pending[0].requested_time} is pending (a merge-on-read table's "
            "plan; converting to copy-on-write compacts everything first)",
        )
    if not timeline.filter(DELTA_COMMIT, State.COMPLETED):
        return
    live: dict[tuple[str, str], tuple[str, str]] = {}
    for instant in _by_completion(timeline):
        metadata = timeline.commit_metadata(instant)
        if metadata is None:
            continue
        for partition, ids in metadata.partition_to_replace_file_ids.items():
            for file_id in ids:
                live.pop((partition or "", file_id), None)
        for partition, stats in metadata.partition_to_write_stats.items():
            for stat in stats:
                name_ = posixpath.basename(stat.path or "")
                group = (partition or "", stat.file_id or "")
                if LogFileName.parse(name_) is not None:
                    live[group] = (stat.path or "", instant.requested_time)
                elif BaseFileName.parse(name_) is not None:
                    live.pop(group, None)
    if live:
        path, instant_time = sorted(live.values())[0]
        raise _refuse(
            config,
            name,
            f"the live log file {path} of delta commit {instant_time} makes it a "
            f"MERGE_ON_READ table ({len(live)} file group(s) with logs; compact them before "
            "converting it to COPY_ON_WRITE)",
        )


def _by_completion(timeline: Timeline) -> list[Instant]:
    """The completed writes, compactions and replaces, in completion order."""
    return sorted(
        timeline.commits(),
        key=lambda i: timeline.completion_time(i.requested_time) or i.requested_time,
    )


# ---- record key and partition path --------------------------------------------------------


def _base_files(gw: FileSystemGateway, timeline: Timeline) -> Iterator[str]:
    """Base files completed commits wrote, newest commit first."""
    for instant in reversed(_by_completion(timeline)):
        metadata = timeline.commit_metadata(instant)
        if metadata is None:
            continue
        for stats in metadata.partition_to_write_stats.values():
            for stat in stats:
                if stat.path and BaseFileName.parse(posixpath.basename(stat.path)) is not None:
                    yield stat.path


def _first_row(gw: FileSystemGateway, rel_path: str, columns: list[str]) -> pa.Table | None:
    """The first row of ``columns`` (those the file has) of a base file; None when the
    file is gone or empty."""
    try:
        with gw.open_input_file(rel_path) as handle:
            reader = pq.ParquetFile(handle)
            have = [c for c in columns if c in reader.schema_arrow.names]
            for batch in reader.iter_batches(batch_size=1, columns=have):
                if batch.num_rows:
                    return pa.Table.from_batches([batch.slice(0, 1)])
    except (FileNotFoundError, OSError):
        return None
    return None


def _check_keys(
    gw: FileSystemGateway,
    config: TableConfig,
    timeline: Timeline,
    options: cfg.Options | None,
) -> None:
    key_fields = list(config.record_key_fields)
    part_fields = list(config.partition_field_names)
    if any("." in f for f in (*key_fields, *part_fields)):
        return  # nested fields: read through structs, not checked here
    columns = [RECORD_KEY_COL, PARTITION_PATH_COL, *dict.fromkeys(key_fields + part_fields)]
    row = None
    path = ""
    for path in _base_files(gw, timeline):
        row = _first_row(gw, path, columns)
        if row is not None:
            break
    if row is None or RECORD_KEY_COL not in row.column_names:
        return  # no data yet, or a file without meta fields
    stored_key = row[RECORD_KEY_COL][0].as_py()
    stored_path = (
        row[PARTITION_PATH_COL][0].as_py() if PARTITION_PATH_COL in row.column_names else None
    )
    if not stored_key:
        return  # Hudi's bulk insert of a virtual-key table leaves keys empty
    key_name = _stored_name(config, cfg.RECORDKEY_FIELDS, "hoodie.table.recordkey.fields")
    part_name = _stored_name(config, cfg.PARTITION_FIELDS, "hoodie.table.partition.fields")
    shown = gw.abs_path(path)
    missing = [f for f in (*key_fields, *part_fields) if f not in row.column_names]
    if missing:
        name = key_name if missing[0] in key_fields else part_name
        raise _refuse(
            config,
            name,
            f"the table's files have no column {missing[0]!r} ({shown} stores the row with "
            f"record key {stored_key!r})",
        )
    spec = KeyGenSpec.from_config(config, options)
    try:
        key = record_keys(spec, row)[0].as_py()
        part = partition_paths(spec, row)[0].as_py() if stored_path is not None else None
    except HudiliteError as exc:
        raise _refuse(
            config, key_name, f"the stored row with record key {stored_key!r} cannot be "
            f"keyed with it ({exc})"
        ) from exc  # fmt: skip
    if key != stored_key:
        name = key_name
        if _composite(stored_key, key_fields) != _composite(key, key_fields):
            name = _stored_name(config, cfg.KEYGEN_TYPE, "") or _stored_name(
                config, cfg.KEYGEN_CLASS, key_name
            )
        raise _refuse(
            config,
            name,
            f"it gives record key {key!r} to a row {shown} stores with record key {stored_key!r}",
        )
    if stored_path is not None and part != stored_path:
        name = part_name
        if _unhive(part) == _unhive(stored_path):
            name = _stored_name(config, cfg.HIVE_STYLE, part_name)
        elif not config.partition_fields or not stored_path:
            name = _stored_name(config, cfg.KEYGEN_TYPE, "") or part_name
        raise _refuse(
            config,
            name,
            f"it gives partition path {part!r} to the row with record key {stored_key!r}, "
            f"stored in partition {stored_path!r} ({shown})",
        )


def _composite(key: str, fields: list[str]) -> bool:
    """Whether a record key has the ``field:value`` form of the complex key generator."""
    return any(key.startswith(f"{f}:") or f",{f}:" in key for f in fields)


def _unhive(path: str | None) -> str:
    """A partition path without its ``field=`` prefixes."""
    return "/".join(s.split("=", 1)[-1] for s in (path or "").split("/"))
