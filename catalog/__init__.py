"""Table catalog in the warehouse folder (issue: SQL extension and catalog)."""

from hudilite.catalog.entries import DatabaseEntry, TableEntry, ViewColumn, ViewEntry
from hudilite.catalog.warehouse import (
    CATALOG_DIR,
    DEFAULT_DATABASE,
    WAREHOUSE_ENV,
    Catalog,
    CatalogError,
    DatabaseExistsError,
    DatabaseNotEmptyError,
    DatabaseNotFoundError,
    InvalidNameError,
    default_warehouse,
    normalize_name,
)

__all__ = [
    "CATALOG_DIR",
    "DEFAULT_DATABASE",
    "WAREHOUSE_ENV",
    "Catalog",
    "CatalogError",
    "DatabaseEntry",
    "DatabaseExistsError",
    "DatabaseNotEmptyError",
    "DatabaseNotFoundError",
    "InvalidNameError",
    "TableEntry",
    "ViewColumn",
    "ViewEntry",
    "default_warehouse",
    "normalize_name",
]
