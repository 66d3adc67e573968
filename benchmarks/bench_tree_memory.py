"""The memory of a whole build's process tree against ``--memory-limit``: bitext and Twitter.

    .venv/bin/python benchmarks/bench_tree_memory.py --budgets 256 512 1024 --workers 2 16 \\
        [--lines 200000] [--tweets 200000 | --archive ZIP] [--kinds bitext twitter] \\
        [--runs 1] [--tree OTHER_CHECKOUT ...]

Inputs, written once into a temporary folder: a 200k-line Moses pair from the real Tatoeba
deu-eng sample, as ``bench_bitext.py`` writes it, and a 200k-tweet zip-2020 archive from
``corpusforge synth twitter --seed 0``. For each kind, budget, worker count and tree (this
checkout first), ``corpusforge bitext build DE EN`` or ``corpusforge twitter build ZIP`` with
``--memory-limit`` and ``--workers``, in a fresh process with the tree's ``src`` first on the
path (this virtual environment's command and libraries, ``_builds.py``). Every 0.2 s the
proportional set size (PSS: a page shared by n processes counts 1/n in each) of the command
and every process below it is read from ``/proc/<pid>/smaps_rollup``; a peak shorter than
that may be missed.

Prints one line per build: exit status, the peak of the tree's summed PSS, this process's
own peak, the largest worker's, the most processes below the command at once (the workers it
started), wall seconds, and the command's ``fits`` log line if it wrote one; then a Markdown
table of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _builds
from bench_bitext import write_pair

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Run:
    """What one build measured."""

    status: int
    tree_mib: float
    main_mib: float
    worker_mib: float
    processes: int
    wall: float
    note: str


class _TreeSampler(_builds.Sampler):
    """The peak summed PSS of a process tree, its root's and its largest child's, and the
    most children at once (``_builds.Sampler``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tree = self.main = self.worker = 0.0
        self.processes = 0
        super().__init__(self._sample)

    def _sample(self) -> None:
        sizes = _builds.tree_pss(self.pid)
        self.tree = max(self.tree, sum(sizes.values()))
        self.main = max(self.main, sizes.get(self.pid, 0.0))
        others = [mib for pid, mib in sizes.items() if pid != self.pid and mib > 0]
        self.worker = max([self.worker, *others])
        self.processes = max(self.processes, len(others))


def build(tree: str, kind: str, inputs: list[str], budget: int, workers: int) -> Run:
    """One ``corpusforge KIND build`` of ``inputs`` into a fresh folder, sampled."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=os.path.join(tree, "src"), COLUMNS="200")
    with tempfile.TemporaryDirectory(prefix="bench-tree-") as out:
        command = [_builds.COMMAND, kind, "build", *inputs, "--out", out + "/r"]
        command += ["--memory-limit", str(budget), "--workers", str(workers)]
        start = time.perf_counter()
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        sampler = _TreeSampler(process.pid)
        stdout, stderr = process.communicate()
        wall = time.perf_counter() - start
        sampler.stop()
    said = [line for line in (stderr + stdout).splitlines() if "fits" in line or "error" in line]
    return Run(
        process.returncode,
        sampler.tree,
        sampler.main,
        sampler.worker,
        sampler.processes,
        wall,
        "; ".join(said)[:160],
    )


def make_inputs(folder: Path, lines: int, tweets: int, archive: str | None) -> dict[str, list[str]]:
    """The bitext pair and the Twitter archive (``archive`` if given), by kind."""
    de, en = write_pair(folder, lines)
    if archive:
        return {"bitext": [str(de), str(en)], "twitter": [archive]}
    written = folder / "twitter-stream-2020-01-01.zip"
    synth = [_builds.COMMAND, "synth", "twitter", "--out", str(written), "--seed", "0"]
    subprocess.run([*synth, "--tweets", str(tweets), "--no-truth"], check=True, capture_output=True)
    return {"bitext": [str(de), str(en)], "twitter": [str(written)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[256, 512, 1024], help="MiB")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 16])
    parser.add_argument("--kinds", nargs="+", default=["bitext", "twitter"])
    parser.add_argument("--lines", type=int, default=200_000, help="bitext lines per side")
    parser.add_argument("--tweets", type=int, default=200_000)
    parser.add_argument("--archive", help="a Twitter archive to use instead of a new one")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    trees = [HERE, *args.tree]
    rows: dict[tuple[str, int, int, str], list[Run]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-tree-inputs-") as folder:
        inputs = make_inputs(Path(folder), args.lines, args.tweets, args.archive)
        for _ in range(args.runs):
            for kind in args.kinds:
                for budget in args.budgets:
                    for workers in args.workers:
                        for tree in trees:
                            run = build(tree, kind, inputs[kind], budget, workers)
                            rows.setdefault((kind, budget, workers, tree), []).append(run)
                            print(
                                f"{tree}: {kind} --memory-limit {budget} --workers {workers}: "
                                f"exit {run.status}, tree {run.tree_mib:,.0f} MiB (main "
                                f"{run.main_mib:,.0f}, largest worker {run.worker_mib:,.0f}), "
                                f"{run.processes} processes below, {run.wall:.1f} s  {run.note}",
                                flush=True,
                            )
    print(f"\n| tree | build | budget MiB | --workers | exit | peak tree PSS MiB | main | "
          f"largest worker | processes below | wall s |\n|{'---|' * 10}")  # fmt: skip
    for (kind, budget, workers, tree), runs in rows.items():
        median = statistics.median
        print(
            f"| {os.path.basename(tree)} | {kind} | {budget} | {workers} | "
            f"{','.join(str(r.status) for r in runs)} | "
            f"{median(r.tree_mib for r in runs):,.0f} | {median(r.main_mib for r in runs):,.0f} | "
            f"{median(r.worker_mib for r in runs):,.0f} | "
            f"{max(r.processes for r in runs)} | {median(r.wall for r in runs):.1f} |"
        )


if __name__ == "__main__":
    sys.exit(main())
