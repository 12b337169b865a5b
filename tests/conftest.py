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
