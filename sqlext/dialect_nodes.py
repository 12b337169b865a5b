"""The syntax-tree nodes the hudilite dialect adds to sqlglot's, and how each renders as SQL.

Spark's dialect has no node for these statements (it keeps most of them as an opaque
``exp.Command``); :mod:`.dialect_parser` builds them and :data:`NODE_SQL` (the generator's
``TRANSFORMS`` entries, merged into Spark's by :class:`~.dialect.Hudilite`) writes them back.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp

__all__ = [
    "NODE_SQL",
    "HudiCall",
    "HudiExplain",
    "HudiHistory",
    "HudiIndex",
    "HudiReset",
    "HudiShow",
    "HudiUnsetProperties",
]


class HudiShow(exp.Expression):
    """``SHOW <kind> ...``: ``this`` is the kind (``DATABASES``, ``TABLES``, ...); ``key``
    the property of ``SHOW TBLPROPERTIES t (key)`` (a string literal); ``like`` the pattern
    of ``SHOW TABLES|VIEWS LIKE 'p'``; ``partition`` the ``PARTITION (...)`` of ``SHOW TABLE
    EXTENDED`` as written."""

    arg_types: t.ClassVar[dict[str, bool]] = {
        "this": True,
        "target": False,
        "limit": False,
        "key": False,
        "like": False,
        "partition": False,
    }


class HudiExplain(exp.Expression):
    """``EXPLAIN [mode] <statement>``: ``this`` is the mode (``EXTENDED``, ... or empty),
    ``expression`` the inner statement's text as written (a string literal)."""

    arg_types: t.ClassVar[dict[str, bool]] = {"this": False, "expression": True}


class HudiHistory(exp.Expression):
    """``DESCRIBE HISTORY t [LIMIT n]``: ``this`` is the table, ``limit`` the row limit."""

    arg_types: t.ClassVar[dict[str, bool]] = {"this": True, "limit": False}


class HudiCall(exp.Expression):
    """``CALL name(args)``: ``this`` is the procedure name, ``expressions`` its arguments."""

    arg_types: t.ClassVar[dict[str, bool]] = {"this": True, "expressions": False}


class HudiIndex(exp.Expression):
    """``CREATE INDEX``/``DROP INDEX``/``SHOW INDEXES``: ``this`` is the verb (``CREATE
    INDEX``, ...), ``name`` the index, ``target`` the table, ``rest`` the text after the
    table as written (a string literal)."""

    arg_types: t.ClassVar[dict[str, bool]] = {
        "this": True,
        "name": False,
        "target": True,
        "exists": False,
        "rest": False,
    }


class HudiReset(exp.Expression):
    """``RESET [key]``: ``this`` is the key as written (a string literal), or absent."""

    arg_types: t.ClassVar[dict[str, bool]] = {"this": False}


class HudiUnsetProperties(exp.Expression):
    """The ``UNSET TBLPROPERTIES [IF EXISTS] (key, ...)`` action of an ``ALTER TABLE``;
    ``expressions`` are the keys as string literals."""

    arg_types: t.ClassVar[dict[str, bool]] = {"expressions": True, "exists": False}


# The word SHOW <kind> puts before its target when rendered.
_SHOW_PREPOSITIONS = {
    "TABLES": "IN ",
    "VIEWS": "IN ",
    "TABLE EXTENDED": "IN ",
    "COLUMNS": "IN ",
    "INDEXES": "FROM ",
}


#: Node type -> its SQL text (``self`` is the generator): the entries the hudilite generator
#: adds to Spark's ``TRANSFORMS``.
NODE_SQL: dict[type[exp.Expr], t.Callable[..., str]] = {
    HudiShow: lambda self, e: " ".join(
        p
        for p in (
            "SHOW",
            e.name + (" ON" if e.name == "COMPACTION" else ""),
            _SHOW_PREPOSITIONS.get(e.name, "") + self.sql(e, "target")
            if e.args.get("target")
            else "",
            f"LIKE {self.sql(e, 'like')}" if e.args.get("like") else "",
            f"LIMIT {self.sql(e, 'limit')}" if e.args.get("limit") else "",
            f"({e.args['key'].name})" if e.args.get("key") else "",
        )
        if p
    ),
    HudiExplain: lambda self, e: " ".join(
        p for p in ("EXPLAIN", e.this.name if e.this else "", e.expression.name) if p
    ),
    HudiHistory: lambda self, e: " ".join(
        p
        for p in (
            "DESCRIBE HISTORY",
            self.sql(e, "this"),
            f"LIMIT {self.sql(e, 'limit')}" if e.args.get("limit") else "",
        )
        if p
    ),
    HudiIndex: lambda self, e: " ".join(
        p
        for p in (
            e.name,
            ("IF NOT EXISTS" if e.name == "CREATE INDEX" else "IF EXISTS")
            if e.args.get("exists")
            else "",
            self.sql(e, "name"),
            "ON",
            self.sql(e, "target"),
            e.args["rest"].name if e.args.get("rest") else "",
        )
        if p
    ),
    HudiCall: lambda self, e: f"CALL {self.sql(e, 'this')}({self.expressions(e, flat=True)})",
    HudiReset: lambda self, e: " ".join(p for p in ("RESET", e.this.name if e.this else "") if p),
    HudiUnsetProperties: lambda self, e: (
        "UNSET TBLPROPERTIES "
        + ("IF EXISTS " if e.args.get("exists") else "")
        + f"({self.expressions(e, flat=True)})"
    ),
}
