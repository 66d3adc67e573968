"""The CPU a bitext pair costs in the Beam filter step, on Beam's in-process runner (issue 38).

    .venv/bin/python benchmarks/bench_beam_filter.py --pairs 20000 --runs 3 \\
        --tree /tmp/base --tree .

Input: the first ``--pairs`` lines of ``bench_bitext.py``'s Moses pair (real Tatoeba
deu-eng, line ``i`` joining sentences ``i mod 1000`` and ``(i // 1000) mod 1000``). For each
run and tree, alternating (A B B A ...), a fresh process with the tree's ``src`` first on
the path runs ``Create | ParDo(FilterFn)`` (the default rules of ``bitext build``, real
fastText) and ``Create | Map(identity)`` on FnApiRunner, the best of two each, and prints the
difference in process CPU a pair: the filter step's own cost, fastText included. A tree
whose ``FilterFn`` takes no block runs the per-pair rule (``bitext_candidate``), as before
2026-11-27's fifth session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bitext import write_pair

CHILD = r"""
import json, logging, sys, time
logging.disable(logging.WARNING)
import apache_beam as beam
from corpusforge.pairing import candidates
from corpusforge.pairing.filters import BitextFilterConfig, LanguageFilterConfig
from corpusforge.sources.opus.records import RawPair
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.transforms.bitext.common import FilterFn
de_path, en_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(de_path, encoding="utf-8") as de, open(en_path, encoding="utf-8") as en:
    lines = [(a.rstrip("\n"), b.rstrip("\n")) for a, b, _ in zip(de, en, range(n))]
pairs = [RawPair(a, b, "de", "en", "bench", "f", None, i) for i, (a, b) in enumerate(lines)]
rules = candidates.PairRules(LanguageFilterConfig(), BitextFilterConfig())
blocks = "block" in FilterFn.__init__.__code__.co_varnames
rule = candidates.bitext_candidates if blocks else candidates.bitext_candidate
LanguageIdentifier.load(None)

def cpu(step):
    p = beam.Pipeline(runner="FnApiRunner")
    _ = p | beam.Create(pairs, reshuffle=False) | step
    start = time.process_time()
    p.run().wait_until_finish()
    return time.process_time() - start

def key(candidate):
    return candidate.group, candidate.dedup

identity = min(cpu(beam.Map(lambda x: x)) for _ in range(2))
fn = FilterFn(rule, rules, None, key)
step = beam.ParDo(fn).with_outputs("rejected", "counts", main="candidates")
filtered = min(cpu(step) for _ in range(2))
print(json.dumps({"rule": rule.__name__, "us_per_pair": (filtered - identity) / n * 1e6}))
"""


def run_tree(tree: Path, de: Path, en: Path, pairs: int) -> dict[str, object]:
    """One run of the filter step in a fresh process on ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(de), str(en), str(pairs)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{tree} failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", type=Path, help="a checkout; repeatable")
    opts = parser.parse_args()
    trees = [t.resolve() for t in opts.tree or [Path(__file__).resolve().parents[1]]]
    figures: dict[Path, list[float]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        de, en = write_pair(Path(tmp), opts.pairs)
        for run in range(opts.runs):
            for tree in trees if run % 2 == 0 else trees[::-1]:
                load = os.getloadavg()[0]
                r = run_tree(tree, de, en, opts.pairs)
                figures[tree].append(float(r["us_per_pair"]))  # type: ignore[arg-type]
                print(f"run {run + 1}  {tree}  {r['rule']}  {r['us_per_pair']:6.1f} µs a pair  "
                      f"load {load:4.1f}", flush=True)  # fmt: skip
    for tree, values in figures.items():
        print(f"{tree}: median {statistics.median(values):.1f} µs a pair of {len(values)} runs")


if __name__ == "__main__":
    main()
