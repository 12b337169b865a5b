"""``show_file_status``, ``show_fs_path_detail``, ``export_instants`` and
``show_file_group_history`` through SQL ``CALL`` (issue 30), with Hudi's parameters and
output columns.

One tiny partitioned COW table gets five upserts of one key: a clean deletes the oldest base
files, a restore to a savepoint deletes the fourth commit's file and a rollback the fifth's.
Deleted files are found by listing the partition folder before and after each step, and
instants by the timeline's file names, not through hudilite. ``show_fs_path_detail`` is
checked against ``os.walk``; ``export_instants``' JSON against Avro's own ``JsonEncoder``
(Spark's JVM has Avro), which is what Hudi's ``HoodieAvroUtils.avroToJson`` calls;
``show_file_group_history``'s rows against the commit files decoded with json.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.sqlext.statements import TableName
from tests.helpers import call

TIMELINE_RE = re.compile(r"^(?P<t>\d+)(?:_\d+)?\.(?P<a>[a-z]+)$")


def completed(base: Path, action: str) -> list[str]:
    """Requested times of the completed ``action`` instants (table version 6: in .hoodie)."""
    return sorted(
        m["t"]
        for p in (base / ".hoodie").iterdir()
        if (m := TIMELINE_RE.match(p.name)) is not None and m["a"] == action
    )


def parquet(base: Path) -> set[str]:
    return {p.name for p in (base / "p=x").iterdir() if p.suffix == ".parquet"}


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The table after clean, restore and rollback, with the files each step deleted."""
    s = hudilite.connect(str(tmp_path_factory.mktemp("files") / "wh"), spark=spark)
    s.sql(
        "CREATE TABLE t (id INT, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p) "
        "TBLPROPERTIES (primaryKey='id', preCombineField='ts')"
    )
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    base = Path(s.entry(TableName(None, "t")).location)
    for ts in (1, 2, 3):
        s.sql(f"INSERT INTO t VALUES (1, {ts}, 'x')")
    before = parquet(base)
    assert len(call(s, "run_clean(table => 't', retain_commits => 1)")) == 1
    cleaned = before - parquet(base)
    c3 = completed(base, "commit")[-1]
    call(s, f"create_savepoint(table => 't', commit_time => '{c3}')")
    before = parquet(base)
    s.sql("INSERT INTO t VALUES (1, 4, 'x')")
    (f4,) = parquet(base) - before
    call(s, f"rollback_to_savepoint(table => 't', instant_time => '{c3}')")
    s.sql("INSERT INTO t VALUES (1, 5, 'x')")
    (f5,) = parquet(base) - before
    c5 = completed(base, "commit")[-1]
    call(s, f"rollback_to_instant(table => 't', instant_time => '{c5}')")
    assert parquet(base) == before and f4 not in before and f5 not in before
    return {"s": s, "base": base, "cleaned": sorted(cleaned), "f4": f4, "f5": f5}


def test_show_file_status(table: dict[str, Any]) -> None:
    s, base = table["s"], table["base"]
    assert table["cleaned"]  # retain_commits => 1 deleted the oldest version
    (clean,) = completed(base, "clean")
    (restore,) = completed(base, "restore")
    (rollback,) = completed(base, "rollback")  # the restore's own rollbacks are removed
    for name in table["cleaned"]:
        assert call(s, f"show_file_status('t', 'p=x', '{name}')") == [
            ("deleted", "clean", clean, "active", "")
        ]
    assert call(
        s, f"show_file_status(table => 't', partition => 'p=x', file => '{table['f4']}')"
    ) == [("deleted", "restore", restore, "active", "")]
    assert call(
        s, f"show_file_status(path => '{base}', partition => 'p=x', file => '{table['f5']}')"
    ) == [("deleted", "rollback", rollback, "active", "")]
    live = sorted(parquet(base))
    assert live
    for name in live:
        assert call(s, f"show_file_status('t', 'p=x', '{name}')") == [
            ("exist", "", "", "active", f"{base}/p=x/{name}")
        ]
    assert call(s, "show_file_status('t', 'p=x', 'nope.parquet')") == [("unknown", "", "", "", "")]
    with pytest.raises(ProcedureArgumentError) as arg_err:
        call(s, f"show_file_status(table => 't', file => '{live[0]}')")
    assert str(arg_err.value) == (
        "show_file_status: table t is a partitioned table; give the partition "
        "(partition => ...) the file is in"
    )
    with pytest.raises(ProcedureError) as err:
        call(s, "show_file_status('t', 'p=zz', 'nope.parquet')")
    assert str(err.value) == f"show_file_status: partition 'p=zz' does not exist in {base}"


def summary(path: Path) -> tuple[int, int, int]:
    """(folders including path itself, files, bytes) by os.walk."""
    if path.is_file():
        return 0, 1, path.stat().st_size
    folders, files, size = 1, 0, 0
    for _, dirs, names in os.walk(path):
        folders += len(dirs)
        files += len(names)
        size += sum((Path(_) / n).stat().st_size for n in names)
    return folders, files, size


def unit(size: int) -> str:
    for name, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.2f}{name}"
    return f"{size}B"


def row(path: Path) -> tuple[Any, ...]:
    folders, files, size = summary(path)
    return (folders, files, size, unit(size), f"file:{path}", size, -1, -1)


def test_show_fs_path_detail(table: dict[str, Any]) -> None:
    s, base = table["s"], table["base"]
    assert call(s, f"show_fs_path_detail(path => '{base}')") == [row(base)]
    children = sorted((row(p) for p in base.iterdir()), key=lambda r: (-r[2], r[4]))
    assert [p.name for p in base.iterdir()] and len(children) == 2  # .hoodie and p=x
    assert call(s, f"show_fs_path_detail(path => '{base}', is_sub => true)") == children
    by_files = sorted(children, key=lambda r: (-r[1], r[4]))
    assert call(s, f"show_fs_path_detail('{base}', true, false, 1)") == by_files[:1]
    # a glob: the partition folder, and each parquet file in it (largest first)
    assert call(s, f"show_fs_path_detail(path => '{base}/p=*')") == [row(base / "p=x")]
    files = sorted((row(base / "p=x" / n) for n in parquet(base)), key=lambda r: (-r[2], r[4]))
    assert call(s, f"show_fs_path_detail(path => '{base}/p=x/*.parquet')") == files
    assert call(s, f"show_fs_path_detail(path => '{base}/q*')") == []
    with pytest.raises(ProcedureError) as err:
        call(s, f"show_fs_path_detail(path => '{base}/none')")
    assert str(err.value) == f"show_fs_path_detail: path '{base}/none' does not exist"


def avro_json(spark: Any, path: Path) -> bytes:
    """Avro's pretty JSON encoding of a one-record Avro file, by Avro itself in the JVM."""
    jvm = spark._jvm
    reader = jvm.org.apache.avro.file.DataFileReader(
        jvm.java.io.File(str(path)), jvm.org.apache.avro.generic.GenericDatumReader()
    )
    schema, record = reader.getSchema(), reader.next()
    reader.close()
    out = jvm.java.io.ByteArrayOutputStream()
    encoder = jvm.org.apache.avro.io.EncoderFactory.get().jsonEncoder(schema, out, True)
    jvm.org.apache.avro.generic.GenericDatumWriter(schema).write(record, encoder)
    encoder.flush()
    return bytes(out.toByteArray())


def test_export_instants(spark: Any, table: dict[str, Any], tmp_path: Path) -> None:
    s, base = table["s"], table["base"]
    hoodie = base / ".hoodie"
    done = {
        p.name: p
        for p in hoodie.iterdir()
        if (m := TIMELINE_RE.match(p.name)) is not None
        and m["a"] in ("commit", "clean", "rollback", "savepoint")
    }
    assert sorted(TIMELINE_RE.match(n)["a"] for n in done) == [  # type: ignore[index]
        "clean",
        "commit",
        "commit",
        "commit",
        "rollback",
        "savepoint",
    ]
    out = tmp_path / "all"
    out.mkdir()
    assert call(s, f"export_instants(table => 't', local_folder => '{out}')") == [
        (f"Exported 6 Instants to {out}",)
    ]
    assert sorted(p.name for p in out.iterdir()) == sorted(done)
    for name, src in done.items():
        if name.endswith(".commit"):
            assert (out / name).read_bytes() == src.read_bytes()  # copied as they are
        else:
            assert (out / name).read_bytes() == avro_json(spark, src), name

    # newest first, limited, only the asked actions (restore is skipped, as in Hudi)
    newest = sorted(done, key=lambda n: n.split(".")[0], reverse=True)
    few = tmp_path / "few"
    few.mkdir()
    assert call(s, f"export_instants('t', '{few}', 2, 'commit,clean,restore', true)") == [
        (f"Exported 2 Instants to {few}",)
    ]
    wanted = [n for n in newest if n.endswith((".commit", ".clean"))][:2]
    assert sorted(p.name for p in few.iterdir()) == sorted(wanted)

    with pytest.raises(ProcedureArgumentError) as err:
        call(s, f"export_instants(table => 't', local_folder => '{tmp_path / 'none'}')")
    assert str(err.value) == (
        f"export_instants: local_folder '{tmp_path / 'none'}' is not a valid local directory"
    )


def completion(base: Path, file: Path) -> str:
    """Table version 6 records no completion time: Hudi shows the completed file's
    modification time in the timeline's zone (hoodie.table.timeline.timezone, else LOCAL)."""
    props = (base / ".hoodie" / "hoodie.properties").read_text()
    stamp = datetime.fromtimestamp(file.stat().st_mtime_ns // 1_000_000 / 1000, tz=UTC)
    if "hoodie.table.timeline.timezone=UTC" not in props:
        stamp = stamp.astimezone()
    return stamp.strftime("%Y%m%d%H%M%S") + f"{stamp.microsecond // 1000:03d}"


def test_show_file_group_history(table: dict[str, Any]) -> None:
    s, base = table["s"], table["base"]
    (clean,) = completed(base, "clean")
    commits = completed(base, "commit")
    assert len(commits) == 3  # the restore and the rollback took the 4th and 5th away
    rows = []
    for t in reversed(commits):
        path = base / ".hoodie" / f"{t}.commit"
        (stat,) = json.loads(path.read_text())["partitionToWriteStats"]["p=x"]
        name = stat["path"].rsplit("/", 1)[-1]
        op = "INSERT" if stat["numInserts"] else "UPDATE"
        deleted = name in table["cleaned"]
        runtime = stat.get("runtimeStats") or {}
        rows.append(
            (
                t,
                completion(base, path),
                "commit",
                "ACTIVE",
                "COMPLETED",
                "p=x",
                name,
                op,
                stat["numWrites"],
                stat["numInserts"],
                stat["numUpdateWrites"],
                stat["numDeletes"],
                stat["fileSizeInBytes"],
                stat["totalWriteBytes"],
                stat["prevCommit"],
                deleted,
                "clean" if deleted else None,
                clean if deleted else None,
                False,
                None,
                None,
                stat["totalWriteErrors"],
                runtime.get("totalScanTime", 0),
                runtime.get("totalUpsertTime", 0),
                runtime.get("totalCreateTime", 0),
                stat.get("prevBaseFile"),
                False,
            )
        )
    file_id = rows[0][6].split("_")[0]
    assert [r[7] for r in rows] == ["UPDATE", "UPDATE", "INSERT"]
    assert [r[15] for r in rows] == [False, False, True]  # retain_commits => 1 kept two
    assert call(s, f"show_file_group_history(table => 't', file_group_id => '{file_id}')") == rows
    assert call(s, f"show_file_group_history('t', '{file_id}', 'p=x', false, 2)") == rows[:2]
    assert (
        call(
            s,
            f"show_file_group_history(path => '{base}', file_group_id => '{file_id}', "
            "filter => \"operation_type = 'INSERT'\")",
        )
        == rows[2:]
    )
    assert call(s, "show_file_group_history(table => 't', file_group_id => 'nope')") == []
    assert call(s, f"show_file_group_history('t', '{file_id}', 'p=y')") == []
    with pytest.raises(ProcedureArgumentError) as err:
        call(s, f"show_file_group_history('t', '{file_id}', filter => 'nope > 1')")
    assert str(err.value).startswith("show_file_group_history: invalid filter 'nope > 1': ")
