"""Every type ``Table`` returns is importable from :mod:`hudilite.table.results` and from
:mod:`hudilite` (issue 28: results exported from one module), without loading the engine on
``import hudilite``."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.table import groups, results
from hudilite.table.api import Table

ROOT = Path(__file__).resolve().parents[3]
#: ``*Result`` classes that no public API returns: the metadata table's initialization
#: report stays inside the engine.
INTERNAL_RESULTS = {"InitResult"}


def _classes(annotation: Any) -> Iterator[type]:
    """The classes named in a resolved annotation (``list[X]``, ``X | None``, ...)."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _classes(arg)
    origin = typing.get_origin(annotation)
    if isinstance(origin, type):
        yield origin


def _returned(owner: type, prefix: str, out: dict[str, type]) -> None:
    for name, member in inspect.getmembers(owner):
        if name.startswith("_") and name != "__call__":
            continue
        func = member.fget if isinstance(member, property) else member
        if not callable(func) or not hasattr(func, "__annotations__"):
            continue
        hints = typing.get_type_hints(func)
        for cls in _classes(hints.get("return")):
            if cls.__module__ == groups.__name__:
                # A method group (``t.services``, ``t.savepoints`` ...): what its methods
                # return is what the table returns.
                _returned(cls, f"{prefix}{name}.", out)
            elif cls.__module__.startswith("hudilite") and cls is not Table:
                out[f"{prefix}{name}:{cls.__name__}"] = cls


def returned_types() -> dict[str, type]:
    """Method or property name -> each hudilite class its return annotation names (Table
    itself, which ``create``/``load`` return, is ``hudilite.Table``; a method group's
    methods count as the table's, as ``savepoints.list``)."""
    out: dict[str, type] = {}
    _returned(Table, "", out)
    return out


def test_every_type_a_table_method_returns_is_in_results():
    found = returned_types()
    # The walker sees through lists, optionals, properties and the method groups.
    assert {
        "write:WriteResult",
        "clean:CleanResult",
        "services.clean:CleanResult",
        "savepoints.list:SavepointInfo",
        "savepoints.__call__:SavepointInfo",
        "compact:CompactionResult",
        "schedule_clustering:ClusteringPlan",
        "snapshot:TableSnapshot",
        "config:TableConfig",
        "timeline:Instant",
        "inspect.timeline:Instant",
        "rollback:RollbackResult",
    } <= set(found)
    missing = {key for key, cls in found.items() if getattr(results, cls.__name__, None) is not cls}
    assert missing == set()


def test_every_result_class_of_the_engine_is_in_results():
    defined = set()
    for path in (ROOT / "hudilite").rglob("*.py"):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Result"):
                defined.add(node.name)
    assert "CleanResult" in defined
    assert defined - INTERNAL_RESULTS - set(results.__all__) == set()


def test_hudilite_reexports_the_results_lazily():
    for name in results.__all__:
        assert name in hudilite.__all__
        assert getattr(hudilite, name) is getattr(results, name)
    code = (
        "import sys, hudilite\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('hudilite.')}))\n"
        "hudilite.CleanResult\n"
        "print('hudilite.services.clean' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.splitlines()
    assert "services" not in out[0] and "table" not in out[0], out[0]
    assert out[1] == "True"


def test_a_name_neither_defined_nor_exported_is_an_attribute_error():
    with pytest.raises(AttributeError) as info:
        hudilite.NoSuchResult  # noqa: B018
    assert str(info.value) == "module 'hudilite' has no attribute 'NoSuchResult'"
