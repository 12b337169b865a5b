"""Seed tables for the fault-injection tests, built once per run and copied per scenario."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.faults.harness import HEARTBEAT, SCHEMA, copy_table, oracle_of, recs
from tests.helpers import DictOracle

#: The seed's commits: 40 inserts over two partitions, then two overlapping upserts.
SEED_BATCHES = [
    ("insert", recs(range(40), 1, "a")),
    ("upsert", recs(range(12), 2, "b")),
    ("upsert", recs(range(6, 18), 3, "c")),
]
SEED_OPTIONS = {**HEARTBEAT, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


@pytest.fixture(scope="session")
def seeds(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
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
