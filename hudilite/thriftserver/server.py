"""The listening server: sockets, one thread per connection, authentication, shutdown.

``serve(...)`` starts a :class:`Server` on a background thread and returns it; ``stop()``
(or leaving the ``with`` block) stops accepting, gives running statements the shutdown
grace, cancels the rest (a cancelled write rolls back), closes every session and
connection. Transports, as HiveServer2's binary mode: ``none`` and ``password`` speak SASL
PLAIN (``none`` accepts any user and password, as HiveServer2's ``NONE``), ``nosasl`` plain
buffered Thrift. Bytes that are not Thrift end only their own connection.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Mapping
from types import TracebackType

from pyspark.sql import SparkSession
from TCLIService import TCLIService
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportBase, TTransportException

from hudilite.catalog import default_warehouse
from hudilite.spark.session import spark_session

from .handler import Handler
from .sasl_transport import MAX_FRAME, SaslServerTransport
from .sessions import PREFIX, ServerSettings, SessionRegistry
from .users import UserStore

__all__ = ["AUTH_MODES", "Server", "serve"]

AUTH_MODES = ("none", "nosasl", "password")
#: How long a client may take to authenticate before its connection is dropped (seconds).
NEGOTIATION_TIMEOUT = 30.0
_log = logging.getLogger(__name__)


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
    ) -> None:
        if auth not in AUTH_MODES:
            raise ValueError(f"unknown auth mode {auth!r}: expected one of {AUTH_MODES}")
        if auth == "password" and users is None:
            raise ValueError("auth mode 'password' needs a users file (--users FILE)")
        self.registry = registry
        self.host = host
        self.auth = auth
        self.users = users
        self._listener = socket.create_server((host, port), reuse_port=False, backlog=64)
        self.port: int = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="thrift-accept", daemon=True
        )
        self._reaper = threading.Thread(target=self._reap_loop, name="thrift-reaper", daemon=True)

    def start(self) -> Server:
        """Start accepting connections (on background threads)."""
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
        return f"Server(host={self.host!r}, port={self.port}, auth={self.auth!r})"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or ``timeout``); whether it stopped."""
        return self._stopping.wait(timeout)

    def stop(self, grace: float | None = None) -> None:
        """Stop: no new connections, running statements finish within ``grace`` (default
        the ``shutdown.grace`` setting) or are cancelled, every session and connection is
        closed."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        wait = self.registry.settings.shutdown_grace if grace is None else grace
        self.registry.shutdown(wait)
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._accept_thread.join(5)

    # ------------------------------------------------------------------ threads
    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, addr = self._listener.accept()
            except OSError:
                return  # the listener was closed: stopping
            with self._lock:
                self._connections.add(conn)
            threading.Thread(
                target=self._serve_connection,
                args=(conn, f"{addr[0]}:{addr[1]}"),
                name=f"thrift-conn-{addr[1]}",
                daemon=True,
            ).start()

    def _reap_loop(self) -> None:
        s = self.registry.settings
        timeouts = [t for t in (s.idle_session_timeout, s.idle_operation_timeout) if t > 0]
        interval = max(0.05, min([60.0, *[t / 4 for t in timeouts]]))
        while not self._stopping.wait(interval):
            try:
                self.registry.reap_idle()
            except Exception:  # housekeeping must never stop the server
                _log.exception("closing idle sessions failed")

    def _authenticate(self, user: str, password: str) -> str | None:
        if self.auth == "none":
            return user or "anonymous"
        assert self.users is not None
        found = self.users.verify(user, password)
        return None if found is None else found.name

    def _role(self, user: str | None) -> str:
        if self.auth != "password" or self.users is None or user is None:
            return "admin"
        for u in self.users.list():
            if u.name == user:
                return u.role
        return "reader"

    def _serve_connection(self, conn: socket.socket, peer: str) -> None:
        sock = TSocket.TSocket()
        sock.setHandle(conn)
        trans: TTransportBase
        handler: Handler | None = None
        try:
            user: str | None = None
            if self.auth == "nosasl":
                trans = TBufferedTransport(sock)
            else:
                conn.settimeout(NEGOTIATION_TIMEOUT)
                sasl = SaslServerTransport(sock)
                user = sasl.negotiate(self._authenticate)
                conn.settimeout(None)
                trans = sasl
            handler = Handler(self.registry, user, self._role(user), peer=peer, sock=conn)
            # Not TBinaryProtocolAccelerated: PyHive's generated TCLIService code hands the
            # C encoder of current Thrift a tuple where it wants a list (TypeError).
            protocol = TBinaryProtocol(
                trans, string_length_limit=MAX_FRAME, container_length_limit=MAX_FRAME
            )
            processor = TCLIService.Processor(handler)
            while not self._stopping.is_set():
                processor.process(protocol, protocol)
        except (TTransportException, OSError, EOFError):
            pass  # the client went away, or failed to authenticate
        except Exception as exc:  # bytes that are not Thrift: end this connection only
            _log.info("connection %s dropped: %s", peer, exc)
        finally:
            if handler is not None:
                handler.disconnect()
            with self._lock:
                self._connections.discard(conn)
            with contextlib.suppress(OSError):
                conn.close()


def _split_conf(conf: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(spark.*, hudilite.thriftserver.*, the rest: every session's starting options)``."""
    spark = {k: v for k, v in conf.items() if k.startswith("spark.")}
    server = {k: v for k, v in conf.items() if k.startswith(PREFIX)}
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
) -> Server:
    """Start a HiveServer2-compatible server for the SQL warehouse ``warehouse`` and return
    it (running on background threads; ``port=0`` picks a free port, see ``.port``).

    ``auth``: ``none`` (SASL PLAIN, any password), ``nosasl`` or ``password`` (SASL PLAIN
    checked against ``users_file``, roles enforced). ``conf``: ``spark.*`` keys configure
    the SparkSession (when one is started here; given to ``spark``'s runtime conf
    otherwise), ``hudilite.thriftserver.*`` keys the server
    (:class:`~hudilite.thriftserver.sessions.ServerSettings`), any other key is an option
    every session starts with (as ``SET``). ``spark`` defaults to the active session or a
    new local one.
    """
    spark_conf, server_conf, options = _split_conf(dict(conf or {}))
    settings = ServerSettings.from_conf(server_conf)
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
    return Server(registry, host=host, port=port, auth=auth, users=users).start()
