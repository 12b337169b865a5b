"""Spark's error messages as the author of a statement should read them.

Spark checks the text hudilite hands it, which is the statement with view names spliced in
where it reads hudilite tables (:mod:`~hudilite.sqlext.table_refs`); its messages then give
positions in that text (``line 1 pos 151`` for a 33-character statement). :func:`tidy`
maps them back to the statement as written (a position inside a view name becomes the
table reference it replaced), shows the statement instead of the rewritten text under
``== SQL ==``, and drops the blank line Spark's parse errors begin with.
"""

from __future__ import annotations

import re

from .table_refs import Rewritten

__all__ = ["tidy"]

# "line 1 pos 7" (analysis errors), "(line 1, pos 9)" (parse errors), both 0-based pos.
_LINE_POS = re.compile(r"line (\d+),? pos (\d+)")
# A query context: "== SQL (line 1, position 8) ==" (1-based position).
_CONTEXT_POS = re.compile(r"== SQL \(line (\d+), position (\d+)\) ==")
_EXCERPT = "== SQL ==\n"


def tidy(exc: BaseException, sql: str | None = None, rewritten: Rewritten | None = None) -> None:
    """Fix ``exc``'s message in place, if it is a pyspark error: no leading blank line and,
    when Spark ran ``rewritten`` for the statement ``sql``, positions in ``sql``.

    pyspark's exceptions keep their message in ``_desc`` and their error class in the Java
    exception they wrap: changing the message in place keeps the type, the error class and
    the SQLSTATE callers test."""
    desc = getattr(exc, "_desc", None)
    if not isinstance(desc, str):
        return
    desc = desc.lstrip("\n")
    if sql is not None and rewritten is not None and rewritten.edits:
        desc = _map_positions(desc, sql, rewritten)
    exc._desc = desc  # type: ignore[attr-defined]


def _map_positions(desc: str, sql: str, rewritten: Rewritten) -> str:
    text = rewritten.text
    where: list[tuple[int, int]] = []

    def place(line: int, column: int) -> tuple[int, int] | None:
        """(line, 0-based column) in ``text`` -> the same in ``sql``."""
        offset = _offset(text, line, column)
        back = None if offset is None else rewritten.original_offset(offset)
        if back is None:
            return None
        return sql.count("\n", 0, back) + 1, back - (sql.rfind("\n", 0, back) + 1)

    def line_pos(m: re.Match[str]) -> str:
        placed = place(int(m.group(1)), int(m.group(2)))
        if placed is None:
            return m.group(0)
        where.append(placed)
        comma = "," if "," in m.group(0) else ""
        return f"line {placed[0]}{comma} pos {placed[1]}"

    def context(m: re.Match[str]) -> str:
        placed = place(int(m.group(1)), int(m.group(2)) - 1)
        if placed is None:
            return m.group(0)
        return f"== SQL (line {placed[0]}, position {placed[1] + 1}) =="

    desc = _CONTEXT_POS.sub(context, _LINE_POS.sub(line_pos, desc))
    head, sep, _excerpt = desc.partition(_EXCERPT)
    if sep and where:
        # The excerpt of a parse error: the statement, a caret line under the error's line.
        line, column = where[0]
        lines = sql.split("\n")
        lines.insert(line, "-" * column + "^^^")
        desc = head + sep + "\n".join(lines) + "\n"
    return desc


def _offset(text: str, line: int, column: int) -> int | None:
    """The offset of 1-based ``line`` and 0-based ``column`` in ``text``."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    return start + column
