"""Data skipping decisions (hudilite/read/data_skipping.py), without a JVM or a table.

Property: for random files of rows (ints and strings with nulls) and random predicates
(comparisons, IN, BETWEEN, IS [NOT] NULL, AND/OR/NOT), a slice whose rows hold a match is
never skipped; a file without statistics for a named column is never skipped. Examples: the
slices skipped for selective predicates are exactly the ones that cannot match. Plans of
real tables (hudilite's column_stats on a v9 COW table, Hudi's own on a v9 MOR table with
log files): the skipped plan reads exactly the rows hudi-rs reads for the predicate, with
fewer files for selective ones, and the option off keeps the plan whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudilite import config as cfg
from hudilite.filegroup.slices import BaseFile, FileSlice
from hudilite.metadata.column_stats_records import INT, STRING, ColumnStats
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.data_skipping import filters_sql, skip_slices
from hudilite.read.planner import plan_snapshot, skip_files
from hudilite.read.where import Predicate
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import BaseFileName
from hudilite.tablestate import properties_file
from hudilite.tablestate.state import TableState
from hudilite.write.lock import table_lock
from tests.conftest import FIXTURES, unzip_table
from tests.helpers import hudi_rs_read

SCHEMA = pa.schema([("x", pa.int32()), ("s", pa.string())])


def _slice(i: int) -> FileSlice:
    name = BaseFileName(
        f"{i:08d}-0000-0000-0000-000000000000-0", "0-0-0", "20240101000000000", ".parquet"
    )
    return FileSlice("p", name.file_id, name.instant_time, BaseFile("p", name, 0))


def _stats(rows: pa.Table, file_name: str) -> dict[str, ColumnStats]:
    out = {}
    for column, kind in (("x", INT), ("s", STRING)):
        col = rows[column]
        mm = pc.min_max(col)
        out[column] = ColumnStats(
            "p",
            file_name,
            column,
            mm["min"].as_py(),
            mm["max"].as_py(),
            len(col),
            col.null_count,
            value_type=kind,
        )
    return out


values = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-5, 5)), st.one_of(st.none(), st.sampled_from("abc"))
    ),
    min_size=1,
    max_size=6,
)
atoms = st.one_of(
    st.builds(
        lambda op, v: f"x {op} {v}",
        st.sampled_from(["=", "<>", "<", "<=", ">", ">="]),
        st.integers(-6, 6),
    ),
    st.builds(
        lambda op, v: f"s {op} '{v}'",
        st.sampled_from(["=", "<>", "<", ">="]),
        st.sampled_from("abcd"),
    ),
    st.builds(lambda a, b: f"x BETWEEN {a} AND {b}", st.integers(-6, 6), st.integers(-6, 6)),
    st.builds(
        lambda vs: f"x IN ({', '.join(map(str, vs))})",
        st.lists(st.integers(-6, 6), min_size=1, max_size=3),
    ),
    st.sampled_from(["x IS NULL", "x IS NOT NULL", "s IS NULL", "x = NULL"]),
)
predicates = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=4,
)


@settings(max_examples=100, deadline=None)
@given(st.lists(values, min_size=1, max_size=4), predicates)
def test_a_slice_holding_a_match_is_never_skipped(files: list[list[Any]], where: str) -> None:
    pred = Predicate.parse(where, SCHEMA)
    slices = [_slice(i) for i in range(len(files))]
    stats = {}
    matching = set()
    for i, rows in enumerate(files):
        table = pa.table(
            {"x": pa.array([r[0] for r in rows], pa.int32()), "s": [r[1] for r in rows]}
        )
        name = slices[i].base_file.path.rsplit("/", 1)[-1]  # type: ignore[union-attr]
        stats[("p", name)] = _stats(table, name)
        if table.filter(pred.expression).num_rows:
            matching.add(i)
    kept = skip_slices(slices, pred, SCHEMA, stats)
    kept_ids = {slices.index(s) for s in kept}
    assert matching <= kept_ids, (where, files)
    # a file without statistics is always kept
    assert len(skip_slices(slices, pred, SCHEMA, {})) == len(slices)


def test_selective_predicates_skip_exactly_the_files_that_cannot_match() -> None:
    files = [[(1, "a"), (2, "b")], [(5, None), (7, "c")], [(None, None)]]
    slices = [_slice(i) for i in range(3)]
    stats = {}
    for i, rows in enumerate(files):
        table = pa.table(
            {"x": pa.array([r[0] for r in rows], pa.int32()), "s": [r[1] for r in rows]}
        )
        name = slices[i].base_file.path.rsplit("/", 1)[-1]  # type: ignore[union-attr]
        stats[("p", name)] = _stats(table, name)

    def kept(where: str) -> list[int]:
        pred = Predicate.parse(where, SCHEMA)
        return [slices.index(s) for s in skip_slices(slices, pred, SCHEMA, stats)]

    assert kept("x = 6") == [1]
    assert kept("x > 100") == []
    assert kept("x IS NULL") == [2]
    assert kept("s IS NULL") == [1, 2]
    assert kept("NOT (x <> 2)") == [0]
    assert kept("x IN (1, 7)") == [0, 1]
    assert kept("x = 1 OR s = 'c'") == [0, 1]
    assert kept("x IS NOT NULL AND x < 3") == [0]


# ------------------------------------------------- plans of tables with column statistics

TABLES = [
    "sample_table/cow/v9_txns_simple_nometa.zip",  # column_stats built by hudilite
    "sample_table/mor/avro/v9_txns_simple_meta.zip",  # Hudi's own, log files included
]
WHERES = [
    "txn_id = 'TXN-007'",
    "txn_ts > 1700600000000",
    "merchant_name IS NULL",
    "NOT (currency <> 'GBP')",
    "txn_type IN ('credit', 'reversal') OR is_international",
    "txn_date BETWEEN DATE '2024-01-16' AND DATE '2024-01-17'",
]


@pytest.mark.parametrize("zip_rel", TABLES)
def test_skipped_plans_read_the_rows_hudi_rs_reads(zip_rel: str, tmp_path: Path) -> None:
    zp = FIXTURES / zip_rel
    if not zp.exists():
        pytest.skip(f"fixture {zip_rel} is absent")
    gw = FileSystemGateway(str(unzip_table(zp, tmp_path)))
    stored = properties_file.read_write_defaults(gw)
    stored[cfg.METADATA_ENABLED.name] = "true"
    stored[cfg.METADATA_COLUMN_STATS_ENABLED.name] = "true"
    gw.write_bytes(properties_file.WRITE_DEFAULTS_FILE, properties_file.encode(stored))
    with table_lock(gw):
        pass  # the guard keeps Hudi's column_stats, or builds it
    props = properties_file.load(gw)
    assert "column_stats" in props["hoodie.table.metadata.partitions"]
    # the index definitions keep column_stats' alone (Hudi's record and secondary indexes go)
    defs = json.loads(gw.read_bytes(props["hoodie.table.index.defs.path"]))
    assert list(defs["indexDefinitions"]) == ["column_stats"]
    state = TableState.load(gw)
    everything = hudi_rs_read(gw.abs_path(""))
    full = plan_snapshot(state.view)
    sizes = {}
    for where in WHERES:
        pred = Predicate.parse(where, state.storage_schema)
        plan = skip_files(state, full, pred)
        rows = read_plan_arrow(gw, plan, state.storage_schema).filter(pred.expression)
        expected = everything.filter(pred.expression)
        assert sorted(rows["txn_id"].to_pylist()) == sorted(expected["txn_id"].to_pylist())
        sizes[where] = len(plan.native_paths) + len(plan.merge_slices)
        off = skip_files(state, full, pred, {cfg.DATA_SKIPPING_ENABLED.name: "false"})
        assert off == full
    total = len(full.native_paths) + len(full.merge_slices)
    assert sizes["txn_id = 'TXN-007'"] < total
    assert sizes["merchant_name IS NULL"] < total


def test_filters_spark_hands_the_data_source_become_a_predicate() -> None:
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not, StringStartsWith

    pushed = [
        EqualTo(("s",), "o'k"),
        Not(In(("x",), (1, 2))),
        IsNull(("x",)),
        StringStartsWith(("s",), "a"),  # no statistics rule: left out
        GreaterThan(("x", "nested"), 1),  # a nested field: left out
    ]
    sql = filters_sql(pushed)
    assert sql == "(`s` = 'o\\'k') AND (NOT (`x` IN (1, 2))) AND (`x` IS NULL)"
    table = pa.table({"x": pa.array([None, 3], pa.int32()), "s": ["o'k", "o'k"]})
    assert table.filter(Predicate.parse(sql, SCHEMA).expression).num_rows == 0  # NULL IN
    assert filters_sql([StringStartsWith(("s",), "a")]) is None
    quoted = filters_sql([EqualTo(("s",), "o'k\\")])  # a quote and a backslash
    kept = pa.table({"x": pa.array([1, 2], pa.int32()), "s": ["o'k\\", "o'k"]})
    assert kept.filter(Predicate.parse(quoted, SCHEMA).expression)["x"].to_pylist() == [1]
