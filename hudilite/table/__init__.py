"""A Hudi table: the public :class:`Table` API, its loaded state and its properties.

``api`` holds :class:`Table` (the Spark-facing entry point), ``state`` the table's loaded
configuration and timeline (:class:`TableState`), ``properties_file`` the one owner of
``.hoodie/hoodie.properties``, ``properties`` ALTER-style property changes and
``schema_evolution`` ADD COLUMNS. Importing this package does not import pyspark; only
``Table`` (loaded on first access) does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hudilite.table.api import Table

__all__ = ["Table"]


def __getattr__(name: str) -> Any:
    if name == "Table":
        # why lazy: Table loads pyspark; engine modules using hudilite.table.state must not
        from hudilite.table.api import Table

        return Table
    raise AttributeError(f"module 'hudilite.table' has no attribute {name!r}")
