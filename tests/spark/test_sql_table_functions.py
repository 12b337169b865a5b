"""Hudi's SQL table-valued functions through ``hudilite.connect()``: ``hudi_query``
(snapshot, read_optimized, incremental), ``hudi_filesystem_view``, ``hudi_table_changes``'s
``cdc`` format (``hudi_metadata``: test_sql_hudi_metadata.py), on tiny COW and MOR tables,
with exact rows, exact errors, and hudi-rs reading what ``hudi_query`` returns."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hudilite.sqlext.statements import SqlParseError, TableName, UnsupportedStatementError
from hudilite.thriftserver.sandbox import Policy, Sandbox
from hudilite.thriftserver.users import PermissionDenied
from tests.helpers import hudi_rs_read, sql_rows


def make(session: Any, kind: str, name: str = "trips", partitioned: bool = True) -> str:
    """Insert a (sf) and b (ny), then update a: the table's location and the first instant."""
    part = "PARTITIONED BY (city) " if partitioned else ""
    session.sql(
        f"CREATE TABLE {name} (uuid STRING, ts BIGINT, fare DOUBLE, city STRING) USING hudi "
        f"{part}WITH ('primaryKey'='uuid', 'preCombineField'='ts', 'type'='{kind}')"
    )
    session.sql(f"INSERT INTO {name} VALUES ('a', 1, 10.0, 'sf'), ('b', 1, 20.0, 'ny')")
    return session.table(TableName(None, name)).timeline()[-1].requested_time


def rs_rows(path: str, **opts: str) -> list[tuple[Any, ...]]:
    got = hudi_rs_read(path, **opts).to_pylist()
    return sorted((r["uuid"], r["fare"]) for r in got)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_hudi_query_modes(session: Any, kind: str) -> None:
    first = make(session, kind)
    session.sql("UPDATE trips SET fare = 12.0 WHERE uuid = 'a'")
    tbl = session.table(TableName(None, "trips"))
    second = tbl.timeline()[-1].requested_time
    path = tbl.path

    snapshot = [("a", 12.0), ("b", 20.0)]
    # Merge-on-read: the update sits in a log file that a read-optimized query skips.
    optimized = [("a", 10.0), ("b", 20.0)] if kind == "mor" else snapshot
    q = "SELECT uuid, fare FROM hudi_query({}) ORDER BY uuid"
    assert sql_rows(session, q.format("'trips', 'snapshot'")) == snapshot
    assert sql_rows(session, q.format("'default.trips', 'read_optimized'")) == optimized
    assert sql_rows(session, q.format(f"'{path}', 'snapshot'")) == snapshot
    assert sql_rows(session, q.format(f"'{path}', 'read_optimized'")) == optimized
    assert rs_rows(path) == snapshot
    assert rs_rows(path, read_optimized="true") == optimized
    # Hudi's meta columns come first, as in a read of the table.
    cols = session.sql("SELECT * FROM hudi_query('trips', 'read_optimized')").columns
    assert cols == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
        "uuid",
        "ts",
        "fare",
        "city",
    ]

    # incremental: the records committed in (start, end].
    assert sql_rows(session, q.format(f"'trips', 'incremental', '{first}'")) == [("a", 12.0)]
    assert sql_rows(session, q.format(f"'{path}', 'incremental', 'earliest'")) == snapshot
    assert sql_rows(session, q.format(f"'trips', 'incremental', 'earliest', '{first}'")) == [
        ("a", 10.0),
        ("b", 20.0),
    ]
    assert rs_rows(path, start=first) == [("a", 12.0)]
    assert sql_rows(session, q.format(f"'trips', 'incremental', '{second}'")) == []

    # Time travel keeps working next to the functions.
    assert sql_rows(
        session, f"SELECT uuid, fare FROM trips TIMESTAMP AS OF '{first}' ORDER BY uuid"
    ) == [("a", 10.0), ("b", 20.0)]


def test_hudi_query_argument_errors(session: Any) -> None:
    make(session, "mor")
    cases = [
        (
            "hudi_query('trips', 'snapshot', '2024')",
            SqlParseError,
            "hudi_query: no additional args are expected in `snapshot` mode, got '2024'",
        ),
        (
            "hudi_query('trips', 'read_optimized', 1, 2)",
            SqlParseError,
            "hudi_query: no additional args are expected in `read_optimized` mode, got '1', '2'",
        ),
        (
            "hudi_query('trips', 'timeline')",
            UnsupportedStatementError,
            "'hudi_query' doesn't support `timeline`; use 'snapshot', 'read_optimized' or "
            "'incremental'",
        ),
        (
            # Hudi matches the mode as written.
            "hudi_query('trips', 'SNAPSHOT')",
            UnsupportedStatementError,
            "'hudi_query' doesn't support `SNAPSHOT`; use 'snapshot', 'read_optimized' or "
            "'incremental'",
        ),
        (
            "hudi_query('trips')",
            SqlParseError,
            "hudi_query expects arguments (table_name or table_path, query_type"
            "[, start_instant[, end_instant]]), got 1 argument(s)",
        ),
        (
            "hudi_query('trips', 'incremental')",
            SqlParseError,
            "hudi_query in `incremental` mode needs a start instant: "
            "hudi_query(table, 'incremental', start_instant[, end_instant])",
        ),
        (
            "hudi_query('trips', NULL)",
            SqlParseError,
            "hudi_query argument 2 is NULL; expected (table_name or table_path, query_type"
            "[, start_instant[, end_instant]])",
        ),
        (
            "hudi_query('a.b.c', 'snapshot')",
            SqlParseError,
            "invalid table name 'a.b.c': expected 'table' or 'db.table'",
        ),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as info:
            session.sql(f"SELECT * FROM {call}")
        prefix = "SQL parse error: " if error is SqlParseError else ""
        assert str(info.value) == prefix + message, call


def _files(path: str, partition: str) -> tuple[list[str], list[str]]:
    """The base and log file names in ``partition``, from the file system itself."""
    names = sorted(os.listdir(os.path.join(path, partition)))
    bases = [n for n in names if n.endswith(".parquet")]
    logs = [n for n in names if ".log." in n and not n.endswith(".crc")]
    return bases, logs


def _size(path: str, partition: str, name: str) -> int:
    return os.path.getsize(os.path.join(path, partition, name))


FSVIEW = "SELECT * FROM hudi_filesystem_view({}) ORDER BY Partition_Path, Base_Instant_Time"


def test_filesystem_view_mor(session: Any) -> None:
    first = make(session, "mor")
    session.sql("UPDATE trips SET fare = 12.0 WHERE uuid = 'a'")
    tbl = session.table(TableName(None, "trips"))
    path = tbl.path
    version = int(tbl.state().config.table_version)
    df = session.sql(FSVIEW.format("'trips', 'city=*'"))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("File_ID", "string"),
        ("Partition_Path", "string"),
        ("Base_Instant_Time", "string"),
        ("Base_File_Path", "string"),
        ("Base_File_Size", "bigint"),
        ("Log_File_Count", "bigint"),
        ("Log_File_Size", "bigint"),
        ("Log_File_Scheduled", "bigint"),
        ("Log_File_Unscheduled", "bigint"),
    ]
    expected = []
    for partition in ("city=ny", "city=sf"):
        (base,), logs = _files(path, partition)
        log_size = sum(_size(path, partition, n) for n in logs)
        # Version 6 log names carry the slice's base instant ("scheduled"), version 8+
        # the delta commit's.
        scheduled = log_size if version < 8 else 0
        expected.append(
            (
                base.split("_")[0],
                partition,
                first,
                f"file:{path}/{partition}/{base}",
                _size(path, partition, base),
                len(logs),
                log_size,
                scheduled,
                log_size - scheduled,
            )
        )
    assert [e[5] for e in expected] == [0, 1]  # the update wrote one log file
    assert sql_rows(session, FSVIEW.format("'trips', 'city=*'")) == expected
    assert sql_rows(session, FSVIEW.format(f"'{path}', '/city={{sf,la}}/'")) == expected[1:]
    # Hudi lists <base>/<glob>/*: without a glob only files at the base path, none here.
    assert sql_rows(session, FSVIEW.format("'trips'")) == []
    assert sql_rows(session, FSVIEW.format("'trips', 'city=la'")) == []


def test_filesystem_view_cow_lists_every_slice(session: Any) -> None:
    first = make(session, "cow", partitioned=False)
    session.sql("UPDATE trips SET fare = 12.0 WHERE uuid = 'a'")
    tbl = session.table(TableName(None, "trips"))
    second = tbl.timeline()[-1].requested_time
    path = tbl.path
    bases, logs = _files(path, "")
    assert len(bases) == 2 and logs == []
    by_instant = {b.rsplit("_", 1)[1].split(".")[0]: b for b in bases}
    assert sorted(by_instant) == [first, second]
    expected = [
        (
            by_instant[t].split("_")[0],
            "",
            t,
            f"file:{path}/{by_instant[t]}",
            _size(path, "", by_instant[t]),
            0,
            0,
            0,
            0,
        )
        for t in (first, second)
    ]
    assert sql_rows(session, FSVIEW.format("'trips'")) == expected
    assert sql_rows(session, FSVIEW.format(f"'{path}', ''")) == expected


def test_table_changes_cdc_needs_cdc_enabled(session: Any) -> None:
    first = make(session, "cow")
    with pytest.raises(UnsupportedStatementError) as info:
        session.sql(f"SELECT * FROM hudi_table_changes('trips', 'cdc', '{first}')")
    assert str(info.value) == (
        "hudi_table_changes query type 'cdc' is not supported on trips: the table was not "
        "created with hoodie.table.cdc.enabled=true (as in Hudi, a cdc query needs it); "
        "use 'latest_state'"
    )
    with pytest.raises(UnsupportedStatementError) as info:
        session.sql("SELECT * FROM hudi_table_changes('trips', 'snapshot', 'earliest')")
    assert str(info.value) == (
        "hudi_table_changes query type 'snapshot' is not supported; use 'latest_state' or 'cdc'"
    )
    assert sql_rows(
        session,
        "SELECT uuid FROM hudi_table_changes('trips', 'latest_state', 'earliest') ORDER BY uuid",
    ) == [("a",), ("b",)]


def test_sandbox_checks_the_paths_of_every_table_function(tmp_path: Path) -> None:
    """The Thrift server's sandbox refuses a reader's table function over a path outside
    the warehouse, for each of Hudi's functions, and allows one inside it."""
    wh = tmp_path / "wh"
    inside = wh / "default.db" / "t"
    inside.mkdir(parents=True)
    reader = Sandbox("reader", Policy.for_server(str(wh), admin_trusted=False))
    calls = {
        "hudi_query": "'snapshot'",
        "hudi_table_changes": "'latest_state', 'earliest'",
        "hudi_filesystem_view": "'*'",
        "hudi_metadata": "",
    }
    for name, rest in calls.items():
        more = f", {rest}" if rest else ""
        with pytest.raises(PermissionDenied) as info:
            reader.check_statement(f"SELECT * FROM {name}('/etc'{more})")
        assert str(info.value) == (
            f"permission denied: {name}('/etc') names a path outside the warehouse {wh}; "
            "role 'reader' may read and write paths only inside it"
        )
        reader.check_statement(f"SELECT * FROM {name}('{inside}'{more})")


def _image(text: str | None) -> tuple[Any, ...] | None:
    if text is None:
        return None
    doc = json.loads(text)
    return (doc["_hoodie_commit_time"], doc["uuid"], doc["fare"])


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_table_changes_cdc_on_a_cdc_enabled_table(session: Any, kind: str) -> None:
    """A table whose hoodie.properties enables CDC (as Hudi writes it for
    ``hoodie.table.cdc.enabled=true``) gives Hudi's cdc rows: op, ts_ms, before, after."""
    c1 = make(session, kind)
    tbl = session.table(TableName(None, "trips"))
    session.sql("UPDATE trips SET fare = 12.0 WHERE uuid = 'a'")
    c2 = tbl.timeline()[-1].requested_time
    session.sql("DELETE FROM trips WHERE uuid = 'b'")
    c3 = tbl.timeline()[-1].requested_time
    props = Path(tbl.path) / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.cdc.enabled=true\n")
    df = session.sql("SELECT * FROM hudi_table_changes('trips', 'cdc', 'earliest')")
    assert df.columns == ["op", "ts_ms", "before", "after"]
    got = sorted((r.ts_ms, r.op, _image(r.before), _image(r.after)) for r in df.collect())
    assert got == [
        (c1, "i", None, (c1, "a", 10.0)),
        (c1, "i", None, (c1, "b", 20.0)),
        (c2, "u", (c1, "a", 10.0), (c2, "a", 12.0)),
        (c3, "d", (c1, "b", 20.0), None),
    ]
    window = f"SELECT op, ts_ms FROM hudi_table_changes('{tbl.path}', 'cdc', '{c1}', '{c2}')"
    assert sql_rows(session, window) == [("u", c2)]
