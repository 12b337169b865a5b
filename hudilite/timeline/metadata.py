"""Instant contents: commit metadata (JSON for v6, Avro for v8+) and Avro helpers.

A completed write action (commit, deltacommit, replacecommit) stores a *commit metadata*
document listing one write stat per file written. Table version 6 stores it as JSON with
Jackson's field names; version 8 stores the same fields as an Avro object-container file
(codec null, exactly one record of ``HoodieCommitMetadata``, or
``HoodieReplaceCommitMetadata`` for replace commits). Every other instant content (plans,
clean/rollback metadata) is Avro in both versions.

The schemas live in ``avro/*.avsc``, one named type per file as in apache/hudi
``hudi-common/src/main/avro`` (the Hudi 1.1 versions, checked against the writer schemas
embedded in the fixture tables). Files refer to each other's types by name;
:func:`avro_schema` resolves those references into one self-contained schema, which is what
gets embedded in the files we write, so Java and hudi-rs can read them without our .avsc
files.
"""

from __future__ import annotations

import copy
import functools
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import fastavro

from hudilite.config.vocab import (
    CLUSTER_OPERATION,
    INDEX_OPERATION,
    OP_DELETE_PARTITION,
    OP_INSERT_OVERWRITE,
    OP_INSERT_OVERWRITE_TABLE,
    OPERATION_TYPES,
    TABLE_SERVICE_OPERATIONS,
)
from hudilite.errors import CorruptFileError

AVRO_DIR = Path(__file__).parent / "avro"
AVRO_NAMESPACE = "org.apache.hudi.avro.model"
AVRO_MAGIC = b"Obj\x01"

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = frozenset({"record", "error", "enum", "fixed"})

#: Operation types whose commit is a replacecommit (it replaces file groups).
REPLACE_OPERATIONS = frozenset(
    {
        *(OPERATION_TYPES[op] for op in (OP_INSERT_OVERWRITE, OP_INSERT_OVERWRITE_TABLE)),
        OPERATION_TYPES[OP_DELETE_PARTITION],
        CLUSTER_OPERATION,
    }
)

#: Operation types whose recorded schema is not the table's (Hudi's
#: ``WriteOperationType.canUpdateSchema`` is false): table services rewrite files in the
#: schema they were planned with, which a later-requested write may have evolved.
SCHEMA_KEEPING_OPERATIONS = TABLE_SERVICE_OPERATIONS | {INDEX_OPERATION}

# --------------------------------------------------------------------------------------------
# Avro schemas
# --------------------------------------------------------------------------------------------


def _qualify(name: str, namespace: str | None) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _normalize(schema: Any, namespace: str | None, registry: dict[str, Any]) -> Any:
    """Fully qualify every name and reference in ``schema``; register named types."""
    if isinstance(schema, str):
        return schema if schema in _PRIMITIVES else _qualify(schema, namespace)
    if isinstance(schema, list):
        return [_normalize(s, namespace, registry) for s in schema]
    kind = schema["type"]
    if kind in _NAMED:
        full = _qualify(schema["name"], schema.get("namespace", namespace))
        inner_ns = full.rpartition(".")[0]
        out = {k: v for k, v in schema.items() if k != "namespace"}
        out["name"] = full
        if kind in ("record", "error"):
            out["fields"] = [
                {**f, "type": _normalize(f["type"], inner_ns, registry)} for f in schema["fields"]
            ]
        if full in registry:
            raise CorruptFileError(f"Avro type {full} is defined twice in {AVRO_DIR}")
        registry[full] = out
        return out
    if kind == "array":
        return {**schema, "items": _normalize(schema["items"], namespace, registry)}
    if kind == "map":
        return {**schema, "values": _normalize(schema["values"], namespace, registry)}
    if isinstance(kind, (list, dict)) or kind not in _PRIMITIVES:
        return {**schema, "type": _normalize(kind, namespace, registry)}
    return schema


@functools.cache
def _registry() -> dict[str, Any]:
    """Every named type defined in ``avro/*.avsc`` (including nested ones), by full name."""
    registry: dict[str, Any] = {}
    # Through importlib.resources: the package may be imported from a zip (--py-files).
    avro = resources.files(__package__ or "hudilite.timeline") / "avro"
    for path in sorted((p for p in avro.iterdir() if p.name.endswith(".avsc")), key=str):
        _normalize(json.loads(path.read_text(encoding="utf-8")), None, registry)
    return registry


def _expand(schema: Any, registry: Mapping[str, Any], defined: set[str]) -> Any:
    """Inline the first use of every named type; later uses stay references (Avro rule)."""
    if isinstance(schema, str):
        if schema in _PRIMITIVES or schema in defined:
            return schema
        if schema not in registry:
            raise KeyError(f"unknown Avro type {schema}")
        return _expand(registry[schema], registry, defined)
    if isinstance(schema, list):
        return [_expand(s, registry, defined) for s in schema]
    kind = schema["type"]
    if kind in _NAMED:
        if schema["name"] in defined:
            return schema["name"]
        defined.add(schema["name"])
        out = dict(schema)
        if kind in ("record", "error"):
            out["fields"] = [
                {**f, "type": _expand(f["type"], registry, defined)} for f in schema["fields"]
            ]
        return out
    if kind == "array":
        return {**schema, "items": _expand(schema["items"], registry, defined)}
    if kind == "map":
        return {**schema, "values": _expand(schema["values"], registry, defined)}
    if isinstance(kind, (list, dict)) or kind not in _PRIMITIVES:
        return {**schema, "type": _expand(kind, registry, defined)}
    return schema


def _full_name(schema_name: str) -> str:
    return _qualify(schema_name, AVRO_NAMESPACE)


@functools.cache
def _avro_schema_cached(full_name: str) -> dict[str, Any]:
    result: dict[str, Any] = _expand(full_name, _registry(), set())
    return result


def avro_schema(schema_name: str) -> dict[str, Any]:
    """The self-contained Avro schema (JSON form) of a Hudi record type.

    ``schema_name`` is a short name such as ``"HoodieCleanerPlan"`` (namespace
    ``org.apache.hudi.avro.model`` implied) or a full name. Raises ``KeyError`` if unknown.
    """
    return copy.deepcopy(_avro_schema_cached(_full_name(schema_name)))


@functools.cache
def _parsed_schema(full_name: str) -> Any:
    return fastavro.parse_schema(_avro_schema_cached(full_name))


def avro_schema_names() -> list[str]:
    """Full names of every record type available to :func:`write_avro_record`."""
    return sorted(_registry())


def write_avro_record(schema_name: str, record: Mapping[str, Any]) -> bytes:
    """Encode one record as an Avro object-container file (codec null), as Hudi does.

    Missing fields take their schema default; unknown fields raise ``ValueError`` (so a
    misspelt field name cannot silently vanish).
    """
    buf = io.BytesIO()
    fastavro.writer(
        buf,
        _parsed_schema(_full_name(schema_name)),
        [dict(record)],
        codec="null",
        strict_allow_default=True,
    )
    return buf.getvalue()


def read_avro_container(data: bytes) -> tuple[str, dict[str, Any]]:
    """Decode a one-record Avro container; return (writer schema full name, record).

    The writer schema embedded in the file is used, so contents written by any Hudi
    release decode, whatever fields it had.
    """
    if not data.startswith(AVRO_MAGIC):
        raise CorruptFileError("not an Avro object container file (no Obj\\x01 magic)")
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)
        schema = reader.writer_schema
    except Exception as exc:  # fastavro raises assorted errors on garbage
        raise CorruptFileError(f"unreadable Avro container: {exc}") from exc
    if len(records) != 1 or not isinstance(records[0], dict):
        raise CorruptFileError(f"expected one Avro record, found {len(records)}")
    if not isinstance(schema, dict) or not isinstance(schema.get("name"), str):
        raise CorruptFileError("the Avro container's writer schema is not a named record")
    return _qualify(schema["name"], schema.get("namespace")), records[0]


def read_avro_record(data: bytes) -> dict[str, Any]:
    """Decode the single record of an Avro container written by Hudi or hudilite."""
    return read_avro_container(data)[1]


# --------------------------------------------------------------------------------------------
# Write stats and commit metadata
# --------------------------------------------------------------------------------------------

# (attribute, Hudi name) of the fields Hudi's JSON always writes, in Jackson's order.
_JSON_FIELDS: tuple[tuple[str, str], ...] = (
    ("file_id", "fileId"),
    ("path", "path"),
    ("cdc_stats", "cdcStats"),
    ("prev_commit", "prevCommit"),
    ("num_writes", "numWrites"),
    ("num_deletes", "numDeletes"),
    ("num_update_writes", "numUpdateWrites"),
    ("num_inserts", "numInserts"),
    ("total_write_bytes", "totalWriteBytes"),
    ("total_write_errors", "totalWriteErrors"),
    ("temp_path", "tempPath"),
    ("partition_path", "partitionPath"),
    ("total_log_records", "totalLogRecords"),
    ("total_log_files_compacted", "totalLogFilesCompacted"),
    ("total_log_size_compacted", "totalLogSizeCompacted"),
    ("total_updated_records_compacted", "totalUpdatedRecordsCompacted"),
    ("total_log_blocks", "totalLogBlocks"),
    ("total_corrupt_log_block", "totalCorruptLogBlock"),
    ("total_rollback_blocks", "totalRollbackBlocks"),
    ("file_size_in_bytes", "fileSizeInBytes"),
    ("min_event_time", "minEventTime"),
    ("max_event_time", "maxEventTime"),
    ("runtime_stats", "runtimeStats"),
)
# Extra fields of Hudi's HoodieDeltaWriteStat (MOR log writes), JSON order.
_DELTA_FIELDS: tuple[tuple[str, str], ...] = (
    ("log_version", "logVersion"),
    ("log_offset", "logOffset"),
    ("base_file", "baseFile"),
    ("log_files", "logFiles"),
)
# Fields only the Avro HoodieWriteStat has.
_AVRO_ONLY_FIELDS: tuple[tuple[str, str], ...] = (
    ("total_log_files", "totalLogFiles"),
    ("prev_base_file", "prevBaseFile"),
    ("total_log_read_time_ms", "totalLogReadTimeMs"),
    ("num_updates", "numUpdates"),
)
_INT_FIELDS = frozenset(
    attr
    for attr, _ in _JSON_FIELDS
    if attr.startswith(("num_", "total_")) or attr == "file_size_in_bytes"
) | {"total_log_read_time_ms", "num_updates"}


@dataclass
class WriteStat:
    """What one task wrote to one file (Hudi ``HoodieWriteStat`` / ``HoodieDeltaWriteStat``).

    ``path`` is relative to the table base path; ``prev_commit`` is ``"null"`` (the string)
    for a new file group. A MOR log write sets ``base_file`` (the slice's base file name,
    ``""`` when none), ``log_files``, ``log_version`` and ``log_offset``.
    """

    file_id: str
    path: str | None
    partition_path: str | None
    prev_commit: str | None = "null"
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    file_size_in_bytes: int = 0
    total_log_records: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    base_file: str | None = None
    log_files: list[str] = field(default_factory=list)
    log_version: int | None = None
    log_offset: int | None = None
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: dict[str, int] | None = None
    prev_base_file: str | None = None
    total_log_read_time_ms: int = 0
    num_updates: int = 0
    total_log_files: int | None = None
    temp_path: str | None = None
    cdc_stats: dict[str, int] | None = None

    @property
    def is_delta(self) -> bool:
        """True for a log-file write (Hudi writes the extra delta fields for these)."""
        return self.log_version is not None or self.base_file is not None or bool(self.log_files)

    @property
    def is_new_file_group(self) -> bool:
        """True when this write created the file group (no previous commit)."""
        return self.prev_commit in (None, "null")

    def to_dict(self) -> dict[str, Any]:
        """The stat as Hudi's JSON writes it (v6 commit files), camelCase names in order."""
        out = {name: _copy(getattr(self, attr)) for attr, name in _JSON_FIELDS}
        if self.prev_base_file is not None:
            out["prevBaseFile"] = self.prev_base_file
        if self.is_delta:
            out.update({name: _copy(getattr(self, attr)) for attr, name in _DELTA_FIELDS})
            out["recordsStats"] = {"val": None}  # Jackson's rendering of an empty Option
        return out

    def to_avro_dict(self) -> dict[str, Any]:
        """The stat as a ``HoodieWriteStat`` Avro record (v8+ commit files)."""
        out = {name: _copy(getattr(self, attr)) for attr, name in _JSON_FIELDS}
        out.update({name: _copy(getattr(self, attr)) for attr, name in _AVRO_ONLY_FIELDS})
        out.update({name: _copy(getattr(self, attr)) for attr, name in _DELTA_FIELDS})
        if not self.is_delta:
            out["logFiles"] = None
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WriteStat:
        """Build from a JSON or Avro stat (camelCase keys; missing keys take defaults)."""
        kwargs: dict[str, Any] = {}
        for attr, name in _JSON_FIELDS + _DELTA_FIELDS + _AVRO_ONLY_FIELDS:
            if name not in d:
                continue
            value = d[name]
            if attr in _INT_FIELDS and value is None:
                value = 0
            kwargs[attr] = _copy(value)
        if kwargs.get("log_files") is None:
            kwargs["log_files"] = []
        kwargs.setdefault("file_id", "")
        kwargs.setdefault("path", None)
        kwargs.setdefault("partition_path", None)
        return cls(**kwargs)


def _copy(value: Any) -> Any:
    """Shallow-copy containers so dicts handed out never alias a stat's state."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


@dataclass
class CommitMetadata:
    """Content of a commit/deltacommit/replacecommit (Hudi ``HoodieCommitMetadata``).

    ``partition_to_write_stats`` maps partition path (``""`` when non-partitioned) to the
    stats of the files written there; ``extra_metadata["schema"]`` holds the Avro schema of
    the data columns. ``partition_to_replace_file_ids`` is only meaningful for replace
    commits (insert overwrite, clustering), listing the file groups they retire.
    """

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    extra_metadata: dict[str, str] = field(default_factory=dict)
    compacted: bool = False
    partition_to_replace_file_ids: dict[str, list[str]] = field(default_factory=dict)

    # -- queries ---------------------------------------------------------------------------

    @property
    def is_replace(self) -> bool:
        """True when this is a replace commit (by replaced ids or by operation type)."""
        return bool(self.partition_to_replace_file_ids) or self.operation_type in (
            REPLACE_OPERATIONS
        )

    @property
    def schema(self) -> str | None:
        """Avro schema JSON of the data columns, as recorded by the writer (or None)."""
        return self.extra_metadata.get("schema")

    @property
    def table_schema(self) -> str | None:
        """The recorded schema when it can be the table's (an operation that may change the
        schema, :data:`SCHEMA_KEEPING_OPERATIONS` excluded), else None."""
        return None if self.operation_type in SCHEMA_KEEPING_OPERATIONS else self.schema

    def write_stats(self) -> list[WriteStat]:
        """All stats, partition by partition."""
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def partitions(self) -> list[str]:
        """Partition paths written by this commit."""
        return list(self.partition_to_write_stats)

    def file_ids(self) -> set[tuple[str, str]]:
        """(partition, file id) of every file group written (the same shape as
        :meth:`replaced_file_groups`); placeholder stats with an empty id are skipped."""
        return {
            (p, s.file_id)
            for p, stats in self.partition_to_write_stats.items()
            for s in stats
            if s.file_id
        }

    def written_paths(self) -> list[str]:
        """Table-relative paths of every file written (base and log files)."""
        return [s.path for s in self.write_stats() if s.path]

    def replaced_file_groups(self) -> set[tuple[str, str]]:
        """(partition, file id) of every file group this replace commit retires."""
        return {(p, f) for p, ids in self.partition_to_replace_file_ids.items() for f in ids}

    @property
    def total_inserts(self) -> int:
        """Records inserted (Hudi ``numInserts`` summed)."""
        return sum(s.num_inserts for s in self.write_stats())

    @property
    def total_updates(self) -> int:
        """Records updated (``numUpdateWrites`` summed)."""
        return sum(s.num_update_writes for s in self.write_stats())

    @property
    def total_deletes(self) -> int:
        """Records deleted (``numDeletes`` summed)."""
        return sum(s.num_deletes for s in self.write_stats())

    @property
    def total_records_written(self) -> int:
        """Records written to files (``numWrites`` summed; carried-over rows count too)."""
        return sum(s.num_writes for s in self.write_stats())

    @property
    def total_bytes_written(self) -> int:
        """Bytes written (``totalWriteBytes`` summed)."""
        return sum(s.total_write_bytes for s in self.write_stats())

    # -- encoding --------------------------------------------------------------------------

    def to_dict(self, replace: bool | None = None) -> dict[str, Any]:
        """The document as Hudi's JSON writes it (key order as Jackson writes it)."""
        out: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_dict() for s in stats]
                for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        is_replace = self.is_replace if replace is None else replace
        if is_replace:
            out["partitionToReplaceFileIds"] = _copy_ids(self.partition_to_replace_file_ids)
        return out

    def to_json_bytes(self, replace: bool | None = None) -> bytes:
        """v6 encoding: UTF-8 JSON. ``replace`` forces/suppresses the replace fields."""
        return json.dumps(self.to_dict(replace), indent=2, ensure_ascii=False).encode("utf-8")

    def to_avro_bytes(self, replace: bool | None = None) -> bytes:
        """v8+ encoding: Avro container holding one ``HoodieCommitMetadata`` record, or
        ``HoodieReplaceCommitMetadata`` for a replace commit."""
        is_replace = self.is_replace if replace is None else replace
        record: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_avro_dict() for s in stats]
                for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "version": None,  # what Hudi 1.x writes
            "operationType": self.operation_type,
        }
        if is_replace:
            record["partitionToReplaceFileIds"] = _copy_ids(self.partition_to_replace_file_ids)
            return write_avro_record("HoodieReplaceCommitMetadata", record)
        return write_avro_record("HoodieCommitMetadata", record)

    def to_bytes(self, layout_version: int, replace: bool | None = None) -> bytes:
        """The encoding a table of ``layout_version`` uses: JSON for 1, Avro for 2."""
        if layout_version >= 2:
            return self.to_avro_bytes(replace)
        return self.to_json_bytes(replace)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CommitMetadata:
        """Build from a decoded JSON document or Avro record (nulls take defaults)."""
        stats = d.get("partitionToWriteStats") or {}
        replaced = d.get("partitionToReplaceFileIds") or {}
        return cls(
            partition_to_write_stats={
                p: [WriteStat.from_dict(s) for s in (lst or [])] for p, lst in stats.items()
            },
            operation_type=d.get("operationType") or "UNKNOWN",
            extra_metadata=dict(d.get("extraMetadata") or {}),
            compacted=bool(d.get("compacted")),
            partition_to_replace_file_ids=_copy_ids(replaced),
        )

    @classmethod
    def from_bytes(cls, data: bytes, source: str | None = None) -> CommitMetadata:
        """Decode either encoding (sniffs the Avro magic); empty content → empty metadata.

        Hudi leaves requested files empty and some inflight files too, so "nothing" is a
        legitimate content (Hudi's ``fromBytes`` reads an empty completed file the same
        way). Raises :class:`CorruptFileError` for anything else that does not
        decode, naming ``source`` (the file and instant) when given.
        """
        if not data.strip():
            return cls()
        where = f"{source}: " if source else ""
        try:
            if data.startswith(AVRO_MAGIC):
                return cls.from_dict(read_avro_record(data))
            doc = json.loads(data.decode("utf-8"))
            if not isinstance(doc, dict):
                raise CorruptFileError("commit metadata JSON is not an object")
            return cls.from_dict(doc)
        except CorruptFileError as exc:
            raise CorruptFileError(f"{where}{exc}") from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            message = f"{where}commit metadata is neither Avro nor JSON: {exc}"
            raise CorruptFileError(message) from exc
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            # Decodes, but the fields are not commit metadata (wrong types or shapes).
            message = f"{where}commit metadata has unexpected content: {exc!r}"
            raise CorruptFileError(message) from exc


def _copy_ids(ids: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    return {p: list(v or []) for p, v in ids.items()}
