"""How many Spark tasks write a write's file groups (``hudilite.write.assign.write_tasks``)."""

from __future__ import annotations

from hudilite.write.assign import RECORDS_PER_LIGHT_TASK, write_tasks


def test_rewrites_get_a_task_per_file_group() -> None:
    # Copy-on-write merges (or small files taking inserts): a file's worth of work each.
    assert write_tasks(80, 100_000, rewrites=True, parallelism=2) == 80
    assert write_tasks(5000, 100_000, rewrites=True, parallelism=2) == 4096
    assert write_tasks(1, 10, rewrites=True, parallelism=8) == 1


def test_light_groups_share_tasks() -> None:
    # Log appends and new files of the batch's inserts: four tasks per core ...
    assert write_tasks(80, 100_000, rewrites=False, parallelism=2) == 8
    assert write_tasks(80, 100_000, rewrites=False, parallelism=64) == 80
    # ... or one per RECORDS_PER_LIGHT_TASK records when that is more ...
    records = 30 * RECORDS_PER_LIGHT_TASK + 1
    assert write_tasks(200, records, rewrites=False, parallelism=2) == 31
    # ... never more than the groups.
    assert write_tasks(3, 10_000_000, rewrites=False, parallelism=2) == 3
    assert write_tasks(0, 0, rewrites=False, parallelism=2) == 0
