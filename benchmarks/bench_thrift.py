"""Thrift server benchmark: hudilite's server against Spark's own Thrift server, in one run.

Both servers run locally on the same machine (``local[2]``) and answer the same statements
through the same client (PyHive, SASL PLAIN, one connection each):

* latency: ``--queries`` small queries (``SELECT sum(id) FROM range(1000)``), p50 and p95
  of the wall time from ``execute`` to the last row fetched;
* throughput: a ``--rows``-row result (``SELECT id, CAST(id AS STRING) FROM range(n)``)
  fetched in batches of ``--fetch-size`` rows, rows per second: the median of
  ``--fetch-runs`` runs (one run alone swings by a third on a busy machine).

Spark's server is ``org.apache.spark.sql.hive.thriftserver.HiveThriftServer2`` from the
pyspark wheel, started with ``spark-submit`` (in-memory catalog, incremental collect so it
streams the result as hudilite's server does). Prints a Markdown table; ``--out FILE`` also
writes it (docs/benchmarks.md keeps today's figures).

    python benchmarks/bench_thrift.py --rows 1000000 --queries 200
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyspark
from pyhive import hive

SMALL = "SELECT sum(id) FROM range(1000)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on port {port}")


def start_spark_server(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Spark's HiveThriftServer2 on a free port (its metastore and logs in ``workdir``)."""
    port = _free_port()
    home = Path(pyspark.__file__).parent
    cmd = [
        str(home / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--conf",
        "spark.sql.catalogImplementation=in-memory",
        "--conf",
        "spark.sql.thriftServer.incrementalCollect=true",
        "--conf",
        "spark.ui.enabled=false",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
        "spark-internal",
    ]
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}
    log = (workdir / "spark-thriftserver.log").open("wb")
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    _wait_port(port)
    return proc, port


def measure(
    port: int, queries: int, rows: int, fetch_size: int, fetch_runs: int
) -> dict[str, float]:
    """p50/p95 small-query latency (ms) and fetch throughput (rows/s, the median of
    ``fetch_runs`` runs) on ``port``."""
    conn = hive.connect("127.0.0.1", port, username="bench")
    cur = conn.cursor(arraysize=fetch_size)
    for _ in range(5):  # warm up: JIT, Python workers
        cur.execute(SMALL)
        cur.fetchall()
    times = []
    for _ in range(queries):
        t0 = time.perf_counter()
        cur.execute(SMALL)
        cur.fetchall()
        times.append(time.perf_counter() - t0)
    rates = []
    for _ in range(fetch_runs):
        t0 = time.perf_counter()
        cur.execute(f"SELECT id, CAST(id AS STRING) AS s FROM range({rows})")
        seen = 0
        while batch := cur.fetchmany(fetch_size):
            seen += len(batch)
        elapsed = time.perf_counter() - t0
        assert seen == rows, (seen, rows)
        rates.append(rows / elapsed)
    conn.close()
    q = statistics.quantiles(times, n=20)
    return {
        "p50_ms": 1000 * statistics.median(times),
        "p95_ms": 1000 * q[18],
        "rows_s": statistics.median(rates),
    }


def _run(label: str, fn: Callable[[], dict[str, float]]) -> dict[str, float]:
    print(f"measuring {label} ...", file=sys.stderr, flush=True)
    return fn()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--fetch-size", type=int, default=10_000)
    parser.add_argument("--fetch-runs", type=int, default=3, help="median of this many fetches")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    # why: importing pyspark and the server only once the arguments parsed (--help is quick)
    import hudilite
    from hudilite.thriftserver import serve

    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        spark = hudilite.spark_session(master="local[2]")
        with serve(Path(tmp) / "wh", port=0, spark=spark) as server:
            results["hudilite thriftserver"] = _run(
                "hudilite",
                lambda: measure(
                    server.port, args.queries, args.rows, args.fetch_size, args.fetch_runs
                ),
            )
        spark.stop()
        proc, port = start_spark_server(Path(tmp))
        try:
            results["Spark Thrift server"] = _run(
                "Spark",
                lambda: measure(port, args.queries, args.rows, args.fetch_size, args.fetch_runs),
            )
        finally:
            proc.terminate()
            proc.wait(60)
    lines = [
        f"Thrift servers, local[2], PyHive client; {args.queries} small queries, "
        f"{args.rows:,} rows fetched {args.fetch_size:,} at a time "
        f"(fetch rate: median of {args.fetch_runs} runs)",
        "",
        "| server | small query p50 (ms) | p95 (ms) | fetch (rows/s) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['rows_s']:,.0f} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()
