"""README code blocks run as pasted (issue 27.8): each Python block listed here is taken
from README.md as it stands and run in one namespace on the test session, with the
absolute example paths (``/data/...``) moved under a temporary folder. The blocks run in
order, as a reader pastes them; a block that fails names its first line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The README blocks (by the heading above them) that run as pasted, in reading order.
RUNNABLE = ["## Use", "### Evolve", "### Merge-on-read and table services"]


def python_blocks(text: str) -> dict[str, list[str]]:
    """The ```python blocks of a Markdown text under each heading."""
    blocks: dict[str, list[str]] = {}
    heading = ""
    for m in re.finditer(r"^(#{1,4} [^\n]+)$|^```python\n(.*?)^```$", text, re.M | re.S):
        if m.group(1):
            heading = m.group(1).strip()
        else:
            blocks.setdefault(heading, []).append(m.group(2))
    return blocks


def test_readme_blocks_run_as_pasted(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import hudilite

    monkeypatch.setattr(hudilite, "spark_session", lambda **_: spark)
    blocks = python_blocks((ROOT / "README.md").read_text())
    namespace: dict[str, Any] = {}
    for heading in RUNNABLE:
        assert heading in blocks, f"README has no Python block under {heading!r}"
        for code in blocks[heading]:
            code = code.replace('"/data/', f'"{tmp_path}/data/')
            try:
                exec(compile(code, f"README.md {heading}", "exec"), namespace)
            except Exception as exc:  # pragma: no cover - the message is the point
                pytest.fail(f"README block under {heading!r} ({code.splitlines()[0]}): {exc!r}")
    t = namespace["t"]
    # The merge-on-read block ends restored to its savepoint: its first write, then
    # (compaction, clean) a write rolled back; the write after the savepoint is gone.
    assert [tuple(r) for r in t.read().select("uuid", "ts", "fare").collect()] == [("a", 2, 11.0)]
