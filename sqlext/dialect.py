"""The hudilite sqlglot dialect: Spark SQL plus Hudi's statements.

Every sqlglot internal lives in this module and the two it assembles, as sqlglot lays out
its own dialects: the tokenizer here, the parser in :mod:`.dialect_parser`, and the
nodes hudilite adds with their SQL text (the generator's entries) in :mod:`.dialect_nodes`.
The dialect adds, on top of Spark:

* ``SHOW DATABASES|SCHEMAS``, ``SHOW TABLES|VIEWS [IN|FROM db] [[LIKE] 'pattern']``
  (``like`` the pattern), ``SHOW CREATE TABLE t``,
  ``SHOW PARTITIONS t`` and ``SHOW COMPACTION ON t [LIMIT n]`` as :class:`HudiShow` nodes
  (sqlglot's Spark dialect turns every ``SHOW`` into an opaque ``exp.Command``);
* ``CALL [system.]proc(arg, name => value, ...)`` as a :class:`HudiCall` node (sqlglot's
  tokenizer swallows ``CALL`` into a ``exp.Command``);
* Hudi's sugar ``RUN COMPACTION ON t [AT instant]`` and ``SCHEDULE COMPACTION ON t``, parsed
  into :class:`HudiCall` nodes for ``run_compaction``;
* Spark's ``SET key = value``, whose value is the rest of the statement as written
  (``SET a.b = some text``; one pair of enclosing quotes removed), as an ``exp.Set`` with
  the value as a string literal (sqlglot's Spark dialect keeps most of these as an opaque
  ``exp.Command``);
* ``RESET [key]`` as a :class:`HudiReset` node;
* ``EXPLAIN [EXTENDED|CODEGEN|COST|FORMATTED] <statement>`` as a :class:`HudiExplain` node
  holding the inner statement's text as written (sqlglot keeps ``EXPLAIN`` opaque);
* ``SHOW COLUMNS (IN|FROM) t [(IN|FROM) db]`` and ``SHOW TABLE EXTENDED [IN db] LIKE 'p'``
  as :class:`HudiShow` nodes (the separate database of ``SHOW COLUMNS`` in the table's
  ``catalog`` slot);
* ``SHOW TBLPROPERTIES t [(key)]`` as a :class:`HudiShow` node (``key`` the property) and
  Delta's ``DESCRIBE HISTORY t [LIMIT n]`` as a :class:`HudiHistory` node;
* Hudi 1.x's index statements ``CREATE INDEX [IF NOT EXISTS] i ON [TABLE] t ...``,
  ``DROP INDEX [IF EXISTS] i ON [TABLE] t`` and ``SHOW INDEXES FROM|IN [TABLE] t`` as
  :class:`HudiIndex` nodes (whatever follows the table is kept as written);
* ``ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] (key, ...)`` as an ``exp.Alter`` whose
  action is a :class:`HudiUnsetProperties` node;
* Spark's ``VOID`` type (``exp.DataType.Type.NULL``); :func:`parse_data_type` reads a
  whole type text with sqlglot's own type parser.

:func:`view_query_text` cuts the query of ``CREATE VIEW ... AS <query>`` (or ``ALTER VIEW
v AS <query>``) out of the statement as written, for the catalog to store it verbatim.
"""

from __future__ import annotations

import re
import typing as t

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.generators.spark import SparkGenerator
from sqlglot.tokens import TokenType

from .dialect_nodes import (
    NODE_SQL,
    HudiCall,
    HudiExplain,
    HudiHistory,
    HudiIndex,
    HudiReset,
    HudiShow,
    HudiUnsetProperties,
)
from .dialect_parser import MERGE_WITHOUT_WHEN, HudiliteParser

__all__ = [
    "MERGE_WITHOUT_WHEN",
    "HudiCall",
    "HudiExplain",
    "HudiHistory",
    "HudiIndex",
    "HudiReset",
    "HudiShow",
    "HudiUnsetProperties",
    "Hudilite",
    "ParseError",
    "TokenError",
    "key_expressions",
    "parse_data_type",
    "parse_script",
    "sql_keywords",
    "to_sql",
    "token_spans",
    "view_query_text",
]


class Hudilite(Spark):
    """Spark SQL with Hudi's ``CALL``, ``SHOW`` and compaction statements."""

    class Tokenizer(Spark.Tokenizer):
        KEYWORDS: t.ClassVar[dict[str, TokenType]] = {
            # CALL and EXPLAIN would swallow the statement into an opaque exp.Command.
            **{k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k not in ("CALL", "EXPLAIN")},
            "VOID": TokenType.VOID,  # Spark's type of NULL (as sqlglot's Databricks dialect)
        }
        COMMANDS: t.ClassVar[set[TokenType]] = Spark.Tokenizer.COMMANDS - {TokenType.SHOW}

    Parser = HudiliteParser

    class Generator(SparkGenerator):
        TYPE_MAPPING: t.ClassVar[dict[exp.DType, str]] = {
            **SparkGenerator.TYPE_MAPPING,
            exp.DType.NULL: "VOID",
        }

        TRANSFORMS: t.ClassVar[dict[type[exp.Expr], t.Callable[..., str]]] = {
            **SparkGenerator.TRANSFORMS,
            **NODE_SQL,
        }


_DIALECT = Hudilite()


def parse_script(sql: str) -> list[exp.Expr]:
    """Parse ``sql`` with the hudilite dialect; raise sqlglot's ``ParseError`` on bad syntax."""
    nodes = _DIALECT.parse(sql, error_level=ErrorLevel.IMMEDIATE)
    return [n for n in nodes if n is not None]


def parse_data_type(text: str) -> exp.DataType:
    """``text`` (all of it) as a data type, with sqlglot's type parser and the hudilite
    dialect's type names; sqlglot's ``ParseError`` when it is not one."""
    node = _DIALECT.parse_into(exp.DataType, text, error_level=ErrorLevel.IMMEDIATE)[0]
    if not isinstance(node, exp.DataType):
        raise ParseError(f"not a data type: {text!r}")
    return node


def view_query_text(sql: str) -> str | None:
    """The query of ``CREATE ... VIEW v [(cols)] [COMMENT ..] AS <query>`` or ``ALTER VIEW v
    AS <query>`` exactly as written: the text after the first ``AS`` outside parentheses
    (column lists and ``TBLPROPERTIES (...)`` hold none at that depth). None without one."""
    depth = 0
    for token in _DIALECT.tokenize(sql):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == TokenType.ALIAS and depth == 0:
            return sql[token.end + 1 :].strip()
    return None


def sql_keywords() -> list[str]:
    """The dialect's keywords (single words and phrases such as ``GROUP BY``) plus the
    words of hudilite's own statements, sorted: what a shell offers to complete."""
    words = {k for k in Hudilite.Tokenizer.KEYWORDS if re.fullmatch(r"[A-Z_]+( [A-Z_]+)*", k)}
    words |= {*Hudilite.Parser.WORD_STATEMENTS, "COMPACTION", "TBLPROPERTIES", "VIEWS", "TABLES"}
    words |= {"DATABASES", "PARTITIONS", "HISTORY", "EXTENDED", "OVERWRITE", "MATCHED"}
    return sorted(words)


def to_sql(node: exp.Expr) -> str:
    """Render ``node`` back to SQL in the hudilite (Spark) dialect."""
    return node.sql(dialect=_DIALECT)


def token_spans(sql: str) -> list[tuple[str, str, int, int]]:
    """The tokens of ``sql`` as ``(kind, text, start, end)``: sqlglot's token type name
    (``STRING``, ``L_PAREN``, ...), the text as written and its first and last offsets."""
    return [
        (tok.token_type.name, sql[tok.start : tok.end + 1], tok.start, tok.end)
        for tok in _DIALECT.tokenize(sql)
    ]


def key_expressions(
    on: str, target_alias: str, key_fields: t.Sequence[str]
) -> dict[str, str] | None:
    """For a MERGE ``ON`` condition, the source expression each target key column equals.

    Looks at the top-level ``AND``-ed equalities ``target.key = <expr>`` (either side);
    returns ``{key field: expr SQL}`` when every key field has one, else None.
    """
    nodes = parse_script(f"SELECT 1 WHERE {on}")
    where = nodes[0].args.get("where") if nodes else None
    if where is None:
        return None
    wanted = {k.lower(): k for k in key_fields}
    found: dict[str, str] = {}
    for eq in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        if not isinstance(eq, exp.EQ):
            continue
        for side, other in ((eq.this, eq.expression), (eq.expression, eq.this)):
            if (
                isinstance(side, exp.Column)
                and side.table.lower() == target_alias.lower()
                and side.name.lower() in wanted
                and not any(
                    isinstance(c, exp.Column) and c.table.lower() == target_alias.lower()
                    for c in other.find_all(exp.Column)
                )
            ):
                found.setdefault(wanted[side.name.lower()], to_sql(other))
    return found if len(found) == len(wanted) else None
