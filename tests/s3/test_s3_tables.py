"""Tables on S3 (a local moto server): writes, reads through executors, hudi-rs agreement."""

from __future__ import annotations

import pickle

import pytest

import hudilite
from hudilite.storage.fs import FileSystemGateway
from tests.helpers import DictOracle, rows, spark_rows
from tests.moto_s3 import S3Server, hudi_rs_read_s3
from tests.tables import ID_TS_V_P

pytestmark = pytest.mark.spark

COLS = ID_TS_V_P.columns


batch = ID_TS_V_P.batch


def test_gateway_pickles_its_s3_settings(s3_server: S3Server, s3_uri: str) -> None:
    gw = FileSystemGateway(s3_uri, storage_options=s3_server.storage_options)
    gw.write_bytes("x/a.txt", b"one")
    copy = pickle.loads(pickle.dumps(gw))
    assert copy.storage_options == s3_server.storage_options
    assert copy.read_bytes("x/a.txt") == b"one"
    assert not copy.is_jvm_readable and copy.is_object_store
    assert s3_server.keys(s3_uri.split("/", 3)[3]) == [s3_uri.split("/", 3)[3] + "/x/a.txt"]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_write_upsert_delete_read_on_s3(spark, s3_server: S3Server, s3_uri: str, table_type):
    t = ID_TS_V_P.create(
        spark,
        s3_uri,
        table_type=table_type,
        # Connection settings work as storage options and among the table options alike.
        storage_options=s3_server.storage_options if table_type == "cow" else None,
        options={
            "hoodie.compact.inline": "false",
            **(s3_server.storage_options if table_type == "mor" else {}),
        },
    )
    oracle = DictOracle(["id"], "ts")
    b1 = batch(("a", 1, "a1", "x"), ("b", 1, "b1", "x"), ("c", 1, "c1", "y"))
    r1 = t.write(b1, "upsert")
    oracle.upsert(b1.to_pylist())
    after1 = oracle.rows(COLS)
    assert (r1.num_inserts, r1.num_updates) == (3, 0)
    # Upsert: the index reads stored keys from S3 in executors; b wins, c's older ts loses.
    b2 = batch(("b", 2, "b2", "x"), ("c", 0, "c0", "y"), ("d", 1, "d1", "y"))
    r2 = t.write(b2, "upsert")
    oracle.upsert(b2.to_pylist())
    assert (r2.num_inserts, r2.num_updates) == (1, 1)
    t.write(batch(("a", 9, "a1", "x")), "delete")
    oracle.delete([("a",)])

    expected = oracle.rows(COLS)
    assert expected == [("b", 2, "b2", "x"), ("c", 1, "c1", "y"), ("d", 1, "d1", "y")]
    assert spark_rows(t.read(), COLS) == expected
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs_read_s3(s3_server, s3_uri), COLS) == expected
    # Time travel and incremental reads take the same executor path.
    assert spark_rows(t.read(as_of=r1.instant_time), COLS) == after1
    changed = t.read(query_type="incremental", start=r1.instant_time, end=r2.instant_time)
    assert spark_rows(changed, COLS) == [("b", 2, "b2", "x"), ("d", 1, "d1", "y")]
    # Everything is in the bucket, nothing on the local disk.
    keys = s3_server.keys(s3_uri.split("/", 3)[3])
    assert any(k.endswith(".hoodie/hoodie.properties") for k in keys)
    assert any(k.endswith(".parquet") for k in keys)
    if table_type == "mor":
        assert any(".log." in k for k in keys)
    # ... and are never stored with the table (secrets stay out of the bucket).
    for key in keys:
        if key.endswith(".properties"):
            text = s3_server.client().get_object(Bucket=s3_server.bucket, Key=key)["Body"].read()
            assert b"fs.s3a" not in text and s3_server.secret_key.encode() not in text


def test_load_through_environment_variables(spark, s3_env: S3Server, s3_uri: str) -> None:
    t = ID_TS_V_P.create(spark, s3_uri, ordering_field=None)
    t.write(batch(("a", 1, "a1", "x")), "insert")
    again = hudilite.Table.load(spark, s3_uri)
    assert again.gw.storage_options["fs.s3a.endpoint"] == s3_env.endpoint_url
    assert spark_rows(again.read(), COLS) == [("a", 1, "a1", "x")]
    assert rows(hudi_rs_read_s3(s3_env, s3_uri, use_env=True), COLS) == [("a", 1, "a1", "x")]


def test_compaction_and_clean_on_s3(spark, s3_server: S3Server, s3_uri: str) -> None:
    t = ID_TS_V_P.create(
        spark,
        s3_uri,
        table_type="mor",
        storage_options=s3_server.storage_options,
        options={
            "hoodie.compact.inline": "false",
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
        },
    )
    prefix = s3_uri.split("/", 3)[3]
    t.write(batch(("a", 1, "a1", "x"), ("b", 1, "b1", "x")), "upsert")
    t.write(batch(("a", 2, "a2", "x")), "upsert")
    first_base = [k for k in s3_server.keys(prefix) if k.endswith(".parquet")]
    assert len(first_base) == 1
    assert any(".log." in k for k in s3_server.keys(prefix))

    done = t.compact()
    assert done and done[0].num_log_files_compacted == 1 and done[0].num_updates == 1
    cleaned = t.clean()
    assert cleaned is not None and cleaned.num_files_deleted == 2  # old base file and its log
    keys = s3_server.keys(prefix)
    data_files = [k for k in keys if k.endswith(".parquet") or ".log." in k]
    assert len(data_files) == 1 and data_files[0] not in first_base

    expected = [("a", 2, "a2", "x"), ("b", 1, "b1", "x")]
    assert spark_rows(t.read(), COLS) == expected
    assert spark_rows(t.read(query_type="read_optimized"), COLS) == expected
    assert rows(hudi_rs_read_s3(s3_server, s3_uri), COLS) == expected
