"""docs/procedures.md, the CALL reference generated from the procedure registry (issue 28,
Docs), is in sync with the registry; the generator lists every procedure, parameter and
output column (no JVM)."""

from __future__ import annotations

from pathlib import Path

from hudilite.procedures import REGISTRY, _load_all, reference
from hudilite.procedures.registry import Param

ROOT = Path(__file__).resolve().parents[3]

_load_all()


def test_docs_procedures_md_is_up_to_date() -> None:
    path = ROOT / "docs" / "procedures.md"
    assert path.read_text() == reference.render(), (
        "docs/procedures.md is out of date: run `python -m hudilite.procedures.reference > "
        "docs/procedures.md`"
    )


def test_reference_lists_every_procedure_parameter_and_column() -> None:
    text = reference.render()
    for name, spec in REGISTRY.items():
        assert f"\n### `{name}`\n" in text
        assert f"| [`{name}`](#{name}) | {'no' if spec.read_only else 'yes'} |" in text
        section = text.split(f"\n### `{name}`\n", 1)[1].split("\n### ", 1)[0]
        for i, p in enumerate(spec.params, 1):
            assert f"| {i} | `{p.name}` | {p.type} |" in section
        for o in spec.outputs:
            assert f"| `{o.name}` | {o.type} |" in section


def test_one_section_exactly() -> None:
    text = reference.render()
    section = text.split("\n### `show_table_properties`\n", 1)[1].split("\n### ", 1)[0]
    assert section.splitlines() == [
        "",
        "Shows the table's hoodie.properties, one row per property.",
        "",
        "Details: Rows `(key, value)` of `hoodie.properties` in file order, the first `limit`.",
        "",
        "Writes: nothing (read-only; a Thrift server reader may call it).",
        "",
        "| # | Parameter | Type | Required | Default |",
        "|---|---|---|---|---|",
        "| 1 | `table` | string |  |  |",
        "| 2 | `path` | string |  |  |",
        "| 3 | `limit` | integer |  | `10` |",
        "",
        "| Output column | Type |",
        "|---|---|",
        "| `key` | string |",
        "| `value` | string |",
    ]


def test_defaults_as_written_in_call() -> None:
    assert reference._default(Param("a", "boolean", default=False)) == "`false`"
    assert reference._default(Param("a", "string", default="")) == "`''`"
    assert reference._default(Param("a", "string", default="run")) == "`'run'`"
    assert reference._default(Param("a", "integer")) == ""
    text = reference.render()
    # required parameters are marked: show_commit_files' instant_time is Hudi's required one
    section = text.split("\n### `show_commit_files`\n", 1)[1].split("\n### ", 1)[0]
    assert "| `instant_time` | string | yes |" in section
