"""Two writer processes racing on the same table (a file barrier starts each step together).

One pair of processes runs three races, each on its own copy of the seed table:
overlapping updates of existing keys, inserts into disjoint new partitions, and upserts
of the same new keys (a plain ``insert`` keeps duplicate keys by design, as Hudi's
does). Afterwards every reader must equal the oracle built from the writes that
reported success, and a write that lost must have lost with ConflictError.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import hudilite
from tests.faults.conftest import SEED_BATCHES
from tests.faults.harness import (
    SCHEMA,
    assert_readers_match,
    copy_table,
    finish,
    oracle_of,
    pending,
    recs,
    start_writer,
)
from tests.helpers import hudi_rs_read, rows

pytestmark = [pytest.mark.faults, pytest.mark.spark]

# Long enough that a live writer on a loaded machine is never taken for a dead one; and
# each write waits before it commits, so the two writers' writes overlap however fast they
# are (a one-row write in the driver takes a fraction of a second).
OPTIONS = {
    "hoodie.client.heartbeat.interval_in_ms": "5000",
    "hoodie.client.heartbeat.tolerable.misses": "3",
    "hudilite.internal.fail.point": "delay:before_commit",
}
RACES = {
    # race: (writer A's records, writer B's records, operation)
    "overlap": (recs(range(0, 20), 20, "A"), recs(range(10, 30), 30, "B"), "upsert"),
    "disjoint": (
        recs(range(200, 220), 20, "A", ("pa",)),
        recs(range(300, 320), 30, "B", ("pb",)),
        "insert",
    ),
    "same_new_keys": (
        recs(range(400, 420), 20, "A", ("pn",)),
        recs(range(400, 420), 30, "B", ("pn",)),
        "upsert",
    ),
    # Into a table without a record key (Hudi's generated keys), the same rows from both.
    "keyless": (
        recs(range(500, 510), 20, "A", ("pk", "pl")),
        recs(range(500, 510), 30, "B", ("pk", "pl")),
        "insert",
    ),
}


@pytest.fixture(scope="module")
def races(
    spark: Any, seeds: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Run both writers once; returns each race's table and the two step reports."""
    root = tmp_path_factory.mktemp("race")
    barrier = root / "barrier"
    barrier.mkdir()
    paths = {name: copy_table(seeds["cow6"], root / name) for name in RACES if name != "keyless"}
    paths["keyless"] = root / "keyless"
    hudilite.Table.create(spark, str(paths["keyless"]), SCHEMA, record_key=None, partition_by=["p"])

    def spec(me: str, other: str, which: int) -> dict[str, Any]:
        return {
            "spark": True,
            "keep_going": True,
            "steps": [
                {
                    "op": RACES[name][2],
                    "path": str(paths[name]),
                    "rows": RACES[name][which],
                    "options": OPTIONS,
                    "barrier": [str(barrier), f"{me}{i}", f"{other}{i}"],
                }
                for i, name in enumerate(RACES)
            ],
        }

    a, b = start_writer(spec("a", "b", 0)), start_writer(spec("b", "a", 1))
    out_a, out_b = finish(a), finish(b)
    assert len(out_a.steps) == len(out_b.steps) == len(RACES), out_a.describe() + out_b.describe()
    return {name: (paths[name], out_a.steps[i], out_b.steps[i]) for i, name in enumerate(RACES)}


def _check(spark: Any, race: tuple[Path, dict, dict], name: str) -> tuple[bool, bool]:
    path, a, b = race
    for step in (a, b):
        assert step["ok"] or step["error"].startswith("ConflictError"), step
    assert a["ok"] or b["ok"], "both writers lost"
    oracle = oracle_of(*(batch for _, batch in SEED_BATCHES))
    for ok, records in ((a["ok"], RACES[name][0]), (b["ok"], RACES[name][1])):
        if ok:
            oracle.upsert(records)
    assert_readers_match(spark, path, oracle)
    assert pending(path) == []
    return a["ok"], b["ok"]


def test_overlapping_updates(spark, races) -> None:
    """Guarantee: two writers updating the same keys: each commits whole or fails with
    ConflictError; the table holds exactly the committed updates (event-time ordering)."""
    _check(spark, races["overlap"], "overlap")


def test_disjoint_inserts_both_commit(spark, races) -> None:
    """Guarantee: writers on disjoint partitions do not conflict; both commit, nothing lost."""
    assert _check(spark, races["disjoint"], "disjoint") == (True, True)


def test_keyless_inserts_never_share_a_key(races) -> None:
    """Guarantee: two writers inserting into a table without a record key at once never
    give two rows one key: each committed row has the key <its commit's instant>_<task>_<row>,
    all keys are distinct, and every row of each committed write is there (hudi-rs reads)."""
    path, a, b = races["keyless"]
    for step in (a, b):
        assert step["ok"] or step["error"].startswith("ConflictError"), step
    assert a["ok"] or b["ok"], "both writers lost"
    table = hudi_rs_read(str(path))
    keys = table["_hoodie_record_key"].to_pylist()
    assert len(set(keys)) == len(keys)
    for key, instant in zip(keys, table["_hoodie_commit_time"].to_pylist(), strict=True):
        assert re.fullmatch(rf"{instant}_\d+_\d+", key), (key, instant)
    expected = [r for ok, batch in ((a["ok"], RACES["keyless"][0]), (b["ok"], RACES["keyless"][1]))
                if ok for r in batch]  # fmt: skip
    got = rows(table, ["id", "ts", "v", "p"])
    assert got == sorted(((r["id"], r["ts"], r["v"], r["p"]) for r in expected), key=repr)
    assert pending(path) == []


def test_same_new_keys_never_duplicated(spark, races) -> None:
    """Guarantee: two writers upserting the same new keys never leave a key twice: one of
    them fails with ConflictError (the key-level check of new file groups)."""
    assert _check(spark, races["same_new_keys"], "same_new_keys") in ((True, False), (False, True))
