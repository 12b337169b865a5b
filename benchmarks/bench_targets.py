"""Issue 15's targets table: every row measured side by side in one run, one SparkSession.

Data as in ``bench_cow.py`` (trips-like rows, 20 city partitions, random keys; upsert batches
of 100,000 rows, half updates of random existing keys, half new keys), the same files for
both engines. With ``--rows SMALL LARGE`` (default 1M and 10M):

 1. COW upsert into LARGE rows vs deltalake MERGE (target <= 1.0x)
 2. COW upsert into SMALL rows vs deltalake MERGE (<= 1.5x)
 3. MOR upsert into LARGE rows vs deltalake MERGE (<= 0.4x)
 4. MOR upsert into LARGE rows, bucket index, vs deltalake MERGE (<= 0.25x); buckets per
    partition sized to ``--bucket-rows`` rows each (~20 MB base files), the table loaded
    by ``bulk_insert`` (``--bucket-load``)
 5. bulk load of LARGE rows vs ``write_deltalake`` (<= 1.5x)
 6. snapshot scan as a Spark DataFrame (``Table.read()``) vs ``spark.read.parquet`` of the
    same rows written as plain Parquet partitioned by city, both drained into Spark's
    ``noop`` sink, the ten data columns (<= 1.2x); with Hudi's meta columns for information
 7. ``Table.to_arrow()`` full scan vs ``DeltaTable.to_pyarrow_table()`` (<= 1.3x)
 8. MOR snapshot scan (Spark) with ``--rounds`` uncompacted deltacommits vs the COW scan of
    the same rows (<= 1.3x)
 9. one-row INSERT / UPDATE / point SELECT through hudilite SQL, warm, on SMALL rows, vs
    Spark SQL on a plain Parquet table (<= 1.5x; ``bench_interactive.py``)
10. MOR bucket-index upsert into each of ``--scaling-rows``: the cost at the largest over
    the cost at the smallest (< 1.3x)

Rows 1-5 and 8 also print a floor line each (1b-5b, 8b: the same work done by Spark
itself, natively, as ``spark_floors`` explains), as rows 6, 7 and 9 do for theirs.

Upserts are medians over ``--rounds`` batches applied one after the other to the same
table (hudilite COW, MOR, MOR bucket and deltalake get the same batches); scans are medians
of ``--repeats``. Rows 6 and 7 scan the tables right after the bulk load (so all three hold
the same rows). Prints one summary table (Markdown) on stdout, progress on stderr.

    python benchmarks/bench_targets.py                       # make bench
    python benchmarks/bench_targets.py --only 10 --scaling-rows 1000000 10000000 50000000
    python benchmarks/bench_targets.py --quick               # smoke run, tiny tables
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import traceback
from collections.abc import Callable

import pyarrow.parquet as pq
import spark_floors
from bench_cow import UPSERT_ROWS, make_rows, timed, upsert_batch, write_source
from bench_mor import ROUNDS
from targets_report import TargetRow, render, row_number

CHUNK = 1_000_000  # rows generated at a time (50M rows would not fit as Python strings)
#: The floor lines (``spark_floors``): the same work done by Spark itself, natively.
FLOOR_LABEL = {
    "1b": "  same vs Spark's own copy-on-write MERGE into Parquet (floor)",
    "3b": "  same vs Spark reading the keys and writing the batch (floor)",
    "4b": "  same vs Spark hashing the batch into buckets and writing it (floor)",
    "5b": "  same vs Spark writing the rows and meta columns as Parquet (floor)",
    "8b": "  same vs Spark merging the stored rows with the upserts' rows itself (floor)",
}


def live_base_files(table) -> list[str]:
    """Table-relative paths of the live base files of a table without log files."""
    # why lazy: hudilite loads only once the arguments are parsed, as everywhere here
    from hudilite.read.planner import plan_snapshot

    return list(plan_snapshot(table.state().view).native_paths)


def write_load(tmp: str, n: int) -> str:
    """``n`` rows (keys 0..n-1) as one Parquet file, generated a million rows at a time."""
    path = os.path.join(tmp, "load.parquet")
    writer = None
    for start in range(0, n, CHUNK):
        table = make_rows(start, min(CHUNK, n - start), seed=n + start // CHUNK)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=128 * 1024)
    assert writer is not None
    writer.close()
    return path


def noop(df) -> None:
    df.write.format("noop").mode("overwrite").save()


class Bench:
    """One run: the session, the options, the rows measured so far."""

    def __init__(self, spark, args: argparse.Namespace, root: str) -> None:
        self.spark = spark
        self.args = args
        self.root = root
        self.rows: list[TargetRow] = []
        self.bucket_memo: dict[int, tuple[float, int]] = {}  # n -> (median upsert, buckets)

    # -- helpers -------------------------------------------------------------------------

    def wants(self, *numbers: int) -> bool:
        return any(n in self.args.only for n in numbers)

    def add(self, row: TargetRow) -> None:
        if self.wants(row_number(row.no)):
            self.rows.append(row)
            print(render([row], header=False), file=sys.stderr, flush=True)

    def median(self, fn: Callable[[], object], times: int | None = None) -> float:
        return statistics.median(timed(fn) for _ in range(times or self.args.repeats))

    def interleaved(self, *fns: Callable[[], object]) -> list[float]:
        """Medians of ``fns`` timed in turn, round after round, so that a drift of the
        machine (page cache, memory) during the row weighs on each of them alike."""
        times: list[list[float]] = [[] for _ in fns]
        for _ in range(self.args.repeats):
            for i, fn in enumerate(fns):
                times[i].append(timed(fn))
        return [statistics.median(t) for t in times]

    def create(self, tmp: str, name: str, schema, **kwargs):
        import hudilite

        return hudilite.Table.create(
            self.spark,
            os.path.join(tmp, name),
            schema,
            record_key="uuid",
            ordering_field="ts",
            partition_by=["city"],
            table_version=6,
            **kwargs,
        )

    def upserts(self, table, batches: list[str]) -> list[float]:
        """Time an upsert of every batch (read and cached before the clock starts)."""
        out = []
        for path in batches:
            df = self.spark.read.parquet(path).cache()
            df.count()
            out.append(timed(lambda df=df: table.write(df, operation="upsert")))
            df.unpersist()
        return out

    def check(self, table, expected: int) -> None:
        """With ``--check``: the table holds ``expected`` distinct keys (untimed)."""
        if not self.args.check:
            return
        keys = table.to_arrow(columns=["uuid"]).column("uuid")
        distinct = len(keys.unique())
        if (len(keys), distinct) != (expected, expected):
            raise AssertionError(
                f"{table.path}: {len(keys):,} rows, {distinct:,} keys, expected {expected:,}"
            )

    def buckets_for(self, n: int) -> int:
        """Buckets per partition so a bucket's base file holds about ``--bucket-rows`` rows."""
        if self.args.buckets:
            return self.args.buckets
        return max(1, round(n / 20 / self.args.bucket_rows))

    # -- workloads -----------------------------------------------------------------------

    def warm_up(self) -> None:
        """Untimed: a small load, upsert and scans in both engines, so that starting the JVM's
        code paths and Spark's Python workers is not charged to the first measured row."""
        from deltalake import DeltaTable, write_deltalake

        tmp = tempfile.mkdtemp(prefix="warmup_", dir=self.root)
        try:
            rows, batch = make_rows(0, 20_000, seed=7), upsert_batch(20_000, 0, 4_000)
            bucket = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
            for kind, options in (("cow", {}), ("mor", {}), ("mor", bucket)):
                name = f"{kind}{len(options)}"
                table = self.create(tmp, name, rows.schema, table_type=kind, options=options)
                table.write(rows, operation="insert" if options else "bulk_insert")
                table.write(batch, operation="upsert")
                noop(table.read())
                table.to_arrow()
            noop(self.spark.read.parquet(write_source(tmp, rows, "plain")))
            write_deltalake(os.path.join(tmp, "delta"), rows, partition_by=["city"])
            DeltaTable(os.path.join(tmp, "delta")).to_pyarrow_table()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def size_block(self, n: int, small: bool, large: bool) -> None:
        """Rows 1-8 at ``n`` rows: COW (and deltalake) load, scans, upserts; MOR tables."""
        from deltalake import DeltaTable, write_deltalake

        tmp = tempfile.mkdtemp(prefix=f"targets{n}_", dir=self.root)
        try:
            load = write_load(tmp, n)
            batches = [
                write_source(tmp, upsert_batch(n, r, self.args.upsert_rows), f"upsert{r}")
                for r in range(self.args.rounds)
            ]
            final = n + len(batches) * (self.args.upsert_rows // 2)
            schema = pq.read_schema(load)
            cols = list(schema.names)
            cow = self.create(tmp, "cow", schema)
            dpath = os.path.join(tmp, "delta")
            h_load = timed(lambda: cow.write(self.spark.read.parquet(load), "bulk_insert"))
            d_load = timed(
                lambda: write_deltalake(dpath, pq.read_table(load), partition_by=["city"])
            )
            if large:
                self.add(
                    TargetRow("5", f"bulk load {n:,} rows vs write_deltalake", h_load, d_load, 1.5)
                )
            # Spark's own copy of the table (spark_floors): the floor of the bulk load, and
            # the table the upserts' floors write into.
            floor = os.path.join(tmp, "spark_copy")
            if self.wants(1, 2, 3, 4, 5):
                f_load = timed(lambda: spark_floors.bulk_load(self.spark, load, floor))
                if large:
                    self.add(TargetRow("5b", FLOOR_LABEL["5b"], h_load, f_load))
            if large and self.wants(6):
                plain = os.path.join(tmp, "plain")
                self.spark.read.parquet(load).write.partitionBy("city").parquet(plain)
                # The floor (6c): Spark reading hudilite's own live base files (the same
                # rows, the partition column stored in the files as Hudi stores it; the same
                # physical plan as Table.read()'s). Timed in turn with the others, as row 7's,
                # so that the order of the figures favours none of them.
                files = [cow.state().gw.uri(f) for f in live_base_files(cow)]
                h6, h6m, p6, f6 = self.interleaved(
                    lambda: noop(cow.read().select(*cols)),
                    lambda: noop(cow.read()),
                    lambda: noop(self.spark.read.parquet(plain).select(*cols)),
                    lambda: noop(self.spark.read.parquet(*files).select(*cols)),
                )
                self.add(
                    TargetRow(
                        "6",
                        f"Spark scan of {n:,} rows, 10 data columns (noop) vs spark.read.parquet",
                        h6,
                        p6,
                        1.2,
                    )
                )
                self.add(
                    TargetRow("6b", "  same, hudilite with its 5 meta columns (info)", h6m, p6)
                )
                self.add(
                    TargetRow(
                        "6c", "  same vs spark.read.parquet of hudilite's files (floor)", h6, f6
                    )
                )
                shutil.rmtree(plain, ignore_errors=True)
            if large and self.wants(7):
                # The floor: pyarrow reading hudilite's live base files, all 15 columns.
                paths = [os.path.join(cow.path, f) for f in live_base_files(cow)]
                h7, h7d, d7, f7 = self.interleaved(
                    lambda: cow.to_arrow(),
                    lambda: cow.to_arrow(columns=cols),
                    lambda: DeltaTable(dpath).to_pyarrow_table(),
                    lambda: pq.ParquetDataset(paths, partitioning=None).read(),
                )
                self.add(
                    TargetRow("7", f"to_arrow() of {n:,} rows vs to_pyarrow_table()", h7, d7, 1.3)
                )
                self.add(TargetRow("7b", "  same, 10 data columns only (info)", h7d, d7))
                self.add(
                    TargetRow("7c", "  same vs pyarrow reading hudilite's files (floor)", h7, f7)
                )

            def merge(path: str) -> Callable[[], object]:
                source = pq.read_table(path)
                return lambda: (
                    DeltaTable(dpath)
                    .merge(source, "t.uuid = s.uuid", source_alias="s", target_alias="t")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute()
                )

            if not self.wants(1, 2, 3, 4, 8):
                return  # the rows asked for need no upsert (``--only 5 6 7``)
            h_up = statistics.median(self.upserts(cow, batches))
            d_up = statistics.median(timed(merge(b)) for b in batches)
            self.check(cow, final)
            label = f"COW upsert {self.args.upsert_rows:,} into {n:,} vs deltalake MERGE"
            f_up = self.floor_upserts(tmp, floor, batches) if self.wants(1, 2) else None
            if large:
                self.add(TargetRow("1", label, h_up, d_up, 1.0))
                self.add(TargetRow("1b", FLOOR_LABEL["1b"], h_up, f_up))
            if small:
                self.add(TargetRow("2", label, h_up, d_up, 1.5))
                self.add(TargetRow("2b", FLOOR_LABEL["1b"], h_up, f_up))
            if large and self.wants(3, 8):
                self.mor_rows(tmp, n, schema, load, batches, cow, d_up, final)
                if self.wants(3):
                    out = os.path.join(tmp, "spark_mor")
                    f3 = statistics.median(
                        timed(lambda b=b: spark_floors.mor_upsert(self.spark, floor, b, out))
                        for b in batches
                    )
                    h3 = next(r.ours for r in self.rows if r.no == "3")
                    self.add(TargetRow("3b", FLOOR_LABEL["3b"], h3, f3))
            if large and self.wants(4):
                h4, buckets = self.bucket_upsert(n, tmp, load, batches, schema)
                self.add(
                    TargetRow(
                        "4",
                        f"MOR upsert {self.args.upsert_rows:,} into {n:,}, bucket index "
                        f"({buckets}/partition) vs deltalake MERGE",
                        h4,
                        d_up,
                        0.25,
                    )
                )
                out = os.path.join(tmp, "spark_bucket")
                f4 = statistics.median(
                    timed(lambda b=b: spark_floors.bucket_upsert(self.spark, b, buckets, out))
                    for b in batches
                )
                self.add(TargetRow("4b", FLOOR_LABEL["4b"], h4, f4))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def floor_upserts(self, tmp: str, floor: str, batches: list[str]) -> float:
        """Median of Spark's own copy-on-write MERGE of each batch into its copy."""
        out, times = os.path.join(tmp, "spark_next"), []
        for b in batches:
            times.append(timed(lambda b=b: spark_floors.cow_upsert(self.spark, floor, b, out)))
            spark_floors.replace(out, floor)
        return statistics.median(times)

    def mor_rows(self, tmp, n, schema, load, batches, cow, d_up, final) -> None:
        """Rows 3 and 8: MOR upserts (logs) and the snapshot scan with them uncompacted."""
        # Updates go to logs, inserts to new file groups: with small-file packing (Hudi's
        # default limit of 100 MB) every base file would absorb inserts by a rewrite
        # (bench_mor.py explains).
        mor = self.create(
            tmp, "mor", schema, table_type="mor", options={"hoodie.parquet.small.file.limit": "0"}
        )
        mor.write(self.spark.read.parquet(load), operation="bulk_insert")
        h_up = statistics.median(self.upserts(mor, batches))
        self.check(mor, final)
        self.add(
            TargetRow(
                "3",
                f"MOR upsert {self.args.upsert_rows:,} into {n:,} vs deltalake MERGE",
                h_up,
                d_up,
                0.4,
            )
        )
        if self.wants(8):
            cow_scan = self.median(lambda: noop(cow.read()))
            mor_scan = self.median(lambda: noop(mor.read()))
            self.add(
                TargetRow(
                    "8",
                    f"MOR Spark scan of {n:,}, {len(batches)} deltacommits uncompacted vs COW scan",
                    mor_scan,
                    cow_scan,
                    1.3,
                )
            )
            # Spark doing the same merge natively (spark_floors.mor_snapshot): the table's
            # base files, and the upserts' rows as Parquet in place of the Avro logs.
            files = [
                os.path.join(mor.path, s.base_file.path)
                for s in mor.state().view.latest_slices()
                if s.base_file is not None
            ]
            floor = self.median(lambda: noop(spark_floors.mor_snapshot(self.spark, files, batches)))
            self.add(TargetRow("8b", FLOOR_LABEL["8b"], mor_scan, floor))
        shutil.rmtree(mor.path, ignore_errors=True)

    def bucket_upsert(self, n, tmp=None, load=None, batches=None, schema=None) -> tuple[float, int]:
        """Median upsert into a MOR bucket-index table of ``n`` rows, and its bucket count.

        Reuses the figure when ``n`` was measured already (rows 4 and 10 share it)."""
        if n in self.bucket_memo:
            return self.bucket_memo[n]
        own = tmp is None
        if own:
            tmp = tempfile.mkdtemp(prefix=f"targets_bucket{n}_", dir=self.root)
        try:
            if own:
                load = write_load(tmp, n)
                batches = [
                    write_source(tmp, upsert_batch(n, r, self.args.upsert_rows), f"upsert{r}")
                    for r in range(self.args.rounds)
                ]
                schema = pq.read_schema(load)
            buckets = self.buckets_for(n)
            options = {
                "hoodie.index.type": "BUCKET",
                "hoodie.bucket.index.num.buckets": str(buckets),
            }
            table = self.create(tmp, "mor_bucket", schema, table_type="mor", options=options)
            table.write(self.spark.read.parquet(load), operation=self.args.bucket_load)
            h = statistics.median(self.upserts(table, batches))
            self.check(table, n + len(batches) * (self.args.upsert_rows // 2))
            shutil.rmtree(table.path, ignore_errors=True)
        finally:
            if own:
                shutil.rmtree(tmp, ignore_errors=True)
        self.bucket_memo[n] = (h, buckets)
        return h, buckets

    def interactive(self, n: int) -> None:
        """Row 9 (``bench_interactive.measure``), milliseconds turned into seconds."""
        import bench_interactive

        repeats = 5 * self.args.repeats
        figures = bench_interactive.measure(
            self.spark, os.path.join(self.root, "wh"), n, repeats, min(3, self.args.repeats)
        )
        for i, (name, (ours, theirs)) in enumerate(figures.items()):
            # The first three are the issue's; the rest their floors (information).
            info = i >= 3
            label = f"{name} through SQL on {n:,}, warm" + (
                " (info)" if info else ", vs Spark SQL on Parquet"
            )
            target = None if info else 1.5
            self.add(TargetRow(f"9{'abcdefgh'[i]}", label, ours / 1000, theirs / 1000, target))

    def scaling(self) -> None:
        """Row 10: bucket-index MOR upsert cost from the smallest to the largest table."""
        sizes = sorted(set(self.args.scaling_rows))
        figures = {n: self.bucket_upsert(n) for n in sizes}
        base, base_buckets = figures[sizes[0]]
        # The largest table is the target's line (10); the ones between, information (10b...).
        for letter, n in zip("bcdefgh", sizes[1:-1], strict=False):
            self.add(self.scaling_row(f"10{letter}", n, figures[n], base, base_buckets))
        if len(sizes) > 1:
            self.add(self.scaling_row("10", sizes[-1], figures[sizes[-1]], base, base_buckets))

    def scaling_row(self, no, n, figure, base, base_buckets) -> TargetRow:
        h, buckets = figure
        smallest = min(self.args.scaling_rows)
        return TargetRow(
            no,
            f"MOR bucket upsert {self.args.upsert_rows:,} into {n:,} ({buckets}/partition) "
            f"vs into {smallest:,} ({base_buckets}/partition)" + ("" if no == "10" else " (info)"),
            h,
            base,
            1.3 if no == "10" else None,
            strict=True,
        )

    def guarded(self, name: str, fn: Callable[[], None], numbers: tuple[int, ...]) -> None:
        """Run one part; a failure is reported and recorded, and the run goes on."""
        try:
            fn()
        except Exception:
            traceback.print_exc()
            for no in numbers:
                if self.wants(no) and not any(row_number(r.no) == no for r in self.rows):
                    self.rows.append(TargetRow(str(no), f"{name}: FAILED (see stderr)", None, None))


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--rows",
        type=int,
        nargs="+",
        default=[1_000_000, 10_000_000],
        help="table sizes of rows 1-9: the smallest for rows 2 and 9, the largest "
        "for the others (default 1000000 10000000)",
    )
    p.add_argument(
        "--scaling-rows",
        type=int,
        nargs="+",
        default=[1_000_000, 10_000_000],
        help="table sizes of row 10 (the issue's: 1000000 10000000 50000000)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed scans per figure (medians); row 9 runs 5x as many statements",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"upsert batches per table, each a (delta)commit (default {ROUNDS})",
    )
    p.add_argument(
        "--upsert-rows",
        type=int,
        default=UPSERT_ROWS,
        help=f"rows per upsert batch, half updates (default {UPSERT_ROWS})",
    )
    p.add_argument(
        "--only",
        type=int,
        nargs="+",
        choices=range(1, 11),
        default=list(range(1, 11)),
        help="row numbers to measure (e.g. --only 10 for the scaling row alone)",
    )
    p.add_argument(
        "--bucket-rows",
        type=int,
        default=250_000,
        help="rows per bucket when sizing hoodie.bucket.index.num.buckets",
    )
    p.add_argument("--buckets", type=int, help="fixed buckets per partition instead")
    p.add_argument(
        "--bucket-load",
        default="bulk_insert",
        help="operation loading the bucket-index tables (default bulk_insert)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check every hudilite table's row and key count after its upserts",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: --rows 20000 --scaling-rows 20000 40000 --repeats 1 --rounds 2 "
        "--upsert-rows 4000 --check",
    )
    p.add_argument("--workdir", help="where tables go (default: a temp dir, removed after)")
    p.add_argument("--out", help="also write the summary table to this file")
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.scaling_rows = [20_000], [20_000, 40_000]
        args.repeats, args.rounds, args.check, args.upsert_rows = 1, 2, True, 4_000
    args.only = set(args.only)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import hudilite

    root = tempfile.mkdtemp(prefix="bench_targets_", dir=args.workdir)
    try:
        spark = hudilite.spark_session(
            driver_memory=os.environ.get("HUDILITE_DRIVER_MEMORY", "8g"),
            conf={"spark.sql.warehouse.dir": os.path.join(root, "spark-warehouse")},
        )
        bench = Bench(spark, args, root)
        print("warm-up ...", file=sys.stderr, flush=True)
        bench.warm_up()
        small, large = min(args.rows), max(args.rows)
        for n in sorted(set(args.rows)):
            is_small, is_large = n == small, n == large
            numbers = ((2,) if is_small else ()) + ((1, 3, 4, 5, 6, 7, 8) if is_large else ())
            if bench.wants(*numbers):
                print(f"[{n:,} rows] rows {numbers} ...", file=sys.stderr, flush=True)
                bench.guarded(
                    f"rows at {n:,}",
                    lambda n=n, s=is_small, b=is_large: bench.size_block(n, s, b),
                    numbers,
                )
        if bench.wants(9):
            print(f"[{small:,} rows] row 9 ...", file=sys.stderr, flush=True)
            bench.guarded("interactive", lambda: bench.interactive(small), (9,))
        if bench.wants(10):
            print(f"row 10 at {sorted(args.scaling_rows)} ...", file=sys.stderr, flush=True)
            bench.guarded("scaling", bench.scaling, (10,))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table = render(sorted(bench.rows, key=lambda r: r.sort_key()))
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
