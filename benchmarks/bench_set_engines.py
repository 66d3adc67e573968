"""Which query engine does the local engine's set work: polars or DuckDB, by measurement.

    .venv/bin/python -m pip install duckdb   # measurement only: not a corpusforge dependency
    .venv/bin/python benchmarks/bench_set_engines.py --rows 2000000 6000000 --runs 3

The operation is the pair stage's deduplication (``corpusforge.local.chosen.PairRows``): of
pair rows with identical (dataset, anchor, positive) texts keep the one with the smallest
(duplicate rank, root id). The input is a synthetic Parquet file of pair rows with texts of
60-160 characters, a fifth of them copies of another row's texts. Each engine runs in a fresh
process that reports its wall time and peak RSS (``VmHWM``):

- ``polars, whole``: read everything, sort, ``unique`` (what ``PairRows`` does per group);
- ``polars, 8 partitions``: batches appended to eight Arrow files by a hash of the texts in
  one pass, then each file deduplicated alone (how ``PairRows`` bounds memory);
- ``polars, streaming``: ``scan_parquet``, ``group_by`` + ``arg_min``, the streaming engine;
- ``duckdb, 512 MB``: one SQL query with ``memory_limit='512MB'`` (DuckDB spills to disk).

Every engine must give the same kept rows (checked by count and a digest of the kept ids).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from typing import Any

import polars as pl

KEYS = ["dataset", "anchor", "positive"]
ORDER = ["_dup", "root_id"]
PARTITIONS = 8


def write_input(path: str, rows: int, seed: int = 0) -> None:
    """``rows`` synthetic pair rows, a fifth of them with another row's texts."""
    rng = random.Random(seed)
    words = [f"w{i:04d}" for i in range(5000)]
    chunk = 500_000
    frames = []
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        anchors, positives, datasets = [], [], []
        for _ in range(n):
            if anchors and rng.random() < 0.2:
                j = rng.randrange(len(anchors))
                anchors.append(anchors[j])
                positives.append(positives[j])
                datasets.append(datasets[j])
                continue
            anchors.append(" ".join(rng.choices(words, k=rng.randrange(12, 32))))
            positives.append(" ".join(rng.choices(words, k=rng.randrange(12, 32))))
            datasets.append(rng.choice(["qt", "rp", "coqt", "corp"]))
        frames.append(
            pl.DataFrame(
                {
                    "dataset": datasets,
                    "anchor": anchors,
                    "positive": positives,
                    "root_id": [start + i for i in range(n)],
                    "_dup": [rng.getrandbits(63) for _ in range(n)],
                }
            )
        )
    pl.concat(frames).write_parquet(path)


def _digest(ids: pl.Series) -> str:
    """A checksum of the kept root ids, computed without making them Python objects."""
    ids = ids.cast(pl.Int64)
    return f"{ids.sum()}-{(ids * 7919 % 1_000_003).sum()}"


def polars_whole(path: str, _: str) -> tuple[int, str]:
    kept = pl.read_parquet(path).sort(ORDER).unique(KEYS, keep="first", maintain_order=True)
    return kept.height, _digest(kept["root_id"])


def polars_partitioned(path: str, scratch: str) -> tuple[int, str]:
    """As ``PairRows``: batches appended to Arrow files by a hash of the texts, in one pass;
    then each file deduplicated alone."""
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq

    parts = [os.path.join(scratch, f"p{p}.arrow") for p in range(PARTITIONS)]
    writers: dict[int, Any] = {}
    for batch in pq.ParquetFile(path).iter_batches(batch_size=50_000):
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        frame = frame.with_columns((pl.struct(KEYS).hash(seed=0) % PARTITIONS).alias("_p"))
        for (p,), part in frame.partition_by("_p", as_dict=True, include_key=False).items():
            table = part.to_arrow()
            if p not in writers:
                writers[p] = pa.ipc.new_file(parts[p], table.schema)
            writers[p].write_table(table)
    for writer in writers.values():
        writer.close()
    kept_ids = []
    for part in parts:
        kept = pl.read_ipc(part).sort(ORDER).unique(KEYS, keep="first", maintain_order=True)
        kept_ids.append(kept["root_id"])
        del kept
    ids = pl.concat(kept_ids)
    return len(ids), _digest(ids)


def polars_streaming(path: str, _: str) -> tuple[int, str]:
    kept = (
        pl.scan_parquet(path)
        .group_by(KEYS)
        .agg(pl.col("root_id").sort_by(ORDER).first())
        .collect(engine="streaming")
    )
    return kept.height, _digest(kept["root_id"])


def duckdb_limited(path: str, scratch: str) -> tuple[int, str]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET memory_limit='512MB'")
    con.execute(f"SET temp_directory='{scratch}'")
    con.execute("SET preserve_insertion_order=false")
    ids = con.sql(
        f"SELECT arg_min(root_id, (_dup, root_id)) AS root_id FROM read_parquet('{path}') "
        "GROUP BY dataset, anchor, positive"
    ).pl()["root_id"]  # one integer column, through Arrow
    return len(ids), _digest(ids)


ENGINES = {
    "polars, whole": polars_whole,
    f"polars, {PARTITIONS} partitions": polars_partitioned,
    "polars, streaming": polars_streaming,
    "duckdb, 512 MB": duckdb_limited,
}


def _peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _child(name: str, path: str, out: Any) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        count, digest = ENGINES[name](path, scratch)
        out.send((time.perf_counter() - start, _peak_mb(), count, digest))


def measure(name: str, path: str) -> tuple[float, float, int, str]:
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(name, path, send))
    process.start()
    send.close()  # so a child that dies makes recv() raise EOFError instead of waiting
    result = receive.recv()
    process.join()
    return result  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2_000_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "pairs.parquet")
            write_input(path, rows)
            size = os.path.getsize(path) / 2**20
            print(f"\n{rows:,} rows ({size:.0f} MiB of Parquet)")
            print("| engine | seconds (median) | peak RSS (median) | kept rows |")
            print("|---|---|---|---|")
            digests = set()
            for name in ENGINES:
                try:
                    runs = [measure(name, path) for _ in range(args.runs)]
                except (ImportError, EOFError) as exc:
                    print(f"| {name} | not run: {exc} | | |")
                    continue
                digests |= {r[3] for r in runs}
                seconds = statistics.median(r[0] for r in runs)
                peak = statistics.median(r[1] for r in runs)
                print(f"| {name} | {seconds:.2f} | {peak:,.0f} MB | {runs[0][2]:,} |", flush=True)
            assert len(digests) == 1, f"the engines kept different rows: {digests}"


if __name__ == "__main__":
    main()
