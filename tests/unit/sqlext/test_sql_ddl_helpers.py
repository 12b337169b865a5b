"""Pure helpers of the SQL DDL handlers (no JVM): type text, option mapping, rendering."""

from __future__ import annotations

import dataclasses

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudilite import config as cfg
from hudilite.errors import SchemaError
from hudilite.sqlext import Column, CreateTable, SqlError, parse_statement
from hudilite.sqlext.ddl_common import (
    COLUMNS_KEY,
    ColumnNote,
    columns_schema,
    decode_column_notes,
    encode_column_notes,
    notes_of,
    parse_type,
    quote_identifier,
    reorder_partitions,
    sql_string,
    table_spec,
    type_sql,
    visible_properties,
    with_notes,
)
from hudilite.sqlext.ddl_show import (
    DescribeDetail,
    create_table_properties,
    describe_rows,
    render_create_table,
)

# --------------------------------------------------------------------------------------------
# type text -> Spark types


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("BIGINT", LongType()),
        ("LONG", LongType()),
        ("int", IntegerType()),
        ("INTEGER", IntegerType()),
        ("SMALLINT", ShortType()),
        ("SHORT", ShortType()),
        ("TINYINT", ByteType()),
        ("BYTE", ByteType()),
        ("FLOAT", FloatType()),
        ("REAL", FloatType()),
        ("DOUBLE", DoubleType()),
        ("DOUBLE PRECISION", DoubleType()),
        ("BOOLEAN", BooleanType()),
        ("STRING", StringType()),
        ("VARCHAR(10)", StringType()),
        ("CHAR(3)", StringType()),
        ("BINARY", BinaryType()),
        ("DATE", DateType()),
        ("TIMESTAMP", TimestampType()),
        ("TIMESTAMP_LTZ", TimestampType()),
        ("TIMESTAMP_NTZ", TimestampNTZType()),
        ("VOID", NullType()),
        ("DECIMAL", DecimalType(10, 0)),
        ("DECIMAL(10, 5)", DecimalType(10, 5)),
        ("DECIMAL(10,5)", DecimalType(10, 5)),
        ("NUMERIC(7)", DecimalType(7, 0)),
        ("ARRAY<INT>", ArrayType(IntegerType(), True)),
        ("MAP<STRING, BIGINT>", MapType(StringType(), LongType(), True)),
        (
            "ARRAY<STRUCT<a: STRING, b: INT>>",
            ArrayType(
                StructType([StructField("a", StringType()), StructField("b", IntegerType())])
            ),
        ),
        (
            "MAP<STRING, STRUCT<x: DOUBLE, y: BOOLEAN>>",
            MapType(
                StringType(),
                StructType([StructField("x", DoubleType()), StructField("y", BooleanType())]),
            ),
        ),
        (
            "STRUCT<field1: STRING, child: STRUCT<c1: DOUBLE, c2: BOOLEAN>>",
            StructType(
                [
                    StructField("field1", StringType()),
                    StructField(
                        "child",
                        StructType(
                            [StructField("c1", DoubleType()), StructField("c2", BooleanType())]
                        ),
                    ),
                ]
            ),
        ),
        ("STRUCT<`odd name`: INT>", StructType([StructField("odd name", IntegerType())])),
        ("STRUCT<a INT>", StructType([StructField("a", IntegerType())])),
        ("STRUCT<>", StructType([])),
    ],
)
def test_parse_type(text: str, expected: object) -> None:
    assert parse_type(text) == expected


def test_parse_type_keeps_nested_not_null_and_comment() -> None:
    t = parse_type("STRUCT<a: INT NOT NULL COMMENT 'it\\'s a', b: STRING COMMENT \"q\">")
    assert isinstance(t, StructType)
    assert t["a"].nullable is False
    assert t["a"].metadata == {"comment": "it's a"}
    assert t["b"].nullable is True
    assert t["b"].metadata == {"comment": "q"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("INTERVAL DAY", "interval types cannot be stored"),
        ("GEOMETRY", "unknown type 'GEOMETRY'"),
        ("ARRAY<INT", "expected '>'"),
        ("MAP<STRING>", "expected ','"),
        ("DECIMAL(40, 2)", "out of range"),
        ("DECIMAL(5, 7)", "out of range"),
        ("INT INT", "unexpected 'INT'"),
        ("STRUCT<a: INT NOT>", "expected NULL after NOT"),
    ],
)
def test_parse_type_errors_name_the_column(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message) as info:
        parse_type(text, "col_x")
    assert "'col_x'" in str(info.value)


def test_every_type_the_parser_sees_in_hudi_scripts_round_trips() -> None:
    """Column types as the dialect renders them parse, and type_sql renders them back."""
    stmt = parse_statement(
        "CREATE TABLE t (a BYTE, b SHORT, c LONG, d DECIMAL(10,5), e TIMESTAMP, f DATE, "
        "g BINARY, h ARRAY<STRUCT<arr_struct_f1: STRING, arr_struct_f2: INT>>, "
        "i MAP<STRING, STRUCT<v1: DOUBLE, v2: BOOLEAN>>, "
        "j STRUCT<field1: STRING, child_struct: STRUCT<child_field1: DOUBLE>>) USING hudi"
    )
    assert isinstance(stmt, CreateTable) and stmt.columns is not None
    rendered = [type_sql(parse_type(c.type, c.name)) for c in stmt.columns]
    assert rendered == [
        "TINYINT",
        "SMALLINT",
        "BIGINT",
        "DECIMAL(10,5)",
        "TIMESTAMP",
        "DATE",
        "BINARY",
        "ARRAY<STRUCT<arr_struct_f1: STRING, arr_struct_f2: INT>>",
        "MAP<STRING, STRUCT<v1: DOUBLE, v2: BOOLEAN>>",
        "STRUCT<field1: STRING, child_struct: STRUCT<child_field1: DOUBLE>>",
    ]
    for c, text in zip(stmt.columns, rendered, strict=True):
        assert parse_type(text) == parse_type(c.type)


def test_type_sql_and_simple_string() -> None:
    t = StructType(
        [
            StructField("a b", IntegerType(), False, {"comment": "x'y"}),
            StructField("c", TimestampNTZType()),
        ]
    )
    assert type_sql(t) == "STRUCT<`a b`: INT NOT NULL COMMENT 'x\\'y', c: TIMESTAMP_NTZ>"
    assert parse_type(type_sql(t)) == t
    assert ArrayType(DecimalType(10, 5)).simpleString() == "array<decimal(10,5)>"


def test_quoting() -> None:
    assert quote_identifier("abc_1") == "abc_1"
    assert quote_identifier("a b") == "`a b`"
    assert quote_identifier("a`b") == "`a``b`"
    assert quote_identifier("1a") == "`1a`"
    assert sql_string("it's a \\ path") == "'it\\'s a \\\\ path'"


# --------------------------------------------------------------------------------------------
# column definitions


def test_columns_schema_keeps_comments_and_not_null_and_drops_meta_columns() -> None:
    cols = [
        Column("_hoodie_commit_time", "STRING"),
        Column("id", "INT", nullable=False, comment="the key"),
        Column("name", "STRING"),
    ]
    schema = columns_schema(cols, "db.t")
    assert schema == StructType(
        [
            StructField("id", IntegerType(), False, {"comment": "the key"}),
            StructField("name", StringType(), True),
        ]
    )
    assert notes_of(schema) == {"id": ColumnNote("the key", False)}


def test_columns_schema_errors() -> None:
    with pytest.raises(SchemaError, match=r"column 'ID' is declared twice in db\.t"):
        columns_schema([Column("id", "INT"), Column("ID", "INT")], "db.t")
    with pytest.raises(SchemaError, match="needs at least one data column"):
        columns_schema([Column("_hoodie_record_key", "STRING")], "db.t")
    with pytest.raises(SchemaError, match="column 'x': invalid data type"):
        columns_schema([Column("x", "INTERVAL")], "db.t")


def test_reorder_partitions_moves_them_last_in_partition_order() -> None:
    cols = ["id", "shortField", "name", "byteField", "ts"]
    assert reorder_partitions(cols, ["byteField", "shortField"]) == [
        "id",
        "name",
        "ts",
        "byteField",
        "shortField",
    ]
    assert reorder_partitions(cols, []) == cols


# --------------------------------------------------------------------------------------------
# options -> Table.create arguments

COLS = ["id", "name", "ts", "city", "region"]


@pytest.mark.parametrize(
    "options",
    [
        {"primaryKey": "id", "preCombineField": "ts", "type": "mor"},
        {"recordkey.field": "id", "precombine.field": "ts", "table.type": "MERGE_ON_READ"},
        {
            "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "mor",
        },
        {
            "hoodie.table.recordkey.fields": "id",
            "orderingFields": "ts",
            "hoodie.table.type": "merge_on_read",
        },
    ],
)
def test_table_spec_aliases(options: dict[str, str]) -> None:
    spec = table_spec(options, [], COLS, "db.t")
    assert spec.record_key == ("id",)
    assert spec.ordering_field == "ts"
    assert spec.table_type == "MERGE_ON_READ"
    assert spec.table_version == 6
    assert spec.partition_by == ()
    assert spec.options == {}


def test_table_spec_passes_other_options_through_and_resolves_case() -> None:
    options = {
        "primaryKey": "ID, Name",
        "type": "cow",
        "hoodie.write.table.version": "8",
        "payloadClass": "org.apache.hudi.common.model.PartialUpdateAvroPayload",
        "recordMergeMode": "EVENT_TIME_ORDERING",
        "changelog.enabled": "true",
        "write.operation": "insert",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.metadata.enable": "false",
    }
    spec = table_spec(options, ["CITY", "region"], COLS, "db.t")
    assert spec.record_key == ("id", "name")
    assert spec.ordering_field is None
    assert spec.table_type == "COPY_ON_WRITE"
    assert spec.table_version == 8
    assert spec.partition_by == ("city", "region")
    assert spec.options == {
        k: v
        for k, v in options.items()
        if k not in ("primaryKey", "type", "hoodie.write.table.version")
    }


def test_table_spec_partition_option_without_partitioned_by() -> None:
    spec = table_spec(
        {"primaryKey": "id", "hoodie.datasource.write.partitionpath.field": "city"},
        [],
        COLS,
        "db.t",
    )
    assert spec.partition_by == ("city",)
    assert spec.options == {}
    with pytest.raises(SqlError, match=r"PARTITIONED BY \(region\) contradicts option"):
        table_spec({"primaryKey": "id", "partitionpath.field": "city"}, ["region"], COLS, "db.t")


def test_table_spec_errors() -> None:
    # No primary key: a keyless table (generated record keys), not an error.
    keyless = table_spec({"preCombineField": "ts"}, ["city"], COLS, "db.t")
    assert (keyless.record_key, keyless.ordering_field, keyless.partition_by) == (
        (),
        "ts",
        ("city",),
    )
    with pytest.raises(SchemaError, match=r"primary key field 'uid' is not a column of db.t"):
        table_spec({"primaryKey": "uid"}, [], COLS, "db.t")
    with pytest.raises(SchemaError, match=r"ordering \(preCombine\) field 'tss' is not a column"):
        table_spec({"primaryKey": "id", "preCombineField": "tss"}, [], COLS, "db.t")
    with pytest.raises(SchemaError, match=r"partition column 'town' is not a column of db.t"):
        table_spec({"primaryKey": "id"}, ["town"], COLS, "db.t")
    with pytest.raises(SqlError, match="one ordering field is supported"):
        table_spec({"primaryKey": "id", "preCombineField": "ts,name"}, [], COLS, "db.t")
    with pytest.raises(cfg.ConfigError, match="not a table type"):
        table_spec({"primaryKey": "id", "type": "hybrid"}, [], COLS, "db.t")
    with pytest.raises(SqlError, match="listed twice"):
        table_spec({"primaryKey": "id"}, ["city", "CITY"], COLS, "db.t")


# --------------------------------------------------------------------------------------------
# column notes in the catalog entry


def test_column_notes_codec() -> None:
    notes = {"Id": ColumnNote("key", False), "name": ColumnNote("n")}
    props = {COLUMNS_KEY: encode_column_notes(notes), "primaryKey": "id"}
    assert decode_column_notes(props) == {"id": ColumnNote("key", False), "name": ColumnNote("n")}
    assert decode_column_notes({COLUMNS_KEY: "not json"}) == {}
    assert visible_properties(props) == {"primaryKey": "id"}
    schema = StructType([StructField("ID", IntegerType()), StructField("x", StringType())])
    assert with_notes(schema, decode_column_notes(props)) == StructType(
        [
            StructField("ID", IntegerType(), False, {"comment": "key"}),
            StructField("x", StringType()),
        ]
    )


# --------------------------------------------------------------------------------------------
# DESCRIBE and SHOW CREATE TABLE rendering

SCHEMA = StructType(
    [
        StructField("_hoodie_commit_time", StringType()),
        StructField("id", IntegerType(), True, {"comment": "the key"}),
        StructField("tags", ArrayType(StructType([StructField("a", StringType())]))),
        StructField("price", DecimalType(10, 5)),
        StructField("city", StringType()),
    ]
)


def test_describe_rows_plain_partitioned_and_extended() -> None:
    assert describe_rows(SCHEMA, []) == [
        ("_hoodie_commit_time", "string", None),
        ("id", "int", "the key"),
        ("tags", "array<struct<a:string>>", None),
        ("price", "decimal(10,5)", None),
        ("city", "string", None),
    ]
    detail = DescribeDetail(
        database="db",
        table="t",
        external=True,
        location="/x/t",
        table_type="MERGE_ON_READ",
        table_version=8,
        record_key=("id",),
        ordering=(),
        properties={"type": "mor", "primaryKey": "id"},
    )
    rows = describe_rows(SCHEMA, ["city"], detail)
    assert rows[5:] == [
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("city", "string", None),
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Database", "db", ""),
        ("Table", "t", ""),
        ("Type", "EXTERNAL", ""),
        ("Provider", "hudi", ""),
        ("Location", "/x/t", ""),
        ("Table Type", "MERGE_ON_READ", ""),
        ("Table Version", "8", ""),
        ("Primary Key", "id", ""),
        ("Ordering Fields", "", ""),
        ("Table Properties", "[primaryKey=id, type=mor]", ""),
    ]


def _config(**kw: object) -> cfg.TableConfig:
    args: dict = {
        "name": "t",
        "record_key_fields": ("id",),
        "partition_fields": ("city",),
        "ordering_fields": ("ts",),
        "hive_style": True,
    }
    args.update(kw)
    return cfg.TableConfig.new(**args)


def test_create_table_properties_from_config_then_recorded_options() -> None:
    recorded = {
        "PRIMARYKEY": "ID",  # another spelling of a key the config renders: dropped
        "hoodie.datasource.write.precombine.field": "ts",
        "type": "cow",
        "hoodie.parquet.small.file.limit": "0",
        "payloadClass": "org.apache.hudi.common.model.PartialUpdateAvroPayload",
        COLUMNS_KEY: "{}",
    }
    props = create_table_properties(_config(table_type="mor"), recorded)
    assert props == {
        "type": "mor",
        "primaryKey": "id",
        "preCombineField": "ts",
        "hoodie.parquet.small.file.limit": "0",
        "payloadClass": "org.apache.hudi.common.model.PartialUpdateAvroPayload",
    }


def test_create_table_properties_of_a_hudi_written_table() -> None:
    """A v6 Hudi table: non-hive-style folders, commit-time payload despite an ordering
    field, a complex key without partitions -- all rendered so a re-create matches."""
    config = cfg.TableConfig.from_properties(
        {
            "hoodie.table.name": "t",
            "hoodie.table.type": "COPY_ON_WRITE",
            "hoodie.table.version": "6",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.precombine.field": "ts",
            "hoodie.table.partition.fields": "city",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "false",
            "hoodie.datasource.write.partitionpath.urlencode": "true",
        }
    )
    assert create_table_properties(config, {}) == {
        "type": "cow",
        "primaryKey": "id",
        "preCombineField": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.datasource.write.partitionpath.urlencode": "true",
        "payloadClass": cfg.OVERWRITE_PAYLOAD,
    }
    v8 = _config(
        table_version=8,
        partition_fields=(),
        ordering_fields=(),
        record_key_fields=("a", "b"),
        keygen_type="NON_PARTITION",  # what Table.create picks (Hudi's inference)
    )
    assert create_table_properties(v8, {"hoodie.write.table.version": "8"}) == {
        "type": "cow",
        "primaryKey": "a,b",
        "hoodie.write.table.version": "8",
    }
    # ComplexKeyGenerator without partition fields is not what CREATE TABLE picks.
    nonpart = dataclasses.replace(v8, keygen_type="COMPLEX")
    assert create_table_properties(nonpart, {})[cfg.KEYGEN_TYPE.name] == "COMPLEX"
    ts = _config(
        keygen_type="TIMESTAMP",
        extra={
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        },
    )
    assert create_table_properties(ts, {}) == {
        "type": "cow",
        "primaryKey": "id",
        "preCombineField": "ts",
        "hoodie.datasource.write.keygenerator.type": "TIMESTAMP",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
    }


def test_render_create_table_parses_back_to_the_same_statement() -> None:
    schema = StructType(
        [
            StructField("id", IntegerType(), False, {"comment": "it's the key"}),
            StructField("odd name", ArrayType(StructType([StructField("a", StringType())]))),
            StructField("city", StringType()),
        ]
    )
    text = render_create_table(
        "db.t", schema, ["city"], "/data/t", {"type": "cow", "primaryKey": "id"}
    )
    assert text == (
        "CREATE TABLE db.t (\n"
        "  id INT NOT NULL COMMENT 'it\\'s the key',\n"
        "  `odd name` ARRAY<STRUCT<a: STRING>>,\n"
        "  city STRING)\n"
        "USING hudi\n"
        "PARTITIONED BY (city)\n"
        "LOCATION '/data/t'\n"
        "TBLPROPERTIES (\n"
        "  'type' = 'cow',\n"
        "  'primaryKey' = 'id')"
    )
    stmt = parse_statement(text)
    assert isinstance(stmt, CreateTable)
    assert stmt.location == "/data/t"
    assert stmt.partitioned_by == ["city"]
    assert stmt.options == {"type": "cow", "primaryKey": "id"}
    assert stmt.columns is not None
    assert columns_schema(stmt.columns, "db.t") == schema
    managed = render_create_table("db.t", schema, [], None, {})
    assert "LOCATION" not in managed and "PARTITIONED" not in managed
    assert "TBLPROPERTIES" not in managed


def test_create_options_take_table_keys_from_the_session() -> None:
    from hudilite.sqlext.ddl import create_options

    session = {
        "hoodie.write.table.version": "8",
        "hoodie.datasource.write.partitionpath.field": "city",  # partitioning: statement only
        "hoodie.parquet.small.file.limit": "0",  # a write option: not the table's
        "hoodie.index.type": "BUCKET",  # a table property
        "preCombineField": "ts",
    }
    assert create_options(session, {"primaryKey": "id"}) == {
        "hoodie.write.table.version": "8",
        "hoodie.index.type": "BUCKET",
        "preCombineField": "ts",
        "primaryKey": "id",
    }
    # the statement's spelling of a key replaces every session spelling of it
    assert create_options(session, {"hoodie.table.version": "6", "orderingFields": "x"}) == {
        "hoodie.index.type": "BUCKET",
        "hoodie.table.version": "6",
        "orderingFields": "x",
    }
