"""Client helpers for the Thrift server tests: PyHive connections and raw TCLIService calls."""

from __future__ import annotations

from typing import Any

from pyhive import hive
from TCLIService import ttypes as tt

from hudilite.thriftserver import Server

#: user -> (password, role)
USERS = {
    "alice": ("alice-pw", "admin"),
    "wendy": ("wendy-pw", "writer"),
    "rita": ("rita-pw", "reader"),
}


#: Session options every connection starts with: the automatic table services only re-read
#: the timeline after each of these tiny writes.
SESSION_OPTIONS = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


def connect(server: Server | int, user: str = "alice", **kwargs: Any) -> hive.Connection:
    """A PyHive DB-API connection as ``user`` (SASL PLAIN with the user's password) to
    ``server`` (or a port)."""
    return hive.connect(
        "127.0.0.1",
        server if isinstance(server, int) else server.port,
        username=user,
        password=USERS[user][0],
        auth="CUSTOM",
        **kwargs,
    )


def rows_of(
    conn: hive.Connection, handle: tt.TOperationHandle, max_rows: int = 1000
) -> list[tuple[Any, ...]]:
    """Every row of a metadata operation, fetched with raw TCLIService calls (columnar)."""
    client = conn.client
    meta = client.GetResultSetMetadata(tt.TGetResultSetMetadataReq(operationHandle=handle))
    assert meta.status.statusCode == tt.TStatusCode.SUCCESS_STATUS, meta.status
    out: list[tuple[Any, ...]] = []
    while True:
        resp = client.FetchResults(
            tt.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=max_rows)
        )
        assert resp.status.statusCode == tt.TStatusCode.SUCCESS_STATUS, resp.status
        cols = []
        for col in resp.results.columns:
            kind = next(v for v in col.__dict__.values() if v is not None)
            values = list(kind.values)
            for i in range(len(values)):
                if kind.nulls and i // 8 < len(kind.nulls) and kind.nulls[i // 8] & (1 << (i % 8)):
                    values[i] = None
            cols.append(values)
        batch = list(zip(*cols, strict=True))
        if not batch:
            break
        out += batch
    client.CloseOperation(tt.TCloseOperationReq(operationHandle=handle))
    return out
