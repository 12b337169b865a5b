"""CALL procedures with Apache Hudi's names, parameters and output columns.

``run_procedure(session, name, args, named_args)`` runs one for the SQL layer; every
module of this package registers its procedures in :data:`registry.REGISTRY` when
imported (:func:`_load_all` imports them all).
"""

from __future__ import annotations

import importlib
import pkgutil

from .registry import (
    REGISTRY,
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    ProcedureSpec,
    UnknownProcedureError,
    procedure,
    run_procedure,
)

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
