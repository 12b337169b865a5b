"""Damaged tables through the public API: Table.read, Table.to_arrow and SQL name the file.

Issue 9 items 5 and 8: a missing base file made every reader silently show the file
group's previous version; a truncated hoodie.properties was accepted.
"""

from __future__ import annotations

import os

import pytest

import hudilite
from hudilite.errors import CorruptFileError, MissingFileError
from hudilite.tablestate import properties_file as pf
from tests.helpers import rows, spark_rows
from tests.tables import ID_TS_P

pytestmark = pytest.mark.spark

COLS = ID_TS_P.columns


batch = ID_TS_P.batch


def test_missing_base_file_fails_every_reader_naming_it(spark, tmp_path):
    session = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    session.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p) "
        "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')"
    )
    session.sql("INSERT INTO t VALUES ('a', 1, 'x'), ('b', 1, 'y')")
    session.sql("UPDATE t SET ts = 2 WHERE id = 'a'")
    t = hudilite.Table.load(spark, str(tmp_path / "wh" / "default.db" / "t"))
    part = os.path.join(t.path, "p=x")
    newest = max(
        (f for f in os.listdir(part) if f.endswith(".parquet")), key=lambda f: f.rsplit("_", 1)[1]
    )
    os.remove(os.path.join(part, newest))
    for read in (t.read, t.to_arrow, lambda: session.sql("SELECT * FROM t")):
        with pytest.raises(MissingFileError, match=newest):
            read()
    # Asked to, the read goes on without the damaged file group (not its old version).
    ignore = {"hoodie.hudilite.read.ignore.missing.files": "true"}
    expected = [("b", 1, "y")]
    assert spark_rows(t.read(options=ignore), COLS) == expected
    assert rows(t.to_arrow(options=ignore), COLS) == expected


def test_truncated_properties_are_refused_and_recovered_from_the_backup(spark, tmp_path):
    t = ID_TS_P.create(spark, str(tmp_path / "t"))
    t.write(batch(("a", 5, "x")))
    path = os.path.join(t.path, pf.PROPERTIES_FILE)
    with open(path, "rb") as fh:
        intact = fh.read()
    with open(path, "wb") as fh:
        fh.write(intact[: intact.index(b"hoodie.compaction.payload.class")])
    with pytest.raises(CorruptFileError, match=r"hoodie\.properties"):
        hudilite.Table.load(spark, t.path)
    with pytest.raises(CorruptFileError, match=r"hoodie\.properties"):
        t.write(batch(("a", 1, "x")))
    # A valid backup left by an interrupted rewrite is what readers and writers use.
    with open(os.path.join(t.path, pf.BACKUP_FILE), "wb") as fh:
        fh.write(intact)
    t.write(batch(("a", 1, "x")))  # a late event: event-time ordering keeps ts=5
    assert rows(t.to_arrow(), COLS) == [("a", 5, "x")]
