"""Fixtures for the Thrift server tests: one in-process server on the shared SparkSession.

The server runs in the test process (``hudilite.thriftserver.serve(spark=...)``) so the
tests pay for no second JVM; clients (PyHive, SQLAlchemy, raw TCLIService calls) talk to
it over real sockets on 127.0.0.1. It runs with ``--auth password`` and three users, one
per role (:data:`tests.server.clients.USERS`). ``test_cli_server.py`` starts the real
``hudilite thriftserver`` command once, for beeline and SIGTERM.
"""

from __future__ import annotations

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
    warehouse = tmp_path_factory.mktemp("thrift-warehouse")
    with serve(
        warehouse,
        port=0,
        auth="password",
        users_file=users_file,
        conf=SESSION_OPTIONS,
        spark=spark,
    ) as srv:
        yield srv
