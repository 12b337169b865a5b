"""Regenerate the scenario table of ``docs/reliability.md`` from a run of ``tests/faults``.

Usage (from the repository root)::

    .venv/bin/python -m tests.faults.report            # runs the suite, then writes the table
    .venv/bin/python -m tests.faults.report a.xml b.xml  # from --junitxml reports (a later
                                                         # report's cases replace earlier ones)

Each test function is one scenario; its parametrized cases are the cases tried. The
guarantee column is the ``Guarantee:`` sentence of the test's docstring, so the table
cannot drift from what the tests check.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC = REPO_ROOT / "docs" / "reliability.md"
START, END = "<!-- scenarios:start -->", "<!-- scenarios:end -->"


def run_suite(xml: Path) -> None:
    """Run ``tests/faults`` writing a JUnit XML report (failures do not stop the report)."""
    subprocess.run(
        [sys.executable, "-m", "pytest", "tests/faults", "-q", "-p", "no:cacheprovider",
         f"--junitxml={xml}"],
        cwd=REPO_ROOT,
        check=False,
    )  # fmt: skip


def outcomes(xmls: list[Path]) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """``(module, function) -> [(case id, outcome, reason)]`` of JUnit XML reports."""
    latest: dict[tuple[str, str], ET.Element] = {}
    for xml in xmls:
        for case in ET.parse(xml).getroot().iter("testcase"):
            latest[(case.get("classname", ""), case.get("name", ""))] = case
    out: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    for case in latest.values():
        name = case.get("name", "")
        func, _, param = name.partition("[")
        outcome, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, reason = "failed", (child.get("message") or "")[:120]
            elif child.tag == "skipped":
                if child.get("type") == "pytest.xfail":
                    outcome, reason = "xfailed", child.get("message") or ""
                else:
                    outcome, reason = "skipped", child.get("message") or ""
        out[(case.get("classname", ""), func)].append((param.rstrip("]"), outcome, reason))
    return out


def guarantee(module: str, func: str) -> str:
    """The ``Guarantee:`` sentence of a test's docstring (one line)."""
    doc = inspect.getdoc(getattr(importlib.import_module(module), func, None)) or ""
    text = " ".join(doc.split())
    match = re.search(r"Guarantee:\s*(.*)", text)
    return (match.group(1) if match else text).replace("|", "\\|")


def _exists(module: str, func: str) -> bool:
    try:
        return callable(getattr(importlib.import_module(module), func, None))
    except ImportError:
        return False


def _first_line(reason: str) -> str:
    return (reason.removeprefix("reason: ").strip().splitlines() or [""])[0][:160]


def table(results: dict[tuple[str, str], list[tuple[str, str, str]]]) -> str:
    """The Markdown table: one row per scenario."""
    lines = [
        "| Scenario | Cases | Guarantee shown | Tried | Passed | Still failing (why) |",
        "|---|---|---|---|---|---|",
    ]
    total = passed = 0
    for (module, func), cases in sorted(results.items()):
        if module.endswith("test_failpoints") or not _exists(module, func):
            continue  # the seam's own tests; or a test renamed since an older report
        ok = sum(1 for _, o, _ in cases if o == "passed")
        tried = sum(1 for _, o, _ in cases if o != "skipped")
        total, passed = total + tried, passed + ok
        failing = sorted({f"{p or 'all'}: {_first_line(r)}" for p, o, r in cases if o != "passed"})
        ids = ", ".join(f"`{p}`" for p, _, _ in cases if p) or "-"
        lines.append(
            f"| `{module.rsplit('.', 1)[-1]}::{func}` | {ids} | {guarantee(module, func)} "
            f"| {tried} | {ok} | {'; '.join(failing).replace('|', '/') or '-'} |"
        )
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines.append("")
    lines.append(f"**{passed} of {total} cases passed** (run of {stamp}).")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv:
        xmls = [Path(a) for a in argv]
    else:
        xmls = [Path(tempfile.mkdtemp()) / "faults.xml"]
        run_suite(xmls[0])
    doc = DOC.read_text()
    head, _, rest = doc.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}\n{table(outcomes(xmls))}\n{END}{tail}")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
