"""Merge semantics: which version of a record wins, as one pure function over Arrow tables.

The same code de-duplicates a batch (:func:`precombine`), merges a batch into a
COW base file (:func:`merge_file_group`), emits changelogs (:func:`changelog_rows`),
and serves compaction and MOR reads, so all of them agree (``docs/dev/hudi-format.md``
§7). :class:`MergeSpec` says how records compare (mode, partial update, sequence
groups, delete markers); :mod:`hudilite.merge.merger` documents the rules.
"""

from hudilite.merge.merger import (
    OP_DELETE,
    OP_INSERT,
    OP_UPDATE_AFTER,
    OP_UPDATE_BEFORE,
    MergeOutcome,
    apply_delete_markers,
    changelog_rows,
    merge_file_group,
    precombine,
)
from hudilite.merge.spec import (
    COMMIT_TIME_ORDERING,
    EMPTY_PAYLOAD,
    EVENT_TIME_ORDERING,
    MODES,
    PARTIAL_UPDATE,
    PARTIAL_UPDATE_MODE,
    PAYLOAD_MODES,
    PAYLOADS,
    SEQUENCE_GROUPS,
    MergeSpec,
    SequenceGroup,
    format_sequence_groups,
    is_empty_payload,
    mode_for_payload,
    parse_sequence_groups,
    payload_semantics,
)

__all__ = [
    "COMMIT_TIME_ORDERING",
    "EMPTY_PAYLOAD",
    "EVENT_TIME_ORDERING",
    "MODES",
    "OP_DELETE",
    "OP_INSERT",
    "OP_UPDATE_AFTER",
    "OP_UPDATE_BEFORE",
    "PARTIAL_UPDATE",
    "PARTIAL_UPDATE_MODE",
    "PAYLOADS",
    "PAYLOAD_MODES",
    "SEQUENCE_GROUPS",
    "MergeOutcome",
    "MergeSpec",
    "SequenceGroup",
    "apply_delete_markers",
    "changelog_rows",
    "format_sequence_groups",
    "is_empty_payload",
    "merge_file_group",
    "mode_for_payload",
    "parse_sequence_groups",
    "payload_semantics",
    "precombine",
]
