"""Data file names and partition metadata, exactly as Hudi spells them.

* Base file: ``<fileId>_<writeToken>_<instantTime>.parquet``
  (``fileId`` = ``<uuid>-<n>``, which contains ``-`` but never ``_``).
* Log file: ``.<fileId>_<instant>.log.<version>_<writeToken>`` (v6: the base instant of the
  slice; v8: the deltacommit's own requested time). Versions start at 1.
* Partition folders carry ``.hoodie_partition_metadata`` (Java properties with
  ``commitTime`` and ``partitionDepth``); Hudi finds partitions by this file.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from hudilite.config import parse_properties, render_properties
from hudilite.storage.fs import FileSystemGateway, join

PARTITION_METADATA_FILE = ".hoodie_partition_metadata"
# Hudi can also store partition metadata as a tiny Parquet/ORC file
# (hoodie.partition.metafile.use.base.format); such folders are partitions too.
_PARTITION_METADATA_NAMES = (
    PARTITION_METADATA_FILE,
    PARTITION_METADATA_FILE + ".parquet",
    PARTITION_METADATA_FILE + ".orc",
)

_BASE_RE = re.compile(
    r"^(?P<file_id>[^._][^_]*)_(?P<token>[^_]+)_(?P<instant>\d+)(?P<ext>\.[A-Za-z0-9]+)$"
)
# After Hudi's FSUtils.LOG_FILE_PATTERN; the write token is optional (pre-0.7 logs) and CDC
# logs carry a trailing ".cdc".
_LOG_RE = re.compile(
    r"^\.(?P<file_id>[^_]+)_(?P<instant>\d+)\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>\d+-\d+-\d+))?(?P<suffix>\.cdc)?$"
)


@dataclass(frozen=True, order=True)
class BaseFileName:
    """Name of a base file; ``instant_time`` is the requested time of the write."""

    file_id: str
    write_token: str
    instant_time: str
    extension: str = ".parquet"

    @classmethod
    def parse(cls, name: str) -> BaseFileName | None:
        """Parse a bare file name (no folder); None when it is not a base file name."""
        m = _BASE_RE.match(name)
        if m is None:
            return None
        return cls(m["file_id"], m["token"], m["instant"], m["ext"])

    def render(self) -> str:
        """The file name, e.g. ``abc-0_0-1-2_20240101000000000.parquet``."""
        return f"{self.file_id}_{self.write_token}_{self.instant_time}{self.extension}"

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class LogFileName:
    """Name of a log file of file group ``file_id``.

    ``base_instant`` is the instant in the name (v6: the slice's base instant; v8: the
    deltacommit that wrote it). ``write_token`` is ``""`` for legacy names without one.
    """

    file_id: str
    base_instant: str
    version: int
    write_token: str
    extension: str = "log"
    suffix: str = ""

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        """Parse a bare file name; None when it is not a log file name."""
        m = _LOG_RE.match(name)
        if m is None:
            return None
        return cls(
            m["file_id"],
            m["instant"],
            int(m["version"]),
            m["token"] or "",
            m["ext"],
            m["suffix"] or "",
        )

    def render(self) -> str:
        """The file name, e.g. ``.abc-0_20240101000000000.log.1_0-1-2``."""
        token = f"_{self.write_token}" if self.write_token else ""
        return (
            f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}"
            f"{token}{self.suffix}"
        )

    def sort_key(self) -> tuple[str, int, str]:
        """Hudi's log order within a file group: instant, then version, then write token."""
        return (self.base_instant, self.version, self.write_token)

    def next_version(self, write_token: str) -> LogFileName:
        """The name of the next log file after this one (rollover or a new writer)."""
        return LogFileName(
            self.file_id,
            self.base_instant,
            self.version + 1,
            write_token,
            self.extension,
            self.suffix,
        )

    def __str__(self) -> str:
        return self.render()


def parse_data_file_name(name: str) -> BaseFileName | LogFileName | None:
    """A base or log file name, or None for anything else (metadata, temp files...)."""
    return BaseFileName.parse(name) or LogFileName.parse(name)


def new_file_id() -> str:
    """A fresh file group id: ``<uuid4>-0`` as Hudi's writers create them."""
    return f"{uuid.uuid4()}-0"


def make_write_token(partition_id: int, stage_id: int, attempt_id: int) -> str:
    """``<taskPartitionId>-<stageId>-<taskAttemptId>``, Hudi's write token."""
    for v in (partition_id, stage_id, attempt_id):
        if int(v) < 0:
            raise ValueError(f"write token parts must be non-negative, got {v}")
    return f"{int(partition_id)}-{int(stage_id)}-{int(attempt_id)}"


def data_file_path(partition_path: str, file_name: str | BaseFileName | LogFileName) -> str:
    """Table-relative path of a data file in ``partition_path`` (``""`` = non-partitioned)."""
    name = file_name if isinstance(file_name, str) else file_name.render()
    return join(partition_path, name)


def split_data_file_path(rel_path: str) -> tuple[str, str]:
    """``(partition_path, file_name)`` of a table-relative data file path."""
    head, tail = posixpath.split(rel_path.strip("/"))
    return head, tail


def partition_depth(partition_path: str) -> int:
    """Number of folder levels of a partition path (0 for the base path)."""
    stripped = partition_path.strip("/")
    return len(stripped.split("/")) if stripped else 0


# ---- partition metadata -----------------------------------------------------------------


def render_partition_metadata(instant_time: str, depth: int, now: datetime | None = None) -> str:
    """Content of ``.hoodie_partition_metadata`` as Hudi's ``HoodiePartitionMetadata`` writes."""
    stamp = (now or datetime.now(UTC)).strftime("%a %b %d %H:%M:%S UTC %Y")
    props = {"commitTime": instant_time, "partitionDepth": str(depth)}
    return render_properties(props, comment=f"partition metadata\n{stamp}")


def write_partition_metadata(
    gw: FileSystemGateway,
    partition_path: str,
    instant_time: str,
    depth: int | None = None,
) -> bool:
    """Create the partition's metadata file unless present; True when this call wrote it.

    ``depth`` defaults to the number of folder levels in ``partition_path``. The create is
    exclusive, so concurrent writers of one partition agree on the first commit time. A
    partition whose metadata is in the Parquet form (``repair_migrate_partition_meta``)
    has it already: no text file is added beside it.
    """
    if depth is None:
        depth = partition_depth(partition_path)
    rel = join(partition_path, PARTITION_METADATA_FILE)
    if gw.exists(rel) or gw.exists(rel + ".parquet"):
        return False
    data = render_partition_metadata(instant_time, depth).encode("ascii")
    return gw.create_exclusive(rel, data)


def read_partition_metadata(gw: FileSystemGateway, partition_path: str) -> dict[str, str] | None:
    """The properties of a partition's metadata file, or None when it has none (text form)."""
    rel = join(partition_path, PARTITION_METADATA_FILE)
    try:
        data = gw.read_bytes(rel)
    except FileNotFoundError:
        return None
    return parse_properties(data.decode("latin-1"))


def is_partition_dir(gw: FileSystemGateway, path: str) -> bool:
    """True when ``path`` holds a partition metadata file (any of Hudi's formats)."""
    return any(gw.exists(join(path, name)) for name in _PARTITION_METADATA_NAMES)


def is_partition_metadata_name(name: str) -> bool:
    """True for the partition metadata file names (text, Parquet or ORC form)."""
    return name in _PARTITION_METADATA_NAMES
