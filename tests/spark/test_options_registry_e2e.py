"""Issue 11's broken options, end to end: Flink's write.precombine.field keeps the newer event,
compaction.delta_commits / trigger.strategy / delta_seconds drive inline compaction, and
the SQL layer reports unknown or unsupported keys as warnings (errors in strict mode)."""

from __future__ import annotations

import pytest

from hudilite.errors import ConfigError, OptionWarning
from hudilite.sqlext.statements import TableName
from tests.helpers import spark_rows
from tests.tables import KV

COLS = KV.columns
batch = KV.batch


def test_write_precombine_field_keeps_the_newer_event(spark, tmp_path):
    # Merge-on-read (its reader merges log files over base files by the ordering field too);
    # one table type: the subject is the option's name, not the table type.
    t = KV.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        ordering_field=None,
        options={"write.precombine.field": "ts"},  # Flink's name of the ordering field
    )
    t.write(batch(("a", 2, 20), ("b", 1, 10)))
    t.write(batch(("a", 1, 99), ("b", 3, 30)))  # a: an older event arrives late
    assert spark_rows(t.read(), COLS) == [("a", 2, 20), ("b", 3, 30)]


def test_write_precombine_field_in_sql_tblproperties(session):
    session.sql(
        "CREATE TABLE t (id STRING, ts BIGINT, v BIGINT) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', 'write.precombine.field' = 'ts')"
    )
    t = session.table(TableName(None, "t"))
    t.write(batch(("a", 2, 20)))
    t.write(batch(("a", 1, 99)))
    assert spark_rows(t.read(), COLS) == [("a", 2, 20)]


def test_compaction_delta_commits_compacts_after_two_delta_commits(spark, tmp_path):
    t = KV.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        table_version=8,
        options={
            "compaction.async.enabled": "true",  # Flink: hoodie.compact.inline
            "compaction.trigger.strategy": "num_commits",
            "compaction.delta_commits": "2",
        },
    )
    r1 = t.write(batch(("a", 1, 0), ("b", 1, 0)))
    assert r1.extra["compactions"] == []  # one delta commit: not yet
    r2 = t.write(batch(("a", 2, 1)))
    (done,) = r2.extra["compactions"]
    assert done.num_file_groups == 1
    assert [i.action for i in t.timeline()] == ["deltacommit", "deltacommit", "commit"]
    assert spark_rows(t.read(query_type="read_optimized"), COLS) == [("a", 2, 1), ("b", 1, 0)]


def test_compaction_delta_seconds_with_time_elapsed_trigger(spark, tmp_path):
    t = KV.create(
        spark,
        str(tmp_path / "t"),
        table_type="mor",
        table_version=8,
        options={
            "compaction.async.enabled": "true",
            "compaction.trigger.strategy": "time_elapsed",
            "compaction.delta_seconds": "3600",
            "compaction.delta_commits": "1",  # would fire at once under NUM_COMMITS
        },
    )
    t.write(batch(("a", 1, 0)))
    r2 = t.write(batch(("a", 2, 1)))
    assert r2.extra["compactions"] == []  # an hour has not passed
    r3 = t.write(batch(("a", 3, 2)), options={"compaction.delta_seconds": "0"})
    assert len(r3.extra["compactions"]) == 1


def test_sql_reports_unknown_and_unsupported_keys_as_warnings(session):
    with pytest.warns(OptionWarning):
        results = session.run_script(
            "SET hoodie.parquet.small.file.limt = 0; SET write.rate.limit = 100; "
            "SET hive_sync.enabled = false"
        )
    unknown, rate, hive = (r.warnings for r in results)
    assert "did you mean 'hoodie.parquet.small.file.limit'" in unknown[0]
    assert "'write.rate.limit' is not supported" in rate[0]
    assert hive == ()  # what hudilite does anyway
    session.sql("SET hudilite.options.strict = true")
    with pytest.raises(ConfigError, match=r"hive_sync\.db"):
        session.sql("SET hive_sync.db = x")
