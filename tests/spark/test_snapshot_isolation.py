"""Snapshot isolation for writes that read the table (issue 26's lost updates).

A commit lands between a statement's read and its write (injected at the start of the
statement's ``Table.write``, or between ``Table.read`` and ``Table.write``): the write
must fail with ConflictError naming that commit, and the table must hold exactly what the
other commit made of it. Writes that do not depend on what the other commit changed
(inserts elsewhere) still commit. ``tests/faults/test_read_modify_write.py`` races real
processes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

import hudilite
from hudilite.errors import ConfigError, ConflictError
from hudilite.sqlext.statements import TableName
from hudilite.table.api import Table
from tests.helpers import hudi_rs_read, rows

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64()), ("ts", pa.int64()), ("p", pa.string())])
COLS = ["id", "n", "ts", "p"]
SMALL_FILES_OFF = {"hoodie.parquet.small.file.limit": "0"}


def seed_rows() -> list[dict[str, Any]]:
    return [{"id": f"k{i:02d}", "n": 0, "ts": 1, "p": "p1"} for i in range(10)]


@pytest.fixture(params=[("cow", 6, None), ("mor", 8, "ts")], ids=["cow6", "mor8-ordered"])
def table(request: pytest.FixtureRequest, spark: Any, tmp_path: Path) -> Table:
    kind, version, ordering = request.param
    t = Table.create(
        spark,
        str(tmp_path / "t"),
        SCHEMA,
        record_key="id",
        ordering_field=ordering,
        partition_by=["p"],
        table_type=kind,
        table_version=version,
    )
    t.write(pa.Table.from_pylist(seed_rows(), schema=SCHEMA), "insert")
    return t


def stored(t: Table) -> list[tuple]:
    """The table's rows, checked to be what hudi-rs reads."""
    got = rows(t.to_arrow(), COLS)
    assert rows(hudi_rs_read(t.path), COLS) == got
    return got


def expected(changes: dict[str, int], deleted: tuple[str, ...] = ()) -> list[tuple]:
    out = []
    for r in seed_rows():
        if r["id"] not in deleted:
            out.append((r["id"], changes.get(r["id"], 0), 1, "p1"))
    return out


def increment(t: Table, where: str) -> Any:
    """The rows matching ``where`` read now, with ``n + 1`` (a lazy DataFrame)."""
    return t.read().where(where).select("id", (F.col("n") + 1).alias("n"), "ts", "p")


def pending(t: Table) -> list[str]:
    return [str(i) for i in t.state().timeline.pending()]


FIRST_FIVE = "id < 'k05'"
FIVE = [f"k{i:02d}" for i in range(5)]


@pytest.mark.parametrize("as_instant", [False, True], ids=["snapshot", "instant"])
def test_write_of_rows_read_before_a_commit_conflicts(table, as_instant):
    snap = table.snapshot()
    assert snap.instant == table.timeline()[-1].requested_time
    changed = increment(table, FIRST_FIVE)
    other = table.write(
        pa.Table.from_pylist([{"id": k, "n": 100, "ts": 1, "p": "p1"} for k in FIVE], SCHEMA)
    )
    given = snap.instant if as_instant else snap
    with pytest.raises(ConflictError) as info:
        table.write(changed, read_snapshot=given)
    m = re.fullmatch(
        rf"write (\d{{17}}) conflicts with commit\(s\) {other.instant_time} \(it changed the "
        rf"same file groups\), completed after the snapshot it read \({snap.instant}\); it "
        r"was rolled back, retry it \(reading the table again\)",
        str(info.value),
    )
    assert m is not None, str(info.value)
    assert m[1] not in {i.requested_time for i in table.state().timeline.commits()}
    assert stored(table) == expected(dict.fromkeys(FIVE, 100))
    assert pending(table) == []
    # Read again and retried, the increment applies on top of the other commit.
    table.write(increment(table, FIRST_FIVE), read_snapshot=table.snapshot())
    assert stored(table) == expected(dict.fromkeys(FIVE, 101))


def test_blind_write_of_the_same_rows_overwrites(table):
    """Without read_snapshot the write is blind (it began after the other commit): the
    lost update the option exists to prevent."""
    changed = increment(table, FIRST_FIVE)
    table.write(
        pa.Table.from_pylist([{"id": k, "n": 100, "ts": 1, "p": "p1"} for k in FIVE], SCHEMA)
    )
    table.write(changed)
    assert stored(table) == expected(dict.fromkeys(FIVE, 1))


def test_inserts_into_other_file_groups_do_not_conflict(table):
    snap = table.snapshot()
    changed = increment(table, FIRST_FIVE)
    new = [{"id": f"n{i}", "n": 7, "ts": 1, "p": p} for i, p in enumerate(["p1", "p2"])]
    table.write(pa.Table.from_pylist(new, SCHEMA), "insert", options=SMALL_FILES_OFF)
    table.write(changed, read_snapshot=snap)
    assert stored(table) == sorted(
        [*expected(dict.fromkeys(FIVE, 1)), ("n0", 7, 1, "p1"), ("n1", 7, 1, "p2")]
    )


def test_table_service_before_the_write_began_is_no_conflict(table):
    """Compaction (merge-on-read) or clustering (copy-on-write) rewrote the rows between the
    read and the write without changing them: the write commits, on the new layout."""
    if table.config.is_mor:
        table.write(pa.Table.from_pylist([{"id": "k09", "n": 9, "ts": 1, "p": "p1"}], SCHEMA))
    snap = table.snapshot()
    changed = increment(table, FIRST_FIVE)
    done = table.compact() if table.config.is_mor else table.cluster()
    assert len(done) == 1
    service = done[0].instant_time
    assert service not in snap.seen
    table.write(changed, read_snapshot=snap)
    assert stored(table) == expected(
        {**dict.fromkeys(FIVE, 1), "k09": 9 if table.config.is_mor else 0}
    )


@pytest.mark.parametrize("small_files", [True, False], ids=["small-file", "new-group"])
def test_an_acknowledged_delete_is_never_undone(table, small_files):
    """The updated row was deleted meanwhile: the write's lookup misses it and would insert
    it again -- into the file group the delete rewrote (a small file: same file groups) or
    into a new one (the delete removed rows in the partition written)."""
    snap = table.snapshot()
    changed = increment(table, "id = 'k01'")
    gone = table.write(
        pa.Table.from_pylist([{"id": "k01", "n": 0, "ts": 1, "p": "p1"}], SCHEMA), "delete"
    )
    # (merge-on-read: the index finds the key in the base file under the delete log, so
    # the write goes to that file group whatever the small-file limit)
    why = (
        "it changed the same file groups"
        if small_files or table.config.is_mor
        else "it deleted or replaced rows in partition(s) 'p=p1'"
    )
    with pytest.raises(ConflictError, match=re.escape(f"commit(s) {gone.instant_time} ({why})")):
        table.write(changed, read_snapshot=snap, options={} if small_files else SMALL_FILES_OFF)
    assert stored(table) == expected({}, deleted=("k01",))
    assert pending(table) == []


@pytest.mark.parametrize("bad", ["20991231000000000", "yesterday"])
def test_read_snapshot_must_name_a_completed_instant(table, bad):
    before = table.timeline()
    with pytest.raises(ConfigError) as info:
        table.write(increment(table, FIRST_FIVE), read_snapshot=bad)
    assert str(info.value) == (
        f"read_snapshot {bad!r} is not a completed instant of the table "
        f"(its latest is {before[-1].requested_time})"
    )
    assert table.timeline() == before


# ------------------------------------------------------------------------------- SQL


def create_sql_table(session: Any, ordering: bool) -> None:
    ts = ", 'preCombineField'='ts'" if ordering else ""
    session.sql(
        "CREATE TABLE t (id STRING, n BIGINT, ts BIGINT, p STRING) USING hudi "
        f"PARTITIONED BY (p) TBLPROPERTIES ('primaryKey'='id'{ts})"
    )
    values = ", ".join(f"('k{i:02d}', 0, 1, 'p1')" for i in range(10))
    session.sql(f"INSERT INTO t VALUES {values}")


def sql_rows(session: Any) -> list[tuple]:
    return [tuple(r) for r in session.sql("SELECT id, n, ts, p FROM t ORDER BY id").collect()]


# (statement that reads the table, statement committed between its read and its write,
#  the rows left then (id -> n, ids deleted), the rows after the statement is retried)
CASES = {
    "update-update": (
        "UPDATE t SET n = n + 1 WHERE id < 'k05'",
        "UPDATE t SET n = n + 10 WHERE id < 'k03'",
        ({"k00": 10, "k01": 10, "k02": 10}, ()),
        ({"k00": 11, "k01": 11, "k02": 11, "k03": 1, "k04": 1}, ()),
    ),
    "update-delete": (
        "UPDATE t SET n = n + 1 WHERE id < 'k05'",
        "DELETE FROM t WHERE id = 'k01'",
        ({}, ("k01",)),
        ({"k00": 1, "k02": 1, "k03": 1, "k04": 1}, ("k01",)),
    ),
    "delete-update": (
        "DELETE FROM t WHERE id = 'k01'",
        "UPDATE t SET n = n + 10 WHERE id < 'k03'",
        ({"k00": 10, "k01": 10, "k02": 10}, ()),
        ({"k00": 10, "k02": 10}, ("k01",)),
    ),
    "insert-update": (
        "INSERT INTO t SELECT id, n + 1, ts, p FROM t WHERE id < 'k05'",
        "UPDATE t SET n = n + 10 WHERE id < 'k03'",
        ({"k00": 10, "k01": 10, "k02": 10}, ()),
        ({"k00": 11, "k01": 11, "k02": 11, "k03": 1, "k04": 1}, ()),
    ),
    "merge-update": (
        "MERGE INTO t USING (SELECT 'k01' AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET n = t.n + 1",
        "UPDATE t SET n = n + 10 WHERE id = 'k01'",
        ({"k01": 10}, ()),
        ({"k01": 11}, ()),
    ),
}


@pytest.mark.parametrize("ordering", [False, True], ids=["no-ordering", "ordering"])
@pytest.mark.parametrize("case", list(CASES))
def test_sql_statement_loses_to_a_commit_after_its_read(
    spark, tmp_path, monkeypatch, case, ordering
):
    statement, meanwhile, (changes, deleted), (retried, retried_deleted) = CASES[case]
    warehouse = str(tmp_path / "wh")
    session = hudilite.connect(warehouse, spark=spark)
    other = hudilite.connect(warehouse, spark=spark)
    create_sql_table(session, ordering)
    # INSERT ... SELECT from the table itself as a read-modify-write (an upsert, not an
    # insert keeping both rows).
    session.sql("SET hoodie.spark.sql.insert.into.operation=upsert")
    real_write = Table.write
    landed: list[str] = []

    def write_after_another(self: Table, *args: Any, **kwargs: Any) -> Any:
        # The statement has read its snapshot: another client commits first.
        monkeypatch.setattr(Table, "write", real_write)
        other.sql(meanwhile)
        landed.append(self.timeline()[-1].requested_time)
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Table, "write", write_after_another)
    with pytest.raises(ConflictError) as info:
        session.sql(statement)
    assert f"conflicts with commit(s) {landed[0]} (" in str(info.value)
    assert str(info.value).endswith("it was rolled back, retry it (reading the table again)")
    assert sql_rows(session) == expected(changes, deleted)
    session.sql(statement)  # retried: it reads the other commit's rows and applies on top
    assert sql_rows(session) == expected(retried, retried_deleted)
    location = session.entry(TableName(None, "t")).location
    assert rows(hudi_rs_read(location), COLS) == expected(retried, retried_deleted)


def test_insert_from_another_table_is_a_blind_write(spark, tmp_path, monkeypatch):
    """An INSERT whose query does not read the target is blind, as before: a commit that
    completed before its write began is no conflict, and the upsert applies on top of it."""
    warehouse = str(tmp_path / "wh")
    session = hudilite.connect(warehouse, spark=spark)
    other = hudilite.connect(warehouse, spark=spark)
    create_sql_table(session, ordering=False)
    session.sql("CREATE TABLE src (id STRING, n BIGINT, ts BIGINT, p STRING) USING hudi "
                "PARTITIONED BY (p) TBLPROPERTIES ('primaryKey'='id')")  # fmt: skip
    session.sql("INSERT INTO src VALUES ('k01', 5, 1, 'p1')")
    session.sql("SET hoodie.spark.sql.insert.into.operation=upsert")
    real_write = Table.write

    def write_after_another(self: Table, *args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(Table, "write", real_write)
        assert kwargs["read_snapshot"] is None
        other.sql("UPDATE t SET n = n + 10 WHERE id < 'k03'")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Table, "write", write_after_another)
    session.sql("INSERT INTO t SELECT id, n, ts, p FROM src")
    assert sql_rows(session) == expected({"k00": 10, "k01": 5, "k02": 10})
