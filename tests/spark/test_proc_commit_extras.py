"""``show_commit_extra_metadata`` and ``commits_compare`` through SQL ``CALL`` (issue 30),
with Hudi's parameters and output columns.

The extra metadata is checked against the commit files decoded here with json (table
version 6) or fastavro (version 8), not through hudilite's timeline; ``commits_compare``
against the instant times in the timeline file names of a table and of a copy of its folder
taken after its first commit.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import fastavro
import pytest

import hudilite
from hudilite.procedures import ProcedureArgumentError, ProcedureError
from hudilite.sqlext.statements import TableName
from tests.helpers import call
from tests.tables import INT_ID_TS_V_P

DONE_RE = re.compile(r"^(?P<t>\d+)(?:_\d+)?\.(?P<a>commit|deltacommit|replacecommit)$")


def completed(base: Path) -> list[tuple[str, str, Path]]:
    """(requested time, action, file) of every completed write, oldest first."""
    folder = base / ".hoodie" / "timeline"
    folder = folder if folder.is_dir() else base / ".hoodie"
    return sorted(
        (m["t"], m["a"], p) for p in folder.iterdir() if (m := DONE_RE.match(p.name)) is not None
    )


def raw_extra(path: Path, version: int) -> dict[str, str]:
    """The extraMetadata map of a completed commit file."""
    if version >= 8:
        with path.open("rb") as f:
            (record,) = list(fastavro.reader(f))
    else:
        record = json.loads(path.read_text())
    return dict(record["extraMetadata"])


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("extras")


def make(spark: Any, wh: Path, kind: str, version: int) -> tuple[Any, Path]:
    s = hudilite.connect(str(wh / f"{kind}{version}"), spark=spark)
    INT_ID_TS_V_P.create_sql(s, table_type=kind, table_version=version)
    s.sql("INSERT INTO t VALUES (1, 1, 'a', 'x'), (2, 1, 'b', 'y')")
    return s, Path(s.entry(TableName(None, "t")).location)


@pytest.mark.parametrize(("kind", "version"), [("cow", 6), ("mor", 8)])
def test_show_commit_extra_metadata(spark: Any, wh: Path, kind: str, version: int) -> None:
    s, base = make(spark, wh, kind, version)
    s.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    s.sql("INSERT INTO t VALUES (1, 2, 'a2', 'x')")
    (c1, a1, f1), (c2, a2, f2) = completed(base)
    action = "commit" if kind == "cow" else "deltacommit"
    assert (a1, a2) == (action, action)
    extra1, extra2 = raw_extra(f1, version), raw_extra(f2, version)
    assert "schema" in extra2
    fields = [f["name"] for f in json.loads(extra2["schema"])["fields"]]
    assert fields[-4:] == ["id", "ts", "v", "p"]

    # default: the latest commit, every key sorted, at most limit (100) rows
    latest = [(c2, action, k, extra2[k]) for k in sorted(extra2)]
    assert call(s, "show_commit_extra_metadata(table => 't')") == latest
    assert call(s, f"show_commit_extra_metadata(path => '{base}', limit => 1)") == latest[:1]
    # one commit, one key (trimmed), positionally as in Hudi: table, limit, instant_time, key
    assert call(s, f"show_commit_extra_metadata('t', 100, '{c1}', ' schema ')") == [
        (c1, action, "schema", extra1["schema"])
    ]
    assert call(s, f"show_commit_extra_metadata('t', 100, '{c1}', 'nope')") == []
    with pytest.raises(ProcedureError) as err:
        call(s, "show_commit_extra_metadata(table => 't', instant_time => '20200101000000000')")
    assert str(err.value) == (
        "show_commit_extra_metadata: instant_time '20200101000000000' is not on the active "
        f"timeline; it must be a completed commit, deltacommit or replacecommit of "
        f"{base} (latest: {c1}, {c2})"
    )
    s.sql("CREATE TABLE e (id INT, ts BIGINT) USING hudi TBLPROPERTIES (primaryKey='id')")
    empty = s.entry(TableName(None, "e")).location
    with pytest.raises(ProcedureError) as err:
        call(s, "show_commit_extra_metadata(table => 'e')")
    assert str(err.value) == f"show_commit_extra_metadata: {empty} has no completed commit"


def test_commits_compare(spark: Any, wh: Path) -> None:
    s, base = make(spark, wh, "cow", 8)
    old = wh / "old_copy"
    shutil.copytree(base, old)
    s.sql("INSERT INTO t VALUES (3, 1, 'c', 'x')")
    s.sql("INSERT INTO t VALUES (4, 1, 'd', 'y')")
    s.sql(f"CREATE TABLE old USING hudi LOCATION '{old}'")
    (c1, _, _), (c2, _, _), (c3, _, _) = completed(base)
    assert [t for t, _, _ in completed(old)] == [c1]

    assert call(s, f"commits_compare(table => 't', path => '{old}')") == [
        (f"Source t is ahead by 2 commits. Commits to catch up - [{c2}, {c3}]",)
    ]
    # the copy registered as `old` keeps the table name t, as Hudi prints it
    assert call(s, f"commits_compare('old', '{base}')") == [
        (f"Source t is behind by 2 commits. Commits to catch up - [{c2}, {c3}]",)
    ]
    assert call(s, f"commits_compare(table => 't', path => '{base}')") == [
        ("Source t is ahead by 0 commits. Commits to catch up - []",)
    ]
    with pytest.raises(ProcedureArgumentError) as arg_err:
        call(s, "commits_compare(table => 't')")
    assert str(arg_err.value) == "commits_compare: missing required parameter 'path' (string)"
    with pytest.raises(ProcedureError) as err:
        call(s, f"commits_compare(table => 't', path => '{wh / 'none'}')")
    assert str(err.value).startswith(f"commits_compare: path '{wh / 'none'}' is not a Hudi table (")
