"""Seed tables for the fault-injection tests, built once per run and copied per scenario,
and the writes whose driver is killed (all started at once, one process each)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.faults.harness import (
    HEARTBEAT,
    SCHEMA,
    Outcome,
    build_jvm_archive,
    completed_times,
    copy_table,
    drop_jvm_archive,
    finish,
    oracle_of,
    recs,
    start_writer,
)
from tests.helpers import DictOracle

#: The seed's commits: 40 inserts over two partitions, then two overlapping upserts.
SEED_BATCHES = [
    ("insert", recs(range(40), 1, "a")),
    ("upsert", recs(range(12), 2, "b")),
    ("upsert", recs(range(6, 18), 3, "c")),
]
SEED_OPTIONS = {**HEARTBEAT, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


@pytest.fixture(scope="session")
def jvm_archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Build the driver JVMs' class-data-sharing archive in the background (see
    tests/faults/jvm_archive.py); the drivers started once it is there use it."""
    build_jvm_archive(tmp_path_factory.mktemp("jvm"))
    yield
    drop_jvm_archive()


@pytest.fixture(scope="session")
def seeds(
    spark: Any, jvm_archive: None, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """``cow6`` (copy-on-write, version 6) and ``mor8`` (merge-on-read, version 8) tables
    holding the seed commits (``mor8``: one base file and two log files per group)."""
    import hudilite

    root = tmp_path_factory.mktemp("seeds")
    out = {}
    for name, kind, version in (("cow6", "cow", 6), ("mor8", "mor", 8)):
        t = hudilite.Table.create(
            spark,
            str(root / name),
            SCHEMA,
            record_key="id",
            ordering_field="ts",
            partition_by=["p"],
            table_type=kind,
            table_version=version,
            options=SEED_OPTIONS,
        )
        for op, batch in SEED_BATCHES:
            t.write(pa.Table.from_pylist(batch, schema=SCHEMA), op)  # type: ignore[arg-type]
        out[name] = root / name
    return out


@pytest.fixture
def seeded(seeds: dict[str, Path], tmp_path: Path) -> Callable[[str], tuple[Path, DictOracle]]:
    """``seeded(name)``: a private copy of seed table ``name`` and its oracle."""

    def make(name: str) -> tuple[Path, DictOracle]:
        path = copy_table(seeds[name], tmp_path / name)
        return path, oracle_of(*(b for _, b in SEED_BATCHES))

    return make


#: (seed table, operation, fail point) of the writes whose driver process is SIGKILLed at
#: the point (tests/faults/test_write_kills.py); the first one is also the dead write whose
#: rollback tests/faults/test_service_kills.py kills.
DRIVER_KILLS = [
    ("cow6", "upsert", "kill:before_commit"),
    ("mor8", "delete", "kill:before_commit"),
    ("mor8", "upsert", "kill:before_complete"),
    ("cow6", "insert", "kill:after_complete"),
    ("mor8", "upsert", "kill:after_complete"),
]


def kill_payload(op: str) -> list[dict]:
    """A dead write's records: updates of seed keys and new keys (delete: seed keys;
    insert: new keys only, as an insert does not look existing keys up)."""
    if op == "delete":
        return recs(range(0, 40, 3), 9, "dead")
    if op == "insert":
        return recs(range(60, 76), 9, "dead")
    return recs([*range(10, 20), *range(60, 66)], 9, "dead")


@dataclass
class KilledWrite:
    """A write whose driver was killed: the table as it was left (copy it before use), the
    completed instants before the write, the records written, the writer's outcome."""

    path: Path
    before: set[str]
    records: list[dict]
    outcome: Outcome


@pytest.fixture(scope="session")
def killed_writes(
    seeds: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str, str], KilledWrite]:
    """Every :data:`DRIVER_KILLS` write, each on its own copy of its seed table in its own
    driver process (Spark, ``local[1]``). The tables are independent, so the processes run
    at the same time: the JVM start-ups overlap instead of adding up."""
    root = tmp_path_factory.mktemp("killed")
    started = []
    for i, (seed, op, point) in enumerate(DRIVER_KILLS):
        path = copy_table(seeds[seed], root / f"{i}-{seed}")
        records = kill_payload(op)
        step = {"op": op, "path": str(path), "rows": records, "fail_point": point}
        started.append(
            ((seed, op, point), path, records, start_writer({"spark": True, "steps": [step]}))
        )
    return {
        key: KilledWrite(path, completed_times(seeds[key[0]]), records, finish(proc))
        for key, path, records, proc in started
    }
