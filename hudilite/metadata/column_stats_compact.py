"""The stats partitions' part of a metadata-table compaction (column_stats, partition_stats).

Hudi compacts every file group of the metadata table in one compaction instant
(:mod:`~hudilite.metadata.compact` does the files partition): each file group's latest slice
(its base file and the logs of completed deltacommits after it whose data instant completed,
:func:`hudilite.metadata.column_stats.read_partition`'s rule) becomes a new base file
``<fileId>_0-0-0_<C>.hfile`` of its records merged by ``HoodieMetadataPayload``'s rule.
Tombstones (statistics of deleted files) are dropped, as Hudi's merger drops deleted
records: nothing older than the new base file is read again. A group without logs is left
alone.

:func:`units` lists the groups to compact (for the compaction plan, written first);
:func:`compact_unit` writes one group's base file and returns its write stat; a compaction
rolled back before it completed has its base files removed by :func:`pending_base_files`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import partition_stats as ps
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.storage.log_format import BlockType, read_log_file
from hudilite.timeline.metadata import WriteStat
from hudilite.timeline.timeline import Timeline

#: The stats partitions a compaction covers.
PARTITIONS = (cs.PARTITION, ps.PARTITION)


@dataclass(frozen=True)
class Unit:
    """One file group's slice to compact."""

    partition: str
    file_id: str
    base_instant: str | None
    base_path: str | None
    logs: tuple[str, ...]

    def operation(self, instant_time: str, gw: FileSystemGateway) -> dict[str, Any]:
        """The group's ``HoodieCompactionOperation`` (Hudi's metrics, as the files one)."""
        log_bytes = sum(gw.size(p) for p in self.logs)
        return {
            "baseInstantTime": self.base_instant or instant_time,
            "deltaFilePaths": [p.rsplit("/", 1)[-1] for p in self.logs],
            "dataFilePath": self.base_path.rsplit("/", 1)[-1] if self.base_path else None,
            "fileId": self.file_id,
            "partitionPath": self.partition,
            "metrics": {
                "TOTAL_LOG_FILES": float(len(self.logs)),
                "TOTAL_IO_MB": 0.0,
                "TOTAL_IO_READ_MB": 0.0,
                "TOTAL_LOG_FILES_SIZE": float(log_bytes),
                "TOTAL_IO_WRITE_MB": 0.0,
            },
            "bootstrapFilePath": None,
        }


def units(
    gw: FileSystemGateway, data_timeline: Timeline | None, timeline: mt.MetadataTimeline
) -> list[Unit]:
    """Every stats file group whose latest slice has log files."""
    out = []
    for part in PARTITIONS:
        folder = join(mt.METADATA_DIR, part)
        if not gw.exists(folder):
            continue
        entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(folder)]
        fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
        for fid in fids:
            base, logs = cs.group_slice(gw, fid, entries, timeline, data_timeline)
            if not logs:
                continue
            base_instant = None
            if base is not None:
                parsed = parse_data_file_name(base.rsplit("/", 1)[-1])
                assert isinstance(parsed, BaseFileName)
                base_instant = parsed.instant_time
            out.append(Unit(part, fid, base_instant, base, tuple(logs)))
    return out


def compact_unit(gw: FileSystemGateway, unit: Unit, instant_time: str) -> WriteStat:
    """Write the group's new base file (see the module docstring); its write stat."""
    batches: list[Iterable[csr.ColumnStats]] = []
    if unit.base_path:
        batches.append(cs.decode_hfile(gw.read_bytes(unit.base_path)))
    for path in unit.logs:
        for block in read_log_file(gw, path):
            if block.block_type == BlockType.HFILE:
                batches.append(cs.decode_hfile(block.content))
    merged = csr.merge_all(batches)
    records = [merged[k] for k in sorted(merged, key=lambda k: k.encode("utf-8"))]
    records = [r for r in records if not r.deleted]
    name = BaseFileName(unit.file_id, mt.WRITE_TOKEN, instant_time, ".hfile").render()
    data = cs.encode_hfile(records, base_file=name)
    gw.write_bytes(join(mt.METADATA_DIR, unit.partition, name), data)
    log_bytes = sum(gw.size(p) for p in unit.logs)
    return WriteStat(
        file_id=unit.file_id,
        path=f"{unit.partition}/{name}",
        partition_path=unit.partition,
        prev_commit=unit.base_instant or "null",
        num_writes=len(records),
        num_update_writes=len(records),
        total_write_bytes=len(data),
        file_size_in_bytes=len(data),
        total_log_files_compacted=len(unit.logs),
        total_log_size_compacted=log_bytes,
    )


def pending_base_files(gw: FileSystemGateway, pending: frozenset[str]) -> list[str]:
    """The stats partitions' base files written by the compactions ``pending``."""
    out = []
    for part in PARTITIONS:
        for entry in gw.list_dir(join(mt.METADATA_DIR, part)):
            parsed = parse_data_file_name(entry.name)
            if isinstance(parsed, BaseFileName) and parsed.instant_time in pending:
                out.append(entry.path)
    return out


def stale_files(gw: FileSystemGateway, timeline: mt.MetadataTimeline) -> dict[str, list[str]]:
    """Stats partition -> table-relative paths of its file groups' slices older than the
    latest two (the files partition's clean rule, :func:`hudilite.metadata.clean.
    stale_files`, per group: a slice starts at the initialization's or a completed
    compaction's base file, a log joins the slice of the latest start before its
    deltacommit's completion; logs of deltacommits not on the timeline are kept)."""
    out: dict[str, list[str]] = {}
    for part in PARTITIONS:
        bases: dict[str, dict[str, list[str]]] = {}
        logs: dict[str, list[tuple[str, str]]] = {}
        for entry in gw.list_dir(join(mt.METADATA_DIR, part)):
            parsed = parse_data_file_name(entry.name)
            if isinstance(parsed, BaseFileName):
                group = bases.setdefault(parsed.file_id, {})
                group.setdefault(parsed.instant_time, []).append(entry.path)
            elif isinstance(parsed, LogFileName):
                logs.setdefault(parsed.file_id, []).append((parsed.base_instant, entry.path))
        stale: list[str] = []
        for fid in sorted(set(bases) | set(logs)):
            group = bases.get(fid, {})
            starts = sorted(
                t for t in group if t in timeline.compactions or t.startswith(mt.INIT_INSTANT[:14])
            )
            if len(starts) <= 2:
                continue
            keep_from = starts[-2]
            stale += [p for t in starts if t < keep_from for p in group[t]]
            for instant, path in logs.get(fid, []):
                done = timeline.deltacommits.get(instant)
                if done is not None and done < keep_from:
                    stale.append(path)
        if stale:
            out[part] = sorted(stale)
    return out
