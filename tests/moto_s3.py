"""A local S3-compatible server for the S3 tests: moto's server mode on 127.0.0.1.

The session-scoped fixture :func:`s3_server` starts ``moto.server.ThreadedMotoServer`` on a
free loopback port, creates one bucket and yields an :class:`S3Server` describing it. It does
NOT touch ``os.environ``: tests hand the endpoint to hudilite through table/session options
(:attr:`S3Server.storage_options`), which is also what proves those options travel to Spark
executors. Tests that want the AWS environment variables instead use the function-scoped
:func:`s3_env`, which sets them with ``monkeypatch`` and restores them afterwards; subprocesses
and hudi-rs get :attr:`S3Server.env` / :attr:`S3Server.hudi_rs_options`.

Register the fixtures with ``from tests.moto_s3 import s3_server, s3_env, s3_uri`` in a
``conftest.py`` (tests/s3/conftest.py does).
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

BUCKET = "hudilite-test"
REGION = "us-east-1"
ACCESS_KEY = "hudilite-test-key"
SECRET_KEY = "hudilite-test-secret"


@dataclass(frozen=True)
class S3Server:
    """Where the test S3 server listens and how to reach it."""

    endpoint_url: str
    bucket: str = BUCKET
    region: str = REGION
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY

    @property
    def storage_options(self) -> dict[str, str]:
        """hudilite table/session options (Hadoop S3A key names) for this endpoint."""
        return {
            "fs.s3a.endpoint": self.endpoint_url,
            "fs.s3a.endpoint.region": self.region,
            "fs.s3a.access.key": self.access_key,
            "fs.s3a.secret.key": self.secret_key,
        }

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS environment variables for this endpoint (subprocesses, hudi-rs)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            # object_store (hudi-rs) refuses plain http unless told otherwise.
            "AWS_ALLOW_HTTP": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    @property
    def hudi_rs_options(self) -> dict[str, str]:
        """Storage options for ``HudiTableBuilder.with_storage_options`` (object_store keys)."""
        return {
            "aws_endpoint": self.endpoint_url,
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "aws_region": self.region,
            "aws_allow_http": "true",
        }

    def uri(self, *parts: str) -> str:
        """``s3://<bucket>/<parts...>``."""
        key = "/".join(p.strip("/") for p in parts if p.strip("/"))
        return f"s3://{self.bucket}/{key}" if key else f"s3://{self.bucket}"

    def client(self) -> Any:
        """A boto3 S3 client for this endpoint (to inspect or damage objects directly)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
        )

    def keys(self, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` in the bucket, sorted."""
        paginator = self.client().get_paginator("list_objects_v2")
        out: list[str] = []
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix.strip("/")):
            out.extend(obj["Key"] for obj in page.get("Contents", []))
        return sorted(out)

    def filesystem(self) -> Any:
        """A ``pyarrow.fs.S3FileSystem`` for this endpoint."""
        import pyarrow.fs as pafs

        scheme, _, host = self.endpoint_url.partition("://")
        return pafs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            region=self.region,
            endpoint_override=host,
            scheme=scheme,
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 with one empty bucket, stopped at the end of the session."""
    pytest.importorskip("moto.server", reason="moto[server] is a dev dependency")
    from moto.server import ThreadedMotoServer

    _serialize_object_writes()

    # One log line per request would drown a failing test's output.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        info = S3Server(endpoint_url=f"http://127.0.0.1:{port}")
        info.client().create_bucket(Bucket=info.bucket)
        yield info
    finally:
        server.stop()


_WRITES = threading.Lock()


def _serialize_object_writes() -> None:
    """Make moto's conditional writes atomic, as S3's are.

    moto 5 checks ``If-None-Match: *`` / ``If-Match`` and then stores the object in two steps,
    and its threaded server handles requests concurrently: two racing ``PutObject``s of one
    key could both pass the check (seen under load: two writers reserved one instant time on
    the test server). Real S3 decides a conditional write atomically, so the test server
    handles object PUTs and DELETEs one at a time (each is quick; reads stay concurrent)."""
    from moto.s3.responses import S3Response

    for name in ("put_object", "delete_object"):
        method = getattr(S3Response, name)
        if getattr(method, "_hudilite_serialized", False):
            continue

        def serialized(self: Any, *args: Any, _method: Any = method, **kwargs: Any) -> Any:
            with _WRITES:
                return _method(self, *args, **kwargs)

        serialized._hudilite_serialized = True  # type: ignore[attr-defined]
        setattr(S3Response, name, serialized)


@pytest.fixture
def s3_uri(s3_server: S3Server, request: pytest.FixtureRequest) -> str:
    """A fresh ``s3://bucket/<test>-<uuid>`` prefix for one test (nothing is there yet)."""
    name = "".join(c if c.isalnum() else "_" for c in request.node.name)[:60]
    return s3_server.uri(f"{name}_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """Set the AWS_* environment variables for the test server; restored after the test."""
    for key, value in s3_server.env.items():
        monkeypatch.setenv(key, value)
    return s3_server


def hudi_rs_read_s3(server: S3Server, uri: str, *, use_env: bool = False) -> Any:
    """Read the table at ``uri`` with hudi-rs from the test server (a ``pyarrow.Table``).

    hudi-rs gets the endpoint as storage options, or (``use_env``) from the AWS_*
    environment variables, which the caller must have set (see :func:`s3_env`).
    """
    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    builder = HudiTableBuilder.from_base_uri(uri)
    if not use_env:
        builder = builder.with_storage_options(server.hudi_rs_options)
    batches = builder.build().read(HudiReadOptions())
    return pa.Table.from_batches(batches) if batches else pa.table({})
