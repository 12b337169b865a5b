"""Table version procedures: ``upgrade_table`` and ``downgrade_table``.

As in Hudi both are the same procedure (``UpgradeOrDowngradeProcedure``): ``to_version``
alone decides the direction, and a table already at that version is left alone. The
version is Hudi's ``HoodieTableVersion`` name (``SIX``, ``EIGHT``, ``NINE``) or a plain
number (``'6'``, ``8``, ``9``); hudilite changes between 6, 8 and 9 one step at a time (see
:mod:`hudilite.services.upgrade` and, for 8 <-> 9, :mod:`hudilite.services.upgrade_nine`).
The result is ``true`` once the table is at ``to_version``. Where Hudi logs a failure and
answers ``false``, hudilite raises an error naming the offending value (an unknown version
name, an unsupported change, a write in flight), so a script cannot carry on with a table at
the wrong version.
"""

from __future__ import annotations

from typing import Any

from hudilite.errors import ConfigError
from hudilite.services.upgrade import parse_table_version

from .registry import Output, Param, ProcedureArgumentError, ProcedureContext, procedure

_PARAMS = [Param("table", "string", required=True), Param("to_version", "string", required=True)]


def _change(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    try:
        target = parse_table_version(args["to_version"])
    except ConfigError as exc:
        raise ProcedureArgumentError(f"{ctx.procedure}: {exc}") from None
    tbl = ctx.table(args)
    current = int(tbl.config.table_version)
    if target >= current:
        tbl.upgrade(target, options=ctx.options)
    else:
        tbl.downgrade(target, options=ctx.options)
    return [(True,)]


@procedure(
    "upgrade_table",
    _PARAMS,
    [Output("result", "boolean")],
    "Upgrades (or, given a lower version, downgrades) the table to to_version.",
)
def upgrade_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    return _change(ctx, args)


@procedure(
    "downgrade_table",
    _PARAMS,
    [Output("result", "boolean")],
    "Downgrades (or, given a higher version, upgrades) the table to to_version.",
)
def downgrade_table(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    return _change(ctx, args)
