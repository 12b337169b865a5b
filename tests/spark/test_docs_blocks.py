"""The docs run as pasted (issue 27.8): every ```python and ```sql block of README.md and
docs/**/*.md runs, in order, one file at a time, as a reader pasting them would.

Per file: a fresh working folder (relative paths such as ``./warehouse`` land there), the
absolute example paths (``/data/...``, ``/tmp/...``, ``/lake/...``) moved under it, one
Python namespace for the file's Python blocks, and one hudilite SQL session (the default
warehouse, as ``hudilite sql`` without ``--warehouse`` opens it) for its SQL blocks, whose
query results are collected. ``hudilite.spark_session()`` returns the test session.

A block that is not meant to run is marked in the Markdown by an HTML comment on the line
just above its fence, with the reason::

    <!-- docs-test: skip: grammar notation ([IF EXISTS], [LOCATION ...]) -->

``DOCS_TEST_TIMES=1 pytest -s`` prints the time of each SQL statement.
``<!-- docs-test: spark-sql -->`` runs a SQL block through plain ``spark.sql`` (Spark's own
SQL rather than hudilite's), statement by statement. Every unmarked block must run; the
test prints the skipped blocks with their reasons (``pytest -s`` shows them) and the unit
test below checks that every marker names a reason and sits on a Python or SQL block.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*docs-test:\s*(skip|spark-sql)\s*(?::\s*(.*?))?\s*-->\s*$")
# Absolute example paths, moved under the test's folder (quoted, so prose is untouched).
_ABS_PATH = re.compile(r"""(["'])/(data|tmp|lake|landing|chk)/""")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it starts, its language, text and marker."""

    path: str
    line: int
    lang: str
    code: str
    marker: str | None  # None, "skip" or "spark-sql"
    reason: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def doc_files() -> list[Path]:
    """README.md and every Markdown file under docs/ (docs/dev/ included)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """The ```python and ```sql blocks of ``path``, with the marker above each."""
    text = path.read_text()
    rel = str(path.relative_to(ROOT))
    out = []
    for m in _FENCE.finditer(text):
        lang = m.group(2).lower()
        if lang not in ("python", "sql"):
            continue
        start = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mk = _MARKER.search(before)
        code = m.group(3)
        indent = m.group(1)
        if indent:  # a block inside a list item: strip the item's indentation
            code = "\n".join(
                ln[len(indent) :] if ln.startswith(indent) else ln for ln in code.split("\n")
            )
        out.append(
            Block(
                rel,
                start,
                lang,
                code,
                mk.group(1) if mk else None,
                (mk.group(2) or "") if mk else "",
            )
        )
    return out


def _markers_of(path: Path) -> list[tuple[int, str]]:
    text = path.read_text()
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(0))
        for m in re.finditer(r"<!--\s*docs-test[^>]*-->", text)
    ]


RUN_FILES = [p for p in doc_files() if blocks_of(p)]


def test_every_marker_names_a_reason_and_a_block() -> None:
    """A skip marker carries its reason and sits right above a Python or SQL block; no
    marker is misspelt into one the runner would ignore."""
    for path in doc_files():
        marked = {b.line - 1 for b in blocks_of(path) if b.marker}
        for line, text in _markers_of(path):
            assert _MARKER.search(text), f"{path.name}:{line}: unknown marker {text}"
            assert line in marked, f"{path.name}:{line}: marker not right above a python/sql block"
        for b in blocks_of(path):
            if b.marker == "skip":
                assert len(b.reason) >= 8, f"{b.where}: a skipped block needs its reason"


def _split_statements(sql: str) -> list[str]:
    """Plain Spark SQL statements of a block (no ';' inside literals in the docs)."""
    body = "\n".join(ln for ln in sql.split("\n") if not ln.strip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def _spark_state(spark: Any) -> tuple[set[str], set[str], dict[str, str]]:
    dbs = {d.name for d in spark.catalog.listDatabases()}
    views = {t.name for t in spark.catalog.listTables("default")}
    return dbs, views, dict(spark.conf.getAll)


def _restore_spark(spark: Any, before: tuple[set[str], set[str], dict[str, str]]) -> None:
    """Undo what the file's blocks left in the shared session: runtime conf they set
    (``SET spark.sql.shuffle.partitions = 8``), temporary views, Spark databases and
    default-database views that were not there before."""
    dbs, views, conf = before
    for key, value in dict(spark.conf.getAll).items():
        if key not in conf:
            spark.conf.unset(key)
        elif conf[key] != value:
            spark.conf.set(key, conf[key])
    for t in spark.catalog.listTables():
        if t.isTemporary:
            spark.catalog.dropTempView(t.name)
    for d in {d.name for d in spark.catalog.listDatabases()} - dbs:
        spark.sql(f"DROP DATABASE IF EXISTS `{d}` CASCADE")
    for v in {t.name for t in spark.catalog.listTables("default")} - views:
        spark.sql(f"DROP VIEW IF EXISTS default.`{v}`")


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_blocks_run_as_pasted(
    path: Path, spark: Any, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    import hudilite

    monkeypatch.setattr(hudilite, "spark_session", lambda **_: spark)
    monkeypatch.delenv("HUDILITE_WAREHOUSE", raising=False)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = _spark_state(spark)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    sql_session = None
    skipped = []
    try:
        for b in blocks_of(path):
            if b.marker == "skip":
                skipped.append(f"{b.where} ({b.lang}): {b.reason}")
                continue
            code = _ABS_PATH.sub(lambda m: f"{m.group(1)}{tmp_path}/{m.group(2)}/", b.code)
            try:
                if b.lang == "python":
                    exec(compile(code, b.where, "exec"), namespace)
                elif b.marker == "spark-sql":
                    for stmt in _split_statements(code):
                        spark.sql(stmt).collect()
                else:
                    if sql_session is None:
                        sql_session = hudilite.connect(spark=spark)
                    t0 = time.perf_counter()
                    for r in sql_session.iter_script(code):
                        if r.df is not None:
                            r.df.collect()
                        if os.environ.get("DOCS_TEST_TIMES"):
                            print(f"{time.perf_counter() - t0:6.2f} {r.sql.splitlines()[0][:70]}")
                        t0 = time.perf_counter()
            except Exception as exc:  # the block and its first line are the point
                first = b.code.strip().splitlines()[0]
                pytest.fail(f"{b.where} ({first}) failed: {type(exc).__name__}: {exc}")
        check = FINAL_CHECKS.get(str(path.relative_to(ROOT)))
        if check is not None:
            check(namespace, sql_session)
    finally:
        _restore_spark(spark, before)
    with capsys.disabled():
        if skipped:
            print(f"\n{path.relative_to(ROOT)}: {len(skipped)} block(s) not run:")
            for s in skipped:
                print(f"  {s}")


def _readme_final(ns: dict[str, Any], _sql: Any) -> None:
    # The tour ends restored to its savepoint: the write after the savepoint is gone.
    t = ns["t"]
    rows = sorted(tuple(r) for r in t.read().select("uuid", "ts", "fare").collect())
    assert rows == [("a", 2, 11.0)]


def _sql_final(_ns: dict[str, Any], sql: Any) -> None:
    # The Writing block's MERGE leaves the rows its last SELECT's comment shows, and the
    # Changing block's table is gone (renamed, then dropped with PURGE).
    rows = sql.sql("SELECT uuid, ts, fare, city FROM trips ORDER BY uuid").collect()
    assert [tuple(r) for r in rows] == [
        ("a", 3, 10.0, "sf"),
        ("c", 2, 13.0, "sf"),
        ("d", 2, 4.5, "la"),
        ("e", 3, 7.0, "la"),
    ]
    names = {r[1] for r in sql.sql("SHOW TABLES").collect()}
    assert "events" not in names and "old_events" not in names and "trips_rt" in names


#: Checks of the state a file's blocks leave (beyond "every block ran").
FINAL_CHECKS = {"README.md": _readme_final, "docs/sql.md": _sql_final}
