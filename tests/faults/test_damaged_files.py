"""Damaged files: never silently skipped, always an error naming the file (issue 9 item 8),
and a damaged ``hoodie.properties`` never silently changes the table (item 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite.errors import HudiliteError
from tests.faults.harness import COLS, SCHEMA, assert_readers_match, recs, write
from tests.helpers import rows, spark_rows

pytestmark = [pytest.mark.faults, pytest.mark.spark]


def _latest_base_file(path: Path) -> Path:
    """The live base file of partition ``p=p1`` (the newest one, by instant time)."""
    files = sorted(path.glob("p=p1/*.parquet"), key=lambda f: f.stem.rsplit("_", 1)[-1])
    return files[-1]


def _latest_commit_file(path: Path) -> Path:
    return sorted(path.glob(".hoodie/*.commit"))[-1]


def _reads_fail_naming(spark, path: Path, name: str) -> None:
    """Both hudilite readers fail with a HudiliteError whose message names ``name``."""
    import hudilite

    table = hudilite.Table.load(spark, str(path))
    with pytest.raises(HudiliteError, match=re.escape(name)):
        table.to_arrow()
    with pytest.raises(HudiliteError, match=re.escape(name)):
        table.read().collect()


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_damaged_base_file_fails_the_read_naming_it(spark, seeded, damage: str) -> None:
    """Guarantee: a live base file that is truncated or missing is never skipped: both
    readers fail with an error naming the file."""
    path, _ = seeded("cow6")
    victim = _latest_base_file(path)
    if damage == "missing":
        victim.unlink()
    else:
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    _reads_fail_naming(spark, path, victim.name)


def test_garbage_commit_file_is_named(spark, seeded) -> None:
    """Guarantee: a garbage completed commit file fails reads with an error naming the
    file, instead of dropping that commit's rows."""
    path, _ = seeded("cow6")
    victim = _latest_commit_file(path)
    victim.write_bytes(b"\x00\xffnot json{")
    _reads_fail_naming(spark, path, victim.name)


def test_empty_commit_file_keeps_the_commit(spark, seeded) -> None:
    """Guarantee: an empty completed commit file reads as empty metadata, as Hudi reads it:
    the commit's files are still found and neither hudilite reader loses its rows.
    (hudi-rs 0.5 refuses such a table: "Failed to parse JSON commit metadata".)"""
    import hudilite

    path, oracle = seeded("cow6")
    _latest_commit_file(path).write_bytes(b"")
    table = hudilite.Table.load(spark, str(path))
    assert rows(table.to_arrow(), COLS) == oracle.rows(COLS)
    assert spark_rows(table.read(), COLS) == oracle.rows(COLS)


def test_truncated_properties_are_refused(spark, seeded) -> None:
    """Guarantee: a truncated ``hoodie.properties`` (ordering field line lost) is refused
    by readers and writers instead of silently changing the merge rule."""
    import hudilite

    path, _ = seeded("cow6")
    props = path / ".hoodie" / "hoodie.properties"
    lines = props.read_text(encoding="latin-1").splitlines(keepends=True)
    props.write_text("".join(lines[: len(lines) // 2]), encoding="latin-1")
    with pytest.raises(HudiliteError, match=r"hoodie\.properties"):
        hudilite.Table.load(spark, str(path)).write(
            pa.Table.from_pylist(recs([1], 50, "late"), schema=SCHEMA)
        )


def test_truncated_properties_recover_from_the_backup(spark, seeded) -> None:
    """Guarantee: with a valid ``hoodie.properties.backup`` (as Hudi keeps during updates),
    a truncated ``hoodie.properties`` is recovered and nothing is lost."""
    path, oracle = seeded("cow6")
    props = path / ".hoodie" / "hoodie.properties"
    (path / ".hoodie" / "hoodie.properties.backup").write_bytes(props.read_bytes())
    props.write_bytes(props.read_bytes()[: props.stat().st_size // 2])
    # The ordering field survived: a late event (smaller ts) does not overwrite newer data.
    late = recs(range(6, 10), 0, "late")
    write(spark, path, late)
    assert_readers_match(spark, path, oracle)


def test_garbage_properties_is_a_clear_error(spark, seeded) -> None:
    """Guarantee: binary garbage in ``hoodie.properties`` is a HudiliteError naming the
    file, not a UnicodeDecodeError."""
    import hudilite

    path, _ = seeded("cow6")
    (path / ".hoodie" / "hoodie.properties").write_bytes(b"\xff\xfe\x00garbage\x81\n=\n")
    with pytest.raises(HudiliteError, match=r"hoodie\.properties"):
        hudilite.Table.load(spark, str(path))
