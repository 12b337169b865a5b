"""The catalog's stored entries: one small JSON document per database, table and view.

:class:`DatabaseEntry` and :class:`TableEntry` say where a database's or a table's data
lives; :class:`ViewEntry` holds a persistent view: its SQL text as written, the database its
unqualified names resolve in, its columns (names, Spark types, comments) and creation time.
The entries are plain values; :class:`~hudilite.catalog.warehouse.Catalog` reads and writes
them (crash-safe: atomic replace and exclusive create).

A view stores the column names its query returned when it was created
(``query_columns``), as Spark records "View Query Output Columns": a later query on the
view selects those columns by name from the query's current result and renames them to the
view's column names, so ``SELECT *`` over a table that gained a column keeps the view's shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

__all__ = ["ENTRY_FORMAT", "DatabaseEntry", "TableEntry", "ViewColumn", "ViewEntry"]

ENTRY_FORMAT = 1


@dataclass(frozen=True)
class DatabaseEntry:
    """One database: its name, folder for managed tables and creation details."""

    name: str
    location: str
    created_at: str
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> bytes:
        """The stored JSON form."""
        doc = {"format": ENTRY_FORMAT, "kind": "database", **self.__dict__}
        return json.dumps(doc, indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> DatabaseEntry:
        """Parse a stored entry (unknown keys are ignored)."""
        doc = json.loads(data)
        return cls(
            name=doc["name"],
            location=doc["location"],
            created_at=doc.get("created_at", ""),
            comment=doc.get("comment"),
            properties=dict(doc.get("properties") or {}),
        )


@dataclass(frozen=True)
class TableEntry:
    """One table as the catalog knows it.

    ``properties`` are the SQL options exactly as given at ``CREATE TABLE`` (plus later
    ``SET TBLPROPERTIES``); the Hudi config on disk is the truth about the table itself.
    """

    name: str
    database: str
    location: str
    external: bool
    properties: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    @property
    def qualified_name(self) -> str:
        """``database.name``."""
        return f"{self.database}.{self.name}"

    @property
    def managed(self) -> bool:
        """True when the catalog owns the data (dropping the table deletes it)."""
        return not self.external

    def to_json(self) -> bytes:
        """The stored JSON form."""
        doc = {"format": ENTRY_FORMAT, "kind": "table", **self.__dict__}
        return json.dumps(doc, indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> TableEntry:
        """Parse a stored entry (unknown keys are ignored)."""
        doc = json.loads(data)
        return cls(
            name=doc["name"],
            database=doc["database"],
            location=doc["location"],
            external=bool(doc.get("external", False)),
            properties={str(k): str(v) for k, v in (doc.get("properties") or {}).items()},
            created_at=doc.get("created_at", ""),
            updated_at=doc.get("updated_at", ""),
        )


@dataclass(frozen=True)
class ViewColumn:
    """One column of a view: its name, Spark type (``bigint``, ``struct<a:string>``) and
    comment."""

    name: str
    data_type: str
    comment: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The stored form."""
        return {"name": self.name, "data_type": self.data_type, "comment": self.comment}


@dataclass(frozen=True)
class ViewEntry:
    """One persistent view (``CREATE VIEW``); see the module doc.

    ``sql`` is the view's query as written; ``context_database`` the database its
    unqualified table names resolve in (the current database when it was created);
    ``query_columns`` the query's output column names then, in the order of ``columns``.
    """

    name: str
    database: str
    sql: str
    columns: tuple[ViewColumn, ...]
    query_columns: tuple[str, ...]
    context_database: str
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    @property
    def qualified_name(self) -> str:
        """``database.name``."""
        return f"{self.database}.{self.name}"

    @property
    def column_names(self) -> list[str]:
        """The view's column names, in order."""
        return [c.name for c in self.columns]

    def to_json(self) -> bytes:
        """The stored JSON form."""
        doc = {
            "format": ENTRY_FORMAT,
            "kind": "view",
            **self.__dict__,
            "columns": [c.to_dict() for c in self.columns],
            "query_columns": list(self.query_columns),
        }
        return json.dumps(doc, indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> ViewEntry:
        """Parse a stored entry (unknown keys are ignored)."""
        doc = json.loads(data)
        columns = tuple(
            ViewColumn(str(c["name"]), str(c.get("data_type") or ""), c.get("comment"))
            for c in doc.get("columns") or []
        )
        return cls(
            name=doc["name"],
            database=doc["database"],
            sql=doc["sql"],
            columns=columns,
            query_columns=tuple(str(c) for c in doc.get("query_columns") or []),
            context_database=doc.get("context_database") or doc["database"],
            comment=doc.get("comment"),
            properties={str(k): str(v) for k, v in (doc.get("properties") or {}).items()},
            created_at=doc.get("created_at", ""),
            updated_at=doc.get("updated_at", ""),
        )
