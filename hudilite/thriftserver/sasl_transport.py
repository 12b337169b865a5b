"""The server side of Thrift's SASL transport, with the PLAIN mechanism.

Thrift ships only the client side of its SASL transport for Python (``thrift_sasl``), and
``pure-sasl`` only client mechanisms, so the server side lives here. The framing is Thrift's
``TSaslTransport`` (the same bytes ``thrift_sasl.TSaslClientTransport``, Hive's JDBC driver
and HiveServer2 use):

* negotiation messages: a 1-byte status (``START`` = 1, ``OK`` = 2, ``BAD`` = 3,
  ``ERROR`` = 4, ``COMPLETE`` = 5), a 4-byte big-endian payload length, the payload. The
  client opens with ``START`` carrying the mechanism name, then sends its initial response
  (status ``OK`` from ``thrift_sasl``, ``COMPLETE`` from Java's client). The server answers
  ``COMPLETE`` when the client is authenticated, else ``BAD`` with a message, and closes;
* after negotiation every Thrift message travels in data frames: a 4-byte big-endian length
  then the bytes (PLAIN negotiates no security layer, so frames are not wrapped).

PLAIN's initial response is ``authzid NUL authcid NUL passwd`` (RFC 4616 section 2).
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from io import BytesIO
from typing import NoReturn

from thrift.transport.TTransport import TTransportBase, TTransportException

from hudilite.errors import HudiliteError

__all__ = ["MAX_FRAME", "LoginRefused", "SaslAuthError", "SaslServerTransport"]

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
#: Largest negotiation payload accepted: a mechanism name or PLAIN credentials.
MAX_NEGOTIATION = 64 * 1024
#: Largest data frame accepted (a garbage length must not make the server allocate it).
MAX_FRAME = 256 * 1024 * 1024

#: Checks a user name and password: the name the session runs as, or None if refused.
Authenticator = Callable[[str, str], str | None]


class LoginRefused(HudiliteError):
    """An authenticator's refusal with its own message (a locked-out user)."""


class SaslAuthError(TTransportException):
    """Negotiation failed: bad credentials, an unknown mechanism or a malformed message."""


class SaslServerTransport(TTransportBase):
    """A SASL PLAIN server transport over ``trans`` (an open ``TSocket``).

    :meth:`negotiate` runs the handshake and returns the authenticated user; afterwards
    :meth:`read`, :meth:`write` and :meth:`flush` move Thrift bytes in data frames.
    """

    def __init__(self, trans: TTransportBase) -> None:
        self._trans = trans
        self._rbuf = BytesIO()
        self._wbuf = BytesIO()
        self.user: str | None = None

    # ------------------------------------------------------------------ negotiation
    def negotiate(self, authenticate: Authenticator) -> str:
        """Authenticate the client; returns the user name, or raises :class:`SaslAuthError`
        after telling the client why (``BAD``/``ERROR``)."""
        status, mechanism = self._recv()
        if status != START:
            self._refuse(ERROR, f"expected a SASL START message, got status {status}")
        name = mechanism.decode("ascii", "replace").strip().upper()
        if name != "PLAIN":
            self._refuse(BAD, f"unsupported SASL mechanism {name!r}: this server offers PLAIN")
        status, response = self._recv()
        if status not in (OK, COMPLETE):
            self._refuse(ERROR, f"expected the PLAIN response, got status {status}")
        parts = response.split(b"\0")
        if len(parts) != 3:
            self._refuse(BAD, "malformed PLAIN response: expected authzid NUL user NUL password")
        _authzid, user_b, password_b = parts
        user = user_b.decode("utf-8", "replace")
        password = password_b.decode("utf-8", "replace")
        try:
            accepted = authenticate(user, password)
        except LoginRefused as exc:
            self._refuse(BAD, str(exc))
        if accepted is None:
            self._refuse(BAD, f"authentication failed for user {user!r}")
        self._send(COMPLETE, b"")
        self.user = accepted
        return accepted

    def _refuse(self, status: int, message: str) -> NoReturn:
        # The client may be gone already; the refusal stands either way.
        with contextlib.suppress(OSError, TTransportException):
            self._send(status, message.encode())
        raise SaslAuthError(TTransportException.NOT_OPEN, message)

    def _send(self, status: int, payload: bytes) -> None:
        self._trans.write(struct.pack(">BI", status, len(payload)) + payload)
        self._trans.flush()

    def _recv(self) -> tuple[int, bytes]:
        status, length = struct.unpack(">BI", self._trans.readAll(5))
        if length > MAX_NEGOTIATION:
            self._refuse(ERROR, f"SASL message of {length} bytes is too long")
        return status, self._trans.readAll(length) if length else b""

    # ------------------------------------------------------------------ data frames
    def isOpen(self) -> bool:
        """Whether the underlying socket is open."""
        return bool(self._trans.isOpen())

    def open(self) -> None:
        """Server transports arrive open; nothing to do."""

    def close(self) -> None:
        """Close the underlying socket."""
        self._trans.close()

    def read(self, sz: int) -> bytes:
        """Up to ``sz`` bytes of the current frame (the next frame when it is used up)."""
        data = self._rbuf.read(sz)
        if data:
            return data
        (length,) = struct.unpack(">I", self._trans.readAll(4))
        if length > MAX_FRAME:
            raise TTransportException(
                TTransportException.SIZE_LIMIT, f"frame of {length} bytes is too large"
            )
        self._rbuf = BytesIO(self._trans.readAll(length))
        return self._rbuf.read(sz)

    def write(self, buf: bytes) -> None:
        """Buffer ``buf`` for the next frame."""
        self._wbuf.write(buf)

    def flush(self) -> None:
        """Send the buffered bytes as one frame."""
        data = self._wbuf.getvalue()
        self._wbuf = BytesIO()
        self._trans.write(struct.pack(">I", len(data)) + data)
        self._trans.flush()
