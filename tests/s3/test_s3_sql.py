"""SQL on S3: a warehouse in the bucket, managed tables, CREATE TABLE ... LOCATION 's3://...'."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import hudilite
from hudilite.storage import fs
from tests.helpers import rows, sql_rows
from tests.moto_s3 import S3Server, hudi_rs_read_s3

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def _restore_process_storage_options() -> Iterator[None]:
    # connect(options=...) makes the endpoint a process-wide default: keep it to this test.
    saved = fs.process_storage_options()
    yield
    fs.set_storage_options(saved, replace=True)


def test_warehouse_and_location_on_s3(spark, s3_server: S3Server, s3_uri: str) -> None:
    warehouse = f"{s3_uri}/wh"
    s = hudilite.connect(warehouse, spark=spark, options=s3_server.storage_options)
    s.sql(
        "CREATE TABLE m (id INT, ts BIGINT, v STRING) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')"
    )
    s.sql("INSERT INTO m VALUES (1, 1, 'a'), (2, 1, 'b')")
    s.sql("UPDATE m SET v = 'z' WHERE id = 1")
    s.sql(
        f"CREATE TABLE ext (id INT, v STRING) USING hudi LOCATION '{s3_uri}/ext' "
        "TBLPROPERTIES (primaryKey = 'id', 'hoodie.parquet.small.file.limit' = '0')"
    )
    s.sql("INSERT INTO ext SELECT id, v FROM m WHERE id = 1")
    s.sql("INSERT INTO ext SELECT id, v FROM m WHERE id = 2")
    # Clustering rewrites the two small files into one, in executors, on S3.
    clustered = sql_rows(s, "CALL run_clustering(table => 'ext')")
    assert [(r[1], r[2]) for r in clustered] == [(1, "COMPLETED")]  # one group of two files
    assert sql_rows(s, "SELECT id, v FROM m ORDER BY id") == [(1, "z"), (2, "b")]
    assert sql_rows(s, "SELECT id, v FROM ext ORDER BY id") == [(1, "z"), (2, "b")]
    assert sql_rows(s, "CALL run_compaction(op => 'run', table => 'm')")[0][2] == "COMPLETED"

    # Both tables and the catalog live in the bucket; the managed one under the warehouse.
    prefix = s3_uri.split("/", 3)[3]
    keys = s3_server.keys(prefix)
    assert f"{prefix}/wh/_catalog/default/tables/m.json" in keys
    assert f"{prefix}/wh/default.db/m/.hoodie/hoodie.properties" in keys
    assert f"{prefix}/ext/.hoodie/hoodie.properties" in keys

    # hudi-rs reads both from the same endpoint.
    got = hudi_rs_read_s3(s3_server, f"{warehouse}/default.db/m")
    assert rows(got, ["id", "v"]) == [(1, "z"), (2, "b")]
    got = hudi_rs_read_s3(s3_server, f"{s3_uri}/ext")
    assert rows(got, ["id", "v"]) == [(1, "z"), (2, "b")]

    # Another session on the same warehouse sees the tables (nothing cached locally).
    fs.set_storage_options({}, replace=True)
    other = hudilite.connect(warehouse, spark=spark, options=s3_server.storage_options)
    # The MOR table lists with its read-optimized and real-time names too (as Hive sync).
    assert sql_rows(other, "SHOW TABLES") == [
        ("default", "ext", False),
        ("default", "m", False),
        ("default", "m_ro", False),
        ("default", "m_rt", False),
    ]
    assert sql_rows(other, "SELECT id, v FROM ext ORDER BY id") == [(1, "z"), (2, "b")]
    other.sql("DROP TABLE m")
    other.sql("DROP TABLE ext")
    # The managed table's data goes, the external table's stays.
    assert s3_server.keys(f"{prefix}/wh/default.db/m") == []
    assert f"{prefix}/ext/.hoodie/hoodie.properties" in s3_server.keys(f"{prefix}/ext")
    assert sql_rows(other, "SHOW TABLES") == []


def test_cli_warehouse_on_s3_with_conf(spark, s3_server: S3Server, s3_uri: str) -> None:
    from click.testing import CliRunner

    from hudilite.cli import main

    conf = [a for k, v in s3_server.storage_options.items() for a in ("--conf", f"{k}={v}")]
    script = (
        "CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES ('primaryKey' = 'id');"
        "INSERT INTO t VALUES (2, 'b'), (1, 'a'); SELECT id, v FROM t ORDER BY id"
    )
    args = ["sql", "--warehouse", f"{s3_uri}/wh", *conf, "--format", "csv", "-e", script]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout.splitlines()[-3:] == ["id,v", "1,a", "2,b"]
    prefix = s3_uri.split("/", 3)[3]
    assert f"{prefix}/wh/default.db/t/.hoodie/hoodie.properties" in s3_server.keys(prefix)
