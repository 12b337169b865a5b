"""Import layering: every package of the engine and of the SQL layers sits in one layer of
:data:`LAYERS` and imports only its own layer and those below; no import cycles, between
modules or between packages; pyspark imported only by the modules listed in
:data:`PYSPARK_MODULES`.

Static analysis of every ``import`` statement (``ast``), wherever it is: module level,
inside functions and under ``if TYPE_CHECKING:`` -- an import moved into a function still
ties the modules together, it only hides the cycle from the interpreter. An import inside a
function must say why it is lazy (a ``# why`` comment just above it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
#: Source folder -> the package it installs as (pyproject's package-dir mapping).
PACKAGES = {
    "hudilite": "hudilite",
    "sqlext": "hudilite.sqlext",
    "catalog": "hudilite.catalog",
    "procedures": "hudilite.procedures",
}
#: The layers, lowest first: a module may import its own layer and the layers below. Each
#: entry names packages (or top-level modules); a module belongs to the longest entry that
#: is it or contains it. Entries of one layer may import each other, but the package graph
#: must stay free of cycles (:func:`test_no_package_cycles`).
#:
#: ``hudilite`` itself is the public facade (``hudilite.connect()`` opens a SQL session,
#: ``hudilite.Table``, ``hudilite.spark_session()``): it sits above every layer it fronts,
#: with the CLI and the Thrift server (it serves sqlext sessions); nothing below may import it
#: (``from hudilite import config`` names the submodule, not the root).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("hudilite.errors",),
    ("hudilite.config", "hudilite.failpoints"),
    (
        "hudilite.schema",
        "hudilite.merge",
        "hudilite.keygen",
        "hudilite.keygen_ambiguity",
        "hudilite.keygen_dates",
        "hudilite.partition_segments",
        "hudilite.virtual_keys",
        "hudilite.auto_keys",
    ),
    ("hudilite.storage",),
    ("hudilite.timeline",),
    ("hudilite.filegroup",),
    # table state: the loaded config and timeline, hoodie.properties, table creation
    ("hudilite.tablestate",),
    ("hudilite.metadata",),  # the metadata table (.hoodie/metadata)
    ("hudilite.read", "hudilite.index"),
    ("hudilite.write",),
    ("hudilite.services",),
    ("hudilite.spark",),
    ("hudilite.table",),  # the facade: Table
    ("hudilite.catalog",),
    ("hudilite.procedures",),
    ("hudilite.sqlext",),
    ("hudilite.thriftserver", "hudilite.cli", "hudilite"),
)

#: Where pyspark may be imported at run time (imports under ``if TYPE_CHECKING:`` do not
#: count: a module that needs pyspark only for annotations imports it there). No other
#: module imports it itself; the engine's file work and the catalog load without it.
#: Any module of these packages: the Spark jobs, session and conversions; the Table facade
#: (reads return DataFrames, writes take them); the CLI; the
#: Thrift server (it streams DataFrames to clients).
PYSPARK_PACKAGES = ("hudilite.spark", "hudilite.table", "hudilite.cli", "hudilite.thriftserver")
#: And these modules, named one by one.
PYSPARK_MODULES = {
    # the SQL front end: Spark types, column expressions, the SparkSession
    "hudilite.sqlext.ddl_common",
    "hudilite.sqlext.ddl_create",
    "hudilite.sqlext.ddl_show",
    "hudilite.sqlext.dml",
    "hudilite.sqlext.dml_merge",
    "hudilite.sqlext.session",
    "hudilite.sqlext.spark_types",
    "hudilite.sqlext.table_function_metadata",
    # CALL procedures that raise Spark's AnalysisException or build columns
    "hudilite.procedures.cleaning",
    "hudilite.procedures.clustering",
    "hudilite.procedures.commits",
    "hudilite.procedures.tables",
    # hdfs_parquet_import and run_bootstrap read their source folders with Spark
    "hudilite.procedures.parquet_import",
}


def module_files(root: Path, packages: Mapping[str, str]) -> dict[str, tuple[Path, bool]]:
    """Every module under ``root``'s package folders: name -> (file, is a package)."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder, package in packages.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            out[".".join([package, *parts])] = (path, is_package)
    return out


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(tree):  # walks function bodies and TYPE_CHECKING blocks too
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def import_graph(modules: Mapping[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports (``from pkg import sub`` names the
    submodule when ``sub`` is one, else the package)."""
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        edges: set[str] = set()
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                targets = [
                    f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                    for a in node.names
                ]
            for target in targets:
                # ``import a.b.c`` depends on the innermost module the project has.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def unit(module: str) -> str | None:
    """The entry of :data:`LAYERS` ``module`` belongs to (the longest that contains it)."""
    best = None
    for entry in (e for layer in LAYERS for e in layer):
        inside = module == entry or (entry != "hudilite" and module.startswith(entry + "."))
        if inside and (best is None or len(entry) > len(best)):
            best = entry
    return best


def rank(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer."""
    entry = unit(module)
    if entry is None:
        raise AssertionError(f"{module} has no layer: add its package to LAYERS")
    return next(i for i, layer in enumerate(LAYERS) if entry in layer)


def layer_violations(graph: Mapping[str, set[str]]) -> set[tuple[str, str]]:
    """Imports of a higher layer from a lower one."""
    return {
        (src, dst) for src, targets in graph.items() for dst in targets if rank(dst) > rank(src)
    }


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the entries of :data:`LAYERS`."""
    out: dict[str, set[str]] = {}
    for src, targets in graph.items():
        edges = out.setdefault(str(unit(src)), set())
        edges.update(str(unit(t)) for t in targets if unit(t) != unit(src))
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(module_files(ROOT, PACKAGES))


def test_no_import_cycles(graph: dict[str, set[str]]) -> None:
    found = cycles(graph)
    assert {tuple(sorted(c)) for c in found} == set()


def test_every_module_has_a_layer(graph: dict[str, set[str]]) -> None:
    """A new package is placed in :data:`LAYERS` before it can be imported."""
    assert {m for m in graph if unit(m) is None} == set()


def test_layers_import_downwards_only(graph: dict[str, set[str]]) -> None:
    # No exception: hudilite.save, the last upward import (spark/save.py importing Table),
    # now sits beside Table in hudilite/table/save.py.
    assert layer_violations(graph) == set()


def test_no_package_cycles(graph: dict[str, set[str]]) -> None:
    found = cycles(package_graph(graph))
    assert {tuple(sorted(c)) for c in found} == set()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run (module level or in functions), not those under TYPE_CHECKING."""
    if isinstance(node, ast.If) and _is_type_checking(node):
        for child in node.orelse:
            yield from runtime_imports(child)
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    for child in ast.iter_child_nodes(node):
        yield from runtime_imports(child)


def imports_pyspark(path: Path) -> bool:
    for node in runtime_imports(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        if any(n and (n == "pyspark" or n.startswith("pyspark.")) for n in names):
            return True
    return False


def function_imports_without_reason(path: Path) -> list[int]:
    """Lines of imports inside functions with no ``# why`` comment in the lines just above."""
    text = path.read_text()
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    above = lines[max(0, inner.lineno - 4) : inner.lineno]
                    if not any("# why" in line for line in above):
                        out.append(inner.lineno)
    return sorted(set(out))


def test_only_the_listed_modules_import_pyspark() -> None:
    modules = module_files(ROOT, PACKAGES)
    found = {name for name, (path, _) in modules.items() if imports_pyspark(path)}
    found = {n for n in found if not any(n.startswith(p + ".") for p in PYSPARK_PACKAGES)}
    assert found - PYSPARK_MODULES == set(), "import pyspark here only under TYPE_CHECKING"
    assert PYSPARK_MODULES - found == set(), "no longer imports pyspark: drop it from the list"


def test_function_level_imports_say_why() -> None:
    """Imports belong at module level; a lazy one (pyspark kept out of engine imports, an
    optional dependency) says why in a ``# why`` comment just above it."""
    unexplained = {
        f"{path.relative_to(ROOT)}:{line}"
        for path, _ in module_files(ROOT, PACKAGES).values()
        for line in function_imports_without_reason(path)
    }
    assert unexplained == set()


def test_the_sql_packages_are_seen(graph: dict[str, set[str]]) -> None:
    assert "hudilite.sqlext.session" in graph
    assert "hudilite.catalog.warehouse" in graph
    assert "hudilite.procedures.registry" in graph
    assert "hudilite.sqlext.statements" in graph["hudilite.sqlext.session"]


# ------------------------------------------------------------------ the checker itself


def _tree(tmp_path: Path, files: Mapping[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph(module_files(tmp_path, PACKAGES))


def test_checker_sees_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hudilite/__init__.py": "",
            "sqlext/__init__.py": "",
            "sqlext/a.py": "from .b import x\n",
            "sqlext/b.py": "def f():\n    from hudilite.sqlext import a\n",
            "sqlext/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from .a import y\n",
        },
    )
    assert graph["hudilite.sqlext.b"] == {"hudilite.sqlext.a"}
    assert cycles(graph) == {frozenset({"hudilite.sqlext.a", "hudilite.sqlext.b"})}
    assert graph["hudilite.sqlext.c"] == {"hudilite.sqlext.a"}


def test_checker_sees_upward_imports(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hudilite/__init__.py": "",
            "hudilite/table.py": "def f():\n    import hudilite.catalog.warehouse\n",
            "hudilite/cli.py": "from hudilite.sqlext import session\n",
            "catalog/__init__.py": "",
            "catalog/warehouse.py": "from hudilite.procedures import registry\n",
            "procedures/__init__.py": "",
            "procedures/registry.py": "from ..sqlext.session import Session\n",
            "sqlext/__init__.py": "",
            "sqlext/session.py": (
                "from hudilite import table\nfrom hudilite.catalog import warehouse\n"
            ),
        },
    )
    assert layer_violations(graph) == {
        ("hudilite.table", "hudilite.catalog.warehouse"),
        ("hudilite.catalog.warehouse", "hudilite.procedures.registry"),
        ("hudilite.procedures.registry", "hudilite.sqlext.session"),
    }


def test_checker_sees_runtime_pyspark_imports_only(tmp_path: Path) -> None:
    files = {
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from pyspark.sql import DataFrame\n",
        "b.py": "def f():\n    # why lazy: a test\n    import pyspark.sql.functions as F\n",
        "c.py": "import pyspark\n",
        "d.py": "import pysparkling\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert [n for n in sorted(files) if imports_pyspark(tmp_path / n)] == ["b.py", "c.py"]


def test_checker_sees_unexplained_function_imports(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "import os\n\n\ndef f():\n    import json\n\n\ndef g():\n"
        "    # why lazy: optional\n    import boto3\n"
    )
    assert function_imports_without_reason(path) == [5]


def test_checker_sees_upward_imports_and_package_cycles_in_the_engine(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hudilite/__init__.py": "",
            "hudilite/storage/__init__.py": "",
            "hudilite/storage/parquet_io.py": (
                "def f():\n    from hudilite.index.bloom_filter import BloomFilter\n"
            ),
            "hudilite/index/__init__.py": "",
            "hudilite/index/bloom_filter.py": "",
            "hudilite/index/simple.py": "from hudilite.read import planner\n",
            "hudilite/read/__init__.py": "",
            "hudilite/read/planner.py": "from ..index.bloom_filter import BloomFilter\n",
            "hudilite/newpkg/__init__.py": "",
        },
    )
    assert layer_violations(graph) == {
        ("hudilite.storage.parquet_io", "hudilite.index.bloom_filter"),
    }
    # read and index share a layer, but may not import each other both ways.
    assert cycles(package_graph(graph)) == {
        frozenset({"hudilite.read", "hudilite.index"}),
    }
    assert cycles(graph) == set()  # no module cycle: only the packages form one
    assert [m for m in graph if unit(m) is None] == ["hudilite.newpkg"]
