"""The tables a query reads, and the query rewritten to read views in their place.

:func:`rewrite_query` swaps each hudilite table of a ``FROM`` or ``JOIN`` for the name of
the temp view that reads it, splicing the view name into the text as written: the rest of
the statement reaches Spark byte for byte, so Spark's own checks see what the user wrote,
and :meth:`Rewritten.original_offset` maps a position in Spark's error message back to the
statement (``line 1 pos 151`` in a 33-character statement otherwise).
"""

from __future__ import annotations

import re
import typing as t

from sqlglot import exp

from .dialect import ParseError, parse_script, to_sql, token_spans

__all__ = [
    "Rewritten",
    "TableReference",
    "UnsupportedSyntaxError",
    "rewrite_query",
    "rewrite_tables",
]


class UnsupportedSyntaxError(ParseError):
    """Valid syntax hudilite refuses (the message says why and what to write instead)."""


# A Hudi instant time: yyyyMMddHHmmss[SSS].
_INSTANT = re.compile(r"\d{14}(\d{3})?")


class TableReference(t.NamedTuple):
    """A table a query reads: ``db.name``, optionally ``TIMESTAMP AS OF``, or a table function.

    For a table-valued function (``FROM hudi_table_changes('t', ...)``) ``function`` is
    its lower-case name and ``args`` its literal arguments; ``name`` is then empty.
    """

    db: str | None
    name: str
    as_of: str | None = None
    function: str | None = None
    args: tuple[str | int | float | None, ...] = ()


def _literal(node: exp.Expr) -> str | int | float | None:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            return float(node.this)
    if isinstance(node, exp.Null):
        return None
    return to_sql(node)


def _reference(node: exp.Table, cte_names: set[str]) -> TableReference | None:
    inner = node.this
    if isinstance(inner, exp.Anonymous):
        return TableReference(
            None,
            "",
            function=inner.name.lower(),
            args=tuple(_literal(a) for a in inner.expressions),
        )
    if not isinstance(inner, exp.Identifier) or node.args.get("catalog"):
        return None
    db = node.db or None
    if db is None and node.name.lower() in cte_names:
        return None
    as_of = None
    version = node.args.get("version")
    if isinstance(version, exp.Version):
        kind = str(version.this).upper()
        value = _literal(version.expression)
        as_of = None if value is None else str(value)
        if kind == "VERSION" and not _INSTANT.fullmatch(as_of or ""):
            # Delta's versions count commits; a Hudi table's versions are its instants.
            raise UnsupportedSyntaxError(
                f"VERSION AS OF {to_sql(version.expression)}: a Hudi table has no version "
                "numbers; give a commit instant (VERSION AS OF '20240101120000000', as "
                "DESCRIBE HISTORY lists them) or TIMESTAMP AS OF '<date-time>'"
            )
        if kind not in ("TIMESTAMP", "VERSION"):
            raise UnsupportedSyntaxError(
                f"unsupported time travel {to_sql(version)!r}: use TIMESTAMP AS OF '<instant>'"
            )
    return TableReference(db, node.name, as_of)


class Rewritten(t.NamedTuple):
    """A statement with views in place of tables: ``text`` for Spark, and ``edits``, the
    spliced spans as ``(start, end, length)`` (a span of the original text, end exclusive,
    and the length of what replaced it), in order; None when the statement had to be
    rendered again (positions in ``text`` then do not map back)."""

    text: str
    edits: tuple[tuple[int, int, int], ...] | None = ()

    def original_offset(self, offset: int) -> int | None:
        """The offset in the original statement of ``offset`` in :attr:`text` (the start of
        the table reference when it falls inside a spliced view name)."""
        if self.edits is None:
            return None
        shift = 0
        for start, end, length in self.edits:
            if offset < start + shift:
                break
            if offset < start + shift + length:
                return start
            shift += length - (end - start)
        return offset - shift


def rewrite_tables(sql: str, resolve: t.Callable[[TableReference], str | None]) -> str:
    """The text of :func:`rewrite_query`."""
    return rewrite_query(sql, resolve).text


def rewrite_query(sql: str, resolve: t.Callable[[TableReference], str | None]) -> Rewritten:
    """``sql`` with each table a query reads replaced by the view ``resolve`` names.

    ``resolve`` gets every table (or table function) in a ``FROM`` or ``JOIN`` that is not
    a CTE of the statement; it returns the name of a view to read instead, or None to
    leave the reference alone. A replaced table keeps its alias (or gets its own name as
    alias), so ``t.col`` still resolves. The view names are spliced into the text as
    written; a reference whose extent the tokens do not show is rendered again instead.
    """
    nodes = parse_script(sql)
    if len(nodes) != 1:
        raise ParseError("expected one SQL statement")
    root = nodes[0]
    cte_names = {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}
    splices: list[tuple[int, int, str]] = []
    spliceable = True
    tokens: list[tuple[str, str, int, int]] | None = None
    for node in list(root.find_all(exp.Table)):
        if not isinstance(node.parent, exp.From | exp.Join):
            continue
        ref = _reference(node, cte_names)
        if ref is None:
            continue
        view = resolve(ref)
        if view is None:
            continue
        alias = node.args.get("alias")
        if spliceable:
            tokens = tokens if tokens is not None else token_spans(sql)
            span = _reference_span(node, tokens)
            if span is None:
                spliceable = False
            else:
                text = _backquote(view)
                if alias is None and ref.function is None:
                    text += " AS " + _backquote(ref.name)
                splices.append((span[0], span[1], text))
        if alias is None and ref.function is None:
            alias = exp.TableAlias(this=exp.to_identifier(ref.name))
        replacement = exp.Table(this=exp.to_identifier(view, quoted=True))
        if alias is not None:
            replacement.set("alias", alias.copy())
        node.replace(replacement)
    if not splices and spliceable:
        return Rewritten(sql)
    if not spliceable:
        return Rewritten(to_sql(root), None)
    splices.sort()
    out: list[str] = []
    edits: list[tuple[int, int, int]] = []
    pos = 0
    for start, end, text in splices:
        out += [sql[pos:start], text]
        edits.append((start, end, len(text)))
        pos = end
    out.append(sql[pos:])
    return Rewritten("".join(out), tuple(edits))


def _backquote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# The words of a time-travel clause between a table's name and its instant.
_TIME_TRAVEL_WORDS = frozenset({"FOR", "TIMESTAMP", "VERSION", "SYSTEM_TIME", "SYSTEM_VERSION"})


def _reference_span(
    node: exp.Table, tokens: list[tuple[str, str, int, int]]
) -> tuple[int, int] | None:
    """The span ``[start, end)`` of a table reference in the text: its name, a table
    function's arguments, a ``TIMESTAMP|VERSION AS OF <literal>`` clause; not its alias.
    None when the parser kept no position for it."""
    parts = [node.this] if isinstance(node.this, exp.Anonymous) else list(node.parts)
    metas = [p.meta for p in parts]
    if not parts or not all("start" in m and "end" in m for m in metas):
        return None
    start = min(m["start"] for m in metas)
    end = max(m["end"] for m in metas)
    index = next((i for i, tok in enumerate(tokens) if tok[3] == end), None)
    if index is None:
        return None
    if isinstance(node.this, exp.Anonymous):
        depth = 0
        for i in range(index + 1, len(tokens)):
            kind = tokens[i][0]
            depth += (kind == "L_PAREN") - (kind == "R_PAREN")
            if depth == 0:
                return (start, tokens[i][3] + 1) if kind == "R_PAREN" else None
        return None
    version = node.args.get("version")
    if version is None:
        return start, end + 1
    if not isinstance(version.expression, exp.Literal):
        return None
    i = index + 1
    while i < len(tokens) and tokens[i][1].upper() in _TIME_TRAVEL_WORDS:
        i += 1
    words = [tok[1].upper() for tok in tokens[i : i + 2]]
    if words != ["AS", "OF"] or i + 2 >= len(tokens):
        return None
    literal = tokens[i + 2]
    return (start, literal[3] + 1) if literal[0] in ("STRING", "NUMBER") else None
