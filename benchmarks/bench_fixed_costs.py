"""Fixed costs: ``corpusforge twitter build`` of a small archive, wall time of the command.

    .venv/bin/python benchmarks/bench_fixed_costs.py ARCHIVE --runs 5 [--tree OTHER_CHECKOUT ...]

Runs the command (this virtual environment's ``corpusforge``, each tree's ``src`` first on
the path) into a fresh folder, tree after tree, round after round, and prints every run and
each tree's median wall time and CPU time (user + system, the command and its workers). One
uncounted run per tree comes first, and ``PYTHONDONTWRITEBYTECODE`` is dropped, so that the
timed runs import compiled modules, as a user's second run does.

The fixed costs are what does not grow with the input: the wall time less the extract and
pair stages, as the command's run summary gives them. The rest is start-up and imports, the
reference scores, the dataset card, publishing and the interpreter's exit. A 2,000-tweet
archive (``corpusforge synth twitter --tweets 2000``) makes the input's own work small
(mostly bz2 decoding: about 9 MB of JSON).
"""

from __future__ import annotations

import argparse
import os
import statistics

import _builds

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    trees = [HERE, *args.tree]
    wall: dict[str, list[float]] = {tree: [] for tree in trees}
    cpu: dict[str, list[float]] = {tree: [] for tree in trees}
    fixed: dict[str, list[float]] = {tree: [] for tree in trees}
    for tree in trees:
        _run(tree, args.archive)
    for _ in range(args.runs):
        for tree in trees:
            seconds, used, work = _run(tree, args.archive)
            wall[tree].append(seconds)
            cpu[tree].append(used)
            fixed[tree].append(seconds - work)
            print(
                f"{tree}: {seconds:.2f} s, cpu {used:.2f} s, extract and pairs {work:.2f} s",
                flush=True,
            )
    for tree in trees:
        print(
            f"median of {args.runs}: {tree}: {statistics.median(wall[tree]):.2f} s, "
            f"cpu {statistics.median(cpu[tree]):.2f} s, "
            f"fixed costs {statistics.median(fixed[tree]):.2f} s"
        )


def _run(tree: str, archive: str) -> tuple[float, float, float]:
    """One build with ``tree``'s sources: its wall time, its processes' CPU time, and the
    seconds its run summary gives the extract and pair stages."""
    done = _builds.build(tree, [archive])
    work = sum(done.seconds(f"stage: {stage}") for stage in ("extract", "pairs"))
    return done.wall, done.cpu, work


if __name__ == "__main__":
    main()
