"""Merge semantics: which version of a record wins, as one pure function over Arrow tables.

The same code de-duplicates a batch (:func:`precombine`), merges a batch into a
COW base file (:func:`merge_file_group`), and serves compaction and MOR reads,
so all four agree (``docs/hudi-format.md`` §7). :class:`MergeSpec` says how
records compare; :mod:`hudilite.merge.merger` documents the rules.
"""

from hudilite.merge.merger import MergeOutcome, apply_delete_markers, merge_file_group, precombine
from hudilite.merge.spec import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_ORDERING,
    MODES,
    PAYLOAD_MODES,
    MergeSpec,
    mode_for_payload,
)

__all__ = [
    "COMMIT_TIME_ORDERING",
    "EVENT_TIME_ORDERING",
    "MODES",
    "PAYLOAD_MODES",
    "MergeOutcome",
    "MergeSpec",
    "apply_delete_markers",
    "merge_file_group",
    "mode_for_payload",
    "precombine",
]
