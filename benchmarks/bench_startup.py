"""Start-up benchmark: how long before the first statement of ``hudilite sql`` and of the
Thrift server answers, and where that time goes (issue 27.7).

Three measurements, each a fresh process (nothing warm but the OS page cache):

* ``sql``: ``hudilite sql -e "SELECT 1"``, wall time from launch to exit;
* ``server``: ``hudilite thriftserver --port 0``, wall time to its ``listening`` line, then
  the first client's ``SELECT 1`` (PyHive: connect, execute, fetch), then SIGTERM;
* ``stages`` (with ``--stages``): a process doing what ``hudilite sql`` does step by step,
  timing each: the command's Python imports, ``spark_session()`` (JVM launch, SparkContext,
  SparkSession, hudilite's data source), ``connect()`` (the warehouse catalog), the first
  and second ``SELECT``.

Besides wall time each run reports CPU seconds of the whole process tree (Python, the
``spark-submit`` launcher JVM, the Spark JVM, Python workers): this process becomes a child
subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so the JVM a finished command leaves behind is
reparented here and reaped with its rusage. CPU time moves little with the machine's load;
wall time on a shared two-core machine moves a lot, so the load average is printed with
every run. Medians of ``--runs`` (default 3); ``--conf KEY=VALUE`` is passed to both
commands (``--conf spark.driver.extraJavaOptions=...`` to try JVM flags), ``--server-conf``
to the server only, ``--env KEY=VALUE`` to every process (``HUDILITE_JVM_ARCHIVE=off`` and
``--server-conf hudilite.thriftserver.warm.up=false`` measure without the start-up cuts);
``--label`` names the variant in the output; ``--out FILE`` appends the results as JSON
lines.

    python benchmarks/bench_startup.py --runs 3 --stages --label after
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HUDILITE = str(Path(sys.executable).parent / "hudilite")
PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap(pid: int, timeout: float = 120.0) -> tuple[int, float]:
    """Wait for ``pid``, then for every orphan reparented here (the JVMs), up to
    ``timeout``: (``pid``'s exit status, CPU seconds of all of them)."""
    _pid, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found, _st, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if found == 0:
            time.sleep(0.05)
            continue
        cpu += usage.ru_utime + usage.ru_stime
    return os.waitstatus_to_exitcode(status), cpu


def _load() -> float:
    return os.getloadavg()[0]


def _conf_args(confs: list[str]) -> list[str]:
    return [a for c in confs for a in ("--conf", c)]


def run_sql(workdir: Path, confs: list[str], server_confs: list[str]) -> dict[str, Any]:
    """``hudilite sql -e "SELECT 1"`` once."""
    load = _load()
    started = time.monotonic()
    proc = subprocess.Popen(
        [HUDILITE, "sql", "--warehouse", str(workdir / "wh"), *_conf_args(confs), "-e", "SELECT 1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    code, cpu = _reap(proc.pid)
    wall = time.monotonic() - started
    proc.returncode = code
    if code != 0 or b"| 1 |" not in out:
        raise RuntimeError(f"hudilite sql failed ({code}): {err.decode()[-2000:]}")
    return {"what": "sql", "wall": wall, "cpu": cpu, "load": load}


def run_server(workdir: Path, confs: list[str], server_confs: list[str]) -> dict[str, Any]:
    """``hudilite thriftserver`` once: to ``listening``, then the first ``SELECT 1``."""
    from pyhive import hive

    load = _load()
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            HUDILITE,
            "thriftserver",
            "--port",
            "0",
            "--warehouse",
            str(workdir / "wh"),
            *_conf_args(confs + server_confs),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workdir,
    )
    assert proc.stderr is not None
    port = None
    lines: list[str] = []
    while port is None:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError(f"the server did not start: {''.join(lines)[-2000:]}")
        lines.append(line)
        found = re.search(r"listening on [^ ]+:(\d+)", line)
        port = int(found.group(1)) if found else None
    listening = time.monotonic() - started
    conn = hive.connect("127.0.0.1", port, username="bench")
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == [(1,)]
    first = time.monotonic() - started - listening
    conn.close()
    proc.send_signal(signal.SIGTERM)
    proc.stderr.read()
    code, cpu = _reap(proc.pid)
    proc.returncode = code
    return {
        "what": "server",
        "listening": listening,
        "first_statement": first,
        "wall": listening + first,
        "cpu": cpu,
        "load": load,
    }


STAGES_CHILD = "--stages-child"


def _stages_child(confs: list[str]) -> None:
    """Run in a child process: time each step of ``hudilite sql`` (module doc)."""
    marks: list[tuple[str, float, float]] = []

    def mark(name: str) -> None:
        t = os.times()
        marks.append((name, time.monotonic(), t.user + t.system))

    mark("start")
    import hudilite.cli.commands  # noqa: F401  (what the command imports)

    mark("imports")
    from hudilite.spark.session import spark_session
    from hudilite.sqlext.session import connect

    conf = dict(c.split("=", 1) for c in confs)
    spark = spark_session(conf=conf or None, log_level="OFF")
    mark("spark_session")
    session = connect("wh", spark=spark)
    mark("connect")
    session.sql("SELECT 1").collect()
    mark("first SELECT")
    session.sql("SELECT 2").collect()
    mark("second SELECT")
    print(json.dumps([[n, w - marks[0][1], c] for n, w, c in marks[1:]]))


def run_stages(workdir: Path, confs: list[str], server_confs: list[str]) -> dict[str, Any]:
    load = _load()
    proc = subprocess.Popen(
        [sys.executable, __file__, STAGES_CHILD, *confs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    code, cpu = _reap(proc.pid)
    if code != 0:
        raise RuntimeError(f"stages failed ({code}): {err.decode()[-2000:]}")
    marks = json.loads(out.decode().strip().splitlines()[-1])
    result: dict[str, Any] = {"what": "stages", "cpu": cpu, "load": load}
    prev = 0.0
    for name, at, _py_cpu in marks:
        result[name] = at - prev
        prev = at
    result["wall"] = prev
    return result


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == STAGES_CHILD:
        _stages_child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--server-conf", action="append", default=[], metavar="KEY=VALUE", help="server only"
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="for every command"
    )
    parser.add_argument("--label", default="")
    parser.add_argument("--stages", action="store_true", help="also time each step")
    parser.add_argument("--only", choices=("sql", "server", "stages"), action="append")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not _become_subreaper():
        print("warning: not a subreaper: JVM CPU time is not counted", file=sys.stderr)
    for item in args.env:
        key, _, value = item.partition("=")
        os.environ[key] = value
    kinds = args.only or ["sql", "server", *(["stages"] if args.stages else [])]
    runners = {"sql": run_sql, "server": run_server, "stages": run_stages}
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        # Interleaved (sql, server, sql, server, ...) so a change of load hits every kind.
        for i in range(args.runs):
            for kind in kinds:
                r = runners[kind](Path(tmp), args.conf, args.server_conf)
                r.update(label=args.label, run=i + 1, confs=args.conf, env=args.env)
                results[kind].append(r)
                shown = " ".join(f"{k}={v:.2f}" for k, v in r.items() if isinstance(v, float))
                print(f"[{args.label}] {kind} run {i + 1}: {shown}", flush=True)
                if args.out:
                    with args.out.open("a") as f:
                        f.write(json.dumps(r) + "\n")
    print(f"\nmedians of {args.runs} ({args.label or 'no label'}):")
    for kind, runs in results.items():
        keys = [k for k, v in runs[0].items() if isinstance(v, float)]
        print(f"  {kind}: " + ", ".join(f"{k} {_median(runs, k):.2f}" for k in keys))


if __name__ == "__main__":
    main()
