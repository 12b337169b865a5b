"""Shared test fixtures: the real Hudi tables in ../shared, one SparkSession for Spark tests."""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HUDILITE_SHARED", REPO_ROOT.parent / "shared"))
FIXTURES = SHARED / "fixtures" / "hudi-tables"


#: Folders whose test files share session-scoped work (tests/faults: the seed tables and
#: the killed writes), so that under pytest-xdist they run on one worker.
_ONE_WORKER_FOLDERS = ("faults",)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): tests pytest-xdist runs on one worker")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group tests for pytest-xdist's ``--dist loadgroup``: one group per test file (a file's
    module fixtures are set up once), one per folder of :data:`_ONE_WORKER_FOLDERS`.
    Without xdist the marker means nothing."""
    tests_dir = Path(__file__).resolve().parent
    for item in items:
        path = Path(str(item.fspath)).resolve()
        rel = path.relative_to(tests_dir) if path.is_relative_to(tests_dir) else path
        group = rel.parts[0] if rel.parts[0] in _ONE_WORKER_FOLDERS else str(rel)
        item.add_marker(pytest.mark.xdist_group(group))


def fixture_zips() -> list[Path]:
    """Every zipped real Hudi table under ../shared (empty when ../shared is absent)."""
    if not FIXTURES.is_dir():
        return []
    return sorted(FIXTURES.rglob("*.zip"))


def fixture_id(zip_path: Path) -> str:
    """A readable test id such as ``cow/v6_nonpartitioned``."""
    return str(zip_path.relative_to(FIXTURES).with_suffix(""))


def unzip_table(zip_path: Path, dest: Path) -> Path:
    """Unzip a fixture into ``dest`` and return the table's base path (the single top folder)."""
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(dest)
    tops = [p for p in dest.iterdir() if p.is_dir() and p.name != "__MACOSX"]
    assert len(tops) == 1, tops
    return tops[0]


@pytest.fixture
def shared_fixture(tmp_path: Path):
    """Return a function ``(relative_zip_name) -> base path`` that unzips a fixture table."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is absent")

    def _open(rel: str) -> Path:
        zp = FIXTURES / rel
        if not zp.exists():
            pytest.skip(f"fixture {rel} is absent")
        return unzip_table(zp, tmp_path / zp.stem)

    return _open


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local SparkSession for the whole run (JVM start-up takes seconds).

    Tuned for the tests' tiny tables: two shuffle partitions (one per core of ``local[2]``)
    and adaptive query execution off. AQE runs every shuffle stage as a job of its own and
    re-plans after it; with a few rows per table that only adds jobs (about 40% more per
    write), it never saves any work. The JVM runs with the C1 compiler only and the serial
    collector (``FAST_JVM_OPTIONS`` in tests/helpers.py): the tests' jobs are many and tiny,
    and C2 compilations cost more CPU than they save (about 20% less CPU, 30% less time for
    the Spark tests on two cores). The product's own defaults (``spark_session()`` without
    ``conf``) are unchanged.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from hudilite.spark.session import spark_session
    from tests.helpers import FAST_JVM_OPTIONS

    conf = {
        "spark.sql.adaptive.enabled": "false",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": FAST_JVM_OPTIONS,
    }
    session = spark_session(master="local[2]", shuffle_partitions=2, conf=conf)
    yield session
    session.stop()
