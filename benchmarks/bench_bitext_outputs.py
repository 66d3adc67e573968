"""What --keep-rejected, --holdout and --decontaminate cost a bitext build, in CPU-seconds.

    PYTHONPATH=src python benchmarks/bench_bitext_outputs.py --lines 100000 --runs 3

Input: the Moses pair of ``bench_bitext.py`` (real Tatoeba deu-eng sentences joined two by
two), with every 10th English line replaced by a German one so that language id drops a
tenth of the pairs (rows for ``rejected/``). Each variant is one local build
(``--workers 1``: one process, so its CPU time is measured without a pool's scheduling) in a
fresh process; variants are run alternately, ``--runs`` times each, and the CPU-seconds
(user + system of the build process and its children) and wall seconds of each run are
printed, then per variant the medians and the ratio to the default build's median CPU.

Variants: ``default``; ``keep-rejected``; ``holdout`` (``--holdout 1000``);
``decontaminate`` (an evaluation file of 1,000 of the input's English sentences).
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

REPO = Path(__file__).resolve().parents[1]
TATOEBA = REPO.parent / "shared" / "realdata" / "tatoeba-laser-v1" / "tatoeba.deu-eng"

CHILD = """
import json, resource, sys, time
from corpusforge.builds.bitext import build
from corpusforge.config.bitext import BitextConfig
args = json.loads(sys.argv[1])
start = time.perf_counter()
manifest = build(BitextConfig(**{**args, "inputs": tuple(args["inputs"]),
                                 "decontaminate": tuple(args.get("decontaminate", ()))}))
wall = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"cpu": cpu, "wall": wall, "rows": manifest["counts"]["rows"],
                  "dropped": sum(manifest["counts"]["dropped"].values())}))
"""


def write_input(folder: Path, lines: int) -> tuple[list[str], str]:
    """The Moses pair (a tenth of its English lines German) and an evaluation file."""
    de = Path(f"{TATOEBA}.deu").read_text(encoding="utf-8").splitlines()
    en = Path(f"{TATOEBA}.eng").read_text(encoding="utf-8").splitlines()
    n = len(de)
    paths = [folder / "bench.de-en.de", folder / "bench.de-en.en"]
    with paths[0].open("w", encoding="utf-8") as fde, paths[1].open("w", encoding="utf-8") as fen:
        for i in range(lines):
            a, b = i % n, (i // n) % n
            fde.write(f"{de[a]} {de[b]}\n")
            fen.write(f"{(de if i % 10 == 9 else en)[a]} {en[b]}\n")
    evaluation = folder / "eval.txt"
    evaluation.write_text("\n".join(f"{en[i]} {en[0]}" for i in range(n)) + "\n", "utf-8")
    return [str(p) for p in paths], str(evaluation)


def run(args: dict[str, object]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"build failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs, evaluation = write_input(Path(tmp), opts.lines)
        base = {"inputs": inputs, "engine": "local", "workers": 1, "max_pairs_per_lang": None}
        variants = {
            "default": {},
            "keep-rejected": {"keep_rejected": True},
            "holdout": {"holdout": 1000},
            "decontaminate": {"decontaminate": [evaluation]},
        }
        results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for i in range(opts.runs):
            for name, extra in variants.items():
                out = str(Path(tmp) / f"{name}-{i}")
                r = run({**base, **extra, "out": out})
                results[name].append(r)
                print(f"run {i + 1} {name}: {json.dumps(r)}", flush=True)
        base_cpu = statistics.median(r["cpu"] for r in results["default"])
        print(f"\n{opts.lines:,} lines, {opts.runs} runs each, medians:")
        for name, runs in results.items():
            cpu = statistics.median(r["cpu"] for r in runs)
            wall = statistics.median(r["wall"] for r in runs)
            print(
                f"{name:14s} cpu {cpu:6.2f} s  wall {wall:6.2f} s  "
                f"cpu/default {cpu / base_cpu:.3f}  rows {runs[0]['rows']:,.0f}  "
                f"dropped {runs[0]['dropped']:,.0f}"
            )


if __name__ == "__main__":
    main()
