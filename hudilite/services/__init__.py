"""Table services: compaction, cleaning, savepoints, restore and rollback of completed instants,
and the ALTER-style changes (``properties``: SET/UNSET TBLPROPERTIES and RENAME under the
table lock; ``schema_evolution``: ADD COLUMNS and type widening, as a commit).

Every entry point takes a :class:`hudilite.tablestate.state.TableState` (reloaded inside where a
fresh timeline matters) plus options (a mapping of Hudi option keys, or ``Options``;
table properties and write defaults apply underneath) and returns a result dataclass with
metrics. No pyspark here: ``hudilite.spark.services_job`` runs compaction operations as
Spark tasks through the ``runner`` hook of :func:`compact`/:func:`execute_compaction`.
"""

from hudilite.services.clean import (
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    CleanPlan,
    CleanResult,
    clean,
    execute_clean,
    pending_cleans,
    plan_clean,
    schedule_clean,
)
from hudilite.services.compaction import (
    COMPACT_DELTA_COMMITS,
    COMPACT_DELTA_SECONDS,
    COMPACT_TRIGGER_STRATEGY,
    COMPACTION_ORDER,
    COMPACTION_TARGET_IO_MB,
    CompactionOperation,
    CompactionPlan,
    CompactionPlanResult,
    CompactionResult,
    compact,
    execute_compaction,
    log_base_instants,
    pending_compactions,
    read_compaction_plan,
    schedule_compaction,
)
from hudilite.services.restore import RestoreResult, restore
from hudilite.services.rollback_completed import RollbackInstantResult, rollback_instant
from hudilite.services.savepoint import (
    SavepointInfo,
    create_savepoint,
    delete_savepoint,
    get_savepoint,
    list_savepoints,
)

__all__ = [
    "CLEANER_COMMITS_RETAINED",
    "CLEANER_FILE_VERSIONS_RETAINED",
    "CLEANER_HOURS_RETAINED",
    "CLEANER_POLICY",
    "COMPACTION_ORDER",
    "COMPACTION_TARGET_IO_MB",
    "COMPACT_DELTA_COMMITS",
    "COMPACT_DELTA_SECONDS",
    "COMPACT_TRIGGER_STRATEGY",
    "CleanPlan",
    "CleanResult",
    "CompactionOperation",
    "CompactionPlan",
    "CompactionPlanResult",
    "CompactionResult",
    "RestoreResult",
    "RollbackInstantResult",
    "SavepointInfo",
    "clean",
    "compact",
    "create_savepoint",
    "delete_savepoint",
    "execute_clean",
    "execute_compaction",
    "get_savepoint",
    "list_savepoints",
    "log_base_instants",
    "pending_cleans",
    "pending_compactions",
    "plan_clean",
    "read_compaction_plan",
    "restore",
    "rollback_instant",
    "schedule_clean",
    "schedule_compaction",
]
