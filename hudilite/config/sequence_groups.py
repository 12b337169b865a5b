"""Sequence groups: columns updated together by their own ordering column (Paimon's
``fields.<seq>.sequence-group``), the value of ``hoodie.hudilite.sequence.groups``.

The parsed option value lives with the options so that parsing it needs nothing from
:mod:`hudilite.merge` (which imports the options); :mod:`hudilite.merge.spec` re-exports
these names and :mod:`hudilite.merge.merger` applies the groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudilite.errors import ConfigError

__all__ = ["SequenceGroup", "format_sequence_groups", "parse_sequence_groups"]


@dataclass(frozen=True)
class SequenceGroup:
    """Columns updated together, by the record whose ``ordering_field`` is greatest.

    ``ordering_field`` belongs to the group (it is updated with the columns, as
    Paimon's sequence field is). See :mod:`hudilite.merge.merger` for the rule.
    """

    columns: tuple[str, ...]
    ordering_field: str

    def __post_init__(self) -> None:
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        columns = tuple(c.strip() for c in columns)
        ordering = str(self.ordering_field).strip()
        if not ordering:
            raise ConfigError("a sequence group needs an ordering field")
        if not columns or not all(columns):
            raise ConfigError(f"sequence group of {ordering!r} needs at least one column")
        if len(set(columns)) != len(columns):
            raise ConfigError(f"sequence group of {ordering!r} repeats a column: {columns}")
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "ordering_field", ordering)

    @property
    def all_columns(self) -> tuple[str, ...]:
        """The ordering field, then the columns (without repeating the ordering field)."""
        return (self.ordering_field, *(c for c in self.columns if c != self.ordering_field))


def parse_sequence_groups(text: str) -> tuple[SequenceGroup, ...]:
    """Parse ``"ts_a:name,email;ts_b:age"`` into sequence groups.

    Groups are separated by ``;``; each is ``<ordering column>:<column>[,<column>...]``.
    Whitespace around names is ignored, and so are empty groups (a trailing ``;``).
    A column may belong to one group only (:class:`MergeSpec` checks).
    """
    groups: list[SequenceGroup] = []
    for part in str(text).split(";"):
        if not part.strip():
            continue
        ordering, sep, columns = part.partition(":")
        if not sep:
            raise ConfigError(
                f"invalid sequence group {part.strip()!r}: expected '<ordering col>:<col>,<col>'"
            )
        groups.append(SequenceGroup(tuple(c for c in columns.split(",") if c.strip()), ordering))
    return tuple(groups)


def format_sequence_groups(groups: tuple[SequenceGroup, ...]) -> str:
    """The option text of ``groups`` (inverse of :func:`parse_sequence_groups`)."""
    return ";".join(f"{g.ordering_field}:{','.join(g.columns)}" for g in groups)
