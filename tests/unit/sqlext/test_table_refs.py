"""Rewriting a query to read views: the view names are spliced into the text as written,
and a position in the rewritten text maps back to the statement (issue 27.3)."""

from __future__ import annotations

from hudilite.sqlext.table_refs import Rewritten, TableReference, rewrite_query


def _views(ref: TableReference) -> str | None:
    if ref.function:
        return "__changes"
    if ref.name == "orders":
        return "__v_orders" + (f"_{ref.as_of}" if ref.as_of else "")
    return None


def test_view_names_are_spliced_into_the_text_as_written() -> None:
    sql = (
        "SELECT o.id, /* keep */ x.n\n"
        "FROM  default . orders o JOIN other x ON o.id = x.id\n"
        "JOIN orders TIMESTAMP AS OF '20240101000000000' AS p ON p.id = o.id\n"
        "WHERE o.id IN (SELECT id FROM orders) UNION ALL "
        "SELECT 1, 2 FROM hudi_table_changes('orders', 'latest_state', 'earliest') c"
    )
    out = rewrite_query(sql, _views)
    assert out.text == (
        "SELECT o.id, /* keep */ x.n\n"
        "FROM  `__v_orders` o JOIN other x ON o.id = x.id\n"
        "JOIN `__v_orders_20240101000000000` AS p ON p.id = o.id\n"
        "WHERE o.id IN (SELECT id FROM `__v_orders` AS `orders`) UNION ALL "
        "SELECT 1, 2 FROM `__changes` c"
    )
    assert out.edits is not None and len(out.edits) == 4


def test_positions_map_back_to_the_statement() -> None:
    sql = "SELECT o.zz FROM orders o JOIN orders p ON o.zz = p.id"
    out = rewrite_query(sql, _views)
    first = out.text.index("o.zz")
    second = out.text.index("o.zz", first + 1)
    assert [out.original_offset(first), out.original_offset(second)] == [7, 43]
    # Inside a view name: the start of the table reference it replaced.
    assert out.original_offset(out.text.index("__v_orders") + 3) == sql.index("orders")


def test_untouched_and_unspliceable_statements() -> None:
    assert rewrite_query("SELECT 1 FROM other", _views) == Rewritten("SELECT 1 FROM other", ())
    # A time travel to an expression: rendered again, and positions no longer map.
    out = rewrite_query("SELECT * FROM orders TIMESTAMP AS OF date_sub(now(), 1)", _views)
    assert out.edits is None
    assert out.original_offset(3) is None
