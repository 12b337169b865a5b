"""The hudilite zip that executors without hudilite import (``ship_package``, ``--py-files``)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from hudilite.spark import shipping
from hudilite.timeline.metadata import avro_schema_names

REPO = Path(__file__).resolve().parents[3]


def test_zip_holds_the_whole_package_with_mapped_subpackages_and_data(tmp_path):
    path = shipping.build_package_zip(tmp_path)
    names = zipfile.ZipFile(path).namelist()
    # The SQL layers sit beside hudilite/ in the source tree; in the zip they are inside it.
    for module in (
        "hudilite/__init__.py",
        "hudilite/spark/write_job.py",
        "hudilite/sqlext/session.py",
        "hudilite/catalog/__init__.py",
        "hudilite/procedures/__init__.py",
        "hudilite/timeline/avro/HoodieCommitMetadata.avsc",
    ):
        assert module in names
    expected = {
        f"hudilite/{p.relative_to(REPO / 'hudilite').as_posix()}"
        for p in (REPO / "hudilite").rglob("*.py")
    } | {f"hudilite/{p.relative_to(REPO).as_posix()}" for p in (REPO / "sqlext").rglob("*.py")}
    assert expected <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert len(names) == len(set(names))


def test_zip_name_follows_its_contents_and_is_reused(tmp_path):
    first = shipping.build_package_zip(tmp_path / "a")
    again = shipping.build_package_zip(tmp_path / "a")
    elsewhere = shipping.build_package_zip(tmp_path / "b")
    assert first == again
    assert Path(first).name == Path(elsewhere).name
    assert Path(first).name.startswith("hudilite-0.1.0-")
    assert Path(first).read_bytes() == Path(elsewhere).read_bytes()  # deterministic
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [Path(first).name]


def test_an_interpreter_imports_every_layer_from_the_zip(tmp_path):
    path = shipping.build_package_zip(tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import hudilite, hudilite.sqlext.session, hudilite.procedures, hudilite.catalog;"
        "import hudilite.spark.shipping as shipping; from hudilite.timeline import metadata;"
        "print(hudilite.__file__); print(hudilite.sqlext.session.__file__);"
        "print(shipping.imported_from_zip());"
        # package data is read through importlib.resources, which works inside a zip
        "print(len(metadata.avro_schema_names()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, path], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"{path}/hudilite/__init__.py",
        f"{path}/hudilite/sqlext/session.py",
        path,
        str(len(avro_schema_names())),
    ]
    assert len(avro_schema_names()) > 20


class _FakeContext:
    def __init__(self) -> None:
        self._python_includes: list[str] = []
        self.added: list[str] = []

    def addPyFile(self, path: str) -> None:
        self.added.append(path)
        self._python_includes.append(Path(path).name)


class _FakeSession:
    def __init__(self) -> None:
        self.sparkContext = _FakeContext()


def test_ship_package_adds_the_zip_once_per_context(tmp_path):
    session = _FakeSession()
    path = shipping.ship_package(session, tmp_path)  # type: ignore[arg-type]
    assert shipping.ship_package(session, tmp_path) == path  # type: ignore[arg-type]
    assert session.sparkContext.added == [path]


def test_the_module_writes_the_zip_from_a_shell(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "hudilite.spark.shipping", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    (written,) = tmp_path.iterdir()
    assert out.stdout.strip() == str(written)
    assert written.name == Path(shipping.build_package_zip(tmp_path)).name
