"""A pinned, read-once view of a table: :class:`TableSnapshot` (``Table.snapshot()``).

``Table`` loads the table's state again for every call (its ``config`` and ``schema`` re-read
``hoodie.properties`` and the timeline on each access), so two reads through it may see two
different commits. A snapshot loads the state once -- config, timeline, schema and the
instant it stands at -- and every read through it plans against that one timeline. Hudi's
files are immutable and a file is visible only when the instant that wrote it completed on
the pinned timeline (:mod:`hudilite.filegroup.view`), so later commits do not change what the
snapshot reads until the cleaner deletes the file versions it needs (as with deltalake's
versioned handle and ``vacuum``).

A snapshot also carries the :class:`~hudilite.write.conflict.ReadSnapshot` of the commits it
saw, so ``table.write(rows, read_snapshot=snap)`` checks rows computed from its reads for
conflicts (snapshot isolation, docs/reliability.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

import pyarrow as pa

from hudilite.config import TableConfig
from hudilite.read.planner import validate_as_of
from hudilite.schema import avro_to_arrow_schema
from hudilite.timeline.instant import Instant
from hudilite.write.conflict import ReadSnapshot

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame

    from hudilite.tablestate.state import TableState

SnapshotQuery = Literal["snapshot", "read_optimized"]


class _Reader(Protocol):
    """What a snapshot reads through: ``Table``'s reads of a given state (a protocol, so
    that this module need not import ``hudilite.table.api``, which imports it)."""

    @property
    def path(self) -> str: ...

    def _read(
        self,
        state: TableState,
        query_type: str,
        as_of: str | None,
        start: str | None,
        end: str | None,
        where: str | None,
        options: Mapping[str, Any] | None,
    ) -> DataFrame: ...

    def _to_arrow(
        self,
        state: TableState,
        query_type: str,
        as_of: str | None,
        start: str | None,
        end: str | None,
        columns: list[str] | None,
        options: Mapping[str, Any] | None,
        where: str | None = None,
    ) -> pa.Table: ...


def _data_columns(schema: pa.Schema) -> pa.Schema:
    """``schema`` without Hudi's meta columns (``_hoodie_is_deleted`` is data), as
    ``TableState.data_schema`` shows a table's columns."""
    return pa.schema(
        [f for f in schema if not f.name.startswith("_hoodie_") or f.name == "_hoodie_is_deleted"]
    )


@dataclass(frozen=True, eq=False)
class TableSnapshot:
    """One table state, read once: ``config``, ``schema``, ``timeline`` and ``instant`` do
    not change, and :meth:`read` / :meth:`to_arrow` return the same rows however many
    commits land after it.

    ``as_of``: the time-travel instant (``yyyyMMddHHmmssSSS``) when the snapshot was taken
    with one, else None (the latest state). ``instant`` (alias ``version``): the latest
    completed instant the snapshot sees (by completion time on table version 8+, by
    requested time on 6), None for an empty table. ``timeline``: the instants of the active
    timeline when the snapshot was taken (as of ``as_of``: those requested at or before it).
    ``schema``: the data columns of the latest write the snapshot sees.
    """

    table: _Reader = field(repr=False)
    state: TableState = field(repr=False)
    as_of: str | None
    config: TableConfig = field(repr=False)
    schema: pa.Schema = field(repr=False)
    timeline: tuple[Instant, ...] = field(repr=False)
    isolation: ReadSnapshot = field(repr=False)

    @classmethod
    def take(
        cls, table: _Reader, state: TableState, as_of: str | int | datetime | None = None
    ) -> TableSnapshot:
        """The snapshot of ``state`` (loaded just now), or of it as of ``as_of`` (an instant
        time or a date-time, as ``Table.read(as_of=)`` takes). An instant the table can no
        longer answer raises :class:`~hudilite.errors.InstantNotFoundError`, a malformed one
        :class:`~hudilite.errors.ConfigError`, as a read would."""
        timeline = state.timeline
        if as_of is None:
            return cls(
                table,
                state,
                None,
                state.config,
                state.data_schema,
                tuple(timeline.instants),
                ReadSnapshot.of(timeline),
            )
        instant = validate_as_of(state.view, as_of)
        vis = state.view.visibility(as_of=instant)
        avro = timeline.schema_json(state.config.create_schema, vis.is_visible)
        schema = _data_columns(avro_to_arrow_schema(avro)) if avro else state.data_schema
        # The commits a read as of ``instant`` sees: exactly those a write computed from it
        # saw (an exact ``seen`` set; any later commit counts as unseen).
        seen = [i for i in timeline.completed() if vis.is_visible(i.requested_time)]
        latest = max(
            seen,
            key=lambda i: timeline.completion_time(i.requested_time) or i.requested_time,
            default=None,
        )
        isolation = ReadSnapshot(
            latest.requested_time if latest is not None else None,
            frozenset(i.requested_time for i in seen),
        )
        instants = tuple(i for i in timeline.instants if i.requested_time <= instant)
        return cls(table, state, instant, state.config, schema, instants, isolation)

    @property
    def instant(self) -> str | None:
        """The latest completed instant the snapshot sees (None: the table was empty)."""
        return self.isolation.instant

    @property
    def seen(self) -> frozenset[str] | None:
        """Requested times of the completed instants the snapshot sees
        (:attr:`ReadSnapshot.seen <hudilite.write.conflict.ReadSnapshot.seen>`)."""
        return self.isolation.seen

    @property
    def version(self) -> str | None:
        """Alias of :attr:`instant` (deltalake's name for the state a handle reads)."""
        return self.instant

    @property
    def path(self) -> str:
        """The table's base path."""
        return self.table.path

    def read(
        self,
        *,
        query_type: SnapshotQuery = "snapshot",
        where: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> DataFrame:
        """The snapshot's rows as a Spark DataFrame, as ``Table.read`` reads them (``where``
        prunes partitions first); read optimized reads the base files only."""
        return self.table._read(self.state, query_type, self.as_of, None, None, where, options)

    def to_arrow(
        self,
        *,
        query_type: SnapshotQuery = "snapshot",
        columns: list[str] | None = None,
        options: Mapping[str, Any] | None = None,
        where: str | None = None,
    ) -> pa.Table:
        """The snapshot's rows as a pyarrow Table, read in this process without Spark (see
        ``Table.to_arrow``; ``where`` filters and prunes partitions there too)."""
        return self.table._to_arrow(
            self.state, query_type, self.as_of, None, None, columns, options, where
        )

    def __repr__(self) -> str:
        at = f", as_of={self.as_of!r}" if self.as_of else ""
        return f"TableSnapshot({self.path!r}, instant={self.instant!r}{at})"
