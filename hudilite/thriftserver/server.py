"""The listening server: sockets, one thread per connection, authentication, shutdown.

``serve(...)`` starts a :class:`Server` on a background thread and returns it; ``stop()``
(or leaving the ``with`` block) gives running statements the shutdown grace (their clients
poll and fetch as usual; new sessions and statements are refused), cancels the rest (a
cancelled write rolls back), stops accepting, closes every session and connection.
Transports, as HiveServer2's binary mode: ``none`` and ``password`` speak SASL PLAIN
(``none`` accepts any user and password, as HiveServer2's ``NONE``), ``nosasl`` plain
buffered Thrift. Bytes that are not Thrift end only their own connection.

TLS (``ssl_cert`` and ``ssl_key``): every connection starts with a TLS handshake (in its own
thread, within the negotiation timeout), then speaks the transport of its auth mode inside
it, as HiveServer2 with ``hive.server2.use.SSL``. :func:`tls_context` checks and loads the
files before the server binds; an error names the file at fault. A client that does not
speak TLS gets its connection closed (after the server's alert, cleanly rather than reset).

``transport_mode="http"`` (HiveServer2's ``hive.server2.transport.mode=http``) serves the
same calls over HTTP POST at ``/cliservice`` instead, credentials in an ``Authorization:
Basic`` header, HTTPS with TLS: :mod:`.http_transport`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType

from pyspark.sql import SparkSession
from TCLIService import TCLIService
from TCLIService import ttypes as tt
from thrift.transport import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportBase, TTransportException

from hudilite.catalog import default_warehouse
from hudilite.spark.session import spark_session

from .handler import Handler
from .http_transport import (
    DEFAULT_HTTP_PATH,
    TRANSPORT_MODES,
    CredentialCache,
    ThriftHttpServer,
    check_transport_mode,
    normalize_http_path,
)
from .limits import FD_EXHAUSTED, LoginThrottle, ReserveDescriptor
from .operations import Operation, frame_rows
from .protocol import binary_protocol
from .sasl_transport import MAX_FRAME, SaslServerTransport
from .sessions import HIVE_QUERY_TIMEOUT, MAX_PROTOCOL, PREFIX, ServerSettings, SessionRegistry
from .users import UserStore

__all__ = ["AUTH_MODES", "TRANSPORT_MODES", "Server", "check_port", "serve", "tls_context"]

AUTH_MODES = ("none", "nosasl", "password")
#: HiveServer2's settings for the transport, accepted in ``serve``'s ``conf``.
HIVE_TRANSPORT_MODE = "hive.server2.transport.mode"
HIVE_HTTP_PATH = "hive.server2.thrift.http.path"
#: How long a client may take to authenticate before its connection is dropped (seconds).
NEGOTIATION_TIMEOUT = 30.0
_log = logging.getLogger(__name__)


class _EncryptedKey(Exception):
    """The key file asks for a passphrase (raised by the password callback)."""


def _encrypted_key() -> str:
    raise _EncryptedKey


def tls_context(
    ssl_cert: str | os.PathLike[str] | None, ssl_key: str | os.PathLike[str] | None
) -> ssl.SSLContext | None:
    """The server's TLS context for the PEM certificate (chain) ``ssl_cert`` and its
    unencrypted PEM private key ``ssl_key``; None when neither is given. ``ValueError``
    naming the file at fault when only one is given, a file is missing or unreadable, the
    certificate does not load, or the key does not load, is encrypted or does not match."""
    if ssl_cert is None and ssl_key is None:
        return None
    if ssl_cert is None or ssl_key is None:
        given, missing = ("ssl_cert", "ssl_key") if ssl_key is None else ("ssl_key", "ssl_cert")
        raise ValueError(
            f"TLS needs both a certificate and its key (--ssl-cert and --ssl-key): "
            f"{given} given without {missing}"
        )
    cert, key = os.fspath(ssl_cert), os.fspath(ssl_key)
    for what, path in (("certificate", cert), ("key", key)):
        if not os.path.exists(path):
            raise ValueError(f"TLS {what} file {path} does not exist")
        if not os.path.isfile(path):
            raise ValueError(f"TLS {what} file {path} is not a file")
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise ValueError(f"TLS {what} file {path} cannot be read: {exc.strerror}") from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)  # TLS 1.2 at least
    try:
        # Checks the certificate file alone, so a failure below is the key's.
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_verify_locations(cafile=cert)
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(
            f"TLS certificate file {cert} does not load (a PEM certificate is expected): "
            f"{_ssl_reason(exc)}"
        ) from None
    try:
        context.load_cert_chain(cert, key, password=_encrypted_key)
    except _EncryptedKey:
        raise ValueError(
            f"TLS key file {key} is encrypted: the server needs an unencrypted key "
            "(protect the file with its permissions instead)"
        ) from None
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(
            f"TLS key file {key} does not load or does not match the certificate {cert} "
            f"(an unencrypted PEM private key is expected): {_ssl_reason(exc)}"
        ) from None
    return context


def _ssl_reason(exc: BaseException) -> str:
    """OpenSSL's reason (``key values mismatch``), or what a bare ``PEM lib`` error means."""
    if isinstance(exc, ssl.SSLError):
        reason = getattr(exc, "reason", None)
        return str(reason).lower().replace("_", " ") if reason else "no usable PEM data"
    return getattr(exc, "strerror", None) or str(exc)


class Server:
    """A running Thrift server; see :func:`serve`."""

    def __init__(
        self,
        registry: SessionRegistry,
        *,
        host: str,
        port: int,
        auth: str,
        users: UserStore | None,
        tls: ssl.SSLContext | None = None,
        transport_mode: str = "binary",
        http_path: str = DEFAULT_HTTP_PATH,
    ) -> None:
        if auth not in AUTH_MODES:
            raise ValueError(f"unknown auth mode {auth!r}: expected one of {AUTH_MODES}")
        if auth == "password" and users is None:
            raise ValueError("auth mode 'password' needs a users file (--users FILE)")
        self.registry = registry
        self.host = host
        self.auth = auth
        self.users = users
        self.tls = tls
        self.transport_mode = check_transport_mode(transport_mode)
        self._listener: socket.socket | None = None
        self._http: ThriftHttpServer | None = None
        settings = registry.settings
        self._throttle = LoginThrottle(settings.login_max_failures, settings.login_lockout)
        self._warned: dict[str, float] = {}
        self.port: int
        if self.transport_mode == "http":
            self._http = ThriftHttpServer(
                host,
                port,
                path=http_path,
                # Each HTTP request carries the password: checked once, then remembered.
                authenticate=(
                    CredentialCache(self._authenticate, self._users_version)
                    if auth == "password"
                    else self._authenticate
                ),
                require_credentials=auth == "password",
                handler_for=self._http_handler,
                tls_handshake=self._tls_handshake if tls is not None else None,
                max_connections=settings.max_connections,
            )
            self.port = self._http.port
        else:
            try:
                self._listener = socket.create_server((host, port), reuse_port=False, backlog=64)
            except OSError as exc:
                raise _listen_error(host, port, exc) from None
            self.port = self._listener.getsockname()[1]
        self._reserve = ReserveDescriptor()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="thrift-accept", daemon=True
        )
        self._reaper = threading.Thread(target=self._reap_loop, name="thrift-reaper", daemon=True)

    @property
    def http_path(self) -> str | None:
        """The URL path of the Thrift service in HTTP mode (``/cliservice``), else None."""
        return self._http.path if self._http is not None else None

    def start(self) -> Server:
        """Start accepting connections (on background threads)."""
        if self._http is not None:
            self._http.start()
        else:
            self._accept_thread.start()
        self._reaper.start()
        return self

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        tls = ", tls=True" if self.tls is not None else ""
        http = f", transport_mode='http', http_path={self.http_path!r}" if self._http else ""
        return f"Server(host={self.host!r}, port={self.port}, auth={self.auth!r}{http}{tls})"

    def jvm_exit_code(self) -> int | None:
        """The exit code of the Spark JVM this process launched once it has died (an
        out-of-memory exit, ``System.exit``, the OOM killer), else None (alive, or not
        launched by this process). Every session needs it: a server whose JVM died can
        only be restarted (the ``thriftserver`` command then exits non-zero)."""
        # why: pyspark keeps the launched JVM's Popen on its private gateway only
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
        return None if proc is None else proc.poll()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server has stopped (or ``timeout``): :meth:`stop` has returned,
        running statements finished or cancelled; whether it has."""
        return self._stopped.wait(timeout)

    def stop(self, grace: float | None = None) -> None:
        """Stop: no new connections, running statements finish within ``grace`` (default
        the ``shutdown.grace`` setting) or are cancelled, every session and connection is
        closed."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        try:
            self._stop(grace)
        finally:
            self._stopped.set()

    def _stop(self, grace: float | None) -> None:
        # The grace first, with the listener still open: clients poll and fetch their
        # running statements (an HTTP client may connect anew for every call), and the
        # registry refuses new sessions and statements meanwhile.
        wait = self.registry.settings.shutdown_grace if grace is None else grace
        self.registry.shutdown(wait)
        if self._http is not None:
            self._http.stop_accepting()
        if self._listener is not None:
            # shutdown() wakes the accept loop up (closing alone leaves accept() blocked).
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self._listener.close()
        if self._http is not None:
            self._http.close_connections()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._accept_thread.is_alive():
            self._accept_thread.join(5)
        self._reserve.close()

    # ------------------------------------------------------------------ threads
    def _accept_loop(self) -> None:
        assert self._listener is not None
        while True:  # until stop() closes the listener, after the grace
            try:
                conn, addr = self._listener.accept()
            except OSError as exc:
                if self._stopping.is_set():
                    return  # the listener was shut down: stopping
                self._accept_failed(exc)
                continue
            peer = f"{addr[0]}:{addr[1]}"
            with self._lock:
                full = len(self._connections) >= self.registry.settings.max_connections > 0
                if not full:
                    self._connections.add(conn)
            if full:
                self._warn_once(
                    "full",
                    f"connection {peer} refused: {len(self._connections)} connections "
                    f"open ({PREFIX}max.connections)",
                )
                _close_gently(conn, linger=0.0)
                continue
            try:
                threading.Thread(
                    target=self._serve_connection,
                    args=(conn, peer),
                    name=f"thrift-conn-{addr[1]}",
                    daemon=True,
                ).start()
            except RuntimeError:  # no thread to spare: this connection only
                with self._lock:
                    self._connections.discard(conn)
                conn.close()
                self._warn_once("threads", f"connection {peer} dropped: cannot start a thread")

    def _accept_failed(self, exc: OSError) -> None:
        """``accept`` failed while serving: out of file descriptors (the waiting connection
        is accepted on the reserve descriptor and closed), or a connection that was reset
        before it was accepted. The loop goes on either way."""
        assert self._listener is not None
        if exc.errno in FD_EXHAUSTED:
            self._warn_once(
                "fds",
                f"out of file descriptors ({exc.strerror}): new connections are closed "
                "until some end",
            )
            if not self._reserve.shed(self._listener):
                time.sleep(0.05)  # none was waiting after all: do not spin
        else:
            _log.info("accept failed: %s", exc)
            time.sleep(0.01)

    def _warn_once(self, kind: str, message: str) -> None:
        """Log ``message`` at most once per 10 s for each ``kind`` (a flood of refused
        connections must not flood the log)."""
        now = time.monotonic()
        if now - self._warned.get(kind, -60.0) >= 10.0:
            self._warned[kind] = now
            _log.warning(message)

    def _reap_loop(self) -> None:
        s = self.registry.settings
        timeouts = [t for t in (s.idle_session_timeout, s.idle_operation_timeout) if t > 0]
        interval = max(0.05, min([60.0, *[t / 4 for t in timeouts]]))
        while not self._stopping.wait(interval):
            try:
                self.registry.reap_idle()
            except Exception:  # housekeeping must never stop the server
                _log.exception("closing idle sessions failed")

    def _authenticate(self, user: str, password: str, peer: str = "") -> str | None:
        """The name a client signs in as, None when refused; with password auth a failed
        login is counted and logged, and a locked-out user refused (:mod:`.limits`)."""
        # nosasl reaches here over HTTP only: the Basic header's name, unchecked, as none.
        if self.auth != "password":
            return user or "anonymous"
        assert self.users is not None
        self._throttle.check(user, peer)
        found = self.users.verify(user, password)
        if found is None:
            self._throttle.failed(user, peer)
            return None
        self._throttle.succeeded(user, peer)
        return found.name

    def _users_version(self) -> object:
        """What changes when the users file does (for :class:`CredentialCache`)."""
        if self.users is None:
            return None
        try:
            st = self.users.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _role(self, user: str | None) -> str:
        if self.auth != "password" or self.users is None or user is None:
            return "admin"
        for u in self.users.list():
            if u.name == user:
                return u.role
        return "reader"

    def _http_handler(self, user: str, peer: str, sock: socket.socket) -> Handler:
        """The handler of one HTTP request: no per-connection state, sessions stay open
        after it (HTTP clients may use a new connection for every call)."""
        return Handler(self.registry, user, self._role(user), peer=peer, sock=sock)

    def _serve_connection(self, conn: socket.socket, peer: str) -> None:
        # ``conn`` stays the raw TCP socket (stop() shuts it down, the hang-up watch peeks
        # at it); with TLS, Thrift reads and writes a TLS socket on a duplicate of it.
        stream: socket.socket = conn
        sock = TSocket.TSocket()
        trans: TTransportBase
        handler: Handler | None = None
        try:
            user: str | None = None
            if self.tls is not None:
                stream = self._tls_handshake(conn, peer)
            sock.setHandle(stream)
            if self.auth == "nosasl":
                trans = TBufferedTransport(sock)
            else:
                stream.settimeout(NEGOTIATION_TIMEOUT)
                sasl = SaslServerTransport(sock)
                user = sasl.negotiate(lambda u, p: self._authenticate(u, p, peer))
                stream.settimeout(None)
                trans = sasl
            handler = Handler(self.registry, user, self._role(user), peer=peer, sock=conn)
            # Thrift's C encoder and decoder, adapted to PyHive's generated code (.protocol).
            protocol = binary_protocol(trans, MAX_FRAME)
            processor = TCLIService.Processor(handler)
            # Served until the client leaves or stop() shuts the socket down, stopping or
            # not: during the shutdown grace a client polls and fetches its running
            # statement (the registry refuses new ones). Ending the loop on stopping would
            # close the client's sessions, and so cancel the statements the grace is for.
            while True:
                processor.process(protocol, protocol)
        except (TTransportException, OSError, EOFError):
            pass  # the client went away, failed to authenticate or does not speak TLS
        except Exception as exc:  # bytes that are not Thrift: end this connection only
            _log.info("connection %s dropped: %s", peer, exc)
        finally:
            if handler is not None:
                handler.disconnect()
            with self._lock:
                self._connections.discard(conn)
            if stream is not conn:
                with contextlib.suppress(OSError):
                    stream.close()
            with contextlib.suppress(OSError):
                conn.close()

    def _tls_handshake(self, conn: socket.socket, peer: str) -> ssl.SSLSocket:
        """The TLS socket of ``conn`` once the handshake is done (``ssl.SSLError`` when the
        client does not speak TLS: it is told so, then the connection closes cleanly)."""
        assert self.tls is not None
        tls = self.tls.wrap_socket(conn.dup(), server_side=True, do_handshake_on_connect=False)
        tls.settimeout(NEGOTIATION_TIMEOUT)
        try:
            tls.do_handshake()
        except (ssl.SSLError, OSError) as exc:
            _log.info("connection %s: TLS handshake failed: %s", peer, exc)
            tls.close()
            _close_gently(conn)
            raise
        tls.settimeout(None)
        return tls


def _close_gently(conn: socket.socket, linger: float = 1.0) -> None:
    """Close ``conn`` with a FIN rather than a reset: stop sending, then read and drop what
    the client already sent (closing with unread bytes would reset the connection, and the
    client would see "connection reset" instead of the end of the stream)."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(linger)
        for _ in range(64):
            if not conn.recv(4096):
                break


#: What the server runs before it listens (see :func:`warm_up`).
WARM_UP_SQL = "SELECT 1"


def warm_up(registry: SessionRegistry) -> None:
    """Run one statement the way a client's runs (a session of its own, the SQL layer, an
    operation whose rows are fetched), so the first client does not pay for what only the
    first statement of a process pays: Spark's first planning and code generation, its
    lookup of Python data sources (a Python worker), the result path's first Arrow
    collect (14-16 s of the first client's statement on a busy two-core machine, see
    docs/benchmarks.md). A failure is logged, not raised: clients then meet it themselves."""
    started = time.monotonic()
    try:
        session = registry.open("hudilite-warm-up", "admin", MAX_PROTOCOL, {})
    except Exception as exc:
        _log.warning("warm-up: opening a session failed: %s", exc)
        return
    try:
        op = Operation(
            session.sql.spark,
            tt.TOperationType.EXECUTE_STATEMENT,
            lambda: frame_rows(session.sql.sql(WARM_UP_SQL)),
            WARM_UP_SQL,
        )
        op.run(False)
        if op.state == tt.TOperationState.FINISHED_STATE:
            op.fetch(10, False)
        else:
            _log.warning("warm-up: %s failed: %s", WARM_UP_SQL, op.error)
        op.close()
    except Exception as exc:
        _log.warning("warm-up: %s failed: %s", WARM_UP_SQL, exc)
    finally:
        registry.close(session.key)
    _log.info("warm-up took %.1f s", time.monotonic() - started)


def check_port(host: str, port: int) -> None:
    """Refuse, before anything slow starts, a ``host:port`` the server could not listen on
    (``OSError`` naming it: in use, not an address of this machine, a privileged port). A
    bind test with the listener's own options (``SO_REUSEADDR``, so a port in TIME_WAIT
    passes, as it would for the listener); port 0 always passes. The port is bound for
    real once Spark has started, so a process taking it meanwhile is still reported, then
    by :class:`Server`."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OSError(f"cannot listen on {host}:{port}: unknown host ({exc.strerror})") from None
    family, _type, _proto, _name, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        if os.name == "posix":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise _listen_error(host, port, exc) from None


def _listen_error(host: str, port: int, exc: OSError) -> OSError:
    """One line naming ``host:port`` and why it cannot be listened on."""
    reason = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.EADDRINUSE:
        reason += " (another process listens there: stop it or pick another --port)"
    error = OSError(f"cannot listen on {host}:{port}: {reason}")
    error.errno = exc.errno  # printed as the message alone, tested by its errno
    return error


def _transport_option(
    keyword: str,
    given: str | None,
    conf: dict[str, str],
    key: str,
    normalize: Callable[[str], str],
) -> str | None:
    """A transport option given as ``serve``'s keyword or as HiveServer2's conf ``key``
    (taken out of ``conf``: it is not a session option), checked and normalized by
    ``normalize`` (before Spark starts); ``ValueError`` when both are given and differ."""
    from_conf = conf.pop(key, None)
    ours = normalize(given) if given is not None else None
    theirs = normalize(from_conf) if from_conf is not None else None
    if ours is not None and theirs is not None and ours != theirs:
        raise ValueError(f"{keyword}={given!r} and conf {key}={from_conf!r} disagree")
    return ours if ours is not None else theirs


def _split_conf(conf: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(spark.*, hudilite.thriftserver.*, the rest: every session's starting options)``."""
    spark = {k: v for k, v in conf.items() if k.startswith("spark.")}
    server = {k: v for k, v in conf.items() if k.startswith(PREFIX) or k == HIVE_QUERY_TIMEOUT}
    rest = {k: v for k, v in conf.items() if k not in spark and k not in server}
    return spark, server, rest


def serve(
    warehouse: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 10000,
    auth: str = "none",
    users_file: str | os.PathLike[str] | None = None,
    conf: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
    ssl_cert: str | os.PathLike[str] | None = None,
    ssl_key: str | os.PathLike[str] | None = None,
    transport_mode: str | None = None,
    http_path: str | None = None,
) -> Server:
    """Start a HiveServer2-compatible server for the SQL warehouse ``warehouse`` and return
    it (running on background threads; ``port=0`` picks a free port, see ``.port``).

    ``auth``: ``none`` (SASL PLAIN, any password), ``nosasl`` or ``password`` (SASL PLAIN
    checked against ``users_file``, roles enforced). ``conf``: ``spark.*`` keys configure
    the SparkSession (when one is started here; given to ``spark``'s runtime conf
    otherwise), ``hudilite.thriftserver.*`` keys the server
    (:class:`~hudilite.thriftserver.sessions.ServerSettings`), any other key is an option
    every session starts with (as ``SET``). ``spark`` defaults to the active session or a
    new local one. ``ssl_cert`` and ``ssl_key`` (PEM files, both or neither): serve over
    TLS; they are checked before anything starts (:func:`tls_context`).

    ``transport_mode``: ``binary`` (default: Thrift over TCP) or ``http`` (Thrift over HTTP
    POST at ``http_path``, default ``cliservice``; HTTPS with ``ssl_cert``; see
    :mod:`.http_transport`); also read from ``conf`` as HiveServer2's
    ``hive.server2.transport.mode`` and ``hive.server2.thrift.http.path``. Hive's usual
    port for HTTP is 10001; ``port`` is used as given.

    A ``host:port`` that cannot be listened on (in use, say) raises ``OSError`` naming it
    before Spark starts (:func:`check_port`). Before it listens, the server runs one
    statement itself (:func:`warm_up`; ``hudilite.thriftserver.warm.up=false`` skips it).
    """
    tls = tls_context(ssl_cert, ssl_key)
    conf = dict(conf or {})
    mode = _transport_option(
        "transport_mode", transport_mode, conf, HIVE_TRANSPORT_MODE, check_transport_mode
    )
    path = _transport_option("http_path", http_path, conf, HIVE_HTTP_PATH, normalize_http_path)
    mode = mode or "binary"
    if path is not None and mode != "http":
        raise ValueError(f"an HTTP path ({path!r}) needs transport mode http, not {mode}")
    spark_conf, server_conf, options = _split_conf(conf)
    settings = ServerSettings.from_conf(server_conf)
    # A busy port is reported now, not after Spark's start (seconds to minutes).
    check_port(host, port)
    if spark is None:
        spark = spark_session(conf=spark_conf or None)
    else:
        for k, v in spark_conf.items():
            spark.conf.set(k, v)
    users = UserStore(users_file) if users_file is not None else None
    if auth == "password" and users is not None and not users.path.exists():
        raise ValueError(f"users file {users.path} does not exist")
    wh = str(warehouse) if warehouse is not None else None
    registry = SessionRegistry(spark, wh or default_warehouse(), settings, options)
    if settings.warm_up:
        warm_up(registry)
    return Server(
        registry,
        host=host,
        port=port,
        auth=auth,
        users=users,
        tls=tls,
        transport_mode=mode,
        http_path=path or DEFAULT_HTTP_PATH,
    ).start()
