"""Table evolution end to end: partition deletes, truncate, added columns, table properties.

Every state is checked against three readers: our Spark read, ``to_arrow`` and hudi-rs.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

import hudilite
from hudilite.config import parse_properties, table_checksum
from hudilite.errors import ConfigError, ConflictError, PartitionNotFoundError, SchemaError
from hudilite.timeline.metadata import CommitMetadata, read_avro_record
from tests.helpers import hudi_rs_read, rows, spark_rows
from tests.tables import TRIPS

DATA = TRIPS.columns
KINDS = [("cow", 6), ("cow", 8), ("mor", 6), ("mor", 8)]
IDS = ["cow-v6", "cow-v8", "mor-v6", "mor-v8"]
DIAGONAL = [("cow", 6), ("mor", 8)]


batch = TRIPS.batch


def timeline_dir(t: hudilite.Table) -> str:
    return os.path.join(t.path, t.config.timeline_dir)


def timeline_files(t: hudilite.Table) -> list[str]:
    return sorted(f for f in os.listdir(timeline_dir(t)) if not f.startswith("."))


def data_files(t: hudilite.Table) -> list[str]:
    out = []
    for root, dirs, files in os.walk(t.path):
        dirs[:] = [d for d in dirs if not d.startswith(".hoodie")]
        out += [os.path.relpath(os.path.join(root, f), t.path) for f in files]
    return sorted(out)


def props_file(t: hudilite.Table) -> dict[str, str]:
    with open(os.path.join(t.path, ".hoodie", "hoodie.properties"), encoding="latin-1") as fh:
        return parse_properties(fh.read())


def all_reads(t: hudilite.Table, columns: list[str] = DATA) -> list[tuple]:
    """The snapshot as our Spark read, to_arrow and hudi-rs see it (asserted equal)."""
    ours = spark_rows(t.read(), columns)
    assert rows(t.to_arrow(), columns) == ours
    assert rows(hudi_rs_read(t.path), columns) == ours
    return ours


def last_metadata(t: hudilite.Table) -> CommitMetadata:
    state = t.state()
    return state.timeline.commit_metadata(state.timeline.commits()[-1])


@pytest.fixture(params=KINDS, ids=IDS)
def table(request, spark, tmp_path) -> hudilite.Table:
    kind, version = request.param
    return TRIPS.create(spark, str(tmp_path / "trips"), table_type=kind, table_version=version)


def _three_partitions(t: hudilite.Table) -> None:
    t.write(
        batch(("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 1, 3.0, "la"), ("d", 1, 4.0, "ny"))
    )
    # Merge-on-read: the sf file group gets a log file (its latest slice is base + log).
    t.write(batch(("a", 2, 5.0, "sf"), ("c", 2, 6.0, "la")))


# ------------------------------------------------------------------------ delete_partitions


def test_delete_partitions_replaces_every_file_group(table):
    t = table
    _three_partitions(t)
    before = t.timeline()[-1].requested_time
    sf_groups = sorted(s.file_id for s in t.state().view.latest_slices(partitions=["city=sf"]))
    files_before = data_files(t)
    r = t.delete_partitions(["city=sf"])
    assert (r.operation, r.rows_deleted, r.num_deletes) == ("delete_partition", 2, 2)
    assert r.replaced_file_groups == len(sf_groups) == 1
    assert (r.files_written, r.partitions) == (0, ("city=sf",))
    assert data_files(t) == files_before  # nothing written, nothing deleted yet
    # The timeline: requested -> inflight -> completed replacecommit.
    instant = t.timeline()[-1]
    assert (instant.action, instant.state.name) == ("replacecommit", "COMPLETED")
    names = [f for f in timeline_files(t) if f.startswith(instant.requested_time)]
    assert any(n.endswith(".replacecommit.requested") for n in names)
    assert any(n.endswith(".replacecommit.inflight") for n in names)
    requested = os.path.join(timeline_dir(t), f"{instant.requested_time}.replacecommit.requested")
    with open(requested, "rb") as fh:
        assert read_avro_record(fh.read())["operationType"] == "DELETE_PARTITION"
    meta = last_metadata(t)
    assert meta.operation_type == "DELETE_PARTITION"
    assert meta.partition_to_replace_file_ids == {"city=sf": sf_groups}
    assert meta.write_stats() == []
    assert meta.extra_metadata["hudilite.rows.deleted"] == "2"
    assert json.loads(meta.schema)["fields"][0]["name"] == "uuid"
    if t.config.table_version == 6:
        with open(os.path.join(timeline_dir(t), f"{instant.requested_time}.replacecommit")) as fh:
            doc = json.load(fh)  # v6: JSON commit metadata
        assert doc["partitionToReplaceFileIds"] == {"city=sf": sf_groups}

    expected = [("c", 2, 6.0, "la"), ("d", 1, 4.0, "ny")]
    assert all_reads(t) == expected
    # Time travel to before the delete still sees the partition (ours and hudi-rs).
    old = [("a", 2, 5.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 2, 6.0, "la"), ("d", 1, 4.0, "ny")]
    assert spark_rows(t.read(as_of=before), DATA) == old
    assert rows(hudi_rs_read(t.path, as_of=before), DATA) == old
    # Writing into the partition again starts from nothing: a is a new record.
    w = t.write(batch(("a", 1, 7.0, "sf"), ("e", 1, 8.0, "sf")))
    assert (w.num_inserts, w.num_updates) == (2, 0)
    assert all_reads(t) == sorted([("a", 1, 7.0, "sf"), ("e", 1, 8.0, "sf"), *expected], key=repr)


def test_delete_several_partitions_and_plain_paths(spark, tmp_path):
    t = TRIPS.create(
        spark,
        str(tmp_path / "plain"),
        table_type="mor",
        table_version=8,
        options={"hoodie.datasource.write.hive_style_partitioning": "false"},
    )
    _three_partitions(t)
    with pytest.raises(PartitionNotFoundError, match=r"'city=sf'.*did you mean 'sf'"):
        t.delete_partitions(["city=sf"])
    r = t.delete_partitions(["sf", "/la/"])
    assert (r.rows_deleted, r.replaced_file_groups, r.partitions) == (3, 2, ("la", "sf"))
    assert all_reads(t) == [("d", 1, 4.0, "ny")]
    # Deleting an already deleted partition is a no-op commit.
    again = t.delete_partitions("sf")
    assert (again.rows_deleted, again.replaced_file_groups) == (0, 0)


# Refused before anything is written: the table type and version do not matter.
@pytest.mark.parametrize("table", [("mor", 8)], ids=["mor-v8"], indirect=True)
def test_delete_unknown_partition_writes_nothing(table):
    t = table
    _three_partitions(t)
    before, files = timeline_files(t), data_files(t)
    with pytest.raises(PartitionNotFoundError, match="'city=tokyo'") as info:
        t.delete_partitions(["city=sf", "city=tokyo"])
    assert "city=la" in str(info.value)  # lists the partitions there are
    assert isinstance(info.value, ConfigError)
    with pytest.raises(ConfigError, match="at least one partition"):
        t.delete_partitions([])
    assert timeline_files(t) == before
    assert data_files(t) == files
    assert len(all_reads(t)) == 4


# The rollback of the failed replacecommit on both types and both timeline layouts.
@pytest.mark.parametrize("table", DIAGONAL, ids=["cow-v6", "mor-v8"], indirect=True)
def test_failed_partition_delete_leaves_previous_state(table):
    t = table
    _three_partitions(t)
    expected = all_reads(t)
    with pytest.raises(hudilite.WriteError, match="before_commit"):
        t.delete_partitions(["city=sf"], options={"hudilite.internal.fail.point": "before_commit"})
    assert all_reads(t) == expected
    actions = [(i.action, i.state.name) for i in t.timeline()]
    assert ("replacecommit", "COMPLETED") not in actions
    assert actions[-1] == ("rollback", "COMPLETED")
    assert t.delete_partitions(["city=sf"]).rows_deleted == 2


def test_partition_with_pending_compaction_is_refused(spark, tmp_path):
    t = TRIPS.create(spark, str(tmp_path / "mor"), table_type="mor")
    _three_partitions(t)
    plan = t.schedule_compaction(force=True)
    assert plan is not None
    before = timeline_files(t)
    with pytest.raises(ConflictError, match=r"city=sf.*pending table service"):
        t.delete_partitions(["city=sf"])
    assert timeline_files(t) == before
    t.compact(schedule=False)
    assert t.delete_partitions(["city=sf"]).rows_deleted == 2
    assert all_reads(t) == [("c", 2, 6.0, "la"), ("d", 1, 4.0, "ny")]


# Truncate is a DELETE_PARTITION of every partition (tested above on every type and
# version); here both partition layouts, one on each type.
@pytest.mark.parametrize(
    ("kind", "partitioned"),
    [("cow", True), ("mor", False)],
    ids=["cow-partitioned", "mor-unpartitioned"],
)
def test_truncate(spark, tmp_path, kind, partitioned):
    t = TRIPS.create(
        spark,
        str(tmp_path / "t"),
        partition_by=["city"] if partitioned else [],
        table_type=kind,
        table_version=8 if kind == "mor" else 6,
    )
    _three_partitions(t)
    before = t.timeline()[-1].requested_time
    r = t.truncate()
    assert r.rows_deleted == 4
    assert r.partitions == (("city=la", "city=ny", "city=sf") if partitioned else ("",))
    meta = last_metadata(t)
    assert meta.operation_type == "DELETE_PARTITION"
    assert (
        sum(len(v) for v in meta.partition_to_replace_file_ids.values()) == r.replaced_file_groups
    )
    assert spark_rows(t.read(), DATA) == []
    assert t.to_arrow().num_rows == 0
    assert hudi_rs_read(t.path).num_rows == 0
    assert len(rows(hudi_rs_read(t.path, as_of=before), DATA)) == 4
    t.write(batch(("z", 1, 1.0, "sf")))
    assert all_reads(t) == [("z", 1, 1.0, "sf")]


# ------------------------------------------------------------------------------ add_columns


def test_add_columns(table):
    t = table
    _three_partitions(t)
    before = timeline_files(t)
    with pytest.raises(SchemaError, match="column 'FARE' already exists"):
        t.add_columns([pa.field("FARE", pa.float64())])
    with pytest.raises(SchemaError, match="column 'tip' must be nullable"):
        t.add_columns([pa.field("tip", pa.float64(), nullable=False)])
    with pytest.raises(SchemaError, match="'_hoodie_record_key' is a Hudi meta column"):
        t.add_columns([pa.field("_hoodie_record_key", pa.string())])
    assert timeline_files(t) == before

    r = t.add_columns(
        StructType([StructField("tip", DoubleType()), StructField("note", StringType())])
    )
    assert (r.operation, r.files_written, r.extra["added_columns"]) == (
        "add_columns",
        0,
        ("tip", "note"),
    )
    instant = t.timeline()[-1]
    assert instant.action == ("deltacommit" if t.config.is_mor else "commit")
    meta = last_metadata(t)
    assert meta.operation_type == "ALTER_SCHEMA"
    assert meta.write_stats() == []
    fields = json.loads(meta.schema)["fields"]
    # Before the partition column, as Hudi's ADD COLUMNS orders them (dataSchema ++
    # colsToAdd ++ partitionSchema) and as a new table does.
    evolved = ["uuid", "ts", "fare", "tip", "note", "city"]
    assert [f["name"] for f in fields] == evolved
    assert fields[4] == {"name": "note", "type": ["null", "string"], "default": None}
    props = props_file(t)
    assert json.loads(props["hoodie.table.create.schema"]) == json.loads(meta.schema)
    assert props["hoodie.table.checksum"] == str(table_checksum("default", "trips"))
    assert t.schema.names == evolved
    cols = [*DATA, "tip", "note"]  # the order the rows below are read and written in

    # Old files read null in the new columns, everywhere (hudi-rs fills them too).
    old = [("a", 2, 5.0, "sf"), ("b", 1, 2.0, "sf"), ("c", 2, 6.0, "la"), ("d", 1, 4.0, "ny")]
    assert all_reads(t, cols) == [(*r, None, None) for r in old]
    # Writes with the new columns, and without them (nulls), merge with the old rows.
    s2 = pa.schema([t.schema.field(c) for c in cols])
    t.write(batch(("b", 3, 9.0, "sf", 1.5, "x"), ("e", 1, 8.0, "la", 2.5, None), schema=s2))
    t.write(batch(("d", 3, 9.5, "ny"), ("f", 1, 1.0, "la")))
    expected = [
        ("a", 2, 5.0, "sf", None, None),
        ("b", 3, 9.0, "sf", 1.5, "x"),
        ("c", 2, 6.0, "la", None, None),
        ("d", 3, 9.5, "ny", None, None),
        ("e", 1, 8.0, "la", 2.5, None),
        ("f", 1, 1.0, "la", None, None),
    ]
    assert all_reads(t, cols) == expected
    # The data columns that were there from the start stay required.
    with pytest.raises(SchemaError, match="column 'fare' is missing"):
        t.write(pa.table({"uuid": ["g"], "ts": [1], "city": ["sf"]}))
    if t.config.is_mor:
        t.compact()
        assert all_reads(t, cols) == expected
    # Adding more columns keeps the earlier additions optional too.
    t.add_columns([pa.field("n", pa.int8())])
    assert t.schema.field("n").type == pa.int32()
    t.write(batch(("a", 4, 1.0, "sf")))
    assert ("a", 4, 1.0, "sf", None, None, None) in all_reads(t, [*cols, "n"])


# ------------------------------------------------------------------------------- properties


@pytest.mark.parametrize("version", [6, 8])
def test_set_unset_properties_and_rename(spark, tmp_path, version):
    t = TRIPS.create(
        spark,
        str(tmp_path / "t"),
        table_version=version,
        options={"hoodie.parquet.small.file.limit": "0"},
    )
    t.write(batch(("a", 1, 1.0, "sf")))
    original = props_file(t)
    # Immutable: the key and its current value are named; aliases resolve first.
    for key, value, current in [
        ("primaryKey", "fare", "uuid"),
        ("hoodie.datasource.write.recordkey.field", "fare", "uuid"),
        ("preCombineField", "fare", "ts"),
        ("hoodie.table.partition.fields", "uuid", "city"),
        ("type", "mor", "COPY_ON_WRITE"),
        ("hoodie.table.version", "8" if version == 6 else "6", str(version)),
        ("hoodie.datasource.write.keygenerator.type", "COMPLEX", "SIMPLE"),
        ("hoodie.index.type", "BUCKET", "SIMPLE"),
        ("hoodie.table.name", "other", "t"),
    ]:
        with pytest.raises(ConfigError, match=rf"{key}.*current value: '{current}'"):
            t.set_properties({key: value})
    with pytest.raises(ConfigError, match=r"hoodie\.parquet\.max\.file\.size.*'lots'"):
        t.set_properties({"hoodie.parquet.max.file.size": "lots"})
    with pytest.raises(ConfigError, match="primaryKey"):
        t.unset_properties(["primaryKey"])
    assert props_file(t) == original
    # Setting a fixed property to its current value changes nothing.
    t.set_properties({"primaryKey": "uuid", "type": "cow"})
    assert props_file(t) == original

    # A table property goes to hoodie.properties, a write option to the write defaults.
    t.set_properties(
        {
            "hoodie.table.comment": "trips",
            "hoodie.parquet.small.file.limit": "104857600",
            "hoodie.clean.automatic": False,
        }
    )
    props = props_file(t)
    assert props["hoodie.table.comment"] == "trips"
    assert props["hoodie.table.checksum"] == original["hoodie.table.checksum"]
    assert "hoodie.parquet.small.file.limit" not in props
    assert not os.path.exists(os.path.join(t.path, ".hoodie", "hoodie.properties.backup"))
    opts = t.properties()
    assert opts["hoodie.parquet.small.file.limit"] == "104857600"
    assert opts["hoodie.clean.automatic"] == "false"
    # The new small-file limit applies: the insert packs into the existing file group.
    t.write(batch(("b", 1, 2.0, "sf")))
    assert len({f.split("_")[0] for f in data_files(t) if f.endswith(".parquet")}) == 1

    t.unset_properties(["hoodie.table.comment", "hoodie.parquet.small.file.limit", "nope"])
    assert "hoodie.table.comment" not in props_file(t)
    assert "hoodie.parquet.small.file.limit" not in t.properties()

    t.rename("trips_renamed")
    props = props_file(t)
    assert props["hoodie.table.name"] == "trips_renamed"
    assert props["hoodie.table.checksum"] == str(table_checksum("default", "trips_renamed"))
    assert t.config.name == "trips_renamed"
    with pytest.raises(ConfigError, match=r"hoodie\.table\.name"):
        t.rename("bad name!")
    # Still a valid table for every reader.
    assert all_reads(t) == [("a", 1, 1.0, "sf"), ("b", 1, 2.0, "sf")]
    t.write(batch(("c", 1, 3.0, "la")))
    assert len(all_reads(t)) == 3
