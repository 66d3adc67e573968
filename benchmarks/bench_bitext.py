"""Whole bitext builds against the fastText ceiling, and their peak RSS as the input grows.

    PYTHONPATH=src python benchmarks/bench_bitext.py --lines 400000 --runs 3
    PYTHONPATH=src python benchmarks/bench_bitext.py --lines 250000,1000000,4000000 --runs 1
    PYTHONPATH=src python benchmarks/bench_bitext.py --lines 100000 --engines local,beam

Input: a Moses pair written from the real Tatoeba deu-eng sample
(``../shared/realdata/tatoeba-laser-v1``): line ``i`` joins sentences ``i mod n`` and
``(i // n) mod n`` (``n`` = 1,000) on both sides, so up to a million lines are distinct,
real translations; past that the lines repeat (and are deduplicated).

For each size, each run, in fresh processes (so peak RSS is the process's own VmHWM):

- **ceiling**: fastText language id of both sides of every line, one process, one line at
  a time (:meth:`LanguageIdentifier.predict`), reading the files as plain text: the least
  work any build that checks languages must do;
- **build**: ``corpusforge.builds.bitext.build`` on each engine asked (``local`` with
  ``--workers``, default every core; ``beam``: Beam's in-process runner), from the input to
  the published release.

Prints each run, then per size the medians, the ratio ceiling-time / build-time (1.0: the
build runs at the speed of one process doing only language id) and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TATOEBA = REPO.parent / "shared" / "realdata" / "tatoeba-laser-v1" / "tatoeba.deu-eng"


def write_pair(folder: Path, lines: int) -> tuple[Path, Path]:
    """``bench.de-en.de`` and ``bench.de-en.en`` of ``lines`` lines each."""
    de = Path(f"{TATOEBA}.deu").read_text(encoding="utf-8").splitlines()
    en = Path(f"{TATOEBA}.eng").read_text(encoding="utf-8").splitlines()
    n = len(de)
    paths = folder / "bench.de-en.de", folder / "bench.de-en.en"
    for side, path in zip((de, en), paths, strict=True):
        with path.open("w", encoding="utf-8") as f:
            for i in range(lines):
                f.write(f"{side[i % n]} {side[(i // n) % n]}\n")
    return paths


CHILD = r"""
import json, sys, time
mode, args = sys.argv[1], json.loads(sys.argv[2])
start, cpu = time.perf_counter(), time.process_time()
if mode == "ceiling":
    from corpusforge.text.langid import LanguageIdentifier
    lid = LanguageIdentifier.load(None)
    n = 0
    with open(args["de"], encoding="utf-8") as de, open(args["en"], encoding="utf-8") as en:
        for a, b in zip(de, en):
            lid.predict(a.rstrip("\n"))
            lid.predict(b.rstrip("\n"))
            n += 1
    result = {"lines": n}
else:
    import logging
    logging.disable(logging.WARNING)
    from corpusforge.builds.bitext import build
    from corpusforge.config.bitext import BitextConfig
    m = build(BitextConfig(inputs=(args["de"], args["en"]), out=args["out"]),
              engine=mode, workers=args["workers"])
    result = {"rows": sum(d["rows"] for d in m["datasets"].values())}
result["seconds"] = time.perf_counter() - start
import resource
children = resource.getrusage(resource.RUSAGE_CHILDREN)
result["cpu"] = time.process_time() - cpu + children.ru_utime + children.ru_stime
with open("/proc/self/status") as f:
    hwm = next(line for line in f if line.startswith("VmHWM"))
result["peak_mb"] = int(hwm.split()[1]) / 1024
result["children_peak_mb"] = children.ru_maxrss / 1024
print(json.dumps(result))
"""


def run_child(mode: str, args: dict[str, object]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", default="400000", help="lines per side; comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", default="local", help="local, beam or both")
    parser.add_argument("--workers", type=int, default=None)
    opts = parser.parse_args()
    print(f"# {platform.node()} {os.cpu_count()} cores, python {platform.python_version()}")
    summary = []
    for lines in (int(x) for x in opts.lines.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            de, en = write_pair(Path(tmp), lines)
            results: dict[str, list[dict[str, float]]] = {}
            for run in range(opts.runs):
                modes = ["ceiling", *opts.engines.split(",")]
                for mode in modes:
                    args = {"de": str(de), "en": str(en), "out": f"{tmp}/rel-{mode}",
                            "workers": opts.workers}  # fmt: skip
                    r = run_child(mode, args)
                    results.setdefault(mode, []).append(r)
                    print(f"{lines:>9,} lines  run {run + 1}  {mode:<8} {r['seconds']:7.1f} s  "
                          f"cpu {r['cpu']:7.1f} s  peak {r['peak_mb']:6.0f} MB  "
                          f"(workers {r['children_peak_mb']:4.0f} MB)", flush=True)  # fmt: skip
            ceiling = statistics.median(r["seconds"] for r in results["ceiling"])
            for mode, rs in results.items():
                seconds = statistics.median(r["seconds"] for r in rs)
                summary.append(
                    f"{lines:>9,} lines  {mode:<8} median {seconds:7.1f} s  "
                    f"{lines / seconds:9,.0f} lines/s  ceiling/build {ceiling / seconds:5.2f}x  "
                    f"peak {statistics.median(r['peak_mb'] for r in rs):6.0f} MB  "
                    f"workers' peak {statistics.median(r['children_peak_mb'] for r in rs):5.0f} MB"
                )
    print("\n".join(["", f"# medians of {opts.runs} run(s)", *summary]))


if __name__ == "__main__":
    main()
