"""The public :class:`Table` API: the Spark facade over the engine.

``api`` holds :class:`Table` (create, load, write, read, snapshot); ``groups`` its method
groups (``t.services``, ``t.savepoints``, ``t.alter``, ``t.inspect``), whose operations
the flat names of earlier releases call; ``snapshot`` the pinned view; ``results`` every
type the methods return; ``save`` ``hudilite.save``, Hudi's DataFrame write through
``Table``. The package sits above every engine package (it drives the Spark jobs of
:mod:`hudilite.spark`) and holds no engine logic: table creation is
:mod:`hudilite.tablestate`'s, read planning :mod:`hudilite.read.query`'s (and
:mod:`hudilite.spark.table_read`'s), the services after a write
:mod:`hudilite.services.post_write`'s. No engine module imports this package, so it imports
pyspark (through ``api``) without a lazy hook.
"""

from __future__ import annotations

from hudilite.table.api import Table

__all__ = ["Table"]
