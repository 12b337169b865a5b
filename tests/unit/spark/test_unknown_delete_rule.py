"""The Spark upsert's rule for deletes of keys the table does not hold, from the key stats.

The window over the record key (1.1-3.3 s per 1M records) runs only for a batch holding
both deletes and other records; an ordinary upsert pays nothing, a batch of only deletes
a plain filter (tests/spark/test_upsert_unknown_deletes.py runs the three writes).
"""

from __future__ import annotations

import pytest

from hudilite.spark.write_job import unknown_delete_rule
from hudilite.write.assign import WritePlan


def plan(counts: dict[str, tuple[int, int]]) -> WritePlan:
    """A plan of partition -> (records, records that are not deletes)."""
    return WritePlan(
        partitions={p: n for p, (n, _) in counts.items()},
        key_ranges={p: ("a", "z") for p in counts},
        kept={p: k for p, (_, k) in counts.items()},
    )


@pytest.mark.parametrize(
    ("counts", "rule"),
    [
        ({"a": (5, 5), "b": (3, 3)}, "none"),  # no delete anywhere
        ({}, "none"),  # an empty batch
        ({"a": (5, 0), "b": (3, 0)}, "filter"),  # deletes only
        ({"a": (5, 5), "b": (3, 0)}, "window"),  # inserts in a, deletes in b: one key space
        ({"a": (5, 4)}, "window"),  # one delete (or null flag) among inserts
    ],
)
def test_rule_from_the_key_stats(counts: dict[str, tuple[int, int]], rule: str) -> None:
    assert unknown_delete_rule(plan(counts)) == rule
