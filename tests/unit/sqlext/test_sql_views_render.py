"""The pure parts of persistent views (no JVM): DESCRIBE rows, SHOW CREATE TABLE text,
SHOW TABLES|VIEWS LIKE patterns and the stored query text."""

from __future__ import annotations

from hudilite.catalog import ViewColumn, ViewEntry
from hudilite.sqlext.ddl_show import like_matcher
from hudilite.sqlext.ddl_views import describe_view_rows, render_create_view
from hudilite.sqlext.dialect import view_query_text

ENTRY = ViewEntry(
    name="top fares",
    database="sales",
    sql="SELECT uuid, fare\nFROM default.trips -- big ones\nWHERE fare > 50",
    columns=(ViewColumn("id", "string", "it's the key"), ViewColumn("fare", "double")),
    query_columns=("uuid", "fare"),
    context_database="default",
    comment="fares over 50",
    properties={"owner": "bi"},
    created_at="2026-01-02T03:04:05.678Z",
)


def test_show_create_view_text() -> None:
    assert render_create_view(ENTRY) == (
        "CREATE VIEW sales.`top fares` (\n"
        "  id COMMENT 'it\\'s the key',\n"
        "  fare)\n"
        "COMMENT 'fares over 50'\n"
        "TBLPROPERTIES (\n"
        "  'owner' = 'bi')\n"
        "AS SELECT uuid, fare\n"
        "FROM default.trips -- big ones\n"
        "WHERE fare > 50"
    )


def test_describe_view_rows() -> None:
    assert describe_view_rows(ENTRY, extended=False) == [
        ("id", "string", "it's the key"),
        ("fare", "double", None),
    ]
    assert describe_view_rows(ENTRY, extended=True)[2:] == [
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Database", "sales", ""),
        ("Table", "top fares", ""),
        ("Created Time", "2026-01-02T03:04:05.678Z", ""),
        ("Type", "VIEW", ""),
        ("Comment", "fares over 50", ""),
        ("View Text", ENTRY.sql, ""),
        ("View Original Text", ENTRY.sql, ""),
        ("View Catalog and Namespace", "default", ""),
        ("View Query Output Columns", "[`uuid`, `fare`]", ""),
        ("Table Properties", "[owner=bi]", ""),
    ]


def test_like_patterns() -> None:
    names = ["trips", "trips_ro", "trips_rt", "fares", "Trip.x", "a+b"]
    match = like_matcher("trip*|FA*")
    assert [n for n in names if match.match(n)] == [
        "trips",
        "trips_ro",
        "trips_rt",
        "fares",
        "Trip.x",
    ]
    assert [n for n in names if like_matcher("a+b").match(n)] == ["a+b"]  # no regex meaning
    assert [n for n in names if like_matcher("trips").match(n)] == ["trips"]
    assert all(like_matcher(None).match(n) for n in names)


def test_view_query_text_is_kept_as_written() -> None:
    sql = (
        "CREATE OR REPLACE VIEW v (a COMMENT 'x (AS)', b) COMMENT 'AS' "
        "TBLPROPERTIES ('k' = 'AS')\nAS\n  WITH w AS (SELECT 1 AS a, 2 b) SELECT  *  FROM w"
    )
    assert view_query_text(sql) == "WITH w AS (SELECT 1 AS a, 2 b) SELECT  *  FROM w"
    assert view_query_text("ALTER VIEW v AS SELECT 1") == "SELECT 1"
    assert view_query_text("DROP VIEW v") is None
