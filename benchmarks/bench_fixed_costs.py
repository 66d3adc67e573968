"""Fixed costs: ``corpusforge twitter build`` of a small archive, wall time of the command.

    .venv/bin/python benchmarks/bench_fixed_costs.py ARCHIVE --runs 5 [--tree OTHER_CHECKOUT ...]

Runs the command (this virtual environment's ``corpusforge``, each tree's ``src`` first on
the path) into a fresh folder, tree after tree, round after round, and prints every run and
each tree's median. A 2,000-tweet archive (``corpusforge synth twitter --tweets 2000``) makes
the build's own work a small part: what is left is start-up, imports, the dataset card, the
reference scores and the interpreter's exit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMAND = os.path.join(os.path.dirname(sys.executable), "corpusforge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    trees = [HERE, *args.tree]
    seconds: dict[str, list[float]] = {tree: [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            with tempfile.TemporaryDirectory() as out:
                env = {**os.environ, "PYTHONPATH": os.path.join(tree, "src")}
                command = [COMMAND, "twitter", "build", args.archive, "--out", out + "/r"]
                start = time.perf_counter()
                subprocess.run(command, env=env, check=True, capture_output=True)
                seconds[tree].append(time.perf_counter() - start)
            print(f"{tree}: {seconds[tree][-1]:.2f} s", flush=True)
    for tree, found in seconds.items():
        print(f"median of {args.runs}: {tree}: {statistics.median(found):.2f} s")


if __name__ == "__main__":
    main()
