"""Peak RSS of each stage of a whole local Twitter build, at a memory budget.

    .venv/bin/python benchmarks/bench_stage_memory.py ARCHIVE [ARCHIVE ...] \\
        --memory-limit 512 --workers 2 [--benchmark-queries 100] [--rows-per-shard 20000] \\
        [--tree OTHER_CHECKOUT]

Builds the archives into a fresh folder in a fresh process (``--tree``'s ``src`` first on the
path; this checkout's by default), as ``corpusforge twitter build`` does, dataset card
included. Before each stage the process's ``VmHWM`` is reset to its current RSS
(``/proc/self/clear_refs``, Linux), so each figure is that stage's own peak of the main
process, including what the process still holds from the stages before. Worker processes are
not counted. polars' allocator gets the command's setting (``cli.POLARS_ALLOCATOR``) where the
tree has one. Prints one JSON object: MB per stage.

Several archives stand for a larger input: four 400k-tweet archives (seeds 0-3 of
``corpusforge synth twitter --tweets 400000``) are the 16× input of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BUILD = """
import json, os, sys
tree, out, limit, workers, queries, shard_rows, *archives = sys.argv[1:]
sys.path.insert(0, tree + "/src")
from corpusforge import cli
if hasattr(cli, "POLARS_ALLOCATOR"):  # as the command's main() does, before polars loads
    os.environ.setdefault(*cli.POLARS_ALLOCATOR)
from corpusforge.builds import twitter as bt
from corpusforge.config.twitter import TwitterConfig
from corpusforge.inspect.card import write_card
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.perf import peak_rss_mb

def reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

peaks = {}
def measured(name, label):
    stage = getattr(bt, name)
    def run(*args, **kwargs):
        reset()
        result = stage(*args, **kwargs)
        peaks[label] = round(peak_rss_mb())
        reset()
        return result
    setattr(bt, name, run)

for name, label in [("run_extract", "extract"), ("run_pairs", "pairs"), ("_publish", "publish"),
                    ("_reference_scores", "reference scores")]:
    measured(name, label)
config = TwitterConfig(
    inputs=tuple(archives), out=out, memory_limit=int(limit), workers=int(workers),
    benchmarks=BenchmarkConfig(queries=int(queries)), rows_per_shard=int(shard_rows),
)
bt.build(config, finish_draft=write_card)
peaks["card and the rest"] = round(peak_rss_mb())
print(json.dumps(peaks))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archives", nargs="+")
    parser.add_argument("--memory-limit", type=int, default=512, help="MiB")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--benchmark-queries", type=int, default=5000)
    parser.add_argument("--rows-per-shard", type=int, default=250_000)
    parser.add_argument("--tree", default=HERE, help="the checkout whose src is measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="corpusforge-stage-memory-") as folder:
        command = [
            sys.executable,
            "-c",
            BUILD,
            os.path.abspath(args.tree),
            os.path.join(folder, "release"),
            str(args.memory_limit),
            str(args.workers),
            str(args.benchmark_queries),
            str(args.rows_per_shard),
            *map(os.path.abspath, args.archives),
        ]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
    print(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
