"""CALL procedures with Hudi's names (issue: CALL procedures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hudilite.errors import HudiliteError

__all__ = ["UnknownProcedureError", "run_procedure"]


class UnknownProcedureError(HudiliteError, ValueError):
    """``CALL`` names a procedure that does not exist."""


def run_procedure(
    session: Any, name: str, args: Sequence[Any], named_args: Mapping[str, Any]
) -> Any:
    """Run procedure ``name`` for a SQL session; returns its rows as a DataFrame."""
    raise UnknownProcedureError(f"unknown procedure {name!r}")
