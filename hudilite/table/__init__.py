"""A Hudi table: the public :class:`Table` API.

``api`` holds :class:`Table` (the Spark-facing entry point), ``properties`` ALTER-style
property changes and ``schema_evolution`` ADD COLUMNS. The table's loaded state, its
``hoodie.properties`` and table creation are the engine's (:mod:`hudilite.tablestate`).
Importing this package does not import pyspark; only ``Table`` (loaded on first access) does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hudilite.table.api import Table

__all__ = ["Table"]


def __getattr__(name: str) -> Any:
    if name == "Table":
        # why lazy: Table loads pyspark; engine modules using hudilite.tablestate.state must not
        from hudilite.table.api import Table

        return Table
    raise AttributeError(f"module 'hudilite.table' has no attribute {name!r}")
