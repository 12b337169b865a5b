"""On-disk formats of Hudi's archived timeline, for both table versions.

* **Table version 6** (Hudi 0.x, timeline layout 1): Hudi log files
  ``.hoodie/archived/.commits_.archive.<n>_<writeToken>`` holding AVRO_DATA blocks whose
  records are ``HoodieArchivedMetaEntry`` -- one record per archived instant *state*
  (requested, inflight, completed), the instant's content decoded into the matching
  union field (``hoodieCommitMetadata``, ``hoodieCleanMetadata``, ...). The block header
  carries only the SCHEMA key, as Hudi's archiver writes it. Hudi appends to the latest
  file where the filesystem allows; like Hudi on object stores, hudilite writes the next
  version instead.
* **Table version 8** (Hudi 1.x, layout 2): the LSM timeline in
  ``.hoodie/timeline/history/``: Parquet files ``<min>_<max>_<level>.parquet`` of
  ``HoodieLSMTimelineInstant`` rows (``instantTime``, ``completionTime``, ``action``,
  ``metadata`` = bytes of the completed instant file, ``plan`` = bytes of its plan,
  ``version``), a JSON ``manifest_<n>`` per snapshot listing the live files and a
  ``_version_`` file naming the latest manifest. Level-0 files are merged into the next
  level once ``hoodie.timeline.compaction.batch.size`` (10) of them exist.

:class:`ArchivedInstant` is the common, decoded view used by readers of both.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudilite.errors import CorruptFileError
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.log_format import BlockType, HeaderKey, LogBlock, read_log_file
from hudilite.timeline.instant import (
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    State,
)
from hudilite.timeline.metadata import AVRO_MAGIC, AVRO_NAMESPACE, CommitMetadata, avro_schema

# ----------------------------------------------------------------------------- schemas

_NS = AVRO_NAMESPACE + "."
_NULL_DEFAULT = {"default": None}
# Not in hudilite's own schema set (nothing else writes them); copied from apache/hudi.
_COMPACTION_METADATA = {
    "type": "record",
    "name": _NS + "HoodieCompactionMetadata",
    "fields": [
        {
            "name": "partitionToCompactionWriteStats",
            "type": [
                "null",
                {
                    "type": "map",
                    "values": {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": _NS + "HoodieCompactionWriteStat",
                            "fields": [
                                {"name": "partitionPath", "type": ["null", "string"]},
                                {"name": "totalLogRecords", "type": ["null", "long"]},
                                {"name": "totalLogFiles", "type": ["null", "long"]},
                                {"name": "totalUpdatedRecordsCompacted", "type": ["null", "long"]},
                                {
                                    "name": "hoodieWriteStat",
                                    "type": ["null", _NS + "HoodieWriteStat"],
                                },
                            ],
                        },
                    },
                },
            ],
        }
    ],
}
_INDEX_COMMIT_METADATA = {
    "type": "record",
    "name": _NS + "HoodieIndexCommitMetadata",
    "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], **_NULL_DEFAULT},
        {
            "name": "indexPartitionInfos",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": _NS + "HoodieIndexPartitionInfo",
                        "fields": [
                            {"name": "version", "type": ["int", "null"], "default": 1},
                            {
                                "name": "metadataPartitionPath",
                                "type": ["null", "string"],
                                **_NULL_DEFAULT,
                            },
                            {
                                "name": "indexUptoInstant",
                                "type": ["null", _NS + "HoodieInstantInfo"],
                                **_NULL_DEFAULT,
                            },
                        ],
                    },
                },
            ],
            **_NULL_DEFAULT,
        },
    ],
}

#: ``HoodieArchivedMetaEntry`` payload field -> schema of the record it holds.
PAYLOAD_FIELDS: dict[str, str] = {
    "hoodieCommitMetadata": "HoodieCommitMetadata",
    "hoodieCleanMetadata": "HoodieCleanMetadata",
    "hoodieRollbackMetadata": "HoodieRollbackMetadata",
    "hoodieSavePointMetadata": "HoodieSavepointMetadata",
    "hoodieCompactionPlan": "HoodieCompactionPlan",
    "hoodieCleanerPlan": "HoodieCleanerPlan",
    "hoodieReplaceCommitMetadata": "HoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata": "HoodieRequestedReplaceMetadata",
    "HoodieInflightReplaceMetadata": "HoodieCommitMetadata",
}


def _dedupe_names(schema: Any, seen: set[str]) -> Any:
    """Keep the first definition of every named type; later ones become references
    (each payload schema is self-contained, so shared types would be defined twice)."""
    if isinstance(schema, list):
        return [_dedupe_names(s, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind in ("record", "enum", "fixed", "error"):
        if schema["name"] in seen:
            return schema["name"]
        seen.add(schema["name"])
        out = dict(schema)
        if "fields" in out:
            out["fields"] = [{**f, "type": _dedupe_names(f["type"], seen)} for f in out["fields"]]
        return out
    if kind == "array":
        return {**schema, "items": _dedupe_names(schema["items"], seen)}
    if kind == "map":
        return {**schema, "values": _dedupe_names(schema["values"], seen)}
    return (
        {**schema, "type": _dedupe_names(kind, seen)} if isinstance(kind, dict | list) else schema
    )


@functools.cache
def _entry_schema() -> dict[str, Any]:
    def opt(name: str, schema: Any) -> dict[str, Any]:
        return {"name": name, "type": ["null", schema], "default": None}

    fields = [
        opt("hoodieCommitMetadata", avro_schema("HoodieCommitMetadata")),
        opt("hoodieCleanMetadata", avro_schema("HoodieCleanMetadata")),
        opt("hoodieCompactionMetadata", _COMPACTION_METADATA),
        opt("hoodieRollbackMetadata", avro_schema("HoodieRollbackMetadata")),
        opt("hoodieSavePointMetadata", avro_schema("HoodieSavepointMetadata")),
        opt("commitTime", "string"),
        opt("actionType", "string"),
        {"name": "version", "type": ["int", "null"], "default": 1},
        opt("hoodieCompactionPlan", avro_schema("HoodieCompactionPlan")),
        opt("hoodieCleanerPlan", avro_schema("HoodieCleanerPlan")),
        opt("actionState", "string"),
        opt("hoodieReplaceCommitMetadata", avro_schema("HoodieReplaceCommitMetadata")),
        opt("hoodieRequestedReplaceMetadata", avro_schema("HoodieRequestedReplaceMetadata")),
        opt("HoodieInflightReplaceMetadata", _NS + "HoodieCommitMetadata"),
        opt("hoodieIndexCommitMetadata", _INDEX_COMMIT_METADATA),
        opt("stateTransitionTime", "string"),
    ]
    schema = {"type": "record", "name": _NS + "HoodieArchivedMetaEntry", "fields": fields}
    result: dict[str, Any] = _dedupe_names(schema, set())
    return result


def archived_entry_schema() -> dict[str, Any]:
    """The self-contained ``HoodieArchivedMetaEntry`` schema (Hudi 1.x field set)."""
    return copy.deepcopy(_entry_schema())


@functools.cache
def _parsed_entry_schema() -> Any:
    return fastavro.parse_schema(archived_entry_schema())


LSM_INSTANT_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieLSMTimelineInstant",
    "namespace": AVRO_NAMESPACE,
    "fields": [
        {"name": "instantTime", "type": ["null", "string"], "default": None},
        {"name": "completionTime", "type": ["null", "string"], "default": None},
        {"name": "action", "type": ["null", "string"], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1},
    ],
}
#: The Parquet layout parquet-avro gives ``HoodieLSMTimelineInstant``.
LSM_ARROW_SCHEMA = pa.schema(
    [
        pa.field("instantTime", pa.string()),
        pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()),
        pa.field("metadata", pa.binary()),
        pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ]
)


def decode_avro_as(data: bytes, schema_name: str) -> dict[str, Any] | None:
    """An instant file's Avro record resolved to hudilite's ``schema_name`` (fields the
    writer lacked take defaults, extra ones are dropped); None for empty content."""
    if not data.strip():
        return None
    if not data.startswith(AVRO_MAGIC):
        raise CorruptFileError(f"expected an Avro {schema_name} container")
    reader = fastavro.reader(io.BytesIO(data), reader_schema=avro_schema(schema_name))
    records = list(reader)
    if len(records) != 1 or not isinstance(records[0], dict):
        raise CorruptFileError(f"expected one {schema_name} record, found {len(records)}")
    return records[0]


def commit_metadata_record(data: bytes, replace: bool) -> dict[str, Any]:
    """JSON (v6) or Avro (v8) commit metadata as an Avro ``HoodieCommitMetadata`` (or
    ``HoodieReplaceCommitMetadata``) record; empty content gives empty metadata."""
    meta = CommitMetadata.from_bytes(data)
    name = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
    record = decode_avro_as(meta.to_avro_bytes(replace=replace), name)
    assert record is not None
    return record


# --------------------------------------------------------------------- decoded instants


@dataclass(frozen=True)
class ArchivedInstant:
    """One instant of the archived timeline (legacy entries: one per state).

    ``action`` is the action as the timeline names it (a completed compaction is a
    ``commit``); ``metadata`` the decoded content of the instant in this state (commit,
    clean, rollback or savepoint metadata), ``plan`` its plan (compaction, clean or
    requested replace metadata), each an Avro record as a dict, or None.
    """

    requested_time: str
    action: str
    state: State
    completion_time: str | None = None
    metadata: Mapping[str, Any] | None = None
    plan: Mapping[str, Any] | None = None

    @property
    def is_completed(self) -> bool:
        """True for a completed instant."""
        return self.state is State.COMPLETED

    def commit_metadata(self) -> CommitMetadata | None:
        """The commit metadata of a write action, else None."""
        if self.action not in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING):
            return None
        return CommitMetadata.from_dict(self.metadata) if self.metadata is not None else None


_COMPARABLE = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}


def comparable_action(action: str) -> str:
    """Hudi's ``getComparableAction``: the action a pending table service completes as."""
    return _COMPARABLE.get(action, action)


# ------------------------------------------------------------- v6: archive log files

ARCHIVE_FILE_PREFIX = ".commits_.archive."
ARCHIVE_WRITE_TOKEN = "1-0-1"  # Hudi's UNKNOWN_WRITE_TOKEN, what its archiver writes
_ARCHIVE_NAME = re.compile(r"^\.commits_\.archive\.(\d+)(?:_[0-9-]+)?$")
_I32 = struct.Struct(">i")
_AVRO_BLOCK_VERSION = 3


def archive_file_versions(gw: FileSystemGateway, archive_dir: str) -> list[tuple[int, str]]:
    """``(version, name)`` of every archive log file in ``archive_dir``, by version."""
    try:
        entries = gw.list_dir(archive_dir)
    except (FileNotFoundError, OSError):
        return []
    out = []
    for e in entries:
        m = _ARCHIVE_NAME.match(e.name)
        if m and not e.is_dir:
            out.append((int(m.group(1)), e.name))
    return sorted(out)


def next_archive_file(gw: FileSystemGateway, archive_dir: str) -> str:
    """Table-relative path of the next archive log file version."""
    versions = archive_file_versions(gw, archive_dir)
    n = versions[-1][0] + 1 if versions else 1
    return join(archive_dir, f"{ARCHIVE_FILE_PREFIX}{n}_{ARCHIVE_WRITE_TOKEN}")


def encode_entries_block(entries: Sequence[Mapping[str, Any]]) -> LogBlock:
    """An AVRO_DATA block of ``HoodieArchivedMetaEntry`` records (header: SCHEMA only)."""
    parsed = _parsed_entry_schema()
    parts = [_I32.pack(_AVRO_BLOCK_VERSION), _I32.pack(len(entries))]
    for entry in entries:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, dict(entry), strict_allow_default=True)
        parts += [_I32.pack(buf.tell()), buf.getvalue()]
    schema_json = json.dumps(archived_entry_schema(), separators=(",", ":"))
    return LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: schema_json}, b"".join(parts))


def decode_entries_block(block: LogBlock) -> list[dict[str, Any]]:
    """The records of an archive data block, resolved to hudilite's entry schema when the
    writer's schema allows (so payloads re-encode), else as written."""
    if block.block_type != BlockType.AVRO_DATA or not block.schema:
        return []
    writer = fastavro.parse_schema(json.loads(block.schema))
    try:
        return _read_records(block.content, writer, archived_entry_schema())
    except Exception:  # a schema fastavro cannot resolve to ours: keep it as written
        return _read_records(block.content, writer, None)


def _read_records(content: bytes, writer: Any, reader: Any) -> list[dict[str, Any]]:
    buf = io.BytesIO(content)
    version = _I32.unpack(buf.read(4))[0]
    count = _I32.unpack(buf.read(4))[0]
    out = []
    for _ in range(count):
        if version >= _AVRO_BLOCK_VERSION:  # each record is length-prefixed since v3
            size = _I32.unpack(buf.read(4))[0]
            record = fastavro.schemaless_reader(io.BytesIO(buf.read(size)), writer, reader)
        else:
            record = fastavro.schemaless_reader(buf, writer, reader)
        out.append(dict(record))  # type: ignore[arg-type]
    return out


def read_archive_entries(gw: FileSystemGateway, archive_dir: str) -> list[dict[str, Any]]:
    """Every ``HoodieArchivedMetaEntry`` of the v6 archive, file by file, block by block."""
    out: list[dict[str, Any]] = []
    for _, name in archive_file_versions(gw, archive_dir):
        for block in read_log_file(gw, join(archive_dir, name)):
            out.extend(decode_entries_block(block))
    return out


def entry_to_instant(entry: Mapping[str, Any]) -> ArchivedInstant:
    """The decoded view of one legacy entry (no ``actionState``: completed, as in old Hudi)."""
    action = str(entry.get("actionType") or "")
    state = State[str(entry.get("actionState") or "COMPLETED").upper()]
    metadata: Any = None
    plan: Any = None
    if action in (COMMIT, DELTA_COMMIT):
        metadata = entry.get("hoodieCommitMetadata")
    elif action in (REPLACE_COMMIT, CLUSTERING):
        metadata = entry.get("hoodieReplaceCommitMetadata") or entry.get(
            "HoodieInflightReplaceMetadata"
        )
        plan = entry.get("hoodieRequestedReplaceMetadata")
    elif action == "clean":
        metadata, plan = entry.get("hoodieCleanMetadata"), entry.get("hoodieCleanerPlan")
    elif action == "rollback":
        metadata = entry.get("hoodieRollbackMetadata")
    elif action == "savepoint":
        metadata = entry.get("hoodieSavePointMetadata")
    if action in (COMMIT, COMPACTION, LOG_COMPACTION):
        plan = entry.get("hoodieCompactionPlan")
    return ArchivedInstant(
        requested_time=str(entry.get("commitTime") or ""),
        action=action,
        state=state,
        completion_time=(entry.get("stateTransitionTime") or None)
        if state.name == "COMPLETED"
        else None,
        metadata=metadata,
        plan=plan,
    )


# ------------------------------------------------------------------ v8: LSM timeline

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST_NAME = re.compile(r"^manifest_(\d+)$")
_LSM_FILE = re.compile(r"^(\d+)_(\d+)_(\d+)\.parquet$")
#: Hudi keeps this many manifest versions (with their files) when cleaning the LSM tree.
MANIFEST_VERSIONS_RETAINED = 3


@dataclass(frozen=True)
class LsmFile:
    """One live file of an LSM timeline snapshot (a manifest entry)."""

    name: str
    size: int

    @property
    def level(self) -> int:
        """The LSM level in the file name (0 = freshly archived)."""
        m = _LSM_FILE.match(self.name)
        return int(m.group(3)) if m else 0


def lsm_versions(gw: FileSystemGateway, history_dir: str) -> list[int]:
    """Every manifest version present, ascending."""
    try:
        names = [e.name for e in gw.list_dir(history_dir) if not e.is_dir]
    except (FileNotFoundError, OSError):
        return []
    return sorted(int(m.group(1)) for n in names if (m := _MANIFEST_NAME.match(n)))


def latest_lsm_version(gw: FileSystemGateway, history_dir: str) -> int:
    """The ``_version_`` file's number, else the highest manifest; -1 when there is none."""
    path = join(history_dir, VERSION_FILE)
    if gw.exists(path):
        try:
            return int(gw.read_bytes(path).decode().strip())
        except ValueError:
            pass  # a torn version file: fall back to listing, as Hudi does
    versions = lsm_versions(gw, history_dir)
    return versions[-1] if versions else -1


def read_manifest(
    gw: FileSystemGateway, history_dir: str, version: int | None = None
) -> list[LsmFile]:
    """The live files of snapshot ``version`` (default: the latest)."""
    v = latest_lsm_version(gw, history_dir) if version is None else version
    if v < 0:
        return []
    text = gw.read_bytes(join(history_dir, f"{MANIFEST_PREFIX}{v}")).decode("utf-8")
    doc = json.loads(text) if text.strip() else {}
    return [LsmFile(f["fileName"], int(f.get("fileLen") or 0)) for f in doc.get("files") or []]


def render_manifest(files: Iterable[LsmFile]) -> str:
    """A manifest as Jackson's default pretty printer writes it."""
    items = [
        f'{{\n    "fileName" : {json.dumps(f.name)},\n    "fileLen" : {f.size}\n  }}' for f in files
    ]
    body = "[ " + ", ".join(items) + " ]" if items else "[ ]"
    return '{\n  "files" : ' + body + "\n}"


def update_manifest(
    gw: FileSystemGateway, history_dir: str, remove: Iterable[str], add: str
) -> int:
    """Write the next snapshot: the latest files minus ``remove`` plus ``add``; then point
    ``_version_`` at it. Returns the new version."""
    current = latest_lsm_version(gw, history_dir)
    dropped = set(remove)
    files = [f for f in read_manifest(gw, history_dir, current) if f.name not in dropped]
    files.append(LsmFile(add, gw.size(join(history_dir, add))))
    version = current + 1 if current >= 0 else 1
    manifest = join(history_dir, f"{MANIFEST_PREFIX}{version}")
    gw.delete_file(manifest)  # a leftover of a write that died before its version file
    gw.write_bytes(manifest, render_manifest(files).encode("utf-8"))
    gw.delete_file(join(history_dir, VERSION_FILE))
    gw.write_bytes(join(history_dir, VERSION_FILE), str(version).encode("utf-8"))
    return version


def _write_parquet(gw: FileSystemGateway, path: str, rows: pa.Table) -> None:
    """One LSM file with parquet-avro's footer keys (the Avro schema), as Hudi writes it."""
    table = rows.cast(LSM_ARROW_SCHEMA).replace_schema_metadata(None)
    with (
        gw.open_output_stream(path) as out,
        pq.ParquetWriter(out, LSM_ARROW_SCHEMA, compression="snappy", store_schema=False) as w,
    ):
        w.write_table(table)
        w.add_key_value_metadata(
            {"parquet.avro.schema": json.dumps(LSM_INSTANT_SCHEMA), "writer.model.name": "avro"}
        )


def lsm_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """``HoodieLSMTimelineInstant`` rows (dicts) as an Arrow table in the file layout."""
    cols = {f.name: [r.get(f.name) for r in rows] for f in LSM_ARROW_SCHEMA}
    cols["version"] = [int(r.get("version") or 1) for r in rows]
    return pa.table(cols, schema=LSM_ARROW_SCHEMA)


def write_lsm_file(
    gw: FileSystemGateway, history_dir: str, rows: Sequence[Mapping[str, Any]]
) -> str | None:
    """Write ``rows`` (sorted by instant time) as a level-0 file and add it to a new
    manifest; returns its name, or None when the same file is already committed."""
    name = f"{rows[0]['instantTime']}_{rows[-1]['instantTime']}_0.parquet"
    path = join(history_dir, name)
    if gw.exists(path):
        if any(f.name == name for f in read_manifest(gw, history_dir)):
            return None  # an earlier run archived these and died before deleting them
        gw.delete_file(path)  # a torn file of a failed write
    _write_parquet(gw, path, lsm_table(rows))
    update_manifest(gw, history_dir, (), name)
    return name


def compact_lsm(gw: FileSystemGateway, history_dir: str, batch_size: int = 10) -> list[str]:
    """Hudi's ``compactAndClean``: while a level holds ``batch_size`` files, merge its
    oldest ``batch_size`` into one file of the next level; then delete snapshots (and the
    files only they list) beyond the latest 3. Returns the files written."""
    written = []
    level = 0
    while True:
        files = sorted(
            (f for f in read_manifest(gw, history_dir) if f.level == level), key=lambda f: f.name
        )
        if batch_size < 2 or len(files) < batch_size:
            break
        chosen = [f.name for f in files[:batch_size]]
        lows = [_LSM_FILE.match(n).group(1) for n in chosen]  # type: ignore[union-attr]
        highs = [_LSM_FILE.match(n).group(2) for n in chosen]  # type: ignore[union-attr]
        name = f"{min(lows)}_{max(highs)}_{level + 1}.parquet"
        merged = pa.concat_tables(
            [pq.read_table(gw.open_input_file(join(history_dir, n))) for n in chosen]
        )
        gw.delete_file(join(history_dir, name))
        _write_parquet(gw, join(history_dir, name), merged.select(LSM_ARROW_SCHEMA.names))
        update_manifest(gw, history_dir, chosen, name)
        written.append(name)
        level += 1
    # As Hudi: after every archival, keep the latest snapshots (one more per compaction).
    _clean_lsm(gw, history_dir, MANIFEST_VERSIONS_RETAINED + len(written))
    return written


def _clean_lsm(gw: FileSystemGateway, history_dir: str, keep: int) -> None:
    """Delete manifests older than the ``keep`` latest, then data files none of those list."""
    versions = lsm_versions(gw, history_dir)
    if len(versions) <= keep:
        return
    kept = versions[-keep:]
    live = {f.name for v in kept for f in read_manifest(gw, history_dir, v)}
    for v in versions[:-keep]:
        gw.delete_file(join(history_dir, f"{MANIFEST_PREFIX}{v}"))
    for e in gw.list_dir(history_dir):
        if _LSM_FILE.match(e.name) and e.name not in live:
            gw.delete_file(join(history_dir, e.name))


def read_lsm_rows(gw: FileSystemGateway, history_dir: str) -> list[dict[str, Any]]:
    """Every ``HoodieLSMTimelineInstant`` row of the latest snapshot, by instant time."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for f in sorted(read_manifest(gw, history_dir), key=lambda f: (-f.level, f.name)):
        table = pq.read_table(gw.open_input_file(join(history_dir, f.name)))
        for row in table.to_pylist():
            rows[(str(row.get("instantTime")), str(row.get("action")))] = row
    return [rows[k] for k in sorted(rows)]


def _decode_content(data: bytes | None) -> dict[str, Any] | None:
    """An instant file's bytes (Avro container, or JSON for commit metadata) as a dict."""
    if not data or not data.strip():
        return None
    if data.startswith(AVRO_MAGIC):
        records = list(fastavro.reader(io.BytesIO(data)))
        return dict(records[0]) if records else None  # type: ignore[arg-type]
    doc = json.loads(data.decode("utf-8"))
    return doc if isinstance(doc, dict) else None


def lsm_row_to_instant(row: Mapping[str, Any]) -> ArchivedInstant:
    """The decoded view of one LSM row (always a completed instant)."""
    return ArchivedInstant(
        requested_time=str(row.get("instantTime") or ""),
        action=str(row.get("action") or ""),
        state=State.COMPLETED,
        completion_time=row.get("completionTime"),
        metadata=_decode_content(row.get("metadata")),
        plan=_decode_content(row.get("plan")),
    )
