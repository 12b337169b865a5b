"""Shared test fixtures: the real Hudi tables in ../shared, one SparkSession for Spark tests."""

from __future__ import annotations

import importlib.util
import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hudilite.spark import class_archive
from tests.helpers import FAST_JVM_OPTIONS

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HUDILITE_SHARED", REPO_ROOT.parent / "shared"))
FIXTURES = SHARED / "fixtures" / "hudi-tables"

# Every JVM the tests start runs with the C1 compiler only and the serial collector: the
# shared session (see `spark`) and the drivers of the CLI, fault, streaming and server
# subprocesses, which inherit this environment (spark-submit adds SPARK_SUBMIT_OPTS to the
# driver's java command, silently, unlike JAVA_TOOL_OPTIONS, which prints a notice on stderr
# that the tests of quiet start-up would see). Their jobs are many and tiny, and short-lived
# drivers spend most of their CPU in C2 compilations that never pay off.
os.environ.setdefault("SPARK_SUBMIT_OPTS", FAST_JVM_OPTIONS)
# The Spark JVMs' class-data-sharing archive (hudilite/spark/class_archive.py) of the user's
# cache, named explicitly: a subprocess run with another HOME (test_cli_sql's read-only run
# as another user) maps it or starts without one, rather than a background recorder each run.
_archive = class_archive.archive_path()
if _archive is not None:
    os.environ.setdefault(class_archive.ARCHIVE_ENV, str(_archive))

if importlib.util.find_spec("hypothesis") is not None:
    from hypothesis import HealthCheck, settings

    # Property tests check results, not speed: on a loaded 2-core machine (CI, or several
    # pytest processes) Hypothesis' timing checks fail tests whose every example passed.
    settings.register_profile(
        "hudilite", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile("hudilite")

#: Test files that share session-scoped work, so pytest-xdist runs them on one worker: the
#: killed writes of tests/faults/conftest.py (five driver processes killed at once) serve both
#: files. Every other file is its own unit (the faults seed tables are cheap to build per
#: worker; keeping the whole faults folder on one worker made it the suite's critical path).
SHARED_SCOPES = {
    "tests/faults/test_write_kills.py": "tests/faults/killed-writes",
    "tests/faults/test_service_kills.py": "tests/faults/killed-writes",
}


def _xdist_scope(nodeid: str) -> str:
    """The unit pytest-xdist hands to one worker: a whole test file (its module fixtures are
    set up once), or a group of :data:`SHARED_SCOPES`."""
    path = nodeid.split("::", 1)[0]
    return SHARED_SCOPES.get(path, path)


#: Folders of long, mostly waiting tests (real processes, JVM start-ups, kills), run first:
#: pytest-xdist hands out units in collection order, so long units started last would leave
#: one worker running alone at the end.
LONG_FIRST = ("tests/faults/", "tests/cluster/", "tests/s3/", "tests/server/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the collected tests so the :data:`LONG_FIRST` folders come first (stable)."""

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, f in enumerate(LONG_FIRST) if path.startswith(f)), len(LONG_FIRST))

    items.sort(key=rank)


if importlib.util.find_spec("xdist") is not None:
    # `make test` runs the suite on two pytest-xdist workers (each with its own
    # SparkSession): one worker leaves about 40% of two cores idle while Spark, its Python
    # workers and py4j wait on each other. Without xdist the hook is not defined (pytest
    # refuses hooks of plugins it does not have).

    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        """Schedule by :func:`_xdist_scope` (xdist's ``loadscope`` with our scopes), in
        collection order (see :data:`LONG_FIRST`)."""
        from xdist.scheduler import LoadScopeScheduling

        # pytest-xdist 3.x hands out scopes by their number of tests, largest first, unless
        # told not to: the long folders' files hold a few slow tests each, so they started
        # last and one worker ran them alone at the end of the suite.
        config.option.loadscopereorder = False

        class FileAndFolderScheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return _xdist_scope(nodeid)

        return FileAndFolderScheduling(config, log)


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

    conf = {
        "spark.sql.adaptive.enabled": "false",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": FAST_JVM_OPTIONS,
    }
    session = spark_session(master="local[2]", shuffle_partitions=2, conf=conf)
    yield session
    session.stop()
