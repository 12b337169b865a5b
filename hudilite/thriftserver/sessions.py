"""Server state: client sessions, their operations, settings and idle timeouts.

Each HiveServer2 session is a hudilite SQL session (:func:`hudilite.sqlext.session.connect`:
its own current database and ``SET`` options) on its own ``SparkSession.newSession()``: one
SparkContext (one JVM, shared executors and cache) with per-session SQL conf and temporary
views, as Spark's own Thrift server isolates its sessions. Statements of one session run
one at a time; sessions run in parallel.

Server settings (``--conf`` keys, seconds):

* ``hudilite.thriftserver.idle.session.timeout`` (default 3600): a session with no request
  for this long and no running operation is closed; 0 turns it off.
* ``hudilite.thriftserver.idle.operation.timeout`` (default 900): a finished operation not
  fetched or polled for this long is closed.
* ``hudilite.thriftserver.shutdown.grace`` (default 30): on stop, running statements get this
  long to finish before they are cancelled (a cancelled write rolls back). Meanwhile their
  clients poll and fetch as usual, and new sessions and statements are refused (SQLSTATE
  ``08004``); the clients then get up to 3 s to see how their statements ended.
* ``hudilite.thriftserver.show.tables`` (``hive`` by default): ``SHOW TABLES`` answers with
  Hive's single ``tab_name`` column, which HiveServer2 clients (the SQLAlchemy ``hive://``
  dialect's ``get_table_names``) expect; ``spark`` keeps Spark's three columns.
* ``hudilite.thriftserver.query.timeout`` (default 0: none; Hive's
  ``hive.query.timeout.seconds`` is read too): a statement running longer is cancelled
  and fails with SQLSTATE ``HYT00``. A client's own ``queryTimeout`` (JDBC
  ``setQueryTimeout``) applies when shorter.
* ``hudilite.thriftserver.max.connections`` (default 500): connections beyond it are
  closed at once (each holds a thread and a file descriptor).
* ``hudilite.thriftserver.max.result.rows`` (default 0: none): a client fetching past this
  many rows of one result gets an error instead (the result streams, so this bounds what
  one statement sends, not the server's memory).
* ``hudilite.thriftserver.max.result.bytes`` (default 0: none; ``64m``, ``1g``...): the
  same for the size of one result's rows (Arrow's in-memory size: a string counts its
  bytes, a number its width). The rows of a fetch are measured before they become Python
  objects, so it also bounds what one fetch adds to the server's memory.
* ``hudilite.thriftserver.login.max.failures`` (default 5) failed logins of one user from
  one address within ``hudilite.thriftserver.login.lockout`` seconds (default 60) lock
  that user out from that address for the rest of the window; every failed login is
  logged (logger ``hudilite.thriftserver.audit``).
* ``hudilite.thriftserver.admin.trusted`` (default false): admins skip the statement
  sandbox (:mod:`.sandbox`) and run anything the server's OS user can.
* ``hudilite.thriftserver.warm.up`` (default true): run ``SELECT 1`` in a session of the
  server's own before listening, so the first client's statement does not pay for Spark's
  first query (:func:`.server.warm_up`).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from TCLIService import ttypes as tt

from hudilite.spark.session import prepare_session
from hudilite.sqlext.session import Session, connect

from .errors import DENIED, SHUTTING_DOWN, ClientError
from .limits import parse_bytes
from .operations import Operation, new_handle_id
from .sandbox import Policy, Sandbox
from .variables import SPARK_SUBSTITUTE

__all__ = ["HiveSession", "ServerSettings", "SessionRegistry"]

PREFIX = "hudilite.thriftserver."
MAX_PROTOCOL = tt.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
#: Operation states that count as running (an operation is tracked before it starts).
_RUNNING = (
    tt.TOperationState.INITIALIZED_STATE,
    tt.TOperationState.PENDING_STATE,
    tt.TOperationState.RUNNING_STATE,
)
#: On stop, how long (seconds, within the grace) the clients of statements that were running
#: have to poll their outcome before their sessions close.
OUTCOME_WAIT = 3.0


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


#: Server settings: key (after the prefix) -> (attribute, parser, what a bad value must be).
_SETTINGS: dict[str, tuple[str, Callable[[str], object], str]] = {
    "idle.session.timeout": ("idle_session_timeout", float, "seconds"),
    "idle.operation.timeout": ("idle_operation_timeout", float, "seconds"),
    "shutdown.grace": ("shutdown_grace", float, "seconds"),
    "query.timeout": ("query_timeout", float, "seconds"),
    "max.connections": ("max_connections", int, "a whole number"),
    "max.result.rows": ("max_result_rows", int, "a whole number"),
    "max.result.bytes": ("max_result_bytes", parse_bytes, "a size in bytes (64m, 1g, ...)"),
    "login.max.failures": ("login_max_failures", int, "a whole number"),
    "login.lockout": ("login_lockout", float, "seconds"),
    "admin.trusted": ("admin_trusted", _bool, "true or false"),
    "warm.up": ("warm_up", _bool, "true or false"),
}
#: Hive's name for the statement timeout, accepted as a server setting.
HIVE_QUERY_TIMEOUT = "hive.query.timeout.seconds"


@dataclass(frozen=True)
class ServerSettings:
    """The server's own settings (module doc), parsed from ``--conf`` keys."""

    idle_session_timeout: float = 3600.0
    idle_operation_timeout: float = 900.0
    shutdown_grace: float = 30.0
    show_tables: str = "hive"
    query_timeout: float = 0.0
    max_connections: int = 500
    max_result_rows: int = 0
    max_result_bytes: int = 0
    login_max_failures: int = 5
    login_lockout: float = 60.0
    admin_trusted: bool = False
    warm_up: bool = True

    @classmethod
    def from_conf(cls, conf: Mapping[str, str]) -> ServerSettings:
        """Settings from the ``hudilite.thriftserver.*`` keys of ``conf`` (and Hive's
        ``hive.query.timeout.seconds``); a bad value raises ``ValueError`` naming the key."""
        values: dict[str, object] = {}
        raw_timeout = conf.get(HIVE_QUERY_TIMEOUT)
        if raw_timeout is not None and conf.get(PREFIX + "query.timeout") is None:
            conf = {**conf, PREFIX + "query.timeout": raw_timeout.removesuffix("s")}
        for key, (attr, parse, what) in _SETTINGS.items():
            raw = conf.get(PREFIX + key)
            if raw is not None:
                try:
                    values[attr] = parse(raw.strip())
                except ValueError:
                    raise ValueError(f"{PREFIX}{key} must be {what}, got {raw!r}") from None
                if isinstance(values[attr], int | float) and values[attr] < 0:  # type: ignore[operator]
                    raise ValueError(f"{PREFIX}{key} must not be negative, got {raw!r}")
        style = conf.get(PREFIX + "show.tables")
        if style is not None:
            if style not in ("hive", "spark"):
                raise ValueError(f"{PREFIX}show.tables must be hive or spark, got {style!r}")
            values["show_tables"] = style
        unknown = [
            k
            for k in conf
            if k.startswith(PREFIX) and k[len(PREFIX) :] not in (*_SETTINGS, "show.tables")
        ]
        if unknown:
            raise ValueError(f"unknown server setting {unknown[0]}")
        return cls(**values)  # type: ignore[arg-type]


@dataclass
class HiveSession:
    """One client session."""

    handle: tt.TSessionHandle
    user: str
    role: str
    protocol: int
    sql: Session
    sandbox: Sandbox
    variables: dict[str, str] = field(default_factory=dict)
    operations: dict[bytes, Operation] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_access: float = field(default_factory=time.monotonic)

    @property
    def key(self) -> bytes:
        """The session's GUID."""
        return bytes(self.handle.sessionId.guid)

    def busy(self) -> bool:
        """Whether an operation of this session is still running (or about to start: an
        operation is tracked before it runs)."""
        return any(op.state in _RUNNING for op in self.operations.values())


class SessionRegistry:
    """Every open session and operation of the server."""

    def __init__(
        self,
        spark: SparkSession,
        warehouse: str,
        settings: ServerSettings,
        options: Mapping[str, str] | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.settings = settings
        self.options = dict(options or {})
        self.policy = policy or Policy.for_server(warehouse, settings.admin_trusted)
        self._sessions: dict[bytes, HiveSession] = {}
        self._operations: dict[bytes, tuple[HiveSession, Operation]] = {}
        self._lock = threading.Lock()
        self._stopping = False

    @property
    def stopping(self) -> bool:
        """Whether :meth:`shutdown` has begun (new sessions and statements are refused)."""
        return self._stopping

    # ------------------------------------------------------------------ sessions
    def open(
        self, user: str, role: str, client_protocol: int, configuration: Mapping[str, str]
    ) -> HiveSession:
        """Open a session: its own SparkSession and hudilite SQL session, the protocol
        negotiated down to what both sides speak, ``use:database`` and
        ``set:hiveconf:k=v`` applied (Hive's own ``hive.*`` settings are ignored),
        ``set:hivevar:k=v`` kept as the session's Hive variables (:mod:`.variables`). A
        setting the user's role may not change (:mod:`.sandbox`) refuses the session."""
        with self._lock:
            if self._stopping:
                raise _stopping_error("no new sessions")
        spark = prepare_session(self.spark.newSession())
        sql = connect(self.warehouse, spark=spark, options=self.options)
        session = HiveSession(
            handle=tt.TSessionHandle(sessionId=new_handle_id()),
            user=user,
            role=role,
            protocol=min(client_protocol, MAX_PROTOCOL),
            sql=sql,
            sandbox=Sandbox(role, self.policy, _view_lookup(sql)),
        )
        database = None
        for key, value in configuration.items():
            if key == "use:database":
                database = value
            elif key.startswith("set:hivevar:"):
                session.variables[key[len("set:hivevar:") :]] = value
            elif key.startswith(("set:hiveconf:", "set:system:")):
                name = key.split(":", 2)[2]
                if not name.startswith("hive."):
                    session.sandbox.check_setting(name)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # no one to show them to
                        sql.set_option(name, value)
        # The server substitutes variables itself (.variables); Spark's substitution would
        # also expand ${env:...} and ${system:...} and empty unknown references.
        spark.conf.set(SPARK_SUBSTITUTE, "false")
        if database and database.lower() != "default":
            sql.use(database)
        with self._lock:
            if self._stopping:  # it began while this session was set up
                raise _stopping_error("no new sessions")
            self._sessions[session.key] = session
        return session

    def get(self, handle: tt.TSessionHandle | None, user: str | None = None) -> HiveSession:
        """The open session of ``handle``; :class:`ClientError` when there is none, or when
        ``user`` (the caller's authenticated name, None: not checked) did not open it."""
        key = bytes(handle.sessionId.guid) if handle and handle.sessionId else b""
        with self._lock:
            session = self._sessions.get(key)
        if session is None:
            raise ClientError(f"invalid session handle {_hex(key)}: no such open session")
        _check_owner(session, user, f"session {_hex(key)}")
        session.last_access = time.monotonic()
        return session

    def close(self, key: bytes) -> bool:
        """Close a session and every operation of it (running ones are cancelled)."""
        with self._lock:
            session = self._sessions.pop(key, None)
            if session is None:
                return False
            ops = list(session.operations.values())
            for op in ops:
                self._operations.pop(op.key, None)
        for op in ops:
            with contextlib.suppress(Exception):
                op.close()
        return True

    def sessions(self) -> list[HiveSession]:
        """The open sessions."""
        with self._lock:
            return list(self._sessions.values())

    # ------------------------------------------------------------------ operations
    def add(self, session: HiveSession, op: Operation) -> None:
        """Track ``op`` as an operation of ``session``, under the server's result byte cap;
        :class:`ClientError` once the server is stopping (running statements finish, new
        ones are refused)."""
        with self._lock:
            if self._stopping:
                raise _stopping_error("no new statements")
            session.operations[op.key] = op
            self._operations[op.key] = (session, op)
        op.result_bytes_limit = self.settings.max_result_bytes

    def operation(self, handle: tt.TOperationHandle | None, user: str | None = None) -> Operation:
        """The live operation of ``handle``; :class:`ClientError` when there is none, or
        when its session is not ``user``'s (None: not checked)."""
        key = bytes(handle.operationId.guid) if handle and handle.operationId else b""
        with self._lock:
            found = self._operations.get(key)
        if found is None:
            raise ClientError(f"invalid operation handle {_hex(key)}: no such operation")
        session, op = found
        _check_owner(session, user, f"operation {_hex(key)}")
        session.last_access = op.last_access = time.monotonic()
        return op

    def session_of(self, op: Operation) -> HiveSession | None:
        """The session ``op`` belongs to (None once it is closed)."""
        with self._lock:
            found = self._operations.get(op.key)
        return found[0] if found else None

    def close_operation(self, handle: tt.TOperationHandle, user: str | None = None) -> None:
        """Close and forget an operation (of ``user``'s sessions, when given)."""
        op = self.operation(handle, user)
        with self._lock:
            found = self._operations.pop(op.key, None)
            if found is not None:
                found[0].operations.pop(op.key, None)
        op.close()

    def operation_count(self) -> int:
        """How many operations are open (tests check disconnects free them)."""
        with self._lock:
            return len(self._operations)

    # ------------------------------------------------------------------ housekeeping
    def reap_idle(self, now: float | None = None) -> None:
        """Close idle sessions and operations (the timeouts of :class:`ServerSettings`)."""
        now = time.monotonic() if now is None else now
        s = self.settings
        done = (tt.TOperationState.PENDING_STATE, tt.TOperationState.RUNNING_STATE)
        with self._lock:
            stale_ops = [
                op
                for _session, op in self._operations.values()
                if s.idle_operation_timeout > 0
                and op.state not in done
                # Idle since the client last asked, or since it ended (a long statement
                # is not idle the moment it finishes).
                and now - max(op.last_access, op.ended or 0.0) > s.idle_operation_timeout
            ]
        for op in stale_ops:
            with contextlib.suppress(ClientError):
                self.close_operation(op.handle)
        for session in self.sessions():
            idle = now - session.last_access
            if s.idle_session_timeout > 0 and idle > s.idle_session_timeout and not session.busy():
                self.close(session.key)

    def shutdown(self, grace: float) -> None:
        """Let running operations finish for up to ``grace`` seconds, then close every
        session (cancelling what still runs: a cancelled write rolls back).

        From now on no session opens and no operation starts; clients may still poll,
        fetch, cancel and close (their connections stay open until this returns), so a
        client waiting for its running statement sees it finish."""
        with self._lock:
            self._stopping = True
            running = [op for _s, op in self._operations.values() if op.state in _RUNNING]
        deadline = time.monotonic() + grace
        while any(s.busy() for s in self.sessions()) and time.monotonic() < deadline:
            time.sleep(0.1)
        # The clients of the statements that ran on get a moment to poll how they ended:
        # a client that never learns its write committed would report it as failed.
        drained = min(deadline, time.monotonic() + OUTCOME_WAIT)
        while time.monotonic() < drained and not all(op.outcome_seen() for op in running):
            time.sleep(0.05)
        for session in self.sessions():
            self.close(session.key)


def _stopping_error(what: str) -> ClientError:
    return ClientError(f"the server is shutting down: {what}", SHUTTING_DOWN)


def _check_owner(session: HiveSession, user: str | None, what: str) -> None:
    """Refuse ``user`` a session (or its operation) another user opened: handles are
    random, but one must not be enough to act as someone else (over HTTP every request
    carries its own credentials and a handle). Checked before the access time is touched,
    so a refused request does not keep another user's session alive. The owner's name is
    not told."""
    if user is not None and session.user != user:
        raise ClientError(f"{what} belongs to another user: user {user!r} may not use it", DENIED)


def _view_lookup(sql: Session) -> Callable[[str | None, str], tuple[str, str] | None]:
    """The stored SQL of a persistent view of ``sql``'s catalog (the current database when
    none is named) and the database its own unqualified names resolve in; None when the
    name is not a view."""

    def lookup(db: str | None, name: str) -> tuple[str, str] | None:
        database = (db or sql.current_database).lower()
        try:
            if not sql.catalog.view_exists(database, name.lower()):
                return None
            entry = sql.catalog.get_view(database, name.lower())
            return entry.sql, entry.context_database
        except Exception:  # not a catalog name (a path, an invalid name): no view
            return None

    return lookup


def _hex(key: bytes) -> str:
    try:
        return str(uuid.UUID(bytes=key))
    except ValueError:
        return key.hex() or "<none>"
