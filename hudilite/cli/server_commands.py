"""``hudilite thriftserver`` and ``hudilite users``: the HiveServer2-compatible server and
its users file (registered on the ``hudilite`` group by :mod:`hudilite.cli.commands`).

The Thrift runtime and HiveServer2's TCLIService come with the ``server`` extra, so they are
imported only when these commands run.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

import click

from hudilite.errors import HudiliteError

__all__ = ["thriftserver", "users"]

AUTH_CHOICES = ("none", "nosasl", "password")
TRANSPORT_CHOICES = ("binary", "http")
ROLE_CHOICES = ("reader", "writer", "admin")
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
#: The exit status when the Spark JVM died under the server (sysexits' EX_SOFTWARE).
JVM_DIED_EXIT = 70


def _conf_pair(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--conf")
    return key.strip(), value.strip()


@click.command()
@click.option(
    "--warehouse",
    envvar="HUDILITE_WAREHOUSE",
    help="SQL warehouse folder (default: $HUDILITE_WAREHOUSE or ./hudilite-warehouse).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=10000, show_default=True, help="Port (0: any free port).")
@click.option(
    "--conf",
    "confs",
    multiple=True,
    metavar="KEY=VALUE",
    help="spark.* (Spark), hudilite.thriftserver.* (the server) or a session option.",
)
@click.option(
    "--auth",
    type=click.Choice(AUTH_CHOICES),
    default="none",
    show_default=True,
    help="none: SASL PLAIN, any password; nosasl; password: checked against --users.",
)
@click.option("--users", "users_file", metavar="FILE", help="Users file (hudilite users add).")
@click.option(
    "--ssl-cert",
    metavar="FILE",
    help="Serve over TLS with this PEM certificate (chain); needs --ssl-key.",
)
@click.option(
    "--ssl-key",
    metavar="FILE",
    help="The certificate's unencrypted PEM private key (with --ssl-cert).",
)
@click.option(
    "--transport-mode",
    type=click.Choice(TRANSPORT_CHOICES, case_sensitive=False),
    default=None,
    help="binary (default): Thrift over TCP; http: Thrift over HTTP POST, as HiveServer2's "
    "hive.server2.transport.mode (Hive's usual HTTP port is 10001: pass --port).",
)
@click.option(
    "--http-path",
    metavar="PATH",
    default=None,
    help="URL path of the service with --transport-mode http (default: cliservice; "
    "JDBC ;httpPath=).",
)
def thriftserver(
    warehouse: str | None,
    host: str,
    port: int,
    confs: tuple[str, ...],
    auth: str,
    users_file: str | None,
    ssl_cert: str | None,
    ssl_key: str | None,
    transport_mode: str | None,
    http_path: str | None,
) -> None:
    """Serve the warehouse over HiveServer2's Thrift protocol (beeline, JDBC, PyHive,
    SQLAlchemy hive://) until SIGTERM or Ctrl-C.

    \b
    TLS (any --auth mode): --ssl-cert server.crt --ssl-key server.key
      self-signed: openssl req -x509 -newkey rsa:2048 -nodes -days 365 \\
        -keyout server.key -out server.crt -subj /CN=HOST \\
        -addext subjectAltName=DNS:HOST,IP:127.0.0.1
      JDBC trust store: keytool -importcert -noprompt -file server.crt \\
        -keystore truststore.jks -storepass PW
      beeline -u 'jdbc:hive2://HOST:PORT/default;ssl=true;sslTrustStore=truststore.jks;trustStorePassword=PW'

    \b
    HTTP transport (HiveServer2's transportMode=http): --transport-mode http --port 10001
      beeline -u 'jdbc:hive2://HOST:10001/default;transportMode=http;httpPath=cliservice'
      PyHive: hive.connect(HOST, 10001, scheme="http", username=U, password=PW, auth="BASIC")

    \b
    Security: every role runs in a sandbox (no OS commands, no Java reflection, readers
    and writers no paths outside the warehouse and SET from an allow-list); see the
    Security section of docs/bi-tools.md. A dead Spark JVM ends the server (status 70).

    \b
    Start-up: a busy --port is refused before Spark starts; the server runs SELECT 1
    itself before it prints 'listening' (--conf hudilite.thriftserver.warm.up=false
    skips it), so the first client does not pay for Spark's first query.

    \b
    Hive variables in statements: ${x} or ${hivevar:x} (beeline --hivevar x=1,
    SET hivevar:x=1), ${hiveconf:key} or ${spark:key} (session settings).
    See docs/bi-tools.md.
    """
    if auth == "password" and not users_file:
        raise click.UsageError("--auth password needs --users FILE")
    if (ssl_cert is None) != (ssl_key is None):
        missing = "--ssl-key" if ssl_key is None else "--ssl-cert"
        raise click.UsageError(f"TLS needs both --ssl-cert and --ssl-key: {missing} is missing")
    conf = dict(_conf_pair(c) for c in confs)
    # An out-of-memory error ends the JVM (and so the server, non-zero: see below) rather
    # than leaving it half-working with every session stuck.
    java_options = conf.get(DRIVER_JAVA_OPTIONS, "")
    if "OutOfMemoryError" not in java_options:
        conf[DRIVER_JAVA_OPTIONS] = f"{java_options} -XX:+ExitOnOutOfMemoryError".strip()
    mode = transport_mode or conf.get("hive.server2.transport.mode") or "binary"
    if http_path is not None and mode.lower() != "http":
        raise click.UsageError("--http-path needs --transport-mode http")
    # why: thrift and TCLIService come with the optional `server` extra
    from hudilite.thriftserver import serve

    try:
        # serve() checks the TLS files and the transport options before Spark starts.
        server = serve(
            warehouse,
            host=host,
            port=port,
            auth=auth,
            users_file=users_file,
            conf=conf,
            ssl_cert=ssl_cert,
            ssl_key=ssl_key,
            transport_mode=transport_mode,
            http_path=http_path,
        )
    except (ValueError, OSError, HudiliteError) as exc:
        raise click.ClickException(str(exc)) from None

    def _stop(signum: int, frame: Any) -> None:
        # Stopping waits for running statements: not on the signal handler's stack.
        threading.Thread(target=server.stop, name="thrift-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    http = f", http {server.http_path}" if server.http_path else ""
    click.echo(
        f"hudilite thriftserver listening on {server.host}:{server.port} (auth {auth}{http}"
        + (", TLS)" if ssl_cert else ")"),
        err=True,
    )
    sys.stderr.flush()
    # Until stop() has returned (running statements finished or cancelled, sessions
    # closed): the interpreter's exit would kill its thread half-way. A dead JVM ends the
    # process at once, non-zero, so a supervisor restarts it: every session needs the JVM.
    while not server.wait(1.0):
        code = server.jvm_exit_code()
        if code is not None:
            click.echo(
                f"hudilite thriftserver: the Spark JVM exited (code {code}); exiting with "
                f"status {JVM_DIED_EXIT} so that a supervisor restarts the server",
                err=True,
            )
            sys.stderr.flush()
            os._exit(JVM_DIED_EXIT)  # no clean-up: it would wait on the dead JVM
    click.echo("hudilite thriftserver stopped", err=True)


@click.group()
def users() -> None:
    """Manage a Thrift server users file (salted scrypt hashes, roles)."""


def _store(path: str) -> Any:
    # why: the users module sits in the optional server package
    from hudilite.thriftserver.users import UserStore

    return UserStore(path)


@users.command("add")
@click.option("--file", "path", required=True, metavar="FILE", help="The users file.")
@click.option("--role", type=click.Choice(ROLE_CHOICES), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.argument("name")
def users_add(path: str, role: str, password_stdin: bool, name: str) -> None:
    """Add user NAME (or change its password and role). The password is asked twice on the
    terminal, or read from the first line of standard input with --password-stdin."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif not sys.stdin.isatty():
        # The prompt would read a piped password, echo a warning, then hit the end of the
        # input at its confirmation and stop with only "Aborted!".
        raise click.ClickException(
            "standard input is not a terminal: to pipe the password, add --password-stdin "
            f"(echo PASSWORD | hudilite users add --file FILE --role {role} "
            f"--password-stdin {name})"
        )
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        _store(path).add(name, password, role)
    except HudiliteError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"user {name} ({role}) saved in {path}")


@users.command("remove")
@click.option("--file", "path", required=True, metavar="FILE", help="The users file.")
@click.argument("name")
def users_remove(path: str, name: str) -> None:
    """Remove user NAME."""
    try:
        _store(path).remove(name)
    except HudiliteError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"user {name} removed from {path}")


@users.command("list")
@click.option("--file", "path", required=True, metavar="FILE", help="The users file.")
def users_list(path: str) -> None:
    """List the users and their roles."""
    try:
        for user in _store(path).list():
            click.echo(f"{user.name}\t{user.role}")
    except HudiliteError as exc:
        raise click.ClickException(str(exc)) from None
