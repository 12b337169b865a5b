"""What the repair procedures' unit tests share: calling a registered procedure without
Spark (the table named by ``path``), and the small engine-built table they repair."""

from __future__ import annotations

from typing import Any

from hudilite.procedures import REGISTRY, ProcedureContext, _load_all
from hudilite.procedures.registry import bind
from tests.unit.services.test_compaction_plan import DATA, MiniTable

__all__ = ["DATA", "MiniTable", "call"]

_load_all()


def call(name: str, **named: Any) -> list[tuple[Any, ...]]:
    """``CALL name(k => v, ...)`` as the SQL layer binds it, run in this process (no Spark:
    these procedures only use the table's storage)."""
    spec = REGISTRY[name]
    ctx = ProcedureContext(None, None, "default", None, spec.name)  # type: ignore[arg-type]
    return list(spec.func(ctx, bind(spec, [], named)))
