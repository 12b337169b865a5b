"""hudilite reads the real Hudi tables in ../shared exactly as hudi-rs does."""

from __future__ import annotations

import pytest

import hudilite
from tests.conftest import fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read, rows, spark_rows

COW = [z for z in fixture_zips() if "/cow/" in str(z)]


@pytest.mark.skipif(not COW, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", COW, ids=[fixture_id(z) for z in COW])
def test_cow_fixture_snapshot_and_time_travel(spark, tmp_path, zip_path):
    base = unzip_table(zip_path, tmp_path)
    t = hudilite.Table.load(spark, str(base))
    expected = hudi_rs_read(str(base))
    ours = t.read()
    if expected.num_columns == 0:
        assert ours.count() == 0
        return
    cols = expected.column_names
    assert ours.columns == cols
    assert spark_rows(ours, cols) == rows(expected, cols)
    # Time travel to every completed commit agrees too.
    for instant in t.timeline():
        if instant.state.name != "COMPLETED" or instant.action not in ("commit", "replacecommit"):
            continue
        theirs = hudi_rs_read(str(base), as_of=instant.requested_time)
        mine = t.read(as_of=instant.requested_time)
        assert spark_rows(mine, cols) == rows(theirs, cols), instant


@pytest.mark.skipif(not COW, reason="../shared/fixtures is absent")
def test_cow_fixture_incremental(spark, tmp_path):
    zp = next(z for z in COW if "v6_nonpartitioned" in str(z))
    base = unzip_table(zp, tmp_path)
    t = hudilite.Table.load(spark, str(base))
    first = t.timeline()[0].requested_time
    theirs = hudi_rs_read(str(base), start=first)
    cols = ["_hoodie_commit_time", "_hoodie_record_key", "id", "name", "isActive"]
    assert spark_rows(t.read(query_type="incremental", start=first), cols) == rows(theirs, cols)
    assert len(rows(theirs, cols)) == 2  # Alice's update and Diana's insert
