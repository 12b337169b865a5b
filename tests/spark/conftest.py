"""Fixtures shared by the Spark tests (everything under ``tests/spark`` is marked ``spark``).

Table services off by default: every commit in hudilite runs automatic cleaning and
archival (``hoodie.clean.automatic`` and ``hoodie.archive.automatic`` default to true, as
in Hudi). Most tests here are about something else, and the two services re-read the
timeline and file listing after every write, so the tests run with both defaults turned
off. The product's defaults are untouched: the fixture swaps the two option keys for
copies whose default is false, only while a test runs. A test whose subject is (or whose
assertions depend on) the automatic services carries ``@pytest.mark.services`` and runs
with the real defaults; an explicit option (``hoodie.clean.automatic=true``) still wins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite import config as cfg

SPARK_TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "services: run with Hudi's automatic clean/archive defaults (on)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/spark with ``spark`` (``make test-unit`` deselects them)."""
    for item in items:
        if SPARK_TESTS in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(autouse=True)
def _automatic_services_off(request: pytest.FixtureRequest) -> Iterator[None]:
    """Default ``hoodie.clean.automatic`` and ``hoodie.archive.automatic`` to false for
    tests not marked ``services`` (see the module docstring)."""
    if request.node.get_closest_marker("services") is not None:
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cfg, "AUTO_CLEAN", dataclasses.replace(cfg.AUTO_CLEAN, default=False))
        mp.setattr(cfg, "AUTO_ARCHIVE", dataclasses.replace(cfg.AUTO_ARCHIVE, default=False))
        yield


@pytest.fixture
def session(spark: Any, tmp_path: Path) -> Iterator[Any]:
    """A SQL session on an empty warehouse under ``tmp_path``; drops every temporary view
    left in the shared SparkSession afterwards (hudilite's own table views included, so a
    later test's table of the same name never meets a stale view)."""
    s = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    yield s
    for t in spark.catalog.listTables():
        if t.isTemporary:
            spark.catalog.dropTempView(t.name)


@pytest.fixture
def s(session: Any) -> Any:
    """The short name the procedure tests use for :func:`session`."""
    return session
