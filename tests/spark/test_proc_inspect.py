"""Read-only inspection procedures through SQL ``CALL``, on COW and MOR tables of table
versions 6 (JSON commit metadata) and 8 (Avro), and on real Hudi tables by path.

Every table gets the same two writes: three rows into two partitions (``x``: ids 1 and
3, ``y``: id 2), then an update of ids 1 and 3. Expected rows are built from what the
test wrote and from the files on disk (names, sizes, modification times), read here with
``os`` and plain regexes, not through hudilite's timeline or file-system view.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fastavro
import pytest

import hudilite
from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.sqlext.statements import TableName
from tests.conftest import fixture_id, fixture_zips, unzip_table
from tests.helpers import hudi_rs_read
from tests.tables import INT_ID_TS_V_P

CASES = [("cow", 6), ("mor", 6), ("cow", 8), ("mor", 8)]
BASE_RE = re.compile(r"^(?P<fid>[^._][^_]*)_(?P<tok>[^_]+)_(?P<t>\d+)\.parquet$")
LOG_RE = re.compile(r"^\.(?P<fid>[^_]+)_(?P<t>\d+)\.log\.(?P<v>\d+)_(?P<tok>.+)$")
DONE_RE = re.compile(r"^(?P<t>\d+)(?:_(?P<c>\d+))?\.(?P<a>commit|deltacommit|replacecommit)$")
STATE_RE = re.compile(r"^(?P<t>\d+)(?:_\d+)?\.(?P<rest>.+)$")


@dataclass
class DataFile:
    partition: str
    name: str
    path: Path
    size: int
    file_id: str
    instant: str
    is_log: bool

    @property
    def uri(self) -> str:
        return f"file:{self.path}"


def data_files(base: Path) -> list[DataFile]:
    """Base and log files under ``base`` (outside ``.hoodie``), sorted by path."""
    out = []
    for root, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__MACOSX"]
        for name in files:
            m = BASE_RE.match(name) or LOG_RE.match(name)
            if m is None:
                continue
            path = Path(root) / name
            partition = "" if Path(root) == base else str(Path(root).relative_to(base))
            out.append(
                DataFile(
                    partition,
                    name,
                    path,
                    path.stat().st_size,
                    m["fid"],
                    m["t"],
                    name.startswith("."),
                )
            )
    return sorted(out, key=lambda f: str(f.path))


def timeline_dir(base: Path) -> Path:
    return (
        base / ".hoodie" / "timeline"
        if (base / ".hoodie" / "timeline").is_dir()
        else base / ".hoodie"
    )


def completed_commits(base: Path) -> list[tuple[str, str | None, str]]:
    """(requested time, completion time or None, action) of every completed write, oldest first."""
    out = [
        (m["t"], m["c"], m["a"])
        for p in timeline_dir(base).iterdir()
        if (m := DONE_RE.match(p.name)) is not None
    ]
    return sorted(out)


def mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000


def raw_stats(base: Path, version: int, instant: str) -> dict[str, list[dict[str, Any]]]:
    """partitionToWriteStats of a completed commit file, decoded here with json/fastavro."""
    (path,) = [
        p
        for p in timeline_dir(base).iterdir()
        if (m := DONE_RE.match(p.name)) and m["t"] == instant
    ]
    if version >= 8:
        with path.open("rb") as f:
            (record,) = list(fastavro.reader(f))
    else:
        record = json.loads(path.read_text())
    return record["partitionToWriteStats"]


# ------------------------------------------------------------------------------ the tables


@dataclass
class Made:
    session: Any
    base: Path
    kind: str
    version: int
    c1: str
    c2: str

    def call(self, text: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.session.sql(f"CALL {text}").collect()]

    @property
    def action(self) -> str:
        return "commit" if self.kind == "cow" else "deltacommit"

    def files(self) -> list[DataFile]:
        return data_files(self.base)

    def one(self, partition: str, instant: str, is_log: bool = False) -> DataFile:
        (f,) = [
            f
            for f in self.files()
            if f.partition == partition and f.instant == instant and f.is_log == is_log
        ]
        return f

    def log(self) -> DataFile:
        (f,) = [f for f in self.files() if f.is_log]
        return f


@pytest.fixture(scope="module", params=CASES, ids=[f"{k}-v{v}" for k, v in CASES])
def made(
    request: pytest.FixtureRequest, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Made:
    kind, version = request.param
    s = hudilite.connect(str(tmp_path_factory.mktemp(f"{kind}{version}") / "wh"), spark=spark)
    INT_ID_TS_V_P.create_sql(s, table_type=kind, table_version=version)
    # The updates below are INSERT INTOs of stored keys: run them as upserts.
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y'), (3, 1, 'c', 'x')")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x'), (3, 2, 'c2', 'x')")
    base = Path(s.entry(TableName(None, "t")).location)
    (c1, _, _), (c2, _, _) = completed_commits(base)
    return Made(s, base, kind, version, c1, c2)


def transition(made: Made, instant: str) -> str:
    """What state_transition_time must be: v8 the completion time in the file name, v6 the
    completed file's modification time as a UTC instant time (the table's time zone)."""
    (p,) = [
        p
        for p in timeline_dir(made.base).iterdir()
        if (m := DONE_RE.match(p.name)) and m["t"] == instant
    ]
    m = DONE_RE.match(p.name)
    assert m is not None
    if m["c"]:
        return m["c"]
    ms = mtime_ms(p)
    return datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}"


def c2_file(made: Made) -> DataFile:
    """The file the update wrote: a new base file (COW) or a log file (MOR)."""
    return made.log() if made.kind == "mor" else made.one("p=x", made.c2)


# ------------------------------------------------------------------------------ commits


def test_show_commits(made: Made) -> None:
    x1, y1, new = made.one("p=x", made.c1), made.one("p=y", made.c1), c2_file(made)
    c2_written = 2  # COW rewrites the two records of x; MOR logs the two updates
    assert made.call("show_commits(table => 't')") == [
        (made.c2, transition(made, made.c2), made.action, new.size, 0, 1, 1, c2_written, 2, 0),
        (made.c1, transition(made, made.c1), made.action, x1.size + y1.size, 2, 0, 2, 3, 0, 0),
    ]
    assert made.call("show_commits('t', 1)") == made.call("show_commits(table => 't')")[:1]
    assert made.call(f"show_commits(path => '{made.base}', limit => 5)") == made.call(
        "show_commits(table => 't')"
    )


def test_show_commits_metadata(made: Made) -> None:
    rows = made.call("show_commits_metadata(table => 't')")
    assert [r[0] for r in rows] == [made.c2, made.c1, made.c1]
    expected = []
    for instant in (made.c2, made.c1):
        for partition, stats in raw_stats(made.base, made.version, instant).items():
            for s in stats:
                (on_disk,) = [f for f in made.files() if f.name == Path(s["path"]).name]
                assert s["fileId"] == on_disk.file_id and s["totalWriteBytes"] == on_disk.size
                expected.append(
                    (
                        instant,
                        transition(made, instant),
                        made.action,
                        partition,
                        on_disk.file_id,
                        s["prevCommit"],
                        s["numWrites"],
                        s["numInserts"],
                        s["numDeletes"],
                        s["numUpdateWrites"],
                        0,
                        s["totalLogBlocks"],
                        s["totalCorruptLogBlock"],
                        s["totalRollbackBlocks"],
                        s["totalLogRecords"],
                        s["totalUpdatedRecordsCompacted"],
                        on_disk.size,
                    )
                )
    assert sorted(rows) == sorted(expected)
    # What the test wrote: first commit 2 + 1 new records in x and y, then 2 updates of x.
    by_file = {(r[0], r[3]): r[6:10] for r in rows}
    assert by_file == {
        (made.c1, "p=x"): (2, 2, 0, 0),
        (made.c1, "p=y"): (1, 1, 0, 0),
        (made.c2, "p=x"): (2, 0, 0, 2),
    }
    assert {r[5] for r in rows if r[0] == made.c1} == {"null"}
    assert [r[5] for r in rows if r[0] == made.c2] == [made.c1]
    # limit counts rows (files), not commits
    assert len(made.call("show_commits_metadata(table => 't', limit => 2)")) == 2


def test_show_commit_files_partitions_write_stats(made: Made) -> None:
    x1, y1, new = made.one("p=x", made.c1), made.one("p=y", made.c1), c2_file(made)
    files = made.call(f"show_commit_files(table => 't', instant_time => '{made.c1}')")
    assert sorted(files) == [
        (made.action, "p=x", x1.file_id, "null", 0, 2, x1.size, 0, x1.size),
        (made.action, "p=y", y1.file_id, "null", 0, 1, y1.size, 0, y1.size),
    ]
    assert made.call(f"show_commit_files('t', 10, '{made.c2}')") == [
        (made.action, "p=x", new.file_id, made.c1, 2, 2, new.size, 0, new.size)
    ]
    assert (
        len(made.call(f"show_commit_files(table => 't', instant_time => '{made.c1}', limit => 1)"))
        == 1
    )

    parts = made.call(f"show_commit_partitions(table => 't', instant_time => '{made.c1}')")
    assert sorted(parts) == [
        (made.action, "p=x", 1, 0, 2, 0, x1.size, 0),
        (made.action, "p=y", 1, 0, 1, 0, y1.size, 0),
    ]
    assert made.call(f"show_commit_partitions(table => 't', instant_time => {made.c2})") == [
        (made.action, "p=x", 0, 1, 0, 2, new.size, 0)
    ]

    total = x1.size + y1.size
    assert made.call(f"show_commit_write_stats(table => 't', instant_time => '{made.c1}')") == [
        (made.action, total, 3, math.ceil(total / 3))
    ]
    assert made.call(
        f"show_commit_write_stats(path => '{made.base}', instant_time => '{made.c2}')"
    ) == [(made.action, new.size, 2, math.ceil(new.size / 2))]


@pytest.mark.parametrize(
    "proc", ["show_commit_files", "show_commit_partitions", "show_commit_write_stats"]
)
def test_commit_procedures_reject_an_instant_that_is_not_a_completed_commit(
    made: Made, proc: str
) -> None:
    with pytest.raises(
        ProcedureError, match="instant_time '20000101000000000' is not on the active timeline"
    ):
        made.call(f"{proc}(table => 't', instant_time => '20000101000000000')")
    with pytest.raises(ProcedureArgumentError, match="missing required parameter 'instant_time'"):
        made.call(f"{proc}(table => 't')")


def test_show_table_properties(made: Made) -> None:
    from hudilite.config import parse_properties

    on_disk = parse_properties((made.base / ".hoodie" / "hoodie.properties").read_text())
    rows = made.call("show_table_properties(table => 't', limit => 1000)")
    assert rows == list(on_disk.items())
    assert made.call("show_table_properties(table => 't')") == rows[:10]
    assert ("hoodie.table.version", str(made.version)) in rows


# ------------------------------------------------------------------------------ timeline


def state_time(path: Path) -> str:
    return (
        datetime.fromtimestamp(mtime_ms(path) / 1000, UTC).astimezone().strftime("%m-%d %H:%M:%S")
    )


def test_show_timeline(made: Made) -> None:
    states: dict[str, dict[str, Path]] = {}
    for p in timeline_dir(made.base).iterdir():
        m = STATE_RE.match(p.name)
        if m is None or not p.is_file():
            continue
        rest = m["rest"]
        state = (
            "requested"
            if rest.endswith(".requested")
            else "inflight"
            if rest.endswith("inflight")
            else "completed"
        )
        states.setdefault(m["t"], {})[state] = p
    assert sorted(states) == [made.c1, made.c2]
    expected = [
        (
            t,
            made.action,
            "COMPLETED",
            state_time(states[t]["requested"]),
            state_time(states[t]["inflight"]),
            state_time(states[t]["completed"]),
            "ACTIVE",
            None,
        )
        for t in (made.c2, made.c1)
    ]
    assert made.call("show_timeline(table => 't')") == expected
    assert made.call("show_timeline(table => 't', limit => 1)") == expected[:1]
    assert (
        made.call(
            f"show_timeline(path => '{made.base}', "
            f"startTime => '{made.c1}', endTime => '{made.c1}')"
        )
        == expected[1:]
    )
    assert made.call(f"show_timeline(table => 't', start_time => '{made.c2}')") == expected[:1]
    assert (
        made.call("show_timeline(table => 't', filter => \"instant_time < '" + made.c2 + "'\")")
        == expected[1:]
    )
    with pytest.raises(ProcedureArgumentError, match="invalid filter 'no_such_column = 1'"):
        made.call("show_timeline(table => 't', filter => 'no_such_column = 1')")


# ------------------------------------------------------------------------------ stats


def codahale_row(label: str, sizes: list[int]) -> tuple[Any, ...]:
    v = sorted(sizes)
    n = len(v)

    def q(x: float) -> float:
        pos = x * (n + 1)
        i = int(pos)
        if i < 1:
            return float(v[0])
        if i >= n:
            return float(v[-1])
        return v[i - 1] + (pos - math.floor(pos)) * (v[i] - v[i - 1])

    mean = sum(v) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in v) / (n - 1)) if n > 1 else 0.0
    return (label, v[0], q(0.1), q(0.5), mean, q(0.95), v[-1], n, std)


def test_stats_file_sizes(made: Made) -> None:
    by_commit: dict[str, list[int]] = {}
    for f in made.files():
        by_commit.setdefault(f.instant, []).append(f.size)
    everything = [f.size for f in made.files()]
    expected = [codahale_row(c, by_commit[c]) for c in sorted(by_commit)]
    expected.append(codahale_row("ALL", everything))
    assert made.call("stats_file_sizes(table => 't')") == expected
    assert made.call("stats_file_sizes(table => 't', limit => 1)") == expected[:1]
    y = made.one("p=y", made.c1)
    assert made.call("stats_file_sizes(table => 't', partition_path => 'p=y')") == [
        codahale_row(made.c1, [y.size]),
        codahale_row("ALL", [y.size]),
    ]
    with pytest.raises(ProcedureArgumentError, match=r"depth of 2 .* partition depth of 1"):
        made.call("stats_file_sizes(table => 't', partition_path => 'p=x/z')")


def test_stats_wa(made: Made) -> None:
    rows = made.call("stats_wa(table => 't')")
    if made.kind == "cow":
        # 3 records written (0 updated), then x rewritten: 2 written, 2 updated
        assert rows == [(made.c1, 0, 3, "0"), (made.c2, 2, 2, "1.00"), ("Total", 2, 5, "2.50")]
        assert made.call("stats_wa(table => 't', limit => 2)") == rows[:2]
    else:
        # delta commits are not on Hudi's commit timeline
        assert rows == [("Total", 0, 0, "0")]


# ------------------------------------------------------------------------------ fsview


def log_string(f: DataFile) -> str:
    return f"HoodieLogFile{{pathStr='{f.uri}', fileLen={f.size}}}"


def test_show_fsview_all(made: Made) -> None:
    x1, y1 = made.one("p=x", made.c1), made.one("p=y", made.c1)
    rows = made.call("show_fsview_all(table => 't')")
    y_row = ("p=y", y1.file_id, made.c1, y1.uri, y1.size, 0, 0, "[]")
    if made.kind == "cow":
        x2 = made.one("p=x", made.c2)
        assert rows == [
            ("p=x", x1.file_id, made.c2, x2.uri, x2.size, 0, 0, "[]"),
            ("p=x", x1.file_id, made.c1, x1.uri, x1.size, 0, 0, "[]"),
            y_row,
        ]
        # max_instant is exclusive unless include_max
        assert made.call(f"show_fsview_all(table => 't', max_instant => '{made.c2}')") == rows[1:]
        assert (
            made.call(
                f"show_fsview_all(table => 't', max_instant => '{made.c2}', include_max => true)"
            )
            == rows
        )
    else:
        log = made.log()
        assert rows == [
            ("p=x", x1.file_id, made.c1, x1.uri, x1.size, 1, log.size, f"[{log_string(log)}]"),
            y_row,
        ]
        # Before c2: a v8 log names its delta commit c2 and drops out; a v6 log only names
        # its slice's base instant c1, so (as in Hudi) the view keeps it.
        before_c2 = made.call(f"show_fsview_all(table => 't', max_instant => '{made.c2}')")
        assert before_c2 == (
            rows
            if made.version == 6
            else [("p=x", x1.file_id, made.c1, x1.uri, x1.size, 0, 0, "[]"), y_row]
        )
    assert made.call("show_fsview_all(table => 't', path_regex => 'p=y')") == [y_row]
    assert made.call("show_fsview_all(table => 't', limit => 1)") == rows[:1]


def test_show_fsview_latest(made: Made) -> None:
    x1, y1 = made.one("p=x", made.c1), made.one("p=y", made.c1)
    y_row = ("p=y", y1.file_id, made.c1, y1.uri, y1.size, 0, 0, 0, 0, 0.0, 0.0, "[]", "[]")
    rows = made.call("show_fsview_latest(table => 't')")
    if made.kind == "cow":
        x2 = made.one("p=x", made.c2)
        x_row = ("p=x", x1.file_id, made.c2, x2.uri, x2.size, 0, 0, 0, 0, 0.0, 0.0, "[]", "[]")
    else:
        log = made.log()
        # v6 logs carry their slice's base instant, v8 logs their delta commit's instant
        same, other = (
            (f"[{log_string(log)}]", "[]") if made.version == 6 else ("[]", f"[{log_string(log)}]")
        )
        x_row = (
            "p=x",
            x1.file_id,
            made.c1,
            x1.uri,
            x1.size,
            1,
            log.size,
            log.size,
            0,
            log.size / x1.size,
            0.0,
            same,
            other,
        )
    assert rows == [x_row, y_row]
    assert made.call("show_fsview_latest(table => 't', merge => false)") == rows
    assert made.call("show_fsview_latest(table => 't', partition_path => 'p=y')") == [y_row]
    assert made.call("show_fsview_latest(table => 't', path_regex => 'p=*', limit => 1)") == [x_row]
    with pytest.raises(ProcedureArgumentError, match="cannot be used together"):
        made.call("show_fsview_latest(table => 't', path_regex => 'p=x', partition_path => 'p=y')")


# ------------------------------------------------------------------------------ log files


def test_show_logfile_metadata(made: Made) -> None:
    if made.kind == "cow":
        assert (
            made.call(
                "show_logfile_metadata(table => 't', "
                f"log_file_path_pattern => '{made.base}/*/*.log*')"
            )
            == []
        )
        return
    log = made.log()
    rows = made.call(
        f"show_logfile_metadata(table => 't', log_file_path_pattern => '{made.base}/*/*.log*')"
    )
    assert len(rows) == 1
    instant, count, block_type, header, footer = rows[0]
    assert (instant, count, block_type, footer) == (made.c2, 2, "AVRO_DATA_BLOCK", "{}")
    header = json.loads(header)
    assert set(header) == {"INSTANT_TIME", "SCHEMA"} and header["INSTANT_TIME"] == made.c2
    fields = [f["name"] for f in json.loads(header["SCHEMA"])["fields"]]
    assert fields[0] == "_hoodie_commit_time" and fields[-4:] == ["id", "ts", "v", "p"]
    # the same file by its URI, by a table-relative glob, and positionally
    assert (
        made.call(f"show_logfile_metadata(table => 't', log_file_path_pattern => '{log.uri}')")
        == rows
    )
    assert made.call("show_logfile_metadata('t', 'p=x/.*')") == rows
    with pytest.raises(ProcedureArgumentError, match="is not under the table path"):
        made.call(
            "show_logfile_metadata(table => 't', log_file_path_pattern => '/elsewhere/*.log*')"
        )


def test_show_logfile_records(made: Made) -> None:
    pattern = f"{made.base}/*/*.log*"
    if made.kind == "cow":
        with pytest.raises(ProcedureArgumentError, match="There is no log file matching"):
            made.call(f"show_logfile_records(table => 't', log_file_path_pattern => '{pattern}')")
        return
    for merge in ("false", "true"):
        rows = made.call(
            "show_logfile_records(table => 't', "
            f"log_file_path_pattern => '{pattern}', merge => {merge})"
        )
        records = sorted((json.loads(r[0]) for r in rows), key=lambda r: r["id"])
        assert [(r["id"], r["ts"], r["v"], r["p"], r["_hoodie_commit_time"]) for r in records] == [
            (1, 2, "a2", "x", made.c2),
            (3, 2, "c2", "x", made.c2),
        ]
        limited = made.call(
            "show_logfile_records(table => 't', "
            f"log_file_path_pattern => '{pattern}', merge => {merge}, limit => 1)"
        )
        assert len(limited) == 1


def test_inspection_leaves_the_table_unchanged(made: Made) -> None:
    before = sorted(p.name for p in timeline_dir(made.base).iterdir())
    made.call("show_commits(table => 't')")
    made.call("show_fsview_latest(table => 't')")
    made.call("show_timeline(table => 't')")
    assert sorted(p.name for p in timeline_dir(made.base).iterdir()) == before
    got = hudi_rs_read(str(made.base))
    ids, values = got.column("id").to_pylist(), got.column("v").to_pylist()
    assert sorted(zip(ids, values, strict=True)) == [
        (1, "a2"),
        (2, "b"),
        (3, "c2"),
    ]


# ------------------------------------------------------------------------------ real Hudi tables


@pytest.mark.parametrize("zip_path", fixture_zips(), ids=fixture_id)
def test_procedures_on_real_hudi_tables(zip_path: Path, spark: Any, tmp_path: Path) -> None:
    base = unzip_table(zip_path, tmp_path / "t")
    s = hudilite.connect(str(tmp_path / "wh"), spark=spark)

    def call(text: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in s.sql(f"CALL {text}").collect()]

    commits = completed_commits(base)
    rows = call(f"show_commits(path => '{base}', limit => 100)")
    assert [(r[0], r[2]) for r in rows] == [(t, a) for t, _, a in reversed(commits)]
    for (_, c, _), row in zip(reversed(commits), rows, strict=True):
        if c is not None:
            assert row[1] == c
    names = {f.name for f in data_files(base)}
    if commits:
        latest = commits[-1][0]
        files = call(
            f"show_commit_files(path => '{base}', instant_time => '{latest}', limit => 1000)"
        )
        written = call(f"show_commit_write_stats(path => '{base}', instant_time => '{latest}')")
        assert written[0][1] == sum(f[6] for f in files)
        on_disk = {f.file_id for f in data_files(base)}
        assert {f[2] for f in files} <= on_disk
    timeline = call(f"show_timeline(path => '{base}', limit => 1000)")
    assert [r[0] for r in timeline] == sorted({r[0] for r in timeline}, reverse=True)
    assert {r[0] for r in timeline if r[2] == "COMPLETED"} >= {t for t, _, _ in commits}
    # the latest slices name files that exist
    for r in call(f"show_fsview_latest(path => '{base}', limit => 1000)"):
        if r[3]:
            assert r[3].rsplit("/", 1)[1] in names
    logs = [f for f in data_files(base) if f.is_log]
    if logs:
        meta = call(
            f"show_logfile_metadata(path => '{base}', "
            f"log_file_path_pattern => '{logs[0].path}', limit => 100)"
        )
        deltas = {t for t, _, a in commits if a == "deltacommit"}
        assert meta and all(r[0] in deltas for r in meta)
        kinds = {"AVRO_DATA_BLOCK", "PARQUET_DATA_BLOCK", "DELETE_BLOCK", "COMMAND_BLOCK"}
        assert {r[2] for r in meta} <= kinds
        assert all(r[1] > 0 for r in meta if r[2].endswith("DATA_BLOCK"))
        assert all(json.loads(r[3])["INSTANT_TIME"] == r[0] for r in meta)


# ------------------------------------------------------------------------------ pending work


@pytest.mark.parametrize("version", [6, 8])
def test_pending_rolled_back_and_savepointed_instants(
    spark: Any, tmp_path: Path, version: int
) -> None:
    s = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    INT_ID_TS_V_P.create_sql(s, table_type="mor", table_version=version)
    # The updates below are INSERT INTOs of stored keys: run them as upserts.
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x')")
    s.sql("INSERT INTO t VALUES (1, 3, 'a3', 'x')")
    table = s.table(TableName(None, "t"))
    base = Path(table.path)
    (c1, _, _), (c2, _, _), (c3, _, _) = completed_commits(base)
    table.rollback(c3)
    table.savepoint(c1)
    plan = table.schedule_compaction(force=True)
    assert plan is not None
    k = plan.instant_time

    def call(text: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in s.sql(f"CALL {text}").collect()]

    rows = call("show_timeline(table => 't')")
    (rollback,) = [r for r in rows if r[1] == "rollback"]
    assert rollback[2] == "COMPLETED" and rollback[7] == f"Rolled back: {c3}"
    assert rollback[3] is not None and rollback[5] is not None
    assert [r[:3] for r in rows] == [
        (k, "compaction", "REQUESTED"),
        rollback[:3],
        (c2, "deltacommit", "COMPLETED"),
        (c1, "deltacommit", "COMPLETED"),
        (c1, "savepoint", "COMPLETED"),
    ]
    pending = rows[0]
    assert pending[3] is not None and pending[4:8] == (None, None, "ACTIVE", None)
    # a savepoint has no requested file
    assert rows[-1][3] is None and rows[-1][4] is not None and rows[-1][5] is not None
    assert call("show_timeline(table => 't', filter => \"state = 'REQUESTED'\")") == [pending]

    assert [r[0] for r in call("show_commits(table => 't')")] == [c2, c1]
    with pytest.raises(ProcedureError, match=f"instant_time '{k}' is a pending compaction"):
        call(f"show_commit_files(table => 't', instant_time => '{k}')")
    with pytest.raises(ProcedureError, match=f"instant_time '{c3}' is not on the active timeline"):
        call(f"show_commit_partitions(table => 't', instant_time => '{c3}')")
    with pytest.raises(ProcedureError, match=f"instant_time '{rollback[0]}' is a rollback"):
        call(f"show_commit_write_stats(table => 't', instant_time => '{rollback[0]}')")

    # The pending compaction wrote nothing: including it changes no slice.
    latest = call("show_fsview_latest(table => 't')")
    assert call("show_fsview_latest(table => 't', include_in_flight => true)") == latest
    assert call(
        "show_fsview_all(table => 't', include_in_flight => true, exclude_compaction => true)"
    ) == call("show_fsview_all(table => 't')")
    (x,) = [r for r in latest if r[0] == "p=x"]
    (log,) = [f for f in data_files(base) if f.is_log]
    assert (x[2], x[5], x[6]) == (c1, 1, log.size)
    # the rolled-back update is gone from the log records, c2's is there
    records = call(
        f"show_logfile_records(table => 't', log_file_path_pattern => '{base}/*/*.log*', "
        "merge => true)"
    )
    assert [(r["id"], r["v"]) for r in (json.loads(row[0]) for row in records)] == [(1, "a2")]
