"""``hudilite.read.where.Predicate``: a read's SQL ``where`` evaluated in Arrow (issue 28:
``to_arrow(where=)`` prunes and filters without Spark), with SQL's three-valued logic."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from hudilite.errors import ConfigError
from hudilite.read.where import Predicate

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64()), ("p", pa.string()), ("d", pa.date32())])
DATA = pa.table(
    {
        "id": ["a", "b", "c", None],
        "n": [1, None, 3, 4],
        "p": ["x", "y", "x", "y"],
        "d": pa.array([19723, None, 19724, 19723], pa.date32()),  # 2024-01-01, -, 01-02, 01-01
    },
    schema=SCHEMA,
)


def ids(where: str) -> list[str | None]:
    return DATA.filter(Predicate.parse(where, SCHEMA).expression)["id"].to_pylist()


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("n > 1", ["c", None]),
        # NULL n fails the comparison and its negation alike.
        ("NOT (n > 1)", ["a"]),
        ("n IN (1, 3)", ["a", "c"]),
        ("n NOT IN (1, 3)", [None]),
        ("n IS NULL", ["b"]),
        ("id IS NOT NULL AND N BETWEEN 1 AND 3", ["a", "c"]),
        ("p = 'x' OR n = -4", ["a", "c"]),
        ("n <> 1 AND n != 3", [None]),
        ("d = '2024-01-01'", ["a", None]),
        ("d >= '2024-01-02' OR id = 'b'", ["b", "c"]),
        ("`p` = 'y' AND true", ["b", None]),
    ],
)
def test_rows_kept(where, expected):
    assert ids(where) == expected


def test_columns_named_resolve_case_insensitively():
    assert Predicate.parse("N > 1 AND (P = 'x' OR id IS NULL)", SCHEMA).columns == {
        "n",
        "p",
        "id",
    }


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("n >", "where 'n >' is not a SQL predicate: Required keyword: 'expression' missing"),
        ("x = 1", "where 'x = 1' names 'x', not a column of the table (id, n, p, d)"),
        ("n = 'abc'", "where \"n = 'abc'\": not a value of type int64: 'abc'"),
        (
            "upper(id) = 'A'",
            "where \"upper(id) = 'A'\": unsupported in a read without Spark (to_arrow): UPPER(id)",
        ),
        ("n + 1 > 2", "where 'n + 1 > 2': unsupported in a read without Spark (to_arrow): n + 1"),
        (
            "id LIKE 'a%'",
            "where \"id LIKE 'a%'\": unsupported in a read without Spark (to_arrow): id LIKE 'a%'",
        ),
        ("1 = 1", "where '1 = 1': a comparison needs a column on one side: 1 = 1"),
        ("p = 1", "where 'p = 1': compared with a string column, quote it ('1'): 1"),
        ("p IN ('x', -1)", "where \"p IN ('x', -1)\": compared with a string column, quote it"),
    ],
)
def test_refusals_name_the_offending_part(where, error):
    with pytest.raises(ConfigError) as info:
        Predicate.parse(where, SCHEMA)
    assert str(info.value).startswith(error), str(info.value)


PARTS = ["p=x/d=2024-01-01", "p=y/d=2024-01-02", "p=x/d=__HIVE_DEFAULT_PARTITION__"]


def values(path: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for seg in path.split("/"):
        k, v = seg.split("=")
        out[k] = v
    return out


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("p = 'x'", ["p=x/d=2024-01-01", "p=x/d=__HIVE_DEFAULT_PARTITION__"]),
        ("d > '2024-01-01'", ["p=y/d=2024-01-02"]),
        # The default partition's value is no date: NULL, kept by IS NULL only.
        ("d IS NULL", ["p=x/d=__HIVE_DEFAULT_PARTITION__"]),
        ("NOT (d = '2024-01-01')", ["p=y/d=2024-01-02"]),
        ("p = 'z'", []),
    ],
)
def test_partitions_pruned_by_their_values(where, expected):
    pred = Predicate.parse(where, SCHEMA)
    assert pred.partitions(PARTS, values, ["p", "d"], SCHEMA) == expected


def test_a_predicate_on_other_columns_prunes_nothing():
    pred = Predicate.parse("p = 'x' AND n > 1", SCHEMA)
    assert pred.partitions(PARTS, values, ["p", "d"], SCHEMA) is None
    assert Predicate.parse("p = 'x'", SCHEMA).partitions(PARTS, values, [], SCHEMA) is None


def test_boolean_columns_date_literals_and_exact_decimals():
    schema = pa.schema([("b", pa.bool_()), ("d", pa.date32()), ("m", pa.decimal128(15, 2))])
    data = pa.table(
        {
            "b": [True, False, None],
            "d": pa.array([19737, 19738, None], pa.date32()),  # 2024-01-15, 2024-01-16
            "m": pa.array([Decimal("5000.00"), Decimal("0.10"), None], pa.decimal128(15, 2)),
        },
        schema=schema,
    )

    def rows(where: str) -> list[int]:
        kept = data.append_column("i", pa.array([0, 1, 2])).filter(
            Predicate.parse(where, schema).expression
        )
        return kept["i"].to_pylist()

    assert rows("b") == [0]
    assert rows("NOT b") == [1]
    assert rows("d = DATE '2024-01-16'") == [1]
    assert rows("m = 5000.00 OR m = -0.10") == [0]
    assert rows("m = 0.1") == [1]
    with pytest.raises(ConfigError, match="unsupported in a read without Spark"):
        Predicate.parse("d", schema)
