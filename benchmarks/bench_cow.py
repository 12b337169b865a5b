"""Copy-on-write benchmark: hudilite vs deltalake (delta-rs) on the same data, in one run.

For each N: bulk-load N trips-like rows (string key, long ts, 7 other columns,
20 city partitions), then upsert batches of 100,000 rows (half updates of
random existing keys across all partitions, half new keys), then full scans:
into a pyarrow Table (``Table.to_arrow`` vs ``DeltaTable.to_pyarrow_table``)
and, for hudilite, as a Spark DataFrame drained into Spark's ``noop`` sink.
deltalake does the same with ``write_deltalake`` and a MERGE on the key.
Prints a Markdown table of medians and the hudilite/deltalake ratios; with
``--out`` it also writes them to a file (``docs/dev/benchmark-diary.md`` keeps the runs).

    python benchmarks/bench_cow.py --rows 1000000 10000000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CITIES = [f"city_{i:02d}" for i in range(20)]
UPSERT_ROWS = 100_000


def make_rows(start: int, count: int, seed: int, ts_base: int = 1_700_000_000_000) -> pa.Table:
    """Deterministic trips-like rows with keys ``trip-<n>`` for n in [start, start+count)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + count)
    return _rows_for_ids(ids, rng, ts_base)


def _rows_for_ids(ids: np.ndarray, rng: np.random.Generator, ts_base: int) -> pa.Table:
    n = len(ids)
    keys = pa.array([f"trip-{i:010d}" for i in ids.tolist()], pa.string())
    return pa.table(
        {
            "uuid": keys,
            "ts": pa.array(ts_base + rng.integers(0, 10_000_000, n), pa.int64()),
            "rider": pa.array([f"rider-{x}" for x in rng.integers(0, 100_000, n).tolist()]),
            "driver": pa.array([f"driver-{x}" for x in rng.integers(0, 50_000, n).tolist()]),
            "fare": pa.array(rng.random(n) * 100.0, pa.float64()),
            "tip": pa.array(rng.random(n) * 20.0, pa.float64()),
            "distance_km": pa.array(rng.random(n) * 50.0, pa.float64()),
            "passengers": pa.array(rng.integers(1, 6, n), pa.int32()),
            "begin_lat": pa.array(rng.random(n) * 180.0 - 90.0, pa.float64()),
            "city": pa.array([CITIES[i % 20] for i in ids.tolist()], pa.string()),
        }
    )


def upsert_batch(n_existing: int, round_no: int, rows: int = UPSERT_ROWS) -> pa.Table:
    """Half updates of random existing keys (all partitions), half new keys."""
    rng = np.random.default_rng(1000 + round_no)
    half = rows // 2
    updates = rng.choice(n_existing, size=half, replace=False)
    new = np.arange(n_existing + round_no * half, n_existing + (round_no + 1) * half)
    # Later ts than the load so event-time ordering takes the updates.
    return _rows_for_ids(np.concatenate([updates, new]), rng, ts_base=1_800_000_000_000)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@dataclass
class Result:
    engine: str
    rows: int
    load_s: float = 0.0
    upserts: list[float] = field(default_factory=list)
    scans: list[float] = field(default_factory=list)  # into an Arrow table in this process
    data_scans: list[float] = field(default_factory=list)  # data columns only (no meta)
    spark_scans: list[float] = field(default_factory=list)  # Spark DataFrame, noop sink


def write_source(tmp: str, table: pa.Table, name: str) -> str:
    path = os.path.join(tmp, f"{name}.parquet")
    # Row groups of 128k rows let Spark split the input across its cores.
    pq.write_table(table, path, row_group_size=128 * 1024)
    return path


def bench_hudilite(spark, tmp: str, n: int, load_path: str, batches: list[str]) -> Result:
    import hudilite

    res = Result("hudilite", n)
    src = spark.read.parquet(load_path)
    schema = pq.read_schema(load_path)
    t = hudilite.Table.create(
        spark,
        os.path.join(tmp, "hudi_trips"),
        schema,
        record_key="uuid",
        ordering_field="ts",
        partition_by=["city"],
        table_version=6,
    )
    res.load_s = timed(lambda: t.write(src, operation="bulk_insert"))
    for path in batches:
        df = spark.read.parquet(path).cache()
        df.count()
        res.upserts.append(timed(lambda df=df: t.write(df, operation="upsert")))
        df.unpersist()
    for _ in range(len(batches)):
        res.scans.append(timed(lambda: t.to_arrow()))
        res.data_scans.append(timed(lambda: t.to_arrow(columns=list(schema.names))))
        res.spark_scans.append(
            timed(lambda: t.read().write.format("noop").mode("overwrite").save())
        )
    return res


def bench_delta(tmp: str, n: int, load_path: str, batches: list[str]) -> Result:
    from deltalake import DeltaTable, write_deltalake

    res = Result("deltalake", n)
    path = os.path.join(tmp, "delta_trips")
    res.load_s = timed(
        lambda: write_deltalake(path, pq.read_table(load_path), partition_by=["city"])
    )
    for b in batches:
        source = pq.read_table(b)

        def merge(source=source) -> None:
            (
                DeltaTable(path)
                .merge(source, predicate="t.uuid = s.uuid", source_alias="s", target_alias="t")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute()
            )

        res.upserts.append(timed(merge))
    for _ in range(len(batches)):
        res.scans.append(timed(lambda: DeltaTable(path).to_pyarrow_table()))
        res.data_scans.append(res.scans[-1])
    return res


def report(results: list[tuple[Result, Result]]) -> str:
    lines = [
        "| rows | step | hudilite (s, median) | deltalake (s, median) | ratio |",
        "|---:|---|---:|---:|---:|",
    ]
    for h, d in results:
        for step, hv, dv in (
            ("bulk load", h.load_s, d.load_s),
            (
                f"COW upsert {UPSERT_ROWS:,}",
                statistics.median(h.upserts),
                statistics.median(d.upserts),
            ),
            ("full scan to Arrow", statistics.median(h.scans), statistics.median(d.scans)),
            (
                "scan of the 10 data columns to Arrow (no Hudi meta columns)",
                statistics.median(h.data_scans),
                statistics.median(d.data_scans),
            ),
            (
                "full scan as Spark DataFrame (noop sink) vs deltalake to Arrow",
                statistics.median(h.spark_scans),
                statistics.median(d.scans),
            ),
        ):
            lines.append(f"| {h.rows:,} | {step} | {hv:.2f} | {dv:.2f} | {hv / dv:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="upsert rounds and scans per engine")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    parser.add_argument("--workdir", help="where tables go (default: a temp dir, removed after)")
    args = parser.parse_args(argv)

    import hudilite

    spark = hudilite.spark_session(driver_memory=os.environ.get("HUDILITE_DRIVER_MEMORY", "8g"))
    results = []
    for n in args.rows:
        tmp = tempfile.mkdtemp(prefix=f"bench{n}_", dir=args.workdir)
        try:
            load_path = write_source(tmp, make_rows(0, n, seed=n), "load")
            batches = [
                write_source(tmp, upsert_batch(n, r), f"upsert{r}") for r in range(args.repeats)
            ]
            print(f"[{n:,} rows] hudilite ...", file=sys.stderr, flush=True)
            h = bench_hudilite(spark, tmp, n, load_path, batches)
            print(f"[{n:,} rows] deltalake ...", file=sys.stderr, flush=True)
            d = bench_delta(tmp, n, load_path, batches)
            results.append((h, d))
            print(report([(h, d)]), file=sys.stderr, flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    table = report(results)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
