"""The result every mutating call returns: the instant and what it changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class WriteResult:
    """Metrics of one committed write; the same numbers are in its commit metadata.

    ``num_inserts``/``num_updates``/``num_deletes`` count records (also readable as
    ``rows_inserted``/``rows_updated``/``rows_deleted``); ``files_written`` counts base
    files (or log files) created by the write; ``replaced_file_groups`` the file groups
    an overwrite or partition delete replaced; ``rolled_back`` the failed instants this
    write rolled back before starting. Merge-on-read writes count the updates and deletes
    they log, as Hudi does: a logged delete that loses to a stored record with a greater
    ordering value (event-time merging) is still counted.
    """

    instant_time: str
    operation: str
    num_inserts: int = 0
    num_updates: int = 0
    num_deletes: int = 0
    num_writes: int = 0
    files_written: int = 0
    bytes_written: int = 0
    partitions: tuple[str, ...] = ()
    file_paths: tuple[str, ...] = ()
    replaced_file_groups: int = 0
    rolled_back: tuple[str, ...] = ()
    completion_time: str | None = None
    duration_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_stats(
        cls,
        *,
        instant_time: str,
        operation: str,
        stats: Sequence[Mapping[str, Any]],
        completion_time: str | None = None,
        replaced_file_groups: int = 0,
        rolled_back: tuple[str, ...] = (),
        duration_s: float = 0.0,
        extra: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Sum the per-file stats rows of a write."""
        return cls(
            instant_time=instant_time,
            operation=operation,
            num_inserts=sum(int(s["num_inserts"]) for s in stats),
            num_updates=sum(int(s["num_updates"]) for s in stats),
            num_deletes=sum(int(s["num_deletes"]) for s in stats),
            num_writes=sum(int(s["num_writes"]) for s in stats),
            files_written=len(stats),
            bytes_written=sum(int(s["file_size"]) for s in stats),
            partitions=tuple(sorted({str(s["partition_path"]) for s in stats})),
            file_paths=tuple(sorted(str(s["path"]) for s in stats)),
            replaced_file_groups=replaced_file_groups,
            rolled_back=rolled_back,
            completion_time=completion_time,
            duration_s=duration_s,
            extra=dict(extra or {}),
        )

    # Hudi SQL reports these counts as affected rows; the same numbers under its names.
    @property
    def rows_inserted(self) -> int:
        """Records inserted (``num_inserts``)."""
        return self.num_inserts

    @property
    def rows_updated(self) -> int:
        """Records updated (``num_updates``)."""
        return self.num_updates

    @property
    def rows_deleted(self) -> int:
        """Records deleted (``num_deletes``; for a partition delete, the rows it dropped)."""
        return self.num_deletes

    def __str__(self) -> str:
        return (
            f"{self.operation} @ {self.instant_time}: {self.num_inserts} inserted, "
            f"{self.num_updates} updated, {self.num_deletes} deleted, "
            f"{self.files_written} file(s) written"
        )
