"""Whole Twitter builds against the parallel ceiling, the reading apart from the tail.

    .venv/bin/python benchmarks/bench_whole_build.py ARCHIVE --runs 5 [--tree OTHER_CHECKOUT ...]

Each round runs the ceiling (:func:`corpusforge.perf.parallel_ceiling`: stdlib decoding and
``orjson`` on ``--workers`` processes, default 2) and then ``corpusforge twitter build`` of
ARCHIVE with each tree's sources (this checkout first, then each ``--tree``, its ``src`` first
on the path), every run in a fresh process. The build's run summary gives the archive's read
time; the rest of the wall time is the tail (start-up, the merge, the pair stage, reference
scores, card, commit, exit). Prints every round and, per tree, the medians of the ceiling /
build ratio, of read / ceiling, of tail / ceiling and of the build's CPU seconds (the command
and its workers; each round's line also gives the load average): on a machine with neighbours
the ceiling and the reading move together within a round, so ratios are taken per round.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import _builds

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CEILING = "import sys; from corpusforge import perf; perf.parallel_ceiling(sys.argv[1], {})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="ceiling loops")
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    trees = [HERE, *args.tree]
    rounds: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    for r in range(args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", CEILING.format(args.workers), args.archive],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        ceiling = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        ceiling_cpu = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
        for tree in trees:
            wall, read, cpu = _build(tree, args.archive)
            row = {
                "ratio": ceiling / wall,
                "read/ceiling": read / ceiling,
                "tail/ceiling": (wall - read) / ceiling,
                "cpu s": cpu,
            }
            rounds[tree].append(row)
            print(
                f"round {r}: {tree}: ceiling {ceiling:.2f} s, build {wall:.2f} s, read "
                f"{read:.2f} s, tail {wall - read:.2f} s, ratio {row['ratio']:.3f}, CPU: "
                f"ceiling {ceiling_cpu:.2f} s, build {cpu:.2f} s, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for tree in trees:
        medians = {k: statistics.median(x[k] for x in rounds[tree]) for k in rounds[tree][0]}
        figures = ", ".join(f"{k} {v:.3f}" for k, v in medians.items())
        print(f"median of {args.runs}: {tree}: {figures}")


def _build(tree: str, archive: str) -> tuple[float, float, float]:
    """One build with ``tree``'s sources: its wall time, the archive's read time and the CPU
    seconds of the command and its workers."""
    done = _builds.build(tree, [archive])
    return done.wall, done.seconds(os.path.basename(archive)), done.cpu


if __name__ == "__main__":
    main()
