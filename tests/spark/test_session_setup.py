"""Session set-up has one owner (issue 28): ``prepare_session`` makes any SparkSession
hudilite uses (the active one, a SQL session's, a Thrift server session's) read Hudi's
instants in UTC and know ``format("hudilite")``; ``spark_session`` and ``connect`` take
the active session through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hudilite
from hudilite.spark.session import active_session, prepare_session, spark_session

TZ = "spark.sql.session.timeZone"


def test_a_new_session_is_prepared_once_or_twice(spark: Any) -> None:
    other = spark.newSession()
    other.conf.set(TZ, "America/New_York")
    # Twice, and on a session that already sees the data source (Spark shares it between
    # sessions once registered): DATA_SOURCE_ALREADY_EXISTS is not an error.
    assert prepare_session(prepare_session(other)) is other
    assert other.conf.get(TZ) == "UTC"
    assert spark.conf.get(TZ) == "UTC"


def test_the_active_session_is_set_up_by_spark_session_and_connect(
    spark: Any, tmp_path: Path
) -> None:
    spark.conf.set(TZ, "Asia/Tokyo")
    assert active_session() is spark and spark.conf.get(TZ) == "UTC"
    spark.conf.set(TZ, "Asia/Tokyo")
    assert spark_session() is spark and spark.conf.get(TZ) == "UTC"
    spark.conf.set(TZ, "Asia/Tokyo")
    session = hudilite.connect(str(tmp_path / "wh"))
    assert session.spark is spark and spark.conf.get(TZ) == "UTC"
