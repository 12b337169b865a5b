"""Table version 9 end to end: tables created by ``Table.create(table_version=9)`` and by
SQL ``'hoodie.write.table.version'='9'`` (COW and MOR, partitioned and not) take inserts,
upserts, deletes and compactions, and hudi-rs reads exactly the expected rows; tables
upgraded 8 -> 9 and downgraded 9 -> 8 (Table API and ``CALL upgrade_table`` /
``downgrade_table``) keep their rows and carry the keys Hudi's handlers leave; a v9 feature
hudilite does not implement is refused by name before anything is written."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.config import parse_properties
from hudilite.errors import ConfigError
from hudilite.sqlext.statements import TableName
from tests.helpers import hudi_rs_read
from tests.tables import ID_TS_V_P

COLS = ID_TS_V_P.columns
PKG = "org.apache.hudi.common.model."
EVENT_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"


batch = ID_TS_V_P.batch


def theirs(path: str) -> list[tuple[Any, ...]]:
    """The rows hudi-rs reads, data columns only, sorted."""
    table = hudi_rs_read(path)
    return sorted(tuple(r[c] for c in COLS) for r in table.to_pylist())


def ours(t: hudilite.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().select(*COLS).collect())


def props(path: str) -> dict[str, str]:
    return parse_properties((Path(path) / ".hoodie/hoodie.properties").read_text())


def timeline(path: str) -> list[str]:
    return sorted(p.name for p in (Path(path) / ".hoodie/timeline").iterdir() if p.is_file())


def check(t: hudilite.Table, expected: dict[str, tuple[Any, ...]]) -> None:
    rows = sorted(expected.values())
    assert theirs(t.path) == rows
    assert ours(t) == rows


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "nonpartitioned"])
def test_table_api_v9_tables_read_exactly_in_hudi_rs(
    spark: Any, tmp_path: Path, table_type: str, partitioned: bool
) -> None:
    path = str(tmp_path / "t")
    t = ID_TS_V_P.create(
        spark,
        path,
        partition_by=["p"] if partitioned else [],
        table_type=table_type,
        table_version=9,
    )
    p = props(path)
    assert p["hoodie.table.version"] == p["hoodie.table.initial.version"] == "9"
    assert p["hoodie.timeline.layout.version"] == "2"
    assert p["hoodie.table.ordering.fields"] == "ts"
    assert p["hoodie.table.format"] == "native"
    assert p["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert p["hoodie.table.keygenerator.type"] == ("SIMPLE" if partitioned else "NON_PARTITION")
    assert not {
        "hoodie.table.precombine.field",
        "hoodie.record.merge.strategy.id",
        "hoodie.compaction.payload.class",
        "hoodie.table.keygenerator.class",
    } & set(p)

    rows = {
        "a": ("a", 1, "a1", "x"),
        "b": ("b", 1, "b1", "y"),
        "c": ("c", 1, "c1", "x"),
        "d": ("d", 1, "d1", "y"),
    }
    t.write(batch(*rows.values()), "insert")
    check(t, rows)
    # Event time: b's older record loses; a and c change.
    t.write(batch(("a", 2, "a2", "x"), ("b", 0, "old", "y"), ("c", 3, "c3", "x")))
    rows["a"], rows["c"] = ("a", 2, "a2", "x"), ("c", 3, "c3", "x")
    check(t, rows)
    t.write(batch(("d", 9, None, "y")), "delete")
    del rows["d"]
    check(t, rows)
    if table_type == "mor":
        assert any(n.endswith(".deltacommit") for n in timeline(path))
        assert t.compact()
        assert any(n.endswith(".commit") for n in timeline(path))  # the compaction
        check(t, rows)
    t.write(batch(("e", 1, "e1", "y"), ("a", 5, "a5", "x")))
    rows["e"], rows["a"] = ("e", 1, "e1", "y"), ("a", 5, "a5", "x")
    check(t, rows)
    assert props(path)["hoodie.table.version"] == "9"


def test_sql_v9_table_reads_exactly_in_hudi_rs(s: Any) -> None:
    s.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, v STRING, p STRING) USING hudi PARTITIONED BY (p) "
        "TBLPROPERTIES (primaryKey='id', preCombineField='ts', type='mor', "
        "'hoodie.write.table.version'='9')"
    )
    tbl = s.table(TableName(None, "t"))
    assert props(tbl.path)["hoodie.table.version"] == "9"
    s.sql("INSERT INTO t VALUES ('a', 1, 'a1', 'x'), ('b', 1, 'b1', 'y'), ('c', 1, 'c1', 'x')")
    s.sql("UPDATE t SET v = 'b2', ts = 2 WHERE id = 'b'")
    s.sql("DELETE FROM t WHERE id = 'c'")
    expected = [("a", 1, "a1", "x"), ("b", 2, "b2", "y")]
    assert theirs(tbl.path) == expected
    s.sql("CALL run_compaction(op => 'run', table => 't')")
    assert theirs(tbl.path) == expected
    assert ours(tbl) == expected
    text = s.sql("SHOW CREATE TABLE t").collect()[0][0]
    assert "'hoodie.write.table.version' = '9'" in text


def test_v9_table_with_a_partial_update_payload(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    t = ID_TS_V_P.create(
        spark,
        path,
        table_version=9,
        options={"hoodie.datasource.write.payload.class": PKG + "PartialUpdateAvroPayload"},
        partition_by=[],
    )
    p = props(path)
    assert p["hoodie.table.legacy.payload.class"] == PKG + "PartialUpdateAvroPayload"
    assert p["hoodie.table.partial.update.mode"] == "IGNORE_DEFAULTS"
    assert p["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert "hoodie.compaction.payload.class" not in p
    t.write(batch(("a", 1, "a1", "x")), "insert")
    t.write(batch(("a", 2, None, "z")))  # the null v keeps the stored value
    check(t, {"a": ("a", 2, "a1", "z")})


# ------------------------------------------------------------------------- 8 <-> 9


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_table_api_upgrade_and_downgrade(spark: Any, tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    t = ID_TS_V_P.create(spark, path, table_type=table_type, table_version=8)
    rows = {"a": ("a", 1, "a1", "x"), "b": ("b", 1, "b1", "y")}
    t.write(batch(*rows.values()), "insert")
    t.write(batch(("a", 2, "a2", "x")))  # a log file on MOR
    rows["a"] = ("a", 2, "a2", "x")
    v8 = props(path)
    assert v8["hoodie.record.merge.strategy.id"] == EVENT_ID
    result = t.upgrade(9)
    assert (result.from_version, result.to_version, result.timeline_files) == (8, 9, ())
    assert bool(result.compactions) == (table_type == "mor")  # Hudi compacts first
    v9 = props(path)
    assert {k: v for k, v in v9.items() if v8.get(k) != v} == {
        "hoodie.table.version": "9",
        "hoodie.table.legacy.payload.class": PKG + "DefaultHoodieRecordPayload",
        "hoodie.table.ordering.fields": "ts",
    }
    assert set(v8) - set(v9) == {
        "hoodie.table.precombine.field",
        "hoodie.record.merge.strategy.id",
        "hoodie.compaction.payload.class",
    }
    check(t, rows)
    t.write(batch(("b", 3, "b3", "y"), ("c", 1, "c1", "x")))
    rows["b"], rows["c"] = ("b", 3, "b3", "y"), ("c", 1, "c1", "x")
    check(t, rows)

    result = t.downgrade("EIGHT")
    assert (result.from_version, result.to_version) == (9, 8)
    back = props(path)
    assert {k: v for k, v in back.items() if v9.get(k) != v} == {
        "hoodie.table.version": "8",
        "hoodie.compaction.payload.class": PKG + "DefaultHoodieRecordPayload",
        "hoodie.table.precombine.field": "ts",
    }
    assert set(v9) - set(back) == {
        "hoodie.table.legacy.payload.class",
        "hoodie.table.ordering.fields",
    }
    check(t, rows)
    t.write(batch(("c", 0, "old", "x"), ("a", 7, "a7", "x")))  # c's older record loses
    rows["a"] = ("a", 7, "a7", "x")
    check(t, rows)
    assert props(path)["hoodie.table.version"] == "8"


def test_procedures_upgrade_and_downgrade(s: Any) -> None:
    s.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, v STRING, p STRING) USING hudi "
        "TBLPROPERTIES (primaryKey='id', preCombineField='ts', type='mor', "
        "'hoodie.write.table.version'='6')"
    )
    tbl = s.table(TableName(None, "t"))
    s.sql("INSERT INTO t VALUES ('a', 1, 'a1', 'x'), ('b', 1, 'b1', 'x')")
    s.sql("UPDATE t SET v = 'a2', ts = 2 WHERE id = 'a'")
    expected = [("a", 2, "a2", "x"), ("b", 1, "b1", "x")]
    assert theirs(tbl.path) == expected
    # 6 -> 9 in Hudi's two steps.
    assert s.sql("CALL upgrade_table(table => 't', to_version => 'NINE')").collect()[0][0]
    p = props(tbl.path)
    assert (p["hoodie.table.version"], p["hoodie.table.initial.version"]) == ("9", "6")
    assert p["hoodie.table.legacy.payload.class"] == PKG + "DefaultHoodieRecordPayload"
    assert p["hoodie.table.ordering.fields"] == "ts"
    assert not {"hoodie.table.precombine.field", "hoodie.record.merge.strategy.id"} & set(p)
    assert theirs(tbl.path) == expected
    s.sql("UPDATE t SET v = 'b2', ts = 2 WHERE id = 'b'")
    expected = [("a", 2, "a2", "x"), ("b", 2, "b2", "x")]
    assert theirs(tbl.path) == expected
    assert s.sql("CALL downgrade_table(table => 't', to_version => '8')").collect()[0][0]
    p = props(tbl.path)
    assert p["hoodie.table.version"] == "8"
    assert p["hoodie.table.precombine.field"] == "ts"
    assert p["hoodie.compaction.payload.class"] == PKG + "DefaultHoodieRecordPayload"
    assert not {"hoodie.table.ordering.fields", "hoodie.table.legacy.payload.class"} & set(p)
    assert theirs(tbl.path) == expected
    s.sql("DELETE FROM t WHERE id = 'a'")
    assert theirs(tbl.path) == [("b", 2, "b2", "x")]
    assert ours(tbl) == [("b", 2, "b2", "x")]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            {"hoodie.table.partial.update.mode": "FILL_UNAVAILABLE"},
            "hoodie.table.partial.update.mode",
        ),
        ({"hoodie.table.format": "iceberg"}, "hoodie.table.format"),
    ],
)
def test_unsupported_v9_features_are_refused_before_anything_is_written(
    spark: Any, tmp_path: Path, options: dict[str, str], named: str
) -> None:
    path = str(tmp_path / "t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hoodie.table.format: "not supported" at create
        t = ID_TS_V_P.create(spark, path, table_version=9, options=options, partition_by=[])
    (value,) = options.values()
    for op in ("insert", "upsert", "bulk_insert"):
        with pytest.raises(ConfigError) as refused:
            t.write(batch(("a", 1, "a1", "x")), op)
        # One line naming the option and the value (the merge settings' check words it
        # "unsupported value 'X' for option 'K'", the v9 feature check "K='X'").
        message = str(refused.value)
        assert "\n" not in message and named in message and repr(value) in message, message
    assert timeline(path) == []
    assert hudi_rs_read(path).num_rows == 0
