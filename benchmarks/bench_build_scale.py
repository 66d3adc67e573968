"""Whole Twitter builds as the input grows: time, lines a second and the memory of every
process of the build, at a budget.

    .venv/bin/python benchmarks/bench_build_scale.py A.zip B.zip ... --sizes 1 2 4 8 \\
        [--memory-limit 8192] [--workers 2] [--tree OTHER_CHECKOUT ...]

For each size n, ``corpusforge twitter build`` of the first n archives, in a fresh process,
with each tree's sources (this checkout first; see ``_builds.py``). Prints each build's lines
read, wall time, lines a second, the pair stage's time and the peak proportional set size of
the command and its workers together; then, per tree, the least-squares seconds and MB per
million lines, and the hours the seconds give for a month of archive (``--month-lines``,
140M: the Archive Team's monthly archives). Use distinct archives (``corpusforge synth
twitter --seed N``): the command reads a path named twice once.
"""

from __future__ import annotations

import argparse
import os
import statistics

import _builds

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archives", nargs="+")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--memory-limit", type=int, help="MiB (default: the command's)")
    parser.add_argument("--workers", type=int, help="processes (default: the command's)")
    parser.add_argument("--month-lines", type=float, default=140e6)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    if max(args.sizes) > len(args.archives):
        parser.error(f"--sizes up to {max(args.sizes)} needs as many archives")
    flags = []
    if args.memory_limit:
        flags += ["--memory-limit", str(args.memory_limit)]
    if args.workers:
        flags += ["--workers", str(args.workers)]
    trees = [HERE, *args.tree]
    points: dict[str, list[tuple[int, float, float]]] = {tree: [] for tree in trees}
    for n in args.sizes:
        for tree in trees:
            done = _builds.build(tree, args.archives[:n], *flags)
            points[tree].append((done.lines, done.wall, done.peak_mb))
            print(
                f"{tree}: {n} archive(s), {done.lines:,} lines: {done.wall:.1f} s "
                f"({done.lines / done.wall:,.0f} lines/s), pair stage "
                f"{done.seconds('stage: pairs'):.1f} s, peak {done.peak_mb:,.0f} MB",
                flush=True,
            )
    for tree in trees:
        if len({p[0] for p in points[tree]}) < 2:
            continue
        lines = [p[0] / 1e6 for p in points[tree]]
        seconds = statistics.linear_regression(lines, [p[1] for p in points[tree]])
        mb = statistics.linear_regression(lines, [p[2] for p in points[tree]])
        month = args.month_lines / 1e6
        hours = (seconds.intercept + seconds.slope * month) / 3600
        print(
            f"{tree}: {seconds.slope:.1f} s and {mb.slope:+.1f} MB per million lines (least "
            f"squares); {month:.0f}M lines at that rate: {hours:.2f} h"
        )


if __name__ == "__main__":
    main()
