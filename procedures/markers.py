"""``delete_marker``: remove the marker folders (``.hoodie/.temp/<instant>``) a crash left
behind, as Hudi's ``DeleteMarkerProcedure`` does.

Parameters and output are Hudi's: ``table`` and ``instant_time`` (a comma-separated list is
accepted), one row ``delete_marker_result`` (boolean). As in the other procedures, ``path``
may name the table instead, after Hudi's parameters. An instant with no marker folder is
fine (Hudi's ``quietDeleteMarkerDir``): there is nothing to delete. hudilite's own writes
also remove the leftover folders of completed instants when they start
(:mod:`hudilite.write.rollback`), so the procedure is for tables no write has touched since.

Beyond Hudi, the markers of a pending instant are refused: they are what its rollback
deletes (a version 6 log file's name carries the slice's base instant, not the writer's,
so without its marker the rollback leaves the file behind; ``hudilite.write.markers``).
A malformed instant time is refused too. Every instant is checked before any folder is
deleted, so a refused call deletes nothing. Hudi answers ``false`` when a deletion fails;
here an I/O error propagates with its message, since ``false`` would not say which.
"""

from __future__ import annotations

from typing import Any

from hudilite.timeline.instant_time import is_instant_time
from hudilite.write.markers import delete_markers

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)


@procedure(
    "delete_marker",
    [
        Param("table", "string"),
        Param("instant_time", "string", required=True),
        Param("path", "string"),
    ],
    [Output("delete_marker_result", "boolean")],
    "Deletes the marker folders of instants (comma-separated) left behind by a crash.",
)
def delete_marker(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``(true,)`` once the marker folder of every listed instant is gone; an instant that
    is malformed or still pending on the timeline is an error naming it, and nothing is
    deleted."""
    state = ctx.table(args).state()
    instants = [t.strip() for t in str(args["instant_time"]).split(",") if t.strip()]
    if not instants:
        raise ProcedureArgumentError(f"{ctx.procedure}: instant_time names no instant")
    for time in instants:
        if not is_instant_time(time):
            raise ProcedureArgumentError(
                f"{ctx.procedure}: instant_time {time!r} is not an instant time (17 or 14 digits)"
            )
        instant = state.timeline.get(time)
        if instant is not None and instant.is_pending:
            raise ProcedureError(
                f"{ctx.procedure}: instant {time} is a pending {instant.action} "
                f"({instant.state.name}); its rollback needs its markers (the next write "
                "rolls a failed write back)"
            )
    for time in instants:
        delete_markers(state.gw, time)
    return [(True,)]
