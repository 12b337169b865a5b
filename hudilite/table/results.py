"""Every type :class:`~hudilite.table.api.Table`'s methods return, importable from one place.

The result types are defined beside the code that produces them (a clean's result in
:mod:`hudilite.services.clean`, a write's in :mod:`hudilite.write.result`, ...), across
the engine's packages; a user annotating a variable or pattern-matching on a result imports it from
here (or from :mod:`hudilite` itself, which re-exports these names lazily) instead of
learning the engine's module layout, which may change::

    from hudilite.table.results import CleanResult, WriteResult

    result: WriteResult = table.write(df)

``tests/unit/table/test_results_exports.py`` checks that every hudilite type in the return
annotation of a public ``Table`` method, and every ``*Result`` class of the engine, is
here. This module imports no pyspark.
"""

from __future__ import annotations

from hudilite.config import TableConfig
from hudilite.services.archive import ArchiveResult
from hudilite.services.archive_formats import ArchivedInstant
from hudilite.services.clean import CleanResult
from hudilite.services.clustering import ClusteringResult
from hudilite.services.clustering_plan import ClusteringGroup, ClusteringPlan, ClusteringSlice
from hudilite.services.compaction import CompactionPlanResult, CompactionResult
from hudilite.services.restore import RestoreResult
from hudilite.services.rollback_completed import RollbackInstantResult
from hudilite.services.savepoint import SavepointInfo
from hudilite.services.upgrade import VersionChangeResult
from hudilite.table.snapshot import TableSnapshot
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import Instant
from hudilite.write.conflict import ReadSnapshot
from hudilite.write.result import WriteResult
from hudilite.write.rollback import RollbackResult

__all__ = [
    "ArchiveResult",
    "ArchivedInstant",
    "CleanResult",
    "ClusteringGroup",
    "ClusteringPlan",
    "ClusteringResult",
    "ClusteringSlice",
    "CompactionPlanResult",
    "CompactionResult",
    "Instant",
    "ReadSnapshot",
    "RestoreResult",
    "RollbackInstantResult",
    "RollbackResult",
    "SavepointInfo",
    "TableConfig",
    "TableSnapshot",
    "TableState",
    "VersionChangeResult",
    "WriteResult",
]
