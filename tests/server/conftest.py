"""Fixtures for the Thrift server tests: one in-process server on the shared SparkSession.

The server runs in the test process (``hudilite.thriftserver.serve(spark=...)``) so the
tests pay for no second JVM; clients (PyHive, SQLAlchemy, raw TCLIService calls) talk to
it over real sockets on 127.0.0.1. It runs with ``--auth password`` and three users, one
per role (:data:`tests.server.clients.USERS`). ``test_cli_server.py`` starts the real
``hudilite thriftserver`` command once, for beeline and SIGTERM.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hudilite.thriftserver import Server, UserStore, serve
from tests.server.clients import SESSION_OPTIONS, USERS


@pytest.fixture(scope="session")
def users_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A users file with alice (admin), wendy (writer) and rita (reader)."""
    path = tmp_path_factory.mktemp("thrift-users") / "users.json"
    store = UserStore(path)
    for name, (password, role) in USERS.items():
        store.add(name, password, role)
    return path


@pytest.fixture(scope="session")
def server(
    spark: Any, users_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The server, password auth, on a free port, over a fresh warehouse."""
    with password_server(spark, users_file, tmp_path_factory.mktemp("thrift-warehouse")) as srv:
        yield srv


def password_server(
    spark: Any,
    users_file: Path,
    warehouse: Path,
    *,
    trusted_admin: bool = True,
    settings: dict[str, str] | None = None,
    **options: Any,
) -> Server:
    """A server over ``warehouse`` with password auth for :data:`USERS`, on a free port, with
    the tests' session options and ``settings``; ``options`` go to ``serve`` (transport,
    TLS, ...). Use it as a context manager: it stops at the end of the block.

    ``trusted_admin``: alice skips the statement sandbox (the tests' slow statements sleep
    with ``java_method``); test_sandbox.py checks an untrusted admin on a server of its
    own."""
    conf = {**SESSION_OPTIONS, **(settings or {})}
    if trusted_admin:
        conf["hudilite.thriftserver.admin.trusted"] = "true"
    return serve(
        warehouse,
        port=0,
        auth="password",
        users_file=users_file,
        conf=conf,
        spark=spark,
        **options,
    )


def make_cert(folder: Path, name: str = "server") -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its unencrypted key."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("making a test certificate needs the cryptography package or openssl")
        subprocess.run(
            [
                *(
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:P-256",
                ),
                *("-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj"),
                *("/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
            ],
            check=True,
            capture_output=True,
        )
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(certificate, key) for the TLS servers (binary and HTTPS): self-signed, localhost."""
    return make_cert(tmp_path_factory.mktemp("thrift-tls"))
