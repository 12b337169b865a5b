"""``hudilite.register(spark, warehouse=)`` registers the warehouse's persistent views too
(issue 27.6), where their SQL runs in plain Spark, and names the ones it cannot."""

from __future__ import annotations

import warnings
from typing import Any

import hudilite
from hudilite.catalog.spark_views import RegistrationWarning


def test_views_are_registered_and_the_others_named(session: Any, spark: Any) -> None:
    s = session
    s.sql("CREATE DATABASE rv_db")
    s.sql(
        "CREATE TABLE rv_db.t (id INT, amount DOUBLE, city STRING) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id') PARTITIONED BY (city)"
    )
    s.sql("INSERT INTO rv_db.t VALUES (1, 2.5, 'sf'), (2, 3.5, 'la'), (3, 9.0, 'sf')")
    s.sql("USE rv_db")
    # Unqualified names resolve in the view's database; a view over a view comes after it
    # (named so that it sorts first).
    s.sql("CREATE VIEW rv_db.big AS SELECT id, amount FROM t WHERE amount > 3")
    s.sql("CREATE VIEW rv_db.a_biggest (ident) AS SELECT max(id) FROM big")
    s.sql(
        "CREATE VIEW rv_db.changes AS "
        "SELECT id FROM hudi_table_changes('rv_db.t', 'latest_state', 'earliest')"
    )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = hudilite.register(spark, warehouse=str(s.catalog.warehouse))
        assert names == ["rv_db.t", "rv_db.big", "rv_db.a_biggest"]
        assert [(w.category, w.filename) for w in caught] == [(RegistrationWarning, __file__)]
        assert str(caught[0].message) == (
            "hudilite view rv_db.changes was not registered: its SQL does not run in plain "
            "Spark ([UNRESOLVABLE_TABLE_VALUED_FUNCTION] Could not resolve "
            "`hudi_table_changes` to a table-valued function.); query it through "
            "hudilite.connect()"
        )
        assert sorted(tuple(r) for r in spark.sql("SELECT * FROM rv_db.big").collect()) == [
            (2, 3.5),
            (3, 9.0),
        ]
        assert spark.sql("SELECT * FROM rv_db.a_biggest").columns == ["ident"]
        assert [tuple(r) for r in spark.sql("SELECT * FROM rv_db.a_biggest").collect()] == [(3,)]
        # The views read the table's current snapshot, as the table views do.
        s.sql("INSERT INTO rv_db.t VALUES (4, 5.0, 'la')")
        assert [tuple(r) for r in spark.sql("SELECT * FROM rv_db.a_biggest").collect()] == [(4,)]
    finally:
        spark.sql("DROP DATABASE IF EXISTS spark_catalog.rv_db CASCADE")
