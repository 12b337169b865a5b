"""Persistent views in the warehouse catalog: stored, listed, replaced, dropped, and sharing
one namespace with tables (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudilite.catalog import (
    Catalog,
    DatabaseNotEmptyError,
    DatabaseNotFoundError,
    ViewColumn,
    ViewEntry,
)
from hudilite.errors import TableExistsError, TableNotFoundError


def _view(name: str = "v", db: str = "default", sql: str = "SELECT id FROM t") -> ViewEntry:
    return ViewEntry(
        name=name,
        database=db,
        sql=sql,
        columns=(ViewColumn("id", "bigint", "the key"),),
        query_columns=("id",),
        context_database=db,
        comment="a view",
    )


def _fake_table(cat: Catalog, db: str, name: str) -> None:
    # A table entry is enough for the name checks (no Hudi table needed).
    cat.gw.write_bytes(f"_catalog/{db}/tables/{name}.json", b"{}")


def test_create_get_list_drop(tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    created = cat.create_view(_view("Sales_V"))
    assert created.name == "sales_v" and created.created_at.endswith("Z")
    other = Catalog(str(tmp_path))  # another process sees it at once
    assert other.list_views("default") == ["sales_v"]
    got = other.get_view("default", "SALES_V")
    assert (got.sql, got.columns, got.query_columns, got.comment) == (
        "SELECT id FROM t",
        (ViewColumn("id", "bigint", "the key"),),
        ("id",),
        "a view",
    )
    assert other.view_exists("default", "sales_v") and not other.table_exists("default", "sales_v")
    assert other.drop_view("default", "sales_v") is True
    assert other.list_views("default") == []
    assert other.drop_view("default", "sales_v", if_exists=True) is False
    with pytest.raises(TableNotFoundError, match=r"^view default\.sales_v does not exist$"):
        other.drop_view("default", "sales_v")


def test_exists_replace_and_if_not_exists(tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    cat.create_view(_view())
    with pytest.raises(TableExistsError, match=r"^view default\.v already exists$"):
        cat.create_view(_view(sql="SELECT 2"))
    assert cat.create_view(_view(sql="SELECT 2"), if_not_exists=True).sql == "SELECT id FROM t"
    assert cat.create_view(_view(sql="SELECT 2"), replace=True).sql == "SELECT 2"
    assert cat.get_view("default", "v").sql == "SELECT 2"
    assert not list((tmp_path / "_catalog" / "default" / "views").glob("*.tmp*"))


def test_views_and_tables_share_names(tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    _fake_table(cat, "default", "t")
    with pytest.raises(
        TableExistsError, match=r"^cannot create view default\.t: a table of that name exists$"
    ):
        cat.create_view(_view("t"), replace=True)
    cat.create_view(_view("v"))
    with pytest.raises(
        TableExistsError, match=r"^cannot create table default\.v: a view of that name exists$"
    ):
        cat.create_table("default", "v", lambda loc: None)
    assert cat.list_tables("default") == ["t"]


def test_missing_database_and_drop_database(tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    with pytest.raises(DatabaseNotFoundError, match=r"^database nodb does not exist$"):
        cat.create_view(_view(db="nodb"))
    cat.create_database("sales")
    cat.create_view(_view("v1", db="sales"))
    with pytest.raises(DatabaseNotEmptyError, match=r"1 views: v1\); use CASCADE"):
        cat.drop_database("sales")
    assert cat.drop_database("sales", cascade=True) is True
    assert not cat.database_exists("sales")


def test_entry_json_round_trip() -> None:
    entry = _view()
    assert ViewEntry.from_json(entry.to_json()) == entry
