"""The statement sandbox: what a signed-in user may run beyond its role's statement kinds.

Every statement the server receives is parsed by the SQL front end (:mod:`hudilite.sqlext`)
before anything runs; this module decides on that parse, never by matching words in the
text, what the statement may do as the server's OS user. Refusals raise
:class:`~hudilite.thriftserver.users.PermissionDenied` (SQLSTATE ``42501``) with one line
naming the construct.

Refused for every role (admins too, unless the server runs with
``hudilite.thriftserver.admin.trusted=true``):

* ``TRANSFORM (...) USING 'cmd'`` (and Hive's ``MAP``/``REDUCE ... USING``): an OS command;
* Java reflection: ``java_method``, ``reflect``, ``try_reflect``;
* ``EXECUTE IMMEDIATE`` (SQL built at run time, out of the parser's sight), ``ADD JAR|FILE|
  ARCHIVE`` and ``CREATE FUNCTION`` (code loaded into the JVM);
* server-wide settings (:func:`server_wide`): filesystem and Hadoop keys (the filesystem
  cache and hudilite's storage options are process-wide: one session's S3 keys would serve
  another's requests), catalogs, extensions, the warehouse, Spark's variable substitution
  and SQL-on-files switches;
* ``hudilite.internal.*`` (fail points: a ``kill`` point kills the server) unless the server
  was started for tests (:data:`FAIL_POINTS_ENV`).

Refused for readers and writers (admins, who name table locations in DDL anyway, read and
write any path the server's OS user can):

* path-based relations (``parquet.`/path` ``, ``text.`file:/...` ``) and Hudi's table
  functions over paths (``hudi_table_changes('/path', ...)``, ``hudi_query``,
  ``hudi_filesystem_view``) outside the warehouse, and paths with glob characters;
* ``SET`` of a key outside the allow-list (:func:`session_key_allowed`): hudilite's own
  options (not internal, not naming a path) and a few of Spark's per-session SQL settings;
* a ``CALL`` whose ``path`` argument (a table named by its folder) is outside the warehouse.

The checks look into every part of a statement: subqueries, CTEs, set operations, the
statement ``EXPLAIN`` shows, the persistent views a query reads (their stored SQL, checked
as if written in the query), and the text of statements the front end hands to Spark
unparsed (their tokens: a reflective call or ``USING 'string'`` is refused there too).
Comments are not statements: the parser drops them, and so do these checks.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from hudilite import config as cfg
from hudilite.procedures import procedure_spec
from hudilite.sqlext.dialect import HudiExplain, Hudilite, ParseError, parse_script
from hudilite.sqlext.table_functions import TABLE_FUNCTIONS
from hudilite.storage.fs import is_storage_option

from .users import PermissionDenied

__all__ = [
    "FAIL_POINTS_ENV",
    "Policy",
    "Sandbox",
    "server_wide",
    "session_key_allowed",
]

#: Set to ``1`` in the environment of a server started for tests: fail points may be set.
FAIL_POINTS_ENV = "HUDILITE_TEST_FAIL_POINTS"
#: Functions that call any Java method the server's JVM can reach.
REFLECTIVE = frozenset({"java_method", "reflect", "try_reflect"})
#: Spark's data sources a query may read by path (``<source>.`<path>` ``).
FILE_SOURCES = frozenset(
    {
        "parquet",
        "orc",
        "json",
        "csv",
        "text",
        "avro",
        "binaryfile",
        "xml",
        "delta",
        "hudi",
        "libsvm",
        "image",
    }
)
#: Spark settings a reader or writer may change in its own session.
SESSION_SPARK_KEYS = frozenset(
    {
        "spark.sql.shuffle.partitions",
        "spark.sql.ansi.enabled",
        "spark.sql.adaptive.enabled",
        "spark.sql.adaptive.coalescepartitions.enabled",
        "spark.sql.autobroadcastjointhreshold",
        "spark.sql.crossjoin.enabled",
        "spark.sql.files.maxpartitionbytes",
        "spark.sql.files.opencostinbytes",
        "spark.sql.legacy.timeparserpolicy",
        "spark.sql.storeassignmentpolicy",
        "spark.sql.sources.partitionoverwritemode",
        "spark.sql.decimaloperations.allowprecisionloss",
        "spark.sql.join.prefersortmergejoin",
        "spark.sql.mapkeydeduppolicy",
    }
)
#: Prefixes of settings that act on the whole server, whoever sets them.
_SERVER_WIDE_PREFIXES = (
    "fs.",
    "hadoop.",
    "dfs.",
    "mapreduce.",
    "yarn.",
    "spark.hadoop.",
    "spark.sql.catalog.",
    "spark.sql.extensions",
    "spark.sql.warehouse.dir",
    "spark.sql.catalogimplementation",
    "spark.sql.variable.substitute",  # would expand ${env:...} and ${system:...}
    "spark.sql.runsqlonfiles",
    # Spark must read statements as the sandbox's parser does (string escapes, quotes).
    "spark.sql.ansi.doublequotedidentifiers",
    "spark.sql.parser.",
    "spark.sql.sources.useV1SourceList".lower(),
    "spark.sql.sources.default",
    "spark.driver.",
    "spark.executor.",
    "spark.jars",
    "spark.files",
    "spark.sql.hive.",
    "hudilite.thriftserver.",
)
_INTERNAL = re.compile(r"hudilite[\s`'\"]*\.[\s`'\"]*internal", re.IGNORECASE)
_GLOB = re.compile(r"[*?\[\]{}\\]")
_PATH_CHARS = ("/", ":", "\\")
_ADDED = ("jar", "jars", "file", "files", "archive", "archives")
_DIALECT = Hudilite()
#: Token types after which sqlglot keeps the rest of the statement as one string.
_COMMANDS = frozenset({*_DIALECT.tokenizer_class.COMMANDS, TokenType.EXECUTE})


def server_wide(key: str) -> bool:
    """Whether setting ``key`` would change the whole server rather than one session (or
    how Spark reads statements: the legacy parser switches, but the time parser's)."""
    k = key.strip().lower()
    legacy = k.startswith("spark.sql.legacy.") and k != "spark.sql.legacy.timeparserpolicy"
    return is_storage_option(k) or legacy or k.startswith(_SERVER_WIDE_PREFIXES)


def _names_a_path(key: str) -> bool:
    k = key.lower()
    return k == "path" or (k.endswith((".path", ".dir", "basepath")) and "partition" not in k)


def session_key_allowed(key: str) -> bool:
    """Whether a reader or writer may ``SET key``: one of :data:`SESSION_SPARK_KEYS`, or an
    option hudilite knows that is neither internal, nor server-wide, nor a path."""
    k = key.strip().lower()
    if k.startswith("spark."):
        return k in SESSION_SPARK_KEYS
    known = cfg.find_key(k)
    return known is not None and not known.internal and not server_wide(k) and not _names_a_path(k)


@dataclass(frozen=True)
class Policy:
    """The server-wide part of the sandbox: the warehouse paths are checked against,
    whether fail points may be set (a server started for tests) and whether admins are
    trusted with everything (``hudilite.thriftserver.admin.trusted``)."""

    warehouse: str
    fail_points: bool = False
    admin_trusted: bool = False

    @classmethod
    def for_server(cls, warehouse: str, admin_trusted: bool) -> Policy:
        """The policy of a server starting now (fail points from :data:`FAIL_POINTS_ENV`)."""
        return cls(
            _normalize(warehouse) or warehouse,
            fail_points=os.environ.get(FAIL_POINTS_ENV) == "1",
            admin_trusted=admin_trusted,
        )


#: Looks a persistent view up: ``(database or None for the session's current one, name)``
#: -> ``(its stored SQL, the database its unqualified names resolve in)``, or None.
ViewLookup = Callable[[str | None, str], tuple[str, str] | None]


def _normalize(path: str) -> str | None:
    """``path`` as an absolute local path (symlinks resolved) or a ``scheme://host/path``
    URL with ``..`` folded; None when it has glob characters."""
    if _GLOB.search(path):
        return None
    parts = urlsplit(path)
    if len(parts.scheme) > 1 and parts.scheme.lower() != "file":
        return f"{parts.scheme.lower()}://{parts.netloc}{posixpath.normpath(parts.path or '/')}"
    local = parts.path if parts.scheme.lower() == "file" else path
    return os.path.realpath(local)


class Sandbox:
    """The checks for one session's user: ``role`` under ``policy``; ``views`` finds the
    stored SQL of the persistent views a query reads."""

    def __init__(self, role: str, policy: Policy, views: ViewLookup | None = None) -> None:
        self.role = role
        self.policy = policy
        self.views = views
        self.unrestricted = role == "admin" and policy.admin_trusted
        self.paths_free = role == "admin"

    # ------------------------------------------------------------------ settings
    def check_setting(self, key: str, showing: bool = False) -> None:
        """Refuse ``SET key[=value]`` (``showing``: ``SET key``, which only shows it) when
        the role may not change (or see) ``key``."""
        if self.unrestricted:
            return
        if _INTERNAL.search(key):
            if self.policy.fail_points:
                return  # a server started for tests
            raise PermissionDenied(
                f"permission denied: {key} is a test-only setting (fail points), off on this server"
            )
        if server_wide(key) and not showing:
            raise PermissionDenied(
                f"permission denied: SET {key} would change a server-wide setting; set it "
                "when the server starts (--conf)"
            )
        if self.role != "admin" and not session_key_allowed(key):
            raise PermissionDenied(
                f"permission denied: role {self.role!r} may not set {key} (not a session "
                "setting it may change; see docs/bi-tools.md)"
            )

    # ------------------------------------------------------------------ statements
    def check_statement(self, sql: str) -> None:
        """Refuse one statement's text (already split from its script) if it holds a
        construct the role may not run; a text that does not parse passes (the front end
        refuses it with its syntax error)."""
        if self.unrestricted:
            return
        self._check_text(sql, depth=0)

    def _check_text(
        self, sql: str, depth: int, view: str | None = None, database: str | None = None
    ) -> None:
        """Check ``sql`` (``view``: the view it is the query of, for messages; ``database``:
        where its unqualified names resolve, None for the session's current database)."""
        if depth > 32:
            raise PermissionDenied("permission denied: views nest more than 32 deep")
        if _INTERNAL.search(sql) and not self.policy.fail_points:
            raise PermissionDenied(
                "permission denied: hudilite.internal.* settings (fail points) are off on this "
                "server"
            )
        try:
            tokens = _flat_tokens(sql)
        except TokenError:
            return
        self._check_tokens(tokens, view)
        try:
            nodes = parse_script(sql)
        except ParseError:
            return
        for node in nodes:
            self._check_tree(node, depth, view, database)

    def _deny(self, what: str, view: str | None) -> PermissionDenied:
        where = f" (in view {view})" if view else ""
        return PermissionDenied(f"permission denied: {what}{where} is not allowed on this server")

    def _check_tokens(self, tokens: list[tuple[TokenType, str]], view: str | None) -> None:
        """The parse-independent checks: reflective calls, a script after ``USING``,
        ``EXECUTE IMMEDIATE``, code-loading statements, in any statement's tokens."""
        words = [text.lower() for _, text in tokens]
        for i, (kind, _text) in enumerate(tokens):
            nxt = tokens[i + 1][0] if i + 1 < len(tokens) else None
            if words[i] in REFLECTIVE and nxt == TokenType.L_PAREN:
                raise self._deny(f"{words[i]}() (Java reflection)", view)
            if kind == TokenType.USING and nxt in (TokenType.STRING, TokenType.NATIONAL_STRING):
                raise self._deny(f"TRANSFORM ... USING {tokens[i + 1][1]!r} (an OS command)", view)
            if words[i : i + 2] == ["execute", "immediate"]:
                raise self._deny("EXECUTE IMMEDIATE (SQL built at run time)", view)
            if words[i] == "identifier" and nxt == TokenType.L_PAREN:
                end = _closing(tokens, i + 1)
                if end + 1 < len(tokens) and tokens[end + 1][0] == TokenType.L_PAREN:
                    raise self._deny("IDENTIFIER(...)(...) (a function named at run time)", view)
        if words[:1] == ["add"] and len(words) > 1 and words[1] in _ADDED:
            raise self._deny(f"ADD {words[1].upper()} (code loaded into the server)", view)
        if words[:1] == ["create"] and "function" in words[1:5]:
            raise self._deny("CREATE FUNCTION (a Java class loaded into the server)", view)

    def _check_tree(
        self, root: exp.Expr, depth: int, view: str | None, database: str | None
    ) -> None:
        ctes = {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}
        for node in root.walk():
            if isinstance(node, exp.QueryTransform):
                raise self._deny("TRANSFORM ... USING (an OS command)", view)
            if isinstance(node, exp.Func):
                name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
                if str(name).lower() in REFLECTIVE:
                    raise self._deny(f"{str(name).lower()}() (Java reflection)", view)
            if isinstance(node, HudiExplain):
                inner = node.expression
                if isinstance(inner, exp.Literal):
                    self._check_text(inner.this, depth + 1, view, database)
            if isinstance(node, exp.Directory):
                self._check_path(_literal_text(node.this), "INSERT OVERWRITE DIRECTORY", view)
            if isinstance(node, exp.Table):
                self._check_table(node, ctes, depth, view, database)

    def _check_table(
        self,
        node: exp.Table,
        ctes: set[str],
        depth: int,
        view: str | None,
        database: str | None,
    ) -> None:
        inner = node.this
        if isinstance(inner, exp.Func):
            name = (inner.name if isinstance(inner, exp.Anonymous) else inner.sql_name()).lower()
            args = inner.expressions if isinstance(inner, exp.Anonymous) else []
            if name in TABLE_FUNCTIONS and args:
                target = _literal_text(args[0])
                if target is None or any(c in target for c in _PATH_CHARS):
                    self._check_path(target, f"{name}({target!r})", view)
            return
        if not isinstance(inner, exp.Identifier):
            return
        db, name = node.db or None, node.name
        if db is not None and (
            db.lower() in FILE_SOURCES or "." in db or any(c in name for c in _PATH_CHARS)
        ):
            self._check_path(name, f"{db}.`{name}`", view)
            return
        if any(c in name for c in _PATH_CHARS):
            self._check_path(name, f"`{name}`", view)
            return
        if node.args.get("catalog") or self.views is None:
            return
        if db is None and name.lower() in ctes:
            return
        found = self.views(db or database, name)
        if found is not None:
            stored, context = found
            qualifier = db or database
            label = f"{qualifier}.{name}" if qualifier else name
            self._check_text(stored, depth + 1, label, context)

    def check_call(
        self, procedure: str, args: Sequence[object], named: Mapping[str, object]
    ) -> None:
        """Refuse ``CALL procedure(...)`` naming a table by a folder outside the warehouse
        (its ``path`` parameter, by name or position; readers may call the read-only
        procedures, which read any table they are pointed at)."""
        if self.paths_free:
            return
        spec = procedure_spec(procedure)
        if spec is None:
            return  # unknown: the procedure registry's error
        params = [p.name for p in spec.params]
        bound = dict(zip(params, args, strict=False))
        bound.update({k.lower(): v for k, v in named.items()})
        path = bound.get("path")
        if path is not None:
            self._check_path(str(path), f"CALL {spec.name}(path => {str(path)!r})", None)

    def _check_path(self, path: str | None, what: str, view: str | None) -> None:
        """Refuse reading or writing ``path`` outside the warehouse (for readers and
        writers; admins may name any path)."""
        if self.paths_free:
            return
        found = _normalize(path) if path else None
        wh = self.policy.warehouse
        if found is not None and (found == wh or found.startswith(wh.rstrip("/") + "/")):
            return
        where = f" (in view {view})" if view else ""
        raise PermissionDenied(
            f"permission denied: {what}{where} names a path outside the warehouse {wh}; role "
            f"{self.role!r} may read and write paths only inside it"
        )


def _flat_tokens(sql: str) -> list[tuple[TokenType, str]]:
    """The tokens of ``sql``; a statement sqlglot keeps opaque (``ADD JAR x``, ``EXECUTE
    IMMEDIATE ...``: one command token and the rest as one string) has its words and the
    rest's own tokens instead, so the checks see what Spark will parse."""
    out: list[tuple[TokenType, str]] = []
    tokens = _DIALECT.tokenize(sql)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        rest = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.token_type in _COMMANDS and rest is not None and rest.token_type == TokenType.STRING:
            out += [(TokenType.VAR, w) for w in tok.text.split()]
            out += _flat_tokens(rest.text)
            i += 2
            continue
        out.append((tok.token_type, tok.text))
        i += 1
    return out


def _closing(tokens: list[tuple[TokenType, str]], opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening`` (the last token when
    none does)."""
    depth = 0
    for j in range(opening, len(tokens)):
        if tokens[j][0] == TokenType.L_PAREN:
            depth += 1
        elif tokens[j][0] == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _literal_text(node: exp.Expr | None) -> str | None:
    return node.this if isinstance(node, exp.Literal) and node.is_string else None
