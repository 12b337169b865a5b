"""Table statistics procedures: ``stats_file_sizes`` and ``stats_wa``.

``stats_file_sizes`` buckets the sizes of the data files on disk (every file slice, base
and log files) by the commit time in their names and prints a histogram row per commit
plus an ``ALL`` row, with the numbers Hudi's Codahale ``UniformSnapshot`` gives (its
quantile interpolation, sample standard deviation). ``stats_wa`` shows the write
amplification (records written / records updated) of every completed commit and
replacecommit, then a ``Total`` row; ``limit`` cuts rows after the total is appended,
exactly like Hudi. Both read only metadata: a directory listing and commit files.

Parameters are Hudi 1.0's plus ``path`` (see :mod:`procedures.commits`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np

from hudilite.storage.layout import BaseFileName, LogFileName
from hudilite.timeline.instant import COMMIT, REPLACE_COMMIT

from .fsview import glob_regex
from .registry import Output, Param, ProcedureArgumentError, ProcedureContext, procedure

# ---------------------------------------------------------------------------------------
# stats_file_sizes


class SizeSnapshot:
    """Codahale's ``UniformSnapshot`` over file sizes (what Hudi's histogram rows print)."""

    def __init__(self, values: Sequence[int]) -> None:
        self.values = sorted(int(v) for v in values)

    def quantile(self, q: float) -> float:
        """The interpolated ``q`` quantile, Codahale's way: position ``q * (n + 1)``."""
        values = self.values
        if not values:
            return 0.0
        pos = q * (len(values) + 1)
        index = int(pos)
        if index < 1:
            return float(values[0])
        if index >= len(values):
            return float(values[-1])
        lower, upper = values[index - 1], values[index]
        return lower + (pos - math.floor(pos)) * (upper - lower)

    @property
    def mean(self) -> float:
        """Arithmetic mean (0 when empty)."""
        return sum(self.values) / len(self.values) if self.values else 0.0

    @property
    def std_dev(self) -> float:
        """Sample standard deviation (0 for fewer than two values)."""
        n = len(self.values)
        if n <= 1:
            return 0.0
        mean = self.mean
        return math.sqrt(sum((v - mean) ** 2 for v in self.values) / (n - 1))

    def row(self, label: str) -> tuple[Any, ...]:
        """The output row: commit, min, 10th, 50th, avg, 95th, max, num_files, std_dev."""
        values = self.values
        return (
            label,
            values[0] if values else 0,
            self.quantile(0.1),
            self.quantile(0.5),
            self.mean,
            self.quantile(0.95),
            values[-1] if values else 0,
            len(values),
            self.std_dev,
        )


def _commit_time_of(name: str) -> str | None:
    """The commit time in a data file's name (a log file's base instant), else None."""
    base = BaseFileName.parse(name)
    if base is not None:
        return str(base.instant_time)
    log = LogFileName.parse(name)
    if log is not None:
        return str(log.base_instant)
    return None


@procedure(
    "stats_file_sizes",
    [
        Param("table", "string"),
        Param("partition_path", "string", default=""),
        Param("limit", "integer", default=10),
        Param("path", "string"),
    ],
    [
        Output("commit_time"),
        Output("min", "bigint"),
        Output("10th", "double"),
        Output("50th", "double"),
        Output("avg", "double"),
        Output("95th", "double"),
        Output("max", "bigint"),
        Output("num_files", "int"),
        Output("std_dev", "double"),
    ],
    "Histogram of data file sizes per commit and over all commits.",
    read_only=True,
)
def stats_file_sizes(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per commit time found in file names (ascending), then ``ALL``.

    ``partition_path`` is a glob of the partition folders (``*`` per level when empty);
    its depth must equal the number of partition fields, as Hudi checks.
    """
    state = ctx.table(args).state()
    depth = len(state.config.partition_fields)
    given = str(args["partition_path"] or "").strip().strip("/")
    parts = given.split("/") if given else ["*"] * depth
    if len(parts) != depth:
        raise ProcedureArgumentError(
            f"stats_file_sizes: Provided partition_path file depth of {len(parts)} "
            f"({given!r}) does not match table's maximum partition depth of {depth}"
        )
    wanted = glob_regex("/".join(parts))
    sizes: dict[str, list[int]] = {}
    everything: list[int] = []
    for partition in state.view.partitions():
        if not wanted.fullmatch(partition):
            continue
        for entry in state.gw.list_dir(partition):
            commit = None if entry.is_dir else _commit_time_of(entry.name)
            if commit is not None:
                sizes.setdefault(commit, []).append(int(entry.size))
                everything.append(int(entry.size))
    rows = [SizeSnapshot(sizes[c]).row(c) for c in sorted(sizes)]
    rows.append(SizeSnapshot(everything).row("ALL"))
    return rows[: args["limit"]]


# ---------------------------------------------------------------------------------------
# stats_wa


def amplification(written: int, upserted: int) -> str:
    """``written / upserted`` as Java's ``DecimalFormat("#.00")`` prints the float
    quotient Hudi computes (half-even rounding, no leading zero: ``0.5`` is ``".50"``);
    ``"0"`` when nothing was upserted."""
    if upserted <= 0:
        return "0"
    # Hudi divides in float (Long.toFloat / Long); the exact float value decides ties.
    quotient = np.float32(written) / np.float32(upserted)
    text = str(Decimal(float(quotient)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("0.") else text


@procedure(
    "stats_wa",
    [Param("table", "string"), Param("limit", "integer", default=10), Param("path", "string")],
    [
        Output("commit_time"),
        Output("total_upserted", "bigint"),
        Output("total_written", "bigint"),
        Output("write_amplification_factor"),
    ],
    "Write amplification (records written per record updated) of every commit.",
    read_only=True,
)
def stats_wa(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Rows for completed commits and replacecommits (not deltacommits, as in Hudi), oldest
    first, then ``("Total", ...)``; ``limit`` applies last."""
    state = ctx.table(args).state()
    rows: list[tuple[Any, ...]] = []
    total_upserted = total_written = 0
    for instant in state.timeline.commits():
        if instant.action not in (COMMIT, REPLACE_COMMIT):
            continue
        meta = state.timeline.commit_metadata(instant)
        upserted, written = meta.total_updates, meta.total_records_written
        rows.append((instant.requested_time, upserted, written, amplification(written, upserted)))
        total_upserted += upserted
        total_written += written
    rows.append(
        ("Total", total_upserted, total_written, amplification(total_written, total_upserted))
    )
    return rows[: args["limit"]]
