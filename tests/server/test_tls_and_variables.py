"""TLS (``serve(ssl_cert=, ssl_key=)``, ``--ssl-cert``/``--ssl-key``) and Hive variables
(``${x}``, ``set:hivevar:`` in OpenSession, ``SET hivevar:x=1``) against one in-process
server: password auth over TLS, a self-signed certificate made in a temporary folder, PyHive
over thrift_sasl over Thrift's ``TSSLSocket`` (checking the certificate and host name)."""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thrift_sasl
from click.testing import CliRunner
from pyhive import exc as hive_exc
from pyhive import hive
from pyhive.sasl_compat import PureSASLClient
from thrift.transport.TSSLSocket import TSSLSocket
from thrift.transport.TTransport import TTransportException

from hudilite.cli.server_commands import thriftserver
from hudilite.thriftserver import Server, serve, tls_context
from tests.server.clients import USERS, connect
from tests.server.conftest import make_cert, password_server

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tls_server(
    spark: Any,
    users_file: Path,
    tls_files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """The server over TLS, password auth, on a free port."""
    cert, key = tls_files
    warehouse = tmp_path_factory.mktemp("thrift-tls-warehouse")
    with password_server(spark, users_file, warehouse, ssl_cert=cert, ssl_key=key) as srv:
        yield srv


def tls_connect(
    server: Server, cafile: Path, user: str = "alice", **kwargs: Any
) -> hive.Connection:
    """PyHive over SASL PLAIN over TLS, trusting ``cafile`` (host name checked)."""
    sock = TSSLSocket("127.0.0.1", server.port, ca_certs=str(cafile))
    transport = thrift_sasl.TSaslClientTransport(
        lambda: PureSASLClient("127.0.0.1", username=user, password=USERS[user][0]),
        "PLAIN",
        sock,
    )
    return hive.connect(thrift_transport=transport, username=user, **kwargs)


def _status(err: hive_exc.OperationalError) -> Any:
    return err.args[0].status


def test_tls_query_and_plain_clients_refused(
    tls_server: Server, tls_files: tuple[Path, Path]
) -> None:
    cert, _ = tls_files
    assert repr(tls_server).endswith("tls=True)")
    with tls_connect(tls_server, cert) as conn:
        tls = conn._transport._trans.handle  # thrift_sasl -> TSSLSocket -> ssl.SSLSocket
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        cur = conn.cursor()
        cur.execute("SELECT id, id * 10 AS tens FROM range(3)")
        assert cur.fetchall() == [(0, 0), (1, 10), (2, 20)]
    # A client without TLS (PyHive's own SASL transport) gets the end of the stream while
    # it waits for the SASL answer: the server answered its bytes with a TLS alert.
    with pytest.raises(TTransportException):
        connect(tls_server)
    # ... and a client that does not trust the certificate refuses the server.
    other_cert, _ = make_cert(cert.parent, "other")
    untrusting = TSSLSocket("127.0.0.1", tls_server.port, ca_certs=str(other_cert))
    with pytest.raises(TTransportException) as err:
        untrusting.open()
    assert isinstance(err.value.inner, ssl.SSLCertVerificationError)
    # The server serves on after both.
    with tls_connect(tls_server, cert) as conn:
        cur = conn.cursor()
        cur.execute("SELECT 42 AS answer")
        assert cur.fetchall() == [(42,)]


def test_tls_files_are_checked_before_anything_starts(
    tls_files: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = tls_files
    missing = tmp_path / "missing.key"
    runner = CliRunner()
    args = ["--warehouse", str(tmp_path / "wh"), "--port", "0"]
    result = runner.invoke(
        thriftserver, [*args, "--ssl-cert", str(cert), "--ssl-key", str(missing)]
    )
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: TLS key file {missing} does not exist"
    result = runner.invoke(thriftserver, [*args, "--ssl-cert", str(cert)])
    assert result.exit_code == 2
    assert "TLS needs both --ssl-cert and --ssl-key: --ssl-key is missing" in result.output
    assert not (tmp_path / "wh").exists()
    # serve() and tls_context name the file at fault.
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    _, other_key = make_cert(tmp_path, "other")
    with pytest.raises(
        ValueError, match=f"^TLS certificate file {re.escape(str(junk))} does not load"
    ):
        tls_context(junk, key)
    bad_key = f"^TLS key file {re.escape(str(junk))} does not load or does not match the "
    with pytest.raises(ValueError, match=bad_key + "certificate .*: no usable PEM data$"):
        tls_context(cert, junk)
    mismatch = (
        f"^TLS key file {re.escape(str(other_key))} does not load or does not match the "
        f"certificate {re.escape(str(cert))} "
    )
    with pytest.raises(ValueError, match=mismatch + r"\(.*\): key values mismatch$"):
        tls_context(cert, other_key)
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        pass
    else:
        encrypted = tmp_path / "encrypted.key"
        private = serialization.load_pem_private_key(key.read_bytes(), password=None)
        encrypted.write_bytes(
            private.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(b"pw"),
            )
        )
        with pytest.raises(
            ValueError, match=f"^TLS key file {re.escape(str(encrypted))} is encrypted"
        ):
            tls_context(cert, encrypted)
    with pytest.raises(ValueError, match="given without ssl_key"):
        serve(tmp_path / "wh", port=0, ssl_cert=cert)
    assert tls_context(None, None) is None


def test_hive_variables(tls_server: Server, tls_files: tuple[Path, Path]) -> None:
    cert, _ = tls_files
    query = "SELECT id FROM range(5) WHERE id >= ${lo}"
    with tls_connect(tls_server, cert, configuration={"set:hivevar:lo": "2"}) as conn:
        cur = conn.cursor()
        cur.execute(query)
        assert cur.fetchall() == [(2,), (3,), (4,)]
        cur.execute("SET hivevar:lo=3")
        assert cur.fetchall() == [("hivevar:lo", "3")]
        cur.execute(query.replace("${lo}", "${hivevar:lo}"))
        assert cur.fetchall() == [(3,), (4,)]
        cur.execute("SET hivevar:lo")
        assert cur.fetchall() == [("hivevar:lo", "3")]
        cur.execute("SET hivevar:nope")
        assert cur.fetchall() == [("hivevar:nope", "<undefined>")]
        # In a script, SET hivevar: applies to the statements after it.
        cur.execute(f"SET hivevar:lo=4; {query}")
        assert cur.fetchall() == [(4,)]
        # Unknown references stay as written (Spark's own substitution, which would empty
        # them and expand ${env:...}, stays off, even after SET and RESET); settings are
        # ${hiveconf:key}.
        cur.execute("SET spark.sql.variable.substitute=true")
        cur.execute(
            "SELECT '${nope}' AS a, '${env:HOME}' AS b, '${spark:spark.sql.session.timeZone}' AS c"
        )
        assert cur.fetchall() == [("${nope}", "${env:HOME}", "UTC")]
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("SELECT id FROM range(5) WHERE id >= ${nope}")
        status = _status(err.value)
        assert status.sqlState == "42000"
        assert "PARSE_SYNTAX_ERROR" in status.errorMessage and "'$'" in status.errorMessage
    # Another session does not see them.
    with tls_connect(tls_server, cert) as conn:
        cur = conn.cursor()
        cur.execute("SELECT '${lo}' AS lo")
        assert cur.fetchall() == [("${lo}",)]


def test_variables_cannot_smuggle_statements_past_roles(
    tls_server: Server, tls_files: tuple[Path, Path]
) -> None:
    cert, _ = tls_files
    config = {"set:hivevar:stmt": "SELECT 1"}
    with tls_connect(tls_server, cert, user="rita", configuration=config) as conn:
        cur = conn.cursor()
        # The role check sees each statement as it will run, SET hivevar: before it included.
        with pytest.raises(hive_exc.OperationalError) as err:
            cur.execute("SET hivevar:stmt=DROP TABLE IF EXISTS nothing_here; ${stmt}")
        status = _status(err.value)
        assert status.sqlState == "42501"
        assert status.errorMessage.startswith("permission denied: role 'reader' may not run DDL")
        # Refused whole: the variable did not change.
        cur.execute("SET hivevar:stmt")
        assert cur.fetchall() == [("hivevar:stmt", "SELECT 1")]
