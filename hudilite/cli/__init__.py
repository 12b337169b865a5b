"""The ``hudilite`` command line: click commands, result formatting and the demo.

This package is the composition root (the top layer): it may import every other layer.
"""

from __future__ import annotations

from hudilite.cli.commands import main

__all__ = ["main"]
