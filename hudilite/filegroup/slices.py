"""Value types of the file-system view: base files, log files, file slices, file groups.

A Hudi *file group* is identified by ``(partition, file_id)``. Over time it holds a
sequence of *file slices*, each keyed by a *base instant*: the instant that wrote the
slice's base file (or, for a slice without a base file, the instant that opened it --
a pending compaction, or the first delta commit of a log-only file group). A slice is
its optional base file plus the log files that apply on top of it, in apply order.

These types are immutable and picklable (they are shipped to Spark executors inside
scan plans). They carry only names and sizes; reading the files is someone else's job.
All paths are table-relative with ``/`` separators (see ``docs/architecture.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hudilite.storage.layout import BaseFileName, LogFileName


def join_path(partition: str, file_name: str) -> str:
    """Table-relative path of ``file_name`` inside ``partition`` (``""`` = the base path)."""
    return f"{partition}/{file_name}" if partition else file_name


@dataclass(frozen=True)
class BaseFile:
    """A base (Parquet) file: ``<fileId>_<writeToken>_<instant>.parquet`` in ``partition``.

    ``completion_time`` is the completion time of the instant that wrote it when the
    view knows it (table version 8+), else ``None``.
    """

    partition: str
    name: BaseFileName
    size: int
    completion_time: str | None = field(default=None, compare=False)

    @property
    def file_id(self) -> str:
        """File group id, ``<uuid>-<n>``."""
        return self.name.file_id

    @property
    def instant_time(self) -> str:
        """Requested time of the write that produced this file (the slice's base instant)."""
        return self.name.instant_time

    @property
    def file_name(self) -> str:
        """The file's name as on disk."""
        return self.name.render()

    @property
    def path(self) -> str:
        """Table-relative path of the file."""
        return join_path(self.partition, self.file_name)

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)`` of the file group."""
        return (self.partition, self.file_id)


#: ``(start, end, commit)``: bytes ``[start, end)`` of a log file that ``commit`` wrote.
CommittedRange = tuple[int, int, str]


@dataclass(frozen=True)
class LogFile:
    """A log file: ``.<fileId>_<instant>.log.<version>_<writeToken>`` in ``partition``.

    ``name.base_instant`` is the instant in the name: the slice's base instant for table
    version 6, the writing delta commit's requested time for version 8+.
    ``completion_time`` is that delta commit's completion time (version 8+ only; the view
    fills it in, ``None`` when unknown), which decides the slice and the order of the log.
    ``committed``: the byte ranges completed commits recorded writing to this file
    (``[logOffset, logOffset + fileSizeInBytes)`` of their write stats, with the commit),
    filled in by the view and the table services: a damaged block inside one is lost
    committed data, one outside is the torn tail of a failed append (readers skip those).
    """

    partition: str
    name: LogFileName
    size: int
    completion_time: str | None = field(default=None, compare=False)
    committed: tuple[CommittedRange, ...] = field(default=(), compare=False)

    @property
    def file_id(self) -> str:
        """File group id."""
        return self.name.file_id

    @property
    def instant_time(self) -> str:
        """The instant in the file name (v6: base instant; v8: writing delta commit)."""
        return self.name.base_instant

    @property
    def version(self) -> int:
        """Log version (starts at 1)."""
        return int(self.name.version)

    @property
    def file_name(self) -> str:
        """The file's name as on disk."""
        return self.name.render()

    @property
    def path(self) -> str:
        """Table-relative path of the file."""
        return join_path(self.partition, self.file_name)

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)`` of the file group."""
        return (self.partition, self.file_id)

    def sort_key(self) -> tuple[str, str, int, str]:
        """Apply order of logs within a slice.

        Version 8+: by completion time (the order in which delta commits became visible),
        then by the name's instant, version and write token. Version 6 logs carry no
        completion time, so this reduces to Hudi's log-file comparator (base instant,
        version, write token).
        """
        return (
            self.completion_time or "",
            self.name.base_instant,
            self.version,
            self.name.write_token,
        )


@dataclass(frozen=True)
class FileSlice:
    """One version of a file group: an optional base file plus the log files on top of it.

    ``log_files`` are in apply order (older first). A slice without a base file is a
    log-only slice (a log-only file group, or a compaction that is still pending).
    """

    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)`` of the file group."""
        return (self.partition, self.file_id)

    @property
    def has_logs(self) -> bool:
        """Whether the slice has log files (it then needs a merge to be read)."""
        return bool(self.log_files)

    @property
    def is_empty(self) -> bool:
        """A slice with neither base file nor logs (nothing to read)."""
        return self.base_file is None and not self.log_files

    @property
    def base_path(self) -> str | None:
        """Table-relative path of the base file, or ``None``."""
        return self.base_file.path if self.base_file is not None else None

    @property
    def log_paths(self) -> list[str]:
        """Table-relative paths of the log files, in apply order."""
        return [log.path for log in self.log_files]

    @property
    def paths(self) -> list[str]:
        """Every file of the slice: base file (if any) first, then logs in apply order."""
        head = [self.base_file.path] if self.base_file is not None else []
        return head + self.log_paths

    @property
    def total_size(self) -> int:
        """Bytes on disk of the base file and the logs."""
        base = self.base_file.size if self.base_file is not None else 0
        return base + sum(log.size for log in self.log_files)


@dataclass(frozen=True)
class FileGroup:
    """All slices of one file group, ordered by base instant (oldest first)."""

    partition: str
    file_id: str
    slices: tuple[FileSlice, ...] = ()

    @property
    def group_key(self) -> tuple[str, str]:
        """``(partition, file_id)``."""
        return (self.partition, self.file_id)

    @property
    def latest_slice(self) -> FileSlice | None:
        """The slice with the greatest base instant, or ``None`` for an empty group."""
        return self.slices[-1] if self.slices else None

    def slice_at(self, base_instant: str) -> FileSlice | None:
        """The slice whose base instant is exactly ``base_instant``."""
        for file_slice in self.slices:
            if file_slice.base_instant == base_instant:
                return file_slice
        return None

    def base_files(self) -> list[BaseFile]:
        """Base files of all slices, oldest first."""
        return [s.base_file for s in self.slices if s.base_file is not None]
