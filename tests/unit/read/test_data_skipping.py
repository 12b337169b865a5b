"""Data skipping decisions (hudilite/read/data_skipping.py), without a JVM or a table.

Property: for random files of rows (ints and strings with nulls) and random predicates
(comparisons, IN, BETWEEN, IS [NOT] NULL, AND/OR/NOT), a slice whose rows hold a match is
never skipped; a file without statistics for a named column is never skipped. Examples: the
slices skipped for selective predicates are exactly the ones that cannot match.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudilite.filegroup.slices import BaseFile, FileSlice
from hudilite.metadata.column_stats_records import INT, STRING, ColumnStats
from hudilite.read.data_skipping import skip_slices
from hudilite.read.where import Predicate
from hudilite.storage.layout import BaseFileName

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
