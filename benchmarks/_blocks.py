"""What the filter-worker benchmarks share (``bench_filter_stage.py``, ``bench_bitext_block.py``):
their input as a worker's raw pair fields, and the checkouts timed alternately, each run in a
fresh process.

The scripts run as ``python benchmarks/NAME.py``, so this folder is on the path and they
``import _blocks``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BATCH = 2_048
"""Raw pairs a block or batch, as the local engine sends a worker
(``corpusforge.local.bitext.BATCH_PAIRS``)."""


def raw_fields(pairs: int) -> list[tuple[Any, ...]]:
    """The first ``pairs`` lines of ``bench_opusfilter.py``'s input (Tatoeba de-en, every line
    distinct) as raw pairs' fields, in the order ``RawPairs.of_fields`` takes them."""
    from bench_opusfilter import write_input

    with tempfile.TemporaryDirectory(prefix="bench-blocks-") as folder:
        de_path, en_path = write_input(Path(folder), pairs)
        de = de_path.read_text(encoding="utf-8").splitlines()
        en = en_path.read_text(encoding="utf-8").splitlines()
    return [
        (d, e, "de", "en", "bench", "bench.de-en.de", None, i + 1, 0, None)
        for i, (d, e) in enumerate(zip(de, en, strict=True))
    ]


def alternate(script: str, trees: list[str], runs: int, arguments: list[str]) -> None:
    """Run ``script --one ARGUMENTS`` ``runs`` times per checkout of ``trees``, the trees
    alternating (A B A B ...), each in a fresh process with the tree's ``src`` first on the
    path (before what ``PYTHONPATH`` holds: a fastText build there is still found). Each run
    prints ``<µs CPU a pair> <digest>``; prints every run and each tree's median."""
    figures: dict[str, list[float]] = {tree: [] for tree in trees}
    for i in range(runs):
        for tree in trees:
            paths = [str(Path(tree).resolve() / "src"), os.environ.get("PYTHONPATH", "")]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
            command = [sys.executable, script, "--one", *arguments]
            out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
            us, digest = out.stdout.split()
            figures[tree].append(float(us))
            load = os.getloadavg()[0]
            print(f"run {i + 1}, {tree}: {us} us CPU a pair, output {digest}, load {load:.1f}")
    for tree, values in figures.items():
        spread = ", ".join(f"{v:.2f}" for v in values)
        print(f"{tree}: median {statistics.median(values):.2f} us a pair ({spread})")
