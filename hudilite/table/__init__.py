"""The public :class:`Table` API: the Spark facade over the engine.

``api`` holds :class:`Table` (create, load, write, read, services, ALTER). It sits above
every engine package (it drives the Spark jobs of :mod:`hudilite.spark`); the table's loaded
state, its ``hoodie.properties`` and table creation are :mod:`hudilite.tablestate`'s,
ALTER-style property changes and schema evolution :mod:`hudilite.services`'. No engine
module imports this package, so it imports pyspark (through ``api``) without a lazy hook.
"""

from __future__ import annotations

from hudilite.table.api import Table

__all__ = ["Table"]
