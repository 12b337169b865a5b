"""The gateway's S3 settings: where they come from, how they travel, which reads go native."""

from __future__ import annotations

import pickle
from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest

from hudilite.errors import ConfigError
from hudilite.storage import fs
from hudilite.storage.fs import FileSystemGateway
from tests.moto_s3 import S3Server

AWS_VARS = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in AWS_VARS:
        monkeypatch.delenv(var, raising=False)
    saved = fs.process_storage_options()
    fs.set_storage_options({}, replace=True)
    yield
    fs.set_storage_options(saved, replace=True)


def test_explicit_options_beat_process_options_beat_environment(monkeypatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://env:1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    fs.set_storage_options({"spark.hadoop.fs.s3a.endpoint": "http://process:2", "other": "x"})
    gw = FileSystemGateway("s3a://b/t", storage_options={"fs.s3a.access.key": "mine"})
    assert gw.storage_options == {
        "fs.s3a.endpoint": "http://process:2",
        "fs.s3a.access.key": "mine",
        "fs.s3a.secret.key": "env-secret",
        "fs.s3a.endpoint.region": "eu-west-1",
    }
    assert gw.base_path == "b/t" and gw.uri("x") == "s3a://b/t/x"


def test_settings_are_fixed_at_construction_and_travel_when_pickled(monkeypatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    gw = FileSystemGateway("s3://b/t")
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    copy = pickle.loads(pickle.dumps(gw))
    assert copy.storage_options == {"fs.s3a.endpoint": "http://127.0.0.1:1"}
    assert copy == gw


def test_local_and_hdfs_are_read_by_the_jvm_s3_is_not(tmp_path) -> None:
    assert FileSystemGateway(str(tmp_path)).is_jvm_readable
    assert FileSystemGateway("file://" + str(tmp_path)).is_jvm_readable
    assert FileSystemGateway("hdfs://nn:8020/t").is_jvm_readable
    assert not FileSystemGateway("s3://b/t").is_jvm_readable
    assert not FileSystemGateway("gs://b/t").is_jvm_readable
    # A local path inside a non-local filesystem handed in explicitly is not the JVM's.
    assert FileSystemGateway(str(tmp_path), pafs.LocalFileSystem()).is_jvm_readable
    sub = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    assert not FileSystemGateway("t", sub).is_jvm_readable
    # Local gateways carry no S3 settings even when some are set.
    fs.set_storage_options({"fs.s3a.endpoint": "http://x:1"})
    assert FileSystemGateway(str(tmp_path)).storage_options == {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fs.s3a.endpoint": "ftp://host:1"}, "invalid value 'ftp://host:1' for option"),
        ({"fs.s3a.endpoint": "http://"}, "invalid value 'http://' for option"),
        ({"fs.s3a.access.key": "k"}, "S3 credentials need both"),
    ],
)
def test_bad_settings_are_clear_errors(options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        _ = FileSystemGateway("s3://b/t", storage_options=options).filesystem


def test_missing_bucket_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="no bucket in 's3:///t'"):
        FileSystemGateway("s3:///t")


def test_endpoint_without_scheme_uses_ssl_setting(s3_server: S3Server, s3_uri: str) -> None:
    host = s3_server.endpoint_url.removeprefix("http://")
    opts = {**s3_server.storage_options, "fs.s3a.endpoint": host}
    plain = FileSystemGateway(
        s3_uri, storage_options={**opts, "fs.s3a.connection.ssl.enabled": "false"}
    )
    plain.write_bytes("a", b"1")
    assert plain.read_bytes("a") == b"1"
    # With SSL (the default) the same plain-http server cannot be reached.
    with pytest.raises(OSError):
        FileSystemGateway(s3_uri, storage_options=opts).read_bytes("a")
