"""The interactive side of ``hudilite sql``: reading statements at the prompt and showing
the progress of long ones.

* :class:`LineReader` reads one statement at a time with prompt-toolkit: Enter inserts a
  new line until the text holds a complete statement (a ``;`` outside quotes and comments,
  found with the script splitter the SQL layer uses), history is kept across runs in
  :func:`history_path` (``$HUDILITE_HISTORY``, else ``~/.hudilite/history``), and Tab
  completes keywords, tables, columns and ``CALL`` procedure names (:class:`SqlCompleter`).
  Without a terminal the prompt falls back to ``input()``.
* :class:`StageProgress` polls Spark's status tracker from a thread while a statement runs
  and redraws one line on standard error, as spark-shell's console progress bar does; the
  CLI uses it only at the prompt with a terminal on standard error, so scripts (``-e``,
  ``-f``, piped input) stay quiet.

The completer asks a :class:`CompletionSource` for names; :class:`SessionSource` answers
from a SQL session's catalog (cached until :meth:`SessionSource.invalidate`, which the prompt
calls after each statement, so typing never waits on the warehouse twice).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from hudilite.procedures import procedure_names
from hudilite.sqlext.dialect import sql_keywords
from hudilite.sqlext.statements import split_script_positions
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState

if TYPE_CHECKING:
    from hudilite.sqlext.session import Session

__all__ = [
    "CONTINUE_PROMPT",
    "HISTORY_ENV",
    "PROMPT",
    "CompletionSource",
    "LineReader",
    "SessionSource",
    "SqlCompleter",
    "StageProgress",
    "history_path",
    "progress_line",
    "split_complete",
    "statement_complete",
]

PROMPT = "hudilite> "
CONTINUE_PROMPT = "      -> "
HISTORY_ENV = "HUDILITE_HISTORY"
EXIT_WORDS = ("exit", "quit")


def history_path() -> Path:
    """Where the prompt's history lives: ``$HUDILITE_HISTORY``, else ``~/.hudilite/history``."""
    return Path(os.environ.get(HISTORY_ENV) or Path.home() / ".hudilite" / "history")


# --------------------------------------------------------------------------------------------
# statements across lines


def split_complete(text: str) -> tuple[str, str]:
    """``(complete, rest)``: the statements of ``text`` ended by ``;`` and the unfinished
    statement after them (text in an open quote or comment counts as unfinished)."""
    sentinel = "\x00end"
    pieces = split_script_positions(text + "\n" + sentinel)
    last, line, column = pieces[-1]
    if last == sentinel:
        return text, ""
    if not last.endswith(sentinel):  # an open block comment swallowed the sentinel
        return "", text
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    start += column - 1
    return text[:start], text[start:]


def statement_complete(text: str) -> bool:
    """Whether Enter should run ``text``: it is empty, ``exit``/``quit``, or every
    statement in it ends with ``;`` outside quotes and comments."""
    if not text.strip() or text.strip().rstrip(";").strip().lower() in EXIT_WORDS:
        return True
    complete, rest = split_complete(text + "\n")
    return bool(complete.strip()) and not rest.strip()


# --------------------------------------------------------------------------------------------
# completion


class CompletionSource(Protocol):
    """The names the completer offers."""

    def relations(self, database: str | None) -> list[str]:
        """Tables and views of ``database`` (None: the current one, plus temp views)."""
        ...

    def databases(self) -> list[str]:
        """The warehouse's databases."""
        ...

    def columns(self, relation: str) -> list[str]:
        """The columns of ``relation`` (``t`` or ``db.t``); empty when unknown."""
        ...

    def procedures(self) -> list[str]:
        """``CALL`` procedure names."""
        ...


class SessionSource:
    """:class:`CompletionSource` over a SQL session's catalog, cached until
    :meth:`invalidate`."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._cache: dict[tuple[str, str], list[str]] = {}

    def invalidate(self) -> None:
        """Forget what was read (a statement may have created or dropped something)."""
        self._cache.clear()

    def _cached(self, key: tuple[str, str], read: Callable[[], list[str]]) -> list[str]:
        if key not in self._cache:
            try:
                self._cache[key] = read()
            except Exception:  # completion must never break the prompt
                self._cache[key] = []
        return self._cache[key]

    def relations(self, database: str | None) -> list[str]:
        """Tables (with ``_ro``/``_rt`` of MOR tables) and views; temp views too for the
        current database."""
        catalog = self.session.catalog
        db = (database or self.session.current_database).lower()

        def read() -> list[str]:
            names = [*catalog.list_tables(db), *catalog.list_views(db)]
            if database is None:
                names += [t.name for t in self.session.spark.catalog.listTables() if t.isTemporary]
            return sorted({n for n in names if not n.startswith("__hudilite_")})

        return self._cached(("relations", f"{database is None}:{db}"), read)

    def databases(self) -> list[str]:
        """The warehouse's databases."""
        return self._cached(("databases", ""), self.session.catalog.list_databases)

    def columns(self, relation: str) -> list[str]:
        """Columns of a hudilite table (Hudi's meta columns included) or a view."""
        db, _, name = relation.lower().rpartition(".")
        db = db or self.session.current_database
        catalog = self.session.catalog

        def read() -> list[str]:
            if catalog.view_exists(db, name):
                return catalog.get_view(db, name).column_names
            if not catalog.table_exists(db, name):
                return []
            location = catalog.get_table(db, name).location
            return list(TableState.load(FileSystemGateway(location)).storage_schema.names)

        return self._cached(("columns", f"{db}.{name}"), read)

    def procedures(self) -> list[str]:
        """``CALL`` procedure names."""
        return self._cached(("procedures", ""), procedure_names)


# Words after which a table name comes.
_TABLE_WORDS = {
    "FROM",
    "JOIN",
    "INTO",
    "UPDATE",
    "TABLE",
    "DESCRIBE",
    "DESC",
    "VIEW",
    "USING",
    "ON",
    "TRUNCATE",
}
_WORD = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\.?$|$")
_TOKENS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|[A-Za-z_][\w.]*|\S")


class SqlCompleter(Completer):
    """Tab completion for hudilite SQL: procedure names after ``CALL``, tables after
    ``FROM``/``JOIN``/``INTO``/..., ``db.`` tables, ``t.`` columns, and otherwise the
    keywords and the columns of the tables the statement names."""

    def __init__(self, source: CompletionSource) -> None:
        self.source = source
        self.keywords = sql_keywords()

    def candidates(self, text: str) -> tuple[str, list[str]]:
        """``(word, names)``: the word being typed at the end of ``text`` and the names
        that complete it, in the order offered."""
        word = _WORD.search(text)
        typed = word.group(0) if word else ""
        before = text[: len(text) - len(typed)]
        tokens = _TOKENS.findall(before)
        previous = tokens[-1].upper() if tokens else ""
        statement_words = [t.upper() for t in tokens]
        if "." in typed:
            prefix, _, partial = typed.rpartition(".")
            names = self._dotted(prefix, tokens)
            return partial, _matching(names, partial)
        if statement_words[:1] == ["CALL"] and len(tokens) == 1:
            return typed, _matching(self.source.procedures(), typed)
        if previous in _TABLE_WORDS or (previous == "," and _in_from(statement_words)):
            names = self.source.relations(None) + self.source.databases()
            return typed, _matching(names, typed)
        columns: list[str] = []
        for rel in _named_relations(tokens):
            columns += self.source.columns(rel)
        keywords = [k if typed[:1].isupper() or not typed else k.lower() for k in self.keywords]
        return typed, _matching(list(dict.fromkeys(columns)), typed) + _matching(keywords, typed)

    def _dotted(self, prefix: str, tokens: list[str]) -> list[str]:
        """Names after ``prefix.``: columns of a table (or alias), else tables of a database."""
        aliases = _aliases(tokens)
        relation = aliases.get(prefix.lower(), prefix)
        columns = self.source.columns(relation)
        if columns:
            return columns
        if "." not in prefix and prefix.lower() in (d.lower() for d in self.source.databases()):
            return self.source.relations(prefix)
        return []

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        """prompt-toolkit's hook: the candidates for the text before the cursor."""
        typed, names = self.candidates(document.text_before_cursor)
        for name in names:
            yield Completion(name, start_position=-len(typed))


def _matching(names: Iterable[str], typed: str) -> list[str]:
    low = typed.lower()
    return [n for n in names if n.lower().startswith(low) and n.lower() != low]


def _in_from(words: list[str]) -> bool:
    """Whether the statement's last clause keyword is FROM (``FROM a, b``)."""
    for w in reversed(words):
        if w in ("FROM", "JOIN"):
            return True
        if w in ("SELECT", "WHERE", "GROUP", "ORDER", "SET", "ON", "HAVING"):
            return False
    return False


def _named_relations(tokens: list[str]) -> list[str]:
    """The tables a statement names after ``FROM``/``JOIN``/``INTO``/``UPDATE``/``TABLE``."""
    out = []
    for i, tok in enumerate(tokens[:-1]):
        if tok.upper() in _TABLE_WORDS and re.fullmatch(r"[A-Za-z_][\w.]*", tokens[i + 1]):
            out.append(tokens[i + 1])
    return out


def _aliases(tokens: list[str]) -> dict[str, str]:
    """``alias -> table`` for ``FROM trips t`` and ``JOIN trips AS t``."""
    out: dict[str, str] = {}
    ident = re.compile(r"[A-Za-z_][\w.]*")
    for i, tok in enumerate(tokens[:-2]):
        if tok.upper() not in _TABLE_WORDS or not ident.fullmatch(tokens[i + 1]):
            continue
        j = i + 2
        if tokens[j].upper() == "AS" and j + 1 < len(tokens):
            j += 1
        alias = tokens[j]
        if ident.fullmatch(alias) and alias.upper() not in _RESERVED_AFTER_TABLE:
            out[alias.lower()] = tokens[i + 1]
    return out


_RESERVED_AFTER_TABLE = {
    "WHERE",
    "JOIN",
    "LEFT",
    "RIGHT",
    "INNER",
    "OUTER",
    "FULL",
    "CROSS",
    "ON",
    "USING",
    "GROUP",
    "ORDER",
    "LIMIT",
    "SET",
    "VALUES",
    "SELECT",
    "UNION",
    "TIMESTAMP",
    "VERSION",
}


# --------------------------------------------------------------------------------------------
# reading statements


class LineReader:
    """Reads one statement per call with prompt-toolkit (see the module doc)."""

    def __init__(
        self,
        completer: Completer | None = None,
        history: Path | None = None,
        **terminal: Any,
    ) -> None:
        path = history or history_path()
        store: History
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            store = FileHistory(str(path))
        except OSError:  # a read-only home: history for this run only, never a crash
            store = InMemoryHistory()
        keys = KeyBindings()

        @keys.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if statement_complete(buffer.text):
                buffer.validate_and_handle()
            else:
                buffer.insert_text("\n")

        self._session: PromptSession[str] = PromptSession(
            history=store,
            completer=completer,
            complete_while_typing=False,
            complete_in_thread=True,
            multiline=True,
            key_bindings=keys,
            prompt_continuation=CONTINUE_PROMPT,
            **terminal,  # input=/output= (tests drive the prompt through a pipe)
        )

    def __call__(self, prompt: str) -> str:
        """The next statement (possibly several lines); EOFError on Ctrl-D."""
        return self._session.prompt(prompt)


def make_reader(source: SessionSource) -> Callable[[str], str]:
    """The prompt's reader: prompt-toolkit on a terminal, else ``input()``."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return input
    reader = LineReader(SqlCompleter(source))

    def read(prompt: str) -> str:
        source.invalidate()
        return reader(prompt)

    return read


# --------------------------------------------------------------------------------------------
# progress


def progress_line(stages: list[tuple[int, int, int, int]], width: int = 80) -> str:
    """spark-shell's progress bar for the active stages ``(stage id, completed tasks,
    running tasks, total tasks)``: ``[Stage 3:=====>        (12 + 2) / 40]``, the stages
    side by side in ``width`` columns."""
    if not stages:
        return ""
    per = max(width // len(stages), 20)
    parts = []
    for stage, done, running, total in stages:
        header = f"[Stage {stage}:"
        tail = f"({done} + {running}) / {total}]"
        bar = max(per - len(header) - len(tail), 0)
        filled = bar * done // total if total else 0
        body = "=" * filled + (">" if filled < bar else "") + " " * max(bar - filled - 1, 0)
        parts.append(header + body[:bar] + tail)
    return "".join(parts)[:width]


class StageProgress:
    """Redraws :func:`progress_line` on ``out`` every ``interval`` seconds while a statement
    runs (:meth:`running`), once it has run ``delay`` seconds (short statements show
    nothing). :meth:`clear` erases the line and stops drawing until the next statement: the
    CLI calls it before printing a result, so rows never land on a progress line."""

    def __init__(
        self, spark: object, out: TextIO, *, interval: float = 0.2, delay: float = 0.5
    ) -> None:
        self.spark = spark
        self.out = out
        self.interval = interval
        self.delay = delay
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._drawn = 0

    def _stages(self) -> list[tuple[int, int, int, int]]:
        tracker = self.spark.sparkContext.statusTracker()  # type: ignore[attr-defined]
        out = []
        for stage_id in sorted(tracker.getActiveStageIds()):
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                out.append((stage_id, info.numCompletedTasks, info.numActiveTasks, info.numTasks))
        return out

    def _run(self, stop: threading.Event) -> None:
        if stop.wait(self.delay):
            return
        while not stop.is_set():
            try:
                line = progress_line(self._stages())
            except Exception:  # the JVM may be going away: stop drawing
                return
            with self._lock:
                if stop.is_set():
                    return
                if line or self._drawn:  # nothing to draw before the first Spark job
                    if len(line) < self._drawn:
                        # Erase the longer line first: padding the new one would leave the
                        # cursor at the old width, where the result grid would then start.
                        self.out.write("\r" + " " * self._drawn)
                    self.out.write("\r" + line)
                    self.out.flush()
                    self._drawn = len(line)
            stop.wait(self.interval)

    def clear(self) -> None:
        """Erase the progress line and draw no more for the running statement."""
        with self._lock:
            self._stop.set()
            if self._drawn:
                self.out.write("\r" + " " * self._drawn + "\r")
                self.out.flush()
                self._drawn = 0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Show progress while the block runs."""
        stop = self._stop = threading.Event()
        thread = threading.Thread(
            target=self._run, args=(stop,), daemon=True, name="hudilite-progress"
        )
        thread.start()
        try:
            yield
        finally:
            self.clear()
            thread.join()
