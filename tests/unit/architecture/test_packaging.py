"""Packaging and checkout hygiene (issue 27.9): the license as an SPDX expression (the TOML
table form makes setuptools 77+ warn on every build), every engine package in the wheel,
``make install`` saying what it does, the demo folder ignored by git."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_license_is_an_spdx_expression_setuptools_accepts() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    # PEP 639 license expressions need setuptools 77; no license classifier beside one.
    assert "setuptools>=77" in project["build-system"]["requires"]
    assert not any("License ::" in c for c in project["project"].get("classifiers", []))


def test_every_engine_package_is_in_the_wheel() -> None:
    packages = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {"hudilite." + p.parent.name for p in (ROOT / "hudilite").glob("*/__init__.py")}
    assert found - packages == set()  # hudilite.config was missing: a built wheel lacked it


def test_make_install_shows_progress() -> None:
    recipe = (ROOT / "Makefile").read_text().split("$(BIN)/hudilite: pyproject.toml", 1)[1]
    recipe = recipe.split("\n\n", 1)[0]
    steps = re.findall(r'echo "\[(\d)/3\] ', recipe)
    assert steps == ["1", "2", "3"]
    install = next(line for line in recipe.splitlines() if "-e '.[dev]'" in line)
    assert "--quiet" not in install  # pip's progress shows during the long download


def test_demo_and_warehouse_folders_are_ignored() -> None:
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert {"hudilite-demo/", "hudilite-warehouse/"} <= set(ignored)
