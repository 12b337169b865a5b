"""CALL procedures with Apache Hudi's names, parameters and output columns.

``run_procedure(session, name, args, named_args)`` runs one for the SQL layer; every
module of this package registers its procedures in :data:`registry.REGISTRY` when
imported (:func:`_load_all` imports them all).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .registry import (
    REGISTRY,
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    ProcedureSpec,
    UnknownProcedureError,
    lookup,
    procedure,
    run_registered,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "REGISTRY",
    "Output",
    "Param",
    "ProcedureArgumentError",
    "ProcedureContext",
    "ProcedureError",
    "ProcedureSpec",
    "UnknownProcedureError",
    "procedure",
    "procedure_names",
    "procedure_spec",
    "run_procedure",
]

_loaded = False


def _load_all() -> None:
    """Import every procedure module once, so each registers its procedures."""
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.name != "registry" and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


def procedure_names() -> list[str]:
    """The names ``CALL`` accepts, sorted (every procedure module loaded first)."""
    _load_all()
    return sorted(REGISTRY)


def procedure_spec(name: str) -> ProcedureSpec | None:
    """The procedure ``CALL name`` runs (``system.`` and other prefixes ignored, any case),
    or None for an unknown name; every procedure module is loaded first."""
    _load_all()
    try:
        return lookup(name)
    except UnknownProcedureError:
        return None


def run_procedure(
    session: Any, name: str, args: Sequence[Any], named_args: Mapping[str, Any]
) -> DataFrame:
    """Run procedure ``name`` for a SQL session (anything with ``spark``, ``catalog``,
    ``current_database`` and ``options``); returns its rows as a DataFrame. Every procedure
    module is loaded (registered) first."""
    _load_all()
    return run_registered(session, name, args, named_args)
