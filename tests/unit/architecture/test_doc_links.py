"""Links between the docs resolve (issue 28, the docs split): every relative Markdown link in
README.md and docs/**/*.md names a file of the repo, and a link with an anchor names a
heading of that file (GitHub's anchor rule: lower case, punctuation dropped, spaces to
hyphens). Code and docstrings that cite a doc by path (``docs/dev/hudi-format.md`` §3) name a
file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_DOC_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text())
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def test_anchor_rule() -> None:
    assert _anchor("Writing a stream: `Table.write_stream`") == "writing-a-stream-tablewrite_stream"
    assert _anchor("The `hudilite sql` command") == "the-hudilite-sql-command"


def test_relative_links_resolve() -> None:
    broken = []
    for md in _markdown_files():
        # code spans become a placeholder: a link's text may be code, a code span no link
        text = _CODE.sub("x", _FENCE.sub("", md.read_text()))
        for target in _LINK.findall(text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (md.parent / file_part).resolve() if file_part else md
            where = f"{md.relative_to(ROOT)} -> {target}"
            if not dest.exists():
                broken.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{where}: no such heading")
    assert broken == []


def test_doc_paths_cited_in_code_exist() -> None:
    missing = []
    for folder in ("hudilite", "sqlext", "catalog", "procedures", "benchmarks", "tests"):
        for py in (ROOT / folder).rglob("*.py"):
            for cited in set(_DOC_PATH.findall(py.read_text())):
                if not (ROOT / cited).exists():
                    missing.append(f"{py.relative_to(ROOT)}: {cited}")
    assert missing == []
