"""A HiveServer2-compatible Thrift server for hudilite SQL (``hudilite thriftserver``).

BI tools, ``beeline``, JDBC programs, PyHive and the SQLAlchemy ``hive://`` dialect connect
to it as to HiveServer2 or Spark's Thrift server; every statement runs through a hudilite
SQL session (:mod:`hudilite.sqlext`), so DML, MERGE and CALL work on hudilite tables.
Modules: :mod:`.server` (sockets, threads, ``serve``), :mod:`.handler` (the TCLIService
calls), :mod:`.sessions` (sessions, operations, timeouts), :mod:`.operations` (running and
streaming one statement), :mod:`.metadata` (GetTables, GetColumns, ...), :mod:`.rowsets`
(types and row sets), :mod:`.errors` (SQLSTATEs), :mod:`.users` (users file and roles),
:mod:`.sasl_transport` (SASL PLAIN, server side), :mod:`.http_transport` (HiveServer2's
HTTP transport mode), :mod:`.protocol` (Thrift's binary protocol with its C module),
:mod:`.variables` (Hive variable substitution), :mod:`.sandbox` (what a signed-in user may run
beyond its role), :mod:`.limits` (login throttling, the accept loop's reserve descriptor).
See docs/bi-tools.md.
"""

from .server import AUTH_MODES, TRANSPORT_MODES, Server, serve, tls_context
from .users import ROLES, UserStore

__all__ = ["AUTH_MODES", "ROLES", "TRANSPORT_MODES", "Server", "UserStore", "serve", "tls_context"]
