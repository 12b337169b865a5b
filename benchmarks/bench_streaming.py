"""Streaming benchmark: sustained ingest rate and end-to-end freshness of a MOR table.

A merge-on-read table (version 8, 20 city partitions) is bulk-loaded with ``--rows``
trips-like rows (``bench_cow.make_rows``). Then one ``Table.write_stream`` query upserts
Parquet files of 100,000 rows (half updates of random existing keys, half new keys:
``bench_cow.upsert_batch``) from a landing folder, one file per micro-batch, at a
``--trigger`` second processing-time trigger, with async compaction on (its default for
streamed MOR tables; a plan every ``--delta-commits`` delta commits).

1. **Sustained ingest**: ``--backlog`` files are landed before the query starts, so every
   trigger finds a full batch; the rate is the backlog's rows over the time from the
   first batch's start to the last batch's commit (the trigger caps it at
   100,000 / trigger rows/s when a batch takes less than the interval).
2. **Freshness**: then ``--live`` files land one per trigger interval while a
   ``format("hudilite")`` stream reads the table (1 s trigger); each row carries the
   epoch milliseconds its file landed (the atomic rename into the folder), and the
   reader records when each file's rows became visible to it. p50/p95 over the files.

Prints a Markdown table (``--out`` writes it to a file too).

    python benchmarks/bench_streaming.py                      # 1M rows, a few minutes
    python benchmarks/bench_streaming.py --rows 10000000      # the 10M-row table
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
from bench_cow import make_rows, upsert_batch

LANDED_COL = "landed_ms"


def _with_landed(table: pa.Table, landed_ms: int) -> pa.Table:
    return table.append_column(LANDED_COL, pa.array([landed_ms] * table.num_rows, pa.int64()))


def _land(folder: str, name: str, batch: pa.Table) -> None:
    """Write ``batch`` beside the folder and rename it in (Spark never sees a partial file);
    the landing time goes into every row."""
    tmp = os.path.join(os.path.dirname(folder), f".{name}")
    pq.write_table(_with_landed(batch, int(time.time() * 1000)), tmp)
    os.rename(tmp, os.path.join(folder, name))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows bulk-loaded first")
    parser.add_argument("--backlog", type=int, default=6, help="batches for the ingest rate")
    parser.add_argument("--live", type=int, default=6, help="batches for the freshness")
    parser.add_argument("--trigger", type=float, default=10.0, help="trigger interval (s)")
    parser.add_argument("--delta-commits", type=int, default=3, help="compaction trigger")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    parser.add_argument("--workdir", help="where tables go (default: a temp dir, removed after)")
    args = parser.parse_args(argv)

    import hudilite
    from hudilite.spark.convert import spark_schema
    from hudilite.spark.streaming import compactor_of

    spark = hudilite.spark_session(driver_memory=os.environ.get("HUDILITE_DRIVER_MEMORY", "4g"))
    tmp = tempfile.mkdtemp(prefix=f"benchstream{args.rows}_", dir=args.workdir)
    try:
        landing = os.path.join(tmp, "landing")
        os.mkdir(landing)
        load = _with_landed(make_rows(0, args.rows, seed=args.rows), 0)
        pq.write_table(load, os.path.join(tmp, "load.parquet"), row_group_size=128 * 1024)
        table = hudilite.Table.create(
            spark,
            os.path.join(tmp, "mor"),
            load.schema,
            record_key="uuid",
            ordering_field="ts",
            partition_by=["city"],
            table_type="mor",
            table_version=8,
            # Updates to logs, inserts to new file groups (see bench_mor.py).
            options={"hoodie.parquet.small.file.limit": "0"},
        )
        t0 = time.perf_counter()
        table.write(spark.read.parquet(os.path.join(tmp, "load.parquet")), "bulk_insert")
        load_s = time.perf_counter() - t0
        total = args.backlog + args.live
        batches = [upsert_batch(args.rows, r) for r in range(total)]
        for r in range(args.backlog):
            _land(landing, f"batch-{r:04d}.parquet", batches[r])

        trigger = f"{args.trigger} seconds"
        source = (
            spark.readStream.schema(spark_schema(load.schema))
            .option("maxFilesPerTrigger", 1)
            .parquet(landing)
        )
        before = _delta_commits(table)
        query = table.write_stream(
            source,
            checkpoint_location=os.path.join(tmp, "chk"),
            trigger={"processingTime": trigger},
            options={"hoodie.compact.inline.max.delta.commits": str(args.delta_commits)},
        )
        started = time.perf_counter()
        while _delta_commits(table) < before + args.backlog:
            time.sleep(0.2)
        ingest_s = time.perf_counter() - started
        rate = args.backlog * batches[0].num_rows / ingest_s
        durations = [
            p["durationMs"].get("addBatch", 0) / 1000
            for p in query.recentProgress
            if p.get("numInputRows", 0) > 0
        ]

        seen: list[float] = []

        def visible(df: object, _batch_id: int) -> None:
            now_ms = time.time() * 1000
            for row in df.groupBy(LANDED_COL).count().collect():  # type: ignore[attr-defined]
                if row[LANDED_COL]:
                    seen.append((now_ms - row[LANDED_COL]) / 1000)

        reader = (
            spark.readStream.format("hudilite")
            .option("hoodie.datasource.streaming.startOffset", "latest")
            .load(table.path)
            .writeStream.foreachBatch(visible)
            .option("checkpointLocation", os.path.join(tmp, "chk-reader"))
            .trigger(processingTime="1 second")
            .start()
        )
        feeder = threading.Thread(
            target=_feed, args=(landing, batches[args.backlog :], args.backlog, args.trigger)
        )
        feeder.start()
        feeder.join()
        deadline = time.monotonic() + 30 * args.trigger
        while len(seen) < args.live and time.monotonic() < deadline:
            time.sleep(0.5)
        reader.stop()
        query.stop()
        compactor = compactor_of(query)
        compactions = len(compactor.completed) if compactor is not None else 0
        if compactor is not None:
            compactor.stop()
    finally:
        if args.workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        "| table rows | measure | value |",
        "|---:|---|---:|",
        f"| {args.rows:,} | bulk load (s) | {load_s:.1f} |",
        f"| {args.rows:,} | sustained ingest, {args.backlog} x 100,000-row batches, "
        f"{args.trigger:g} s trigger (rows/s) | {rate:,.0f} |",
        f"| {args.rows:,} | micro-batch write, median / max (s) | "
        f"{statistics.median(durations):.1f} / {max(durations):.1f} |",
        f"| {args.rows:,} | async compactions completed meanwhile | {compactions} |",
        f"| {args.rows:,} | freshness p50 / p95 over {len(seen)} files (s) | "
        f"{_percentile(seen, 0.5):.1f} / {_percentile(seen, 0.95):.1f} |"
        if seen
        else f"| {args.rows:,} | freshness | no file became visible |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    spark.stop()
    return 0


def _delta_commits(table: object) -> int:
    """Completed delta commits on the table's timeline."""
    return sum(
        1
        for i in table.timeline()  # type: ignore[attr-defined]
        if i.action == "deltacommit" and i.is_completed
    )


def _feed(landing: str, batches: list[pa.Table], first: int, interval: float) -> None:
    """Land one batch per ``interval`` seconds."""
    for i, batch in enumerate(batches):
        _land(landing, f"batch-{first + i:04d}.parquet", batch)
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main())
