"""The hudilite dialect's parser: Spark's, plus Hudi's statements and Spark's own errors.

:class:`HudiliteParser` extends sqlglot's ``SparkParser`` through its tables where sqlglot
has one (``STATEMENT_PARSERS``, ``ALTER_PARSERS``, ``SHOW_PARSERS``) and
:data:`~HudiliteParser.WORD_STATEMENTS` for statements introduced by a plain word, and
overrides a few methods: ``SET key = <rest>`` keeps the value as written, ``STRUCT<>`` is
Spark's empty struct, and errors record where Spark's parser would report them (the token
it stopped at, or the end of input) and what Spark's grammar has no room for (``a,, b``,
``UPDATE t SET``, a MERGE without WHEN). The nodes it builds are in :mod:`.dialect_nodes`.
"""

from __future__ import annotations

import re
import typing as t

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from .dialect_nodes import (
    HudiCall,
    HudiExplain,
    HudiHistory,
    HudiIndex,
    HudiReset,
    HudiShow,
    HudiUnsetProperties,
)

__all__ = ["MERGE_WITHOUT_WHEN", "HudiliteParser"]

E = t.TypeVar("E", bound=exp.Expr)
T = t.TypeVar("T")

#: Spark's MERGE_WITHOUT_WHEN message, raised where the first WHEN clause must start.
MERGE_WITHOUT_WHEN = "There must be at least one WHEN clause in a MERGE statement"

# The keys ``SET key = value`` takes (as Spark's ``SET`` does: a dotted name, or back-quoted).
_SET_KEY = re.compile(r"`[^`]+`|[A-Za-z_][\w.\-]*")


def _show(kind: str, target: str | None = None) -> t.Callable[[HudiliteParser], HudiShow]:
    def _parse(self: HudiliteParser) -> HudiShow:
        return self._parse_hudi_show(kind, target)

    return _parse


class HudiliteParser(SparkParser):
    """Spark's parser with Hudi's ``CALL``, ``SHOW`` and compaction statements."""

    STATEMENT_PARSERS: t.ClassVar[dict[TokenType, t.Callable]] = {
        **SparkParser.STATEMENT_PARSERS,
        TokenType.SHOW: lambda self: self._parse_show(),
    }

    SHOW_PARSERS: t.ClassVar[dict[str, t.Callable]] = {
        "DATABASES": _show("DATABASES"),
        "SCHEMAS": _show("DATABASES"),
        "TABLES": _show("TABLES", target="db"),
        "VIEWS": _show("VIEWS", target="db"),
        "CREATE TABLE": _show("CREATE TABLE", target="table"),
        "PARTITIONS": _show("PARTITIONS", target="table"),
        "COMPACTION ON": _show("COMPACTION", target="table"),
        "INDEXES": _show("INDEXES", target="from table"),
        "INDEX": _show("INDEXES", target="from table"),
        "TBLPROPERTIES": _show("TBLPROPERTIES", target="table"),
        "COLUMNS": _show("COLUMNS", target="columns"),
        "TABLE EXTENDED": _show("TABLE EXTENDED", target="db"),
    }
    SHOW_TRIE: t.ClassVar[dict] = new_trie(key.split(" ") for key in SHOW_PARSERS)

    ALTER_PARSERS: t.ClassVar[dict[str, t.Callable]] = {
        **SparkParser.ALTER_PARSERS,
        "UNSET": lambda self: self._parse_hudi_unset(),
    }

    # Statements introduced by a plain word (not a keyword token in Spark's tokenizer),
    # with the word that must follow it (None: any).
    WORD_STATEMENTS: t.ClassVar[dict[str, tuple[str, str | None]]] = {
        "CALL": ("_parse_hudi_call", None),
        "RUN": ("_parse_hudi_compaction", "COMPACTION"),
        "SCHEDULE": ("_parse_hudi_compaction", "COMPACTION"),
        "RESET": ("_parse_hudi_reset", None),
        "EXPLAIN": ("_parse_hudi_explain", None),
    }
    EXPLAIN_MODES: t.ClassVar[tuple[str, ...]] = ("EXTENDED", "CODEGEN", "COST", "FORMATTED")

    def _parse_statement(self) -> exp.Expr | None:
        curr, nxt = self._curr, self._next
        word = curr.text.upper() if curr is not None and curr.token_type == TokenType.VAR else ""
        if (
            curr is not None
            and curr.token_type in (TokenType.CREATE, TokenType.DROP)
            and nxt is not None
            and nxt.text.upper() == "INDEX"
        ):
            return self._parse_hudi_index(curr.text.upper())
        if (
            curr is not None
            and curr.token_type == TokenType.DESCRIBE
            and nxt is not None
            and nxt.text.upper() == "HISTORY"
        ):
            return self._parse_hudi_history()
        method, follower = self.WORD_STATEMENTS.get(word, ("", None))
        if method and (follower is None or (nxt is not None and nxt.text.upper() == follower)):
            self._advance()
            parse = getattr(self, method)
            return t.cast(exp.Expr, parse(word))
        return super()._parse_statement()

    def _statement_end(self) -> int:
        """Offset in the SQL text where the current statement ends: after its last token
        and the comments that follow it (``self._tokens`` holds one statement)."""
        sql = self.sql
        i = self._tokens[-1].end + 1 if self._tokens else len(sql)
        while i < len(sql):
            if sql[i].isspace():
                i += 1
            elif sql.startswith("--", i):
                nl = sql.find("\n", i)
                i = len(sql) if nl < 0 else nl + 1
            elif sql.startswith("/*", i):
                close = sql.find("*/", i + 2)
                i = len(sql) if close < 0 else close + 2
            else:
                break
        return i

    def _parse_set(self, unset: bool = False, tag: bool = False) -> exp.Set | exp.Command:
        # Spark's ``SET key = value``: the value is the rest of the statement as written,
        # keywords and spaces included (``SET ...operation = insert``).
        eq = self._index
        while eq < len(self._tokens) and self._tokens[eq].token_type != TokenType.EQ:
            eq += 1
        if not (unset or tag) and self._curr and eq >= len(self._tokens):
            # ``SET key``: show one option's value (a SetItem whose ``this`` is the key).
            key = self.sql[self._curr.start : self._statement_end()].strip()
            if _SET_KEY.fullmatch(key):
                while self._curr:
                    self._advance()
                item = exp.SetItem(this=exp.var(key.strip("`")))
                return self.expression(exp.Set(expressions=[item], unset=False, tag=False))
        if unset or tag or not self._curr or eq >= len(self._tokens):
            return super()._parse_set(unset=unset, tag=tag)
        eq_token = self._tokens[eq]
        key = self.sql[self._curr.start : eq_token.start].strip()
        if not _SET_KEY.fullmatch(key):
            return super()._parse_set(unset=unset, tag=tag)
        end = self._statement_end()
        value = self.sql[eq_token.end + 1 : end].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        while self._curr:
            self._advance()
        item = exp.SetItem(
            this=exp.EQ(this=exp.var(key.strip("`")), expression=exp.Literal.string(value))
        )
        return self.expression(exp.Set(expressions=[item], unset=False, tag=False))

    def _parse_hudi_reset(self, _word: str) -> HudiReset:
        key = None
        if self._curr:
            text = self.sql[self._curr.start : self._statement_end()].strip()
            while self._curr:
                self._advance()
            key = exp.Literal.string(text)
        return self.expression(HudiReset(this=key))

    def _parse_hudi_unset(self) -> HudiUnsetProperties:
        if not self._match_text_seq("TBLPROPERTIES"):
            self.raise_error("Expected TBLPROPERTIES after UNSET")
        exists = bool(self._parse_exists())
        self._match_l_paren()
        keys: list[exp.Expr] = []
        while self._curr and self._curr.token_type != TokenType.R_PAREN:
            first = self._curr
            last = first
            while self._curr and self._curr.token_type not in (
                TokenType.COMMA,
                TokenType.R_PAREN,
            ):
                last = self._curr
                self._advance()
            # A key is written bare (hoodie.x.y), quoted ('k') or back-quoted.
            key = self._find_sql(first, last).strip().strip("'\"`")
            if key:
                keys.append(exp.Literal.string(key))
            self._match(TokenType.COMMA)
        self._match_r_paren()
        if not keys:
            self.raise_error("Expected a property key in UNSET TBLPROPERTIES")
        return self.expression(HudiUnsetProperties(expressions=keys, exists=exists))

    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        # Spark's empty struct type ``STRUCT<>`` (the tokenizer reads ``<>`` as not-equal),
        # where a type must be rather than an expression (``WHERE struct <> 1``).
        curr, nxt = self._curr, self._next
        if (
            schema
            and curr
            and curr.token_type == TokenType.STRUCT
            and nxt
            and nxt.token_type == TokenType.NEQ
        ):
            self._advance(2)
            return exp.DataType(this=exp.DType.STRUCT, expressions=[], nested=True)
        return super()._parse_types(check_func, schema, allow_identifiers, with_collation)

    def raise_error(self, message: str, token: Token | None = None) -> None:
        # Record where the error is, as Spark reports it: the token the parser stopped
        # at (its start, not sqlglot's end column), or the end of the statement.
        at = token or self._curr
        near = None
        if at:
            offset = at.start
            near = self.sql[at.start : at.end + 1]
        else:
            offset = self._statement_end()  # Spark's end of input: after the spaces
        try:
            super().raise_error(message, token or None)  # type: ignore[arg-type]
        except ParseError as e:
            if e.errors:
                e.errors[0].update(near=near, offset=offset)
            raise
        if self.errors:
            self.errors[-1].errors[0].update(near=near, offset=offset)

    def _parse_csv(
        self, parse_method: t.Callable[[], T | None], sep: TokenType = TokenType.COMMA
    ) -> list[T]:
        # sqlglot's own loop, except that it skips an empty item (``SELECT a,, b``,
        # ``VALUES (1,``): Spark's grammar has none, so it is a syntax error there.
        result = parse_method()
        items = [result] if result is not None else []
        while self._match(sep):
            if isinstance(result, exp.Expr):
                self._add_comments(result)
            result = parse_method()
            if result is None:
                self.raise_error("Expected an item after the separator")
            else:
                items.append(result)
        return items

    def _parse_when_matched(self) -> exp.Whens:
        if not (self._curr and self._curr.token_type == TokenType.WHEN):
            # Spark's MERGE_WITHOUT_WHEN, where a WHEN clause must start.
            self.raise_error(MERGE_WITHOUT_WHEN)
        return super()._parse_when_matched()

    def _parse_update_assignment(self) -> exp.Expr | None:
        if self._curr and self._curr.token_type == TokenType.EQ:
            self.raise_error("Expected a column name before =")
        return super()._parse_update_assignment()

    def _parse_update(self) -> exp.Update:
        node = super()._parse_update()
        if not node.expressions:
            self.raise_error("Expected col = value after UPDATE ... SET")
        return node

    def _require(self, node: E | None, message: str) -> E:
        """``node``, or a parse error at the current token when it is missing."""
        if node is None:
            self.raise_error(message)
            raise ParseError(message)  # raise_error raises first at ErrorLevel.IMMEDIATE
        return node

    def _warn_unsupported(self) -> None:
        # The caller rejects every exp.Command fallback with a clear error instead.
        return None

    def _parse_hudi_show(self, kind: str, target: str | None) -> HudiShow:
        node: exp.Expr | None = None
        if target == "db":
            if self._match_set((TokenType.IN, TokenType.FROM)):
                node = self._require(self._parse_table_parts(), "Expected a database name")
        elif target == "from table":
            if not self._match_set((TokenType.IN, TokenType.FROM)):
                self.raise_error(f"Expected FROM or IN after SHOW {kind}")
            self._match(TokenType.TABLE)
            node = self._require(
                self._parse_table_parts(), f"Expected a table name after SHOW {kind} FROM"
            )
        elif target == "columns":
            # Spark's ``SHOW COLUMNS (IN|FROM) [db.]t [(IN|FROM) db]``.
            if not self._match_set((TokenType.IN, TokenType.FROM)):
                self.raise_error("Expected FROM or IN after SHOW COLUMNS")
            node = self._parse_plain_table("SHOW COLUMNS IN")
            if self._match_set((TokenType.IN, TokenType.FROM)):
                db = self._require(self._parse_id_var(), "Expected a database name")
                node.set("catalog", db)  # the namespace given apart (checked later)
        elif kind == "TBLPROPERTIES":
            node = self._parse_plain_table(f"SHOW {kind}")
        elif target == "table":
            node = self._require(
                self._parse_table_parts(), f"Expected a table name after SHOW {kind}"
            )
        like = partition = None
        if target == "db" and (self._curr or kind == "TABLE EXTENDED"):
            # Spark's ``SHOW TABLES|VIEWS [IN db] [LIKE] 'pattern'``, ``SHOW TABLE
            # EXTENDED [IN db] LIKE 'pattern'``.
            self._match(TokenType.LIKE)
            like = self._require(
                self._parse_string(), f"Expected a pattern string after SHOW {kind}"
            )
            if kind == "TABLE EXTENDED" and self._match(TokenType.PARTITION):
                partition = self.sql[self._prev.start : self._statement_end()].strip()
                while self._curr:
                    self._advance()
        limit = None
        if kind == "COMPACTION" and self._match(TokenType.LIMIT):
            limit = self._require(self._parse_number(), "Expected a number after LIMIT")
        key = None
        if kind == "TBLPROPERTIES" and self._match(TokenType.L_PAREN):
            key = self._parse_property_key("SHOW TBLPROPERTIES")
            self._match_r_paren()
        return self.expression(
            HudiShow(
                this=kind,
                target=node,
                limit=limit,
                key=key,
                like=like,
                partition=exp.Literal.string(partition) if partition else None,
            )
        )

    def _parse_plain_table(self, what: str) -> exp.Table:
        """``[db.]table`` as plain names (``t (key)`` must not read as a function call)."""
        parts = [
            self._require(
                self._parse_id_var(any_token=False), f"Expected a table name after {what}"
            )
        ]
        while self._match(TokenType.DOT):
            parts.append(self._require(self._parse_id_var(), "Expected a table name"))
        if len(parts) > 2:
            self.raise_error(f"Expected [database.]table after {what}")
        return exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None)

    def _parse_property_key(self, what: str) -> exp.Literal:
        """A property key up to ``,`` or ``)``: bare (hoodie.x.y), quoted or back-quoted."""
        first = last = self._curr
        while self._curr and self._curr.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
            last = self._curr
            self._advance()
        key = self._find_sql(first, last).strip().strip("'\"`") if first and last else ""
        if not key:
            self.raise_error(f"Expected a property key in {what}")
        return exp.Literal.string(key)

    def _parse_hudi_explain(self, _word: str) -> HudiExplain:
        mode = ""
        if self._curr and self._curr.text.upper() in self.EXPLAIN_MODES:
            mode = self._curr.text.upper()
            self._advance()
        if not self._curr:
            self.raise_error("Expected a statement after EXPLAIN")
        assert self._curr is not None
        text = self.sql[self._curr.start : self._statement_end()].strip()
        while self._curr:
            self._advance()
        return self.expression(
            HudiExplain(this=exp.var(mode) if mode else None, expression=exp.Literal.string(text))
        )

    def _parse_hudi_history(self) -> HudiHistory:
        self._advance(2)  # DESCRIBE HISTORY
        table = self._require(
            self._parse_table_parts(), "Expected a table name after DESCRIBE HISTORY"
        )
        limit = None
        if self._match(TokenType.LIMIT):
            limit = self._require(self._parse_number(), "Expected a number after LIMIT")
        return self.expression(HudiHistory(this=table, limit=limit))

    def _parse_hudi_index(self, verb: str) -> HudiIndex:
        self._advance(2)  # CREATE|DROP INDEX
        exists = bool(self._parse_exists(not_=verb == "CREATE"))
        name = self._require(
            self._parse_id_var(any_token=False), f"Expected an index name after {verb} INDEX"
        )
        if not self._match(TokenType.ON):
            self.raise_error(f"Expected ON after {verb} INDEX {name.name}")
        self._match(TokenType.TABLE)
        # db.table as plain names: ``trips (city)`` must not read as a function call.
        parts = [
            self._require(
                self._parse_id_var(any_token=False),
                f"Expected a table name after {verb} INDEX ... ON",
            )
        ]
        while self._match(TokenType.DOT):
            parts.append(self._require(self._parse_id_var(), "Expected a table name"))
        table = exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None)
        rest = None
        if self._curr:
            rest = exp.Literal.string(self.sql[self._curr.start : self._statement_end()].strip())
            while self._curr:
                self._advance()
        return self.expression(
            HudiIndex(this=f"{verb} INDEX", name=name, target=table, exists=exists, rest=rest)
        )

    def _parse_hudi_call(self, _word: str) -> HudiCall:
        parts: list[exp.Expr] = []
        while True:
            parts.append(
                self._require(
                    self._parse_id_var(any_token=False), "Expected a procedure name after CALL"
                )
            )
            if not self._match(TokenType.DOT):
                break
        name = exp.Table(this=parts[-1])
        if len(parts) > 1:
            name.set("db", parts[-2])
        if len(parts) > 2:
            name.set("catalog", parts[-3])
        if len(parts) > 3:
            self.raise_error("Expected a procedure name of at most three parts")
        args: list[exp.Expr] = []
        self._match_l_paren()
        if not self._match(TokenType.R_PAREN):
            args = [a for a in self._parse_csv(self._parse_lambda) if a is not None]
            self._match_r_paren()
        return self.expression(HudiCall(this=name, expressions=args))

    def _parse_hudi_compaction(self, word: str) -> HudiCall:
        self._advance()  # COMPACTION
        if not self._match(TokenType.ON):
            self.raise_error(f"Expected ON after {word} COMPACTION")
        table = self._require(
            t.cast(exp.Table | None, self._parse_table_parts()),
            f"Expected a table name after {word} COMPACTION ON",
        )
        table_name = ".".join(p.name for p in table.parts)
        op = "run" if word == "RUN" else "schedule"
        args: list[exp.Expr] = [
            exp.Kwarg(this=exp.var("op"), expression=exp.Literal.string(op)),
            exp.Kwarg(this=exp.var("table"), expression=exp.Literal.string(table_name)),
        ]
        if word == "RUN" and self._match_text_seq("AT"):
            instant = self._require(self._parse_primary(), "Expected an instant after AT")
            args.append(exp.Kwarg(this=exp.var("timestamp"), expression=instant))
        name = exp.Table(this=exp.to_identifier("run_compaction"))
        return self.expression(HudiCall(this=name, expressions=args))
