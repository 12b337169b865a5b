"""A hudilite warehouse's tables as Spark SQL views (``hudilite.register(spark, warehouse=)``).

Every table of every database of the warehouse becomes a view of the Spark session
catalog named ``<db>.<table>`` (see :mod:`hudilite.spark.views`: each query reads the
table's current snapshot), so plain ``spark.sql``, notebooks and Spark's own tools query
hudilite tables without hudilite's SQL front end. The Spark databases are created in
empty folders of their own (:data:`hudilite.spark.views.DATABASES_LOCATION`), never at the
warehouse's database folders: Spark's ``DROP DATABASE ... CASCADE`` deletes a database's
folder, which must not take the hudilite tables with it. ``default`` exists in every
Spark session. Unqualified
names resolve in Spark's current database (``default`` unless the session ran ``USE``),
so ``SELECT * FROM trips`` reads ``default.trips``.

The warehouse's *views* (hudilite SQL text) are not registered: their SQL is hudilite's
dialect (``hudi_table_changes``, ``TIMESTAMP AS OF`` on hudilite tables), not Spark's.
A table whose files cannot be read (missing folder, broken ``hoodie.properties``) is
skipped with a warning naming it; the others are registered.

No pyspark import: the session is driven through :mod:`hudilite.spark.views`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudilite.errors import warn_at_caller
from hudilite.spark.views import create_view, ensure_database

from .warehouse import DEFAULT_DATABASE, Catalog

__all__ = ["RegistrationWarning", "register_warehouse"]


class RegistrationWarning(UserWarning):
    """A warehouse table that could not be registered as a Spark view."""


def register_warehouse(
    spark: Any, warehouse: str | None = None, *, storage_options: Mapping[str, str] | None = None
) -> list[str]:
    """Register every table of ``warehouse`` (default ``$HUDILITE_WAREHOUSE`` or
    ``./hudilite-warehouse``) as the view ``<db>.<table>`` of ``spark``'s session catalog;
    return the names registered. The ``hudilite`` data source must be registered first
    (:func:`hudilite.register` does both)."""
    catalog = Catalog(warehouse, storage_options=storage_options)
    names: list[str] = []
    for db in catalog.list_databases():
        tables = catalog.list_tables(db)
        if not tables:
            continue
        if db != DEFAULT_DATABASE:
            ensure_database(spark, db)
        for table in tables:
            location = catalog.get_table(db, table).location
            try:
                names.append(create_view(spark, table, location, database=db))
            except Exception as exc:
                # Spark wraps the data source's error in its own (AnalysisException), so
                # any error here is this table's: name it and register the others.
                warn_at_caller(
                    f"hudilite table {db}.{table} at {location} was not registered: "
                    f"{_first_line(exc)}",
                    RegistrationWarning,
                )
    return names


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
