"""The moto test server itself: reachable through pyarrow and boto3, env untouched."""

from __future__ import annotations

import os

import pyarrow.fs as pafs

from tests.moto_s3 import S3Server


def test_server_round_trip_through_pyarrow(s3_server: S3Server, s3_uri: str) -> None:
    fs = s3_server.filesystem()
    key = s3_uri.removeprefix("s3://") + "/hello.txt"
    with fs.open_output_stream(key) as f:
        f.write(b"hi")
    assert s3_server.keys(key.split("/", 1)[1]) == [key.split("/", 1)[1]]
    with fs.open_input_stream(key) as f:
        assert f.read() == b"hi"
    assert fs.get_file_info(key + ".missing").type == pafs.FileType.NotFound


def test_session_fixture_leaves_environment_alone(s3_server: S3Server) -> None:
    assert os.environ.get("AWS_ENDPOINT_URL") != s3_server.endpoint_url


def test_s3_env_sets_aws_variables(s3_env: S3Server) -> None:
    assert os.environ["AWS_ENDPOINT_URL"] == s3_env.endpoint_url
    assert os.environ["AWS_ACCESS_KEY_ID"] == s3_env.access_key
