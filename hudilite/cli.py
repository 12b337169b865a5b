"""The ``hudilite`` command line (composition root: imports lazily)."""

from __future__ import annotations

import os
import sys

import click


@click.group()
@click.version_option(package_name="hudilite")
def main() -> None:
    """hudilite: Apache Hudi tables for PySpark."""


@main.command()
@click.option(
    "--warehouse",
    default=lambda: os.environ.get("HUDILITE_WAREHOUSE", "./hudilite-warehouse"),
    show_default="$HUDILITE_WAREHOUSE or ./hudilite-warehouse",
    help="Folder the demo table is created in.",
)
@click.option("--table-version", type=click.Choice(["6", "8"]), default="6", show_default=True)
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def demo(warehouse: str, table_version: str, debug: bool) -> None:
    """Create a trips table, upsert, delete, time-travel and print it."""
    from hudilite.demo import run_demo
    from hudilite.errors import HudiliteError

    try:
        run_demo(warehouse, table_version=6 if table_version == "6" else 8, echo=click.echo)
    except HudiliteError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
