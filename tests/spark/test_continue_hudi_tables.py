"""Continuing every table a Hudi release wrote (issue 25): an upsert that updates a row and
adds a key, a delete, a compaction (merge-on-read) or clustering (copy-on-write), and a clean.
After each step hudi-rs and hudilite read exactly what a plain-dict oracle holds; tables that
carried a metadata table lose it (hudi-rs lists files through it, so a stale one would hide
hudilite's commits).
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudilite
from hudilite.schema import META_COLUMNS
from hudilite.write import metadata_guard
from tests.conftest import fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read, rows

ZIPS = fixture_zips()
#: Options a Hudi writer of these tables would have to pass too (none so far: every fixture's
#: hoodie.properties carries its key generator's settings).
WRITE_OPTIONS: dict[str, dict[str, str]] = {}


def _changed(value: Any, field: pa.Field) -> Any:
    """A different value of ``field``'s type."""
    t = field.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return f"{value or ''}-changed"
    if pa.types.is_boolean(t):
        return not value
    if pa.types.is_integer(t):
        return (value or 0) + 7
    if pa.types.is_floating(t):
        return (value or 0.0) + 1.5
    if pa.types.is_decimal(t):
        return (value or decimal.Decimal(0)) + decimal.Decimal(1)
    return None


def _value(field: pa.Field, i: int) -> Any:
    """A value number ``i`` of ``field``'s type."""
    t = field.type
    if pa.types.is_string(t):
        return f"{field.name}-{i}"
    if pa.types.is_boolean(t):
        return i % 2 == 0
    if pa.types.is_integer(t):
        return i
    if pa.types.is_floating(t):
        return i + 0.5
    raise AssertionError(f"no value for {field}")


def _new_key_value(value: Any, field: pa.Field) -> Any:
    t = field.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return f"{value}-new"
    if pa.types.is_integer(t):
        return value + 100_000
    raise AssertionError(f"no new key for {field}")


def _later(value: Any, field: pa.Field) -> Any:
    """An ordering value that wins over ``value``."""
    t = field.type
    if value is None:
        return None
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return value + 1000
    if pa.types.is_timestamp(t):
        return value + dt.timedelta(seconds=1000)
    if pa.types.is_string(t):
        return value + "~"
    return value


class Oracle:
    """The table's rows by (partition path, record key), as the data columns."""

    def __init__(self, table: pa.Table) -> None:
        self.data_cols = [c for c in table.column_names if c not in META_COLUMNS]
        self.schema = table.select(self.data_cols).schema
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        for r in table.to_pylist():
            key = (r["_hoodie_partition_path"], r["_hoodie_record_key"])
            self.rows[key] = {c: r[c] for c in self.data_cols}

    def expected(self) -> list[tuple]:
        table = pa.Table.from_pylist(list(self.rows.values()), self.schema)
        return rows(table, self.data_cols) if self.rows else []


def _read_both(t: Any, base: Path, cols: list[str]) -> tuple[list[tuple], list[tuple]]:
    theirs = hudi_rs_read(str(base))
    ours = t.to_arrow()
    return (rows(theirs, cols) if theirs.num_rows else []), rows(ours.select(cols), cols)


@pytest.mark.skipif(not ZIPS, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_continue_a_hudi_written_table(spark, tmp_path, zip_path):
    base = unzip_table(zip_path, tmp_path)
    had_metadata_table = (base / ".hoodie" / "metadata").is_dir()
    opts = WRITE_OPTIONS.get(fixture_id(zip_path), {})
    t = hudilite.Table.load(spark, str(base))
    start = hudi_rs_read(str(base))
    if start.num_rows == 0:
        # A table Hudi created but never wrote: its first rows come from hudilite.
        first = [{f.name: _value(f, i) for f in t.schema} for i in (1, 2)]
        assert t.write(pa.Table.from_pylist(first, t.schema), options=opts).num_inserts == 2
        start = hudi_rs_read(str(base))
    config = t.config
    oracle = Oracle(start)
    cols = oracle.data_cols
    schema = t.to_arrow().select(cols).schema
    keys = list(config.record_key_fields)
    partition_names = set(config.partition_field_names)
    ordering = next(iter(config.ordering_fields), None)

    # An upsert that updates one row and adds a key.
    (old_key, old_row), (del_key, _) = sorted(oracle.rows.items())[:2]
    target = next(
        f
        for f in schema
        if f.name not in (*keys, *partition_names, ordering)
        and _changed(old_row[f.name], f) is not None
    )
    updated = dict(old_row)
    updated[target.name] = _changed(old_row[target.name], target)
    if ordering:
        updated[ordering] = _later(old_row[ordering], schema.field(ordering))
    added = dict(old_row)
    added[keys[0]] = _new_key_value(old_row[keys[0]], schema.field(keys[0]))
    with pytest.warns(metadata_guard.MetadataTableRemoved) if had_metadata_table else _nothing():
        result = t.write(pa.Table.from_pylist([updated, added], schema), options=opts)
    assert (result.num_updates, result.num_inserts) == (1, 1)
    oracle.rows[old_key] = updated
    new_key = (old_key[0], old_key[1].replace(str(old_row[keys[0]]), str(added[keys[0]])))
    oracle.rows[new_key] = added
    assert not (base / ".hoodie" / "metadata").exists()
    theirs, ours = _read_both(t, base, cols)
    assert theirs == ours == oracle.expected()

    # A delete of another key.
    doomed = [
        {c: r[c] for c in cols}
        for r in t.to_arrow().to_pylist()
        if (r["_hoodie_partition_path"], r["_hoodie_record_key"]) == del_key
    ]
    assert len(doomed) == 1
    result = t.write(pa.Table.from_pylist(doomed, schema), operation="delete", options=opts)
    assert result.num_deletes == 1
    del oracle.rows[del_key]
    theirs, ours = _read_both(t, base, cols)
    assert theirs == ours == oracle.expected()

    # The table service that applies, then a clean.
    if config.is_mor:
        t.compact(options=opts)
    else:
        t.cluster(options=opts)
    t.clean(options={**opts, "hoodie.clean.commits.retained": "1"})
    theirs, ours = _read_both(t, base, cols)
    assert theirs == ours == oracle.expected()
    assert rows(t.read().select(*cols).toArrow(), cols) == oracle.expected()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
