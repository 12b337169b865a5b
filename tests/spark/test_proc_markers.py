"""``delete_marker`` through SQL ``CALL`` (issue 30), with Hudi's parameters and output:
stale marker folders of completed instants are deleted (one instant or a comma-separated
list, by table name or path); a pending instant's markers and a malformed instant time are
refused by name and nothing is deleted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.sqlext.statements import TableName
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.write.transaction import WriteTransaction
from tests.helpers import call

DONE_RE = re.compile(r"^(?P<t>\d+)(?:_\d+)?\.commit$")


def stale_marker(base: Path, instant: str) -> Path:
    """A marker folder as a writer that died between completing and cleaning up leaves it."""
    folder = base / ".hoodie" / ".temp" / instant
    (folder / "p=x").mkdir(parents=True)
    (folder / "p=x" / f"f1_0-1-0_{instant}.parquet.marker.CREATE").write_bytes(b"")
    return folder


def test_delete_marker(spark: Any, tmp_path: Path) -> None:
    s = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    s.sql(
        "CREATE TABLE t (id INT, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p) "
        "TBLPROPERTIES (primaryKey='id', preCombineField='ts')"
    )
    s.sql("INSERT INTO t VALUES (1, 1, 'x')")
    s.sql("INSERT INTO t VALUES (2, 1, 'x')")
    base = Path(s.entry(TableName(None, "t")).location)
    # version 6 (the default): the timeline is .hoodie itself
    c1, c2 = sorted(m["t"] for p in (base / ".hoodie").iterdir() if (m := DONE_RE.match(p.name)))
    temp = base / ".hoodie" / ".temp"
    assert not temp.exists() or list(temp.iterdir()) == []  # completed writes cleaned up

    m1 = stale_marker(base, c1)
    assert call(s, f"delete_marker(table => 't', instant_time => '{c1}')") == [(True,)]
    assert not m1.exists()
    # a list, by path; an instant with no markers (c2) is nothing to delete
    m1, m3 = stale_marker(base, c1), stale_marker(base, "20200101000000000")
    assert call(
        s, f"delete_marker(path => '{base}', instant_time => '{c1}, 20200101000000000,{c2}')"
    ) == [(True,)]
    assert (m1.exists(), m3.exists()) == (False, False)

    # refused: a malformed instant, a pending instant; nothing deleted. The pending write
    # starts first: a write's start deletes completed instants' leftover marker folders.
    gw = FileSystemGateway(str(base))
    txn = WriteTransaction(gw, TableState.load(gw).config, "commit")
    txn.__enter__()
    txn.start_inflight()
    assert txn._heartbeat is not None
    txn._heartbeat.__exit__(None, None, None)  # the writer died: no more heartbeats
    pending = stale_marker(base, txn.instant_time)  # what its file writes would leave
    kept = stale_marker(base, c1)
    with pytest.raises(ProcedureArgumentError) as arg_err:
        call(s, f"delete_marker('t', '{c1},2020-01-01')")
    assert str(arg_err.value) == (
        "delete_marker: instant_time '2020-01-01' is not an instant time (17 or 14 digits)"
    )
    with pytest.raises(ProcedureError) as err:
        call(s, f"delete_marker('t', '{c1},{txn.instant_time}')")
    assert str(err.value) == (
        f"delete_marker: instant {txn.instant_time} is a pending commit (INFLIGHT); its "
        "rollback needs its markers (the next write rolls a failed write back)"
    )
    assert (kept.exists(), pending.exists()) == (True, True)
