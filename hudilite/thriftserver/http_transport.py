"""HiveServer2's HTTP transport mode (``hive.server2.transport.mode=http``).

Every Thrift call is one HTTP ``POST`` to the service path (``/cliservice`` by default, as
``hive.server2.thrift.http.path``; sub-paths too, as HiveServer2's servlet mapping
``/cliservice/*``: PyHive posts to ``/cliservice/``): the request body is the call in
Thrift's binary protocol, the response body its reply. Credentials travel in every request,
as ``Authorization: Basic base64(user:password)``; a refused request gets HTTP 401 with
``WWW-Authenticate: Basic realm="hudilite"``. HTTPS when the server has a TLS context.

HTTP is stateless: each request is authenticated on its own and handled by a fresh
:class:`~hudilite.thriftserver.handler.Handler` for its user, and the state lives in the
server's session registry, keyed by the session handle the client sends back. So a session
outlives the connection that opened it (Hive's JDBC driver and Thrift's ``THttpClient``
may use a new connection per call) and ends with ``CloseSession``, the idle-session timeout
or the server's stop; the handler refuses a session or operation of another user.

The HTTP side is Python's :mod:`http.server` (one thread per connection, HTTP/1.1
keep-alive), the Thrift side the server's binary protocol (Thrift's C module, see
:mod:`.protocol`) over ``TMemoryBuffer``s.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import logging
import secrets
import socket
import socketserver
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from TCLIService import TCLIService
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport.TTransport import TMemoryBuffer

from .protocol import binary_protocol
from .sasl_transport import MAX_FRAME, LoginRefused

__all__ = [
    "DEFAULT_HTTP_PATH",
    "HTTP_IDLE_TIMEOUT",
    "REALM",
    "TRANSPORT_MODES",
    "CredentialCache",
    "ThriftHttpServer",
    "check_transport_mode",
    "normalize_http_path",
    "parse_basic",
]

TRANSPORT_MODES = ("binary", "http")
#: HiveServer2's ``hive.server2.thrift.http.path``.
DEFAULT_HTTP_PATH = "cliservice"
#: The realm of the ``WWW-Authenticate`` challenge.
REALM = "hudilite"
#: An idle keep-alive connection is closed after this long (seconds), as HiveServer2's
#: ``hive.server2.thrift.http.max.idle.time``; clients open a new one.
HTTP_IDLE_TIMEOUT = 1800.0

_log = logging.getLogger(__name__)

#: Checks a request's credentials: (user, password, client address) -> the name it runs
#: as, None when refused (:class:`LoginRefused` with its own message: a locked-out user).
Authenticator = Callable[[str, str, str], str | None]
#: Largest body read from a request that fails authentication (enough for any Thrift call
#: an unauthenticated client makes, e.g. OpenSession): a larger one is not read at all.
UNAUTHENTICATED_BODY = 64 * 1024
#: Builds the TCLIService handler of one request: (user, peer, the client's TCP socket).
HandlerFactory = Callable[[str, str, socket.socket], TCLIService.Iface]
#: The TLS socket of a new connection once its handshake is done: (TCP socket, peer).
TlsHandshake = Callable[[socket.socket, str], ssl.SSLSocket]


def check_transport_mode(mode: str) -> str:
    """``mode`` when it is ``binary`` or ``http`` (any case), lower-cased; ``ValueError``
    naming it otherwise."""
    if not isinstance(mode, str) or mode.lower() not in TRANSPORT_MODES:
        raise ValueError(f"unknown transport mode {mode!r}; expected binary or http")
    return mode.lower()


def normalize_http_path(path: str) -> str:
    """The URL path served for the ``hive.server2.thrift.http.path`` value ``path``
    (``cliservice`` or ``/cliservice/``: ``/cliservice``); ``ValueError`` for an empty
    path or one with characters a JDBC ``httpPath`` cannot carry."""
    stripped = path.strip("/") if isinstance(path, str) else ""
    if not stripped or any(c in stripped for c in "?#;% \t\r\n"):
        raise ValueError(f"bad HTTP path {path!r}: expected a URL path such as cliservice")
    return "/" + stripped


def parse_basic(header: str | None) -> tuple[str, str] | None:
    """``(user, password)`` of an ``Authorization: Basic`` header value; None without one.

    ``ValueError`` when the header is another scheme (Kerberos' ``Negotiate``, ``Bearer``)
    or not ``base64(user:password)`` in UTF-8. The password may hold colons (RFC 7617:
    the user name ends at the first one)."""
    if header is None or not header.strip():
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        raise ValueError(f"unsupported authorization scheme {scheme!r}: this server takes Basic")
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("malformed Basic credentials: expected base64(user:password)") from None
    user, sep, password = decoded.partition(":")
    if not sep:
        raise ValueError("malformed Basic credentials: expected base64(user:password)")
    return user, password


class CredentialCache:
    """``authenticate`` remembering the credentials it accepted, for HTTP's per-request
    checks: a users-file check is a scrypt hash (about 50 ms, on purpose), and an HTTP client
    sends its password with every call (a query is five calls or more).

    An accepted ``(user, password)`` is kept for ``ttl`` seconds as an HMAC of the password
    under a key made at start-up (the password itself is not kept); the whole cache is
    dropped when ``version()`` changes (the users file's size and modification time: a
    removed user or a new password takes effect at once). Refusals are not cached, so
    every wrong guess still costs a full check."""

    def __init__(
        self,
        authenticate: Authenticator,
        version: Callable[[], object],
        ttl: float = 600.0,
        max_entries: int = 1024,
    ) -> None:
        self._authenticate = authenticate
        self._version = version
        self._ttl = ttl
        self._max = max_entries
        self._key = secrets.token_bytes(32)
        self._seen: dict[tuple[str, bytes], tuple[str, float]] = {}
        self._seen_version: object = None
        self._lock = threading.Lock()

    def __call__(self, user: str, password: str, peer: str = "") -> str | None:
        """The name ``user`` runs as, or None when refused (see the class)."""
        digest = hmac.new(self._key, password.encode("utf-8", "replace"), "sha256").digest()
        version = self._version()
        now = time.monotonic()
        with self._lock:
            if version != self._seen_version:
                self._seen.clear()
                self._seen_version = version
            found = self._seen.get((user, digest))
            if found is not None and found[1] > now:
                return found[0]
        accepted = self._authenticate(user, password, peer)
        if accepted is not None:
            with self._lock:
                if len(self._seen) >= self._max:
                    self._seen.clear()
                if version == self._seen_version:
                    self._seen[(user, digest)] = (accepted, now + self._ttl)
        return accepted


def _thrift_exception(body: bytes, message: str) -> bytes | None:
    """A Thrift exception reply to the call in ``body`` (its method name and sequence id)
    carrying ``message``; None when ``body`` does not start with a Thrift call.

    Sent with HTTP errors: Python's ``THttpClient`` (PyHive) ignores the HTTP status and
    decodes the body as the reply, so its user then sees ``message``; Java clients check
    the status (``HTTP Response code: 401``)."""
    try:
        name, _kind, seqid = TBinaryProtocol(TMemoryBuffer(body)).readMessageBegin()
    except Exception:  # not a Thrift call (curl, a browser): a plain-text body instead
        return None
    out = TMemoryBuffer()
    protocol = TBinaryProtocol(out)
    protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    TApplicationException(TApplicationException.UNKNOWN, message).write(protocol)
    protocol.writeMessageEnd()
    return out.getvalue()


class ThriftHttpServer(ThreadingHTTPServer):
    """TCLIService over HTTP(S) POST at ``path``, one thread per connection.

    ``authenticate(user, password)`` (the server's check, as for SASL PLAIN) gives the name
    a request runs as, or None to refuse it; a request without credentials is refused when
    ``require_credentials``, else runs as ``authenticate("", "")``. ``handler_for`` builds
    the handler of each request. ``tls_handshake`` (HTTPS) runs on the connection's thread.
    """

    daemon_threads = True
    # Idle keep-alive connections would block server_close(); stop() shuts them down.
    block_on_close = False

    def __init__(
        self,
        host: str,
        port: int,
        *,
        path: str,
        authenticate: Authenticator,
        require_credentials: bool,
        handler_for: HandlerFactory,
        tls_handshake: TlsHandshake | None = None,
        max_connections: int = 0,
    ) -> None:
        self.path = normalize_http_path(path)
        self.max_connections = max_connections
        self.authenticate = authenticate
        self.require_credentials = require_credentials
        self.handler_for = handler_for
        self.tls_handshake = tls_handshake
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._serving = False
        # An IPv6 --host needs an IPv6 socket (HTTPServer defaults to IPv4).
        self.address_family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        super().__init__((host, port), _ThriftRequestHandler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS look-up of the host (``getfqdn`` may take
        seconds where no resolver answers); the name is only used in CGI variables."""
        socketserver.TCPServer.server_bind(self)
        self.server_name = str(self.server_address[0])
        self.server_port = int(self.server_address[1])

    @property
    def port(self) -> int:
        """The port bound (the one picked when asked for 0)."""
        return int(self.server_address[1])

    def start(self) -> None:
        """Serve on a background thread."""
        self._serving = True
        threading.Thread(target=self.serve_forever, name="thrift-http", daemon=True).start()

    def stop_accepting(self) -> None:
        """Close the listening socket (after the shutdown grace, during which requests
        are served as usual and the session registry refuses new sessions and
        statements). Requests on open connections are still served until
        :meth:`close_connections`."""
        if self._serving:
            self.shutdown()  # returns once serve_forever's loop has ended
        self.server_close()

    def close_connections(self) -> None:
        """Shut down every open client connection (idle keep-alive ones included)."""
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Refuse a connection beyond ``max_connections`` (socketserver closes it)."""
        with self._lock:
            full = 0 < self.max_connections <= len(self._connections)
        if full:
            _log.warning(
                "HTTP connection %s refused: %d connections open",
                client_address,
                self.max_connections,
            )
        return not full

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own, tracked for :meth:`close_connections`."""
        with self._lock:
            self._connections.add(request)
        threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"thrift-http-conn-{client_address[1]}",
            daemon=True,
        ).start()

    def shutdown_request(self, request: Any) -> None:
        """Forget and close a finished connection."""
        with self._lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection failed (a TLS handshake with a plain client, a reset): log it, do
        not print a traceback on the server's standard error."""
        _log.info("HTTP connection %s dropped", client_address, exc_info=True)


class _ThriftRequestHandler(BaseHTTPRequestHandler):
    """One HTTP connection: each POST is one Thrift call."""

    server: ThriftHttpServer
    protocol_version = "HTTP/1.1"  # keep-alive: Hive's JDBC driver reuses its connections
    server_version = "hudilite-thriftserver"
    timeout = HTTP_IDLE_TIMEOUT

    def setup(self) -> None:
        # ``raw`` stays the TCP socket: the handler watches it for a hang-up during a
        # synchronous statement, and with TLS HTTP reads and writes a TLS socket on a
        # duplicate of it (as the binary transport does).
        self.raw: socket.socket = self.request
        self.peer = f"{self.client_address[0]}:{self.client_address[1]}"
        if self.server.tls_handshake is not None:
            self.request = self.server.tls_handshake(self.raw, self.peer)
        super().setup()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if self.request is not self.raw:
                with contextlib.suppress(OSError):
                    self.request.close()

    def version_string(self) -> str:
        # why: the Server header need not tell the Python version
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        # why: BaseHTTPRequestHandler writes one line per request to standard error
        _log.debug("%s %s", self.peer, format % args)

    def do_POST(self) -> None:
        """Authenticate the request, run its Thrift call, answer with the reply. The
        credentials (headers) are checked before the body is read: a refused request's
        body is read only when small (:data:`UNAUTHENTICATED_BODY`), to answer its call."""
        server = self.server
        length = self._length()
        if length is None:
            return
        target = urllib.parse.urlsplit(self.path).path
        if target != server.path and not target.startswith(server.path + "/"):
            self._refuse(
                HTTPStatus.NOT_FOUND, f"no Thrift service at {target}", self._small_body(length)
            )
            return
        user = self._user(length)
        if user is None:
            return
        body = self._read(length)
        if body is None:
            return
        handler = server.handler_for(user, self.peer, self.raw)
        reply = TMemoryBuffer()
        try:
            TCLIService.Processor(handler).process(
                binary_protocol(TMemoryBuffer(body), MAX_FRAME), binary_protocol(reply, MAX_FRAME)
            )
        except Exception as exc:  # bytes that are not a TCLIService call
            detail = str(exc) or type(exc).__name__
            _log.info("HTTP request from %s is not a Thrift call: %s", self.peer, detail)
            self._refuse(HTTPStatus.BAD_REQUEST, f"not a TCLIService call: {detail}", body)
            return
        self._answer(HTTPStatus.OK, reply.getvalue(), "application/x-thrift")

    def _length(self) -> int | None:
        """The request's Content-Length; None after answering a missing or bad one."""
        raw = self.headers.get("Content-Length")
        if raw is None:
            # why: chunked bodies are not decoded by http.server; Thrift clients send a length
            self.close_connection = True
            self._refuse(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is required", b"")
            return None
        try:
            length = int(raw)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_FRAME:
            self.close_connection = True  # the body cannot be skipped: end the connection
            status = HTTPStatus.BAD_REQUEST if length < 0 else HTTPStatus.REQUEST_ENTITY_TOO_LARGE
            self._refuse(status, f"bad Content-Length {raw!r} (at most {MAX_FRAME})", b"")
            return None
        return length

    def _read(self, length: int) -> bytes | None:
        """The body (``length`` bytes); None when the client went away mid-body."""
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True
            return None
        return body

    def _small_body(self, length: int) -> bytes:
        """The body of a refused request when it is small, else nothing: the body is
        left unread and the connection ends after the answer."""
        if length > UNAUTHENTICATED_BODY:
            self.close_connection = True
            return b""
        return self._read(length) or b""

    def _user(self, length: int) -> str | None:
        """Who the request runs as; None after answering 401."""
        server = self.server
        try:
            credentials = parse_basic(self.headers.get("Authorization"))
        except ValueError as exc:
            self._unauthorized(str(exc), length)
            return None
        if credentials is None:
            if server.require_credentials:
                self._unauthorized(
                    "authentication required: send the user name and password "
                    "(Authorization: Basic)",
                    length,
                )
                return None
            credentials = ("", "")
        try:
            user = server.authenticate(credentials[0], credentials[1], self.peer)
        except LoginRefused as exc:
            self._unauthorized(str(exc), length)
            return None
        if user is None:
            self._unauthorized(f"authentication failed for user {credentials[0]!r}", length)
        return user

    def _unauthorized(self, message: str, length: int) -> None:
        self._refuse(
            HTTPStatus.UNAUTHORIZED,
            message,
            self._small_body(length),
            {"WWW-Authenticate": f'Basic realm="{REALM}"'},
        )

    def _refuse(
        self,
        status: HTTPStatus,
        message: str,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``status`` with ``message``: as a Thrift exception reply when ``body`` is
        a Thrift call (see :func:`_thrift_exception`), as plain text otherwise."""
        text = f"HTTP {status.value}: {message}"
        reply = _thrift_exception(body, text)
        if reply is None:
            self._answer(status, (text + "\n").encode(), "text/plain; charset=utf-8", headers)
        else:
            self._answer(status, reply, "application/x-thrift", headers)

    def _answer(
        self,
        status: HTTPStatus,
        payload: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)
