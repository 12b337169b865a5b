"""pandas and SQLAlchemy over ``hive://`` (PyHive's dialect) against the server.

PyHive's dialect answers ``has_table`` with ``DESCRIBE <name>``: a missing table must fail
in the one form it recognises (Hive's ``SemanticException ... Table not found <name>``),
and ``pd.read_sql("SELECT ...", engine)`` first asks ``has_table`` of the whole query, so a
``DESCRIBE`` of a query must fail rather than describe it (pandas would then read a "table"
named ``SELECT ...``). ``DataFrame.to_sql`` and ``MetaData.create_all(checkfirst=True)``
send the dialect's ``CREATE TABLE`` (no ``USING``, no key): a keyless Hudi table of the
session's database (Hudi 0.14+'s generated record keys), into which ``to_sql`` appends with
``INSERT INTO TABLE``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest
import sqlalchemy as sa
from pyhive import exc as hive_exc

from hudilite.thriftserver import Server
from tests.server.clients import USERS, connect

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def engine(server: Server) -> Iterator[sa.Engine]:
    """A SQLAlchemy engine as alice (admin) on database ``pd_db``."""
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS pd_db")
        cur.execute(
            "CREATE TABLE pd_db.orders (id INT, region STRING) USING hudi "
            "TBLPROPERTIES (primaryKey = 'id')"
        )
        cur.execute("INSERT INTO pd_db.orders VALUES (1, 'eu'), (2, 'us'), (3, 'eu')")
    eng = sa.create_engine(
        f"hive://alice:{USERS['alice'][0]}@127.0.0.1:{server.port}/pd_db",
        connect_args={"auth": "CUSTOM"},
    )
    yield eng
    eng.dispose()


def test_describe_of_a_query_is_refused(server: Server) -> None:
    with connect(server) as conn:
        cur = conn.cursor()
        for sql in (
            "DESCRIBE SELECT 1 AS x",
            "DESC (SELECT 1)",
            "-- a comment first\ndescribe with a as (select 1) select * from a",
            "DESCRIBE VALUES (1)",
        ):
            with pytest.raises(hive_exc.OperationalError) as err:
                cur.execute(sql)
            status = err.value.args[0].status
            assert (status.sqlState, status.errorMessage) == (
                "HYC00",
                "DESCRIBE of a query is not supported: DESCRIBE names a table or view "
                "(pandas: use read_sql_query for a query)",
            ), sql
        # Not a query: Spark's DESCRIBE FUNCTION (it was taken for a table named abs).
        cur.execute("DESCRIBE FUNCTION abs")
        assert cur.fetchall()[0] == ("Function: abs",)


def test_read_sql_and_has_table(server: Server, engine: sa.Engine) -> None:
    frame = pd.read_sql("SELECT id, region FROM orders ORDER BY id", engine)
    assert frame.to_dict("list") == {"id": [1, 2, 3], "region": ["eu", "us", "eu"]}
    frame = pd.read_sql_query("SELECT region, count(*) AS n FROM orders GROUP BY region", engine)
    assert sorted(frame.itertuples(index=False, name=None)) == [("eu", 2), ("us", 1)]
    with connect(server) as conn:  # what has_table sees
        cur = conn.cursor()
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("DESCRIBE pd_db.missing")
    assert err.value.args[0].status.errorMessage == (
        "table pd_db.missing not found (in Hive's words: SemanticException "
        "[Error 10001]: Table not found pd_db.missing)"
    )
    frame = pd.read_sql("orders", engine)  # a table name: read_sql_table
    assert sorted(frame["id"]) == [1, 2, 3]
    inspector = sa.inspect(engine)
    assert inspector.has_table("orders") is True
    assert inspector.has_table("missing") is False
    assert inspector.has_table("missing", schema="pd_db") is False
    assert inspector.has_table("orders", schema="no_such_db") is False


def test_to_sql_and_create_all(server: Server, engine: sa.Engine) -> None:
    frame = pd.DataFrame({"k": [1, 2], "name": ["a", "b"], "score": [1.5, 2.5]})
    # The dialect's CREATE TABLE has no USING and no key: a keyless Hudi table of the
    # session's database (not Spark's parquet default), whose inserts generate record keys.
    frame.to_sql("scores", engine, index=False)  # PyHive counts no rows
    back = pd.read_sql_query("SELECT k, name, score FROM scores ORDER BY k", engine)
    assert back.to_dict("list") == frame.to_dict("list")
    with pytest.raises(ValueError, match="Table 'scores' already exists"):
        frame.to_sql("scores", engine, index=False)
    frame.to_sql("scores", engine, index=False, if_exists="append")  # the same rows again
    with engine.connect() as conn:
        props = dict(conn.execute(sa.text("SHOW TBLPROPERTIES scores")).fetchall())
        rows = conn.execute(
            sa.text("SELECT _hoodie_commit_time, _hoodie_record_key, k FROM scores")
        ).fetchall()
    assert "primaryKey" not in props and props["type"] == "cow"
    assert sorted(r[2] for r in rows) == [1, 1, 2, 2]
    # Hudi's generated keys, <instant>_<partition id>_<row id>: PyHive sends one INSERT per
    # row, so each is its write's first row, and the instants keep them unique.
    assert sorted(r[1] for r in rows) == sorted(f"{r[0]}_0_0" for r in rows)
    assert len({r[1] for r in rows}) == 4

    meta = sa.MetaData()
    sa.Table("events", meta, sa.Column("id", sa.Integer), sa.Column("what", sa.String(20)))
    meta.create_all(engine, checkfirst=True)  # a model without a key: a keyless table
    meta.create_all(engine, checkfirst=True)  # it exists now: nothing to do
    with engine.connect() as conn:
        conn.execute(sa.text("INSERT INTO events VALUES (1, 'x')"))
        rows = conn.execute(sa.text("SELECT id, what FROM events")).fetchall()
    assert rows == [(1, "x")]

    # A model with a primary key: its PRIMARY KEY clause is the Hudi table's record key.
    keyed = sa.MetaData()
    visits = sa.Table(
        "visits",
        keyed,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("page", sa.String(20)),
    )
    keyed.create_all(engine, checkfirst=True)
    with engine.connect() as conn:
        conn.execute(visits.insert(), [{"id": 1, "page": "a"}, {"id": 2, "page": "b"}])
        rows = conn.execute(sa.select(visits).order_by(visits.c.id)).fetchall()
        props = dict(conn.execute(sa.text("SHOW TBLPROPERTIES visits")).fetchall())
        keys = conn.execute(sa.text("SELECT _hoodie_record_key FROM visits")).fetchall()
    assert rows == [(1, "a"), (2, "b")]
    assert props["primaryKey"] == "id"
    assert sorted(keys) == [("1",), ("2",)]
