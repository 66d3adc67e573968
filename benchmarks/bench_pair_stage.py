"""The local pair stage alone, on one archive's extract: partitions and worker processes, and
source trees side by side.

    .venv/bin/python benchmarks/bench_pair_stage.py ARCHIVE --partitions 8 --workers 1 2 \\
        --runs 3 [--tree OTHER_CHECKOUT ...]

Extracts ARCHIVE once (with this checkout), then times ``run_pairs`` over the extract for each
(tree, workers) in turn, round after round, each run in a fresh process, and prints every run
and the median wall time and peak RSS (the main process's ``VmHWM``) of each. ``--tree`` adds
other checkouts (their ``src`` first on the path): a baseline measured in the same session.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXTRACT = """
import json, sys
sys.path.insert(0, sys.argv[1] + "/src")
from corpusforge.builds import twitter_extract as te
from corpusforge.config.twitter import TwitterConfig
try:
    from corpusforge.config.runner import Runner
    runner = Runner()
except ImportError:  # a tree from before the typed runner description took Beam's flags
    runner = []
config = TwitterConfig(inputs=(sys.argv[2],), out=sys.argv[3])
archive = te.describe_input(sys.argv[2], config)
te.run_extract([archive], config, runner)
paths = [f["path"] for f in te.read_extract_files(config.out, archive)]
kind = lambda p: p.rsplit("/", 2)[-2]
print(json.dumps({k: [p for p in paths if kind(p) == k] for k in ("tweets", "deletes")}))
"""

PAIRS = """
import json, shutil, sys, time
sys.path.insert(0, sys.argv[1] + "/src")
from corpusforge import perf
from corpusforge.builds import twitter_pairs as tp
from corpusforge.config.twitter import TwitterConfig
try:
    from corpusforge.config.runner import Runner
    runner = Runner()
except ImportError:  # a tree from before the typed runner description took Beam's flags
    runner = []
files = json.loads(sys.argv[2])
config = TwitterConfig(
    inputs=("unused",), out=sys.argv[3], pair_partitions=int(sys.argv[4]), workers=int(sys.argv[5])
)
staging = sys.argv[3] + "/_staging"
start = time.perf_counter()
tp.run_pairs(files["tweets"], files["deletes"], config, runner, staging)
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": perf.peak_rss_mb()}))
shutil.rmtree(staging)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--partitions", type=int, default=0, help="0: from the memory budget")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    trees = [HERE, *args.tree]
    work = tempfile.mkdtemp(prefix="bench-pairs-")
    try:
        release = os.path.join(work, "release")
        files = subprocess.run(
            [sys.executable, "-c", EXTRACT, HERE, args.archive, release],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs: dict[tuple[str, int], list[dict[str, float]]] = {}
        for _ in range(args.runs):
            for tree in trees:
                for workers in args.workers:
                    out = subprocess.run(
                        [
                            sys.executable,
                            "-c",
                            PAIRS,
                            tree,
                            files,
                            release,
                            str(args.partitions),
                            str(workers),
                        ],
                        check=True,
                        capture_output=True,
                        text=True,
                    ).stdout
                    run = json.loads(out)
                    runs.setdefault((tree, workers), []).append(run)
                    print(
                        f"{tree} workers={workers}: {run['seconds']:.2f} s, "
                        f"{run['peak_mb']:.0f} MB",
                        flush=True,
                    )
        print(f"median of {args.runs}, partitions={args.partitions}:")
        for (tree, workers), found in runs.items():
            seconds = statistics.median(r["seconds"] for r in found)
            peak = statistics.median(r["peak_mb"] for r in found)
            print(f"  {tree} workers={workers}: {seconds:.2f} s, {peak:.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
