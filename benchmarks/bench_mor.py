"""Merge-on-read benchmark: upserts into logs vs deltalake MERGE, scans with logs, compaction.

For each N: bulk-load N trips-like rows into a MOR table, then five rounds of
upserting a 100,000-row batch (half updates of random existing keys, half new
keys), each a deltacommit of log files; deltalake MERGEs the same batches into
its table. Then a snapshot scan with the five deltacommits uncompacted, a
compaction, and the scan again; the COW scan of the same data is the yardstick.

    python benchmarks/bench_mor.py --rows 1000000 10000000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

import pyarrow.parquet as pq
from bench_cow import make_rows, timed, upsert_batch, write_source

ROUNDS = 5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--out", help="also write the Markdown table to this file")
    parser.add_argument("--workdir", help="where tables go (default: a temp dir, removed after)")
    args = parser.parse_args(argv)

    from deltalake import DeltaTable, write_deltalake

    import hudilite

    spark = hudilite.spark_session(driver_memory=os.environ.get("HUDILITE_DRIVER_MEMORY", "8g"))
    lines = [
        "| rows | step | hudilite (s) | deltalake (s) | ratio |",
        "|---:|---|---:|---:|---:|",
    ]
    for n in args.rows:
        tmp = tempfile.mkdtemp(prefix=f"benchmor{n}_", dir=args.workdir)
        try:
            load = write_source(tmp, make_rows(0, n, seed=n), "load")
            batches = [write_source(tmp, upsert_batch(n, r), f"upsert{r}") for r in range(ROUNDS)]
            schema = pq.read_schema(load)
            mor = hudilite.Table.create(
                spark,
                os.path.join(tmp, "mor"),
                schema,
                record_key="uuid",
                ordering_field="ts",
                partition_by=["city"],
                table_type="mor",
                # Updates go to logs and inserts to new file groups. With packing on, every
                # base file below 100 MB would absorb inserts by a rewrite (Hudi does the
                # same), and each round would cost a copy-on-write upsert.
                options={"hoodie.parquet.small.file.limit": "0"},
            )
            cow = hudilite.Table.create(
                spark,
                os.path.join(tmp, "cow"),
                schema,
                record_key="uuid",
                ordering_field="ts",
                partition_by=["city"],
            )
            src = spark.read.parquet(load)
            mor.write(src, operation="bulk_insert")
            cow.write(src, operation="bulk_insert")
            delta_path = os.path.join(tmp, "delta")
            write_deltalake(delta_path, pq.read_table(load), partition_by=["city"])

            h_up, d_up = [], []
            for path in batches:
                df = spark.read.parquet(path).cache()
                df.count()
                h_up.append(timed(lambda df=df, t=mor: t.write(df, operation="upsert")))
                cow.write(df, operation="upsert")
                df.unpersist()
                source = pq.read_table(path)
                d_up.append(
                    timed(
                        lambda source=source, dp=delta_path: (
                            DeltaTable(dp)
                            .merge(source, "t.uuid = s.uuid", source_alias="s", target_alias="t")
                            .when_matched_update_all()
                            .when_not_matched_insert_all()
                            .execute()
                        )
                    )
                )

            def spark_scan(t: hudilite.Table) -> float:
                return timed(lambda: t.read().write.format("noop").mode("overwrite").save())

            mor_scan = statistics.median(spark_scan(mor) for _ in range(3))
            cow_scan = statistics.median(spark_scan(cow) for _ in range(3))
            compact_s = timed(lambda t=mor: t.compact())
            mor_after = statistics.median(spark_scan(mor) for _ in range(3))
            up_h, up_d = statistics.median(h_up), statistics.median(d_up)
            lines += [
                f"| {n:,} | MOR upsert 100,000 (median of {ROUNDS}) | {up_h:.2f} | {up_d:.2f} "
                f"| {up_h / up_d:.2f}x |",
                f"| {n:,} | snapshot scan, {ROUNDS} deltacommits uncompacted (Spark) | "
                f"{mor_scan:.2f} | COW scan {cow_scan:.2f} | {mor_scan / cow_scan:.2f}x of COW |",
                f"| {n:,} | compaction of the {ROUNDS} deltacommits | {compact_s:.2f} | - | - |",
                f"| {n:,} | snapshot scan after compaction (Spark) | {mor_after:.2f} | "
                f"COW scan {cow_scan:.2f} | {mor_after / cow_scan:.2f}x of COW |",
            ]
            print("\n".join(lines), file=sys.stderr, flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
