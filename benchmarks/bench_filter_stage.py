"""The Python a bitext pair costs in a filter worker, fastText's answers replayed (issue 38).

    .venv/bin/python benchmarks/bench_filter_stage.py --runs 3 --tree . --tree /tmp/base
    .venv/bin/python benchmarks/bench_filter_stage.py --pairs 102400 --profile

The first ``--pairs`` lines of ``bench_opusfilter.py``'s input (Tatoeba de-en, every line
distinct) go, in batches of the engine's size, through ``local.bitext_filter._filter_batch``
in one process, with the default rules of ``corpusforge bitext build``. fastText is not
called: every text's prediction is recorded once from the real model (in this process,
before timing) and the worker's identifier answers from that dict, so that the figure is the
Python around fastText and its 2 × 6-12 µs a pair does not bury a change. A tree that maps
fastText's binding over a block (since 2026-11-27's fifth session) replays through a Python
function a line, which the real binding does not cost, and a tree that called a Python
function a line replays without it: against an older tree the figure understates the gain.
Each ``--tree`` is run in a fresh process with its ``src`` first on the path, the trees
alternating (A B A B); CPU is ``time.process_time`` over all batches after one warm-up
batch. Every tree must give the same tables and counts: the script prints a digest of each
run's output to compare.
``--profile`` prints cProfile's top functions of one run of this checkout instead.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from _blocks import BATCH, alternate, raw_fields

REPO = Path(__file__).resolve().parents[1]


def _run(pairs: int, profile: bool) -> None:
    """One timed run in this process (the tree is whatever ``corpusforge`` imports)."""
    import cProfile
    import pstats
    import time

    from corpusforge.local import bitext_filter as bf
    from corpusforge.pairing.candidates import PairRules
    from corpusforge.pairing.filters import BitextFilterConfig, LanguageFilterConfig
    from corpusforge.schemas import BITEXT
    from corpusforge.text.langid import LanguageIdentifier

    fields = raw_fields(pairs)
    job = bf.PairJob(
        "bitext",
        PairRules(LanguageFilterConfig(), BitextFilterConfig()),
        None,
        42,
        None,
        BITEXT,
        250_000,
    )
    bf._start_worker(job)
    real = bf._worker["lid"]
    answers: dict[str, list[tuple[float, str]]] = {}
    if hasattr(real, "_predict_line"):  # before 2026-11-27's fifth session: one Python call a line
        ask = real._predict_line

        def record(line: str) -> list[tuple[float, str]]:
            answer = answers.get(line)
            if answer is None:
                answer = answers[line] = ask(line)
            return answer

        replay: object = answers.__getitem__
    else:  # fastText's binding mapped over a block: its arguments after the line are fixed
        ask = real._predict

        def record(line: str, *arguments: object) -> list[tuple[float, str]]:  # type: ignore[misc]
            answer = answers.get(line)
            if answer is None:
                answer = answers[line] = ask(line, *arguments)
            return answer

        get = answers.__getitem__
        # a Python call a line that the real binding does not cost: this replay is the slower
        replay = lambda line, k, threshold, errors: get(line)  # noqa: E731

    bf._worker["lid"] = LanguageIdentifier(real.model_path, real.requested, record)
    batches = [fields[i : i + BATCH] for i in range(0, len(fields), BATCH)]
    for batch in batches:  # record every answer (and warm up)
        bf._filter_batch(batch)
    bf._worker["lid"] = LanguageIdentifier(real.model_path, real.requested, replay)
    profiler = cProfile.Profile(time.process_time) if profile else None
    digest = hashlib.sha256()
    start = time.process_time()
    if profiler is not None:
        profiler.enable()
    results = [bf._filter_batch(batch) for batch in batches]
    if profiler is not None:
        profiler.disable()
    cpu = time.process_time() - start
    for table, counts, rejected in results:
        digest.update(repr((table.to_pydict(), sorted(counts.items()), rejected)).encode())
    print(f"{cpu / pairs * 1e6:.2f} {digest.hexdigest()[:16]}", flush=True)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=102_400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="a checkout (default: this)")
    parser.add_argument("--profile", action="store_true", help="cProfile one run of this tree")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one or args.profile:
        _run(args.pairs, args.profile)
        return
    alternate(__file__, args.tree or [str(REPO)], args.runs, ["--pairs", str(args.pairs)])


if __name__ == "__main__":
    main()
