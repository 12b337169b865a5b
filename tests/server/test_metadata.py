"""Metadata through the Thrift server: raw TCLIService calls (what JDBC tools send), the
SQLAlchemy ``hive://`` inspector, protocol negotiation and row-based row sets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from pyhive import hive
from TCLIService import ttypes as tt

from hudilite.thriftserver import Server
from tests.server.clients import USERS, connect, rows_of

pytestmark = pytest.mark.spark

OK = tt.TStatusCode.SUCCESS_STATUS


@pytest.fixture(scope="module")
def conn(server: Server) -> Iterator[hive.Connection]:
    """An admin connection with two tables in database ``meta`` (one merge-on-read)."""
    with connect(server) as c:
        cur = c.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS meta")
        cur.execute(
            "CREATE TABLE meta.orders (order_id STRING COMMENT 'the key', ts BIGINT, "
            "amount DECIMAL(10,2), region STRING) USING hudi PARTITIONED BY (region) "
            "TBLPROPERTIES (primaryKey = 'order_id,ts', preCombineField = 'ts')"
        )
        cur.execute(
            "CREATE TABLE meta.order_lines (id INT NOT NULL, sku STRING) USING hudi "
            "TBLPROPERTIES (primaryKey = 'id', type = 'mor')"
        )
        cur.execute(
            "CREATE VIEW meta.order_totals (region COMMENT 'where', total) AS "
            "SELECT region, sum(amount) FROM meta.orders GROUP BY region"
        )
        yield c


def test_schemas_tables_and_types(conn: hive.Connection) -> None:
    client, session = conn.client, conn.sessionHandle
    resp = client.GetSchemas(tt.TGetSchemasReq(sessionHandle=session, schemaName="me%"))
    assert resp.status.statusCode == OK
    assert rows_of(conn, resp.operationHandle) == [("meta", "")]
    resp = client.GetTables(
        tt.TGetTablesReq(sessionHandle=session, schemaName="meta", tableName="order%")
    )
    names = [(r[1], r[2], r[3]) for r in rows_of(conn, resp.operationHandle)]
    assert names == [
        ("meta", "order_lines", "TABLE"),
        ("meta", "order_lines_ro", "TABLE"),
        ("meta", "order_lines_rt", "TABLE"),
        ("meta", "order_totals", "VIEW"),
        ("meta", "orders", "TABLE"),
    ]
    resp = client.GetTables(
        tt.TGetTablesReq(sessionHandle=session, schemaName="m_ta", tableName="order_")
    )
    assert [r[2] for r in rows_of(conn, resp.operationHandle)] == ["orders"]
    resp = client.GetTables(
        tt.TGetTablesReq(sessionHandle=session, schemaName="meta", tableTypes=["VIEW"])
    )
    assert [(r[2], r[3]) for r in rows_of(conn, resp.operationHandle)] == [("order_totals", "VIEW")]
    resp = client.GetTableTypes(tt.TGetTableTypesReq(sessionHandle=session))
    assert rows_of(conn, resp.operationHandle) == [("TABLE",), ("VIEW",)]
    resp = client.GetCatalogs(tt.TGetCatalogsReq(sessionHandle=session))
    assert rows_of(conn, resp.operationHandle) == []
    resp = client.GetTypeInfo(tt.TGetTypeInfoReq(sessionHandle=session))
    types = {r[0]: r[1] for r in rows_of(conn, resp.operationHandle)}
    assert (types["INT"], types["BIGINT"], types["STRING"], types["DECIMAL"]) == (4, -5, 12, 3)
    resp = client.GetFunctions(tt.TGetFunctionsReq(sessionHandle=session, functionName="date_fo%"))
    assert [r[2] for r in rows_of(conn, resp.operationHandle)] == ["date_format"]


def test_columns_and_primary_keys(conn: hive.Connection) -> None:
    client, session = conn.client, conn.sessionHandle
    resp = client.GetColumns(
        tt.TGetColumnsReq(sessionHandle=session, schemaName="meta", tableName="orders")
    )
    assert resp.status.statusCode == OK
    rows = rows_of(conn, resp.operationHandle)
    data = [(r[3], r[4], r[5], r[6], r[8], r[10], r[11], r[16]) for r in rows if r[16] > 5]
    assert data == [
        ("order_id", 12, "STRING", 2147483647, None, 1, "the key", 6),
        ("ts", -5, "BIGINT", 19, 0, 1, "", 7),
        ("amount", 3, "DECIMAL(10,2)", 10, 2, 1, "", 8),
        ("region", 12, "STRING", 2147483647, None, 1, "", 9),
    ]
    assert [r[3] for r in rows[:5]] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    resp = client.GetColumns(
        tt.TGetColumnsReq(
            sessionHandle=session, schemaName="meta", tableName="order_lines", columnName="id"
        )
    )
    # Hudi tables store every column nullable; NULLABLE follows what a query returns.
    assert [(r[2], r[3], r[10], r[17]) for r in rows_of(conn, resp.operationHandle)] == [
        ("order_lines", "id", 1, "YES")
    ]
    resp = client.GetColumns(
        tt.TGetColumnsReq(sessionHandle=session, schemaName="meta", tableName="order_totals")
    )
    assert [(r[3], r[5], r[11], r[16]) for r in rows_of(conn, resp.operationHandle)] == [
        ("region", "STRING", "where", 1),
        ("total", "DECIMAL(20,2)", "", 2),
    ]
    resp = client.GetPrimaryKeys(
        tt.TGetPrimaryKeysReq(sessionHandle=session, schemaName="meta", tableName="orders")
    )
    assert rows_of(conn, resp.operationHandle) == [
        ("", "meta", "orders", "order_id", 1, "orders_pk"),
        ("", "meta", "orders", "ts", 2, "orders_pk"),
    ]


def test_info_and_unsupported_calls(conn: hive.Connection) -> None:
    client, session = conn.client, conn.sessionHandle
    resp = client.GetInfo(
        tt.TGetInfoReq(sessionHandle=session, infoType=tt.TGetInfoType.CLI_DBMS_NAME)
    )
    assert resp.infoValue.stringValue == "hudilite"
    resp = client.GetCrossReference(tt.TGetCrossReferenceReq(sessionHandle=session))
    assert (resp.status.statusCode, resp.status.sqlState) == (tt.TStatusCode.ERROR_STATUS, "HYC00")
    assert resp.status.errorMessage == (
        "GetCrossReference (foreign keys) is not supported by the hudilite Thrift server"
    )
    bad = tt.TSessionHandle(sessionId=tt.THandleIdentifier(guid=b"x" * 16, secret=b"y" * 16))
    resp = client.GetSchemas(tt.TGetSchemasReq(sessionHandle=bad))
    assert resp.status.statusCode == tt.TStatusCode.ERROR_STATUS
    assert resp.status.errorMessage.startswith("invalid session handle")


def test_old_protocol_gets_row_based_results(conn: hive.Connection) -> None:
    client = conn.client
    v1 = tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V1
    opened = client.OpenSession(tt.TOpenSessionReq(client_protocol=v1, username="alice"))
    assert opened.serverProtocolVersion == v1
    run = client.ExecuteStatement(
        tt.TExecuteStatementReq(
            sessionHandle=opened.sessionHandle,
            statement="SELECT 1 AS a, 'x' AS b, CAST(NULL AS DOUBLE) AS c",
        )
    )
    fetched = client.FetchResults(
        tt.TFetchResultsReq(operationHandle=run.operationHandle, orientation=0, maxRows=10)
    )
    assert fetched.results.columns is None
    (row,) = fetched.results.rows
    assert (row.colVals[0].i32Val.value, row.colVals[1].stringVal.value) == (1, "x")
    assert row.colVals[2].doubleVal.value is None
    v12 = 11  # newer than the server speaks: negotiated down to V10
    opened = client.OpenSession(tt.TOpenSessionReq(client_protocol=v12, username="alice"))
    assert opened.serverProtocolVersion == tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10


def test_sqlalchemy_inspector(server: Server, conn: hive.Connection) -> None:
    password = USERS["alice"][0]
    engine = sa.create_engine(
        f"hive://alice:{password}@127.0.0.1:{server.port}/meta",
        connect_args={"auth": "CUSTOM"},
    )
    try:
        inspector = sa.inspect(engine)
        assert "meta" in inspector.get_schema_names()
        assert inspector.get_table_names(schema="meta") == [
            "order_lines",
            "order_lines_ro",
            "order_lines_rt",
            "order_totals",
            "orders",
        ]
        columns = inspector.get_columns("orders", schema="meta")
        assert [(c["name"], type(c["type"]).__name__) for c in columns][5:] == [
            ("order_id", "String"),
            ("ts", "BigInteger"),
            ("amount", "HiveDecimal"),
            ("region", "String"),
        ]
        with engine.connect() as c:
            rows = c.execute(sa.text("SELECT count(*) FROM meta.orders")).fetchall()
        assert rows == [(0,)]
    finally:
        engine.dispose()
