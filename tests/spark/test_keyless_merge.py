"""MERGE INTO a table without a record key (issue 30), as Hudi 1.x runs it.

Hudi's ``MergeIntoHoodieTableCommand`` on a primary-keyless table left-joins the source to
the target on the ON condition, which may be any condition (not only key equalities), and
writes the joined rows as "prepped" records: a matched row carries the target row's
``_hoodie_record_key`` (an update or delete of that record), an unmatched one has none and
is inserted with a generated key (``MergeIntoKeyGenerator``). Keys of updated rows stay as
they were; a target row matched by two source rows without an ordering field is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import hudi_rs_read, rows


def _stored(session: Any) -> list[tuple]:
    return [
        tuple(r)
        for r in session.sql(
            "SELECT _hoodie_record_key, _hoodie_commit_time, msg, n FROM logs ORDER BY msg, n"
        ).collect()
    ]


def test_merge_into_a_keyless_table(session: Any, tmp_path: Path) -> None:
    session.sql("CREATE TABLE logs (msg STRING, n INT) USING hudi TBLPROPERTIES (type = 'mor')")
    session.sql("INSERT INTO logs VALUES ('a', 1), ('b', 2), ('c', 3)")
    ((t1,),) = {(r[1],) for r in _stored(session)}
    where = str(tmp_path / "wh/default.db/logs")

    # A condition on data columns that is not an equality of keys: b and c are matched.
    session.sql(
        "MERGE INTO logs AS t USING (SELECT * FROM VALUES ('b', 20), ('c', 0), ('d', 4) "
        "AS s(msg, n)) AS s ON t.msg = s.msg AND t.n < 10 "
        "WHEN MATCHED AND s.n = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET n = s.n "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    got = _stored(session)
    t2 = max(r[1] for r in got)
    assert t2 > t1
    assert got == [
        (f"{t1}_0_0", t1, "a", 1),
        (f"{t1}_0_1", t2, "b", 20),  # updated in place: its key kept
        (got[2][0], t2, "d", 4),  # inserted: a generated key of the merge's instant
    ]
    assert got[2][0].startswith(f"{t2}_")
    assert rows(hudi_rs_read(where), ["_hoodie_record_key", "_hoodie_commit_time", "msg", "n"]) == [
        tuple(r) for r in got
    ]

    # Two source rows matching one target row (no ordering field): refused, nothing written.
    with pytest.raises(Exception) as info:
        session.sql(
            "MERGE INTO logs AS t USING (SELECT * FROM VALUES ('a', 5), ('a', 6) AS s(msg, n)) "
            "AS s ON t.msg = s.msg WHEN MATCHED THEN UPDATE SET n = s.n"
        )
    message = str(info.value).splitlines()[0]
    assert message.endswith(
        f"MERGE INTO default.logs: 2 source rows match the target row with _hoodie_record_key="
        f"'{t1}_0_0'; combine them first or give the table an ordering field"
    )
    assert _stored(session) == got
