"""A data instant's files-partition records, derived from the instant's own metadata as Hudi's
``HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords`` derives them.

* commit, deltacommit, replacecommit (writes, compaction, clustering, overwrite): the
  ``__all_partitions__`` record adding every partition the commit wrote to, and per partition
  the files its write stats name (base and log file names) with their sizes, the largest
  when a file appears twice; a ``DELETE_PARTITION`` replace commit also deletes its
  partitions from the partition list. Replaced file groups are not removed: their files stay
  on storage (and listed) until a clean deletes them.
* clean: per partition the deleted file names (``deletePathPatterns``), and the partitions a
  clean deleted.

Records of one key are merged (Hudi combines them by key before writing a block). Rollback
and restore are not converted here: Hudi 1.x rolls back the metadata table's own deltacommit
of the rolled-back instant instead (see ``HoodieBackedTableMetadataWriter.update``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hudilite.config.vocab import OP_DELETE_PARTITION, OPERATION_TYPES
from hudilite.metadata import records as rec
from hudilite.timeline.metadata import CommitMetadata

DELETE_PARTITION = OPERATION_TYPES[OP_DELETE_PARTITION]


def _by_key(records: Iterable[rec.FilesRecord]) -> list[rec.FilesRecord]:
    return list(rec.merge_all([records]).values())


def _file_name(path: str, partition: str) -> str:
    # FSUtils.getFileName: the path without its partition folder
    prefix = f"{partition}/" if partition else ""
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path.rsplit("/", 1)[-1]


def commit_records(metadata: CommitMetadata) -> list[rec.FilesRecord]:
    """The records of a completed commit, deltacommit or replacecommit's metadata."""
    out = [rec.partition_list_record(metadata.partition_to_write_stats)]
    if metadata.is_replace and metadata.operation_type == DELETE_PARTITION:
        out.append(rec.partition_list_record(metadata.partition_to_replace_file_ids, deleted=True))
    for partition, stats in metadata.partition_to_write_stats.items():
        sizes: dict[str, int] = {}
        for stat in stats:
            if not stat.path:
                continue  # an empty partition's stat names no file
            name = _file_name(stat.path, partition)
            sizes[name] = max(sizes.get(name, 0), int(stat.file_size_in_bytes))
        out.append(rec.partition_files_record(partition, sizes))
    return _by_key(out)


def clean_records(clean_metadata: Mapping[str, Any]) -> list[rec.FilesRecord]:
    """The records of a completed clean (``HoodieCleanMetadata`` as decoded from Avro)."""
    out = []
    deleted_partitions = []
    for partition, meta in (clean_metadata.get("partitionMetadata") or {}).items():
        names = [str(p).rsplit("/", 1)[-1] for p in meta.get("deletePathPatterns") or []]
        out.append(rec.partition_files_record(partition, {}, names))
        if meta.get("isPartitionDeleted"):
            deleted_partitions.append(partition)
    if deleted_partitions:
        out.append(rec.partition_list_record(deleted_partitions, deleted=True))
    return _by_key(out)
