"""Spark SQL views of hudilite tables that read the table's current snapshot at every query.

``CREATE TEMPORARY VIEW t USING hudilite OPTIONS (path '...')`` cannot do that in Spark 4.x:
the command (``CreateTempViewUsing``) stores the *analyzed* plan, holding one
``PythonDataSourceV2`` provider instance, and that instance plans its read once
(``PythonDataSourceV2.getOrCreateReadInfo`` keeps the partitions it got from the first
query). Such a view shows the snapshot of its first query until it is created again.

What Spark does re-resolve at every query is the SQL text of a view created with
``AS SELECT``, and a table of the session catalog resolves to a fresh provider instance
each time. So :func:`create_view` makes two objects:

* an *anchor*: ``spark_catalog._hudilite.<db>__<name>``, a catalog table ``USING hudilite``
  (its schema is the table's, read once when it is created). Spark does not hand a catalog
  table's location or options to a Python data source, so the anchor alone reads nothing;
* the view, ``AS SELECT * FROM <anchor> WITH ('path' = '<table path>')``: the ``WITH``
  options reach the data source, and every query plans the snapshot afresh. One query
  plans once, so all its tasks read one instant.

With ``database=None`` the view is a temporary view (``name``); with a database it is a
view of that database in the session catalog (``db.name``), the only way Spark gives
qualified names (temporary views cannot have a database; global temporary views all live
in ``global_temp``). The anchor and the databases are catalog objects: in the default
in-memory catalog they last as long as the Spark application; in a session with a Hive
metastore they are stored there. A table that gains columns after its view was created
keeps the view's columns until :func:`create_view` runs again.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from hudilite.errors import ConfigError

#: The session-catalog database holding the anchors.
ANCHOR_DATABASE = "_hudilite"
#: Where the databases this module creates say they live. Spark makes the folders and
#: writes nothing in them; ``DROP DATABASE ... CASCADE`` deletes a database's folder, so
#: it must never be a folder holding table data (such as a hudilite warehouse's).
DATABASES_LOCATION = os.path.join(tempfile.gettempdir(), "hudilite-spark-databases")


def quote(name: str) -> str:
    """``name`` as a back-quoted Spark identifier."""
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    """``text`` as a single-quoted Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _location(path: str) -> str:
    """URIs as given, local paths absolute (the view must not depend on the directory
    the query runs in)."""
    if "://" in path or path.startswith("file:"):
        return path
    return os.path.abspath(path)


def ensure_database(spark: Any, database: str) -> None:
    """``CREATE DATABASE IF NOT EXISTS`` in the session catalog, located in an empty folder
    of its own under :data:`DATABASES_LOCATION` (not under Spark's warehouse directory,
    and never where table data lives: dropping the database deletes its folder)."""
    location = os.path.join(DATABASES_LOCATION, f"{database}.db")
    spark.sql(
        f"CREATE DATABASE IF NOT EXISTS spark_catalog.{quote(database)} "
        f"LOCATION {literal(_location(location))}"
    )


def create_view(spark: Any, name: str, path: str, *, database: str | None = None) -> str:
    """Create (or replace) a view ``name`` (``database.name`` when ``database`` is given)
    of the hudilite table at ``path`` that reads the current snapshot at every query, and
    return its qualified name. ``database`` must exist in the session catalog (see
    :func:`ensure_database`). The ``hudilite`` data source must be registered."""
    if not name or not path:
        raise ConfigError(f"a view needs a name and a table path, got {name!r} and {path!r}")
    ensure_database(spark, ANCHOR_DATABASE)
    anchor_name = f"{database or ''}__{name}"
    anchor = f"spark_catalog.{quote(ANCHOR_DATABASE)}.{quote(anchor_name)}"
    location = _location(path)
    # An anchor of the same name may point at another table: make it again. With a
    # LOCATION the catalog entry is EXTERNAL, so dropping it never deletes the table's files.
    spark.sql(f"DROP TABLE IF EXISTS {anchor}")
    spark.sql(f"CREATE TABLE {anchor} USING hudilite LOCATION {literal(location)}")
    body = f"SELECT * FROM {anchor} WITH ('path' = {literal(location)})"
    if database is None:
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {quote(name)} AS {body}")
        return name
    target = f"spark_catalog.{quote(database)}.{quote(name)}"
    spark.sql(f"CREATE OR REPLACE VIEW {target} AS {body}")
    return f"{database}.{name}"
