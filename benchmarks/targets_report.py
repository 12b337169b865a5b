"""The summary table of ``bench_targets.py``: one line per row of issue 15's targets table."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

HEADER = [
    "| row | workload | hudilite (s) | peer (s) | ratio | target | met |",
    "|---:|---|---:|---:|---:|---:|---|",
]


def row_number(no: str) -> int:
    """The targets-table row of a line number such as ``"6"`` or ``"9b"``."""
    match = re.match(r"\d+", no)
    if match is None:
        raise ValueError(f"not a row number: {no!r}")
    return int(match.group())


@dataclass
class TargetRow:
    """One measured line: ``target`` is the largest ratio that meets it (None: information)."""

    no: str
    workload: str
    ours: float | None
    peer: float | None
    target: float | None = None
    strict: bool = False  # the target is "<", not "<="

    @property
    def ratio(self) -> float | None:
        if self.ours is None or self.peer is None or self.peer <= 0:
            return None
        return self.ours / self.peer

    @property
    def met(self) -> str:
        ratio = self.ratio
        if ratio is None or math.isnan(ratio):
            return "error" if self.ours is None else "-"
        if self.target is None:
            return "info"
        ok = ratio < self.target if self.strict else ratio <= self.target
        return "yes" if ok else "no"

    def sort_key(self) -> tuple[int, str]:
        return row_number(self.no), self.no

    def line(self) -> str:
        def sec(v: float | None) -> str:
            return "-" if v is None else f"{v:.3f}"

        ratio = self.ratio
        target = "-" if self.target is None else f"{'<' if self.strict else '<='} {self.target}x"
        return (
            f"| {self.no} | {self.workload} | {sec(self.ours)} | {sec(self.peer)} | "
            f"{'-' if ratio is None else f'{ratio:.2f}x'} | {target} | {self.met} |"
        )


def render(rows: list[TargetRow], header: bool = True) -> str:
    return "\n".join([*(HEADER if header else []), *(r.line() for r in rows)])
