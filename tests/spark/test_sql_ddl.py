"""SQL DDL end to end: CREATE TABLE [AS SELECT], registration by LOCATION, CREATE DATABASE,
SHOW / DESCRIBE, ALTER TABLE, TRUNCATE and DROP over hudilite tables (COW and MOR)."""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import hudilite
from hudilite import config as cfg
from hudilite.catalog import DatabaseExistsError, DatabaseNotEmptyError, DatabaseNotFoundError
from hudilite.errors import (
    ConfigError,
    KeyGenerationError,
    PartitionNotFoundError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)
from hudilite.sqlext.statements import SqlError, TableName, UnsupportedStatementError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import WRITE_DEFAULTS_FILE, load_config
from tests.conftest import FIXTURES
from tests.helpers import META, hudi_rs_read, rows, sql_rows

KINDS = ["cow", "mor"]
# DDL whose output names the table type (CREATE/DESCRIBE/SHOW CREATE) runs on both types;
# the rest translates statements the same way for both and runs on one (the engine
# operations behind them run on every type and version in test_table_evolution.py).
COW_ONLY = pytest.mark.parametrize("kind", ["cow"])
MOR_ONLY = pytest.mark.parametrize("kind", ["mor"])
TYPE_NAMES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def fill(session: Any, name: str, data: list[tuple[Any, ...]], op: str = "upsert") -> Any:
    """Write ``data`` (tuples in the table's column order) through the Table API."""
    db, _, table_name = name.rpartition(".")
    table = session.table(TableName(db or None, table_name))
    schema = table.read().drop(*META).schema
    return table.write(session.spark.createDataFrame(data, schema), op)


def data(session: Any, name: str, columns: str = "*", order: str = "1") -> list[tuple[Any, ...]]:
    return sql_rows(session, f"SELECT {columns} FROM {name} ORDER BY {order}")


def make_trips(session: Any, kind: str, name: str = "trips", extra: str = "") -> None:
    session.sql(
        f"CREATE TABLE {name} (uuid STRING, city STRING, ts BIGINT, fare DOUBLE) USING hudi "
        f"PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', "
        f"type = '{kind}'{extra})"
    )


TRIPS = [("a", 1, 10.0, "sf"), ("b", 1, 20.0, "nyc"), ("c", 2, 30.0, "sf")]


# --------------------------------------------------------------------------------------------
# CREATE TABLE, DESCRIBE, SHOW CREATE TABLE


@pytest.mark.parametrize("kind", KINDS)
def test_create_table_describe_and_show_create(session: Any, tmp_path: Path, kind: str) -> None:
    out = session.sql(
        f"""CREATE TABLE IF NOT EXISTS Trips (
              uuid STRING NOT NULL COMMENT 'trip id',
              region STRING,
              ts LONG,
              fare DECIMAL(10,2),
              stops ARRAY<STRUCT<name: STRING, minutes: INT>>,
              tags MAP<STRING, BIGINT>,
              city STRING COMMENT 'where',
              day DATE)
            USING HUDI
            PARTITIONED BY (city, region)
            TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{kind}',
                           'hoodie.parquet.small.file.limit' = '0')"""
    )
    assert out.collect() == []  # a plain CREATE returns no rows
    location = str(tmp_path / "wh" / "default.db" / "trips")
    config = load_config(FileSystemGateway(location))
    assert config.table_type == TYPE_NAMES[kind]
    assert config.table_version == 6
    assert config.record_key_fields == ("uuid",)
    assert config.ordering_fields == ("ts",)
    assert config.partition_fields == ("city", "region")
    assert config.hive_style is True
    assert config.database == "default" and config.name == "trips"
    # the write option went to the table's write defaults
    defaults = cfg.parse_properties(
        FileSystemGateway(location).read_bytes(WRITE_DEFAULTS_FILE).decode()
    )
    assert defaults == {"hoodie.parquet.small.file.limit": "0"}

    columns = [
        ("uuid", "string", "trip id"),
        ("ts", "bigint", None),
        ("fare", "decimal(10,2)", None),
        ("stops", "array<struct<name:string,minutes:int>>", None),
        ("tags", "map<string,bigint>", None),
        ("day", "date", None),
        ("city", "string", "where"),
        ("region", "string", None),
    ]
    meta = [(c, "string", None) for c in META]
    partition_info = [
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("city", "string", "where"),
        ("region", "string", None),
    ]
    assert sql_rows(session, "DESCRIBE trips") == meta + columns + partition_info
    assert sql_rows(session, "DESCRIBE TABLE EXTENDED default.trips") == (
        meta
        + columns
        + partition_info
        + [
            ("", "", ""),
            ("# Detailed Table Information", "", ""),
            ("Database", "default", ""),
            ("Table", "trips", ""),
            ("Type", "MANAGED", ""),
            ("Provider", "hudi", ""),
            ("Location", location, ""),
            ("Table Type", TYPE_NAMES[kind], ""),
            ("Table Version", "6", ""),
            ("Primary Key", "uuid", ""),
            ("Ordering Fields", "ts", ""),
            (
                "Table Properties",
                f"[hoodie.parquet.small.file.limit=0, preCombineField=ts, primaryKey=uuid, "
                f"type={kind}]",
                "",
            ),
        ]
    )
    assert session.sql("SHOW CREATE TABLE trips").columns == ["createtab_stmt"]
    assert sql_rows(session, "SHOW CREATE TABLE trips") == [
        (
            "CREATE TABLE default.trips (\n"
            "  uuid STRING NOT NULL COMMENT 'trip id',\n"
            "  ts BIGINT,\n"
            "  fare DECIMAL(10,2),\n"
            "  stops ARRAY<STRUCT<name: STRING, minutes: INT>>,\n"
            "  tags MAP<STRING, BIGINT>,\n"
            "  day DATE,\n"
            "  city STRING COMMENT 'where',\n"
            "  region STRING)\n"
            "USING hudi\n"
            "PARTITIONED BY (city, region)\n"
            "TBLPROPERTIES (\n"
            f"  'type' = '{kind}',\n"
            "  'primaryKey' = 'uuid',\n"
            "  'preCombineField' = 'ts',\n"
            "  'hoodie.parquet.small.file.limit' = '0')",
        )
    ]
    # IF NOT EXISTS on an existing table changes nothing; without it, an error
    session.sql(
        "CREATE TABLE IF NOT EXISTS trips (x INT) USING hudi TBLPROPERTIES (primaryKey='x')"
    )
    assert sql_rows(session, "DESCRIBE trips") == meta + columns + partition_info
    with pytest.raises(TableExistsError, match=r"table default\.trips already exists"):
        session.sql("CREATE TABLE trips (x INT) USING hudi TBLPROPERTIES (primaryKey='x')")


@pytest.mark.parametrize("kind", KINDS)
def test_show_create_table_round_trips_into_a_fresh_warehouse(
    spark: Any, session: Any, tmp_path: Path, kind: str
) -> None:
    version = 8 if kind == "mor" else 6
    session.sql(
        f"""CREATE TABLE t (k1 INT, k2 STRING, v STRUCT<a: DOUBLE, b: ARRAY<STRING>>,
              part BIGINT NOT NULL, ts BIGINT COMMENT 'event time', odd_col STRING)
            USING hudilite PARTITIONED BY (part)
            OPTIONS (primaryKey = 'k1,k2', orderingFields = 'ts', type = '{kind}',
                     'hoodie.write.table.version' = '{version}',
                     'hoodie.datasource.write.hive_style_partitioning' = 'false',
                     'hoodie.cleaner.commits.retained' = '4')"""
    )
    fill(session, "t", [(1, "x", (1.0, ["p"]), 7, "odd", 5)])
    text = sql_rows(session, "SHOW CREATE TABLE t")[0][0]
    assert "LOCATION" not in text  # managed

    fresh = hudilite.connect(str(tmp_path / "wh2"), spark=spark)
    fresh.sql(text)
    assert sql_rows(fresh, "SHOW CREATE TABLE t")[0][0] == text
    old, new = session.table(TableName(None, "t")), fresh.table(TableName(None, "t"))
    assert new.schema == old.schema
    assert [f.name for f in new.schema] == ["k1", "k2", "v", "ts", "odd_col", "part"]
    a, b = old.config, new.config
    for attr in (
        "table_type",
        "table_version",
        "record_key_fields",
        "partition_fields",
        "ordering_fields",
        "keygen_type",
        "hive_style",
        "url_encode",
        "merge_mode",
        "payload_class",
    ):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert b.table_version == version and b.hive_style is False
    assert sql_rows(fresh, "DESCRIBE t") == sql_rows(session, "DESCRIBE t")
    # the recreated table takes the same rows to the same folder layout
    fill(fresh, "t", [(1, "x", (1.0, ["p"]), 7, "odd", 5)])
    assert (
        sql_rows(fresh, "SHOW PARTITIONS t") == [("5",)] == sql_rows(session, "SHOW PARTITIONS t")
    )


def test_create_table_errors_leave_nothing_behind(session: Any, tmp_path: Path) -> None:
    managed = tmp_path / "wh" / "default.db" / "t"

    def nothing() -> None:
        assert not managed.exists()
        assert sql_rows(session, "SHOW TABLES") == []

    with pytest.raises(SchemaError, match=r"primary key field 'uid' is not a column of default.t"):
        session.sql("CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey='uid')")
    with pytest.raises(SchemaError, match=r"ordering \(preCombine\) field 'tsx' is not a column"):
        session.sql(
            "CREATE TABLE t (id INT, ts INT) USING hudi "
            "TBLPROPERTIES (primaryKey='id', preCombineField='tsx')"
        )
    with pytest.raises(SchemaError, match=r"partition column 'town' is not a column of default.t"):
        session.sql(
            "CREATE TABLE t (id INT) USING hudi PARTITIONED BY (town) "
            "TBLPROPERTIES (primaryKey='id')"
        )
    with pytest.raises(SchemaError, match=r"column 'd': invalid data type 'INTERVAL DAY'"):
        session.sql(
            "CREATE TABLE t (id INT, d INTERVAL DAY) USING hudi TBLPROPERTIES (primaryKey='id')"
        )
    with pytest.raises(ConfigError, match="table_version must be 6, 8 or 9, got 7"):
        session.sql(
            "CREATE TABLE t (id INT) USING hudi "
            "TBLPROPERTIES (primaryKey='id', 'hoodie.write.table.version'='7')"
        )
    with pytest.raises(SqlError, match="needs columns or AS SELECT"):
        session.sql("CREATE TABLE t USING hudi")
    with pytest.raises(SqlError, match="takes its columns from the query"):
        session.sql(
            "CREATE TABLE t (id INT) USING hudi TBLPROPERTIES (primaryKey='id') AS SELECT 1"
        )
    with pytest.raises(DatabaseNotFoundError, match="database nodb does not exist"):
        session.sql("CREATE TABLE nodb.t (id INT) USING hudi TBLPROPERTIES (primaryKey='id')")
    nothing()


def test_session_options_set_the_table_version(session: Any) -> None:
    session.sql("SET hoodie.write.table.version = 8")
    session.sql("CREATE TABLE v8 (id INT) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.sql(
        "CREATE TABLE v6 (id INT) USING hudi "
        "TBLPROPERTIES (primaryKey = 'id', 'hoodie.write.table.version' = '6')"
    )
    assert session.table(TableName(None, "v8")).config.table_version == 8
    assert session.table(TableName(None, "v6")).config.table_version == 6
    assert "'hoodie.write.table.version' = '8'" in sql_rows(session, "SHOW CREATE TABLE v8")[0][0]


# --------------------------------------------------------------------------------------------
# CREATE TABLE AS SELECT


@MOR_ONLY
def test_ctas_bulk_inserts_the_query_rows(session: Any, tmp_path: Path, kind: str) -> None:
    make_trips(session, "cow", "src")
    fill(session, "src", TRIPS)
    out = session.sql(
        f"CREATE TABLE dst USING hudi PARTITIONED BY (city) "
        f"TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{kind}') "
        "AS SELECT * FROM src WHERE fare > 15"
    )
    row = out.collect()[0]
    assert (row.operation, row.num_inserted_rows, row.num_affected_rows) == ("bulk_insert", 2, 2)
    assert session.sql("SELECT * FROM dst").columns == [*META, "uuid", "ts", "fare", "city"]
    assert data(session, "dst", "uuid, ts, fare, city") == [
        ("b", 1, 20.0, "nyc"),
        ("c", 2, 30.0, "sf"),
    ]
    assert sql_rows(session, "SHOW PARTITIONS dst") == [("city=nyc",), ("city=sf",)]
    # the partition column moves last; hudi-rs reads what SQL wrote
    session.sql(
        "CREATE TABLE dst2 USING hudi PARTITIONED BY (city) TBLPROPERTIES (primaryKey='uuid') "
        "AS SELECT city, uuid, fare * 2 AS fare2 FROM src"
    )
    assert [c[0] for c in sql_rows(session, "DESCRIBE dst2")[5:8]] == ["uuid", "fare2", "city"]
    table = hudi_rs_read(str(tmp_path / "wh" / "default.db" / "dst2"))
    assert rows(table, ["uuid", "fare2", "city"]) == [
        ("a", 20.0, "sf"),
        ("b", 40.0, "nyc"),
        ("c", 60.0, "sf"),
    ]
    # an empty result still creates the table
    session.sql(
        "CREATE TABLE empty USING hudi TBLPROPERTIES (primaryKey='uuid') "
        "AS SELECT uuid, ts FROM src WHERE false"
    )
    assert data(session, "empty", "uuid") == []
    assert [c[0] for c in sql_rows(session, "DESCRIBE empty")] == [*META, "uuid", "ts"]


def test_failed_ctas_leaves_no_table_and_no_folder(session: Any, tmp_path: Path) -> None:
    bad = "AS SELECT CAST(NULL AS STRING) AS id, 1 AS v"  # a null record key fails the write
    with pytest.raises(KeyGenerationError, match="record key field 'id' is null"):
        session.sql(f"CREATE TABLE t USING hudi TBLPROPERTIES (primaryKey='id') {bad}")
    assert sql_rows(session, "SHOW TABLES") == []
    assert not (tmp_path / "wh" / "default.db" / "t").exists()
    # external: what was in the folder stays, what the CTAS made goes
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "keep.txt").write_text("mine")
    with pytest.raises(KeyGenerationError):
        session.sql(
            f"CREATE TABLE t USING hudi LOCATION '{ext}' TBLPROPERTIES (primaryKey='id') {bad}"
        )
    assert sorted(os.listdir(ext)) == ["keep.txt"]
    missing = tmp_path / "ext2"
    with pytest.raises(KeyGenerationError):
        session.sql(
            f"CREATE TABLE t USING hudi LOCATION '{missing}' TBLPROPERTIES (primaryKey='id') {bad}"
        )
    assert not missing.exists()
    assert sql_rows(session, "SHOW TABLES") == []
    # an analysis error in the query: nothing is made either
    with pytest.raises(Exception, match="nope"):
        session.sql(
            "CREATE TABLE t USING hudi TBLPROPERTIES (primaryKey='id') AS SELECT * FROM nope"
        )
    assert sql_rows(session, "SHOW TABLES") == []


# --------------------------------------------------------------------------------------------
# persistence, external tables, registration


def test_tables_persist_across_sessions(spark: Any, session: Any, tmp_path: Path) -> None:
    session.sql("CREATE DATABASE sales")
    make_trips(session, "mor", "sales.trips")
    fill(session, "sales.trips", TRIPS)
    other = hudilite.connect(str(tmp_path / "wh"), spark=spark)
    assert sql_rows(other, "SHOW DATABASES") == [("default",), ("sales",)]
    # A MOR table lists with its read-optimized and real-time names, as Hive sync makes them.
    assert sql_rows(other, "SHOW TABLES IN sales") == [
        ("sales", "trips", False),
        ("sales", "trips_ro", False),
        ("sales", "trips_rt", False),
    ]
    assert sql_rows(other, "DESCRIBE sales.trips") == sql_rows(session, "DESCRIBE sales.trips")
    assert data(other, "sales.trips", "uuid, city") == [("a", "sf"), ("b", "nyc"), ("c", "sf")]


@COW_ONLY
def test_external_table_drop_keeps_data_and_location_registers_it(
    session: Any, tmp_path: Path, kind: str
) -> None:
    loc = tmp_path / "data" / "trips"
    session.sql(
        f"CREATE TABLE trips (uuid STRING, city STRING, ts BIGINT, fare DOUBLE) USING hudi "
        f"PARTITIONED BY (city) LOCATION '{loc}' "
        f"TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{kind}')"
    )
    fill(session, "trips", TRIPS)
    detail = dict((r[0], r[1]) for r in sql_rows(session, "DESCRIBE EXTENDED trips"))
    assert detail["Type"] == "EXTERNAL" and detail["Location"] == str(loc)
    assert f"LOCATION '{loc}'" in sql_rows(session, "SHOW CREATE TABLE trips")[0][0]
    session.sql("DROP TABLE trips")
    assert (loc / ".hoodie" / "hoodie.properties").exists()
    with pytest.raises(TableNotFoundError, match=r"table or view default\.trips not found"):
        session.sql("SELECT * FROM trips")
    # register the folder again, under another name, with matching options
    session.sql(
        f"CREATE TABLE again USING hudi LOCATION '{loc}' TBLPROPERTIES (primaryKey = 'UUID', "
        f"type = '{kind}')"
    )
    assert data(session, "again", "uuid, ts, fare, city") == [
        ("a", 1, 10.0, "sf"),
        ("b", 1, 20.0, "nyc"),
        ("c", 2, 30.0, "sf"),
    ]
    with pytest.raises(
        SqlError, match=r"option preCombineField = 'fare' contradicts the Hudi table"
    ):
        session.sql(
            f"CREATE TABLE x USING hudi LOCATION '{loc}' TBLPROPERTIES (preCombineField='fare')"
        )
    with pytest.raises(SqlError, match=r"PARTITIONED BY \(uuid\) contradicts the Hudi table"):
        session.sql(f"CREATE TABLE x USING hudi PARTITIONED BY (uuid) LOCATION '{loc}'")
    with pytest.raises(SchemaError, match="are not those of the Hudi table"):
        session.sql(f"CREATE TABLE x (uuid STRING) USING hudi LOCATION '{loc}'")
    # PURGE deletes an external table's data too
    session.sql("DROP TABLE again PURGE")
    assert not loc.exists()


def test_register_a_real_hudi_table(session: Any, shared_fixture: Any) -> None:
    base = shared_fixture("sample_table/cow/v6_complexkeygen_hivestyle.zip")
    with pytest.raises(SqlError, match=r"option primaryKey = 'id' contradicts .*\(its record key"):
        session.sql(f"CREATE TABLE fx USING hudi LOCATION '{base}' TBLPROPERTIES (primaryKey='id')")
    session.sql(
        f"CREATE TABLE fx USING hudi LOCATION '{base}' "
        "TBLPROPERTIES (type = 'cow', primaryKey = 'id,name', preCombineField = 'longField')"
    )
    expected = hudi_rs_read(str(base))
    cols = ["id", "name", "isActive", "longField", "decimalField", "byteField", "shortField"]
    got = session.sql(f"SELECT {', '.join(cols)} FROM fx").toArrow()
    assert rows(got, cols) == rows(expected, cols)
    described = sql_rows(session, "DESCRIBE fx")
    data_cols = [f.name for f in expected.schema if not f.name.startswith("_hoodie_")]
    assert [r[0] for r in described[: 5 + len(data_cols)]] == META + data_cols
    assert described[5 + len(data_cols) :] == [
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("byteField", "int", None),
        ("shortField", "int", None),
    ]
    assert sql_rows(session, "SHOW PARTITIONS fx") == [
        ("byteField=10/shortField=300",),
        ("byteField=20/shortField=100",),
        ("byteField=30/shortField=100",),
    ]
    text = sql_rows(session, "SHOW CREATE TABLE fx")[0][0]
    assert f"LOCATION '{base}'" in text
    assert "PARTITIONED BY (byteField, shortField)" in text
    assert "'primaryKey' = 'id,name'" in text
    assert f"'payloadClass' = '{cfg.OVERWRITE_PAYLOAD}'" in text  # Hudi 0.x's default


def test_fixture_create_statement_lays_out_columns_as_hudi(
    session: Any, tmp_path: Path, shared_fixture: Any
) -> None:
    """Hudi's own CREATE TABLE script gives the column order of the table Hudi wrote, and
    a partition column declared mid-list moves behind the others (as Spark does)."""
    script = (FIXTURES / "sample_table/cow/v6_complexkeygen_hivestyle.sql").read_text()
    create = script[script.index("CREATE TABLE") : script.index(";", script.index("CREATE TABLE"))]
    session.sql(create)
    base = shared_fixture("sample_table/cow/v6_complexkeygen_hivestyle.zip")
    theirs = [f.name for f in hudi_rs_read(str(base)).schema]
    ours = session.sql("SELECT * FROM v6_complexkeygen_hivestyle").columns
    assert ours == theirs
    ours_config = session.table(TableName(None, "v6_complexkeygen_hivestyle")).config
    theirs_config = load_config(FileSystemGateway(str(base)))
    for attr in ("record_key_fields", "partition_fields", "ordering_fields", "keygen_type"):
        assert getattr(ours_config, attr) == getattr(theirs_config, attr)
    session.sql(
        "CREATE TABLE mid (id INT, shortField SHORT, name STRING, byteField BYTE, ts BIGINT) "
        "USING hudi PARTITIONED BY (byteField, shortField) TBLPROPERTIES (primaryKey='id')"
    )
    assert [c[0] for c in sql_rows(session, "DESCRIBE mid")][5:10] == [
        "id",
        "name",
        "ts",
        "byteField",
        "shortField",
    ]


# --------------------------------------------------------------------------------------------
# databases and SHOW TABLES


def test_databases_and_show_tables(session: Any, spark: Any, tmp_path: Path) -> None:
    assert session.sql("SHOW DATABASES").columns == ["namespace"]
    session.sql("CREATE DATABASE sales")
    session.sql("CREATE DATABASE IF NOT EXISTS sales")
    with pytest.raises(DatabaseExistsError, match="database sales already exists"):
        session.sql("CREATE DATABASE sales")
    session.sql(f"CREATE DATABASE x LOCATION '{tmp_path / 'xdir'}'")
    make_trips(session, "cow", "x.far")
    assert session.entry(TableName("x", "far")).location == str(tmp_path / "xdir" / "far")
    assert (tmp_path / "xdir" / "far" / ".hoodie" / "hoodie.properties").exists()
    session.sql("DROP DATABASE x CASCADE")
    assert not (tmp_path / "xdir" / "far").exists()
    assert sql_rows(session, "SHOW DATABASES") == [("default",), ("sales",)]
    make_trips(session, "cow", "b_trips")
    make_trips(session, "mor", "a_trips")
    make_trips(session, "cow", "sales.orders")
    fill(session, "a_trips", TRIPS)
    session.sql("SELECT * FROM a_trips").collect()  # registers hudilite's internal view
    spark.createDataFrame([(1,)], "x int").createOrReplaceTempView("my_view")
    assert session.sql("SHOW TABLES").columns == ["namespace", "tableName", "isTemporary"]
    assert sql_rows(session, "SHOW TABLES") == [
        ("default", "a_trips", False),
        ("default", "a_trips_ro", False),
        ("default", "a_trips_rt", False),
        ("default", "b_trips", False),
        ("", "my_view", True),
    ]
    assert sql_rows(session, "SHOW TABLES IN sales") == [
        ("sales", "orders", False),
        ("", "my_view", True),
    ]
    session.sql("USE sales")
    assert sql_rows(session, "SHOW TABLES")[0] == ("sales", "orders", False)
    with pytest.raises(DatabaseNotFoundError, match="database nodb does not exist"):
        session.sql("SHOW TABLES IN nodb")
    # DROP DATABASE: refused while it has tables, unless CASCADE (managed data goes too).
    location = session.entry(TableName("sales", "orders")).location
    with pytest.raises(DatabaseNotEmptyError, match="use CASCADE"):
        session.sql("DROP DATABASE sales")
    session.sql("DROP DATABASE sales CASCADE")
    assert session.current_database == "default"
    assert sql_rows(session, "SHOW DATABASES") == [("default",)]
    assert not Path(location).exists()
    session.sql("DROP DATABASE IF EXISTS sales")
    with pytest.raises(DatabaseNotFoundError, match="database sales does not exist"):
        session.sql("DROP DATABASE sales")


# --------------------------------------------------------------------------------------------
# SHOW PARTITIONS, DROP PARTITION, TRUNCATE


@MOR_ONLY
def test_show_and_drop_partitions(session: Any, kind: str) -> None:
    make_trips(session, kind)
    fill(session, "trips", [*TRIPS, ("d", 1, 5.0, "la")])
    assert sql_rows(session, "SHOW PARTITIONS trips") == [
        ("city=la",),
        ("city=nyc",),
        ("city=sf",),
    ]
    out = session.sql("ALTER TABLE trips DROP PARTITION (city = 'sf')").collect()[0]
    assert (out.operation, out.num_deleted_rows) == ("delete_partition", 2)
    assert sql_rows(session, "SHOW PARTITIONS trips") == [("city=la",), ("city=nyc",)]
    assert data(session, "trips", "uuid, city") == [("b", "nyc"), ("d", "la")]
    instants = len(session.table(TableName(None, "trips")).timeline())
    with pytest.raises(PartitionNotFoundError, match=r"partition \(city='sf'\) \(path 'city=sf'\)"):
        session.sql("ALTER TABLE trips DROP PARTITION (city='sf')")
    session.sql("ALTER TABLE trips DROP IF EXISTS PARTITION (city='sf')")
    assert len(session.table(TableName(None, "trips")).timeline()) == instants
    with pytest.raises(SchemaError, match="partition column 'town' is not a column"):
        session.sql("ALTER TABLE trips DROP PARTITION (town='la')")
    # the rows of a dropped partition can come back
    fill(session, "trips", [("e", 1, 1.0, "sf")])
    assert sql_rows(session, "SHOW PARTITIONS trips")[-1] == ("city=sf",)
    # truncate: every partition goes, the table stays
    out = session.sql("TRUNCATE TABLE trips").collect()[0]
    assert (out.operation, out.num_deleted_rows) == ("delete_partition", 3)
    assert data(session, "trips") == []
    assert sql_rows(session, "SHOW PARTITIONS trips") == []
    fill(session, "trips", [("f", 1, 1.0, "sf")])
    assert data(session, "trips", "uuid") == [("f",)]


@COW_ONLY
def test_drop_partition_spec_rendered_by_the_key_generator(session: Any, kind: str) -> None:
    """Several fields, plain (non hive-style) folders, URL-encoding and typed values."""
    session.sql(
        f"""CREATE TABLE ev (id INT, day DATE, bucket INT, v STRING) USING hudi
            PARTITIONED BY (day, bucket)
            TBLPROPERTIES (primaryKey = 'id', type = '{kind}',
              'hoodie.datasource.write.hive_style_partitioning' = 'false',
              'hoodie.datasource.write.partitionpath.urlencode' = 'true')"""
    )
    import datetime as dt

    d1, d2 = dt.date(2024, 1, 31), dt.date(2024, 2, 1)
    fill(session, "ev", [(1, "a", d1, 1), (2, "b", d1, 2), (3, "c", d2, 1), (4, "d", d2, 2)])
    assert sql_rows(session, "SHOW PARTITIONS ev") == [
        ("2024-01-31/1",),
        ("2024-01-31/2",),
        ("2024-02-01/1",),
        ("2024-02-01/2",),
    ]
    session.sql("ALTER TABLE ev DROP PARTITION (bucket = 2, day = '2024-01-31')")
    assert data(session, "ev", "id") == [(1,), (3,), (4,)]
    session.sql("ALTER TABLE ev DROP PARTITION (bucket = '1')")  # partial spec: every day
    assert data(session, "ev", "id") == [(4,)]
    with pytest.raises(SchemaError, match="partition value 'x' does not fit column 'bucket'"):
        session.sql("ALTER TABLE ev DROP PARTITION (day='2024-02-01', bucket='x')")

    session.sql(
        f"CREATE TABLE enc (id INT, path STRING) USING hudi PARTITIONED BY (path) "
        f"TBLPROPERTIES (primaryKey = 'id', type = '{kind}', "
        "'hoodie.datasource.write.partitionpath.urlencode' = 'true')"
    )
    fill(session, "enc", [(1, "a/b"), (2, "c")])
    assert sql_rows(session, "SHOW PARTITIONS enc") == [("path=a%2Fb",), ("path=c",)]
    session.sql("ALTER TABLE enc DROP PARTITION (path = 'a/b')")
    assert data(session, "enc", "id") == [(2,)]


def test_partition_statements_on_an_unpartitioned_table(session: Any) -> None:
    session.sql("CREATE TABLE flat (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey='id')")
    fill(session, "flat", [(1, "a"), (2, "b")])
    with pytest.raises(
        SqlError,
        match=r"SHOW PARTITIONS is not allowed on a table that is not partitioned: default\.flat",
    ):
        session.sql("SHOW PARTITIONS flat")
    with pytest.raises(SqlError, match=r"not partitioned: default\.flat"):
        session.sql("ALTER TABLE flat DROP PARTITION (v='a')")
    assert session.sql("TRUNCATE TABLE flat").collect()[0].num_deleted_rows == 2
    assert data(session, "flat") == []


# --------------------------------------------------------------------------------------------
# ALTER TABLE ADD COLUMNS, SET TBLPROPERTIES, RENAME


@MOR_ONLY
def test_add_columns(session: Any, tmp_path: Path, kind: str) -> None:
    make_trips(session, kind)
    fill(session, "trips", TRIPS)
    session.sql("ALTER TABLE trips ADD COLUMNS (rider STRING COMMENT 'who', tip DECIMAL(5,2))")
    described = sql_rows(session, "DESCRIBE trips")
    # New columns before the partition column, which stays last as in a new table (and as
    # Hudi orders them: dataSchema ++ colsToAdd ++ partitionSchema).
    assert described[5:11] == [
        ("uuid", "string", None),
        ("ts", "bigint", None),
        ("fare", "double", None),
        ("rider", "string", "who"),
        ("tip", "decimal(5,2)", None),
        ("city", "string", None),
    ]
    assert data(session, "trips", "uuid, rider, tip") == [
        ("a", None, None),
        ("b", None, None),
        ("c", None, None),
    ]
    fill(session, "trips", [("a", 5, 11.0, "ann", Decimal("1.50"), "sf")])
    assert data(session, "trips", "uuid, fare, rider, tip") == [
        ("a", 11.0, "ann", Decimal("1.50")),
        ("b", 20.0, None, None),
        ("c", 30.0, None, None),
    ]
    assert "rider STRING COMMENT 'who'" in sql_rows(session, "SHOW CREATE TABLE trips")[0][0]
    # The copy: SHOW CREATE TABLE recreates the same column order, so a positional
    # INSERT INTO copy SELECT * FROM trips lines up (it failed on the moved partition column).
    created = sql_rows(session, "SHOW CREATE TABLE trips")[0][0]
    session.sql(re.sub(r"^CREATE TABLE \S+", "CREATE TABLE trips_copy", created))
    assert sql_rows(session, "DESCRIBE trips_copy")[:11] == described[:11]
    session.sql("INSERT INTO trips_copy SELECT * FROM trips")
    assert data(session, "trips_copy", "uuid, fare, rider, tip, city") == [
        ("a", 11.0, "ann", Decimal("1.50"), "sf"),
        ("b", 20.0, None, None, "nyc"),
        ("c", 30.0, None, None, "sf"),
    ]
    with pytest.raises(SchemaError, match=r"column 'RIDER' already exists in default\.trips"):
        session.sql("ALTER TABLE trips ADD COLUMNS (RIDER STRING)")
    with pytest.raises(SchemaError, match=r"cannot add column 'x' to default\.trips as NOT NULL"):
        session.sql("ALTER TABLE trips ADD COLUMNS (x INT NOT NULL)")
    table = hudi_rs_read(str(tmp_path / "wh" / "default.db" / "trips"))
    assert rows(table, ["uuid", "rider"]) == [("a", "ann"), ("b", None), ("c", None)]


@COW_ONLY
def test_set_tblproperties(session: Any, tmp_path: Path, kind: str) -> None:
    make_trips(session, kind)
    session.sql(
        "ALTER TABLE trips SET TBLPROPERTIES ('hoodie.cleaner.commits.retained' = '3', "
        "'hoodie.bucket.index.num.buckets' = '8', 'comment' = 'hello')"
    )
    location = tmp_path / "wh" / "default.db" / "trips"
    stored = cfg.parse_properties((location / ".hoodie" / "hoodie.properties").read_text())
    assert stored["hoodie.bucket.index.num.buckets"] == "8"
    defaults = cfg.parse_properties((location / ".hoodie" / "hudilite.properties").read_text())
    assert defaults["hoodie.cleaner.commits.retained"] == "3"
    props = dict((r[0], r[1]) for r in sql_rows(session, "DESCRIBE EXTENDED trips"))
    assert props["Table Properties"] == (
        "[comment=hello, hoodie.bucket.index.num.buckets=8, hoodie.cleaner.commits.retained=3, "
        f"preCombineField=ts, primaryKey=uuid, type={kind}]"
    )
    assert (
        "'hoodie.cleaner.commits.retained' = '3'"
        in sql_rows(session, "SHOW CREATE TABLE trips")[0][0]
    )
    # a property fixed at creation cannot change; nothing is written then
    entry_before = session.entry(TableName(None, "trips"))
    with pytest.raises(ConfigError, match="cannot change table property 'primaryKey'"):
        session.sql("ALTER TABLE trips SET TBLPROPERTIES ('comment' = 'x', 'primaryKey' = 'city')")
    assert session.entry(TableName(None, "trips")).properties == entry_before.properties
    session.sql(f"ALTER TABLE trips SET TBLPROPERTIES ('type' = '{kind}')")  # same value: fine
    with pytest.raises(SqlError, match="reserved for hudilite"):
        session.sql("ALTER TABLE trips SET TBLPROPERTIES ('hudilite.sql.columns' = '{}')")
    # UNSET: the key goes from the table and the catalog; an absent key is an error unless
    # IF EXISTS; fixed keys stay.
    session.sql("ALTER TABLE trips UNSET TBLPROPERTIES ('hoodie.cleaner.commits.retained')")
    defaults = cfg.parse_properties((location / ".hoodie" / "hudilite.properties").read_text())
    assert "hoodie.cleaner.commits.retained" not in defaults
    props = dict((r[0], r[1]) for r in sql_rows(session, "DESCRIBE EXTENDED trips"))
    assert "hoodie.cleaner.commits.retained" not in props["Table Properties"]
    with pytest.raises(SqlError, match=r"cannot unset table property 'nope' of default\.trips"):
        session.sql("ALTER TABLE trips UNSET TBLPROPERTIES ('nope')")
    session.sql("ALTER TABLE trips UNSET TBLPROPERTIES IF EXISTS ('nope', 'comment')")
    with pytest.raises(ConfigError, match="primaryKey"):
        session.sql("ALTER TABLE trips UNSET TBLPROPERTIES ('primaryKey')")


@COW_ONLY
def test_rename_table(session: Any, tmp_path: Path, kind: str) -> None:
    make_trips(session, kind)
    fill(session, "trips", TRIPS)
    session.sql("SELECT * FROM trips").collect()
    session.sql("ALTER TABLE trips RENAME TO default.rides")
    assert [r[1] for r in sql_rows(session, "SHOW TABLES")] == ["rides"]
    assert data(session, "rides", "uuid") == [("a",), ("b",), ("c",)]
    with pytest.raises(TableNotFoundError, match=r"default\.trips"):
        session.sql("SELECT * FROM trips")
    assert not [t for t in session.spark.catalog.listTables() if "__trips__" in t.name]
    # the folder stays; the table's name in hoodie.properties follows
    location = tmp_path / "wh" / "default.db" / "trips"
    assert load_config(FileSystemGateway(str(location))).name == "rides"
    assert dict((r[0], r[1]) for r in sql_rows(session, "DESCRIBE EXTENDED rides"))[
        "Location"
    ] == str(location)
    with pytest.raises(TableExistsError, match="a Hudi table already exists at"):
        make_trips(session, kind)  # the old managed folder is still in use
    make_trips(session, kind, "other")
    with pytest.raises(TableExistsError, match=r"table default\.other already exists"):
        session.sql("ALTER TABLE rides RENAME TO other")
    session.sql("CREATE DATABASE sales")
    with pytest.raises(SqlError, match="cannot move to another database"):
        session.sql("ALTER TABLE rides RENAME TO sales.rides")
    with pytest.raises(TableNotFoundError, match=r"table default\.nope not found"):
        session.sql("ALTER TABLE nope RENAME TO nope2")


# --------------------------------------------------------------------------------------------
# DROP TABLE and unknown names


@COW_ONLY
def test_drop_managed_table(session: Any, tmp_path: Path, kind: str) -> None:
    make_trips(session, kind)
    fill(session, "trips", TRIPS)
    session.sql("SELECT * FROM trips").collect()
    location = tmp_path / "wh" / "default.db" / "trips"
    assert location.exists()
    session.sql("DROP TABLE trips")
    assert not location.exists()
    assert sql_rows(session, "SHOW TABLES") == []
    assert not [t for t in session.spark.catalog.listTables() if "__trips__" in t.name]
    session.sql("DROP TABLE IF EXISTS trips")
    session.sql("DROP TABLE IF EXISTS nodb.trips")
    with pytest.raises(TableNotFoundError, match=r"table default\.trips not found"):
        session.sql("DROP TABLE trips")
    # a name can be used again
    make_trips(session, kind)
    assert data(session, "trips") == []


@pytest.mark.parametrize(
    "sql",
    [
        "DESCRIBE {t}",
        "DESCRIBE EXTENDED {t}",
        "SHOW CREATE TABLE {t}",
        "SHOW PARTITIONS {t}",
        "ALTER TABLE {t} ADD COLUMNS (x INT)",
        "ALTER TABLE {t} SET TBLPROPERTIES ('a' = 'b')",
        "ALTER TABLE {t} RENAME TO y",
        "ALTER TABLE {t} DROP PARTITION (c = 1)",
        "TRUNCATE TABLE {t}",
        "DROP TABLE {t}",
    ],
)
def test_unknown_table_errors_name_it(session: Any, sql: str) -> None:
    with pytest.raises(TableNotFoundError, match=r"table default\.nope not found"):
        session.sql(sql.format(t="nope"))
    with pytest.raises(TableNotFoundError, match=r"table nodb\.nope not found"):
        session.sql(sql.format(t="nodb.nope"))


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        (
            "CREATE INDEX idx_city ON trips USING column_stats (city)",
            r"CREATE INDEX idx_city ON trips",
        ),
        ("CREATE INDEX IF NOT EXISTS idx ON TABLE trips (fare)", r"CREATE INDEX idx ON trips"),
        ("DROP INDEX IF EXISTS idx_city ON trips", r"DROP INDEX idx_city ON trips"),
        ("SHOW INDEXES FROM trips", r"SHOW INDEXES FROM trips"),
        ("SHOW INDEXES IN nodb.nope", r"SHOW INDEXES FROM nodb\.nope"),
    ],
)
def test_hudi_index_statements_are_refused_by_name(session: Any, sql: str, named: str) -> None:
    """Hudi 1.x's CREATE/DROP INDEX and SHOW INDEXES: a clear refusal (not Spark's
    table-not-found), naming the statement; nothing is written."""
    make_trips(session, "cow")
    before = sql_rows(session, "SHOW TABLES")
    refusal = r"^\w+ INDEX(ES)? is not supported yet"
    with pytest.raises(UnsupportedStatementError, match=refusal) as info:
        session.sql(sql)
    assert re.search(named, str(info.value))
    assert sql_rows(session, "SHOW TABLES") == before


# --------------------------------------------------------------------------------------------
# other providers and Spark views


def test_other_providers_and_temp_views_go_to_spark(
    session: Any, spark: Any, tmp_path: Path
) -> None:
    make_trips(session, "cow")
    fill(session, "trips", TRIPS)
    loc = tmp_path / "parquet"
    session.sql(
        f"CREATE TABLE default.pq USING parquet LOCATION '{loc}' "
        "AS SELECT uuid, fare FROM trips WHERE city = 'sf'"
    )
    try:
        assert sorted(tuple(r) for r in spark.sql("SELECT * FROM default.pq").collect()) == [
            ("a", 10.0),
            ("c", 30.0),
        ]
        assert [r[1] for r in sql_rows(session, "SHOW TABLES")] == ["trips"]  # hudilite's only
        assert sql_rows(session, "DESCRIBE default.pq")[:2] == [
            ("uuid", "string", None),
            ("fare", "double", None),
        ]
        with pytest.raises(TableExistsError, match="a hudilite table of that name exists"):
            session.sql(f"CREATE TABLE trips (x INT) USING parquet LOCATION '{tmp_path / 'p2'}'")
    finally:
        session.sql("DROP TABLE default.pq")
    assert not spark.catalog.tableExists("default.pq")
    spark.createDataFrame([(1, "x")], "k int, v string").createOrReplaceTempView("tv")
    assert sql_rows(session, "DESCRIBE tv") == [("k", "int", None), ("v", "string", None)]
    session.sql("DROP TABLE tv")
    assert not spark.catalog.tableExists("tv")


def test_hudi_rs_reads_a_table_made_through_sql(session: Any, tmp_path: Path) -> None:
    session.sql(
        "CREATE TABLE t (id BIGINT, name STRING, price DECIMAL(10,2), day DATE) USING hudi "
        "PARTITIONED BY (day) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'id', "
        "type = 'mor', 'hoodie.write.table.version' = '8')"
    )
    import datetime as dt

    fill(session, "t", [(1, "a", Decimal("1.25"), dt.date(2024, 1, 1))])
    fill(
        session,
        "t",
        [(1, "b", Decimal("2.50"), dt.date(2024, 1, 1)), (2, "c", None, dt.date(2024, 1, 2))],
    )
    table = hudi_rs_read(str(tmp_path / "wh" / "default.db" / "t"))
    assert rows(table, ["id", "name", "price", "day"]) == [
        (1, "b", "2.50", dt.date(2024, 1, 1)),
        (2, "c", None, dt.date(2024, 1, 2)),
    ]
    assert (
        load_config(FileSystemGateway(str(tmp_path / "wh" / "default.db" / "t"))).table_version == 8
    )


@pytest.mark.parametrize(
    "fixture",
    [
        "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip",
        "sample_table/cow/v8_nonpartitioned.zip",
        "sample_table/mor/avro/v9_txns_simple_nometa.zip",
    ],
)
def test_registered_fixtures_read_as_hudi_rs_does(
    session: Any, shared_fixture: Any, fixture: str
) -> None:
    base = shared_fixture(fixture)
    session.sql(f"CREATE TABLE IF NOT EXISTS fx USING hudi LOCATION '{base}'")
    session.sql(f"CREATE TABLE IF NOT EXISTS fx USING hudi LOCATION '{base}'")  # no-op
    expected = hudi_rs_read(str(base))
    cols = [f.name for f in expected.schema if not f.name.startswith("_hoodie_")]
    got = session.sql("SELECT * FROM fx").toArrow()
    assert rows(got, cols) == rows(expected, cols)
    config = load_config(FileSystemGateway(str(base)))
    detail = {r[0]: r[1] for r in sql_rows(session, "DESCRIBE EXTENDED fx")}
    assert detail["Table Version"] == str(config.table_version)
    assert detail["Type"] == "EXTERNAL"
    assert detail["Primary Key"] == ",".join(config.record_key_fields)


def test_flink_style_options_configure_the_table(session: Any) -> None:
    session.sql(
        """CREATE TABLE events (id INT, ts BIGINT, v STRING) USING hudi
           WITH ('primaryKey' = 'id', 'table.type' = 'MERGE_ON_READ', 'precombine.field' = 'ts',
                 'changelog.enabled' = 'true', 'write.operation' = 'insert')"""
    )
    tbl = session.table(TableName(None, "events"))
    config = tbl.config
    assert (config.table_type, config.ordering_fields) == ("MERGE_ON_READ", ("ts",))
    assert tbl.state().changelog
    # write.operation = insert: INSERT keeps both versions of a key.
    session.sql("INSERT INTO events VALUES (1, 1, 'a')")
    out = session.sql("INSERT INTO events VALUES (1, 2, 'b')").collect()[0]
    assert out.operation == "insert"
    assert sql_rows(session, "SELECT id, ts, v FROM events ORDER BY ts") == [
        (1, 1, "a"),
        (1, 2, "b"),
    ]
