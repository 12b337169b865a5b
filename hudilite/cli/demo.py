"""A runnable tour: create a table, upsert, delete, time-travel, read incrementally.

``hudilite demo [--dir DIR]`` runs it in a local folder (default ``./hudilite-demo``, never
the ``hudilite sql`` warehouse); the table it leaves behind, ``DIR/trips``, is a real Hudi
table any Hudi reader can open.

The demo removes only what it made: it records the table it created in ``DIR/.hudilite-demo``,
and a second run replaces ``DIR/trips`` only when that record is there. Any other
``DIR/trips`` (a user's table, a file) makes it stop with :class:`DemoError` naming the path.
"""

from __future__ import annotations

import os
import shutil
from typing import Literal

import pyarrow as pa

import hudilite
from hudilite.errors import HudiliteError

DEFAULT_DIR = "./hudilite-demo"
TABLE = "trips"
MARKER = ".hudilite-demo"

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("ts", pa.int64()),
        ("rider", pa.string()),
        ("driver", pa.string()),
        ("fare", pa.float64()),
        ("city", pa.string()),
    ]
)

FIRST = [
    ("334e26e9", 1695159649087, "rider-A", "driver-K", 19.10, "san_francisco"),
    ("e96c4396", 1695091554788, "rider-C", "driver-M", 27.70, "san_francisco"),
    ("9909a8b1", 1695046462179, "rider-D", "driver-L", 33.90, "san_francisco"),
    ("e3cf430c", 1695516137016, "rider-F", "driver-P", 34.15, "sao_paulo"),
    ("7a84095f", 1695376420876, "rider-G", "driver-Q", 43.40, "sao_paulo"),
    ("3eeb61f7", 1695173887231, "rider-I", "driver-S", 41.06, "chennai"),
]
UPDATES = [
    ("9909a8b1", 1695046462999, "rider-D", "driver-L", 25.00, "san_francisco"),
    ("c8abbe79", 1695115999911, "rider-J", "driver-T", 17.85, "chennai"),
]


def _rows(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)


class DemoError(HudiliteError):
    """The demo's target exists and is not the demo's own."""


def prepare(directory: str) -> str:
    """The path of the demo table in ``directory``, cleared if an earlier demo made it.

    Raises :class:`DemoError` (removing nothing) when the path exists but this demo did
    not create it.
    """
    base = os.path.abspath(directory)
    path = os.path.join(base, TABLE)
    marker = os.path.join(base, MARKER)
    if os.path.lexists(path):
        if not _made_by_demo(marker):
            raise DemoError(
                f"{path} exists and was not created by hudilite demo; "
                "choose another --dir or remove it yourself"
            )
        shutil.rmtree(path)
    os.makedirs(base, exist_ok=True)
    with open(marker, "w", encoding="utf-8") as f:
        f.write(f"{TABLE}\n")
    return path


def _made_by_demo(marker: str) -> bool:
    try:
        with open(marker, encoding="utf-8") as f:
            return TABLE in f.read().split()
    except OSError:
        return False


def run_demo(directory: str = DEFAULT_DIR, *, table_version: Literal[6, 8] = 6, echo=print) -> None:
    """Create ``<directory>/trips`` afresh and walk through the main operations."""
    path = prepare(directory)
    spark = hudilite.spark_session()
    t = hudilite.Table.create(
        spark,
        path,
        SCHEMA,
        record_key="uuid",
        ordering_field="ts",
        partition_by=["city"],
        table_type="cow",
        table_version=table_version,
    )
    echo(f"created {t.path} (Hudi table version {table_version}, copy-on-write)")
    r1 = t.write(_rows(FIRST), operation="upsert")
    echo(f"1. {r1}")
    r2 = t.write(_rows(UPDATES), operation="upsert")
    echo(f"2. {r2}")
    r3 = t.write(_rows([FIRST[0]]), operation="delete")
    echo(f"3. {r3}")
    cols = ["_hoodie_commit_time", "uuid", "rider", "fare", "city"]
    echo("\nsnapshot now:")
    t.read().select(*cols).orderBy("uuid").show(truncate=False)
    echo(f"time travel to the first commit ({r1.instant_time}):")
    t.read(as_of=r1.instant_time).select(*cols).orderBy("uuid").show(truncate=False)
    echo(f"incremental changes after {r1.instant_time}:")
    t.read(query_type="incremental", start=r1.instant_time).select(*cols).orderBy("uuid").show(
        truncate=False
    )
    echo("only city = 'chennai' (partition pruned):")
    t.read(where="city = 'chennai'").select(*cols).orderBy("uuid").show(truncate=False)
    echo("timeline:")
    for i in t.timeline():
        echo(
            f"  {i.requested_time} {i.action:<14} {i.state.name:<10} "
            f"completed {i.completion_time or '-'}"
        )
