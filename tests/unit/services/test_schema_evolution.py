"""ALTER TABLE ADD COLUMNS without a JVM: the checks, the Avro schema, the commit; hudi-rs
reads the evolved Hudi-written tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudilite import config as cfg
from hudilite.errors import ConflictError, SchemaError
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.services._common import table_schema_json
from hudilite.services.schema_evolution import (
    add_columns,
    check_new_columns,
    evolve_avro_schema,
    required_columns,
    retype_avro_schema,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata
from hudilite.write.transaction import WriteTransaction
from hudilite.write.write_config import resolve_write_config
from tests.helpers import hudi_rs_read, rows

CURRENT = pa.schema([("uuid", pa.string()), ("Fare", pa.float64()), ("city", pa.string())])
COW_V6 = "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"
COW_V8 = "sample_table/cow/v8_simplekeygen_nonhivestyle.zip"
MOR_V6 = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([], "at least one column"),
        ([pa.field("fare", pa.int64())], r"'fare' already exists .*'Fare'"),
        ([pa.field("tip", pa.int64(), nullable=False)], "'tip' must be nullable"),
        ([pa.field("_hoodie_commit_time", pa.string())], "meta column"),
        ([pa.field("_hoodie_operation", pa.string())], "meta column"),
        ([pa.field("tip", pa.int64()), pa.field("TIP", pa.string())], "'TIP' is listed twice"),
        ([pa.field("t", pa.time32("s"))], "'t'"),
        (["tip"], "pyarrow fields"),
    ],
)
def test_bad_columns_are_named(fields, message):
    with pytest.raises(SchemaError, match=message):
        check_new_columns(CURRENT, fields)


def test_new_columns_take_storage_types():
    added = check_new_columns(CURRENT, pa.schema([("n", pa.int8()), ("s", pa.large_string())]))
    assert added == pa.schema([("n", pa.int32()), ("s", pa.string())])
    assert check_new_columns(CURRENT, pa.field("x", pa.bool_())).names == ["x"]


def test_avro_schema_keeps_existing_fields_verbatim():
    # Hudi writes [T, "null"] unions in create schemas; they must survive untouched.
    existing = {
        "type": "record",
        "name": "t_record",
        "namespace": "hoodie.t",
        "fields": [{"name": "id", "type": ["int", "null"]}],
    }
    added = pa.schema(
        [
            ("tip", pa.decimal128(10, 2)),
            ("info", pa.struct([("a", pa.string())])),
        ]
    )
    evolved = json.loads(evolve_avro_schema(json.dumps(existing), added))
    assert evolved["fields"][0] == existing["fields"][0]
    tip, info = evolved["fields"][1:]
    assert tip["type"][0] == "null" and tip["default"] is None
    assert tip["type"][1]["logicalType"] == "decimal"
    assert info["type"][1]["namespace"] == "hoodie.t.t_record"
    with pytest.raises(SchemaError, match="not a valid Avro name"):
        evolve_avro_schema(json.dumps(existing), pa.schema([("bad name", pa.int32())]))


def _state(base: Path) -> TableState:
    return TableState.load(FileSystemGateway(str(base)))


@pytest.mark.parametrize("fixture", [COW_V6, COW_V8, MOR_V6], ids=["cow-v6", "cow-v8", "mor-v6"])
def test_add_columns_to_a_hudi_table(shared_fixture, fixture):
    pytest.importorskip("hudi")
    base = shared_fixture(fixture)
    state = _state(base)
    before = rows(hudi_rs_read(str(base)), ["id", "name"])
    # The schema to extend is the latest commit's (as readers resolve it), kept verbatim.
    old_schema = json.loads(table_schema_json(state))
    r = add_columns(state, [pa.field("tip", pa.float64()), pa.field("note", pa.string())])
    assert r.extra["added_columns"] == ("tip", "note")
    state = _state(base)
    last = state.timeline.commits()[-1]
    assert last.action == ("deltacommit" if state.config.is_mor else COMMIT)
    assert last.requested_time == r.instant_time
    meta = state.timeline.commit_metadata(last)
    assert meta.operation_type == "ALTER_SCHEMA"
    assert meta.write_stats() == []
    # Hudi's order: data columns, the new ones, the partition columns (dataSchema ++
    # colsToAdd ++ partitionSchema in AlterHoodieTableAddColumnsCommand).
    old_names = [f["name"] for f in old_schema["fields"]]
    partitions = {p.lower() for p in state.config.partition_field_names}
    trailing = [n for n in old_names if n.lower() in partitions]
    data = [n for n in old_names if n.lower() not in partitions]
    assert state.data_schema.names == [*data, "tip", "note", *trailing]
    # hoodie.properties: the create schema follows, with a checksum Hudi accepts.
    props = cfg.parse_properties(state.gw.read_bytes(".hoodie/hoodie.properties").decode())
    create = json.loads(props["hoodie.table.create.schema"])
    kept = [f for f in create["fields"] if f["name"] not in ("tip", "note")]
    assert kept == old_schema["fields"]  # every recorded field as it was, in its order
    assert create == json.loads(meta.schema or "")
    assert [f["name"] for f in create["fields"]] == state.data_schema.names
    assert props["hoodie.table.checksum"] == str(
        cfg.table_checksum(props["hoodie.database.name"], props["hoodie.table.name"])
    )
    assert state.options().get(cfg.OPTIONAL_COLUMNS) == ("tip", "note")
    # Every reader: the old rows, null in the new columns.
    theirs = hudi_rs_read(str(base))
    assert rows(theirs, ["id", "name"]) == before
    assert theirs.column("tip").null_count == theirs.num_rows
    ours = read_plan_arrow(
        state.gw,
        plan_snapshot(state.view),
        state.storage_schema,
        merge_spec=state.merge_spec(state.options()),
    )
    assert rows(ours, ["id", "name", "tip", "note"]) == [(*b, None, None) for b in before]


def test_required_columns(shared_fixture):
    state = _state(shared_fixture(COW_V6))

    def required(options: dict[str, str] | None = None) -> list[str] | None:
        wc = resolve_write_config(state, options or {})
        return required_columns(
            state,
            set_null_for_missing=wc.set_null_for_missing_columns,
            optional_columns=wc.optional_columns,
        )

    assert required() is None
    add_columns(state, [pa.field("tip", pa.float64())])
    state = _state(state.gw.abs_path(""))
    needed = required()
    assert needed is not None and "tip" not in needed and "name" in needed
    # The record key and partition fields always locate the record.
    assert required({"hoodie.write.set.null.for.missing.columns": "true"}) == ["id", "byteField"]


def test_existing_column_leaves_the_timeline_alone(shared_fixture):
    state = _state(shared_fixture(COW_V6))
    before = [i.requested_time for i in state.timeline.instants]
    with pytest.raises(SchemaError, match="'NAME' already exists"):
        add_columns(state, [pa.field("NAME", pa.string())])
    assert [i.requested_time for i in _state(state.gw.abs_path("")).timeline.instants] == before


def test_a_write_that_read_the_old_schema_conflicts(shared_fixture):
    state = _state(shared_fixture(COW_V8))
    old_schema = state.timeline.commit_metadata(state.timeline.commits()[-1]).schema
    with WriteTransaction(state.gw, state.config, COMMIT) as txn:
        add_columns(state, [pa.field("tip", pa.float64())])  # commits meanwhile
        stale = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": old_schema or ""})
        with pytest.raises(ConflictError, match="conflicts"):
            txn.commit(stale)
    state = _state(state.gw.abs_path(""))
    assert "tip" in state.data_schema.names
    assert not state.timeline.pending()


def test_retype_promotes_only_what_every_reader_widens():
    schema = json.dumps(
        {
            "type": "record",
            "name": "t_record",
            "fields": [
                {"name": "id", "type": ["null", "int"], "default": None},
                {"name": "F", "type": "float"},
                {"name": "l", "type": ["null", "long"], "default": None},
            ],
        }
    )
    text, name, old = retype_avro_schema(schema, "id", "long")
    assert (name, old) == ("id", "int")
    assert json.loads(text)["fields"][0] == {
        "name": "id",
        "type": ["null", "long"],
        "default": None,
    }
    text, name, old = retype_avro_schema(schema, "f", "double")
    assert (name, old, json.loads(text)["fields"][1]["type"]) == ("F", "float", "double")
    with pytest.raises(SchemaError, match="from long to double"):
        retype_avro_schema(schema, "l", "double")
    with pytest.raises(SchemaError, match="'nope' is not a column"):
        retype_avro_schema(schema, "nope", "long")
